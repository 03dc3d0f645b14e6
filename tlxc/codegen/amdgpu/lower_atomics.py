"""Atomics through global pointers: one LLVM ``atomicrmw`` / ``cmpxchg`` per element,
with the op's ordering and a sync scope (``gpu`` is the ``agent``, ``cta`` the
``workgroup``, ``sys`` the default system scope); LLVM picks the AMDGPU instruction, or a
compare-and-swap loop where the chip has none.

As for stores, each element is updated once, by the lane that owns it, in a branch when
there is a mask or an owner to test. The old value then exists in the owner only, and
reaches the copies as Triton's semantics ask:

* a scalar atomic is done by work-item 0, whose old value reaches every lane through the
  LDS scratch area;
* a tile whose copies lie in lanes of the owner's wave only reads the owner lane's value
  with ``ds_bpermute`` (``cross_lane.read_lane``, lane ``lane & ~replicated lane bits``);
* a tile with copies in other waves goes through the LDS scratch area: each owner writes
  its old values at their elements' flat indices, and after a barrier every lane reads
  the elements it holds.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import all_register_coords
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from .. import access
from . import cross_lane
from .emitter import Emitter, lowers
from .llvm import I32, bytes_of
from .lower_memory import _and, owner_predicate

_ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
# a failed compare-and-swap only reads: its ordering drops the release side
_FAIL_ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire"}
_SCOPE = {"gpu": 'syncscope("agent") ', "cta": 'syncscope("workgroup") ', "sys": ""}


def _rmw_name(kind: str, t: DType) -> str:
    if t.kind == Kind.FLOAT:
        return {"add": "fadd", "max": "fmax", "min": "fmin", "xchg": "xchg"}[kind]
    if kind in ("max", "min"):
        return kind if t.kind == Kind.INT else f"u{kind}"
    return {"xchg": "xchg"}.get(kind, kind)


@lowers(ops.AtomicRMWOp, ops.AtomicCASOp)
def atomic(e: Emitter, op: Operation) -> None:
    elem: DType = op.ptr.type.scalar.pointee
    cas = isinstance(op, ops.AtomicCASOp)
    ptrs = e.get(op.ptr).vals
    vals = e.get(op.val).vals
    cmps = e.get(op.cmp).vals if cas else None
    mask = e.get(op.mask).vals if not cas and op.mask is not None else None
    used = bool(op.result.uses)
    layout = op.ptr.type.layout if op.ptr.type.shape else None
    if layout is not None:
        owner = owner_predicate(e, layout)
        dup = access.duplicate_registers(layout)
    else:
        owner = e.in_entry("first-lane", lambda b: b.icmp_unsigned("==", e.special("tid"), ir.Constant(I32, 0)))
        dup = set()
    ordering = _SCOPE[op.scope] + _ORDERING[op.sem]
    out: list[ir.Value | None] = []
    for i, ptr in enumerate(ptrs):
        if i in dup:
            out.append(None)
            continue
        pred = _and(e, owner, mask[i] if mask is not None else None)

        def emit(ptr: ir.Value = ptr, i: int = i) -> ir.Value:
            if cas:
                assert cmps is not None
                return _cmpxchg(e, ptr, cmps[i], vals[i], ordering, _FAIL_ORDERING[op.sem])
            return e.b.atomic_rmw(_rmw_name(op.kind, elem), ptr, vals[i], ordering)

        if pred is None:
            out.append(emit())
            continue
        start = e.b.block
        then = e.fn.append_basic_block("atomic")
        join = e.fn.append_basic_block("atomic.end")
        e.b.cbranch(pred, then, join)
        e.b.position_at_end(then)
        old = emit()
        then_end = e.b.block
        e.b.branch(join)
        e.b.position_at_end(join)
        phi = e.b.phi(old.type)
        phi.add_incoming(old, then_end)
        phi.add_incoming(ir.Constant(old.type, None), start)  # masked-off lanes read 0
        out.append(phi)
    if layout is None and used:
        out = [_broadcast(e, out[0])]  # type: ignore[arg-type]
    if layout is not None and owner is not None and used:
        out = _share_with_copies(e, layout, out, owner)
    if dup:
        zero = sum(1 << b for b, basis in enumerate(layout.in_bases("register")) if not any(basis))  # type: ignore[union-attr]
        out = [r if r is not None else out[i & ~zero] for i, r in enumerate(out)]
    e.set(op.result, out)  # type: ignore[arg-type]


def _cmpxchg(e: Emitter, ptr: ir.Value, cmp: ir.Value, val: ir.Value, ordering: str, fail: str) -> ir.Value:
    """LLVM's cmpxchg takes integers: a float compares and swaps by its bits."""
    ty = cmp.type
    if not isinstance(ty, ir.IntType):
        it = ir.IntType(bytes_of(ty) * 8)
        cmp, val = e.b.bitcast(cmp, it), e.b.bitcast(val, it)
    pair = e.b.cmpxchg(ptr, cmp, val, ordering, fail)
    old = e.b.extract_value(pair, 0)
    return old if old.type == ty else e.b.bitcast(old, ty)


def _broadcast(e: Emitter, old: ir.Value) -> ir.Value:
    """Work-item 0's ``old`` in every lane, through the LDS scratch area."""
    e.scratch(8)
    addr = e.lds_address(e.scratch_offset)
    e.barrier()  # the scratch area may still be read by the op before
    first = e.in_entry("first-lane", lambda b: b.icmp_unsigned("==", e.special("tid"), ir.Constant(I32, 0)))
    then = e.fn.append_basic_block("atomic.share")
    join = e.fn.append_basic_block("atomic.share.end")
    e.b.cbranch(first, then, join)
    e.b.position_at_end(then)
    e.b.store(old, addr, align=bytes_of(old.type))
    e.b.branch(join)
    e.b.position_at_end(join)
    e.barrier()
    return e.b.load(addr, typ=old.type, align=bytes_of(old.type))


def _share_with_copies(e: Emitter, layout: LinearLayout, old: list[ir.Value | None],
                       owner: ir.Value) -> list[ir.Value | None]:
    """The owners' old values (``None`` for a duplicate register) in every lane that holds a
    copy of their elements: a copy holds element ``r`` in the same register ``r`` as its
    owner, the lane with the replicated lane and wave bits cleared."""
    replicated = dict(access.replicated_bits(layout))
    if "warp" not in replicated:
        keep = (e.target.wave_size - 1) & ~replicated["lane"]
        src = e.in_entry(f"owner-lane:{keep}", lambda b: b.and_(e.special("lane"), ir.Constant(I32, keep)))
        return [None if r is None else cross_lane.read_lane(e, r, src) for r in old]
    ty = next(r.type for r in old if r is not None)
    size = bytes_of(ty)
    flat = layout.flatten_outs()
    e.scratch(flat.total_out_size * size)
    thread = e.thread_coords(flat, 0)
    at = all_register_coords(flat)
    addrs: list[ir.Value | None] = []
    for i, r in enumerate(old):
        if r is None:
            addrs.append(None)
            continue
        idx = at[i][0]
        if isinstance(thread, int):
            addrs.append(e.lds_address(e.scratch_offset + (idx ^ thread) * size))
            continue
        slot = e.b.xor(thread, ir.Constant(I32, idx)) if idx else thread
        offset = e.b.add(e.b.mul(slot, ir.Constant(I32, size)), ir.Constant(I32, e.scratch_offset))
        addrs.append(e.lds_address(offset))
    e.barrier()  # the scratch area may still be read by the op before
    then = e.fn.append_basic_block("atomic.share")
    join = e.fn.append_basic_block("atomic.share.end")
    e.b.cbranch(owner, then, join)
    e.b.position_at_end(then)
    for r, addr in zip(old, addrs):
        if r is not None:
            e.b.store(r, addr, align=size)
    e.b.branch(join)
    e.b.position_at_end(join)
    e.barrier()
    return [None if r is None else e.b.load(addr, typ=ty, align=size) for r, addr in zip(old, addrs)]
