"""``inline_asm``: ``tl.inline_asm_elementwise`` -- a snippet of the target's assembly
(PTX) applied to every element of its operands.

Operands are tiles of one shape (or scalars; the frontend broadcasts them), results are
that shape in the dtypes the user named. ``asm`` refers to its operands LLVM-style:
``$0 .. $(R-1)`` are the results, ``$R ..`` the operands, each one register per element;
``constraints`` lists their register kinds in that order, comma separated (``=r`` for a
32-bit output, ``r`` / ``l`` / ``h`` / ``f`` / ``d`` for 32-bit, 64-bit, 16-bit, f32 and
f64 inputs). ``pure``: the snippet has no side effects (kept as the user's promise; tlxc
never removes or merges asm either way). ``pack``: elements per snippet instance.
"""

from __future__ import annotations

from ..accessors import Attr, VariadicOperands
from ..core import Operation, register
from ..types import TileType
from .base import fail

CONSTRAINT_KINDS = ("r", "l", "h", "f", "d", "c")


def split_constraints(text: str) -> list[str]:
    """``"=r,r,=f"`` -> ``["=r", "r", "=f"]`` (outputs start with ``=``)."""
    return [c.strip() for c in text.split(",") if c.strip()]


@register
class InlineAsmOp(Operation):
    """Elementwise inline assembly (see the module doc)."""

    NAME = "inline_asm"
    OPERANDS = ("*args",)
    ATTRS = {"asm": Operation.REQUIRED, "constraints": Operation.REQUIRED, "pure": Operation.REQUIRED, "pack": 1}
    NUM_RESULTS = None

    args = VariadicOperands()
    asm = Attr[str]()
    constraints = Attr[str]()
    pure = Attr[bool]()
    pack = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if not isinstance(self.asm, str) or not isinstance(self.constraints, str):
            fail(self, "asm and constraints must be strings")
        if not self.results:
            fail(self, "inline_asm needs at least one result")
        cons = split_constraints(self.constraints)
        outs = [c for c in cons if c.startswith("=")]
        ins = [c for c in cons if not c.startswith("=")]
        if cons[:len(outs)] != outs:
            fail(self, f"output constraints must come first, got {self.constraints!r}")
        if len(outs) != len(self.results) or len(ins) != len(self.args):
            fail(self, f"constraints {self.constraints!r} name {len(outs)} outputs and {len(ins)} inputs; the op has "
                       f"{len(self.results)} results and {len(self.args)} operands")
        for c in cons:
            if c.lstrip("=") not in CONSTRAINT_KINDS:
                fail(self, f"unknown register constraint {c!r}; tlxc knows {', '.join(CONSTRAINT_KINDS)}")
        shapes = {v.type.shape if isinstance(v.type, TileType) else () for v in [*self.args, *self.results]}
        if len(shapes) > 1:
            fail(self, f"operands and results must have one shape, got {sorted(shapes)}")
        if not isinstance(self.pack, int) or self.pack < 1:
            fail(self, f"pack must be a positive integer, got {self.pack!r}")


__all__ = ["InlineAsmOp", "split_constraints", "CONSTRAINT_KINDS"]
