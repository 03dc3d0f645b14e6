"""What the forms of ``software-pipeline`` share: which loads of a ``tl.dot`` loop can
be issued ahead (``plan``), and the clone of their address computation for another
iteration (``Cloner``).

``plan(loop, kind)`` looks at one kind of load: pointer ``load``s (the ``cp.async`` and
register forms) or ``descriptor_load``s (the TMA form, ``tma_ring``). A load qualifies
when it sits at the top level of the innermost ``for`` loop's body, every use of it is an
operand (``a`` or ``b``) of a ``dot`` in that body (directly or through one ``trans``),
and its operands (pointers, mask and ``other``; a descriptor and its coordinates) are
computed in the body by pure ops from values defined outside the loop, the induction
variable, and loop-carried values that are themselves computed that way (the pointer
increments of Triton's matmul tutorial); the loop's step is a positive constant. Loops
inside warp-specialized partitions (the user owns their pipelines) and loops that already
use asynchronous copies, barriers or buffers are not planned.

``Cloner.run(b, iv, state)`` clones those address ops for the iteration whose induction
variable is ``iv`` and whose carried address values are ``state``; ``next_state`` gives
the carried values of the iteration after it. Each form clones the chain for the
iterations it issues ahead, on loop-carried "ahead" values of its own, and leaves the
original chain for DCE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .. import ops
from ..builder import Builder
from ..clone import clone
from ..core import Block, BlockArgument, Operation, Region, Value
from ..ops.tasks import enclosing_partition
from ..types import DType, MemDescType, TileType, Type, int32
from .rewrite import constant_of

# ops whose presence means the user drives shared memory or asynchrony in this loop
_HANDS_OFF = (ops.AsyncLoadOp, ops.AsyncCommitGroupOp, ops.AsyncWaitGroupOp, ops.LocalAllocOp, ops.LocalLoadOp,
              ops.LocalStoreOp, ops.BarrierWaitOp, ops.BarrierArriveOp, ops.NamedBarrierWaitOp, ops.TmaLoadOp,
              ops.AsyncDotOp)


# the kinds of load a plan holds
L = TypeVar("L", ops.LoadOp, ops.DescriptorLoadOp)


@dataclass
class Plan(Generic[L]):
    """What one loop's pipelining needs: the loads, the ops that compute their addresses
    (in body order), and the carried-value slots those ops read (``carried``: indices
    into the iteration arguments)."""

    loop: ops.ForOp
    loads: list[L]
    slice: list[Operation]
    carried: list[int]
    step: int


def innermost_loops(func: Operation) -> list[ops.ForOp]:
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


def _candidate(op: ops.LoadOp | ops.DescriptorLoadOp) -> bool:
    t = op.result.type
    if not isinstance(t, TileType) or not isinstance(t.scalar, DType):
        return False
    return not (isinstance(op, ops.LoadOp) and op.volatile)


def plan(loop: ops.ForOp, kind: type[L]) -> Plan[L] | None:
    """The pipelining of ``loop``, or None where it does not apply (module doc)."""
    step = constant_of(loop.step)
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        return None
    if enclosing_partition(loop) is not None:
        return None
    body = loop.body
    if any(isinstance(op, _HANDS_OFF) for op in list(loop.walk())[1:]):
        return None
    loads = [op for op in body.ops if isinstance(op, kind) and _candidate(op) and _feeds_dots_only(op.result, body)]
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
        if isinstance(op, ops.IfOp) and pure_if(op):
            members.add(id(op))
            work.extend(x for y in op.walk() for x in y.operands)  # what its regions read too
            continue
        if not op.PURE or op.regions or isinstance(op, ops.DotOp):
            return None
        members.add(id(op))
        work.extend(op.operands)
    order = [op for op in body.ops if id(op) in members]
    return Plan(loop, loads, order, sorted(carried), step)


def pure_if(op: ops.IfOp) -> bool:
    """Whether ``op``'s regions hold pure ops only (a flattened loop's once-per-tile index
    computation, ``flatten_loops``): such an ``if`` is cloned like any pure op."""
    inner = list(op.walk())[1:]
    return all((x.PURE and not x.regions and not isinstance(x, ops.DotOp)) or isinstance(x, ops.YieldOp)
               or (isinstance(x, ops.IfOp) and pure_if(x)) for x in inner)


class Cloner:
    """Clones the address ops of a plan for one iteration: ``iv`` and the carried slots
    given, everything defined outside the loop shared."""

    def __init__(self, p: Plan[Any]) -> None:
        self.p: Plan[Any] = p
        body = p.loop.body
        self.args = list(body.args)  # the body's arguments (iv first), as the slice reads them
        self.yielded = list(body.ops[-1].operands)

    def run(self, b: Builder, iv: Value, state: list[Value]) -> dict[int, Value]:
        m: dict[int, Value] = {id(self.args[0]): iv}
        for j, v in zip(self.p.carried, state):
            m[id(self.args[1 + j])] = v
        for op in self.p.slice:
            if op.regions:  # a pure if: a deep copy reading the values of this iteration
                b.place(clone(op, m))
                continue
            new = b.create(type(op), [m.get(id(v), v) for v in op.operands], [r.type for r in op.results],
                           dict(op.attrs), loc=op.loc)
            new.present = dict(op.present)
            for r, nr in zip(op.results, new.results):
                m[id(r)] = nr
        return m

    def next_state(self, m: dict[int, Value]) -> list[Value]:
        return [m.get(id(self.yielded[j]), self.yielded[j]) for j in self.p.carried]


def elem(t: Type) -> DType:
    e = t.scalar
    assert isinstance(e, DType)  # loads of pointers are not pipelined (plan)
    return e


def buffer_type(t: Type, num: int) -> MemDescType:
    """The shared-memory buffer type of a planned load's tile ``t``: ``num`` slots, or one
    slot's view (``num = 0``)."""
    return MemDescType(t.shape, elem(t), num)


def rings(b: Builder, p: Plan[Any], slots: int) -> list[Value]:
    """One ring of ``slots`` buffers per planned load (allocated at ``b``)."""
    return [b.value(ops.LocalAllocOp, [], buffer_type(ld.result.type, slots)) for ld in p.loads]


def slot_view(b: Builder, ring: Value, slot: Value, t: Type) -> Value:
    """Slot ``slot`` of ``ring``, for a load's tile ``t``."""
    return b.value(ops.LocalViewOp, [ring, slot], buffer_type(t, 0))


def const(b: Builder, value: int, t=int32) -> Value:
    return b.value(ops.ConstantOp, [], t, value=value)


def carry_more(p: Plan[Any], cl: Cloner, b: Builder, extra: list[Value]) -> tuple[ops.ForOp, list[Value]]:
    """Replace ``p.loop`` by a loop, built at ``b``, that also carries ``extra`` (their
    block arguments returned): the body moves over unchanged, the cloner reads the new
    loop's arguments, the old loop's results are the new one's. The caller adds the extra
    yields with ``yield_more`` and erases ``p.loads`` once their uses are replaced."""
    loop, body = p.loop, p.loop.body
    inits = list(loop.inits) + extra
    new = b.create(ops.ForOp, [loop.lb, loop.ub, loop.step, *inits], [v.type for v in inits], dict(loop.attrs),
                   regions=[Region(Block([a.type for a in body.args] + [v.type for v in extra]))])
    nb = new.body
    for a, na in zip(body.args, nb.args):
        na.name_hint = a.name_hint
        a.replace_all_uses_with(na)
    for op in list(body.ops):
        body.remove(op)
        nb.append(op)
    cl.args = list(nb.args[:len(body.args)])  # the slice now reads the new loop's arguments
    cl.yielded = list(nb.ops[-1].operands)
    for old, r in zip(loop.results, new.results):
        old.replace_all_uses_with(r)
    loop.erase()
    return new, list(nb.args[len(body.args):])


def yield_more(loop: ops.ForOp, extra: list[Value]) -> None:
    """Append ``extra`` to the values ``loop``'s body yields."""
    yld = loop.body.ops[-1]
    with Builder(None, yld.loc).before(yld) as b:
        b.create(ops.YieldOp, list(yld.operands) + extra, [])
    yld.erase()


def next_op(op: Operation) -> Operation:
    block = op.parent
    assert block is not None
    return block.ops[block.ops.index(op) + 1]
