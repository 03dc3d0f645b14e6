"""``scan``: the inclusive scan of one or more tiles along one axis with a combine region."""

from __future__ import annotations

from ..accessors import Attr, VariadicOperands
from ..core import Block, Operation, register
from ..types import DType, TileType
from .base import fail


@register
class ScanOp(Operation):
    """The inclusive scan of ``inputs`` (n tiles of one shape) along ``axis``.

    The region combines two positions: its block takes ``2n`` scalars, the n values of
    the earlier position then the n of the later one, and yields n scalars of the inputs'
    element types. Result ``k`` at position ``i`` is the combination of positions
    ``0..i`` in order; with ``reverse`` the scan runs from the end (the scan of the tiles
    flipped along ``axis``, flipped back), so the earlier position is the one with the
    higher index. The combination must be associative: the targets group the steps as
    their layouts suit.
    """

    PURE = True
    NAME = "scan"
    OPERANDS = ("*inputs",)
    ATTRS = {"axis": Operation.REQUIRED, "reverse": False}
    NUM_RESULTS = None
    NUM_REGIONS = 1

    inputs = VariadicOperands()
    axis = Attr[int]()
    reverse = Attr[bool]()

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def verify(self) -> None:
        super().verify()
        inputs = list(self.inputs)
        if not inputs:
            fail(self, "scan needs at least one input")
        shape = None
        elements: list[DType] = []
        for v in inputs:
            t = v.type
            if not isinstance(t, TileType) or not isinstance(t.element, DType):
                fail(self, f"scan inputs must be tiles of numbers, got {t}")
            if shape is None:
                shape = t.shape
            elif t.shape != shape:
                fail(self, f"scan inputs must have one shape, got {shape} and {t.shape}")
            elements.append(t.element)
        assert shape is not None
        if not isinstance(self.axis, int) or not 0 <= self.axis < len(shape):
            fail(self, f"axis {self.axis} out of range for shape {shape}")
        if not isinstance(self.reverse, bool):
            fail(self, f"reverse must be a bool, got {self.reverse!r}")
        if [r.type for r in self.results] != [v.type for v in inputs]:
            fail(self, "results must have the input types")
        args = [a.type for a in self.body.args]
        if args != elements * 2:
            fail(self, f"the combine region takes {[str(e) for e in elements * 2]}, got {[str(a) for a in args]}")
        term = self.body.ops[-1] if self.body.ops else None
        if term is None or term.NAME != "yield":
            fail(self, "the combine region must end in 'yield'")
        if [v.type for v in term.operands] != elements:
            fail(self, f"the combine region must yield {[str(e) for e in elements]}, got "
                 f"{[str(v.type) for v in term.operands]}")


__all__ = ["ScanOp"]
