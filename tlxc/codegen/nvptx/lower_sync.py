"""mbarriers, named barriers, fences and per-thread asynchronous copies (``cp.async``)
on NVIDIA (PTX ISA: "Parallel Synchronization and Communication Instructions: mbarrier",
"bar / barrier", "membar / fence", "Data Movement: cp.async").

* ``barrier_alloc``: thread 0 runs ``mbarrier.init.shared::cta.b64`` for each barrier and
  ``fence.mbarrier_init.release.cluster``; a ``bar.sync 0`` makes the initialized
  barriers visible before any thread uses them. An mbarrier value is the ``.b32``
  shared address of its 8 bytes; ``barrier_view`` adds ``8 x index``.
* ``barrier_expect`` / ``barrier_arrive`` (normal barriers): ``bar.sync 0`` (every
  thread got here: "the CTA arrives"), then thread 0 arrives -- with
  ``.expect_tx`` and the byte count for ``barrier_expect``. A warp barrier
  (``alloc_warp_barrier``) counts threads: every thread arrives, no ``bar.sync``.
* ``barrier_wait``: every thread spins on ``mbarrier.try_wait.parity`` (the instruction
  itself suspends for a while before it reports "not yet").
* ``named_barrier_wait`` / ``_arrive``: ``bar.sync id, threads`` / ``bar.arrive id,
  threads``; barrier 0 with every thread is the compiler's own ``bar.sync 0``
  (the hazard pass inserts it as ``named_barrier_wait {bar_id = 0}``).
* ``fence``: ``fence.proxy.async.shared::cta`` / ``fence.acq_rel.gpu`` / ``.sys``.
* ``async_load``: per-thread ``cp.async.{ca,cg}.shared.global [dst], [src], size,
  src_size`` with ``src_size = 0`` for masked-off elements (the hardware fills zeros);
  vectorized like global loads (contiguity and alignment from the axis analysis) and as
  far as the buffer keeps the vector contiguous; 16 bytes use ``.cg`` (L2 only, the only
  form of that size). Copies narrower than 4 bytes (cp.async's smallest) fall back to
  ``ld.global`` + ``st.shared`` -- synchronous, so the data is there at least as early.
* ``async_commit_group`` / ``async_wait_group``: ``cp.async.commit_group`` /
  ``cp.async.wait_group N`` and a ``bar.sync 0`` (the data other threads copied becomes
  visible). Tokens carry no data: one placeholder register.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation, Value
from ...ir.layout.linear import LinearLayout
from ...ir.passes.rewrite import constant_of
from ...ir.types import BarrierType, MemDescType
from .. import access
from . import instructions as insn
from .emitter import Emitter, lowers
from .lower_buffers import (
    accesses,
    index_address,
    mem_type,
    operands,
    pack,
    plan,
    shared_address,
    vec_suffix,
)
from .lower_memory import vector_width
from .ptx import Reg, reg_class

BARRIER_BYTES = 8
FENCES = {"async_shared": insn.fence_proxy_async("shared::cta"), "gpu": insn.fence_acq_rel("gpu"),
          "sys": insn.fence_acq_rel("sys"), "mbarrier_init": insn.fence_mbarrier_init()}


# -- helpers other lowerings may use ------------------------------------------------------------
def cta_barrier(e: Emitter) -> None:
    """Every thread of the CTA reaches this point (``bar.sync 0``)."""
    e.barrier()


def thread0(e: Emitter, pred: Reg | None = None) -> Reg:
    """A predicate: this is thread 0 (and ``pred`` holds)."""
    key = "sync.thread0"
    if key not in e._special:
        p = e.fn.reg("pred")
        e.prologue.append(f"\tsetp.eq.u32 {p}, {e.special('tid')}, 0;")
        e._special[key] = p
    p0 = e._special[key]
    if pred is None:
        return p0
    both = e.fn.reg("pred")
    e.fn.emit(f"and.pred {both}, {p0}, {pred}")
    return both


def _pred(e: Emitter, op: Operation) -> Reg | None:
    p = op.pred
    return e.get(p).regs[0] if p is not None else None


def token(e: Emitter) -> Reg:
    return e.special_value("sync.token", "mov.u32 {r}, 0;")


# -- mbarriers -----------------------------------------------------------------------------------
@lowers(ops.BarrierAllocOp)
def barrier_alloc(e: Emitter, op: Operation) -> None:
    t: BarrierType = op.result.type  # type: ignore[assignment]
    base = shared_address(e, e.smem.offset_of(op))
    p = thread0(e)
    for i in range(max(1, t.num)):
        e.fn.emit(insn.mbarrier_init(insn.offset_address(base, BARRIER_BYTES * i), op.count), p)
    e.fn.emit(insn.fence_mbarrier_init(), p)
    if e.clustered:  # peers may arrive on these barriers: the whole cluster sees them initialized
        e.fn.emit(insn.barrier_cluster_arrive(relaxed=True))
        e.fn.emit(insn.barrier_cluster_wait())
    else:
        cta_barrier(e)
    e.set(op.result, [base])


@lowers(ops.BarrierViewOp)
def barrier_view(e: Emitter, op: Operation) -> None:
    e.set(op.result, [index_address(e, e.get(op.bars).regs[0], op.index, BARRIER_BYTES)])


@lowers(ops.BarrierExpectOp)
def barrier_expect(e: Emitter, op: Operation) -> None:
    bar = e.get(op.bar).regs[0]
    cta_barrier(e)
    e.fn.emit(insn.mbarrier_arrive_expect_tx(bar, op.bytes), thread0(e, _pred(e, op)))


@lowers(ops.BarrierArriveOp)
def barrier_arrive(e: Emitter, op: Operation) -> None:
    t: BarrierType = op.operands[0].type  # type: ignore[assignment]
    bar = e.get(op.operands[0]).regs[0]
    count = op.attrs["count"]
    rank = op.operand("remote_rank")
    if rank is not None:  # the peer's copy of the barrier
        peer = e.fn.reg("b32")
        e.fn.emit(insn.mapa(peer, bar, e.get(rank).regs[0]))
        # released to the whole cluster only where the kernel stores into a peer's shared
        # memory (what the peer reads after its wait); otherwise at CTA scope, as TLX
        text = insn.mbarrier_arrive(peer, count, space="shared::cluster", cluster_release=e.remote_stores)
    else:
        text = insn.mbarrier_arrive(bar, count)
    if t.warp:
        e.fn.emit(text, _pred(e, op))
        return
    cta_barrier(e)
    e.fn.emit(text, thread0(e, _pred(e, op)))


def suspend_hint(op: Operation) -> int | None:
    """The ``mbarrier_try_wait_suspend_ns`` of the ``async_tasks`` region around ``op``
    (None outside one, or where the region gave none or 0: as in TLX, 0 turns the hint
    off), the ``suspendTimeHint`` of its waits."""
    o: Operation | None = op
    while o is not None and o.parent is not None:
        o = o.parent.parent_op
        if isinstance(o, ops.AsyncTasksOp):
            ns = o.mbarrier_try_wait_suspend_ns
            return ns if ns > 0 else None
    return None


@lowers(ops.BarrierWaitOp)
def barrier_wait(e: Emitter, op: Operation) -> None:
    bar = e.get(op.bar).regs[0]
    phase = e.fn.reg("b32")
    c = constant_of(op.phase)
    if c is not None:
        e.fn.emit(f"mov.u32 {phase}, {int(c) & 1}")
    else:
        e.fn.emit(f"and.b32 {phase}, {e.get(op.phase).regs[0]}, 1")
    pred = _pred(e, op)
    loop = e.fn.label("mbar_wait")
    done = e.fn.label("mbar_done") if pred is not None else None
    if done is not None:
        e.fn.emit(f"bra.uni {done}", pred, negate=True)
    e.fn.place(loop)
    ready = e.fn.reg("pred")
    e.fn.emit(insn.mbarrier_try_wait_parity(ready, bar, phase, suspend_hint(op)))
    e.fn.emit(f"bra {loop}", ready, negate=True)
    if done is not None:
        e.fn.place(done)


# -- named barriers and fences --------------------------------------------------------------------
def _named(e: Emitter, op: Operation, verb: str) -> None:
    bar_id, threads = op.bar_id, op.threads
    if verb == "sync" and bar_id == 0 and threads >= e.num_warps * 32:
        cta_barrier(e)
    else:
        e.fn.emit(insn.bar_sync(bar_id, threads) if verb == "sync" else insn.bar_arrive(bar_id, threads))


@lowers(ops.NamedBarrierWaitOp)
def named_barrier_wait(e: Emitter, op: Operation) -> None:
    _named(e, op, "sync")


@lowers(ops.NamedBarrierArriveOp)
def named_barrier_arrive(e: Emitter, op: Operation) -> None:
    _named(e, op, "arrive")


@lowers(ops.FenceOp)
def fence(e: Emitter, op: Operation) -> None:
    e.fn.emit(FENCES[op.scope])


# -- cp.async ----------------------------------------------------------------------------------------
def _zero_other(v: Value | None) -> bool:
    """Whether an ``other`` operand is absent or a constant zero (what cp.async fills)."""
    if v is None:
        return True
    src = getattr(v, "op", None)
    while isinstance(src, (ops.SplatOp, ops.BroadcastOp, ops.ConvertLayoutOp)):
        v = src.x
        src = getattr(v, "op", None)
    c = constant_of(v)
    return c is not None and float(c) == 0.0


def _copy_width(e: Emitter, op: Operation, access_vec: int, layout: LinearLayout, vector_bits: tuple[int, ...],
                nbytes: int) -> int:
    """Elements per copy: what the global side proves (``vector_width``, along the dim the
    pointers' layout vectorizes), what the buffer keeps contiguous, and only register bits
    that step that dim in order (the vector's first element then has the lowest address):
    the last dim of a canonical layout, dim 0 of a K-contiguous ``[K, N]`` tile's."""
    v = min(access_vec, vector_width(e, op, nbytes))
    along = layout.out_dims.index(f"dim{access.vector_dim(layout)}")
    bases = layout.in_bases("register")
    k = 0
    while (1 << (k + 1)) <= v:
        b = bases[vector_bits[k]]
        if b[along] != 1 << k or any(c for j, c in enumerate(b) if j != along):
            break
        k += 1
    v = 1 << k
    others = [b for i, b in enumerate(bases) if i not in vector_bits[:k]]
    for d in ("lane", "warp"):
        others += list(layout.in_bases(d))
    while v > 1 and any(b[along] & (v - 1) for b in others):
        v //= 2
    return v


@lowers(ops.AsyncLoadOp)
def async_load(e: Emitter, op: Operation) -> None:
    """``cp.async`` of the tile's vectors into the buffer. The op declares cp.async writes
    (``effects.write(..., "cp_async")``), which wgmma reads after the wait and a barrier
    with no proxy fence; where the copy is made of ``st.shared`` instead (no 4-byte vector
    proven, or a non-zero ``other`` stored where masked off), those generic-proxy stores
    are fenced here, before the barrier that publishes them."""
    ptr = op.ptr
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    layout: LinearLayout = ptr.type.layout
    nbytes = buf.element.bits // 8
    base = e.get(op.buf).regs[0]
    ptrs = e.get(ptr).regs
    mask = e.get(op.mask).regs if op.mask is not None else None
    # a non-zero `other` is stored by the thread itself where the mask is off (cp.async
    # itself can only fill zeros); the copy is then skipped there instead of zero-filling
    other = None if _zero_other(op.other) else e.get(op.other).regs
    access = plan(e, layout, buf)
    v = _copy_width(e, op, access.vec, layout, access.vector_bits, nbytes)
    if v * nbytes < 4:
        _sync_copy(e, op, base, buf, layout, ptrs, mask, other)
        e.fn.emit(insn.fence_proxy_async("shared::cta"))  # generic-proxy stores: see the docstring
        e.set(op.result, [token(e)])
        return
    if v < access.vec:
        access = plan(e, layout, buf, max_vec=v)
    size = v * nbytes
    guard = e.thread_owner(access.copies)
    cls, bits = reg_class(buf.element), buf.element.bits
    for addr, imm, group in accesses(e, base, access, nbytes):
        src = ptrs[group[0]]
        if mask is None:
            e.fn.emit(insn.cp_async(insn.offset_address(addr, imm), src, size), guard)
            continue
        if other is not None:
            on = mask[group[0]] if guard is None else _and_pred(e, guard, mask[group[0]])
            off = e.fn.reg("pred")
            e.fn.emit(f"not.pred {off}, {mask[group[0]]}")
            if guard is not None:
                e.fn.emit(f"and.pred {off}, {off}, {guard}")
            e.fn.emit(insn.cp_async(insn.offset_address(addr, imm), src, size), on)
            units = pack(e, cls, bits, [other[r] for r in group])
            st = "u8" if bits == 8 else mem_type(cls, buf.element, len(group))
            e.fn.emit(f"st.shared{vec_suffix(len(units))}.{st} [{addr}+{imm}], {operands(units)}", off)
            continue
        n = e.fn.reg("b32")
        e.fn.emit(f"selp.u32 {n}, {size}, 0, {mask[group[0]]}")
        e.fn.emit(insn.cp_async(insn.offset_address(addr, imm), src, size, src_size=n), guard)
    if other is not None and mask is not None:
        e.fn.emit(insn.fence_proxy_async("shared::cta"))  # generic-proxy stores: see the docstring
    e.set(op.result, [token(e)])


def _and_pred(e: Emitter, a: Reg, b: Reg) -> Reg:
    p = e.fn.reg("pred")
    e.fn.emit(f"and.pred {p}, {a}, {b}")
    return p


def _sync_copy(e: Emitter, op: Operation, base: Reg, buf: MemDescType, layout: LinearLayout, ptrs: list[Reg],
               mask: list[Reg] | None, other: list[Reg] | None = None) -> None:
    """``ld.global`` (``other``, or zero, where masked) then ``st.shared``, one
    shared-memory vector at a time (few values live at once)."""
    cls, bits = reg_class(buf.element), buf.element.bits
    ty = "u8" if bits == 8 else f"b{bits}"
    access = plan(e, layout, buf)
    guard = e.thread_owner(access.copies)
    for addr, imm, group in accesses(e, base, access, bits // 8):
        values = []
        for r in group:
            v = e.fn.reg(cls)
            if mask is not None:
                fill = other[r] if other is not None else 0
                e.fn.emit(f"mov.b{max(16, bits)} {v}, {fill}")
            e.fn.emit(f"ld.global.{ty} {v}, [{ptrs[r]}]", mask[r] if mask is not None else None)
            values.append(v)
        units = pack(e, cls, bits, values)
        st = "u8" if bits == 8 else mem_type(cls, buf.element, len(group))
        e.fn.emit(f"st.shared{vec_suffix(len(units))}.{st} [{addr}+{imm}], {operands(units)}", guard)


@lowers(ops.AsyncCommitGroupOp)
def async_commit_group(e: Emitter, op: Operation) -> None:
    e.fn.emit(insn.cp_async_commit_group())
    e.set(op.result, [token(e)])


@lowers(ops.AsyncWaitGroupOp)
def async_wait_group(e: Emitter, op: Operation) -> None:
    e.fn.emit(insn.cp_async_wait_group(op.pendings))
    cta_barrier(e)
    e.set(op.result, [token(e)])

