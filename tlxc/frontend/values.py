"""Values the frontend juggles while walking a kernel.

A runtime value is a ``Tensor`` (a scalar or a tile, wrapping one IR value). Everything
else is a compile-time constant held as a plain Python object: ints, floats, bools,
strings, None, dtypes, tuples (of constants and tensors), kernel functions, modules and
``tl`` builtins. Tuples may mix both kinds; ``flatten``/``unflatten`` turn them into the
list of IR values that crosses a region boundary and back.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..ir.core import Value
from ..ir.types import (
    BarrierType,
    DescPtrType,
    DType,
    MemDescType,
    PointerType,
    TensorDescType,
    TileType,
    TokenType,
    Type,
)
from ..language.core import constexpr
from .block_ptr import BlockPointer


class Tensor:
    """A runtime value of the kernel: a scalar or a tile."""

    __slots__ = ("handle",)

    def __init__(self, handle: Value) -> None:
        self.handle = handle

    @property
    def type(self) -> Type:
        return self.handle.type

    @property
    def dtype(self) -> DType | PointerType:
        return self.handle.type.scalar

    @property
    def shape(self) -> tuple[int, ...]:
        return self.handle.type.shape

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def is_tile(self) -> bool:
        return isinstance(self.handle.type, TileType)

    def __repr__(self) -> str:
        return f"Tensor({self.handle.type})"


class Handle:
    """A runtime value of the kernel that is not a number or a tile: a TLX buffer,
    mbarrier, async token or tensor descriptor. ``tl`` rules reject it (it is neither a
    Tensor nor a constant); ``tlx`` rules take it."""

    __slots__ = ("handle",)

    def __init__(self, handle: Value) -> None:
        self.handle = handle

    @property
    def type(self) -> Type:
        return self.handle.type

    def __repr__(self) -> str:
        return f"Handle({self.handle.type})"


def wrap(value: Value) -> "Tensor | Handle":
    """The frontend value for an IR value: a Tensor for scalars and tiles, else a Handle."""
    if isinstance(value.type, (DType, PointerType, TileType)):
        return Tensor(value)
    return Handle(value)


class KeptConstant(int):
    """An int that a builtin returns as ``tl.constexpr`` (``tlx.async_task_replica_id()``):
    as in Triton, assigning it to a name keeps it a compile-time value, where a plain
    number would become a runtime scalar."""


def is_named_tuple_class(cls: Any) -> bool:
    """Whether ``cls`` is a named tuple's class (``NamedTuple``, ``collections.namedtuple``)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def remake(v: tuple, items: Iterable[Any]) -> tuple:
    """A tuple like ``v`` of ``items``: a named tuple (a ``NamedTuple`` class) stays one."""
    return type(v)(*items) if is_named_tuple_class(type(v)) else tuple(items)


def unwrap(v: Any) -> Any:
    """Drop ``tl.constexpr`` wrappers (also inside tuples)."""
    if isinstance(v, constexpr):
        return unwrap(v.value)
    if isinstance(v, tuple):
        return remake(v, (unwrap(x) for x in v))
    return v


def type_of(v: Any) -> Any:
    """Triton's ``x.type`` of any kernel value: a tensor's or TLX value's IR type (a dtype
    for a scalar), ``tl.tuple_type`` of a tuple's members, ``tl.constexpr_type`` of a
    compile-time constant."""
    from ..language.core import constexpr_type, tuple_type

    if isinstance(v, (Tensor, Handle)):
        return v.type
    if isinstance(v, (tuple, list)):
        return tuple_type([type_of(x) for x in v])
    return constexpr_type(v)


def is_constexpr(v: Any) -> bool:
    """A compile-time constant: anything but a Tensor (tuples: all members constant)."""
    if isinstance(v, (Tensor, Handle, BlockPointer)):
        return False
    if isinstance(v, (tuple, list)):
        return all(is_constexpr(x) for x in v)
    return True


def flatten(v: Any) -> tuple[list[Value], Callable[[list[Value]], Any]]:
    """Split ``v`` into its IR values and a function that rebuilds ``v`` from new ones."""
    if isinstance(v, (Tensor, Handle)):
        return [v.handle], lambda vals: wrap(vals[0])
    if isinstance(v, BlockPointer):  # its runtime parts, as a tuple
        vals, rebuild_parts = flatten(v.parts())
        return vals, lambda new: v.rebuild(rebuild_parts(new))
    if isinstance(v, tuple):
        parts = [flatten(x) for x in v]
        counts = [len(p[0]) for p in parts]

        def rebuild(vals: list[Value]) -> Any:
            out, i = [], 0
            for (_, fn), n in zip(parts, counts):
                out.append(fn(vals[i:i + n]))
                i += n
            return remake(v, out)

        return [h for p in parts for h in p[0]], rebuild
    return [], lambda vals: v


def describe(v: Any) -> str:
    """How a value reads in an error message."""
    if isinstance(v, Tensor):
        t = v.type
        if isinstance(t, TileType):
            return f"tile of {t.scalar!r} with shape {list(t.shape)}"
        return f"scalar {t.scalar!r}"
    if isinstance(v, Handle):
        t = v.type
        if isinstance(t, MemDescType):
            dims = list(t.buf_shape)
            return (f"array of {t.num} buffers of {t.element!r} {dims}" if t.num
                    else f"buffer of {t.element!r} {dims}")
        if isinstance(t, BarrierType):
            return f"array of {t.num} mbarriers" if t.num else "mbarrier"
        if isinstance(t, TensorDescType):
            return f"tensor descriptor of {t.element!r} blocks {list(t.block_shape)}"
        if isinstance(t, DescPtrType):
            return f"storage for {t.num} tensor descriptor{'s' if t.num > 1 else ''}"
        if isinstance(t, TokenType):
            return "async token"
        return str(t)
    if isinstance(v, DType):
        return f"dtype {v!r}"
    if isinstance(v, BlockPointer):
        return f"block pointer to {v.base.type!r} blocks {list(v.block_shape)}"  # type: ignore[attr-defined]
    return f"constant {v!r}"
