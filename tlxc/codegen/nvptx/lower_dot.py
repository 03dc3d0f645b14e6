"""``tl.dot``, 2-D and batched 3-D. Both operands go through shared memory; then

* the types of ``mma_table.MMA_SYNC`` -- f16/bf16 and fp8 (e4m3, e5m2) with an f32
  accumulator (or an f16 one, widened to f32 for the MMAs: ``lower_mma``), fp32 with
  ``input_precision`` tf32 or tf32x3, int8/uint8 with an int32 one; fp32 at bf16x3 /
  bf16x6 arrives here as bf16 dots (``split-f32-dot``) -- run ``mma.sync`` m16n8kK when
  the layout pass gave the result the mma accumulator layout (``dot_layout``, the hook it
  calls), their fragments loaded with ``ldmatrix`` (``mma_operands``);
* everything else (fp32 ``ieee``, f64, integer types mma.sync lacks) is a per-thread FMA
  loop over K in the accumulator's own layout -- correct for every shape, not fast --
  that reads the operands as ``mma_operands.stage`` puts them (A row-major, B as B^T,
  K contiguous, batch slices one after the other).

A batched dot is one mma layout over ``[B, M, N]``: warps go to the batch first, the batch
slices they do not cover repeat in registers, and each register tile reads its own slice
of the staged operands. All slices are staged at once, so a batch must fit in shared
memory (TLXC-RESOURCE-001 otherwise); staging slice by slice would lift that.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind, float32
from .emitter import Emitter, lowers, register_coords
from .lower_arith import convert_reg
from .lower_mma import emit_mma, mma_form, mma_parent
from .mma_operands import Staged, load_type, stage
from .ptx import Reg, reg_class


def dot_layout(op: Operation, num_warps: int) -> LinearLayout | None:
    """The accumulator layout the mma path wants (None: use the canonical layout)."""
    if mma_form(op) is None:
        return None
    return mma_parent(op, num_warps).accumulator(op.result.type.shape)


@lowers(ops.DotOp)
def dot(e: Emitter, op: Operation) -> None:
    form = mma_form(op)
    if form is not None and op.result.type.layout == dot_layout(op, e.num_warps):
        emit_mma(e, op, form)
    else:
        _fma(e, op, stage(e, op))


def _fma(e: Emitter, op: Operation, st: Staged) -> None:
    layout = op.result.type.layout
    rank = len(op.result.type.shape)
    a_t: DType = op.a.type.scalar  # type: ignore[assignment]
    acc_t: DType = op.result.type.scalar  # type: ignore[assignment]
    # tf32x3 is as accurate as fp32 (the interpreter runs it so): only plain tf32 rounds
    tf32 = op.input_precision == "tf32" and a_t.ir_name == "f32"
    work = acc_t if acc_t.kind != Kind.FLOAT or acc_t.ir_name == "f64" else float32
    acc = [convert_reg(e, op, acc_t, work, r) for r in e.get(op.acc).regs]
    tc = [e.thread_coords(layout, d) for d in range(rank)]
    rows: dict[tuple[int, ...], Reg] = {}
    cols: dict[tuple[int, ...], Reg] = {}

    def addr(cache: dict[tuple[int, ...], Reg], key: tuple[int, ...], dims: tuple[int, ...],
             strides: tuple[int, ...], base: Reg) -> Reg:
        """``base`` + the byte offset of the staged row at coordinates ``key`` (XORed
        with this thread's part along ``dims``)."""
        if key not in cache:
            r, fixed = base, 0
            for c, d, s in zip(key, dims, strides):
                t = tc[d]
                if isinstance(t, int):
                    fixed += (c ^ t) * s
                    continue
                x, y = e.fn.reg("b32"), e.fn.reg("b32")
                e.fn.emit(f"xor.b32 {x}, {t}, {c}")
                e.fn.emit(f"mad.lo.u32 {y}, {x}, {s}, {r}")
                r = y
            if fixed or r is base:
                y = e.fn.reg("b32")
                e.fn.emit(f"add.u32 {y}, {r}, {fixed}")
                r = y
            cache[key] = r
        return cache[key]

    cls = reg_class(a_t)
    mt = load_type(a_t, cls)
    batch_dims = (0,) if rank == 3 else ()
    out = []
    done: dict[tuple[int, ...], Reg] = {}
    for r in range(layout.in_dim_size("register")):
        c = register_coords(layout, r)
        if c in done:
            out.append(done[c])
            continue
        b = c[:-2]
        ar = addr(rows, b + (c[-2],), batch_dims + (rank - 2,), (st.m * st.pitch,)[:len(b)] + (st.pitch,), st.base_a)
        br = addr(cols, b + (c[-1],), batch_dims + (rank - 1,), (st.n * st.pitch,)[:len(b)] + (st.pitch,), st.base_b)
        cur = acc[r]
        for kk in range(st.k):
            x, y = e.fn.reg(cls), e.fn.reg(cls)
            e.fn.emit(f"ld.shared.{mt} {x}, [{ar}+{kk * st.size}]")
            e.fn.emit(f"ld.shared.{mt} {y}, [{br}+{kk * st.size}]")
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
                e.fn.emit(f"fma.rn.{work.ir_name} {d}, {x}, {y}, {cur}")
            else:
                e.fn.emit(f"mad.lo.s32 {d}, {x}, {y}, {cur}")
            cur = d
        res = convert_reg(e, op, work, acc_t, cur)
        done[c] = res
        out.append(res)
    e.set(op.result, out)
