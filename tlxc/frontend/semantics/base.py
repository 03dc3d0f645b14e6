"""The semantic layer's shared pieces: the builtin registry, the context handed to every
rule, and conversions between Python constants and IR values.

A rule is a function ``rule(ctx, *args, **kwargs)`` registered under the name of its
``tl`` builtin. Arguments arrive as frontend values (``Tensor`` or Python constants);
rules raise ``SemanticError`` for user mistakes and the AST visitor attaches the user's
line. Rules know types and shapes, never Python syntax.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ...errors import SemanticError
from ...ir import ops
from ...ir.builder import Builder
from ...ir.types import DType, Kind, PointerType, TileType, Type, float32, float64, int1, int32, int64, uint32, uint64
from ...ir.types import with_shape as _with_shape
from ...language.core import TRITON_MAX_TENSOR_NUMEL, NotYetDType
from ..values import Tensor, describe, unwrap

RULES: dict[str, Callable[..., Any]] = {}
MAX_TILE_ELEMENTS = TRITON_MAX_TENSOR_NUMEL  # Triton's limit, which kernels can read as tl.TRITON_MAX_TENSOR_NUMEL


def rule(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the semantic rule of the ``tl`` builtins ``names``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            RULES[n] = fn
        return fn

    return deco


class Ctx:
    """What a rule may use: the IR builder (positioned and located by the visitor)."""

    def __init__(self, builder: Builder) -> None:
        self.b = builder


def fail(code: str, message: str, help: str | None = None) -> None:
    raise SemanticError(code, message, help)


# -- constants ---------------------------------------------------------------------------
def python_dtype(v: Any) -> DType:
    """The dtype Triton gives a Python constant."""
    if isinstance(v, bool):
        return int1
    if isinstance(v, int):
        if -(2 ** 31) <= v < 2 ** 31:
            return int32
        if 2 ** 31 <= v < 2 ** 32:
            return uint32
        if -(2 ** 63) <= v < 2 ** 63:
            return int64
        if 2 ** 63 <= v < 2 ** 64:
            return uint64
        fail("TLXC-TYPE-001", f"integer constant {v} does not fit in 64 bits")
    if isinstance(v, float):
        a = abs(v)
        if a == math.inf or a == 0.0 or v != v or 2.0 ** -126 <= a <= (2 - 2.0 ** -23) * 2.0 ** 127:
            return float32
        return float64
    fail("TLXC-TYPE-001", f"{describe(v)} cannot be used as a number here")
    raise AssertionError


def is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float)) and not isinstance(v, Tensor)


def constant(ctx: Ctx, value: Any, dtype: DType, shape: tuple[int, ...] = ()) -> Tensor:
    """A constant of ``dtype`` (a splat tile when ``shape`` is given)."""
    if isinstance(dtype, PointerType):
        fail("TLXC-TYPE-001", "pointer constants are not supported")
    if dtype.kind == Kind.FLOAT:
        value = float(value)
    elif dtype.kind == Kind.BOOL:
        value = bool(value)
    else:
        if isinstance(value, float):
            if value != value or value in (math.inf, -math.inf):
                fail("TLXC-TYPE-001", f"cannot convert {value} to {dtype!r}")
            value = int(value)
        value = int(value)
        lo, hi = int_range(dtype)
        if not lo <= value <= hi:
            fail("TLXC-TYPE-001", f"constant {value} is out of range for {dtype!r} [{lo}, {hi}]")
    return Tensor(ctx.b.value(ops.ConstantOp, [], _with_shape(dtype, shape), value=value))


def int_range(d: DType) -> tuple[int, int]:
    if d.kind == Kind.BOOL:
        return 0, 1
    if d.kind == Kind.UINT:
        return 0, 2 ** d.bits - 1
    return -(2 ** (d.bits - 1)), 2 ** (d.bits - 1) - 1


def to_tensor(ctx: Ctx, v: Any, dtype: DType | None = None) -> Tensor:
    """``v`` as a runtime value; Python numbers become constants of their Triton dtype
    (or of ``dtype`` when given)."""
    v = unwrap(v)
    if isinstance(v, Tensor):
        return v
    if is_number(v):
        return constant(ctx, v, dtype or python_dtype(v))
    fail("TLXC-TYPE-001", f"expected a tensor or a number, got {describe(v)}")
    raise AssertionError


def const_value(v: Any, what: str, types: tuple[type, ...] = (int,)) -> Any:
    """``v`` as a compile-time constant of one of ``types`` or a clear error."""
    v = unwrap(v)
    if isinstance(v, Tensor):
        fail("TLXC-CONSTEXPR-001", f"{what} must be a compile-time constant (tl.constexpr), got a runtime "
                                   f"{describe(v)}")
    if types and (not isinstance(v, types) or (isinstance(v, bool) and bool not in types)):
        names = " or ".join(t.__name__ for t in types)
        fail("TLXC-CONSTEXPR-001", f"{what} must be a constant {names}, got {describe(v)}")
    return v


def const_shape(v: Any, what: str = "shape") -> tuple[int, ...]:
    v = unwrap(v)
    if isinstance(v, (list, tuple)):
        dims = tuple(const_value(d, f"{what} dimension") for d in v)
    else:
        dims = (const_value(v, what),)
    check_shape(dims)
    return dims


def check_shape(shape: tuple[int, ...]) -> None:
    """Tile dimensions are powers of two and a tile has at most 2**20 elements."""
    n = 1
    for i, d in enumerate(shape):
        if not isinstance(d, int) or d <= 0 or d & (d - 1):
            fail("TLXC-SHAPE-003", f"tile dimension {i} is {d}; tile dimensions must be powers of two")
        n *= d
    if n > MAX_TILE_ELEMENTS:
        fail("TLXC-SHAPE-003", f"tile of shape {list(shape)} has {n} elements; the limit is {MAX_TILE_ELEMENTS}")


def dtype_arg(v: Any, what: str = "dtype") -> DType | PointerType:
    v = unwrap(v)
    if not isinstance(v, (DType, PointerType)):
        if isinstance(v, NotYetDType):
            fail("TLXC-NAME-002", v.refusal)
        fail("TLXC-TYPE-001", f"{what} must be a dtype such as tl.float32, got {describe(v)}")
    return v


def axis_arg(v: Any, rank: int) -> int:
    a = const_value(v, "axis")
    if not -rank <= a < rank:
        fail("TLXC-SHAPE-003", f"axis {a} is out of range for a tile of rank {rank}")
    return a % rank


def shaped(element: DType | PointerType, shape: tuple[int, ...]) -> Type:
    return _with_shape(element, shape)


def result_like(t: Tensor, element: DType | PointerType) -> Type:
    return TileType(t.shape, element) if t.shape else element


__all__ = [
    "RULES", "Ctx", "rule", "fail", "python_dtype", "is_number", "constant", "int_range", "to_tensor",
    "const_value", "const_shape", "check_shape", "dtype_arg", "axis_arg", "shaped", "result_like",
    "float32", "float64", "int1", "int32", "int64", "uint32", "uint64",
]
