"""Evaluating elementwise ops on constants, exactly as the IR defines them.

These helpers are what ``fold`` uses; anything else that needs the value of an op on
known scalars (a range analysis, the interpreter's tests) can use them too. A value is a
plain Python scalar in *canonical* form for its element type:

* ``i1``: ``0`` or ``1`` (``as_attr`` turns it into ``False``/``True`` for a constant);
* signed integers: an ``int`` in ``[-2**(n-1), 2**(n-1))``; unsigned: ``[0, 2**n)``;
* floats: a ``float`` that is exactly representable in the element type.

Every function returns the canonical result, or ``None`` when it refuses: division by
zero, shift amounts outside ``[0, bits)``, float cases whose result depends on the target
(NaN handling of min/max, signed zeros), formats it does not compute in (fp8), and
conversions that are not exact. Refusing is always safe: the op simply stays.

Integer arithmetic is done on Python ints and wrapped to the type's width, which is the
IR's definition (``ops/arith.py``): wraparound, ``idiv``/``rem`` truncating toward zero,
``shr`` arithmetic on signed and logical on unsigned types. Float arithmetic is done in
numpy at the type's own precision: f32 and f64 natively, f16 and bf16 in f32 and rounded
once to the type. That double rounding is harmless for + - * / because f32 carries more
than twice their precision plus two bits (24 >= 2*11+2), and ``fmod`` is always exact.
"""

from __future__ import annotations

import math
from typing import Any, Union

import numpy as np

from ..types import DType, Kind, numpy_dtype

Scalar = Union[int, float]

# Float formats folded arithmetically. fp8 has no arithmetic of its own in the IR (it is
# converted first), and its overflow rules (saturation, no inf) differ from IEEE.
ARITH_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})

INT_BINARY = frozenset({"add", "sub", "mul", "idiv", "rem", "and", "or", "xor", "shl", "shr",
                        "minimum", "maximum"})
FLOAT_BINARY = frozenset({"add", "sub", "mul", "div", "rem", "minimum", "maximum"})
UNARY = frozenset({"neg", "not", "abs"})


# -- canonical values -------------------------------------------------------------------
def int_range(t: DType) -> tuple[int, int]:
    """Smallest and largest value of an integer type (``i1`` is unsigned: 0 and 1)."""
    if t.kind == Kind.INT:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def wrap(value: int, t: DType) -> int:
    """Keep the low ``t.bits`` bits of ``value``, read back as ``t`` (two's complement)."""
    v = value & ((1 << t.bits) - 1)
    if t.kind == Kind.INT and v >= 1 << (t.bits - 1):
        v -= 1 << t.bits
    return v


def round_float(value: float, t: DType) -> float:
    """``value`` rounded to nearest-even in float type ``t``, as a Python float."""
    with np.errstate(all="ignore"):
        return float(np.array(value, dtype=np.float64).astype(numpy_dtype(t)))


def canonical(value: Any, t: DType) -> Scalar | None:
    """The canonical form of a constant's ``value`` attribute for element type ``t``.

    A float constant means its value rounded to the type (a constant op materializes it
    that way). An integer constant that does not fit its type is refused rather than
    guessed at; the verifier reports it.
    """
    if isinstance(value, bool):
        value = int(value)
    if t.kind == Kind.FLOAT:
        if not isinstance(value, (int, float)):
            return None
        try:
            return round_float(float(value), t)
        except OverflowError:  # an int too large for f64; the verifier's business
            return None
    if not isinstance(value, int):
        return None
    lo, hi = int_range(t)
    return value if lo <= value <= hi else None


def as_attr(value: Scalar, t: DType) -> bool | int | float:
    """The ``value`` attribute of a constant op of element type ``t`` holding ``value``."""
    if t.kind == Kind.FLOAT:
        return float(value)
    if t.kind == Kind.BOOL:
        return bool(value)
    return int(value)


def all_ones(t: DType) -> int:
    """The canonical value whose bits are all 1 (-1 signed, the maximum unsigned)."""
    return wrap(-1, t)


# -- integers ---------------------------------------------------------------------------
def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def eval_int_binary(name: str, a: int, b: int, t: DType) -> int | None:
    match name:
        case "add":
            r = a + b
        case "sub":
            r = a - b
        case "mul":
            r = a * b
        case "idiv":
            if b == 0:
                return None  # undefined at run time; the op stays so the target decides
            r = _trunc_div(a, b)  # INT_MIN / -1 = 2**(n-1), which wraps to INT_MIN
        case "rem":
            if b == 0:
                return None
            r = a - b * _trunc_div(a, b)
        case "and":
            r = a & b
        case "or":
            r = a | b
        case "xor":
            r = a ^ b
        case "shl" | "shr":
            # Shifts by the width or more differ between targets (PTX clamps, LLVM gives
            # poison), and a negative signed amount is such a shift; leave them alone.
            if not 0 <= b < t.bits:
                return None
            r = a << b if name == "shl" else a >> b  # a >> b on a canonical value is
            # arithmetic for signed types and logical for unsigned ones (a >= 0)
        case "minimum":
            r = min(a, b)
        case "maximum":
            r = max(a, b)
        case _:
            return None
    return wrap(r, t)


def eval_int_unary(name: str, a: int, t: DType) -> int | None:
    match name:
        case "neg":
            return wrap(-a, t)
        case "not":
            return wrap(~a, t)
        case "abs":
            return wrap(abs(a), t)
    return None


# -- floats -----------------------------------------------------------------------------
def _compute_dtype(t: DType) -> Any:
    return np.float64 if t.ir_name == "f64" else np.float32


def eval_float_binary(name: str, a: float, b: float, t: DType, propagate_nan: bool = False) -> float | None:
    if t.ir_name not in ARITH_FLOATS:
        return None
    if name in ("minimum", "maximum"):
        if math.isnan(a) or math.isnan(b):
            # Without propagate_nan, which operand wins is the target's choice.
            return math.nan if propagate_nan else None
        if a == b == 0.0 and math.copysign(1.0, a) != math.copysign(1.0, b):
            return None  # min(-0.0, +0.0): targets differ on the sign
        return min(a, b) if name == "minimum" else max(a, b)
    c = _compute_dtype(t)
    x, y = c(a), c(b)
    with np.errstate(all="ignore"):
        match name:
            case "add":
                r = x + y
            case "sub":
                r = x - y
            case "mul":
                r = x * y
            case "div":
                r = x / y
            case "rem":
                r = np.fmod(x, y)
            case _:
                return None
    return round_float(float(r), t)


def eval_float_unary(name: str, a: float, t: DType) -> float | None:
    if t.ir_name not in ARITH_FLOATS:
        return None
    match name:
        case "neg":
            return -a
        case "abs":
            return abs(a)
    return None  # transcendental math is the target's (approximations differ)


# -- generic entry points ---------------------------------------------------------------
def eval_binary(name: str, a: Scalar, b: Scalar, t: DType, attrs: dict[str, Any] | None = None) -> Scalar | None:
    """``a <name> b`` in element type ``t`` (both canonical), or None if refused."""
    if t.kind == Kind.FLOAT:
        if name not in FLOAT_BINARY:
            return None
        return eval_float_binary(name, float(a), float(b), t, bool((attrs or {}).get("propagate_nan", False)))
    if name not in INT_BINARY:
        return None
    return eval_int_binary(name, int(a), int(b), t)


def eval_unary(name: str, a: Scalar, t: DType) -> Scalar | None:
    """``<name> a`` in element type ``t``, or None if refused."""
    if t.kind == Kind.FLOAT:
        return eval_float_unary(name, float(a), t)
    return eval_int_unary(name, int(a), t)


def eval_cmp(predicate: str, a: Scalar, b: Scalar, t: DType) -> int | None:
    """``cmp`` as 0/1: signed or unsigned by ``t`` (canonical values already are), and on
    floats ordered for every predicate but ``ne`` -- which is what Python's float
    comparisons do with NaN."""
    match predicate:
        case "eq":
            r = a == b
        case "ne":
            r = a != b
        case "lt":
            r = a < b
        case "le":
            r = a <= b
        case "gt":
            r = a > b
        case "ge":
            r = a >= b
        case _:
            return None
    return int(r)


def eval_convert(a: Scalar, src: DType, dst: DType) -> Scalar | None:
    """``convert`` from ``src`` to ``dst``.

    Between integer types it is always folded with the IR's rule (sign- or zero-extend by
    the source, keep the low bits; an ``i1`` result is ``x != 0``). Conversions that
    involve a float are folded only when exact -- the result equals the source value --
    so no rounding mode, saturation or NaN rule is involved.
    """
    if src.kind != Kind.FLOAT and dst.kind != Kind.FLOAT:
        return int(a != 0) if dst.kind == Kind.BOOL else wrap(int(a), dst)
    if isinstance(a, float) and not math.isfinite(a):
        if math.isnan(a) or dst.kind != Kind.FLOAT:
            return None
    if dst.kind != Kind.FLOAT:
        if a != math.trunc(a):
            return None
        v = int(a)
        lo, hi = int_range(dst)
        return v if lo <= v <= hi else None
    # to a float: exact iff rounding to dst gives back the same number
    if isinstance(a, int) and float(a) != a:  # exact int/float comparison
        return None  # not even exact in f64, so not in any narrower format
    r = round_float(float(a), dst)
    return r if r == a else None
