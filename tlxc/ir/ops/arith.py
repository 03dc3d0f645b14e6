"""Elementwise arithmetic, comparison, selection, math and conversion ops.

Elementwise ops take operands of one type (scalars or tiles of one shape; the frontend
inserts ``splat`` / ``broadcast`` first) and give a result of that shape. Integer
semantics follow the element type: ``idiv`` and ``rem`` truncate toward zero on signed
types, ``shr`` is arithmetic on signed and logical on unsigned types, all integer
arithmetic wraps around.
"""

from __future__ import annotations

import math
from typing import Any

from ..accessors import Attr, Operand
from ..core import Operation, register
from ..types import DType, Kind
from .base import fail, is_float, is_i1, is_int, is_ptr, same_types


@register
class ConstantOp(Operation):
    """A scalar constant, or a tile filled with one value (``tl.full``)."""

    PURE = True
    NAME = "constant"
    ATTRS = {"value": Operation.REQUIRED}

    value = Attr[int | float]()

    def verify(self) -> None:
        super().verify()
        v = self.value
        t = self.result.type
        scalar = t.scalar
        if not isinstance(scalar, DType):
            fail(self, "pointer constants are not supported")
        if is_float(t):
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                fail(self, f"float constant needs a number, got {v!r}")
        elif not isinstance(v, (bool, int)):
            fail(self, f"integer constant needs an integer, got {v!r}")
        elif not fold_value_fits(v, scalar):
            fail(self, f"constant {v!r} does not fit in {scalar}")


class _Binary(Operation):
    PURE = True
    OPERANDS = ("lhs", "rhs")
    # which element kinds the op accepts: "any", "int", "float", "num" (int or float)
    ACCEPTS = "num"

    lhs = Operand()
    rhs = Operand()

    def verify(self) -> None:
        super().verify()
        same_types(self, [self.lhs, self.rhs])
        t = self.lhs.type
        if self.result.type != t:
            fail(self, f"result type {self.result.type} differs from operand type {t}")
        if is_ptr(t):
            fail(self, "pointer operands are not allowed; use addptr")
        if self.ACCEPTS == "int" and not is_int(t):
            fail(self, f"needs integer operands, got {t}")
        if self.ACCEPTS == "float" and not is_float(t):
            fail(self, f"needs floating-point operands, got {t}")


def _binary(name: str, accepts: str, doc: str) -> type[Operation]:
    cls = type(f"{name.capitalize()}Op", (_Binary,), {"NAME": name, "ACCEPTS": accepts, "__doc__": doc})
    return register(cls)


AddOp = _binary("add", "num", "Addition (integers wrap around).")
SubOp = _binary("sub", "num", "Subtraction.")
MulOp = _binary("mul", "num", "Multiplication (integers keep the low bits).")
@register
class DivOp(_Binary):
    """Floating-point division. ``precise`` asks for IEEE round-to-nearest (``tl.math.div_rn``);
    otherwise the target may use its fast full-range division, as Triton does for ``/``
    (about 2 ulp on NVIDIA's ``div.full.f32``)."""

    NAME = "div"
    ACCEPTS = "float"
    ATTRS = {"precise": False}

    precise = Attr[bool]()
IDivOp = _binary("idiv", "int", "Integer division, truncating toward zero when signed.")
RemOp = _binary("rem", "num", "Remainder with the sign of the dividend (C's % and fmod).")
AndOp = _binary("and", "int", "Bitwise and.")
OrOp = _binary("or", "int", "Bitwise or.")
XorOp = _binary("xor", "int", "Bitwise exclusive or.")
ShlOp = _binary("shl", "int", "Shift left.")
ShrOp = _binary("shr", "int", "Shift right: arithmetic when signed, logical when unsigned.")


@register
class MinimumOp(_Binary):
    """Elementwise minimum; on floats ``propagate_nan`` says whether a NaN operand wins."""

    NAME = "minimum"
    ATTRS = {"propagate_nan": False}

    propagate_nan = Attr[bool]()


@register
class MaximumOp(_Binary):
    """Elementwise maximum; see MinimumOp."""

    NAME = "maximum"
    ATTRS = {"propagate_nan": False}

    propagate_nan = Attr[bool]()


PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


@register
class CmpOp(Operation):
    """Comparison giving i1. Signed or unsigned by the operand type; on floats all
    predicates are ordered (false with NaN) except ``ne``, which is unordered."""

    PURE = True
    NAME = "cmp"
    OPERANDS = ("lhs", "rhs")
    ATTRS = {"predicate": Operation.REQUIRED}

    lhs = Operand()
    rhs = Operand()
    predicate = Attr[str]()

    def verify(self) -> None:
        super().verify()
        same_types(self, [self.lhs, self.rhs])
        if self.predicate not in PREDICATES:
            fail(self, f"unknown predicate {self.predicate!r}")
        t = self.lhs.type
        if self.result.type.shape != t.shape or not is_i1(self.result.type):
            fail(self, f"result must be i1 of shape {t.shape}")


@register
class SelectOp(Operation):
    """``cond ? a : b`` elementwise; ``cond`` is i1 of the same shape."""

    PURE = True
    NAME = "select"
    OPERANDS = ("cond", "true_value", "false_value")

    cond = Operand()
    true_value = Operand()
    false_value = Operand()

    def verify(self) -> None:
        super().verify()
        c, a, b = self.cond, self.true_value, self.false_value
        same_types(self, [a, b])
        if not is_i1(c.type) or c.type.shape != a.type.shape:
            fail(self, f"condition must be i1 of shape {a.type.shape}, got {c.type}")
        if self.result.type != a.type:
            fail(self, "result type must equal the operand type")


class _Unary(Operation):
    PURE = True
    OPERANDS = ("x",)
    ACCEPTS = "float"

    x = Operand()

    def verify(self) -> None:
        super().verify()
        t = self.x.type
        if self.result.type != t:
            fail(self, f"result type {self.result.type} differs from operand type {t}")
        if self.ACCEPTS == "float" and not is_float(t):
            fail(self, f"needs a floating-point operand, got {t}")
        if self.ACCEPTS == "int" and not is_int(t):
            fail(self, f"needs an integer operand, got {t}")
        if self.ACCEPTS == "num" and is_ptr(t):
            fail(self, "needs a number, got a pointer")


def _unary(name: str, accepts: str, doc: str) -> type[Operation]:
    cls = type(f"{name.capitalize()}Op", (_Unary,), {"NAME": name, "ACCEPTS": accepts, "__doc__": doc})
    return register(cls)


NegOp = _unary("neg", "num", "Negation.")
NotOp = _unary("not", "int", "Bitwise complement.")
AbsOp = _unary("abs", "num", "Absolute value.")
# Transcendentals: the code generators choose between fast approximations and exact
# IEEE versions with the same rules as Triton (see the target's lowering table).
MATH_FUNCTIONS = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
                  "floor", "ceil", "erf", "trunc", "round")
MATH_OPS = {f: _unary(f, "float", f"Elementwise {f}.") for f in MATH_FUNCTIONS}


@register
class FmaOp(Operation):
    """Fused multiply-add ``a * b + c`` with one rounding."""

    PURE = True
    NAME = "fma"
    OPERANDS = ("a", "b", "c")

    a = Operand()
    b = Operand()
    c = Operand()

    def verify(self) -> None:
        super().verify()
        same_types(self, [self.a, self.b, self.c])
        if not is_float(self.a.type):
            fail(self, "fma needs floating-point operands")
        if self.result.type != self.a.type:
            fail(self, "result type must equal the operand type")


ROUNDINGS = ("rtne", "rtz")


@register
class ConvertOp(Operation):
    """Numeric conversion between element types, shape unchanged.

    float -> float rounds with ``rounding`` (to nearest even by default); conversions to
    fp8 saturate to the largest finite value, as the hardware's ``satfinite`` forms do.
    float -> int truncates toward zero and saturates (NaN gives 0); int -> int sign- or
    zero-extends by the source type, or keeps the low bits; i1 results are ``x != 0``.
    """

    PURE = True
    NAME = "convert"
    OPERANDS = ("x",)
    ATTRS = {"rounding": "rtne"}

    x = Operand()
    rounding = Attr[str]()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        if src.shape != dst.shape:
            fail(self, f"convert keeps the shape: {src} -> {dst}")
        if is_ptr(src) or is_ptr(dst):
            fail(self, "use ptrtoint / inttoptr / bitcast for pointers")
        if self.rounding not in ROUNDINGS:
            fail(self, f"unknown rounding {self.rounding!r}")


@register
class BitcastOp(Operation):
    """Reinterpret the bits as another element type of the same width (or pointer->pointer)."""

    PURE = True
    NAME = "bitcast"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        src, dst = self.x.type, self.result.type
        if src.shape != dst.shape:
            fail(self, f"bitcast keeps the shape: {src} -> {dst}")
        if src.scalar.bits != dst.scalar.bits:
            fail(self, f"bitcast needs equal widths: {src.scalar} ({src.scalar.bits} bits) -> "
                       f"{dst.scalar} ({dst.scalar.bits} bits)")


@register
class PtrToIntOp(Operation):
    """Pointer to its 64-bit address."""

    PURE = True
    NAME = "ptrtoint"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        if not is_ptr(self.x.type) or not is_int(self.result.type):
            fail(self, "ptrtoint takes a pointer and gives an integer")
        if self.x.type.shape != self.result.type.shape:
            fail(self, f"ptrtoint keeps the shape: {self.x.type} -> {self.result.type}")


@register
class IntToPtrOp(Operation):
    """64-bit integer address to a pointer."""

    PURE = True
    NAME = "inttoptr"
    OPERANDS = ("x",)

    x = Operand()

    def verify(self) -> None:
        super().verify()
        if not is_int(self.x.type) or not is_ptr(self.result.type):
            fail(self, "inttoptr takes an integer and gives a pointer")
        if self.x.type.shape != self.result.type.shape:
            fail(self, f"inttoptr keeps the shape: {self.x.type} -> {self.result.type}")


@register
class AddPtrOp(Operation):
    """``ptr + offset``: offset counts elements of the pointee type."""

    PURE = True
    NAME = "addptr"
    OPERANDS = ("ptr", "offset")

    ptr = Operand()
    offset = Operand()

    def verify(self) -> None:
        super().verify()
        p, o = self.ptr, self.offset
        if not is_ptr(p.type):
            fail(self, f"first operand must be a pointer, got {p.type}")
        if not is_int(o.type) or o.type.shape != p.type.shape:
            fail(self, f"offset must be an integer of shape {p.type.shape}, got {o.type}")
        if self.result.type != p.type:
            fail(self, "result type must equal the pointer type")


def fold_value_fits(value: Any, t: DType) -> bool:
    """Whether a Python constant is representable in ``t`` (used by the verifier and folder)."""
    if t.kind == Kind.FLOAT:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t.kind == Kind.BOOL:
        return value in (0, 1, True, False)
    lo, hi = (0, 2 ** t.bits - 1) if t.kind == Kind.UINT else (-(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1)
    return isinstance(value, int) and lo <= value <= hi and not (isinstance(value, float) and math.isnan(value))
