"""``gather`` and ``histogram`` through the LDS scratch area (the NVIDIA rules,
``codegen/nvptx/lower_indexing.py``, do the same with PTX).

``gather``: a barrier (the scratch area may still be read by the op before), every lane
stores what it holds of ``src`` at the element's row-major offset
(``lower_convert._pass``), a barrier, then each lane loads, for each register of the
index, the element at the register's own coordinate with the index value along the
axis. An out-of-range index is undefined behaviour (as in Triton); it is wrapped modulo
the axis size (a power of two) so that the load stays inside the copy of ``src``.

``histogram``: the scratch holds ``num_bins + 1`` 32-bit words; the last one takes the
adds of elements that must not count (outside ``[0, num_bins)``, masked off, or a copy
another register or lane also holds), so that the adds need no branch. A barrier, the
lanes zero the words (lanes past them store to the last word), a barrier, one
``atomicrmw add`` per register (``ds_add_u32``; workgroup scope, monotonic: the barrier
orders them), a barrier, then each lane loads the bins of its result layout.

No barrier closes either op: every user of the scratch area opens with one.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from .. import access
from ..indexing import check_one_cta, row_major_strides
from .emitter import Emitter, lowers, register_coords
from .llvm import I8, I32, I64, bytes_of, value_type
from .lower_convert import _from_memory, _memory_type, _pass
from .lower_memory import _and, owner_predicate


def _coord(e: Emitter, layout: LinearLayout, r: int, d: int) -> ir.Value | int:
    """Register ``r``'s coordinate along dim ``d``: its constant part XOR the lane's."""
    c = register_coords(layout, r)[d]
    t = e.thread_coords(layout, d)
    if isinstance(t, int):
        return c ^ t
    return e.b.xor(t, ir.Constant(I32, c)) if c else t


def _to_i32(e: Emitter, t: DType, v: ir.Value) -> ir.Value:
    """An integer value as i32 (sign- or zero-extended by its type; i64: its low half)."""
    w = v.type.width
    if w == 32:
        return v
    if w > 32:
        return e.b.trunc(v, I32)
    return e.b.sext(v, I32) if t.kind == Kind.INT else e.b.zext(v, I32)


@lowers(ops.GatherOp)
def gather(e: Emitter, op: Operation) -> None:
    src_t, idx_t = op.src.type, op.index.type
    check_one_cta(op, [src_t.layout, idx_t.layout], e.target.arch)
    src, index = e.get(op.src), e.get(op.index)
    ty = value_type(src_t.scalar)
    mt = _memory_type(ty)
    size = bytes_of(mt)
    shape = src_t.shape
    strides = row_major_strides(shape)
    axis = op.axis
    e.scratch(strides[0] * shape[0] * size)
    e.barrier()  # the scratch area may still be read by the op before
    _pass(e, src_t.layout, list(src.vals), strides, size, ty, store=True)
    e.barrier()
    layout = idx_t.layout
    out = []
    for r, i in enumerate(index.vals):
        k = e.b.and_(_to_i32(e, idx_t.scalar, i), ir.Constant(I32, shape[axis] - 1))
        off = e.b.mul(k, ir.Constant(I32, strides[axis] * size))
        imm = 0
        for d in range(len(shape)):
            if d == axis:
                continue
            c = _coord(e, layout, r, d)
            if isinstance(c, int):
                imm += c * strides[d] * size
            else:
                off = e.b.add(off, e.b.mul(c, ir.Constant(I32, strides[d] * size)))
        if imm:
            off = e.b.add(off, ir.Constant(I32, imm))
        ptr = e.b.gep(e.lds_base(), [off], source_etype=I8)
        out.append(_from_memory(e, ty, e.b.load(ptr, typ=mt, align=size)))
    e.set(op.result, out)


@lowers(ops.HistogramOp)
def histogram(e: Emitter, op: Operation) -> None:
    x_t = op.x.type
    layout = x_t.layout
    check_one_cta(op, [layout, op.result.type.layout], e.target.arch)
    elem: DType = x_t.scalar
    bins = op.result.type.shape[0]
    xs = e.get(op.x).vals
    mask = e.get(op.mask).vals if op.mask is not None else None
    e.scratch((bins + 1) * 4)
    base = e.lds_base()
    e.barrier()  # the scratch area may still be read by the op before
    _zero(e, base, bins)
    e.barrier()
    owner = owner_predicate(e, layout)
    dup = access.duplicate_registers(layout)
    trash = ir.Constant(I32, bins)
    for r, v in enumerate(xs):
        if r in dup:
            continue
        if v.type.width == 1:
            word = e.b.zext(v, I32)
            inside = e.b.icmp_unsigned("<", word, ir.Constant(I32, bins))
        elif v.type.width == 64:
            inside = e.b.icmp_unsigned("<", v, ir.Constant(I64, bins))
            word = e.b.trunc(v, I32)
        else:
            word = _to_i32(e, elem, v)
            inside = e.b.icmp_unsigned("<", word, ir.Constant(I32, bins))
        keep = _and(e, _and(e, inside, owner), mask[r] if mask is not None else None)
        assert keep is not None
        slot = e.b.select(keep, word, trash)
        ptr = e.b.gep(base, [e.b.mul(slot, ir.Constant(I32, 4))], source_etype=I8)
        e.b.atomic_rmw("add", ptr, ir.Constant(I32, 1), 'syncscope("workgroup") monotonic')
    e.barrier()
    out_layout = op.result.type.layout
    out = []
    for r in range(out_layout.in_dim_size("register")):
        c = _coord(e, out_layout, r, 0)
        off = ir.Constant(I32, c * 4) if isinstance(c, int) else e.b.mul(c, ir.Constant(I32, 4))
        out.append(e.b.load(e.b.gep(base, [off], source_etype=I8), typ=I32, align=4))
    e.set(op.result, out)


def _zero(e: Emitter, base: ir.Value, bins: int) -> None:
    """The work-group's lanes store 0 in the ``bins + 1`` words at ``base``: lane ``t``
    the words ``t, t + threads, ...`` up to ``bins`` (lanes past it store to ``bins``)."""
    threads = e.num_warps * e.target.wave_size
    tid = e.special("tid")
    zero = ir.Constant(I32, 0)
    for start in range(0, bins + 1, threads):
        w = e.b.add(tid, ir.Constant(I32, start)) if start else tid
        if start + threads > bins:
            w = e.b.select(e.b.icmp_unsigned("<", w, ir.Constant(I32, bins)), w, ir.Constant(I32, bins))
        e.b.store(zero, e.b.gep(base, [e.b.mul(w, ir.Constant(I32, 4))], source_etype=I8), align=4)
