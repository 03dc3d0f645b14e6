"""Ops that create tiles or move their elements: arange, splat, broadcast, expand_dims,
reshape, trans, join and split."""

from __future__ import annotations

from ..accessors import Attr, Operand
from ..core import Operation, register
from ..types import TileType
from .base import fail, is_power_of_two


@register
class ArangeOp(Operation):
    """``[start, start+1, ..., end-1]`` as a 1-D i32 tile; ``end - start`` is a power of two."""

    PURE = True
    NAME = "arange"
    ATTRS = {"start": Operation.REQUIRED, "end": Operation.REQUIRED}

    start = Attr[int]()
    end = Attr[int]()

    def verify(self) -> None:
        super().verify()
        n = self.end - self.start
        if not is_power_of_two(n):
            fail(self, f"arange length {n} is not a power of two")
        t = self.result.type
        if not isinstance(t, TileType) or t.shape != (n,) or t.scalar.ir_name != "i32":
            fail(self, f"result must be tile<{n}xi32>, got {t}")


@register
class SplatOp(Operation):
    """A tile whose every element is the scalar operand."""

    PURE = True
    NAME = "splat"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        if isinstance(src, TileType) or not isinstance(dst, TileType):
            fail(self, f"splat takes a scalar and gives a tile: {src} -> {dst}")
        if dst.scalar != src:
            fail(self, f"element type changes: {src} -> {dst}")


@register
class BroadcastOp(Operation):
    """Repeat dimensions of size 1 to the result shape (same rank)."""

    PURE = True
    NAME = "broadcast"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        if not isinstance(src, TileType) or not isinstance(dst, TileType):
            fail(self, "broadcast works on tiles")
        if len(src.shape) != len(dst.shape) or src.scalar != dst.scalar:
            fail(self, f"broadcast keeps rank and element type: {src} -> {dst}")
        for a, b in zip(src.shape, dst.shape):
            if a != b and a != 1:
                fail(self, f"cannot broadcast {src.shape} to {dst.shape}")


@register
class ExpandDimsOp(Operation):
    """Insert a dimension of size 1 at ``axis``."""

    PURE = True
    NAME = "expand_dims"
    OPERANDS = ("x",)
    ATTRS = {"axis": Operation.REQUIRED}

    x = Operand()
    axis = Attr[int]()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        shape = list(src.shape)
        axis = self.axis
        if not 0 <= axis <= len(shape):
            fail(self, f"axis {axis} out of range for rank {len(shape)}")
        shape.insert(axis, 1)
        if dst.shape != tuple(shape) or dst.scalar != src.scalar:
            fail(self, f"expected tile of shape {tuple(shape)}, got {dst}")


@register
class ReshapeOp(Operation):
    """Same elements in row-major order, new shape. ``can_reorder`` lets the compiler
    permute elements (Triton's ``can_reorder=True``), which the interpreter does not."""

    PURE = True
    NAME = "reshape"
    OPERANDS = ("x",)
    ATTRS = {"can_reorder": False}

    x = Operand()
    can_reorder = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        n_src = 1
        for d in src.shape:
            n_src *= d
        n_dst = 1
        for d in dst.shape:
            n_dst *= d
        if n_src != n_dst or src.scalar != dst.scalar:
            fail(self, f"reshape keeps the element count and type: {src} -> {dst}")


@register
class TransOp(Operation):
    """Permute dimensions: result dim i is operand dim ``order[i]``."""

    PURE = True
    NAME = "trans"
    OPERANDS = ("x",)
    ATTRS = {"order": Operation.REQUIRED}

    x = Operand()
    order = Attr[tuple[int, ...]]()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        order = tuple(self.order)
        if sorted(order) != list(range(len(src.shape))):
            fail(self, f"order {order} is not a permutation of rank {len(src.shape)}")
        if dst.shape != tuple(src.shape[i] for i in order) or dst.scalar != src.scalar:
            fail(self, f"result {dst} does not match {src} permuted by {order}")


@register
class JoinOp(Operation):
    """Stack two tiles of one type along a new last dimension of size 2."""

    PURE = True
    NAME = "join"
    OPERANDS = ("lhs", "rhs")

    lhs = Operand()
    rhs = Operand()

    def verify(self) -> None:
        super().verify()
        a, b = self.lhs, self.rhs
        if a.type != b.type:
            fail(self, f"join needs equal types, got {a.type} and {b.type}")
        if self.result.type.shape != a.type.shape + (2,) or self.result.type.scalar != a.type.scalar:
            fail(self, f"result must have shape {a.type.shape + (2,)}")


@register
class SplitOp(Operation):
    """Split a tile whose last dimension is 2 into its two halves."""

    PURE = True
    NAME = "split"
    OPERANDS = ("x",)
    NUM_RESULTS = 2

    x = Operand()

    def verify(self) -> None:
        super().verify()
        src = self.x.type
        if not src.shape or src.shape[-1] != 2:
            fail(self, f"split needs a last dimension of 2, got shape {src.shape}")
        for r in self.results:
            if r.type.shape != src.shape[:-1] or r.type.scalar != src.scalar:
                fail(self, f"results must have shape {src.shape[:-1]}")


@register
class ConvertLayoutOp(Operation):
    """The same tile in another layout (data moves between threads); inserted by layout
    assignment, never written by users."""

    PURE = True
    NAME = "convert_layout"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        if not isinstance(src, TileType) or not isinstance(dst, TileType):
            fail(self, "convert_layout works on tiles")
        if src.shape != dst.shape or src.scalar != dst.scalar:
            fail(self, f"convert_layout keeps shape and element type: {src} -> {dst}")
