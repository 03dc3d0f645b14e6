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

What is pipelined: a ``load`` at the top level of the innermost ``for`` loop's body,
every use of which is an operand (``a`` or ``b``) of a ``dot`` in that body (directly or
through one ``trans``), whose
pointers, mask and ``other`` are computed in the body by pure ops from values defined
outside the loop, the induction variable, and loop-carried values that are themselves
computed that way (the pointer increments of Triton's matmul tutorial); the loop's step
is a positive constant. The address computation is cloned: once per prologue stage, and
once in the body for the iteration ``S - 1`` ahead, on new loop-carried values; the
original chain is left for DCE when nothing else uses it.

Expects: the tile IR (before buffer and tile layouts), ``options.num_stages``.
Guarantees: the loads described above are replaced by ``local_load`` of the ring slot;
the rest of the loop is unchanged; loops inside warp-specialized partitions (the user
owns their pipelines), loops that already use asynchronous copies, barriers or buffers,
and anything else are left as they are.
Refuses: nothing (a loop it cannot pipeline runs unpipelined).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ops
from ..builder import Builder
from ..core import Block, BlockArgument, Operation, Region, Value
from ..ops.tasks import enclosing_partition
from ..types import DType, MemDescType, TileType, Type, int1, int32, tile, token
from . import dce
from .options import PassOptions
from .rewrite import constant_of

# ops whose presence means the user drives shared memory or asynchrony in this loop
_HANDS_OFF = (ops.AsyncLoadOp, ops.AsyncCommitGroupOp, ops.AsyncWaitGroupOp, ops.LocalAllocOp, ops.LocalLoadOp,
              ops.LocalStoreOp, ops.BarrierWaitOp, ops.BarrierArriveOp, ops.NamedBarrierWaitOp, ops.TmaLoadOp,
              ops.AsyncDotOp)


@dataclass
class Plan:
    """What one loop's pipelining needs: the loads, the ops that compute their addresses
    (in body order), and the carried-value slots those ops read (``carried``: indices
    into the iteration arguments)."""

    loop: ops.ForOp
    loads: list[ops.LoadOp]
    slice: list[Operation]
    carried: list[int]
    step: int


def _innermost_loops(func: Operation) -> list[ops.ForOp]:
    return [op for op in func.walk() if isinstance(op, ops.ForOp)
            and not any(isinstance(x, (ops.ForOp, ops.WhileOp)) for x in list(op.walk())[1:])]


def _feeds_dots_only(v: Value, body: Block, through_trans: bool = True) -> bool:
    """Whether every use of ``v`` is an ``a``/``b`` operand of a ``dot`` in ``body``,
    directly or through one transpose (attention's ``tl.dot(q, tl.trans(k))``)."""
    uses = v.uses
    if not uses:
        return False
    for u in uses:
        if isinstance(u, ops.TransOp) and through_trans and u.parent is body:
            if not _feeds_dots_only(u.result, body, False):
                return False
        elif not (isinstance(u, ops.DotOp) and u.parent is body and v in (u.a, u.b) and u.acc is not v):
            return False
    return True


def plan(loop: ops.ForOp) -> Plan | None:
    """The pipelining of ``loop``, or None where it does not apply (module doc)."""
    step = constant_of(loop.step)
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        return None
    if enclosing_partition(loop) is not None:
        return None
    body = loop.body
    if any(isinstance(op, _HANDS_OFF) for op in list(loop.walk())[1:]):
        return None
    loads = [op for op in body.ops if isinstance(op, ops.LoadOp) and isinstance(op.result.type, TileType)
             and isinstance(op.result.type.scalar, DType) and not op.volatile and _feeds_dots_only(op.result, body)]
    if not loads:
        return None
    iv, args = body.args[0], body.args[1:]
    yielded = body.ops[-1].operands
    members: set[int] = set()
    carried: set[int] = set()
    work = [v for ld in loads for v in ld.operands]
    while work:
        v = work.pop()
        if isinstance(v, BlockArgument):
            if v.owner is body and v is not iv:
                j = args.index(v)
                if j not in carried:
                    carried.add(j)
                    work.append(yielded[j])
            continue
        op = v.owner
        if not isinstance(op, Operation) or op.parent is not body or id(op) in members:
            continue  # defined outside the loop (or seen)
        if not op.PURE or op.regions or isinstance(op, ops.DotOp):
            return None
        members.add(id(op))
        work.extend(op.operands)
    order = [op for op in body.ops if id(op) in members]
    return Plan(loop, loads, order, sorted(carried), step)


class _Cloner:
    """Clones the address ops of a plan for one iteration: ``iv`` and the carried slots
    given, everything defined outside the loop shared."""

    def __init__(self, p: Plan) -> None:
        self.p = p
        body = p.loop.body
        self.args = list(body.args)  # the body's arguments (iv first), as the slice reads them
        self.yielded = list(body.ops[-1].operands)

    def run(self, b: Builder, iv: Value, state: list[Value]) -> dict[int, Value]:
        m: dict[int, Value] = {id(self.args[0]): iv}
        for j, v in zip(self.p.carried, state):
            m[id(self.args[1 + j])] = v
        for op in self.p.slice:
            new = b.create(type(op), [m.get(id(v), v) for v in op.operands], [r.type for r in op.results],
                           dict(op.attrs), loc=op.loc)
            new.present = dict(op.present)
            for r, nr in zip(op.results, new.results):
                m[id(r)] = nr
        return m

    def next_state(self, m: dict[int, Value]) -> list[Value]:
        return [m.get(id(self.yielded[j]), self.yielded[j]) for j in self.p.carried]


def _elem(t: Type) -> DType:
    e = t.scalar
    assert isinstance(e, DType)  # loads of pointers are not pipelined (plan)
    return e


def _const(b: Builder, value: int, t=int32) -> Value:
    return b.value(ops.ConstantOp, [], t, value=value)


def _issue(b: Builder, p: Plan, m: dict[int, Value], rings: list[Value], slot: Value, valid: Value) -> None:
    """The asynchronous copies of one iteration into ``slot``, masked by ``valid``."""
    for ld, ring in zip(p.loads, rings):
        t = ld.result.type
        buf = b.value(ops.LocalViewOp, [ring, slot], MemDescType(t.shape, _elem(t), 0))
        mask = b.value(ops.SplatOp, [valid], tile(t.shape, int1))
        if ld.mask is not None:
            mask = b.value(ops.AndOp, [m.get(id(ld.mask), ld.mask), mask], mask.type)
        other = m.get(id(ld.other), ld.other) if ld.other is not None else None
        b.create(ops.AsyncLoadOp, [m.get(id(ld.ptr), ld.ptr), buf], [token],
                 {"cache": ld.cache, "eviction": ld.eviction}, optional={"mask": mask, "other": other})
    b.create(ops.AsyncCommitGroupOp, [], [token])


def _wrap(b: Builder, slot: Value, stages: int) -> Value:
    one, last = _const(b, 1), _const(b, stages - 1)
    nxt = b.value(ops.AddOp, [slot, one], int32)
    at_end = b.value(ops.CmpOp, [slot, last], int1, predicate="eq")
    return b.value(ops.SelectOp, [at_end, _const(b, 0), nxt], int32)


def rewrite(p: Plan, stages: int) -> None:
    loop, body = p.loop, p.loop.body
    cl = _Cloner(p)
    loc = loop.loc
    with Builder(None, loc).before(loop) as b:
        rings = [b.value(ops.LocalAllocOp, [], MemDescType(ld.result.type.shape, _elem(ld.result.type), stages))
                 for ld in p.loads]
        state = [loop.inits[j] for j in p.carried]
        for s in range(stages - 1):
            iv = loop.lb if s == 0 else b.value(ops.AddOp, [loop.lb, _const(b, s * p.step, loop.lb.type)],
                                                loop.lb.type)
            valid = b.value(ops.CmpOp, [iv, loop.ub], int1, predicate="lt")
            m = cl.run(b, iv, state)
            _issue(b, p, m, rings, _const(b, s), valid)
            state = cl.next_state(m)
        inits = list(loop.inits) + state + [_const(b, 0), _const(b, stages - 1)]
        new = b.create(ops.ForOp, [loop.lb, loop.ub, loop.step, *inits], [v.type for v in inits],
                       dict(loop.attrs), regions=[Region(Block([a.type for a in body.args] + [v.type for v in
                                                                                              inits[len(loop.inits):]]))])
    nb = new.body
    for a, na in zip(body.args, nb.args):
        na.name_hint = a.name_hint
        a.replace_all_uses_with(na)
    n_old = len(loop.inits)
    ahead: list[Value] = list(nb.args[1 + n_old: 1 + n_old + len(p.carried)])
    read, write = nb.args[-2], nb.args[-1]
    for op in list(body.ops):
        body.remove(op)
        nb.append(op)
    cl.args = list(nb.args[:len(body.args)])  # the slice now reads the new loop's arguments
    cl.yielded = list(nb.ops[-1].operands)
    yld = nb.ops[-1]
    first = nb.ops[0]
    with Builder(None, loc).before(first) as b:
        b.create(ops.AsyncWaitGroupOp, [], [token], {"pendings": stages - 2})
        for ld, ring in zip(p.loads, rings):
            t = ld.result.type
            view = b.value(ops.LocalViewOp, [ring, read], MemDescType(t.shape, _elem(t), 0))
            ld.result.replace_all_uses_with(b.value(ops.LocalLoadOp, [view], t))
    with Builder(None, loc).before(yld) as b:
        iv = nb.args[0]
        iv_ahead = b.value(ops.AddOp, [iv, _const(b, (stages - 1) * p.step, iv.type)], iv.type)
        valid = b.value(ops.CmpOp, [iv_ahead, loop.ub], int1, predicate="lt")
        m = cl.run(b, iv_ahead, ahead)
        _issue(b, p, m, rings, write, valid)
        carried_out = cl.next_state(m) + [_wrap(b, read, stages), _wrap(b, write, stages)]
        b.create(ops.YieldOp, list(yld.operands) + carried_out, [])
    yld.erase()
    for ld in p.loads:
        ld.erase()
    for old, r in zip(loop.results, new.results):
        old.replace_all_uses_with(r)
    loop.erase()
    # the copies issued for iterations past the end (masked off) are retired before the
    # ring's memory can be reused
    with Builder(None, loc).before(_next_op(new)) as b:
        b.create(ops.AsyncWaitGroupOp, [], [token], {"pendings": 0})


def _next_op(op: Operation) -> Operation:
    block = op.parent
    assert block is not None
    return block.ops[block.ops.index(op) + 1]


def run(module: Operation, options: PassOptions) -> Operation:
    if not options.target.has.async_copy:
        return module
    changed = False
    for func in module.funcs:
        for loop in _innermost_loops(func):
            stages = loop.num_stages if loop.num_stages is not None else options.num_stages
            if stages < 2:
                continue
            p = plan(loop)
            if p is not None:
                rewrite(p, stages)
                changed = True
    if changed:
        dce.run(module, options)
    return module
