"""Carry a scalar base, not a tile of pointers, where a loop steps its pointers by a runtime amount.

Triton's matmul walks B with ``b_ptrs += BLOCK_K * stride_bk``: a tile of 64-bit pointers
carried around the loop, every element moved by the same runtime amount each iteration.
On NVIDIA that is a 64-bit add per element per iteration, fed by a register that holds
the step; on the H200 those adds were where the warps of the 128x256 matmul stalled. This
pass carries the scalar base instead and rebuilds the tile from it in each iteration:

    p = splat(b0) + off                      b = b0
    for ...:                                 for ...:
        load(p)                     -->          load(splat(b) + off)
        p = p + splat(s)                         b = b + s

so an iteration moves one scalar, and each access adds its element's (invariant, 32-bit)
offset to the base: one widening multiply-add per vector, the form Triton gives it. On AMD
the base is uniform (an SGPR pair) and the offsets are the per-lane part.

Only runtime steps: where ``s`` is a compile-time constant (``BLOCK_K * stride_ak`` with
``stride_ak`` specialized to 1), the per-element add is an add of an immediate, and
rebuilding the tile each iteration measured slower (examples/matmul.py, H200, fp16/bf16
4096-8192: rebasing only B gave +2-12% over carrying both tiles; rebasing A too lost 3-10%
of that).

Pointer arithmetic is exact in 64 bits (each offset is extended by its own type and scaled
by the element size before it is added), so ``(b0 + k*s) + off`` is the address that
``(b0 + off) + k*s`` was.

Expects: the tile IR (in ``TILE_PIPELINE``, after loop unrolling, before canonicalization,
which removes what this leaves unused), before software pipelining (the pipeliner then
finds the rebuilt tile in the body and clones it for its look-ahead copies).

Guarantees: for each ``for`` whose carried value ``p`` (a tile of pointers) enters as
``addptr(splat(b0), off)`` and is yielded as ``addptr(p, splat(s))`` (that ``addptr`` used
only by the ``yield``), with ``off`` defined before the loop and ``s`` computed from values
defined before it (by at most eight pure ops of the body, which move before the loop) and
not a constant: the loop also carries ``b`` (init ``b0``, yielded ``addptr(b, s)``); the
first op of the body is ``splat(b) + off`` and takes every use of ``p`` but its update; if
the loop's result for ``p`` is used, ``splat(b') + off`` after the loop takes its uses. The
old carried value is then unused but for its own update, which ``dce`` removes.

Refuses (leaves as written): a step that is a tile of different values, a step that is a
compile-time constant, an update used other than by the ``yield``, an init that is not a
splat base plus offsets, and loops without a constant positive step (``dce`` would keep the
dead carried value).
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation, OpResult, Value
from ..types import TileType
from .options import PassOptions
from .rewrite import add_carried, constant_of, defined_in, hoist_before, loop_invariant, replace_uses_in


def run(module: Operation, options: PassOptions) -> Operation:
    """Rewrite the loops of ``module`` in place (see the module docstring)."""
    for loop in [op for op in module.walk() if isinstance(op, ops.ForOp)]:
        step = constant_of(loop.step)
        if not isinstance(step, int) or step <= 0:
            continue
        for i in range(len(loop.inits)):
            _rebase(loop, i)
    return module


def _folds(v: Value, depth: int = 0) -> bool:
    """Whether ``v`` is a compile-time constant, or pure ops over constants only."""
    op = v.owner
    if isinstance(op, ops.ConstantOp):
        return True
    if not isinstance(op, Operation) or not op.PURE or op.regions or depth > 8:
        return False
    return all(_folds(x, depth + 1) for x in op.operands)


def _rebase(loop: ops.ForOp, i: int) -> None:
    body = loop.body
    arg, init, result = body.args[1 + i], loop.inits[i], loop.results[i]
    term = body.ops[-1]
    update = term.operands[i]
    t = arg.type
    if not isinstance(t, TileType) or not isinstance(update, OpResult):
        return
    upd = update.op
    if not isinstance(upd, ops.AddPtrOp) or upd.ptr is not arg or upd.parent is not body or update.uses != [term]:
        return
    splat_step = upd.offset.owner
    if not isinstance(splat_step, ops.SplatOp) or term.operands.count(update) != 1:
        return
    step = splat_step.x
    chain: list[Operation] = []
    if not loop_invariant(step, loop, chain) or _folds(step):
        return
    start = init.owner
    if not isinstance(start, ops.AddPtrOp) or defined_in(init, loop):
        return
    base_splat = start.ptr.owner
    if not isinstance(base_splat, ops.SplatOp):
        return
    b0, off = base_splat.x, start.offset
    hoist_before(loop, chain)
    # the scalar base: a new carried value after the others
    b = Builder.at(upd)
    base, base_out = add_carried(loop, b0, lambda base: b.value(ops.AddPtrOp, [base, step], b0.type),
                                 (arg.name_hint or "ptrs") + "_base")
    # the tile, rebuilt from it at the top of the body, takes the old value's uses
    b.loc = start.loc
    with b.before(body.ops[0]):
        tile = b.value(ops.AddPtrOp, [b.value(ops.SplatOp, [base], t), off], t)
    replace_uses_in([u for u in arg.uses if u is not upd], arg, tile)
    if result.uses:
        after = Builder.at(loop, after=True)
        after.loc = start.loc
        out = after.value(ops.AddPtrOp, [after.value(ops.SplatOp, [base_out], t), off], t)
        result.replace_all_uses_with(out)

