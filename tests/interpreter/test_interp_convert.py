"""Conversions and bitcasts: rounding once, fp8 saturation, round toward zero, float->int
saturation, integer extension and truncation."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from interp_kernels import elementwise

from tlxc.interpreter import numerics
from tlxc.ir import types as T
from tlxc.ir.ops import arith as A

INF, NAN = np.inf, np.nan


def convert(src, dst, values, rounding: str = "rtne") -> np.ndarray:
    return elementwise(A.ConvertOp, src, [values], dst, rounding=rounding)


def as_f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32).astype(np.float64)


def test_f32_to_bf16_rounds_to_nearest_even() -> None:
    got = convert(T.float32, T.bfloat16, [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-8 + 2**-20)])
    np.testing.assert_array_equal(as_f64(got), [1.0, 1 + 2**-6, 1 + 2**-7, -(1 + 2**-7)])


def test_f64_to_bf16_rounds_once() -> None:
    # through float32 with round-to-nearest this would be a tie, then rounded down to 1.0
    got = convert(T.float64, T.bfloat16, [1 + 2**-8 + 2**-30, 3e38, 1e-50])
    np.testing.assert_array_equal(as_f64(got), [1 + 2**-7, float(ml_dtypes.bfloat16(3e38)), 0.0])
    got8 = convert(T.float64, T.float8e4nv, [1 + 2**-4 + 2**-30])
    np.testing.assert_array_equal(as_f64(got8), [1.125])


@pytest.mark.parametrize("dst,limit", [(T.float8e4nv, 448.0), (T.float8e5, 57344.0),
                                       (T.float8e4b8, 240.0), (T.float8e5b16, 57344.0)])
def test_fp8_conversions_saturate(dst, limit) -> None:
    got = as_f64(convert(T.float32, dst, [1e6, -1e6, INF, -INF, NAN, limit, 1.0]))
    np.testing.assert_array_equal(got[[0, 1, 2, 3, 5, 6]], [limit, -limit, limit, -limit, limit, 1.0])
    assert np.isnan(got[4])


def test_fp8_ties_to_even() -> None:
    # 464 is halfway between 448 (even significand) and 480, which f8e4m3 does not have
    got = as_f64(convert(T.float32, T.float8e4nv, [464.0, 1.0625, 1.1875]))
    np.testing.assert_array_equal(got, [448.0, 1.0, 1.25])


def test_round_toward_zero() -> None:
    got = as_f64(convert(T.float32, T.bfloat16, [1.0078124, -1.9999, 3.0, 1e38 * 3.3], rounding="rtz"))
    np.testing.assert_array_equal(got[:3], [1.0, -1.9921875, 3.0])
    assert np.isfinite(got[3])
    half = convert(T.float32, T.float16, [1e6, -1e6, 65519.0, 1 + 2**-10 + 2**-20], rounding="rtz")
    np.testing.assert_array_equal(half, [65504.0, -65504.0, 65504.0, 1 + 2**-10])
    single = convert(T.float64, T.float32, [1 + 2**-24 + 2**-40, -(1 + 2**-23 - 2**-40)], rounding="rtz")
    np.testing.assert_array_equal(single, [1.0, -1.0])
    # the fnuz formats have no -0 (its bit pattern is NaN): -tiny toward zero is +0
    fnuz = as_f64(convert(T.float32, T.float8e4b8, [-0.75 * 2**-10, -1.5 * 2**-10], rounding="rtz"))
    np.testing.assert_array_equal(fnuz, [0.0, -(2**-10)])


@pytest.mark.parametrize("src", [T.float32, T.float64, T.float16, T.bfloat16])
def test_float_to_int_truncates_and_saturates(src) -> None:
    values = [2.7, -2.7, 1e10 if src != T.float16 else 60000.0, -1e10 if src != T.float16 else -60000.0,
              NAN, INF, -INF, 0.5]
    got = convert(src, T.int32, values)
    big = 2**31 - 1 if src != T.float16 else 60000
    small = -(2**31) if src != T.float16 else -60000
    np.testing.assert_array_equal(got, [2, -2, big, small, 0, 2**31 - 1, -(2**31), 0])
    np.testing.assert_array_equal(convert(src, T.uint8, [-1.5, 300.0, 255.9, NAN]), [0, 255, 255, 0])
    np.testing.assert_array_equal(convert(src, T.int8, [-200.0, 127.9]), [-128, 127])


def test_float_to_64_bit_int_saturates() -> None:
    got = convert(T.float64, T.int64, [1e19, -1e19, 2.0**62, NAN])
    np.testing.assert_array_equal(got, [2**63 - 1, -(2**63), 2**62, 0])
    np.testing.assert_array_equal(convert(T.float32, T.uint64, [1e20, -1.0, 2.0**40]), [2**64 - 1, 0, 2**40])


def test_integer_conversions() -> None:
    np.testing.assert_array_equal(convert(T.int8, T.int32, [-1, 127]), [-1, 127])
    np.testing.assert_array_equal(convert(T.uint8, T.int32, [255, 1]), [255, 1])
    np.testing.assert_array_equal(convert(T.int8, T.uint32, [-1, 3]), [2**32 - 1, 3])
    np.testing.assert_array_equal(convert(T.int32, T.int16, [0x12345678, -1]), [0x5678, -1])
    np.testing.assert_array_equal(convert(T.int32, T.int1, [0, 2, -1, 256]), [0, 1, 1, 1])
    np.testing.assert_array_equal(convert(T.int1, T.int32, [True, False]), [1, 0])
    np.testing.assert_array_equal(convert(T.int1, T.float32, [True, False]), [1.0, 0.0])
    np.testing.assert_array_equal(convert(T.float32, T.int1, [0.0, -0.0, 0.5, NAN]), [0, 0, 1, 1])


def test_int_to_float_rounds_once() -> None:
    np.testing.assert_array_equal(as_f64(convert(T.int32, T.bfloat16, [257, 259, -257])), [256, 260, -256])
    np.testing.assert_array_equal(convert(T.int32, T.float32, [2**24 + 1, 2**24 + 3]), [2**24, 2**24 + 4])
    np.testing.assert_array_equal(as_f64(convert(T.int32, T.float8e4nv, [1000, -17])), [448, -16])


def test_float_widening_is_exact() -> None:
    x = np.array([1.5, -3.25, 2**-14, 65504.0], np.float16)
    np.testing.assert_array_equal(convert(T.float16, T.float32, x), x.astype(np.float32))
    b = np.array([1.5, 3e38], ml_dtypes.bfloat16)
    np.testing.assert_array_equal(convert(T.bfloat16, T.float64, b), b.astype(np.float64))
    f8 = np.array([448, -0.015625], ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(as_f64(convert(T.float8e4nv, T.float16, f8)), f8.astype(np.float64))


def test_bitcast() -> None:
    got = elementwise(A.BitcastOp, T.float32, [[1.0, -2.0]], T.int32)
    np.testing.assert_array_equal(got, [0x3F800000, np.int32(np.uint32(0xC0000000))])
    back = elementwise(A.BitcastOp, T.uint16, [[0x3F80]], T.bfloat16)
    assert float(back[0]) == 1.0


def test_tf32_rounding_helper() -> None:
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-11 + 2**-20, INF, 3.4e38], np.float32)
    got = numerics.round_to_tf32(x)
    np.testing.assert_array_equal(got[:4], [1.0, 1 + 2**-9, 1 + 2**-10, INF])
    assert got[4] == INF or got[4] > 3e38


def exact_reference(x: np.ndarray, dst, rounding: str) -> np.ndarray:
    """Round float64 ``x`` to ``dst`` by searching the table of all its finite values."""
    nd = T.numpy_dtype(dst)
    bits = np.arange(1 << dst.bits, dtype=np.uint64).astype(f"uint{dst.bits}")
    with np.errstate(invalid="ignore"):
        vals = bits.view(nd).astype(np.float64)
    finite = np.isfinite(vals) & ~((vals == 0) & np.signbit(vals))      # one zero, no NaN/inf
    vals, bits = vals[finite], bits[finite]
    order = np.argsort(vals)
    vals, odd = vals[order], (bits[order] & 1).astype(bool)
    top, ulp = vals[-1], vals[-1] - vals[-2]
    v = np.clip(x, -top, top) if dst.bits == 8 else x                   # fp8 saturates
    i = np.clip(np.searchsorted(vals, v), 1, len(vals) - 1)
    lo, hi = vals[i - 1], vals[i]
    if rounding == "rtz":
        out = np.where(np.abs(lo) < np.abs(hi), lo, hi)
        out = np.where(hi == v, hi, np.where(lo == v, lo, out))
        big = np.copysign(top, v)
    else:
        mid = (lo + hi) / 2
        out = np.where(v < mid, lo, np.where(v > mid, hi, np.where(odd[i - 1], hi, lo)))
        big = np.where(np.abs(v) >= top + ulp / 2, np.copysign(np.inf, v), np.copysign(top, v))
    out = np.where(np.abs(v) > top, big, out)
    return np.where(np.isnan(v) | np.isinf(v), v, out)


@pytest.mark.parametrize("dst", [T.bfloat16, T.float16, T.float8e4nv, T.float8e5, T.float8e4b8, T.float8e5b16])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
@pytest.mark.parametrize("src", [np.float64, np.float32])
def test_float_conversions_match_an_exact_reference(dst, rounding, src) -> None:
    """Every value, every midpoint and its neighbours, and random values, against a table."""
    rng = np.random.default_rng(dst.bits)
    nd = T.numpy_dtype(dst)
    with np.errstate(invalid="ignore"):
        table = np.arange(1 << dst.bits, dtype=np.uint64).astype(f"uint{dst.bits}").view(nd).astype(np.float64)
    table = np.unique(table[np.isfinite(table)])
    mids = (table[1:] + table[:-1]) / 2
    picks = rng.choice(len(mids), 2000) if len(mids) > 2000 else np.arange(len(mids))
    m = mids[picks]
    x = np.concatenate([table[picks], m, m * (1 + 2**-30), m * (1 - 2**-30), m * (1 + 2**-12),
                        rng.standard_normal(500) * table[-1] / 4, [1e300, -1e300, INF, -INF, NAN, 1e-300]])
    with np.errstate(over="ignore"):
        x = x.astype(src)
        got = numerics.float_to_float(x, dst, rounding).astype(np.float64)
    want = exact_reference(x.astype(np.float64), dst, rounding)
    np.testing.assert_array_equal(got, want)
