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
from ..types import BarrierType, TensorDescType, int1, int32, narrow
from . import ring_pipeline
from .dot_loop_plan import Plan, const, slot_view


class Tma(ring_pipeline.RingForm[ops.DescriptorLoadOp]):
    """The TMA form: one mbarrier per slot (``setup``), waited on with a carried parity."""

    bars: Value

    def setup(self, b: Builder, stages: int) -> None:
        self.bars = b.value(ops.BarrierAllocOp, [], BarrierType(stages), count=1)

    def issue(self, b: Builder, p: Plan[ops.DescriptorLoadOp], m: dict[int, Value], rings: list[Value],
              slot: Value, valid: Value) -> None:
        """The TMA copies of one iteration into ``slot``, all completing on its mbarrier;
        none where ``valid`` is false."""
        bar = b.value(ops.BarrierViewOp, [self.bars, slot], BarrierType(0))
        nbytes = sum(narrow(ld.desc.type, TensorDescType).block_bytes for ld in p.loads)
        b.create(ops.BarrierExpectOp, [bar], [], {"bytes": nbytes}, optional={"pred": valid})
        for ld, ring in zip(p.loads, rings):
            t = ld.result.type
            buf = slot_view(b, ring, slot, t)
            coords = [m.get(id(c), c) for c in ld.coords]
            b.create(ops.TmaLoadOp, [m.get(id(ld.desc), ld.desc), buf, bar, *coords], [], optional={"pred": valid})

    def carried(self, b: Builder) -> list[Value]:
        return [const(b, 0)]  # the wait parity

    def wait(self, b: Builder, read: Value, carried: list[Value], stages: int) -> None:
        bar = b.value(ops.BarrierViewOp, [self.bars, read], BarrierType(0))
        b.create(ops.BarrierWaitOp, [bar, carried[0]], [])

    def next_carried(self, b: Builder, read: Value, carried: list[Value], stages: int) -> list[Value]:
        """The wait parity of the next iteration: flipped when the ring wraps around."""
        last = b.value(ops.CmpOp, [read, const(b, stages - 1)], int1, predicate="eq")
        flipped = b.value(ops.XorOp, [carried[0], const(b, 1)], int32)
        return [b.value(ops.SelectOp, [last, flipped, carried[0]], int32)]


def rewrite(p: Plan[ops.DescriptorLoadOp], stages: int) -> None:
    """The TMA ring (the module doc's picture)."""
    ring_pipeline.rewrite(p, stages, Tma())
