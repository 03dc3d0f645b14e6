"""Tuples as kernel arguments, as Triton takes them: ``kernel[grid](out, (x_ptr,
tl.constexpr(3)), shape, strides)``.

A runtime parameter given a tuple is specialized leaf by leaf: each member is an argument
of its own, named by its path (``values.0``, ``values.1.0`` for a nested tuple) -- a
pointer, number or descriptor a runtime parameter of the variant, a ``tl.constexpr``
member or a ``@jit`` function a constant, a None member the constant None; a named tuple
stays one. The parameter itself maps to a
``TupleArg`` among the variant's constants, which records the members in order; the
kernel sees a Python tuple of the leaves' values, and a launch passes the runtime leaves
in the order ``leaf_order`` gives (the variant's parameter order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..language.core import constexpr
from .values import is_named_tuple_class


@dataclass(frozen=True)
class TupleArg:
    """The members of a tuple argument: a leaf's name, or a nested tuple's ``TupleArg``;
    ``kind`` the class of a named tuple (``closure.fn`` reads its field), else None."""

    members: tuple["str | TupleArg", ...]
    kind: type | None = None

    def leaves(self) -> list[str]:
        out: list[str] = []
        for m in self.members:
            out += m.leaves() if isinstance(m, TupleArg) else [m]
        return out


def split_tuple(name: str, value: tuple, spec: Callable[[str, Any], Any], specs: dict[str, Any],
                consts: dict[str, Any]) -> TupleArg:
    """Specialize the members of ``value``, the tuple given for parameter ``name``:
    ``spec(leaf_name, member)`` for a runtime member into ``specs``, constants into
    ``consts``."""
    from .function import KernelDef

    members: list[str | TupleArg] = []
    for i, x in enumerate(value):
        leaf = f"{name}.{i}"
        if isinstance(x, tuple):
            members.append(split_tuple(leaf, x, spec, specs, consts))
            continue
        if isinstance(x, constexpr):
            consts[leaf] = x.value
        elif isinstance(x, KernelDef):  # a @jit function: a constant, as Triton takes one
            consts[leaf] = x
        elif x is None:
            consts[leaf] = None
        else:
            specs[leaf] = spec(leaf, x)
        members.append(leaf)
    return TupleArg(tuple(members), type(value) if is_named_tuple_class(type(value)) else None)


def leaf_order(params: Iterable[str], specs: dict[str, Any], consts: dict[str, Any]) -> list[str]:
    """The runtime parameters of a variant in order: the kernel's, a tuple's leaves in its
    place; those without a spec (constants) left out."""
    out: list[str] = []
    for p in params:
        t = consts.get(p)
        for leaf in t.leaves() if isinstance(t, TupleArg) else [p]:
            if leaf in specs:
                out.append(leaf)
    return out


def flat_values(values: dict[str, Any]) -> dict[str, Any]:
    """Launch arguments by name with each tuple's members under their leaf names too."""
    out = dict(values)

    def add(name: str, v: tuple) -> None:
        for i, x in enumerate(v):
            leaf = f"{name}.{i}"
            out[leaf] = x
            if isinstance(x, tuple):
                add(leaf, x)

    for k, v in values.items():
        if isinstance(v, tuple):
            add(k, v)
    return out


def rebuild(t: TupleArg, leaf: Callable[[str], Any]) -> tuple:
    """The tuple the kernel sees: ``leaf(name)`` for each leaf, nested as given (a named
    tuple as its own class)."""
    values = [rebuild(m, leaf) if isinstance(m, TupleArg) else leaf(m) for m in t.members]
    return t.kind(*values) if t.kind is not None else tuple(values)
