"""Software pipelining of the loads that feed ``tl.dot`` in a loop (``num_stages``).

A ``for`` loop whose body loads the operands of a ``dot`` from global memory waits for
those loads every iteration. With ``S = num_stages`` (the loop's ``tl.range(num_stages=)``,
else the kernel's), this pass issues them ``S - 1`` iterations ahead as asynchronous
copies (``async_load``: ``cp.async`` on NVIDIA) into a ring of ``S`` shared-memory
buffers, so that the copies of later iterations are in flight while this one computes::

    %A = local_alloc : memdesc<S x BMxBK>                 // one ring per pipelined load
    // prologue: iterations 0 .. S-2, each its own group, masked off past the end
    async_load %ptr(0), %A[0], mask(0) & (lb < ub); async_commit_group   ...
    for %iv ... iter_args(..., %ahead..., %read = 0, %write = S-1) {
      async_wait_group {pendings = S-2}                   // this iteration's group landed
      %a = local_load %A[%read]                           // replaces the load
      ... the body, the dot ...
      // the addresses of iteration iv + (S-1)*step, from the carried "ahead" state
      async_load %ptr(ahead), %A[%write], mask(ahead) & (iv + (S-1)*step < ub)
      async_commit_group
      yield ..., %ahead', %read + 1 mod S, %write + 1 mod S
    }
    async_wait_group {pendings = 0}

The slot written in iteration ``i`` is the one read in iteration ``i - 1``: every thread
finished reading it before this iteration's wait (a CTA barrier), and ``membar`` puts a
barrier before the copy where another reader may still be at it (an asynchronous wgmma
that ``dot-to-wgmma`` makes wait one iteration deep). Loads the copies skip because they
are past the end read nothing (a masked-off ``cp.async`` copies no byte).

What is pipelined is what ``dot_loop_plan.plan`` accepts: loads at the top level of the
innermost loop that only feed ``dot`` operands (directly or through one ``trans``), with
addresses computed from the induction variable, loop invariants and carried pointer
increments; the address chain is cloned for the iterations issued ahead.

That is the form of targets with asynchronous copies into shared memory
(``target.pipelined_loads == "async_copy"``). On those that also have TMA, a loop whose
dot operands come from tensor descriptors (``desc.load([m, k])``, as in Triton's tutorial
09) gets ``tma_ring.rewrite`` instead: the same ring, filled by TMA copies that complete on
one mbarrier per slot (see that module); its pointer loads, if any, stay unpipelined.

Targets whose loads go through registers (``"registers"``, the AMD chips: what Triton's
AMD stream pipeliner does for its default ``num_stages=2``) get
``register_prefetch.rewrite`` instead: the loads of iteration k + 1 are issued into
registers before the dot of iteration k and carried to the next iteration, which stores
them into its slot of a ring of two LDS buffers and reads the dot's operands back from
there; any ``S >= 2`` gives that one-iteration-ahead form (see that module).

Expects: the tile IR (before buffer and tile layouts), ``options.num_stages``.
Guarantees: the loads described above are replaced by ``local_load`` of a ring slot;
the rest of the loop is unchanged; loops inside warp-specialized partitions (the user
owns their pipelines), loops that already use asynchronous copies, barriers or buffers,
and anything else are left as they are.
Refuses: nothing (a loop it cannot pipeline runs unpipelined).
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation, Value
from ..types import int1, tile, token
from . import dce, register_prefetch, ring_pipeline, tma_ring
from .dot_loop_plan import Plan, innermost_loops, plan, slot_view
from .options import PassOptions


class _AsyncCopy(ring_pipeline.RingForm[ops.LoadOp]):
    """The ``cp.async`` form: one commit group per iteration, waited for with the groups
    of the ``S - 2`` later iterations still in flight."""

    def issue(self, b: Builder, p: Plan[ops.LoadOp], m: dict[int, Value], rings: list[Value], slot: Value,
              valid: Value) -> None:
        """The asynchronous copies of one iteration into ``slot``, masked by ``valid``."""
        for ld, ring in zip(p.loads, rings):
            t = ld.result.type
            buf = slot_view(b, ring, slot, t)
            mask = b.value(ops.SplatOp, [valid], tile(t.shape, int1))
            if ld.mask is not None:
                mask = b.value(ops.AndOp, [m.get(id(ld.mask), ld.mask), mask], mask.type)
            other = m.get(id(ld.other), ld.other) if ld.other is not None else None
            b.create(ops.AsyncLoadOp, [m.get(id(ld.ptr), ld.ptr), buf], [token],
                     {"cache": ld.cache, "eviction": ld.eviction}, optional={"mask": mask, "other": other})
        b.create(ops.AsyncCommitGroupOp, [], [token])

    def wait(self, b: Builder, read: Value, carried: list[Value], stages: int) -> None:
        b.create(ops.AsyncWaitGroupOp, [], [token], {"pendings": stages - 2})

    def after(self, b: Builder) -> None:
        # the copies issued for iterations past the end (masked off) are retired before the
        # ring's memory can be reused
        b.create(ops.AsyncWaitGroupOp, [], [token], {"pendings": 0})


def _pipeline(loop: ops.ForOp, stages: int, options: PassOptions) -> bool:
    """Rewrite ``loop`` in the target's form; whether it did."""
    target = options.target
    if target.pipelined_loads == "registers":
        p = plan(loop, ops.LoadOp)
        n = register_prefetch.slots(p, target.max_shared_bytes) if p is not None else 0
        if p is None or n == 0:
            return False
        register_prefetch.rewrite(p, n)
        return True
    # a loop that reads its operands both ways gets the TMA ring; its pointer loads stay
    # as they are (the ring's barriers and buffers put the loop out of ``plan``'s reach)
    d = plan(loop, ops.DescriptorLoadOp) if target.has.tma else None
    if d is not None:
        tma_ring.rewrite(d, stages)
        return True
    p = plan(loop, ops.LoadOp) if target.has.async_copy else None
    if p is None:
        return False
    ring_pipeline.rewrite(p, stages, _AsyncCopy())
    return True


def run(module: Operation, options: PassOptions) -> Operation:
    changed = False
    for func in module.funcs:
        for loop in innermost_loops(func):
            stages = loop.num_stages if loop.num_stages is not None else options.num_stages
            if stages >= 2:
                changed |= _pipeline(loop, stages, options)
    if changed:
        dce.run(module, options)
    return module
