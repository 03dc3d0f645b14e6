"""``tl.dot`` on the tensor cores with ``mma.sync`` (PTX ISA, "Warp-level matrix multiply-
accumulate instructions"), and the shared-memory staging that every ``tl.dot`` uses.

Staging. Both operands go through the kernel's scratch shared memory with K contiguous:
A as ``[batch, M, K]`` row-major, B transposed to ``[batch, N, K]``. Every element keeps
its own width (8-bit types take one byte) and each row is padded by 16 bytes, so the 8
rows that one fragment load touches start in different banks.

Fragments. The instructions used here all consume 32 bytes of K per step and hand a
thread the same bytes of it; only the element count in those bytes differs. With
``g = laneid >> 2`` and ``t = laneid % 4`` (PTX ISA, "Matrix Fragments for mma.m16n8k16"
(f16/bf16, 2 elements per register), "mma.m16n8k8" (tf32, one element per register),
"mma.m16n8k32" (s8/u8/e4m3/e5m2, 4 elements per register)):

* A's four 32-bit registers hold row ``g`` bytes ``[4t, 4t+4)``, row ``g+8`` the same
  bytes, then rows ``g`` and ``g+8`` at bytes ``[16+4t, 20+4t)``;
* B's two registers hold column ``g`` (a row of B^T) at bytes ``[4t, 4t+4)`` and
  ``[16+4t, 20+4t)``;
* the accumulator is the same for all of them: ``c_i`` at row ``g + 8*(i >= 2)``,
  column ``2t + (i & 1)`` -- ``mma_v2_accumulator`` with instr_shape (16, 8).

So one 32-bit ``ld.shared`` per register loads any of them. tf32 operands are rounded
with ``cvt.rna.tf32.f32`` after the load; ``tf32x3`` splits each operand into a tf32
``big`` and the tf32 rounding of ``x - big`` and runs three MMAs
(small*big + big*small + big*big), which is what makes it about as accurate as fp32 (the
interpreter runs it as fp32).

fp8 needs PTX 8.4 for ``mma ... .e4m3`` / ``.e5m2``. A target whose PTX version is older
(sm_90a is emitted as PTX 8.3) widens each pair of fp8 bytes to f16x2 with
``cvt.rn.f16x2.e4m3x2`` (exact) and runs two m16n8k16 f16 MMAs per k32 step. Those feed
the k16 instruction K slots in a different order (a thread's K elements ``4t..4t+3``
become its slots ``2t, 2t+1, 2t+8, 2t+9``), but A and B are permuted alike, and a dot
product does not depend on the order of its K terms. Raising sm_90a to PTX 8.4 in
``isa.py`` switches it to the native instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InternalCompilerError
from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from .emitter import Emitter, register_coords
from .ptx import Reg, reg_class

# The bytes of K that one instruction consumes, for every entry of MMA_SYNC.
K_BYTES = 32


@dataclass(frozen=True)
class MmaSync:
    """One ``mma.sync.aligned.m16n8k{k}.row.col.{acc}.{ab}.{ab}.{acc}`` form."""

    k: int
    ab: str                     # PTX type of A and B
    acc: str                    # PTX type of C and D
    min_ptx: tuple[int, int]    # PTX ISA version that introduced it (sm_80+ for all but fp8: sm_89)

    def text(self) -> str:
        return f"mma.sync.aligned.m16n8k{self.k}.row.col.{self.acc}.{self.ab}.{self.ab}.{self.acc}"


# (IR operand type, IR accumulator type) -> instruction. PTX ISA, "Warp-level matrix
# multiply-accumulate instructions: mma", its table of shapes and types per PTX version:
# https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-mma
# (f16 accumulators and the f16-accumulating fp8 forms are left to the FMA loop.)
MMA_SYNC: dict[tuple[str, str], MmaSync] = {
    ("f16", "f32"): MmaSync(16, "f16", "f32", (6, 4)),
    ("bf16", "f32"): MmaSync(16, "bf16", "f32", (7, 0)),
    ("f32", "f32"): MmaSync(8, "tf32", "f32", (7, 0)),
    ("i8", "i32"): MmaSync(32, "s8", "s32", (7, 0)),
    ("u8", "i32"): MmaSync(32, "u8", "s32", (7, 0)),
    ("f8e4m3", "f32"): MmaSync(32, "e4m3", "f32", (8, 4)),
    ("f8e5m2", "f32"): MmaSync(32, "e5m2", "f32", (8, 4)),
}
_F16 = MMA_SYNC[("f16", "f32")]


def mma_form(op: Operation) -> MmaSync | None:
    """The ``mma.sync`` form for this dot, or None (the FMA loop). fp32 operands take tf32
    only when ``input_precision`` asks for it; ``ieee`` and the bf16x3/x6 splits stay exact."""
    a, acc = op.operands[0].type, op.result.type
    form = MMA_SYNC.get((a.scalar.name, acc.scalar.name))
    if form is None or (form.ab == "tf32" and op.attrs["input_precision"] not in ("tf32", "tf32x3")):
        return None
    m, k = a.shape[-2:]
    n = op.operands[1].type.shape[-1]
    # whole 32-byte K steps, except that an 8-bit K of 16 fills half a k32 step (the rest
    # reads as zeros)
    size = elem_bytes(a.scalar)
    return form if m % 16 == 0 and n % 8 == 0 and (k * size) % (16 if size == 1 else K_BYTES) == 0 else None


def elem_bytes(t: DType) -> int:
    return max(1, t.bits // 8)


# -- staging -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Staged:
    """Where ``stage`` put the operands: A at ``base_a + ((b*M + m) * pitch + k*size)``,
    B^T at ``base_b + ((b*N + n) * pitch + k*size)`` (bytes)."""

    base_a: Reg
    base_b: Reg
    m: int
    n: int
    k: int
    size: int   # bytes per element
    pitch: int  # bytes per row


def stage(e: Emitter, op: Operation) -> Staged:
    a, b = op.operands[0], op.operands[1]
    m, k = a.type.shape[-2:]
    n = b.type.shape[-1]
    batch = a.type.shape[0] if len(a.type.shape) == 3 else 1
    size = elem_bytes(a.type.scalar)
    pitch = k * size + 16
    bytes_a = batch * m * pitch
    e.scratch(bytes_a + batch * n * pitch)
    base_a = e.smem_base()
    base_b = e.fn.reg("b32")
    e.fn.emit(f"add.u32 {base_b}, {base_a}, {bytes_a}")
    strides_a, strides_b = [m * pitch, pitch, size], [n * pitch, size, pitch]
    if batch == 1 and len(a.type.shape) == 2:
        strides_a, strides_b = strides_a[1:], strides_b[1:]
    e.barrier()
    ra, rb = e.get(a), e.get(b)
    _store(e, ra.layout, ra.regs, strides_a, size, base_a)
    _store(e, rb.layout, rb.regs, strides_b, size, base_b)
    e.barrier()
    return Staged(base_a, base_b, m, n, k, size, pitch)


def _store(e: Emitter, layout: LinearLayout, regs: list[Reg], strides: list[int], size: int, base: Reg) -> None:
    """Every element this thread holds, once, at sum(coord * stride) bytes from ``base``
    (lane/warp and register bits of a distributed layout are disjoint, so the runtime and
    constant parts of a coordinate add)."""
    thread = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {thread}, 0")
    for d, s in enumerate(strides):
        t = e.thread_coords(layout, d)
        if not isinstance(t, int):
            e.fn.emit(f"mad.lo.u32 {thread}, {t}, {s}, {thread}")
    e.fn.emit(f"add.u32 {thread}, {thread}, {base}")
    seen = set()
    for r, reg in enumerate(regs):
        off = sum(c * s for c, s in zip(register_coords(layout, r), strides))
        if off in seen:
            continue
        seen.add(off)
        mt = "b8" if size == 1 else {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64"}[reg.cls]
        e.fn.emit(f"st.shared.{mt} [{thread}+{off}], {reg}")


def load_type(t: DType, cls: str) -> str:
    """The ``ld.shared`` type that brings one staged element back into its register class
    (8-bit integers sign- or zero-extended, as the other lowerings keep them)."""
    if t.bits == 8:
        return "s8" if t.kind == Kind.INT else "u8"
    return {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64"}[cls]


# -- mma.sync -----------------------------------------------------------------------------------


def emit_mma(e: Emitter, op: Operation, form: MmaSync, st: Staged) -> None:
    layout = op.result.type.layout
    rank = len(op.result.type.shape)
    precision = op.attrs["input_precision"]
    mode = "tf32x3" if form.ab == "tf32" and precision == "tf32x3" else form.ab
    widen = form.ab in ("e4m3", "e5m2") and e.target.ptx_version < form.min_ptx
    lane = e.special("lane")
    g, t4 = e.fn.reg("b32"), e.fn.reg("b32")
    e.fn.emit(f"shr.u32 {g}, {lane}, 2")
    e.fn.emit(f"and.b32 {t4}, {lane}, 3")
    e.fn.emit(f"shl.b32 {t4}, {t4}, 2")
    tc = [e.thread_coords(layout, d) for d in range(rank)]
    row, col = tc[-2], tc[-1]
    if isinstance(row, int) or isinstance(col, int):
        raise InternalCompilerError("nvptx", f"the accumulator layout of this dot is not an mma layout: {layout}",
                                    op.loc)
    # A: this thread's row (g + the warp's rows); B^T: row g of the warp's 8 columns
    # (the accumulator gives this thread columns 2t, 2t+1 of them: clear those bits).
    ncol = e.fn.reg("b32")
    e.fn.emit(f"and.b32 {ncol}, {col}, -8")
    e.fn.emit(f"add.u32 {ncol}, {ncol}, {g}")
    addr_a, addr_b = e.fn.reg("b32"), e.fn.reg("b32")
    e.fn.emit(f"mad.lo.u32 {addr_a}, {row}, {st.pitch}, {st.base_a}")
    e.fn.emit(f"add.u32 {addr_a}, {addr_a}, {t4}")
    e.fn.emit(f"mad.lo.u32 {addr_b}, {ncol}, {st.pitch}, {st.base_b}")
    e.fn.emit(f"add.u32 {addr_b}, {addr_b}, {t4}")
    if rank == 3 and not isinstance(tc[0], int):
        e.fn.emit(f"mad.lo.u32 {addr_a}, {tc[0]}, {st.m * st.pitch}, {addr_a}")
        e.fn.emit(f"mad.lo.u32 {addr_b}, {tc[0]}, {st.n * st.pitch}, {addr_b}")

    tiles: dict[tuple[int, int, int], list[int]] = {}
    for r in range(layout.in_dim_size("register")):
        c = register_coords(layout, r)
        batch = c[0] if rank == 3 else 0
        key = (batch, c[-2] - c[-2] % 16, c[-1] - c[-1] % 8)
        tiles.setdefault(key, [-1] * 4)[(2 if c[-2] % 16 >= 8 else 0) + c[-1] % 2] = r
    zero: list[Reg] = []

    def zero_reg() -> Reg:
        if not zero:
            zero.append(e.fn.reg("b32"))
            e.fn.emit(f"mov.b32 {zero[0]}, 0")
        return zero[0]

    def load(addr: Reg, base: int, offsets: tuple[int, ...], present: int) -> list[list[Reg]]:
        """The fragment registers at ``addr + base + offset`` (the ones past ``present``
        read K beyond the tile: zeros), as the operand sets the MMAs of one step take."""
        raw = []
        for i, off in enumerate(offsets):
            if i >= present:
                raw.append(None)
                continue
            x = e.fn.reg("f32" if form.ab == "tf32" else "b32")
            e.fn.emit(f"ld.shared.{'f32' if form.ab == 'tf32' else 'b32'} {x}, [{addr}+{base + off}]")
            raw.append(x)
        if form.ab == "tf32":
            big = [_tf32(e, x) for x in raw]
            if mode != "tf32x3":
                return [big]
            small = []
            for x, b in zip(raw, big):
                f, d = e.fn.reg("f32"), e.fn.reg("f32")
                e.fn.emit(f"mov.b32 {f}, {b}")
                e.fn.emit(f"sub.f32 {d}, {x}, {f}")
                small.append(_tf32(e, d))
            return [big, small]
        if not widen:
            return [[x if x is not None else zero_reg() for x in raw]]
        return _widen(e, form.ab, raw)

    frag_a: dict[tuple[int, int, int], list[list[Reg]]] = {}
    frag_b: dict[tuple[int, int, int], list[list[Reg]]] = {}
    out = list(e.get(op.operands[2]).regs)
    row_a = 8 * st.pitch
    for (b0, r0, c0), regs in sorted(tiles.items()):
        if -1 in regs:
            raise InternalCompilerError("nvptx", f"accumulator registers {regs} do not form an m16n8 tile", op.loc)
        cur = [out[i] for i in regs]
        for kk in range(0, st.k * st.size, K_BYTES):
            full = st.k * st.size - kk >= K_BYTES
            if (b0, r0, kk) not in frag_a:
                frag_a[(b0, r0, kk)] = load(addr_a, (b0 * st.m + r0) * st.pitch + kk,
                                            (0, row_a, 16, row_a + 16), 4 if full else 2)
            if (b0, c0, kk) not in frag_b:
                frag_b[(b0, c0, kk)] = load(addr_b, (b0 * st.n + c0) * st.pitch + kk, (0, 16), 2 if full else 1)
            fa, fb = frag_a[(b0, r0, kk)], frag_b[(b0, c0, kk)]
            if mode == "tf32x3":
                steps = [(fa[1], fb[0]), (fa[0], fb[1]), (fa[0], fb[0])]
            else:
                steps = list(zip(fa, fb))
            for xa, xb in steps:
                d = [e.fn.reg(reg_class(op.result.type.scalar)) for _ in range(4)]
                text = (_F16 if widen else form).text()
                e.fn.emit(f"{text} {{{', '.join(map(str, d))}}}, {{{', '.join(map(str, xa))}}}, "
                          f"{{{', '.join(map(str, xb))}}}, {{{', '.join(map(str, cur))}}}")
                cur = d
        for i, r in enumerate(regs):
            out[r] = cur[i]
    e.set(op.result, out)


def _tf32(e: Emitter, x: Reg) -> Reg:
    d = e.fn.reg("b32")
    e.fn.emit(f"cvt.rna.tf32.f32 {d}, {x}")
    return d


def _widen(e: Emitter, fmt: str, raw: list[Reg | None]) -> list[list[Reg]]:
    """k32 fp8 registers -> the f16x2 registers of one or two m16n8k16 steps (see the
    module doc for the K order). A has 4 registers, B 2; missing ones are zero K."""
    halves: list[tuple[Reg, Reg] | None] = []
    for x in raw:
        if x is None:
            halves.append(None)
            continue
        lo, hi = e.fn.reg("b16"), e.fn.reg("b16")
        e.fn.emit(f"mov.b32 {{{lo}, {hi}}}, {x}")
        pair = []
        for h in (lo, hi):
            d = e.fn.reg("b32")
            e.fn.emit(f"cvt.rn.f16x2.{fmt}x2 {d}, {h}")
            pair.append(d)
        halves.append((pair[0], pair[1]))
    if len(raw) == 4:  # A: rows g, g+8 at K bytes [4t, 4t+4), then at [16+4t, 20+4t)
        groups = [(halves[0], halves[1]), (halves[2], halves[3])]
        return [[x[0], y[0], x[1], y[1]] for x, y in groups if x is not None]
    return [[h[0], h[1]] for h in halves if h is not None]
