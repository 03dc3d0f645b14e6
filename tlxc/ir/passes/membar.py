"""Hazard barriers and proxy fences for shared-memory buffers (tlx-semantics §5.9 duties
1 and 2): the synchronization users rely on but never write.

Expects: buffer layouts and the shared-memory plan in the IR (``smem_alloc.run``), which says which
bytes each buffer value may touch -- so allocations that share bytes through ``reuse=``
or liveness are seen to conflict.
Guarantees:

* a CTA barrier (``named_barrier_wait {bar_id = 0, threads = <all>}``: barrier 0 is the
  compiler's own, the frontend refuses it to users) before an op that reads bytes a
  previous op wrote, or writes bytes a previous op read or wrote, with no CTA barrier in
  between -- other threads did those accesses. Which ops read and write which buffer,
  and through which proxy, is what their classes declare (``MEMORY``, see
  ``tlxc.ir.effects``): writes are ``local_store``, ``async_load`` (at issue: the copy
  lands while others may still read), ``tma_load``; reads ``local_load``, the buffer
  operands of ``async_dot`` and ``tma_store``;
* a ``fence {scope = "async_shared"}`` before an op of the async proxy (``async_dot``,
  ``tma_store`` reading, ``tma_load`` writing) that touches bytes an ordinary
  (generic-proxy) access -- ``local_store``, ``local_load`` -- touched since the last
  such fence; the fence comes before the barrier, as CUTLASS orders them. An
  ``async_load`` (``cp.async``) needs none: its copy is done at the wait, and the barrier
  after the wait orders it for wgmma as CUTLASS's and Triton's pipelines rely on.

Existing synchronization counts, as the ops declare it (``SYNC``): ``barrier_alloc``,
``barrier_expect``, normal ``barrier_arrive`` and ``async_wait_group`` lower with a
``bar.sync 0`` (so do named-barrier waits of every thread of the CTA);
``fence {scope = "async_shared"}`` orders the proxies. Warp-barrier arrives and
``barrier_wait`` synchronize nothing here (data a TMA load delivers is ordered by its
mbarrier, so no barrier is needed after the wait). A barrier never follows another
without an access in between: the pending accesses are empty after one.

The analysis is conservative over structured control flow: ``if`` branches merge by
union, loops iterate to a fixed point (accesses of one iteration meet the next), and a
buffer indexed at run time counts as the whole allocation -- except that an access
through ``local_view(ring, slot)`` whose ``slot`` is a ring counter of the enclosing
``for`` loop (``ring_slots``: every iteration's differs from the one before) is kept with
that key and an age: at the back edge this iteration's accesses become "the previous
slot", which an access through the same counter in the next iteration does not touch,
and the previous iteration's become the whole allocation. So a double-buffered loop
(``software-pipeline``'s register form: store slot k, barrier, read slot k) needs one
barrier per iteration: the store of slot k does not wait for the reads of slot k - 1.

Warp specialization (``async_tasks``): every warp meets where the region starts and
ends (``ir/ops/tasks.py``), so each partition starts with no pending hazard; inside a
partition the barrier inserted is ``named_barrier_wait {bar_id = 0, threads = <the
partition's threads>}`` -- the compiler's barrier over the warps of the enclosing
partition, which the code generator maps to that partition's hardware barrier. Accesses of
different partitions are ordered by the user's mbarriers and named barriers, never here.
Refuses: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ops
from ..builder import Builder
from ..core import Block, Operation, Value
from . import ring_slots, smem_alloc
from .options import PassOptions

# [lo, hi) bytes; the ring counter and the allocation the access went through (their ids,
# 0 for none) with its age (0: this iteration's slot, 1: the previous iteration's)
Interval = tuple[int, int, int, int, int]
EVERYTHING: Interval = (0, 1 << 62, 0, 0, 0)


@dataclass(frozen=True)
class State:
    """Accesses since the last CTA barrier (``reads``, ``writes``) and generic-proxy
    accesses since the last async-proxy fence (``generic``), as byte intervals."""

    reads: frozenset[Interval] = frozenset()
    writes: frozenset[Interval] = frozenset()
    generic: frozenset[Interval] = frozenset()

    def __or__(self, other: "State") -> "State":
        return State(self.reads | other.reads, self.writes | other.writes, self.generic | other.generic)


@dataclass(frozen=True)
class Access:
    kind: str  # "read" | "write"
    value: Value
    generic: bool  # an ordinary (generic-proxy) access: the async proxy needs a fence after it
    in_async_proxy: bool  # done by the async proxy (wgmma, TMA)
    ordered: bool  # done when its threads move on (a CTA barrier orders it for the others)


def accesses(op: Operation) -> list[Access]:
    """The shared-memory accesses of ``op`` that hazards are about (its declared memory
    effects: ``tlxc.ir.effects``)."""
    return [Access(e.access, v, e.proxy == "generic", e.proxy == "async", e.ordered_by_barrier)
            for e, v in op.memory_effects() if e.space == "smem"]


def is_cta_barrier(op: Operation, num_threads: int) -> bool:
    """Whether ``op`` lowers with a barrier of every thread of the CTA (a declared
    ``cta_barrier``, or a named barrier that every thread takes part in)."""
    return any(s.kind == "cta_barrier" or (s.kind == "named_barrier" and (s.threads or 0) >= num_threads)
               for s in op.sync_effects())


def is_proxy_fence(op: Operation) -> bool:
    """Whether ``op`` orders the generic and async proxies on shared memory."""
    return any(s.kind == "fence" and s.scope == "async_shared" for s in op.sync_effects())


def _conflict(a: Interval, b: Interval) -> bool:
    if a[2] and a[:4] == b[:4] and a[4] != b[4]:
        return False  # one ring, through its counter in consecutive iterations: two slots
    return a[0] < b[1] and b[0] < a[1]


def _overlaps(rs: list[Interval], pending: frozenset[Interval]) -> bool:
    return any(_conflict(r, p) for r in rs for p in pending)


def _age(spans: frozenset[Interval], counters: set[int], leave: bool) -> frozenset[Interval]:
    """``spans`` across a back edge of the loop whose ring counters are ``counters`` (this
    iteration's slot becomes the previous one, the previous one any), or out of the loop
    (``leave``: the counter means nothing outside)."""
    out = set()
    for lo, hi, key, alloc, age in spans:
        if key in counters:
            key, alloc, age = (0, 0, 0) if leave or age else (key, alloc, 1)
        out.add((lo, hi, key, alloc, age))
    return frozenset(out)


def _aged(state: State, counters: set[int], leave: bool = False) -> State:
    if not counters:
        return state
    return State(_age(state.reads, counters, leave), _age(state.writes, counters, leave),
                 _age(state.generic, counters, leave))


def _ring_counter(v: Value) -> tuple[int, int]:
    """The ids of the ring counter and the allocation ``v`` is a slot of
    (``local_view(alloc, counter)``), or zeros."""
    owner = v.owner
    if isinstance(owner, ops.LocalViewOp) and isinstance(owner.buf.owner, ops.LocalAllocOp) \
            and ring_slots.is_rotating(owner.index):
        return id(owner.index), id(owner.buf.owner)
    return 0, 0


def _counters(blocks: list[Block]) -> set[int]:
    return {id(a) for a in blocks[0].args if ring_slots.is_rotating(a)}


@dataclass
class _Analysis:
    plan: smem_alloc.SmemPlan
    num_threads: int
    inserted: list[Operation] = field(default_factory=list)
    warp_size: int = 32
    probe: set[tuple[int, str]] | None = None  # what a dry run finds wanting (``wanted``)

    def ranges(self, v: Value) -> list[Interval]:
        key, alloc = _ring_counter(v)
        return [(lo, hi, key, alloc, 0) for lo, hi in self.plan.ranges(v)] or [EVERYTHING]

    def block(self, block: Block, state: State, insert: bool) -> State:
        for op in list(block.ops):
            state = self.op(op, state, insert)
        return state

    def op(self, op: Operation, state: State, insert: bool) -> State:
        if isinstance(op, ops.ForOp):
            return self.loop(op, [op.regions[0].block], state, insert, exit_after=None)
        if isinstance(op, ops.WhileOp):
            before, after = op.regions[0].block, op.regions[1].block
            return self.loop(op, [before, after], state, insert, exit_after=before)
        if isinstance(op, ops.IfOp):
            out = State()
            for region in op.regions:
                out = out | self.block(region.block, state, insert)
            return out
        if isinstance(op, ops.AsyncTasksOp):
            return self.partitions(op, state, insert)
        need_fence = need_barrier = False
        reads, writes, generic = set(state.reads), set(state.writes), set(state.generic)
        for a in accesses(op):
            rs = self.ranges(a.value)
            conflicts = state.writes | state.reads if a.kind == "write" else state.writes
            need_barrier |= _overlaps(rs, conflicts)
            if a.in_async_proxy:
                need_fence |= _overlaps(rs, state.generic)
        if self.probe is not None:
            self.probe.update((id(op), k) for k, on in (("barrier", need_barrier), ("fence", need_fence)) if on)
        if need_fence and insert:
            self.insert(op, ops.FenceOp, {"scope": "async_shared"})
        # a dry run (``insert`` off) settles what the walk that inserts would settle here:
        # the state it brings around a loop's back edge is the one that walk will leave
        # (without this, accesses a barrier settles linger one iteration too many, and a
        # ring slot's age runs out before the next iteration's access through it)
        if need_barrier:
            if insert:
                self.insert(op, ops.NamedBarrierWaitOp, {"bar_id": 0, "threads": self.num_threads})
            reads, writes = set(), set()
        if need_fence:
            generic = set()
        for a in accesses(op):
            rs = self.ranges(a.value)
            if a.kind == "read":
                reads.update(rs)
            elif a.ordered:  # TMA writes complete through their mbarrier, not through this order
                writes.update(rs)
            if a.generic:
                generic.update(rs)
        if is_cta_barrier(op, self.num_threads):
            reads, writes = set(), set()
        if is_proxy_fence(op):
            generic = set()
        return State(frozenset(reads), frozenset(writes), frozenset(generic))

    def loop(self, op: Operation, blocks: list[Block], state: State, insert: bool,
             exit_after: Block | None) -> State:
        """A loop whose iteration runs ``blocks`` in order: find the state at its head
        (what the entry and every back edge bring, with the barriers the inserting walk
        will put in settling what they settle), then walk it once more, inserting.

        Accesses pending from before the loop that the loop's ops conflict with are
        settled by a barrier (and fence) before the loop rather than inside it, where it
        would run every iteration (attention's Q, stored once and read by every
        iteration's wgmma)."""
        if insert and (state.reads or state.writes or state.generic):
            need_barrier, need_fence = self.entry_conflicts(op, blocks, state)
            if need_fence:
                self.insert(op, ops.FenceOp, {"scope": "async_shared"})
                state = State(state.reads, state.writes, frozenset())
            if need_barrier:
                self.insert(op, ops.NamedBarrierWaitOp, {"bar_id": 0, "threads": self.num_threads})
                state = State(generic=state.generic)
        head = self.head(blocks, state)
        s, at_exit = head, head
        for b in blocks:
            s = self.block(b, s, insert)
            if b is exit_after:
                at_exit = s
        # a for loop leaves after its last iteration, whose accesses the walk from ``head``
        # over-approximates (with the insertions in place), or after none
        counters = _counters(blocks)
        return _aged(at_exit, counters, True) if exit_after is not None else state | _aged(s, counters, True)

    def head(self, blocks: list[Block], state: State) -> State:
        """The state at the head of a loop entered with ``state`` (back edges included)."""
        head = state
        counters = _counters(blocks)
        while True:
            s = head
            for b in blocks:
                s = self.block(b, s, False)
            grown = head | _aged(s, counters)
            if grown == head:
                return head
            head = grown

    def wanted(self, blocks: list[Block], head: State) -> set[tuple[int, str]]:
        """The (op, "barrier" | "fence") the loop's body would need from ``head``."""
        outer, self.probe = self.probe, set()
        s = head
        for b in blocks:
            s = self.block(b, s, False)
        got, self.probe = self.probe, outer
        return got

    def entry_conflicts(self, op: Operation, blocks: list[Block], state: State) -> tuple[bool, bool]:
        """(barrier, fence): whether what ``state`` has pending at the loop's entry makes an
        op of the loop need a barrier (a fence) that the loop's own back edges would not --
        then it is cheaper before the loop."""
        if any(isinstance(x, ops.AsyncTasksOp) for b in blocks for top in b.ops for x in top.walk()):
            return False, False  # partitions keep their own accounts
        clean = self.wanted(blocks, self.head(blocks, State()))
        entered = self.wanted(blocks, self.head(blocks, state))
        extra = entered - clean
        return any(k == "barrier" for _, k in extra), any(k == "fence" for _, k in extra)

    def partitions(self, op: ops.AsyncTasksOp, state: State, insert: bool) -> State:
        """Every warp meets where the region starts and ends, so accesses before it are
        ordered for all partitions; inside, a partition's barrier spans its own warps and
        orders only its own accesses (other partitions' are the user's, through mbarriers).
        Fences order proxies per thread: generic accesses stay pending across both ends."""
        generic = state.generic
        for p in op.partitions:
            inner = _Analysis(self.plan, p.num_warps * self.warp_size, self.inserted, self.warp_size)
            generic = generic | inner.block(p.block, State(generic=state.generic), insert).generic
        return State(generic=generic)

    def insert(self, before: Operation, cls: type[Operation], attrs: dict) -> None:
        with Builder(None).before(before) as b:
            self.inserted.append(b.create(cls, [], [], attrs, loc=before.loc))


def run(module: Operation, options: PassOptions) -> Operation:
    """Insert hazard barriers and proxy fences in every kernel, from the shared-memory
    plan that ``smem-alloc`` wrote into the IR."""
    # a CTA barrier spans every thread: num_warps waves of the target's width (64 lanes on CDNA)
    for func in module.funcs:
        plan = smem_alloc.read_plan(func)
        warp = options.target.warp_size
        _Analysis(plan, func.attrs["num_warps"] * warp, warp_size=warp).block(func.body, State(), True)
    return module
