"""Common-subexpression elimination.

Expects: well-formed IR in which every value is defined before it is used (dominance).

Guarantees: of two pure ops (``Operation.PURE``, no regions) with the same name,
operands, attributes and result types, where the first one is visible from the second --
earlier in the same block, or earlier in an enclosing block -- the second is removed and
its results are replaced by the first one's. ``add``, ``mul``, ``and``, ``or`` and ``xor``
match with their operands in either order. Attribute values compare by type and value, so
``0.0`` and ``-0.0`` (equal in Python) are different constants, and ``1`` and ``True``
are different attributes.

Refuses: ops with regions and ops that are not pure (``load``, ``store``, barriers,
terminators...) are never merged, because two of them are not interchangeable. A value
defined in a nested region never replaces one outside it, nor one in a sibling region
(the ``then`` and ``else`` regions of an ``if``), since it does not dominate it. The
partitions of ``async_tasks`` other than the default one start from an empty scope: they
run on other warps, so an op in one is never replaced by a value from outside it (a
register tile cannot cross).
"""

from __future__ import annotations

from typing import Any, Hashable

from ..core import Block, Operation
from ..ops.tasks import AsyncTasksOp
from ..types import Type
from .options import PassOptions
from .rewrite import blocks_of, replace_op, tag

# add and mul are commutative on floats too (IEEE), bitwise ops trivially
COMMUTATIVE = frozenset({"add", "mul", "and", "or", "xor"})

Scope = dict[Hashable, Operation]


def run(module: Operation, options: PassOptions) -> Operation:
    """Merge equal pure ops of ``module``, in place (see the module docstring)."""
    for block in blocks_of(module):
        _cse_block(block, [])
    return module


def _cse_block(block: Block, outer: list[Scope]) -> None:
    scopes = outer + [{}]
    for op in list(block.ops):
        try:
            isolated = [p.block for p in op.partitions if not p.default] if isinstance(op, AsyncTasksOp) else []
            for inner in blocks_of(op):
                _cse_block(inner, [] if any(inner is b for b in isolated) else scopes)
            key = _key(op)
            if key is None:
                continue
            found = _lookup(scopes, key)
            if found is None:
                scopes[-1][key] = op
            else:
                replace_op(op, found.results)
        except Exception as e:
            tag(e, op)
            raise


def _lookup(scopes: list[Scope], key: Hashable) -> Operation | None:
    for scope in reversed(scopes):
        op = scope.get(key)
        if op is not None:
            return op
    return None


def _key(op: Operation) -> Hashable | None:
    """What makes two ops interchangeable, or None if ``op`` is never merged."""
    if not op.PURE or op.regions or op.IS_TERMINATOR:
        return None
    operands: tuple[Any, ...] = tuple(op.operands)
    if op.NAME in COMMUTATIVE and len(operands) == 2:
        operands = tuple(sorted(operands, key=id))
    try:
        attrs = tuple((k, _freeze(v)) for k, v in op.attrs.items())
        key = (op.NAME, operands, tuple(sorted(n for n, p in op.present.items() if p)), attrs,
               tuple(r.type for r in op.results))
        hash(key)
    except TypeError:  # an attribute or type we cannot compare (an unhashable layout)
        return None
    return key


def _freeze(v: Any) -> Hashable:
    """A hashable form of an attribute value that tells apart values Python calls equal
    but the IR does not (-0.0 and 0.0, 1 and 1.0 and True; NaN equals NaN here)."""
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_freeze(x) for x in v))
    if isinstance(v, Type):
        return ("type", v)
    return (type(v).__name__, v)
