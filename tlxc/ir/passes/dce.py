"""Dead-code elimination.

Expects: well-formed IR.

Guarantees, repeated until nothing changes, in every block including nested regions:
* a pure op (``Operation.PURE``, no regions) none of whose results is used is removed;
* with ``options.dce_region_ops``: an ``if``, a ``reduce_combine``, or a ``for`` with a
  constant positive step, whose results are all unused and whose regions hold only pure ops (and nested ``if`` /
  ``for`` of the same kind) is removed; an unused result of an ``if`` is dropped together
  with the values its regions yield for it; an unused result of a ``for`` whose
  loop-carried block argument feeds nothing but its own slot of the ``yield`` (through
  pure ops, or through an ``if`` that yields it or a replacement for it) is dropped
  together with its init, its block argument, its yielded value and those ``if`` results.

Refuses: ops with side effects (``load``, ``store``, ``assert``, barriers...) and
terminators always stay, even when their results are unused -- a ``load`` can fault and
is ordered against the barriers around it. ``while`` loops always stay (they may not
terminate), as does a ``for`` whose step is not a known positive constant, and so do the
``func``/``module`` ops and their arguments.
"""

from __future__ import annotations

from .. import ops
from ..core import Block, Operation, Value
from .options import PassOptions
from .rewrite import blocks_of, constant_of, drop_block_arg, drop_operand, drop_result, tag


def run(module: Operation, options: PassOptions) -> Operation:
    """Remove dead ops of ``module``, in place (see the module docstring)."""
    while _dce_regions(module, options):
        pass
    return module


def _dce_regions(op: Operation, options: PassOptions) -> bool:
    changed = False
    for block in blocks_of(op):
        changed |= _dce_block(block, options)
    return changed


def _dce_block(block: Block, options: PassOptions) -> bool:
    # Backwards, so that a chain of dead ops goes in one sweep: users come before
    # the ops they use.
    changed = False
    for op in reversed(list(block.ops)):
        try:
            changed |= _dce_regions(op, options)
            if _is_dead(op, options):
                op.erase()
                changed = True
            elif options.dce_region_ops:
                changed |= _drop_unused_results(op)
        except Exception as e:
            tag(e, op)
            raise
    return changed


def _is_dead(op: Operation, options: PassOptions) -> bool:
    if op.IS_TERMINATOR or any(r.uses for r in op.results):
        return False
    if not op.regions:
        return op.PURE
    return options.dce_region_ops and _free_of_effects(op)


def _free_of_effects(op: Operation) -> bool:
    """Whether removing ``op`` (with everything in its regions) changes nothing but its
    results."""
    if isinstance(op, ops.YieldOp):
        return True
    if not op.regions:
        return op.PURE and not op.IS_TERMINATOR
    if isinstance(op, ops.ForOp):
        step = constant_of(op.step)
        if not isinstance(step, int) or step <= 0:
            return False  # a zero step never ends; a negative one is the frontend's rule
    elif not isinstance(op, (ops.IfOp, ops.ReduceCombineOp)):  # the combine region is scalar arithmetic
        return False
    return all(_free_of_effects(inner) for block in blocks_of(op) for inner in block.ops)


def _terminator(block: Block) -> Operation:
    # the verifier has checked that the regions of ``if`` and ``for`` end in ``yield``
    term = block.terminator
    assert term is not None
    return term


def _feeds_only_its_slot(arg: Value, term: Operation, slot: int) -> list[tuple[Operation, list[int]]] | None:
    """The pure ops, and the ``if`` results (``(if, positions)``), through which
    loop-carried ``arg`` reaches nothing but its own slot of the ``yield`` (``p += step``
    carried and never read otherwise; a value an ``if`` keeps or replaces, as a flattened
    loop's per-tile indices), or None when it reaches anything else."""
    chain: dict[int, tuple[Operation, list[int]]] = {}
    work, seen = [arg], set()
    while work:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        for user in v.uses:
            if user is term:
                if any(x is v for j, x in enumerate(term.operands) if j != slot):
                    return None
                continue
            owner = user.parent.parent_op if user.parent is not None else None
            if isinstance(user, ops.YieldOp) and isinstance(owner, ops.IfOp) and owner.parent is term.parent:
                at = [k for k, x in enumerate(user.operands) if x is v]
                entry = chain.setdefault(id(owner), (owner, []))
                entry[1].extend(k for k in at if k not in entry[1])
                work.extend(owner.results[k] for k in at)
                continue
            if user.regions or not user.PURE or user.parent is not term.parent:
                return None
            chain.setdefault(id(user), (user, []))
            work.extend(user.results)
    return list(chain.values())


def _drop_unused_results(op: Operation) -> bool:
    if isinstance(op, ops.IfOp):
        dead = [i for i, r in enumerate(op.results) if not r.uses]
        for i in reversed(dead):
            for block in blocks_of(op):
                drop_operand(_terminator(block), i)
            drop_result(op, i)
        return bool(dead)
    if isinstance(op, ops.ForOp):
        body = op.body
        term = _terminator(body)
        cycles: list[tuple[int, list[tuple[Operation, list[int]]]]] = []
        for i, r in enumerate(op.results):
            chain = None if r.uses else _feeds_only_its_slot(body.args[i + 1], term, i)
            if chain is not None:
                cycles.append((i, chain))
        for i, chain in reversed(cycles[-1:]):  # one at a time: chains of two slots may share an if
            drop_operand(term, i)
            for x, at in sorted(chain, key=lambda e: body.ops.index(e[0]), reverse=True):
                if not at:
                    x.erase()
                    continue
                for k in sorted(at, reverse=True):  # the if keeps its other results
                    for block in blocks_of(x):
                        drop_operand(_terminator(block), k)
                    drop_result(x, k)
            drop_block_arg(body, i + 1)
            drop_operand(op, len(op.operands) - len(op.inits) + i)  # the init of result i
            drop_result(op, i)
        return bool(cycles)
    return False
