"""Global loads and stores, vectorized up to 16 bytes where the layout keeps consecutive
elements in consecutive registers and the axis analysis proves the pointers contiguous
and aligned (and the mask constant over the vector): ``codegen/access.py``.

A masked vector is a branch around the access (LLVM turns short ones into ``exec``-mask
code): the loaded value joins ``other`` (or zero) in a phi. A value that several lanes
(or registers) hold is stored once: lanes and waves whose layout bases are zero, and
duplicate registers, are masked off for stores.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType, Kind, PointerType
from .. import access
from .emitter import Emitter, lowers
from .llvm import I1, I8, I32, I64, bytes_of, memory_type, value_type

MAX_VECTOR_BYTES = 16


def _elem(op: Operation) -> DType | PointerType:
    return op.ptr.type.scalar.pointee


def vector_width(e: Emitter, op: Operation, elem_bytes: int) -> int:
    return access.vector_width(e.axis, op, elem_bytes, MAX_VECTOR_BYTES)


@lowers(ops.AddPtrOp)
def addptr(e: Emitter, op: Operation) -> None:
    elem = memory_type(op.result.type.scalar.pointee)
    ptrs, offs = (e.get(v).vals for v in op.operands)
    # getelementptr sign-extends a narrow index: an unsigned offset is widened first
    unsigned = op.offset.type.scalar.kind == Kind.UINT
    done: dict[tuple[int, int], ir.Value] = {}
    out = []
    for p, o in zip(ptrs, offs):
        key = (id(p), id(o))
        if key not in done:
            if unsigned and o.type.width < 64:
                o = e.b.zext(o, I64)
            done[key] = e.b.gep(p, [o], source_etype=elem)
        out.append(done[key])
    e.set(op.result, out)


def _to_register(e: Emitter, elem: DType | PointerType, x: ir.Value) -> ir.Value:
    """A loaded memory element as held in registers (bytes of booleans become ``i1``)."""
    if isinstance(elem, DType) and elem.kind == Kind.BOOL:
        return e.b.icmp_unsigned("!=", x, ir.Constant(I8, 0))
    return x


def _to_memory(e: Emitter, elem: DType | PointerType, x: ir.Value) -> ir.Value:
    if isinstance(elem, DType) and elem.kind == Kind.BOOL:
        return e.b.zext(x, I8)
    return x


class VolatileLoad(ir.instructions.LoadInstr):
    """``load volatile`` (llvmlite.ir spells only plain loads): ``tl.load(volatile=True)``
    must not be merged with another load or moved out of a loop."""

    def descr(self, buf: list[str]) -> None:
        super().descr(buf)
        buf[-1] = buf[-1].replace("load ", "load volatile ", 1)


def _load(e: Emitter, ptr: ir.Value, ty: ir.Type, align: int, volatile: bool) -> ir.Value:
    if not volatile:
        return e.b.load(ptr, typ=ty, align=align)
    instr = VolatileLoad(e.b.block, ptr, typ=ty)
    instr.align = align
    e.b._insert(instr)
    return instr


@lowers(ops.LoadOp)
def load(e: Emitter, op: Operation) -> None:
    elem = _elem(op)
    mt = memory_type(elem)
    size = bytes_of(mt)
    ptrs = e.get(op.ptr).vals
    mask = e.get(op.mask).vals if op.mask is not None else None
    other = e.get(op.other).vals if op.other is not None else None
    v = vector_width(e, op, size)
    volatile = bool(op.attrs.get("volatile"))
    vt = ir.VectorType(mt, v) if v > 1 else mt
    out: list[ir.Value] = []
    for start in range(0, len(ptrs), v):
        pred = mask[start] if mask is not None else None
        if isinstance(pred, ir.Constant):  # a constant mask: all or nothing
            pred = None if pred.constant else False
        if pred is None:
            x = _load(e, ptrs[start], vt, v * size, volatile)
        elif pred is False:
            x = _other_vector(e, elem, mt, other, start, v)
        else:
            fallback = _other_vector(e, elem, mt, other, start, v)
            here = e.b.block
            then = e.fn.append_basic_block("load")
            join = e.fn.append_basic_block("load.end")
            e.b.cbranch(pred, then, join)
            e.b.position_at_end(then)
            got = _load(e, ptrs[start], vt, v * size, volatile)
            e.b.branch(join)
            e.b.position_at_end(join)
            x = e.b.phi(vt)
            x.add_incoming(got, then)
            x.add_incoming(fallback, here)
        if v == 1:
            out.append(_to_register(e, elem, x))
        else:
            out += [_to_register(e, elem, e.b.extract_element(x, ir.Constant(I32, i))) for i in range(v)]
    e.set(op.result, out)


def _other_vector(e: Emitter, elem: DType | PointerType, mt: ir.Type, other: list[ir.Value] | None, start: int,
                  v: int) -> ir.Value:
    """What a masked-off access yields: ``other`` (as memory elements), else zero."""
    if other is None:
        return ir.Constant(ir.VectorType(mt, v) if v > 1 else mt, None)  # zeroinitializer
    vals = [_to_memory(e, elem, other[start + i]) for i in range(v)]
    if v == 1:
        return vals[0]
    vec = ir.Constant(ir.VectorType(mt, v), ir.Undefined)
    for i, x in enumerate(vals):
        vec = e.b.insert_element(vec, x, ir.Constant(I32, i))
    return vec


def owner_predicate(e: Emitter, layout: object) -> ir.Value | None:
    """True in the one lane (of those holding the same elements) that should store."""
    masks = access.replicated_bits(layout)  # type: ignore[arg-type]
    if not masks:
        return None
    key = "owner:" + ",".join(f"{s}{b}" for s, b in masks)

    def make(b: ir.IRBuilder) -> ir.Value:
        acc = ir.Constant(I32, 0)
        for src, bits in masks:
            acc = b.or_(acc, b.and_(e.special(src), ir.Constant(I32, bits)))
        return b.icmp_unsigned("==", acc, ir.Constant(I32, 0))

    return e.in_entry(key, make)


def _and(e: Emitter, a: ir.Value | None, b: ir.Value | None) -> ir.Value | None:
    if a is None or b is None:
        return a or b
    return e.b.and_(a, b)


@lowers(ops.StoreOp)
def store(e: Emitter, op: Operation) -> None:
    elem = _elem(op)
    mt = memory_type(elem)
    size = bytes_of(mt)
    ptr_value = op.ptr
    ptrs = e.get(ptr_value).vals
    vals = e.get(op.value).vals
    mask = e.get(op.mask).vals if op.mask is not None else None
    v = vector_width(e, op, size)
    layout = ptr_value.type.layout if ptr_value.type.shape else None
    if layout is not None:
        owner = owner_predicate(e, layout)
        dup = access.duplicate_registers(layout)
    else:  # a scalar store: one lane of the work-group
        owner = e.in_entry("first-lane", lambda b: b.icmp_unsigned("==", e.special("tid"), ir.Constant(I32, 0)))
        dup = set()
    for start in range(0, len(ptrs), v):
        if start in dup:
            continue
        data = [_to_memory(e, elem, x) for x in vals[start:start + v]]
        if v == 1:
            x = data[0]
        else:
            x = ir.Constant(ir.VectorType(mt, v), ir.Undefined)
            for i, d in enumerate(data):
                x = e.b.insert_element(x, d, ir.Constant(I32, i))
        pred = _and(e, owner, mask[start] if mask is not None else None)
        if pred is None:
            e.b.store(x, ptrs[start], align=v * size)
            continue
        then = e.fn.append_basic_block("store")
        join = e.fn.append_basic_block("store.end")
        e.b.cbranch(pred, then, join)
        e.b.position_at_end(then)
        e.b.store(x, ptrs[start], align=v * size)
        e.b.branch(join)
        e.b.position_at_end(join)


@lowers(ops.PtrToIntOp)
def ptr_to_int(e: Emitter, op: Operation) -> None:
    ty = value_type(op.result.type.scalar)
    e.set(op.result, [e.b.ptrtoint(p, ty) for p in e.get(op.x).vals])


@lowers(ops.IntToPtrOp)
def int_to_ptr(e: Emitter, op: Operation) -> None:
    ty = value_type(op.result.type.scalar)
    e.set(op.result, [e.b.inttoptr(x if x.type == I64 else e.b.zext(x, I64), ty) for x in e.get(op.x).vals])


@lowers(ops.UnpackTensorDescOp)
def unpack_tensor_descriptor(e: Emitter, op: Operation) -> None:
    """A host descriptor parameter is a struct of its base pointer, sizes and strides
    (``compile.param_type``): its fields, in that order."""
    (desc,) = e.get(op.desc).vals
    for i, r in enumerate(op.results):
        e.set(r, [e.b.extract_value(desc, i)])


__all__ = ["I1"]
