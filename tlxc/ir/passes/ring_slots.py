"""The slot counter of a ring of buffers that a loop walks: built by ``software-pipeline``,
recognized by ``membar``.

A counter is a loop-carried ``i32`` that the loop's ``yield`` advances by
``next_slot``: ``select(slot == n - 1, 0, slot + 1)`` for a ring of ``n >= 2`` buffers.
Whatever slot an iteration starts with, the next one starts with another: ``slot + 1``
differs from ``slot``, and where the select wraps, ``slot`` is ``n - 1`` and the next is
``0``. That is what lets ``membar`` see that an access through ``view(ring, slot)`` in one
iteration and one through the same ``view(ring, slot)`` in the next touch different
buffers, so a double-buffered loop needs one barrier per iteration, not two.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import BlockArgument, Value
from ..types import int1, int32
from .rewrite import constant_of


def next_slot(b: Builder, slot: Value, n: int) -> Value:
    """The slot after ``slot`` in a ring of ``n`` buffers (the recognized form)."""
    one = b.value(ops.ConstantOp, [], int32, value=1)
    last = b.value(ops.ConstantOp, [], int32, value=n - 1)
    nxt = b.value(ops.AddOp, [slot, one], int32)
    at_end = b.value(ops.CmpOp, [slot, last], int1, predicate="eq")
    return b.value(ops.SelectOp, [at_end, b.value(ops.ConstantOp, [], int32, value=0), nxt], int32)


def is_rotating(arg: Value) -> bool:
    """Whether ``arg`` is a carried value of a ``for`` loop that every iteration changes
    (its ``yield`` gives ``next_slot(arg, n)`` with ``n >= 2``), so that ``arg`` names a
    different slot in consecutive iterations."""
    if not isinstance(arg, BlockArgument) or arg.index == 0:  # index 0: the induction variable
        return False
    loop = arg.block.parent_op
    if not isinstance(loop, ops.ForOp) or loop.body is not arg.block:
        return False
    sel = arg.block.ops[-1].operands[arg.index - 1].owner
    if not isinstance(sel, ops.SelectOp):
        return False
    cmp, add = sel.cond.owner, sel.false_value.owner
    if not (isinstance(cmp, ops.CmpOp) and cmp.predicate == "eq" and isinstance(add, ops.AddOp)):
        return False
    last = constant_of(cmp.rhs)
    return (cmp.lhs is arg and constant_of(sel.true_value) == 0 and isinstance(last, int) and last >= 1
            and add.operands[0] is arg and constant_of(add.operands[1]) == 1)
