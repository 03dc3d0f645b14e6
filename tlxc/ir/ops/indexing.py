"""Ops whose result is indexed by the values of another tile: ``gather`` (read ``src`` at
the coordinates an index tile gives) and ``histogram`` (count how often each value
occurs).

Both move data between threads in a pattern known only at run time, so the code
generators route them through shared memory; in the IR they are plain pure ops.
"""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand
from ..core import Operation, register
from ..types import DType, Kind, TileType
from .base import fail, is_i1, is_power_of_two


@register
class GatherOp(Operation):
    """``out[c] = src[c with c[axis] replaced by index[c]]`` for every coordinate ``c`` of
    ``index``: ``index`` has ``src``'s rank and its sizes except along ``axis``; the
    result has ``index``'s shape and ``src``'s element type. An index outside
    ``[0, src.shape[axis])`` is undefined behaviour (as in Triton)."""

    PURE = True
    NAME = "gather"
    OPERANDS = ("src", "index")
    ATTRS = {"axis": Operation.REQUIRED}

    src = Operand()
    index = Operand()
    axis = Attr[int]()

    def verify(self) -> None:
        super().verify()
        src, index, dst = self.src.type, self.index.type, self.result.type
        if not isinstance(src, TileType) or not isinstance(index, TileType) or not isinstance(dst, TileType):
            fail(self, f"gather works on tiles, got {src}, {index} -> {dst}")
        idx = index.scalar
        if not isinstance(idx, DType) or idx.kind not in (Kind.INT, Kind.UINT):
            fail(self, f"index must be an integer tile, got {index}")
        rank = len(src.shape)
        if len(index.shape) != rank:
            fail(self, f"index has rank {len(index.shape)}, src has rank {rank}")
        axis = self.axis
        if not 0 <= axis < rank:
            fail(self, f"axis {axis} out of range for rank {rank}")
        for d in range(rank):
            if d != axis and index.shape[d] != src.shape[d]:
                fail(self, f"index shape {index.shape} differs from src shape {src.shape} in dim {d} (not the axis)")
        if dst.shape != index.shape or dst.scalar != src.scalar:
            fail(self, f"result must be {src.scalar} of shape {index.shape}, got {dst}")


@register
class HistogramOp(Operation):
    """How many elements of the 1-D integer tile ``x`` (where ``mask`` is true) equal each
    of ``0 .. n-1``, for a result of ``tile<n x i32>`` (``n`` a power of two); elements
    outside ``[0, n)`` are not counted."""

    PURE = True
    NAME = "histogram"
    OPERANDS = ("x", "?mask")

    x = Operand()
    mask = OptionalOperand()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        if not isinstance(src, TileType) or len(src.shape) != 1:
            fail(self, f"histogram needs a 1-D tile, got {src}")
        e = src.scalar
        if not isinstance(e, DType) or e.kind == Kind.FLOAT:
            fail(self, f"histogram needs integers, got {src}")
        mask = self.mask
        if mask is not None and (not is_i1(mask.type) or mask.type.shape != src.shape):
            fail(self, f"mask must be i1 of shape {src.shape}, got {mask.type}")
        if not isinstance(dst, TileType) or len(dst.shape) != 1 or dst.scalar.ir_name != "i32" \
                or not is_power_of_two(dst.shape[0]):
            fail(self, f"result must be a 1-D i32 tile of a power-of-two size, got {dst}")
