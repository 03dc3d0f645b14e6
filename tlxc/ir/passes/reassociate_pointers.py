"""Reassociate pointer arithmetic in loops, so that an iteration adds only what changes.

Triton's attention loads keys as ``k_base + keys[:, None] * stride + offs_d[None, :]``:
``(base + row) + col``, where ``base`` and ``col`` are the same in every iteration and only
``row`` changes. Written that way each iteration computes a 64-bit ``base + row`` per row
and then adds the column part to it: two dependent 64-bit operations per vector access
(on NVIDIA an ``IMAD.WIDE`` and an add). This pass rewrites it as
``(base + col) + row``: ``base + col`` is built once, before the loop, and an iteration
adds its row offset with one widening multiply-add.

Pointer arithmetic is exact in 64 bits -- every offset is sign- or zero-extended by its own
type and scaled by the element size before it is added -- so the order of the additions
changes no address (it is not the ``i32`` sum of the two offsets, which could wrap).

Where the accesses do not vectorize, ``base + col`` before the loop is a 64-bit pointer per
element; on examples/attention.py with unaligned pointers that left the register count
as it was on NVIDIA (127 and 167, ptxas) and took 2-4% of the instructions off the AMD targets' code.

Expects: the tile IR (in ``TILE_PIPELINE``, after loop unrolling, before canonicalization, which
cleans up after it), before software pipelining (the pipeliner then clones the loop's part
of an address for its look-ahead copies).

Guarantees: in the body block of each ``for``, an ``addptr(P, c)`` whose ``P`` is
``addptr(s, r)`` or a ``broadcast`` of one (used only there), where ``c`` and ``s`` depend only on values
defined before the loop and ``r`` does not, becomes ``addptr(addptr(s', c), r')`` with
``addptr(s', c)`` before the loop (``s'`` is ``s`` at the result's shape: a ``splat`` of
the same scalar, or a ``broadcast``; ``r'`` is ``r`` broadcast likewise). The pure,
region-free ops of the body that ``c`` and ``s`` are computed by move before the loop
with them; nothing else moves. What the rewrite leaves unused is for ``dce``.

Refuses (leaves as written): scalar pointers, chains whose inner ``addptr`` or ``broadcast``
has other uses (rewriting would compute both forms), ``c`` or ``s`` that take more than
eight ops of the body or any op with regions or effects, and ops nested deeper than the
loop's own body block.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation
from ..types import TileType
from .options import PassOptions
from .rewrite import hoist_before, loop_invariant, replace_op


def run(module: Operation, options: PassOptions) -> Operation:
    """Rewrite the loops of ``module`` in place (see the module docstring)."""
    for loop in [op for op in module.walk() if isinstance(op, ops.ForOp)]:
        for op in list(loop.body.ops):
            if isinstance(op, ops.AddPtrOp) and op.parent is loop.body:
                _reassociate(loop, op)
    return module


def _reassociate(loop: Operation, op: Operation) -> None:
    p, col = op.ptr, op.offset
    out = op.result.type
    producer = p.owner
    if not isinstance(out, TileType) or not isinstance(producer, Operation) or len(p.uses) != 1:
        return
    spread = isinstance(producer, ops.BroadcastOp)
    inner = producer.x.owner if spread else producer
    if not isinstance(inner, ops.AddPtrOp) or inner.parent is not loop.body or len(inner.result.uses) != 1:
        return
    base, row = inner.ptr, inner.offset
    chain: list[Operation] = []
    if not loop_invariant(col, loop, chain) or not loop_invariant(base, loop, chain) or loop_invariant(row, loop, []):
        return
    hoist_before(loop, chain)
    b = Builder.at(loop)
    b.loc = op.loc
    if base.type.shape == out.shape:
        spread_base = base
    elif isinstance(base.owner, ops.SplatOp):
        spread_base = b.value(ops.SplatOp, [base.owner.x], out)
    else:
        spread_base = b.value(ops.BroadcastOp, [base], out)
    fixed = b.value(ops.AddPtrOp, [spread_base, col], out)
    with b.before(op):
        if row.type.shape != out.shape:
            row = b.value(ops.BroadcastOp, [row], out.with_element(row.type.scalar))
        moving = b.value(ops.AddPtrOp, [fixed, row], out)
    replace_op(op, [moving])
