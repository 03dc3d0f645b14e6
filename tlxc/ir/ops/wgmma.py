"""Asynchronous tensor-core MMA (Hopper wgmma): ``async_dot`` starts ``a @ b (+ acc)``
with ``b`` (and optionally ``a``) in shared memory; its result may only be read after an
``async_dot_wait`` retires its group."""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand, VariadicOperands
from ..core import Operation, register
from ..effects import Sync, read
from ..types import MemDescType, TileType
from .base import fail, is_i1
from .reduce import INPUT_PRECISIONS


def _matrix_shape(t: object) -> tuple[int, ...] | None:
    if isinstance(t, MemDescType) and not t.num:
        return t.buf_shape
    if isinstance(t, TileType):
        return t.shape
    return None


@register
class AsyncDotOp(Operation):
    """``a @ b + acc`` (``acc`` absent or ``use_acc`` false: ``a @ b``). ``a`` is a buffer or
    a register tile, ``b`` a buffer."""

    NAME = "async_dot"
    OPERANDS = ("a", "b", "?acc", "?use_acc")
    ATTRS = {"input_precision": "tf32"}
    MEMORY = (read("a", "async"), read("b", "async"))  # the operands that are buffers

    a = Operand()
    b = Operand()
    acc = OptionalOperand()
    use_acc = OptionalOperand()
    input_precision = Attr[str]()

    def verify(self) -> None:
        super().verify()
        a, b = self.a.type, self.b.type
        sa, sb = _matrix_shape(a), _matrix_shape(b)
        if sa is None or len(sa) != 2:
            fail(self, f"a must be a rank-2 buffer or tile, got {a}")
        if not isinstance(b, MemDescType) or sb is None or len(sb) != 2:
            fail(self, f"b must be a rank-2 buffer in shared memory, got {b}")
        assert sa is not None and sb is not None
        if sa[1] != sb[0]:
            fail(self, f"inner dimensions differ: {list(sa)} x {list(sb)}")
        if a.scalar != b.scalar:
            fail(self, f"operand element types differ: {a.scalar} and {b.scalar}")
        t = self.result.type
        if not isinstance(t, TileType) or t.shape != (sa[0], sb[1]):
            fail(self, f"result must be a tile of shape {[sa[0], sb[1]]}, got {t}")
        acc = self.acc
        if acc is not None and acc.type != t:
            fail(self, f"acc must have the result type {t}, got {acc.type}")
        use = self.use_acc
        if use is not None and (not is_i1(use.type) or use.type.shape):
            fail(self, f"use_acc must be a scalar i1, got {use.type}")
        if self.input_precision not in INPUT_PRECISIONS:
            fail(self, f"unknown input precision {self.input_precision!r}")


@register
class AsyncDotWaitOp(Operation):
    """Wait until at most ``pendings`` async_dot groups are in flight; the results are the
    operands, now safe to read."""

    NAME = "async_dot_wait"
    OPERANDS = ("*values",)
    ATTRS = {"pendings": Operation.REQUIRED}
    SYNC = (Sync("wait"),)
    RETIRES = ("async_dot",)
    RETIRES_ALL_AT_ZERO = True
    NUM_RESULTS = None

    values = VariadicOperands()
    pendings = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if [r.type for r in self.results] != [v.type for v in self.values]:
            fail(self, "results must have the operands' types")
        if not isinstance(self.pendings, int) or self.pendings < 0:
            fail(self, f"pendings must be a non-negative integer, got {self.pendings}")
