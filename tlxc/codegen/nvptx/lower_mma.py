"""``tl.dot`` on the tensor cores with ``mma.sync`` (PTX ISA, "Warp-level matrix multiply-
accumulate instructions").

Fragments. The instructions used here all consume 32 bytes of K per step and hand a
thread the same bytes of it; only the element count in those bytes differs. With
``g = laneid >> 2`` and ``t = laneid % 4`` (PTX ISA, "Matrix Fragments for mma.m16n8k16"
(f16/bf16, 2 elements per register), "mma.m16n8k8" (tf32, one element per register),
"mma.m16n8k32" (s8/u8/e4m3/e5m2, 4 elements per register)):

* A's four 32-bit registers hold row ``g`` bytes ``[4t, 4t+4)``, row ``g+8`` the same
  bytes, then rows ``g`` and ``g+8`` at bytes ``[16+4t, 20+4t)``;
* B's two registers hold column ``g`` at bytes ``[4t, 4t+4)`` and ``[16+4t, 20+4t)``;
* the accumulator is the same for all of them: ``c_i`` at row ``g + 8*(i >= 2)``,
  column ``2t + (i & 1)`` -- ``mma_v2_accumulator`` with instr_shape (16, 8).

These are the registers of ``MmaV2.operand`` layouts with ``k_width`` elements per 32-bit
register; ``mma_operands`` brings each operand into them (``ldmatrix``) and hands out
the words. tf32 operands are rounded with ``cvt.rna.tf32.f32`` after the load;
``tf32x3`` splits each operand into a tf32 ``big`` and the tf32 rounding of ``x - big``
and runs three MMAs (small*big + big*small + big*big), which is what makes it about as
accurate as fp32 (the interpreter runs it as fp32).

fp8 needs PTX 8.4 for ``mma ... .e4m3`` / ``.e5m2``. A target whose PTX version is older
(sm_90a is emitted as PTX 8.3) widens each pair of fp8 bytes to f16x2 with
``cvt.rn.f16x2.e4m3x2`` (exact) and runs two m16n8k16 f16 MMAs per k32 step. Those feed
the k16 instruction K slots in a different order (a thread's K elements ``4t..4t+3``
become its slots ``2t, 2t+1, 2t+8, 2t+9``), but A and B are permuted alike, and a dot
product does not depend on the order of its K terms. Raising sm_90a to PTX 8.4 in
``isa.py`` switches it to the native instruction. The forms are ``mma_table.MMA_SYNC``.
"""

from __future__ import annotations

from ...errors import InternalCompilerError
from ...ir.core import Operation
from ...ir.layout.nvidia import MmaV2
from ...ir.types import float32
from . import instructions as insn
from .emitter import Emitter
from .lower_arith import convert_reg
from .mma_operands import K_BYTES, constant_coords, elem_bytes, fragments
from .mma_table import MMA_SYNC, MmaSync
from .ptx import Reg, reg_class

_F16 = MMA_SYNC[("f16", "f32")]


def _work_acc(op: Operation) -> str:
    """The accumulator type the MMAs run in: an f16 accumulator (``out_dtype=tl.float16``)
    of f16 operands is the ``.f16`` form's (Triton's); of fp8 operands it is widened to
    f32 for the dot and rounded back after it."""
    acc = op.result.type.scalar.ir_name
    return "f32" if acc == "f16" and op.a.type.scalar.ir_name in ("f8e4m3", "f8e5m2") else acc


def mma_form(op: Operation) -> MmaSync | None:
    """The ``mma.sync`` form for this dot, or None (the FMA loop). fp32 operands take tf32
    only when ``input_precision`` asks for it; ``ieee`` stays exact (bf16x3/x6 dots were split into
    bf16 ones by ``split-f32-dot``)."""
    a = op.a.type
    form = MMA_SYNC.get((a.scalar.ir_name, _work_acc(op)))
    if form is None or (form.ab == "tf32" and op.input_precision not in ("tf32", "tf32x3")):
        return None
    m, k = a.shape[-2:]
    n = op.b.type.shape[-1]
    # whole 32-byte K steps, except that an 8-bit K of 16 fills half a k32 step (the rest
    # reads as zeros)
    size = elem_bytes(a.scalar)
    return form if m % 16 == 0 and n % 8 == 0 and (k * size) % (16 if size == 1 else K_BYTES) == 0 else None


# -- mma.sync -----------------------------------------------------------------------------------


def mma_parent(op: Operation, num_warps: int) -> MmaV2:
    """The mma layout of the dot's accumulator: warps on the batch first, then on M (one
    16-row tile each, as far as M goes), the rest on N."""
    shape = op.result.type.shape
    m = shape[-2]
    if len(shape) == 2:
        wm = min(num_warps, max(1, m // 16))
        return MmaV2((wm, max(1, num_warps // wm)))
    wb = min(num_warps, shape[0])
    rest = num_warps // wb
    wm = min(rest, max(1, m // 16))
    return MmaV2((wb, wm, max(1, rest // wm)))


def emit_mma(e: Emitter, op: Operation, form: MmaSync) -> None:
    layout = op.result.type.layout
    rank = len(op.result.type.shape)
    precision = op.input_precision
    mode = "tf32x3" if form.ab == "tf32" and precision == "tf32x3" else form.ab
    widen = form.ab in ("e4m3", "e5m2") and e.target.ptx_version < form.min_ptx
    fa, fb = fragments(e, op, mma_parent(op, e.num_warps), "f32" if form.ab == "tf32" else "b32")

    tiles: dict[tuple[int, int, int], list[int]] = {}
    for r in range(layout.in_dim_size("register")):
        c = constant_coords(layout, r)
        batch = c[0] if rank == 3 else 0
        key = (batch, c[-2] - c[-2] % 16, c[-1] - c[-1] % 8)
        tiles.setdefault(key, [-1] * 4)[(2 if c[-2] % 16 >= 8 else 0) + c[-1] % 2] = r
    zero: list[Reg] = []

    def zero_reg() -> Reg:
        if not zero:
            zero.append(e.fn.reg("b32"))
            e.fn.emit(f"mov.b32 {zero[0]}, 0")
        return zero[0]

    def operand_sets(raw: list[Reg | None]) -> list[list[Reg]]:
        """The fragment words as the MMAs of one step take them (None: K past the tile,
        zeros)."""
        if form.ab == "tf32":
            big = [_tf32(e, x) for x in raw]  # type: ignore[arg-type]  (whole K steps: mma_form)
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

    per_word = 4 // elem_bytes(op.a.type.scalar)  # elements of one fragment word
    half = 4 * per_word  # K elements from a fragment's first words to its second ones
    lead = lambda b: (b,) if rank == 3 else ()  # noqa: E731
    frag_a: dict[tuple[int, int, int], list[list[Reg]]] = {}
    frag_b: dict[tuple[int, int, int], list[list[Reg]]] = {}

    def a_sets(b: int, r0: int, k0: int) -> list[list[Reg]]:
        if (b, r0, k0) not in frag_a:
            frag_a[(b, r0, k0)] = operand_sets([fa.word(lead(b) + (r0 + 8 * (j & 1), k0 + half * (j >> 1)))
                                                for j in range(4)])
        return frag_a[(b, r0, k0)]

    def b_sets(b: int, c0: int, k0: int) -> list[list[Reg]]:
        if (b, c0, k0) not in frag_b:
            frag_b[(b, c0, k0)] = operand_sets([fb.word(lead(b) + (k0 + half * j, c0)) for j in range(2)])
        return frag_b[(b, c0, k0)]

    acc_t = op.result.type.scalar
    narrow = _work_acc(op) != acc_t.ir_name  # an f16 accumulator of fp8: the MMAs run in f32
    half_acc = form.acc == "f16"  # the .f16 form: accumulator pairs packed
    out = list(e.get(op.acc).regs)
    if narrow:
        out = [convert_reg(e, op, acc_t, float32, r) for r in out]
    k = op.a.type.shape[-1]
    steps = range(0, k, K_BYTES // elem_bytes(op.a.type.scalar))
    for (b0, r0, c0), regs in _tile_order(tiles, len(steps)):
        if -1 in regs:
            raise InternalCompilerError("nvptx", f"accumulator registers {regs} do not form an m16n8 tile", op.loc)
        cur = [out[i] for i in regs]
        if half_acc:  # c0,c1 (row g) and c2,c3 (row g + 8) in one .f16x2 register each
            cur = e.pack16(cur)
        for k0 in steps:
            fa_sets, fb_sets = a_sets(b0, r0, k0), b_sets(b0, c0, k0)
            if mode == "tf32x3":
                pairs = [(fa_sets[1], fb_sets[0]), (fa_sets[0], fb_sets[1]), (fa_sets[0], fb_sets[0])]
            else:
                pairs = list(zip(fa_sets, fb_sets))
            for xa, xb in pairs:
                d = [e.fn.reg("b32" if half_acc else reg_class(float32 if narrow else acc_t))
                     for _ in range(len(cur))]
                e.fn.emit(insn.mma_sync((_F16 if widen else form).text(), d, xa, xb, cur))
                cur = d
        if half_acc:
            cur = e.unpack16(cur)
        for i, r in enumerate(regs):
            out[r] = cur[i]
    if narrow:
        out = [convert_reg(e, op, float32, acc_t, r) for r in out]
    e.set(op.result, out)


def _tile_order(tiles: dict[tuple[int, int, int], list[int]],
                steps: int) -> list[tuple[tuple[int, int, int], list[int]]]:
    """The m16n8 tiles in the order their MMAs are emitted: per batch slice, the operand
    with more fragment words per thread in the outer loop, so that each of its fragments
    is used by consecutive MMAs and then dies, while the smaller operand's fragments
    stay live throughout (A has 4 words per 16 rows and step, B 2 per 8 columns)."""
    rows = {(b, r) for b, r, _ in tiles}
    cols = {(b, c) for b, _, c in tiles}
    a_outer = 4 * len(rows) * steps > 2 * len(cols) * steps
    key = (lambda t: t[0]) if a_outer else (lambda t: (t[0][0], t[0][2], t[0][1]))
    return sorted(tiles.items(), key=key)


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
