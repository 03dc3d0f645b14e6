"""The IR's semantics on constants (``tlxc.ir.passes.evaluate``), edge cases first."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tlxc.ir import types as T
from tlxc.ir.passes import evaluate as ev

I8_MIN, I32_MIN, I32_MAX = -(2**7), -(2**31), 2**31 - 1


@pytest.mark.parametrize("name, a, b, t, want", [
    ("idiv", I32_MIN, -1, T.int32, I32_MIN),      # overflows and wraps
    ("rem", I32_MIN, -1, T.int32, 0),
    ("idiv", -7, 2, T.int32, -3),                 # truncates toward zero
    ("rem", -7, 2, T.int32, -1),                  # sign of the dividend
    ("idiv", 7, -2, T.int32, -3),
    ("rem", 7, -2, T.int32, 1),
    ("idiv", 2**32 - 1, 2, T.uint32, 2**31 - 1),  # unsigned division
    ("rem", 2**32 - 1, 10, T.uint32, 5),
    ("add", 127, 1, T.int8, I8_MIN),              # i8 wraps
    ("mul", 100, 3, T.int8, 44),
    ("sub", 0, 1, T.uint8, 255),
    ("sub", I8_MIN, 1, T.int8, 127),
    ("mul", I32_MAX, I32_MAX, T.int32, 1),
    ("add", 2**64 - 1, 1, T.uint64, 0),
    ("shr", -8, 1, T.int32, -4),                  # arithmetic on signed
    ("shr", 2**32 - 8, 1, T.uint32, 2**31 - 4),   # logical on unsigned
    ("shr", -1, 31, T.int32, -1),
    ("shl", 1, 31, T.int32, I32_MIN),
    ("shl", 0xFF, 4, T.uint8, 0xF0),
    ("and", -1, 0x0F, T.int8, 0x0F),
    ("or", 0x70, -128, T.int8, -16),
    ("xor", 2**32 - 1, 1, T.uint32, 2**32 - 2),
    ("minimum", -1, 1, T.int32, -1),
    ("minimum", 2**32 - 1, 1, T.uint32, 1),       # unsigned order
    ("maximum", 2**32 - 1, 1, T.uint32, 2**32 - 1),
    ("add", 1, 1, T.int1, 0),                     # i1 is one bit
    ("mul", 1, 1, T.int1, 1),
])
def test_integer_binary(name: str, a: int, b: int, t: T.DType, want: int) -> None:
    assert ev.eval_binary(name, a, b, t) == want


@pytest.mark.parametrize("name, b", [("idiv", 0), ("rem", 0), ("shl", 32), ("shr", 32), ("shl", -1), ("shr", 40)])
def test_integer_refusals(name: str, b: int) -> None:
    assert ev.eval_binary(name, 5, b, T.int32) is None


@pytest.mark.parametrize("name, a, t, want", [
    ("neg", I32_MIN, T.int32, I32_MIN),
    ("neg", 1, T.uint32, 2**32 - 1),
    ("abs", I8_MIN, T.int8, I8_MIN),
    ("abs", -5, T.int8, 5),
    ("not", 0, T.int16, -1),
    ("not", 0, T.uint16, 0xFFFF),
    ("not", 1, T.int1, 0),
])
def test_integer_unary(name: str, a: int, t: T.DType, want: int) -> None:
    assert ev.eval_unary(name, a, t) == want


def test_integer_ops_match_numpy_wraparound() -> None:
    rng = np.random.default_rng(0)
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}
    for t in (T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64):
        info = np.iinfo(T.numpy_dtype(t))
        values = rng.integers(info.min, info.max, size=(50, 2), dtype=T.numpy_dtype(t), endpoint=True)
        for name, f in ops.items():
            for a, b in values:
                with np.errstate(all="ignore"):
                    want = int(f(a, b))
                assert ev.eval_binary(name, int(a), int(b), t) == want, (name, t, a, b)


def test_division_and_shifts_match_c_semantics_in_numpy() -> None:
    rng = np.random.default_rng(1)
    for t in (T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64):
        dt = T.numpy_dtype(t)
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, size=(200, 2), dtype=dt, endpoint=True)
        values[:4, 0] = info.min
        values[:4, 1] = [1, 2, 3, info.max] if t.kind == T.Kind.UINT else [-1, 2, -3, info.max]
        for a, b in values:
            if b == 0:
                continue
            with np.errstate(all="ignore"):
                rem = np.fmod(a, b)                       # C's %: sign of the dividend
                quo = (a - rem) // b                      # exact, so truncating
                amount = int(abs(int(b))) % t.bits
                shl = np.left_shift(a, dt.type(amount))
                shr = np.right_shift(a, dt.type(amount))  # arithmetic iff signed
            assert ev.eval_binary("rem", int(a), int(b), t) == int(rem), (t, a, b)
            assert ev.eval_binary("idiv", int(a), int(b), t) == int(quo), (t, a, b)
            assert ev.eval_binary("shl", int(a), amount, t) == int(shl), (t, a, amount)
            assert ev.eval_binary("shr", int(a), amount, t) == int(shr), (t, a, amount)


@pytest.mark.parametrize("name, a, b, t, want", [
    ("add", 0.1, 0.2, T.float32, float(np.float32(0.1) + np.float32(0.2))),
    ("add", 0.1, 0.2, T.float64, 0.1 + 0.2),
    ("mul", 3e38, 10.0, T.float32, math.inf),      # overflow to inf is IEEE
    ("add", 65504.0, 32.0, T.float16, math.inf),   # rounds up past f16's maximum
    ("add", 65504.0, 15.0, T.float16, 65504.0),
    ("add", 1.0, 2.0**-11, T.float16, 1.0),        # ties to even
    ("add", 1.0, 2.0**-8, T.bfloat16, 1.0),
    ("div", 1.0, 3.0, T.float32, float(np.float32(1) / np.float32(3))),
    ("div", 1.0, 0.0, T.float32, math.inf),
    ("rem", -7.5, 2.0, T.float32, -1.5),           # fmod: sign of the dividend
    ("minimum", -1.0, 2.0, T.float32, -1.0),
])
def test_float_binary(name: str, a: float, b: float, t: T.DType, want: float) -> None:
    got = ev.eval_binary(name, a, b, t)
    assert got == want and type(got) is float


def test_float_results_are_representable_in_their_type() -> None:
    got = ev.eval_binary("mul", 0.1, 0.3, T.float16)
    assert got == float(np.float16(np.float32(np.float16(0.1)) * np.float32(np.float16(0.3))))
    assert float(np.float16(got)) == got


def test_float_refusals() -> None:
    assert ev.eval_binary("minimum", math.nan, 1.0, T.float32) is None
    assert math.isnan(ev.eval_binary("maximum", math.nan, 1.0, T.float32, {"propagate_nan": True}))
    assert ev.eval_binary("minimum", -0.0, 0.0, T.float32) is None
    assert ev.eval_binary("add", 1.0, 1.0, T.float8e4nv) is None     # no fp8 arithmetic
    assert ev.eval_binary("idiv", 1.0, 1.0, T.float32) is None
    assert ev.eval_unary("not", 1.0, T.float32) is None


def test_float_unary_keeps_signed_zero() -> None:
    assert math.copysign(1.0, ev.eval_unary("neg", 0.0, T.float32)) == -1.0
    assert ev.eval_unary("abs", -2.5, T.float16) == 2.5


@pytest.mark.parametrize("pred, a, b, want", [
    ("eq", math.nan, math.nan, 0), ("ne", math.nan, math.nan, 1), ("lt", math.nan, 1.0, 0),
    ("ge", 1.0, math.nan, 0), ("le", -0.0, 0.0, 1), ("eq", -0.0, 0.0, 1),
])
def test_float_cmp_ordered_except_ne(pred: str, a: float, b: float, want: int) -> None:
    assert ev.eval_cmp(pred, a, b, T.float32) == want


def test_integer_cmp_by_signedness() -> None:
    assert ev.eval_cmp("lt", -1, 0, T.int32) == 1
    assert ev.eval_cmp("lt", 2**32 - 1, 0, T.uint32) == 0


@pytest.mark.parametrize("a, src, dst, want", [
    (-1, T.int8, T.int32, -1),           # sign-extends a signed source
    (255, T.uint8, T.int32, 255),        # zero-extends an unsigned one
    (-1, T.int32, T.uint32, 2**32 - 1),
    (300, T.int32, T.int8, 44),          # keeps the low bits
    (2, T.int32, T.int1, 1),             # i1 results are x != 0
    (0, T.int32, T.int1, 0),
    (1, T.int1, T.int32, 1),
    (16777216, T.int32, T.float32, 16777216.0),
    (16777217, T.int32, T.float32, None),    # not exact in f32
    (2**64 - 1, T.uint64, T.float64, None),
    (2048, T.int32, T.float16, 2048.0),
    (2049, T.int32, T.float16, None),
    (3.0, T.float32, T.int8, 3),
    (-3.0, T.float32, T.int32, -3),
    (2.5, T.float32, T.int32, None),     # truncation is not exact
    (300.0, T.float32, T.int8, None),    # saturation is not exact
    (-1.0, T.float32, T.uint32, None),
    (1.0, T.float32, T.int1, 1),
    (math.nan, T.float32, T.int32, None),
    (math.inf, T.float32, T.int32, None),
    (1.5, T.float32, T.float16, 1.5),
    (0.1, T.float64, T.float32, None),   # would round
    (math.inf, T.float32, T.float16, math.inf),
    (math.inf, T.float32, T.float8e4nv, None),   # e4m3fn has no inf
    (448.0, T.float32, T.float8e4nv, 448.0),
    (math.nan, T.float32, T.float64, None),
])
def test_convert(a: float, src: T.DType, dst: T.DType, want: float | None) -> None:
    assert ev.eval_convert(a, src, dst) == want


def test_canonical_values() -> None:
    assert ev.canonical(True, T.int1) == 1
    assert ev.canonical(256, T.uint8) is None          # does not fit: refused, not wrapped
    assert ev.canonical(0.1, T.float32) == float(np.float32(0.1))
    assert ev.canonical(1, T.float16) == 1.0
    assert ev.as_attr(1, T.int1) is True
    assert ev.as_attr(3, T.float32) == 3.0 and isinstance(ev.as_attr(3, T.float32), float)
