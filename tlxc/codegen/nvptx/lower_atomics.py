"""Atomics through global pointers: one ``atom.global`` per element, predicated by the
mask. An old value nobody reads needs no ``red``: ptxas makes such an ``atom`` a
fire-and-forget ``REDG`` itself, and the PTX keeps Triton's spelling. A float
add over consecutive, aligned elements under one mask takes one vector instruction per
16 bytes (``atom.global.add.noftz.v8.f16``, ``.v4.f32``: sm_90 and later, as Triton), each
element still its own atomic.

Each element is updated once: of the threads (and registers) a layout gives the same
element, only the owner performs the atomic, as for stores (Triton does the same). The old
value then exists in the owner only, and reaches the copies as Triton's semantics ask:

* a scalar atomic is done by thread 0 of the scope, which hands its old value to every
  thread through the scope's scratch area;
* a tile whose copies lie in lanes of the owner's warp only reads the owner lane's
  register with ``shfl.sync.idx`` (lane ``lane & ~replicated lane bits``);
* a tile with copies in other warps goes through the scratch area: each owner writes its
  old values at their elements' flat indices, and after the scope's barrier every thread
  reads the elements it holds.

``atomic_max`` / ``atomic_min`` on floats use the integer ordering of IEEE bits, as
Triton does: a non-negative value compares as a signed integer (max with ``max.s``), a
negative one as an unsigned integer in reverse (max with ``min.u``).
"""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import all_register_coords, thread_terms
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from .. import access, target_ops
from .emitter import Emitter, lowers
from .lower_memory import _and, _first_thread, owner_predicate
from .lower_reduce import shuffle
from .ptx import Reg


def _rmw_type(kind: str, t: DType) -> str:
    """The ``.op.type`` of an integer, bitwise or exchange ``atom``, or a float add."""
    bits = t.bits
    if kind == "add":
        if t.kind == Kind.FLOAT:
            return f"add.noftz.{t.ir_name}" if bits == 16 else f"add.f{bits}"
        return f"add.u{bits}"  # two's complement: one add for signed and unsigned
    if kind in ("and", "or", "xor"):
        return f"{kind}.b{bits}"
    if kind == "xchg":
        return f"exch.b{bits}"
    sign = "s" if t.kind == Kind.INT else "u"
    return f"{kind}.{sign}{bits}"


@lowers(ops.AtomicRMWOp, ops.AtomicCASOp)
def atomic(e: Emitter, op: Operation) -> None:
    elem: DType = op.ptr.type.scalar.pointee
    cas = isinstance(op, ops.AtomicCASOp)
    ptrs = e.get(op.ptr).regs
    vals = e.get(op.val).regs
    cmps = e.get(op.cmp).regs if cas else None
    mask = e.get(op.mask).regs if not cas and op.mask is not None else None
    used = bool(op.result.uses)
    layout = op.ptr.type.layout if op.ptr.type.shape else None
    if layout is not None:
        owner = owner_predicate(e, layout)
        if used and owner is not None and e.divergent_depth:
            # the copies' shuffle and barrier need every thread of the scope, and under a
            # branch on tlx.thread_id the owner may not be among the threads that get here
            raise target_ops.replicated_atomic(op, e.target.arch)
        dup = access.duplicate_registers(layout)
    else:
        owner = None if e.divergent_depth else _first_thread(e)
        dup = set()
    # the qualifiers in Triton's order (ptxas takes any; users' checks of Triton's PTX
    # look for "atom.global.gpu.acq_rel" and, for a compare-and-swap, "atom.global.acq_rel")
    qual = f".global.{op.sem}.{op.scope}" if cas else f".global.{op.scope}.{op.sem}"
    kind = "cas" if cas else op.kind
    bits = elem.bits
    vec = _float_add_vector(e, op, layout, kind, elem)
    out: list[Reg | None] = []
    for i, addr in enumerate(ptrs):
        if i in dup:
            out.append(None)
            continue
        if vec > 1 and i % vec:
            continue  # done by the vector instruction of its group
        pred = _and(e, owner, mask[i] if mask is not None else None)
        d = e.fn.reg(vals[i].cls)
        if vec > 1:
            ds = [d] + [e.fn.reg(vals[i].cls) for _ in range(vec - 1)]
            form = f"add.noftz.v{vec}.{elem.ir_name}" if bits == 16 else f"add.v{vec}.f32"
            src = "{" + ", ".join(str(r) for r in vals[i:i + vec]) + "}"
            e.fn.emit(f"atom{qual}.{form} {{{', '.join(map(str, ds))}}}, [{addr}], {src}", pred)
            out.extend(ds)
            continue
        if cas:
            assert cmps is not None
            e.fn.emit(f"atom{qual}.cas.b{bits} {d}, [{addr}], {cmps[i]}, {vals[i]}", pred)
        elif kind in ("max", "min") and elem.kind == Kind.FLOAT:
            _float_max_min(e, kind, qual, bits, addr, vals[i], d, pred)
        else:
            e.fn.emit(f"atom{qual}.{_rmw_type(kind, elem)} {d}, [{addr}], {vals[i]}", pred)
        out.append(d)
    if layout is None and owner is not None and used:
        out = [_broadcast(e, out[0], owner)]  # type: ignore[arg-type]
    if layout is not None and owner is not None and used:
        out = _share_with_copies(e, layout, out, owner)
    if dup:
        # a register that repeats another's element takes the owner register's old value
        zero = sum(1 << b for b, basis in enumerate(layout.in_bases("register")) if not any(basis))  # type: ignore[union-attr]
        out = [r if r is not None else out[i & ~zero] for i, r in enumerate(out)]
    e.set(op.result, out)  # type: ignore[arg-type]


def _float_add_vector(e: Emitter, op: Operation, layout: LinearLayout | None, kind: str, elem: DType) -> int:
    """How many consecutive elements one vector float add takes (1: scalar atomics): on a
    target with vector atomics, the registers, alignment and mask constancy a vector store
    would need, at most 16 bytes."""
    from .target_info import CAPABILITIES  # (target_info imports this module)

    if layout is None or kind != "add" or elem.kind != Kind.FLOAT or elem.bits not in (16, 32) \
            or not CAPABILITIES[e.target.arch].vector_atomics:
        return 1
    return access.vector_width(e.axis, op, elem.bits // 8, 16)


def _float_max_min(e: Emitter, kind: str, qual: str, bits: int, addr: Reg, val: Reg, d: Reg,
                   pred: Reg | None) -> None:
    b = e.fn.reg(f"b{bits}")
    e.fn.emit(f"mov.b{bits} {b}, {val}")
    pos, neg = e.fn.reg("pred"), e.fn.reg("pred")
    e.fn.emit(f"setp.ge.s{bits} {pos}, {b}, 0")
    e.fn.emit(f"setp.lt.s{bits} {neg}, {b}, 0")
    pos, neg = _and(e, pos, pred), _and(e, neg, pred)  # type: ignore[assignment]
    other = "min" if kind == "max" else "max"
    old = e.fn.reg(f"b{bits}")
    e.fn.emit(f"mov.b{bits} {old}, 0")
    e.fn.emit(f"atom{qual}.{kind}.s{bits} {old}, [{addr}], {b}", pos)
    e.fn.emit(f"atom{qual}.{other}.u{bits} {old}, [{addr}], {b}", neg)
    e.fn.emit(f"mov.b{bits} {d}, {old}")


def _broadcast(e: Emitter, r: Reg, owner: Reg) -> Reg:
    """Thread 0's ``r`` in every thread of the scope, through the scratch area."""
    size = 8 if r.cls in ("b64", "f64") else 4
    e.scratch(size)
    base = e.smem_base()
    cls = r.cls
    e.barrier()  # the scratch area may still be read by the op before
    e.fn.emit(f"st.shared.{cls} [{base}], {r}", owner)
    e.barrier()
    d = e.fn.reg(cls)
    e.fn.emit(f"ld.shared.{cls} {d}, [{base}]")
    return d


def _share_with_copies(e: Emitter, layout: LinearLayout, old: list[Reg | None], owner: Reg) -> list[Reg | None]:
    """The owners' old values (``None`` for a duplicate register) in every thread that holds
    a copy of their elements: a copy holds element ``r`` in the same register ``r`` as its
    owner, the thread with the replicated lane and warp bits cleared."""
    replicated = dict(access.replicated_bits(layout))
    if "warp" not in replicated:
        lanes = e.target.warp_size - 1
        src = e.special_value(f"owner-lane:{replicated['lane']}",
                              f"and.b32 {{r}}, {e.special('lane')}, {lanes & ~replicated['lane']};")
        return [None if r is None else shuffle(e, r, src, "idx") for r in old]
    return _through_scratch(e, layout, old, owner)


def _through_scratch(e: Emitter, layout: LinearLayout, old: list[Reg | None], owner: Reg) -> list[Reg | None]:
    """Each owner writes its old values at their elements' flat indices in the scope's
    scratch area; every thread then reads the elements it holds (one slot per element of
    the tile, ``numel * element bytes``)."""
    cls = next(r.cls for r in old if r is not None)
    size = {"b64": 8, "f64": 8, "b16": 2}.get(cls, 4)
    flat = layout.flatten_outs()
    e.scratch(flat.total_out_size * size)
    base = e.smem_base()
    thread = e.thread_coords(flat, 0)
    thread_bits = 0
    for _, _, c in thread_terms(flat, 0):
        thread_bits |= c
    at = all_register_coords(flat)
    addrs: list[str | None] = []
    for i, r in enumerate(old):
        if r is None:
            addrs.append(None)
            continue
        idx = at[i][0]
        if isinstance(thread, int):
            addrs.append(f"[{base}+{(idx ^ thread) * size}]")
            continue
        if idx & thread_bits:  # the register's element bits meet the thread's: XOR, not add
            x, a = e.fn.reg("b32"), e.fn.reg("b32")
            e.fn.emit(f"xor.b32 {x}, {thread}, {idx}")
            e.fn.emit(f"mad.lo.u32 {a}, {x}, {size}, {base}")
            addrs.append(f"[{a}]")
            continue
        key = f"atomic-slot:{thread}:{size}"
        a = e.special_value(key, f"mad.lo.u32 {{r}}, {thread}, {size}, {base};")
        addrs.append(f"[{a}+{idx * size}]" if idx else f"[{a}]")
    e.barrier()  # the scratch area may still be read by the op before
    for r, addr in zip(old, addrs):
        if r is not None:
            e.fn.emit(f"st.shared.{cls} {addr}, {r}", owner)
    e.barrier()
    out: list[Reg | None] = []
    for r, addr in zip(old, addrs):
        if r is None:
            out.append(None)
            continue
        d = e.fn.reg(cls)
        e.fn.emit(f"ld.shared.{cls} {d}, {addr}")
        out.append(d)
    return out
