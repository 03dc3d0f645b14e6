"""Helpers on the variable scopes that the AST visitor keeps while it walks control flow."""

from __future__ import annotations

import ast
from typing import Any

from ..ir.types import Type
from .block_ptr import BlockPointer
from .values import Handle, Tensor, flatten


def contains_return(node: ast.AST) -> bool:
    """Whether ``node`` (a statement) has a ``return`` outside nested functions."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Return):
            return True
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(child, ast.stmt) and contains_return(child):
            return True
    return False


def types_of(v: Any) -> list[Type]:
    return [h.type for h in flatten(v)[0]]


def same_constant(a: Any, b: Any) -> bool:
    """Two compile-time values that can stand for each other after a branch or loop."""
    if isinstance(a, (Tensor, Handle, BlockPointer)) or isinstance(b, (Tensor, Handle, BlockPointer)):
        return False
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_constant(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a is b or a == b)


def has_tensor(v: Any) -> bool:
    """Whether ``v`` holds runtime values (tensors, or TLX buffers, barriers, tokens...)."""
    if isinstance(v, (Tensor, Handle, BlockPointer)):
        return True
    if isinstance(v, tuple):
        return any(has_tensor(x) for x in v)
    return False


def describe_types(types: list[Type]) -> str:
    if len(types) == 1:
        return str(types[0])
    return "(" + ", ".join(str(t) for t in types) + ")"


class LoopMemo:
    """Shared by the visitors of one kernel (inlined functions included): whether a loop's
    dry run is under way (``dry``, a depth) and the carried names found for each loop and
    scope (``carried``), so that nested loops are not visited exponentially often."""

    def __init__(self) -> None:
        self.dry = 0
        self.carried: dict[tuple, list[str]] = {}

    @staticmethod
    def key(node: ast.AST, scope: dict[str, Any]) -> tuple | None:
        """What the carried names of the loop ``node`` depend on: the types of the runtime
        values in ``scope``, which names hold the same value, and the constants (None when
        a constant cannot be hashed: then the loop is not remembered)."""
        seen: dict[int, int] = {}

        def part(v: Any) -> Any:
            if isinstance(v, (Tensor, Handle)):
                return ("value", v.type, seen.setdefault(id(v), len(seen)))
            if isinstance(v, tuple):
                return ("tuple",) + tuple(part(x) for x in v)
            return ("const", type(v), v)

        try:
            key = (node,) + tuple((name, part(scope[name])) for name in sorted(scope))
            hash(key)
        except TypeError:
            return None
        return key
