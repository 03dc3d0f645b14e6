"""``tl.dot``. Both operands are staged through shared memory (A row-major, B as B^T so
that K is contiguous for both, rows padded by 16 bytes against bank conflicts); then

* f16 / bf16 inputs with an f32 accumulator in the mma.sync accumulator layout run
  ``mma.sync.aligned.m16n8k16`` (PTX ISA, "Warp-level matrix multiply-accumulate",
  fragment figures for m16n8k16), loading each fragment pair with one 32-bit
  ``ld.shared``;
* everything else (fp32 IEEE or tf32, int8, f16 accumulators) is a per-thread FMA loop
  over K in the accumulator's own layout -- correct for every shape, not fast; the
  tensor-core forms for those types come with the wgmma work.
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.layout.nvidia import mma_v2_accumulator
from ...ir.types import DType, Kind, float32
from .emitter import Emitter, lowers, register_coords
from .lower_arith import convert_reg
from .lower_shape import _smem_pass
from .ptx import Reg, reg_class


def mma_eligible(a: DType, acc: DType, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> bool:
    if len(shape_a) != 2 or a.name not in ("f16", "bf16") or acc.name != "f32":
        return False
    m, k = shape_a
    n = shape_b[1]
    return m % 16 == 0 and n % 8 == 0 and k % 16 == 0


def dot_layout(op: Operation, num_warps: int) -> LinearLayout | None:
    """The accumulator layout the mma path wants (None: use the canonical layout)."""
    a, acc = op.operands[0].type, op.result.type
    if not mma_eligible(a.scalar, acc.scalar, a.shape, op.operands[1].type.shape):
        return None
    m, n = acc.shape
    wm = min(num_warps, max(1, m // 16))
    wn = max(1, num_warps // wm)
    return mma_v2_accumulator([m, n], [wm, wn])


def _stage(e: Emitter, op: Operation) -> tuple[Reg, Reg, int, int, int]:
    """Write A (row-major) and B^T into shared memory; returns their bases, the padded
    pitches (in elements) and the element size."""
    a, b = op.operands[0], op.operands[1]
    (m, k), n = a.type.shape, b.type.shape[1]
    t = a.type.scalar
    cls = reg_class(t)
    size = 8 if cls in ("b64", "f64") else (4 if cls in ("b32", "f32") else 2)
    pad = max(1, 16 // size)
    pitch = k + pad
    bytes_a, bytes_b = m * pitch * size, n * pitch * size
    e.scratch(bytes_a + bytes_b)
    base_a = e.smem_base()
    base_b = e.fn.reg("b32")
    e.fn.emit(f"add.u32 {base_b}, {base_a}, {bytes_a}")
    e.barrier()
    ra, rb = e.get(a), e.get(b)
    _smem_pass(e, ra.layout, ra.regs, (m, k), [pitch, 1], size, cls, base_a, store=True)
    _smem_pass(e, rb.layout, rb.regs, (k, n), [1, pitch], size, cls, base_b, store=True)
    e.barrier()
    return base_a, base_b, pitch, size, k


@lowers(ops.DotOp)
def dot(e: Emitter, op: Operation) -> None:
    a_t = op.operands[0].type.scalar
    if len(op.operands[0].type.shape) != 2:
        raise CompilationError("TLXC-CODEGEN-001", "batched (3-D) tl.dot cannot be compiled for NVIDIA yet", op.loc)
    if isinstance(a_t, DType) and a_t.bits == 8 and a_t.kind == Kind.FLOAT:
        raise CompilationError("TLXC-CODEGEN-001", "fp8 tl.dot cannot be compiled for NVIDIA yet", op.loc)
    want = dot_layout(op, e.num_warps)
    if want is not None and op.result.type.layout == want:
        _mma(e, op)
    else:
        _fma(e, op)


def _mma(e: Emitter, op: Operation) -> None:
    base_a, base_b, pitch, size, k = _stage(e, op)
    layout = op.result.type.layout
    acc = e.get(op.operands[2]).regs
    lane = e.special("lane")
    g, t2 = e.fn.reg("b32"), e.fn.reg("b32")
    e.fn.emit(f"shr.u32 {g}, {lane}, 2")
    e.fn.emit(f"and.b32 {t2}, {lane}, 3")
    e.fn.emit(f"shl.b32 {t2}, {t2}, 1")
    tc0, tc1 = e.thread_coords(layout, 0), e.thread_coords(layout, 1)
    row = tc0 if not isinstance(tc0, int) else g
    # A: this thread's row (g + warp offset), column 2t
    addr_a = e.fn.reg("b32")
    e.fn.emit(f"mad.lo.u32 {addr_a}, {row}, {pitch}, {t2}")
    e.fn.emit(f"mad.lo.u32 {addr_a}, {addr_a}, {size}, {base_a}")
    # B^T: column n = (tc1 - 2t) + g of the tile, K offset 2t
    ncol = e.fn.reg("b32")
    if isinstance(tc1, int):
        e.fn.emit(f"mov.u32 {ncol}, {g}")
    else:
        e.fn.emit(f"sub.u32 {ncol}, {tc1}, {t2}")
        e.fn.emit(f"add.u32 {ncol}, {ncol}, {g}")
    addr_b = e.fn.reg("b32")
    e.fn.emit(f"mad.lo.u32 {addr_b}, {ncol}, {pitch}, {t2}")
    e.fn.emit(f"mad.lo.u32 {addr_b}, {addr_b}, {size}, {base_b}")
    tiles: dict[tuple[int, int], list[int]] = {}
    for r in range(layout.in_dim_size("register")):
        row_c, col_c = register_coords(layout, r)
        key = (row_c - row_c % 16, col_c - col_c % 8)
        idx = (2 if row_c % 16 >= 8 else 0) + (col_c % 2)
        tiles.setdefault(key, [-1] * 4)[idx] = r
    ty = op.operands[0].type.scalar.name
    frag_a: dict[tuple[int, int], list[Reg]] = {}
    frag_b: dict[tuple[int, int], list[Reg]] = {}
    out = list(acc)
    for (r0, c0), regs in sorted(tiles.items()):
        if -1 in regs:
            raise CompilationError("TLXC-CODEGEN-001", "unexpected accumulator layout for mma.sync", op.loc)
        cur = [out[i] for i in regs]
        for kk in range(0, k, 16):
            if (r0, kk) not in frag_a:
                fa = [e.fn.reg("b32") for _ in range(4)]
                base = (r0 * pitch + kk) * size
                for i, off in enumerate((0, 8 * pitch * size, 16, 8 * pitch * size + 16)):
                    e.fn.emit(f"ld.shared.b32 {fa[i]}, [{addr_a}+{base + off}]")
                frag_a[(r0, kk)] = fa
            if (c0, kk) not in frag_b:
                fb = [e.fn.reg("b32") for _ in range(2)]
                base = (c0 * pitch + kk) * size
                e.fn.emit(f"ld.shared.b32 {fb[0]}, [{addr_b}+{base}]")
                e.fn.emit(f"ld.shared.b32 {fb[1]}, [{addr_b}+{base + 16}]")
                frag_b[(c0, kk)] = fb
            d = [e.fn.reg("f32") for _ in range(4)]
            fa, fb = frag_a[(r0, kk)], frag_b[(c0, kk)]
            e.fn.emit(f"mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{{', '.join(map(str, d))}}}, "
                      f"{{{', '.join(map(str, fa))}}}, {{{fb[0]}, {fb[1]}}}, {{{', '.join(map(str, cur))}}}")
            cur = d
        for i, r in enumerate(regs):
            out[r] = cur[i]
    e.set(op.result, out)


def _fma(e: Emitter, op: Operation) -> None:
    base_a, base_b, pitch, size, k = _stage(e, op)
    layout = op.result.type.layout
    a_t: DType = op.operands[0].type.scalar  # type: ignore[assignment]
    acc_t: DType = op.result.type.scalar  # type: ignore[assignment]
    tf32 = op.attrs["input_precision"] in ("tf32", "tf32x3") and a_t.name == "f32"
    work = acc_t if acc_t.kind != Kind.FLOAT or acc_t.name == "f64" else float32
    acc = [convert_reg(e, op, acc_t, work, r) for r in e.get(op.operands[2]).regs]
    tc = [e.thread_coords(layout, d) for d in (0, 1)]
    rows: dict[int, Reg] = {}
    cols: dict[int, Reg] = {}

    def addr(cache: dict[int, Reg], c: int, t: Reg | int, base: Reg) -> Reg:
        if c not in cache:
            r = e.fn.reg("b32")
            if isinstance(t, int):
                e.fn.emit(f"mov.u32 {r}, {(c ^ t) * pitch * size}")
            else:
                e.fn.emit(f"xor.b32 {r}, {t}, {c}")
                e.fn.emit(f"mul.lo.u32 {r}, {r}, {pitch * size}")
            e.fn.emit(f"add.u32 {r}, {r}, {base}")
            cache[c] = r
        return cache[c]

    cls = reg_class(a_t)
    mt = {"b16": "b16", "b32": "b32", "f32": "f32", "f64": "f64", "b64": "b64"}[cls]
    out = []
    done: dict[tuple[int, int], Reg] = {}
    for r in range(layout.in_dim_size("register")):
        m, n = register_coords(layout, r)
        if (m, n) in done:
            out.append(done[(m, n)])
            continue
        ar, br = addr(rows, m, tc[0], base_a), addr(cols, n, tc[1], base_b)
        cur = acc[r]
        for kk in range(k):
            x, y = e.fn.reg(cls), e.fn.reg(cls)
            e.fn.emit(f"ld.shared.{mt} {x}, [{ar}+{kk * size}]")
            e.fn.emit(f"ld.shared.{mt} {y}, [{br}+{kk * size}]")
            x, y = convert_reg(e, op, a_t, work, x), convert_reg(e, op, a_t, work, y)
            if tf32:  # cvt to tf32 writes a .b32 register; the value is an f32 with 13 low bits cleared
                rounded = []
                for v in (x, y):
                    bits, f = e.fn.reg("b32"), e.fn.reg("f32")
                    e.fn.emit(f"cvt.rna.tf32.f32 {bits}, {v}")
                    e.fn.emit(f"mov.b32 {f}, {bits}")
                    rounded.append(f)
                x, y = rounded
            d = e.fn.reg(reg_class(work))
            if work.kind == Kind.FLOAT:
                e.fn.emit(f"fma.rn.{work.name} {d}, {x}, {y}, {cur}")
            else:
                e.fn.emit(f"mad.lo.s32 {d}, {x}, {y}, {cur}")
            cur = d
        res = convert_reg(e, op, work, acc_t, cur)
        done[(m, n)] = res
        out.append(res)
    e.set(op.result, out)
