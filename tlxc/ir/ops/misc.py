"""Program ids, assertions and compiler hints."""

from __future__ import annotations

from ..accessors import Attr, Operand
from ..core import Operation, register
from .base import fail, is_i1


class _Axis(Operation):
    PURE = True
    ATTRS = {"axis": Operation.REQUIRED}

    axis = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if self.axis not in (0, 1, 2):
            fail(self, f"axis must be 0, 1 or 2, got {self.axis}")
        if self.result.type.shape or self.result.type.scalar.name != "i32":
            fail(self, "result must be a scalar i32")


@register
class ProgramIdOp(_Axis):
    """Index of this program along ``axis`` of the launch grid."""

    NAME = "program_id"


@register
class NumProgramsOp(_Axis):
    """Size of the launch grid along ``axis``."""

    NAME = "num_programs"


@register
class AssertOp(Operation):
    """Runtime check: every element of ``cond`` must be true, else the kernel stops with
    ``message``."""

    NAME = "assert"
    OPERANDS = ("cond",)
    ATTRS = {"message": ""}
    NUM_RESULTS = 0
    PURE = False

    cond = Operand()
    message = Attr[str]()

    def verify(self) -> None:
        super().verify()
        if not is_i1(self.cond.type):
            fail(self, f"assert needs an i1 condition, got {self.cond.type}")


@register
class AssumeOp(Operation):
    """A promise that ``cond`` holds; the code generators may rely on it."""

    NAME = "assume"
    OPERANDS = ("cond",)
    NUM_RESULTS = 0
    PURE = False

    cond = Operand()

    def verify(self) -> None:
        super().verify()
        if not is_i1(self.cond.type):
            fail(self, f"assume needs an i1 condition, got {self.cond.type}")


class _Hint(Operation):
    PURE = True
    OPERANDS = ("x",)
    ATTRS = {"values": Operation.REQUIRED}

    x = Operand()
    values = Attr[tuple[int, ...]]()

    def verify(self) -> None:
        super().verify()
        t = self.x.type
        if self.result.type != t:
            fail(self, "a hint returns its operand unchanged")
        vals = tuple(self.values)
        if len(vals) != max(1, len(t.shape)):
            fail(self, f"needs one value per dimension ({max(1, len(t.shape))}), got {len(vals)}")
        if any((not isinstance(v, int)) or v < 1 for v in vals):
            fail(self, f"values must be positive integers, got {vals}")


@register
class MultipleOfOp(_Hint):
    """The operand's elements are multiples of ``values`` (per dimension)."""

    NAME = "multiple_of"


@register
class MaxContiguousOp(_Hint):
    """Runs of ``values`` consecutive elements of the operand are consecutive integers."""

    NAME = "max_contiguous"
