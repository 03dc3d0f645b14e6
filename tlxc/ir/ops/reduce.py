"""Reductions along one axis and the tile matrix product ``dot``."""

from __future__ import annotations

from ..accessors import Attr, Operand
from ..core import Operation, register
from .base import fail, is_float, is_int, is_ptr

REDUCE_KINDS = ("sum", "max", "min", "argmax", "argmin", "xor_sum")


@register
class ReduceOp(Operation):
    """Reduce ``x`` along ``axis``; the axis disappears (a scalar when rank becomes 0).

    ``sum``/``max``/``min``/``xor_sum`` keep the element type (the frontend converts
    first where Triton widens). ``argmax``/``argmin`` give the i32 index of the first
    extreme element. The order of a floating-point ``sum`` is the target's choice.
    """

    PURE = True
    NAME = "reduce"
    OPERANDS = ("x",)
    ATTRS = {"axis": Operation.REQUIRED, "kind": Operation.REQUIRED}

    x = Operand()
    axis = Attr[int]()
    kind = Attr[str]()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        kind, axis = self.kind, self.axis
        if kind not in REDUCE_KINDS:
            fail(self, f"unknown reduction {kind!r}")
        if not src.shape or not 0 <= axis < len(src.shape):
            fail(self, f"axis {axis} out of range for shape {src.shape}")
        if is_ptr(src):
            fail(self, "cannot reduce pointers")
        if kind == "xor_sum" and not is_int(src):
            fail(self, "xor_sum needs integers")
        shape = src.shape[:axis] + src.shape[axis + 1:]
        if dst.shape != shape:
            fail(self, f"result shape must be {shape}, got {dst.shape}")
        want = "i32" if kind in ("argmax", "argmin") else src.scalar.name
        if dst.scalar.name != want:
            fail(self, f"result element type must be {want}, got {dst.scalar}")


INPUT_PRECISIONS = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")


@register
class DotOp(Operation):
    """``a @ b + acc`` for [M, K] x [K, N] tiles (a leading batch dimension allowed)."""

    PURE = True
    NAME = "dot"
    OPERANDS = ("a", "b", "acc")
    ATTRS = {"input_precision": "ieee", "max_num_imprecise_acc": 0}

    a = Operand()
    b = Operand()
    acc = Operand()
    input_precision = Attr[str]()
    max_num_imprecise_acc = Attr[int]()

    def verify(self) -> None:
        super().verify()
        a, b, c = self.a.type, self.b.type, self.acc.type
        if len(a.shape) not in (2, 3) or len(a.shape) != len(b.shape) or len(c.shape) != len(a.shape):
            fail(self, f"dot needs tiles of rank 2 (or 3 with a batch), got {a}, {b}, {c}")
        if a.shape[-1] != b.shape[-2]:
            fail(self, f"inner dimensions differ: {a.shape} x {b.shape}")
        if a.shape[:-2] != b.shape[:-2]:
            fail(self, f"batch dimensions differ: {a.shape} x {b.shape}")
        if c.shape != a.shape[:-1] + b.shape[-1:]:
            fail(self, f"accumulator shape {c.shape} should be {a.shape[:-1] + b.shape[-1:]}")
        if a.scalar != b.scalar:
            fail(self, f"operand element types differ: {a.scalar} and {b.scalar}")
        if self.result.type != c:
            fail(self, "result type must equal the accumulator type")
        if self.input_precision not in INPUT_PRECISIONS:
            fail(self, f"unknown input precision {self.input_precision!r}")
        if is_float(a) != is_float(c):
            fail(self, f"accumulator {c.scalar} does not suit {a.scalar} inputs")
