"""Elementwise ops under the interpreter: integer wraparound, C division, shifts, i1
arithmetic, NaN rules, narrow-float rounding, math functions and fma."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from interp_kernels import KernelBuilder, elementwise, run

from tlxc.ir import types as T
from tlxc.ir.ops import arith as A

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def wrap(values: list[int], dt: str) -> np.ndarray:
    info = np.iinfo(dt)
    span = info.max - info.min + 1
    return np.array([(v - info.min) % span + info.min for v in values], dtype=dt)


@pytest.mark.parametrize("cls,fn", [(A.AddOp, lambda a, b: a + b), (A.SubOp, lambda a, b: a - b),
                                    (A.MulOp, lambda a, b: a * b)])
@pytest.mark.parametrize("dtype", [T.int8, T.int32, T.int64, T.uint8, T.uint32])
def test_integer_arithmetic_wraps(cls, fn, dtype) -> None:
    info = np.iinfo(T.numpy_dtype(dtype))
    a = [int(info.max), int(info.min), 7, int(info.max) // 3, 0]
    b = [1, 1 if cls is A.SubOp else -1 if info.min < 0 else 3, 5, 5, int(info.max)]
    b = [int(x) % (int(info.max) + 1) if info.min == 0 else x for x in b]
    got = elementwise(cls, dtype, [a, b])
    np.testing.assert_array_equal(got, wrap([fn(x, y) for x, y in zip(a, b)], str(got.dtype)))


def test_signed_division_truncates_toward_zero() -> None:
    a = [-7, 7, -7, 7, 0, 9, I32_MIN, 5]
    b = [2, -2, -2, 2, 3, 3, -1, 0]
    q = elementwise(A.IDivOp, T.int32, [a, b])
    r = elementwise(A.RemOp, T.int32, [a, b])
    np.testing.assert_array_equal(q[:6], [-3, -3, 3, 3, 0, 3])
    np.testing.assert_array_equal(r[:6], [-1, 1, -1, 1, 0, 0])
    # INT_MIN / -1 overflows and x / 0 is undefined: any value, but no crash
    assert q.dtype == np.int32 and r.dtype == np.int32


def test_unsigned_division_is_plain() -> None:
    a = [7, 2**32 - 1, 2**31, 3]
    b = [2, 16, 3, 0]
    np.testing.assert_array_equal(elementwise(A.IDivOp, T.uint32, [a, b])[:3], [3, (2**32 - 1) // 16, 2**31 // 3])
    np.testing.assert_array_equal(elementwise(A.RemOp, T.uint32, [a, b])[:3], [1, 15, 2**31 % 3])


def test_shifts() -> None:
    np.testing.assert_array_equal(elementwise(A.ShlOp, T.int32, [[1, 1, 1, 1, 3], [0, 1, 31, 32, 40]]),
                                  [1, 2, I32_MIN, 0, 0])
    np.testing.assert_array_equal(elementwise(A.ShrOp, T.int32, [[-8, -8, -8, 8, I32_MIN], [1, 31, 40, 40, 31]]),
                                  [-4, -1, -1, 0, -1])
    np.testing.assert_array_equal(elementwise(A.ShrOp, T.uint32, [[2**31, 2**31, 2**32 - 1], [31, 32, 4]]),
                                  [1, 0, 2**28 - 1])
    np.testing.assert_array_equal(elementwise(A.ShlOp, T.uint8, [[0x81, 0xFF], [1, 8]]), [0x02, 0])


def test_bitwise() -> None:
    a, b = [0b1100, -1, 0], [0b1010, 5, -1]
    np.testing.assert_array_equal(elementwise(A.AndOp, T.int32, [a, b]), [0b1000, 5, 0])
    np.testing.assert_array_equal(elementwise(A.OrOp, T.int32, [a, b]), [0b1110, -1, -1])
    np.testing.assert_array_equal(elementwise(A.XorOp, T.int32, [a, b]), [0b0110, -6, -1])
    np.testing.assert_array_equal(elementwise(A.NotOp, T.int32, [a]), [~0b1100, 0, -1])
    np.testing.assert_array_equal(elementwise(A.NotOp, T.uint8, [[0, 0xF0]]), [0xFF, 0x0F])


def test_i1_arithmetic_is_modulo_two() -> None:
    a, b = [False, False, True, True], [False, True, False, True]
    np.testing.assert_array_equal(elementwise(A.AddOp, T.int1, [a, b]), [0, 1, 1, 0])
    np.testing.assert_array_equal(elementwise(A.SubOp, T.int1, [a, b]), [0, 1, 1, 0])
    np.testing.assert_array_equal(elementwise(A.MulOp, T.int1, [a, b]), [0, 0, 0, 1])
    np.testing.assert_array_equal(elementwise(A.XorOp, T.int1, [a, b]), [0, 1, 1, 0])
    np.testing.assert_array_equal(elementwise(A.NotOp, T.int1, [a]), [1, 1, 0, 0])
    np.testing.assert_array_equal(elementwise(A.ShlOp, T.int1, [a, b]), [0, 0, 1, 0])


def test_neg_and_abs() -> None:
    np.testing.assert_array_equal(elementwise(A.NegOp, T.int32, [[I32_MIN, 5, 0]]), [I32_MIN, -5, 0])
    np.testing.assert_array_equal(elementwise(A.NegOp, T.uint8, [[1, 0]]), [255, 0])
    np.testing.assert_array_equal(elementwise(A.AbsOp, T.int8, [[-128, -5, 5]]), [-128, 5, 5])
    np.testing.assert_array_equal(elementwise(A.NegOp, T.float16, [[1.5, -0.0]]), [-1.5, 0.0])
    np.testing.assert_array_equal(elementwise(A.AbsOp, T.bfloat16, [[-2.5, 3.0]]).astype(np.float32), [2.5, 3.0])


@pytest.mark.parametrize("pred,signed,unsigned", [
    ("eq", [0, 0, 1], [0, 0, 1]), ("ne", [1, 1, 0], [1, 1, 0]), ("lt", [1, 0, 0], [0, 1, 0]),
    ("le", [1, 0, 1], [0, 1, 1]), ("gt", [0, 1, 0], [1, 0, 0]), ("ge", [0, 1, 1], [1, 0, 1]),
])
def test_compare_integers(pred, signed, unsigned) -> None:
    a, b = [-1, 1, 4], [1, -1, 4]
    np.testing.assert_array_equal(elementwise(A.CmpOp, T.int32, [a, b], T.int1, predicate=pred), signed)
    ua, ub = [2**32 - 1, 1, 4], [1, 2**32 - 1, 4]
    np.testing.assert_array_equal(elementwise(A.CmpOp, T.uint32, [ua, ub], T.int1, predicate=pred), unsigned)


@pytest.mark.parametrize("dtype", [T.float32, T.float16, T.bfloat16, T.float64])
def test_compare_nan(dtype) -> None:
    a, b = [np.nan, 1.0, np.nan], [1.0, np.nan, np.nan]
    for pred in ("eq", "lt", "le", "gt", "ge"):
        np.testing.assert_array_equal(elementwise(A.CmpOp, dtype, [a, b], T.int1, predicate=pred), [0, 0, 0])
    np.testing.assert_array_equal(elementwise(A.CmpOp, dtype, [a, b], T.int1, predicate="ne"), [1, 1, 1])


@pytest.mark.parametrize("dtype", [T.float32, T.float16, T.bfloat16])
def test_minimum_maximum_nan(dtype) -> None:
    a, b = [np.nan, 1.0, 2.0], [1.0, np.nan, -3.0]
    lose = elementwise(A.MinimumOp, dtype, [a, b]).astype(np.float32)
    np.testing.assert_array_equal(lose, [1.0, 1.0, -3.0])
    win = elementwise(A.MaximumOp, dtype, [a, b], propagate_nan=True).astype(np.float32)
    assert np.isnan(win[0]) and np.isnan(win[1]) and win[2] == 2.0
    np.testing.assert_array_equal(elementwise(A.MaximumOp, dtype, [a, b]).astype(np.float32), [1.0, 1.0, 2.0])


def test_integer_minimum_maximum() -> None:
    np.testing.assert_array_equal(elementwise(A.MinimumOp, T.int32, [[-1, 5], [1, 2]]), [-1, 2])
    np.testing.assert_array_equal(elementwise(A.MaximumOp, T.uint32, [[2**32 - 1, 5], [1, 2]]), [2**32 - 1, 5])


def test_select() -> None:
    kb = KernelBuilder([("c", T.pointer(T.int1)), ("a", T.pointer(T.float32)), ("b", T.pointer(T.float32)),
                        ("out", T.pointer(T.float32))])
    offs = kb.arange(4)
    c, a, b = (kb.load(kb.ptrs(p, offs)) for p in kb.args[:3])
    kb.store(kb.ptrs(kb.args[3], offs), kb.op(A.SelectOp, [c, a, b], a.type))
    out = np.zeros(4, np.float32)
    run(kb.finish(), (1, 1, 1), [np.array([1, 0, 1, 0], bool), np.arange(4, dtype=np.float32),
                                 -np.arange(4, dtype=np.float32), out])
    np.testing.assert_array_equal(out, [0, -1, 2, -3])


@pytest.mark.parametrize("dtype,ref", [
    (T.float16, np.float16), (T.bfloat16, ml_dtypes.bfloat16), (T.float8e4nv, ml_dtypes.float8_e4m3fn),
])
@pytest.mark.parametrize("cls,fn", [(A.AddOp, np.add), (A.SubOp, np.subtract), (A.MulOp, np.multiply),
                                    (A.DivOp, np.divide)])
def test_narrow_floats_round_after_each_op(dtype, ref, cls, fn) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(-8, 8, 64).astype(ref)
    b = rng.uniform(0.25, 4, 64).astype(ref)
    got = elementwise(cls, dtype, [a, b])
    want = fn(a.astype(np.float32), b.astype(np.float32)).astype(ref)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_bf16_add_ties_to_even() -> None:
    got = elementwise(A.AddOp, T.bfloat16, [[1.0, 1.0078125], [2**-8, 2**-8]])
    np.testing.assert_array_equal(got.astype(np.float32), [1.0, 1.015625])


def test_fp8_arithmetic_saturates() -> None:
    got = elementwise(A.AddOp, T.float8e4nv, [[448.0, -448.0], [448.0, -448.0]])
    np.testing.assert_array_equal(got.astype(np.float32), [448.0, -448.0])


def test_float_division_and_remainder() -> None:
    np.testing.assert_array_equal(elementwise(A.RemOp, T.float32, [[-7.5, 7.5, 5.0], [2.0, -2.0, 5.0]]),
                                  [-1.5, 1.5, 0.0])
    got = elementwise(A.DivOp, T.float32, [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


MATH_INPUTS = [0.1, 0.5, 1.0, 2.5, 3.7, 10.0]


@pytest.mark.parametrize("name,ref", [
    ("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2), ("sqrt", np.sqrt),
    ("rsqrt", lambda x: 1 / np.sqrt(x)), ("sin", np.sin), ("cos", np.cos), ("tan", np.tan),
    ("tanh", np.tanh), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
    ("erf", np.vectorize(math.erf)),
])
@pytest.mark.parametrize("dtype,rtol", [(T.float32, 1e-6), (T.float64, 1e-14), (T.float16, 1e-3)])
def test_math(name, ref, dtype, rtol) -> None:
    x = np.array(MATH_INPUTS + [-x for x in MATH_INPUTS] if name not in ("log", "log2", "sqrt", "rsqrt")
                 else MATH_INPUTS)
    got = elementwise(A.MATH_OPS[name], dtype, [x])
    np.testing.assert_allclose(got.astype(np.float64), ref(x.astype(T.numpy_dtype(dtype)).astype(np.float64)),
                               rtol=rtol, atol=rtol)


def test_round_is_half_away_from_zero() -> None:
    x = [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -1.2, np.inf]
    got = elementwise(A.MATH_OPS["round"], T.float32, [x])
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0, -1.0, -3.0, 0.0, -1.0, np.inf])


def test_fma_rounds_once() -> None:
    a = np.float32(1 + 2**-12)
    c = -np.float32(1 + 2**-11)    # a*a = 1 + 2**-11 + 2**-24: the 2**-24 is lost unfused
    got = elementwise(A.FmaOp, T.float32, [[a, 2.0], [a, 3.0], [c, 1.0]])
    np.testing.assert_array_equal(got, [2**-24, 7.0])
    assert np.float32(a) * np.float32(a) + c == 0.0
    got16 = elementwise(A.FmaOp, T.float16, [[1.5, 2.0], [2.0, 0.5], [0.25, -1.0]])
    np.testing.assert_array_equal(got16, [3.25, 0.0])


def test_f64_fma_rounds_once() -> None:
    # a*a = 1 + 2**-26 + 2**-54: the 2**-54 is lost unfused, kept by fma.rn.f64
    a = 1 + 2.0 ** -27
    got = elementwise(A.FmaOp, T.float64, [[a, 1e300, 0.0, 3.0], [a, 1e10, -0.0, 2.0],
                                           [-(1 + 2.0 ** -26), -1e308, -0.0, 0.5]])
    assert got[0] == 2.0 ** -54 and a * a - (1 + 2.0 ** -26) == 0.0
    assert got[1] == float("inf")      # the product is out of range, exact sum too
    assert got[2] == 0.0 and np.signbit(got[2])   # -0 + -0 is -0
    assert got[3] == 6.5


def test_f64_fma_matches_exact_rationals() -> None:
    from fractions import Fraction

    from tlxc.interpreter.numerics import fma64

    rng = np.random.default_rng(3)
    n = 4000
    a = rng.standard_normal(n) * np.exp2(rng.integers(-60, 60, n))
    b = rng.standard_normal(n) * np.exp2(rng.integers(-60, 60, n))
    c = -(a * b) * (1 + rng.integers(-3, 4, n) * 2.0 ** -52)   # cancellations: the hard cases
    c[::4] = rng.standard_normal(n // 4) * np.exp2(rng.integers(-1000, 1000, n // 4).astype(float))
    a[:50] *= 2.0 ** 900                                         # past the split's safe range
    got = fma64(a, b, c)
    want = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(got, want)
