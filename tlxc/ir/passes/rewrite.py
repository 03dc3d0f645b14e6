"""Small IR surgery shared by the passes: replacing an op or some uses of a value, moving
ops, dropping results, operands and block arguments, tagging an exception with the op being rewritten, where an
op sits in a block (``top_level``), a loop's trip count (``trip_count``), and which values
a loop's body computes from values defined before it (``loop_invariant``, ``hoist_before``).

``core.py`` keeps values, uses and parents consistent for the common edits (append,
insert, erase, set_operand, replace_all_uses_with); the edits here are the rarer ones a
pass needs, written once so that use lists stay right.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import ops
from ..builder import Builder
from ..core import Block, BlockArgument, Operation, OpResult, Value
from ..ops import ConstantOp
from ..types import Type, int1

# Name of the attribute that ``tag`` sets on an exception; the pipeline reads it to give
# an internal error the user's line.
OP_ATTR = "tlxc_pass_op"

# how many body ops ``loop_invariant`` follows for one value (``offs_d[None, :]`` broadcast: 2)
MAX_INVARIANT_CHAIN = 8


def tag(exc: BaseException, op: Operation) -> None:
    """Record on ``exc`` the op being processed when it was raised (the innermost wins)."""
    if getattr(exc, OP_ATTR, None) is None:
        try:
            setattr(exc, OP_ATTR, op)
        except AttributeError:  # exceptions without a __dict__; the error just has no line
            pass


def tagged_op(exc: BaseException) -> Operation | None:
    return getattr(exc, OP_ATTR, None)


def blocks_of(op: Operation) -> Iterator[Block]:
    for r in op.regions:
        yield from r.blocks


def top_level(op: Operation, block: Block) -> Operation | None:
    """The op of ``block`` that is ``op`` or holds it in its regions; None when ``op`` is
    not inside ``block``."""
    cur: Operation | None = op
    while cur is not None and cur.parent is not None:
        if cur.parent is block:
            return cur
        cur = cur.parent.parent_op
    return None


def trip_count(b: Builder, lb: Value, ub: Value, step: Value) -> Value:
    """The iterations of ``range(lb, ub, step)`` as Python counts them, for either sign of
    a non-zero ``step``: ``ceil(|ub - lb| / |step|)`` when the step goes towards ``ub``,
    else 0 (built at ``b``; constant bounds fold)."""
    t = lb.type

    def c(v: int) -> Value:
        return b.value(ConstantOp, [], t, value=v)

    zero, one = c(0), c(1)
    up = b.value(ops.CmpOp, [step, zero], int1, predicate="gt")
    span = b.value(ops.SubOp, [ub, lb], t)
    span = b.value(ops.SelectOp, [up, span, b.value(ops.SubOp, [zero, span], t)], t)
    stride = b.value(ops.SelectOp, [up, step, b.value(ops.SubOp, [zero, step], t)], t)
    trips = b.value(ops.IDivOp, [b.value(ops.SubOp, [b.value(ops.AddOp, [span, stride], t), one], t), stride], t)
    return b.value(ops.MaximumOp, [trips, zero], t)


def constant_of(v: Value) -> Any:
    """The ``value`` attribute if ``v`` is the result of a ``constant`` op, else None."""
    owner = v.owner
    if isinstance(owner, ConstantOp):
        return owner.value
    return None


def is_constant(v: Value) -> bool:
    return isinstance(v.owner, ConstantOp)


def insert_constant(before: Operation, type: Type, value: Any) -> Value:
    """A new ``constant`` op placed just before ``before``, with its location."""
    assert before.parent is not None
    const = ConstantOp([], [type], {"value": value}, loc=before.loc)
    block = before.parent
    block.insert(block.ops.index(before), const)
    return const.result


def replace_op(op: Operation, values: Sequence[Value]) -> None:
    """Replace every use of ``op``'s results with ``values`` and erase ``op``."""
    assert len(values) == len(op.results), (op.NAME, len(values), len(op.results))
    for r, v in zip(op.results, values):
        r.replace_all_uses_with(v)
    op.erase()


def replace_uses_in(users: Iterable[Operation], old: Value, new: Value) -> None:
    """In each op of ``users`` (uses of ``old`` picked by the caller, who leaves the others
    on ``old``), every operand that is ``old`` becomes ``new``."""
    for user in list(users):
        for i, x in enumerate(user.operands):
            if x is old:
                user.set_operand(i, new)


def add_carried(loop: ops.ForOp, init: Value, yielded: Callable[[BlockArgument], Value],
                name: str | None = None) -> tuple[BlockArgument, OpResult]:
    """A new value that ``loop`` carries, after the others: it enters as ``init``, and each
    iteration yields ``yielded(arg)`` (built by the caller, in the body, from the new block
    argument ``arg``). Returns the block argument and the loop's result."""
    loop._add_operand(init)
    arg = loop.body.add_arg(init.type, name)
    result = OpResult(init.type, loop, len(loop.results))
    loop.results.append(result)
    loop.body.ops[-1]._add_operand(yielded(arg))
    return arg, result


def inline_block_before(block: Block, op: Operation) -> list[Value]:
    """Move every op of ``block`` but its terminator in front of ``op``; return the
    terminator's operands (the values the block yields). The block must have no
    arguments (or none still used)."""
    assert op.parent is not None
    dest = op.parent
    term = block.terminator
    index = dest.ops.index(op)
    for moved in [o for o in block.ops if o is not term]:
        block.remove(moved)
        dest.insert(index, moved)
        index += 1
    return list(term.operands) if term is not None else []


def drop_operand(op: Operation, index: int) -> None:
    """Remove operand ``index`` (a variadic one: optional operands are not supported)."""
    v = op.operands.pop(index)
    v.uses.remove(op)


def drop_result(op: Operation, index: int) -> None:
    """Remove result ``index``, which must be unused, and renumber the others."""
    r = op.results.pop(index)
    assert not r.uses, "dropping a used result"
    for i, other in enumerate(op.results):
        other.index = i


def drop_block_arg(block: Block, index: int) -> None:
    """Remove block argument ``index``, which must be unused, and renumber the others."""
    a = block.args.pop(index)
    assert not a.uses, "dropping a used block argument"
    for i, other in enumerate(block.args):
        other.index = i


def defined_in(v: Value, op: Operation) -> bool:
    """Whether ``v`` is defined inside ``op``'s regions (at any depth)."""
    owner = v.owner
    block: Block | None = owner.parent if isinstance(owner, Operation) else owner
    while block is not None:
        parent = block.parent_op
        if parent is op:
            return True
        if parent is None:
            return False
        block = parent.parent
    return False


def loop_invariant(v: Value, loop: Operation, chain: list[Operation]) -> bool:
    """Whether ``v`` depends only on values defined before ``loop``: it is one of them, or
    the result of pure, region-free ops of the loop's body block over them. Those ops are
    added to ``chain`` (for ``hoist_before``), which may hold ``MAX_INVARIANT_CHAIN`` at most."""
    if not defined_in(v, loop):
        return True
    op = v.owner
    body = loop.regions[0].block
    if not isinstance(op, Operation) or op.parent is not body or not op.PURE or op.regions:
        return False
    if op in chain:
        return True
    if len(chain) >= MAX_INVARIANT_CHAIN:
        return False
    if not all(loop_invariant(x, loop, chain) for x in op.operands):
        return False
    chain.append(op)
    return True


def hoist_before(loop: Operation, chain: list[Operation]) -> None:
    """Move the body ops of ``chain`` (from ``loop_invariant``) before ``loop``, in their order."""
    body, outside = loop.regions[0].block, loop.parent
    assert outside is not None
    for moved in sorted(chain, key=body.ops.index):
        body.remove(moved)
        outside.insert(outside.ops.index(loop), moved)
