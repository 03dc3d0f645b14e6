"""The TMA form of ``software-pipeline``: descriptor loads (``desc.load([m, k])``) that feed
``tl.dot`` in a loop, issued ``S - 1`` iterations ahead (``S = num_stages``) as TMA copies
into a ring of ``S`` shared-memory buffers, one mbarrier per slot::

    %A = local_alloc : memdesc<S x BMxBK>                 // one ring per pipelined load
    %bars = barrier_alloc : mbarrier<S> {count = 1}        // slot s's copies complete on bar s
    // prologue: iterations 0 .. S-2 into slots 0 .. S-2, each only if it exists
    barrier_expect %bars[s], pred=(lb + s*step < ub) {bytes = <all loads' blocks>}
    tma_load %desc, %A[s], %bars[s], coords(s)..., pred=(lb + s*step < ub)   ...
    for %iv ... iter_args(..., %ahead..., %read = 0, %phase = 0, %write = S-1) {
      barrier_wait %bars[%read], %phase                   // this iteration's blocks landed
      %a = local_load %A[%read]                           // replaces the descriptor load
      ... the body, the dot ...
      // iteration iv + (S-1)*step into the slot iteration iv - step read
      barrier_expect %bars[%write], pred=(iv + (S-1)*step < ub) {bytes = ...}
      tma_load %desc, %A[%write], %bars[%write], coords(ahead)..., pred=(iv + (S-1)*step < ub)
      yield ..., %ahead', next_slot(%read), %phase ^ (%read == S-1), next_slot(%write)
    }

Iteration ``i`` reads slot ``i mod S`` and waits for phase parity ``(i div S) mod 2`` of its
mbarrier: that barrier completes one phase per copy into the slot, and the copy for
iteration ``i`` is its ``(i div S)``-th. A copy for an iteration past the end is not issued
at all (its expect and load are predicated off), so no barrier is waited on for it and
every issued copy has completed when the loop ends: loops of 0 iterations issue nothing,
and the ring and barriers can be reused after the loop (the next trip of an outer loop,
in a persistent kernel, allocates and initializes them again). The block a copy reads
beyond the tensor's bounds is zero-filled by TMA, as ``descriptor_load`` says.

Synchronization the code generator and ``membar`` add: ``barrier_alloc`` initializes the
barriers once before the loop (init, fence, CTA barrier); ``barrier_expect`` lowers with a
CTA barrier before its one-thread arrive, so the copy into slot ``(i - 1) mod S`` starts
after every thread has finished iteration ``i - 1``'s reads of that slot (the
``local_load``, or the wgmma that ``dot-to-wgmma`` keeps in flight one iteration deep and
retires with the wait after this iteration's wgmma) and after every thread's wait of this
iteration -- which also keeps a thread from ever waiting on a barrier two phases ahead.
That CTA barrier is not predicated with the copy: the last iteration's, whose copy is off,
still holds every thread until all are past their last wait, so an outer loop's next
``barrier_alloc`` cannot re-initialize a barrier that a slow warp is still polling.
The copy is an async-proxy write; the only reads of the slot are wgmma's (async proxy
too) or ``local_load``s, before which ``membar`` puts its proxy fence.

Expects: a ``Plan`` of ``descriptor_load``s (``dot_loop_plan.plan``) on a target with TMA.
Guarantees: the planned loads are replaced by ``local_load`` of a ring slot; the rest of
the loop is unchanged.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Value
from ..types import BarrierType, MemDescType, TensorDescType, int1, int32, narrow
from .dot_loop_plan import Cloner, Plan, carry_more, const, elem, yield_more
from .ring_slots import next_slot


def _issue(b: Builder, p: Plan[ops.DescriptorLoadOp], m: dict[int, Value], rings: list[Value], bars: Value,
           slot: Value, valid: Value) -> None:
    """The TMA copies of one iteration into ``slot``, all completing on its mbarrier; none
    where ``valid`` is false."""
    bar = b.value(ops.BarrierViewOp, [bars, slot], BarrierType(0))
    nbytes = sum(narrow(ld.desc.type, TensorDescType).block_bytes for ld in p.loads)
    b.create(ops.BarrierExpectOp, [bar], [], {"bytes": nbytes}, optional={"pred": valid})
    for ld, ring in zip(p.loads, rings):
        t = ld.result.type
        buf = b.value(ops.LocalViewOp, [ring, slot], MemDescType(t.shape, elem(t), 0))
        coords = [m.get(id(c), c) for c in ld.coords]
        b.create(ops.TmaLoadOp, [m.get(id(ld.desc), ld.desc), buf, bar, *coords], [], optional={"pred": valid})


def _next_phase(b: Builder, slot: Value, phase: Value, n: int) -> Value:
    """The wait parity of the iteration after the one that read ``slot`` with ``phase``:
    flipped when the ring wraps around."""
    last = b.value(ops.CmpOp, [slot, const(b, n - 1)], int1, predicate="eq")
    flipped = b.value(ops.XorOp, [phase, const(b, 1)], int32)
    return b.value(ops.SelectOp, [last, flipped, phase], int32)


def rewrite(p: Plan[ops.DescriptorLoadOp], stages: int) -> None:
    """The TMA ring (the module doc's picture)."""
    loop = p.loop
    cl = Cloner(p)
    loc = loop.loc
    lb, ub = loop.lb, loop.ub
    with Builder(None, loc).before(loop) as b:
        rings = [b.value(ops.LocalAllocOp, [], MemDescType(ld.result.type.shape, elem(ld.result.type), stages))
                 for ld in p.loads]
        bars = b.value(ops.BarrierAllocOp, [], BarrierType(stages), count=1)
        state = [loop.inits[j] for j in p.carried]
        for s in range(stages - 1):
            iv = lb if s == 0 else b.value(ops.AddOp, [lb, const(b, s * p.step, lb.type)], lb.type)
            valid = b.value(ops.CmpOp, [iv, ub], int1, predicate="lt")
            m = cl.run(b, iv, state)
            _issue(b, p, m, rings, bars, const(b, s), valid)
            state = cl.next_state(m)
        new, extra = carry_more(p, cl, b, state + [const(b, 0), const(b, 0), const(b, stages - 1)])
    nb = new.body
    ahead, (read, phase, write) = extra[:-3], extra[-3:]
    with Builder(None, loc).before(nb.ops[0]) as b:
        bar = b.value(ops.BarrierViewOp, [bars, read], BarrierType(0))
        b.create(ops.BarrierWaitOp, [bar, phase], [])
        for ld, ring in zip(p.loads, rings):
            t = ld.result.type
            view = b.value(ops.LocalViewOp, [ring, read], MemDescType(t.shape, elem(t), 0))
            ld.result.replace_all_uses_with(b.value(ops.LocalLoadOp, [view], t))
    with Builder(None, loc).before(nb.ops[-1]) as b:
        iv = nb.args[0]
        iv_ahead = b.value(ops.AddOp, [iv, const(b, (stages - 1) * p.step, iv.type)], iv.type)
        valid = b.value(ops.CmpOp, [iv_ahead, ub], int1, predicate="lt")
        m = cl.run(b, iv_ahead, ahead)
        _issue(b, p, m, rings, bars, write, valid)
        carried_out = cl.next_state(m) + [next_slot(b, read, stages), _next_phase(b, read, phase, stages),
                                          next_slot(b, write, stages)]
    yield_more(new, carried_out)
    for ld in p.loads:
        ld.erase()
