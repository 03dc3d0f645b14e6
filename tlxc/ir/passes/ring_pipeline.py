"""The skeleton that the shared-memory ring forms of ``software-pipeline`` share: the
``cp.async`` form (``software_pipeline``) and the TMA form (``tma_ring``).

For a planned loop (``dot_loop_plan.plan``) and ``S`` stages, ``rewrite`` builds::

    rings = local_alloc : memdesc<S x shape>            // one ring per planned load
    <form.setup>                                         // the TMA form's mbarriers
    // prologue: iterations 0 .. S-2 into slots 0 .. S-2, each valid only if it exists
    <form.issue(slot s, valid = lb + s*step < ub)>       ...
    for %iv ... iter_args(..., %ahead..., %read = 0, <form's carried values>, %write = S-1) {
      <form.wait(%read)>                                 // this iteration's copies landed
      %a = local_load rings[%read]                       // replaces the planned load
      ... the body, the dot ...
      <form.issue(slot %write, valid = iv + (S-1)*step < ub)>   // iteration iv + S - 1
      ... what follows the dots: an epilogue if (``_issue_point``) ...
      yield ..., %ahead', next_slot(%read), <form.next_carried>, next_slot(%write)
    }
    <form.after>                                         // the cp.async form's final wait

and the form supplies what differs: how one iteration's copies are issued into a slot,
how the loop waits for them, the values it carries besides the slot counters (the TMA
form's wait parity) and what comes after the loop. The addresses of the iterations issued
ahead are the plan's ``Cloner``'s; the original loads are erased.
"""

from __future__ import annotations

from typing import Generic

from .. import ops
from ..builder import Builder
from ..core import Block, Operation, Value
from ..types import int1
from .dot_loop_plan import Cloner, L, Plan, carry_more, const, next_op, rings, slot_view, yield_more
from .rewrite import top_level
from .ring_slots import next_slot


class RingForm(Generic[L]):
    """What one ring form adds to ``rewrite``'s skeleton (see the module doc)."""

    def setup(self, b: Builder, stages: int) -> None:
        """Before the loop, after the rings are allocated."""

    def issue(self, b: Builder, p: Plan[L], m: dict[int, Value], rings: list[Value], slot: Value,
              valid: Value) -> None:
        """The copies of one iteration (addresses from the clone map ``m``) into ``slot``;
        none, or masked off, where ``valid`` is false."""
        raise NotImplementedError

    def carried(self, b: Builder) -> list[Value]:
        """The initial values of what the form carries besides the slot counters."""
        return []

    def wait(self, b: Builder, read: Value, carried: list[Value], stages: int) -> None:
        """At the top of the body: until the copies into slot ``read`` have landed."""
        raise NotImplementedError

    def next_carried(self, b: Builder, read: Value, carried: list[Value], stages: int) -> list[Value]:
        """The carried values of the next iteration."""
        return []

    def after(self, b: Builder) -> None:
        """Right after the loop."""


def rewrite(p: Plan[L], stages: int, form: RingForm[L]) -> ops.ForOp:
    """Pipeline ``p.loop`` into rings of ``stages`` buffers in ``form`` (the module doc's
    picture); the new loop."""
    loop = p.loop
    cl = Cloner(p)
    loc = loop.loc
    lb, ub = loop.lb, loop.ub
    with Builder(None, loc).before(loop) as b:
        ring_bufs = rings(b, p, stages)
        form.setup(b, stages)
        state = [loop.inits[j] for j in p.carried]
        for s in range(stages - 1):
            iv = lb if s == 0 else b.value(ops.AddOp, [lb, const(b, s * p.step, lb.type)], lb.type)
            valid = b.value(ops.CmpOp, [iv, ub], int1, predicate="lt")
            m = cl.run(b, iv, state)
            form.issue(b, p, m, ring_bufs, const(b, s), valid)
            state = cl.next_state(m)
        new, extra = carry_more(p, cl, b, state + [const(b, 0)] + form.carried(b) + [const(b, stages - 1)])
    nb = new.body
    ahead, read, own, write = extra[:len(state)], extra[len(state)], extra[len(state) + 1:-1], extra[-1]
    loaded: list[Value] = []
    with Builder(None, loc).before(nb.ops[0]) as b:
        form.wait(b, read, own, stages)
        for ld, ring in zip(p.loads, ring_bufs):
            t = ld.result.type
            view = slot_view(b, ring, read, t)
            loaded.append(b.value(ops.LocalLoadOp, [view], t))
            ld.result.replace_all_uses_with(loaded[-1])
    at = _issue_point(nb, loaded)
    with Builder(None, loc).before(at) as b:
        iv = nb.args[0]
        iv_ahead = b.value(ops.AddOp, [iv, const(b, (stages - 1) * p.step, iv.type)], iv.type)
        valid = b.value(ops.CmpOp, [iv_ahead, ub], int1, predicate="lt")
        first = nb.ops.index(at)
        m = cl.run(b, iv_ahead, ahead)
        cloned = nb.ops[first:nb.ops.index(at)]
        form.issue(b, p, m, ring_bufs, write, valid)
        _sink_past_issue(nb, cloned, nb.ops[first + len(cloned):nb.ops.index(at)])
        carried_out = (cl.next_state(m) + [next_slot(b, read, stages)] + form.next_carried(b, read, own, stages)
                       + [next_slot(b, write, stages)])
    yield_more(new, carried_out)
    for ld in p.loads:
        ld.erase()
    with Builder(None, loc).before(next_op(new)) as b:
        form.after(b)
    return new


def _issue_point(block: Block, loaded: list[Value]) -> Operation:
    """Where the copies of the iteration ``stages - 1`` ahead go: before the first op with
    regions that follows the dots reading the ring (a flattened persistent loop's epilogue
    ``if``, which waits for the accumulator and stores the tile), else at the end of the
    body. Issued after the epilogue, the copies and the address arithmetic before them
    waited behind the whole epilogue branch each iteration, and ptxas could not move them
    above it (tutorial 09's ``matmul_persistent`` at 0.85x Triton, which issues them
    first)."""
    readers = [u for v in loaded for u in v.uses]
    readers += [u for t in readers if isinstance(t, ops.TransOp) for u in t.result.uses]
    last = max(block.ops.index(op) for op in (top_level(u, block) for u in readers) if op is not None)
    return next((op for op in block.ops[last + 1:-1] if op.regions), block.ops[-1])


def _sink_past_issue(block: Block, cloned: list[Operation], issued: list[Operation]) -> None:
    """Move the cloned address ops that the copies do not read (the carried pointers'
    increments for the next iteration) after the copies, in their order. A pointer's
    old value then dies at its copy before its successor is defined, so the register
    allocator can reuse its register pair; computed first, the increments overlapped the
    old values and ptxas shuffled 64-bit address halves between registers before the
    copies (the 128x256x64 matmul loop: 105 SASS instructions, 96 after; no change in
    speed on the H200 was measurable)."""
    needed: set[int] = set()
    for op in issued:
        for o in op.walk():
            needed.update(id(v) for v in o.operands)
    late = []
    for op in reversed(cloned):
        if any(id(r) in needed for r in op.results):
            for o in op.walk():
                needed.update(id(v) for v in o.operands)
        else:
            late.append(op)
    if not late:
        return
    for op in late:
        block.remove(op)
    at = block.ops.index(issued[-1]) + 1
    for op in reversed(late):
        block.insert(at, op)
        at += 1
