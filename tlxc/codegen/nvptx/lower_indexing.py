"""``gather`` and ``histogram`` through the scratch area of shared memory.

``gather``: a barrier (the scratch area may still be read by the op before), every
thread stores what it holds of ``src`` at the element's row-major offset
(``lower_convert._smem_pass``), a barrier, then each thread reads, for each register of
the index, the element whose coordinate is the register's own with the index value along
the axis. An index outside the axis is undefined behaviour (Triton does not check it);
it is wrapped modulo the axis size (a power of two) so that the read stays inside the
copy of ``src``.

``histogram``: a barrier, the scope's threads zero ``num_bins`` 32-bit words, a
barrier, each thread adds 1 with ``red.shared.add.u32`` at every value it holds that is
in ``[0, num_bins)`` (values compare as unsigned 32- or 64-bit numbers after sign or
zero extension, so negative ones are out), where the mask is set -- once per element: a
register or thread that holds a copy of another's element does not count it -- then a
barrier and each thread loads the bins of its result layout.

No barrier closes either op: every user of the scratch area opens with one.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from .. import access
from ..indexing import check_one_cta, row_major_strides
from .emitter import Emitter, lowers, register_coords
from .lower_convert import _smem_pass
from .lower_memory import _and, owner_predicate
from .ptx import Reg, reg_class

# bytes of one element in the row-major copy, by register class (predicates as bytes)
_SIZE = {"pred": 1, "b16": 2, "b32": 4, "f32": 4, "b64": 8, "f64": 8}


def _coord(e: Emitter, layout: LinearLayout, r: int, d: int) -> Reg | int:
    """Register ``r``'s coordinate along dim ``d``: its constant part XOR the thread's."""
    c = register_coords(layout, r)[d]
    t = e.thread_coords(layout, d)
    if isinstance(t, int):
        return c ^ t
    if not c:
        return t
    x = e.fn.reg("b32")
    e.fn.emit(f"xor.b32 {x}, {t}, {c}")
    return x


def _to_u32(e: Emitter, t: DType, v: Reg) -> Reg:
    """An integer register as a 32-bit word (sign- or zero-extended; 64-bit: its low half)."""
    if v.cls == "b32":
        return v
    out = e.fn.reg("b32")
    if v.cls == "pred":
        e.fn.emit(f"selp.u32 {out}, 1, 0, {v}")
    elif v.cls == "b64":
        e.fn.emit(f"cvt.u32.u64 {out}, {v}")
    else:
        s = "s" if t.kind == Kind.INT else "u"
        e.fn.emit(f"cvt.{s}32.{s}{t.bits} {out}, {v}")
    return out


@lowers(ops.GatherOp)
def gather(e: Emitter, op: Operation) -> None:
    src, index = e.get(op.src), e.get(op.index)
    src_t, idx_t = op.src.type, op.index.type
    check_one_cta(op, [src_t.layout, idx_t.layout], e.target.arch)
    cls = reg_class(src_t.scalar)
    size = _SIZE[cls]
    shape = src_t.shape
    strides = row_major_strides(shape)
    axis = op.axis
    e.scratch(strides[0] * shape[0] * size)
    base = e.smem_base()
    e.barrier()  # the scratch area may still be read by the op before
    _smem_pass(e, src_t.layout, src.regs, shape, strides, size, cls, base, store=True)
    e.barrier()
    layout = idx_t.layout
    out = []
    for r, i in enumerate(index.regs):
        addr = e.fn.reg("b32")
        e.fn.emit(f"and.b32 {addr}, {_to_u32(e, idx_t.scalar, i)}, {shape[axis] - 1}")
        e.fn.emit(f"mad.lo.u32 {addr}, {addr}, {strides[axis] * size}, {base}")
        imm = 0
        for d in range(len(shape)):
            if d == axis:
                continue
            c = _coord(e, layout, r, d)
            if isinstance(c, int):
                imm += c * strides[d] * size
            else:
                e.fn.emit(f"mad.lo.u32 {addr}, {c}, {strides[d] * size}, {addr}")
        d_reg = e.fn.reg(cls)
        if cls == "pred":
            h = e.fn.reg("b16")
            e.fn.emit(f"ld.shared.u8 {h}, [{addr}+{imm}]")
            e.fn.emit(f"setp.ne.u16 {d_reg}, {h}, 0")
        else:
            e.fn.emit(f"ld.shared.{cls} {d_reg}, [{addr}+{imm}]")
        out.append(d_reg)
    e.set(op.result, out)


@lowers(ops.HistogramOp)
def histogram(e: Emitter, op: Operation) -> None:
    x_t = op.x.type
    layout = x_t.layout
    check_one_cta(op, [layout, op.result.type.layout], e.target.arch)
    elem: DType = x_t.scalar
    bins = op.result.type.shape[0]
    xs = e.get(op.x).regs
    mask = e.get(op.mask).regs if op.mask is not None else None
    e.scratch(bins * 4)
    base = e.smem_base()
    e.barrier()  # the scratch area may still be read by the op before
    _zero(e, base, bins)
    e.barrier()
    owner = owner_predicate(e, layout)
    dup = access.duplicate_registers(layout)
    for r, v in enumerate(xs):
        if r in dup:
            continue
        inside = e.fn.reg("pred")
        if v.cls == "b64":
            e.fn.emit(f"setp.lt.u64 {inside}, {v}, {bins}")
        word = _to_u32(e, elem, v)
        if v.cls != "b64":
            e.fn.emit(f"setp.lt.u32 {inside}, {word}, {bins}")
        pred = _and(e, _and(e, inside, owner), mask[r] if mask is not None else None)
        addr = e.fn.reg("b32")
        e.fn.emit(f"mad.lo.u32 {addr}, {word}, 4, {base}")
        e.fn.emit(f"red.shared.add.u32 [{addr}], 1", pred)
    e.barrier()
    out_layout = op.result.type.layout
    out = []
    for r in range(out_layout.in_dim_size("register")):
        c = _coord(e, out_layout, r, 0)
        d = e.fn.reg("b32")
        if isinstance(c, int):
            e.fn.emit(f"ld.shared.u32 {d}, [{base}+{c * 4}]")
        else:
            a = e.fn.reg("b32")
            e.fn.emit(f"mad.lo.u32 {a}, {c}, 4, {base}")
            e.fn.emit(f"ld.shared.u32 {d}, [{a}]")
        out.append(d)
    e.set(op.result, out)


def _zero(e: Emitter, base: Reg, bins: int) -> None:
    """The scope's threads store 0 in the ``bins`` words at ``base``: thread ``t`` the
    words ``t, t + threads, ...`` (both are powers of two; with fewer bins than threads,
    threads ``t >= bins`` store nothing)."""
    assert e.scope is not None
    threads = e.scope.num_warps * 32
    tid = e.special("tid")
    addr = e.fn.reg("b32")
    e.fn.emit(f"mad.lo.u32 {addr}, {tid}, 4, {base}")
    if bins < threads:
        p = e.fn.reg("pred")
        e.fn.emit(f"setp.lt.u32 {p}, {tid}, {bins}")
        e.fn.emit(f"st.shared.u32 [{addr}], 0", p)
        return
    for i in range(bins // threads):
        e.fn.emit(f"st.shared.u32 [{addr}+{i * threads * 4}], 0")
