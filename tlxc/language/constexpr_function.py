"""``@tlxc.constexpr_function`` (also ``tl.constexpr_function``; Triton's
``triton.constexpr_function``): a plain Python function that kernels may call at compile
time.

On the host it is the function itself. Inside a kernel the frontend calls it while it
compiles, on compile-time values only (numbers, dtypes, shapes, strings, tuples of them;
``tl.constexpr`` wrappers are taken off), and its result is a compile-time value::

    @tlxc.constexpr_function
    def tile_for(n):
        return min(tlxc.next_power_of_2(n), 1024)

    @tlxc.jit
    def k(x, N: tl.constexpr):
        offs = tl.arange(0, tile_for(N))    # folded: tile_for(N) is a number here

A runtime value as an argument is refused at the call (the function would compute on a
value that does not exist yet); ``tlxc.cdiv`` and ``tlxc.next_power_of_2`` are such
functions, and ``tl.cdiv`` is the one for runtime values.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from .core import constexpr


def _unwrap(v: Any) -> Any:
    return v.value if isinstance(v, constexpr) else v


class ConstexprFunction:
    """A function marked with ``constexpr_function``: called as it is on the host, and at
    compile time from kernels (``tlxc/frontend/calls.py``)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"constexpr_function needs a function, got {fn!r}")
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # grid functions call tlxc.cdiv at every launch: plain arguments go straight through
        for a in args:
            if isinstance(a, constexpr):
                break
        else:
            if not kwargs:
                return self.fn(*args)
        return self.fn(*(_unwrap(a) for a in args), **{k: _unwrap(v) for k, v in kwargs.items()})

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # a method: bound to its object as a plain function would be, and still a
        # constexpr_function for kernels
        return self if obj is None else ConstexprFunction(functools.partial(self.fn, obj))

    def __repr__(self) -> str:
        return f"<constexpr_function {getattr(self.fn, '__qualname__', self.fn)!r}>"


def constexpr_function(fn: Callable[..., Any]) -> ConstexprFunction:
    """Mark ``fn`` as callable from kernels at compile time on compile-time arguments,
    its result a compile-time value (Triton's ``triton.constexpr_function``)."""
    return ConstexprFunction(fn)
