"""Reductions along one axis: first over the registers a thread holds, then across the
lanes of a warp with butterfly shuffles, then across warps through shared memory --
each step only over the layout bits that move along the reduced axis."""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType, Kind, int32
from .emitter import Emitter, lowers, register_coords
from .lower_arith import float_binary
from .ptx import Reg, int_suffix, reg_class


def combine(e: Emitter, op: Operation, kind: str, t: DType, a: Reg, b: Reg) -> Reg:
    base = kind[3:] if kind.startswith("arg") else kind
    if t.kind == Kind.FLOAT:
        # a float max/min reduction is NaN when any element is (the interpreter's np.max rule)
        name = {"sum": "add", "max": "maximum", "min": "minimum"}[base]
        return float_binary(e, op, t, name, a, b, propagate_nan=True)
    d = e.fn.reg(reg_class(t))
    if base == "xor_sum":
        e.fn.emit(f"xor.b{max(16, t.bits)} {d}, {a}, {b}")
    else:
        ins = {"sum": "add", "max": "max", "min": "min"}[base]
        e.fn.emit(f"{ins}.{int_suffix(t)} {d}, {a}, {b}")
    if t.bits == 8:
        from .lower_arith import normalize8

        normalize8(e, t, d)
    return d


def arg_combine(e: Emitter, kind: str, t: DType, a: tuple[Reg, Reg], b: tuple[Reg, Reg]) -> tuple[Reg, Reg]:
    """(value, index) pairs: keep b if it is strictly better, or equal with a smaller index."""
    better, equal, smaller, take = (e.fn.reg("pred") for _ in range(4))
    cmp = "gt" if kind == "argmax" else "lt"
    ty = t.ir_name if t.kind == Kind.FLOAT else int_suffix(t)
    e.fn.emit(f"setp.{cmp}.{ty} {better}, {b[0]}, {a[0]}")
    e.fn.emit(f"setp.eq.{ty} {equal}, {b[0]}, {a[0]}")
    e.fn.emit(f"setp.lt.s32 {smaller}, {b[1]}, {a[1]}")
    e.fn.emit(f"and.pred {equal}, {equal}, {smaller}")
    e.fn.emit(f"or.pred {take}, {better}, {equal}")
    cls = reg_class(t)
    v, i = e.fn.reg(cls), e.fn.reg("b32")
    e.fn.emit(f"selp.{cls if cls.startswith('f') else 'b' + cls[1:]} {v}, {b[0]}, {a[0]}, {take}")
    e.fn.emit(f"selp.b32 {i}, {b[1]}, {a[1]}, {take}")
    return v, i


def shuffle(e: Emitter, r: Reg, lane: Reg | int, mode: str = "bfly") -> Reg:
    """The value of ``r`` in lane ``laneid ^ lane`` (``mode="bfly"``) or in lane ``lane``
    (``mode="idx"``), one ``shfl.sync`` per 32-bit word."""
    if r.cls in ("b32", "f32"):
        d = e.fn.reg(r.cls)
        e.fn.emit(f"shfl.sync.{mode}.b32 {d}, {r}, {lane}, 31, -1")
        return d
    if r.cls == "b16":
        w, o = e.fn.reg("b32"), e.fn.reg("b32")
        e.fn.emit(f"cvt.u32.u16 {w}, {r}")
        e.fn.emit(f"shfl.sync.{mode}.b32 {o}, {w}, {lane}, 31, -1")
        d = e.fn.reg("b16")
        e.fn.emit(f"cvt.u16.u32 {d}, {o}")
        return d
    lo, hi, lo2, hi2 = (e.fn.reg("b32") for _ in range(4))
    e.fn.emit(f"mov.b64 {{{lo}, {hi}}}, {r}")
    e.fn.emit(f"shfl.sync.{mode}.b32 {lo2}, {lo}, {lane}, 31, -1")
    e.fn.emit(f"shfl.sync.{mode}.b32 {hi2}, {hi}, {lane}, 31, -1")
    d = e.fn.reg(r.cls)
    e.fn.emit(f"mov.b64 {d}, {{{lo2}, {hi2}}}")
    return d


@lowers(ops.ReduceOp)
def reduce(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    layout = src.layout
    axis, kind = op.axis, op.kind
    t: DType = op.x.type.scalar  # type: ignore[assignment]
    is_arg = kind.startswith("arg")
    if t.kind == Kind.BOOL or (t.kind == Kind.FLOAT and t.bits == 8):
        raise CompilationError("TLXC-CODEGEN-001", f"reducing {t!r} cannot be compiled for {e.target.arch} yet",
                               op.loc)
    ax = layout.out_dims.index(f"dim{axis}")
    for src_dim in ("lane", "warp"):
        for b in layout.in_bases(src_dim):
            if b[ax] and any(x for i, x in enumerate(b) if i != ax):
                raise CompilationError("TLXC-CODEGEN-001", "reduction over a layout that mixes the reduced axis "
                                       "with other dims in one lane/warp bit is not supported yet", op.loc)
    # 1. registers of this thread, grouped by their coordinate without the axis
    axis_thread = e.thread_coords(layout, ax) if is_arg else 0
    groups: dict[tuple[int, ...], object] = {}
    seen: set[tuple[int, ...]] = set()
    for r, reg in enumerate(src.regs):
        c = register_coords(layout, r)
        if c in seen:
            continue
        seen.add(c)
        key = c[:ax] + c[ax + 1:]
        if is_arg:
            idx = e.fn.reg("b32")
            if isinstance(axis_thread, int):
                e.fn.emit(f"mov.u32 {idx}, {c[ax] ^ axis_thread}")
            else:
                e.fn.emit(f"xor.b32 {idx}, {axis_thread}, {c[ax]}")
            val: object = (reg, idx)
        else:
            val = reg
        if key in groups:
            groups[key] = (arg_combine(e, kind, t, groups[key], val) if is_arg  # type: ignore[arg-type]
                           else combine(e, op, kind, t, groups[key], val))  # type: ignore[arg-type]
        else:
            groups[key] = val
    # 2. lanes whose bit moves along the axis
    for bit, b in enumerate(layout.in_bases("lane")):
        if not b[ax]:
            continue
        for key, val in groups.items():
            if is_arg:
                other = (shuffle(e, val[0], 1 << bit), shuffle(e, val[1], 1 << bit))  # type: ignore[index]
                groups[key] = arg_combine(e, kind, t, val, other)  # type: ignore[arg-type]
            else:
                groups[key] = combine(e, op, kind, t, val, shuffle(e, val, 1 << bit))  # type: ignore[arg-type]
    # 3. warps whose bit moves along the axis: through shared memory
    warp_bits = [bit for bit, b in enumerate(layout.in_bases("warp")) if b[ax]]
    if warp_bits:
        _across_warps(e, op, layout, ax, kind, t, groups, warp_bits)
    # 4. the result, in the slice layout
    if not op.result.type.shape:
        (val,) = groups.values()
        e.set(op.result, [val[1] if is_arg else val])  # type: ignore[index]
        return
    dst = op.result.type.layout
    regs = []
    for r in range(dst.in_dim_size("register")):
        val = groups[register_coords(dst, r)]
        regs.append(val[1] if is_arg else val)  # type: ignore[index]
    e.set(op.result, regs)


def _across_warps(e: Emitter, op: Operation, layout: object, ax: int, kind: str, t: DType,
                  groups: dict, warp_bits: list[int]) -> None:
    is_arg = kind.startswith("arg")
    dims = [i for i in range(layout.num_out_dims) if i != ax]  # type: ignore[attr-defined]
    shape = [layout.out_dim_size(f"dim{i}") for i in dims]  # type: ignore[attr-defined]
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    numel = (strides[0] * shape[0]) if shape else 1
    nw = 1 << len(warp_bits)
    cls = reg_class(t)
    size = 8 if cls in ("b64", "f64") else 4
    e.scratch(nw * numel * size * (2 if is_arg else 1))
    base = e.smem_base()
    row, thread = warp_row_and_thread_offset(e, layout, warp_bits, dims, strides)
    e.barrier()
    addrs = {}
    for key, val in groups.items():
        off = sum(c * s for c, s in zip(key, strides))
        elem = e.fn.reg("b32")
        e.fn.emit(f"add.u32 {elem}, {thread}, {off}")
        addrs[key] = elem
        slot = e.fn.reg("b32")
        e.fn.emit(f"mad.lo.u32 {slot}, {row}, {numel}, {elem}")
        e.fn.emit(f"mad.lo.u32 {slot}, {slot}, {size}, {base}")
        _st(e, slot, 0, val[0] if is_arg else val, t)
        if is_arg:
            e.fn.emit(f"st.shared.b32 [{slot}+{nw * numel * size}], {val[1]}")
    e.barrier()
    for key in list(groups):
        acc = None
        for w in range(nw):
            slot = e.fn.reg("b32")
            e.fn.emit(f"mad.lo.u32 {slot}, {addrs[key]}, {size}, {base}")
            off = w * numel * size
            v = _ld(e, slot, off, t)
            if is_arg:
                i = e.fn.reg("b32")
                e.fn.emit(f"ld.shared.b32 {i}, [{slot}+{off + nw * numel * size}]")
                cur: object = (v, i)
                acc = cur if acc is None else arg_combine(e, kind, t, acc, cur)  # type: ignore[arg-type]
            else:
                acc = v if acc is None else combine(e, op, kind, t, acc, v)  # type: ignore[arg-type]
        groups[key] = acc


def warp_row_and_thread_offset(e: Emitter, layout: object, warp_bits: list[int], dims: list[int],
                               strides: list[int]) -> tuple[Reg, Reg]:
    """For a reduction across warps through shared memory: this thread's row (its warp
    index along the reduced axis, from ``warp_bits``) and the thread part of its element
    offset in the row (the lane/warp coordinates along the kept ``dims`` times ``strides``)."""
    row = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {row}, 0")
    for k, bit in enumerate(warp_bits):
        tmp = e.fn.reg("b32")
        e.fn.emit(f"bfe.u32 {tmp}, {e.special('warp')}, {bit}, 1")
        e.fn.emit(f"shl.b32 {tmp}, {tmp}, {k}")
        e.fn.emit(f"or.b32 {row}, {row}, {tmp}")
    thread = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {thread}, 0")
    for i, d in enumerate(dims):
        tc = e.thread_coords(layout, d)  # type: ignore[arg-type]
        if not isinstance(tc, int):
            e.fn.emit(f"mad.lo.u32 {thread}, {tc}, {strides[i]}, {thread}")
    return row, thread


def _st(e: Emitter, addr: Reg, off: int, r: Reg, t: DType) -> None:
    if r.cls == "b16":
        w = e.fn.reg("b32")
        e.fn.emit(f"cvt.u32.u16 {w}, {r}")
        e.fn.emit(f"st.shared.b32 [{addr}+{off}], {w}")
    else:
        e.fn.emit(f"st.shared.{r.cls if r.cls.startswith('f') else r.cls} [{addr}+{off}], {r}")


def _ld(e: Emitter, addr: Reg, off: int, t: DType) -> Reg:
    cls = reg_class(t)
    if cls == "b16":
        w, d = e.fn.reg("b32"), e.fn.reg("b16")
        e.fn.emit(f"ld.shared.b32 {w}, [{addr}+{off}]")
        e.fn.emit(f"cvt.u16.u32 {d}, {w}")
        return d
    d = e.fn.reg(cls)
    e.fn.emit(f"ld.shared.{cls} {d}, [{addr}+{off}]")
    return d


__all__ = ["int32"]
