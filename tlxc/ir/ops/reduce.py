"""Reductions along one axis and the tile matrix product ``dot``."""

from __future__ import annotations

from ..accessors import Attr, Operand, VariadicOperands
from ..core import Block, Operation, register
from ..types import TileType
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
        want = "i32" if kind in ("argmax", "argmin") else src.scalar.ir_name
        if dst.scalar.ir_name != want:
            fail(self, f"result element type must be {want}, got {dst.scalar}")


@register
class ReduceCombineOp(Operation):
    """``tl.reduce(xs, axis, combine_fn)``: reduce ``n`` tiles of one shape together along
    ``axis`` with a user's combine function, held as the op's region.

    The region's block takes ``2n`` scalars -- an accumulated ``a`` tuple then a ``b``
    tuple, with the operands' element types -- and ends in ``yield`` of ``n`` scalars
    of the same types; result ``i`` is operand ``i`` with the axis removed (a scalar at
    rank 0). Every value the region computes is a scalar, so each target applies it to
    one pair of registers at a time. Which pairs are combined, and in which order, is the
    target's choice (as in Triton): the function is meant to be associative and
    commutative.
    """

    PURE = True
    NAME = "reduce_combine"
    OPERANDS = ("*xs",)
    ATTRS = {"axis": Operation.REQUIRED}
    NUM_RESULTS = None
    NUM_REGIONS = 1

    xs = VariadicOperands()
    axis = Attr[int]()

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def verify(self) -> None:
        super().verify()
        xs, axis = list(self.xs), self.axis
        if not xs:
            fail(self, "needs at least one operand")
        shape = xs[0].type.shape
        if not shape or not isinstance(axis, int) or not 0 <= axis < len(shape):
            fail(self, f"axis {axis} out of range for shape {shape}")
        if any(x.type.shape != shape for x in xs):
            fail(self, f"operands must have one shape, got {[x.type.shape for x in xs]}")
        if any(is_ptr(x.type) for x in xs):
            fail(self, "cannot reduce pointers")
        scalars = [x.type.scalar for x in xs]

        def names(ts: list) -> str:
            return "[" + ", ".join(str(t) for t in ts) + "]"

        out = shape[:axis] + shape[axis + 1:]
        if len(self.results) != len(xs):
            fail(self, f"{len(xs)} operands need {len(xs)} results, got {len(self.results)}")
        for r, t in zip(self.results, scalars):
            if r.type.shape != out or r.type.scalar != t:
                fail(self, f"result types must be the operands' element types of shape {out}, got {r.type}")
        block = self.body
        if [a.type for a in block.args] != scalars + scalars:
            fail(self, f"block arguments must be two sets of the operands' element types {names(scalars)}, "
                       f"got {names([a.type for a in block.args])}")
        term = block.ops[-1] if block.ops else None
        if term is None or term.NAME != "yield":
            fail(self, "the combine region must end in 'yield'")
        if [v.type for v in term.operands] != scalars:
            fail(self, f"the combine region must yield {names(scalars)}, got {names([v.type for v in term.operands])}")
        for inner in self.walk():
            if inner is not self and any(isinstance(v.type, TileType) for v in inner.results):
                fail(self, f"the combine region computes scalars only, but '{inner.NAME}' makes a tile")


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
