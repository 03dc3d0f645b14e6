"""Helpers on the variable scopes that the AST visitor keeps while it walks control flow."""

from __future__ import annotations

import ast
from typing import Any

from ..ir.types import Type
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
    if isinstance(a, (Tensor, Handle)) or isinstance(b, (Tensor, Handle)):
        return False
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_constant(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a is b or a == b)


def has_tensor(v: Any) -> bool:
    """Whether ``v`` holds runtime values (tensors, or TLX buffers, barriers, tokens...)."""
    if isinstance(v, (Tensor, Handle)):
        return True
    if isinstance(v, tuple):
        return any(has_tensor(x) for x in v)
    return False


def describe_types(types: list[Type]) -> str:
    if len(types) == 1:
        return str(types[0])
    return "(" + ", ".join(str(t) for t in types) + ")"
