"""Shared checks used by the ``verify()`` methods of the op classes."""

from __future__ import annotations

from typing import NoReturn

from ..core import Operation, Value, VerificationError
from ..types import DType, Kind, PointerType, TileType, Type


def fail(op: Operation, message: str) -> NoReturn:
    raise VerificationError(message, op)


def shape_of(t: Type) -> tuple[int, ...]:
    return t.shape


def elem(t: Type) -> DType | PointerType:
    return t.scalar


def is_float(t: Type) -> bool:
    e = t.scalar
    return isinstance(e, DType) and e.kind == Kind.FLOAT


def is_int(t: Type) -> bool:
    e = t.scalar
    return isinstance(e, DType) and e.kind != Kind.FLOAT


def is_ptr(t: Type) -> bool:
    return isinstance(t.scalar, PointerType)


def is_i1(t: Type) -> bool:
    return t.scalar == DType("i1", Kind.BOOL, 1, "int1", "i1")


def same_types(op: Operation, values: list[Value]) -> None:
    types = {v.type for v in values}
    if len(types) > 1:
        fail(op, "operands must have the same type, got " + ", ".join(str(v.type) for v in values))


def result_shape_matches(op: Operation, shape: tuple[int, ...]) -> None:
    if op.result.type.shape != tuple(shape):
        fail(op, f"result shape {op.result.type.shape} should be {tuple(shape)}")


def is_power_of_two(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def tile_or_scalar(t: Type) -> bool:
    return isinstance(t, (DType, PointerType, TileType))
