"""Program ids, assertions, device printing and compiler hints."""

from __future__ import annotations

from ..accessors import Attr, Operand, VariadicOperands
from ..core import Operation, register
from ..types import DType, Kind, PointerType, TileType
from .base import fail, is_i1


class _Axis(Operation):
    PURE = True
    ATTRS = {"axis": Operation.REQUIRED}

    axis = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if self.axis not in (0, 1, 2):
            fail(self, f"axis must be 0, 1 or 2, got {self.axis}")
        if self.result.type.shape or self.result.type.scalar.ir_name != "i32":
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


# The most values one ``print`` takes. Each value becomes its own printf call per element
# (pid, index and the element: at most 3 + rank + 1 printf arguments, well under the 32
# that CUDA's vprintf reads), so the limit bounds the code one call expands to, not a
# hardware limit; it is the number of arguments CUDA's printf accepts.
MAX_PRINT_VALUES = 32

# The element types printf has a conversion for: C's %i/%u/%lli/%llu for integers and
# booleans, %f for the floats that convert to double exactly, %p for pointers (fp8
# formats have no C type and are refused: cast them to float32 first).
PRINTABLE_FLOATS = ("f16", "bf16", "f32", "f64")


def printable(t: DType | PointerType) -> bool:
    if isinstance(t, PointerType):
        return True
    return t.kind in (Kind.BOOL, Kind.INT, Kind.UINT) or t.ir_name in PRINTABLE_FLOATS


@register
class PrintOp(Operation):
    """``tl.device_print``: every thread prints ``prefix`` and, for each of ``args`` (scalars
    or tiles, each of its own shape), each element it holds with the program id and the
    element's index, in hexadecimal (the element's bits) when ``hex``. ``prefix`` is the
    text exactly as printed (the frontend already added Triton's spaces and colon)."""

    NAME = "print"
    OPERANDS = ("*args",)
    ATTRS = {"prefix": "", "hex": False}
    NUM_RESULTS = 0
    PURE = False

    args = VariadicOperands()
    prefix = Attr[str]()
    hex = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        if not isinstance(self.prefix, str):
            fail(self, f"prefix must be a string, got {self.prefix!r}")
        if not isinstance(self.hex, bool):
            fail(self, f"hex must be a boolean, got {self.hex!r}")
        if len(self.args) > MAX_PRINT_VALUES:
            fail(self, f"prints at most {MAX_PRINT_VALUES} values, got {len(self.args)}")
        for v in self.args:
            t = v.type
            scalar = t.scalar if isinstance(t, TileType) else t
            if not isinstance(scalar, (DType, PointerType)) or not printable(scalar):
                fail(self, f"cannot print a value of type {t}")


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


@register
class MaxConstancyOp(_Hint):
    """Runs of ``values`` consecutive elements of the operand are equal."""

    NAME = "max_constancy"
