"""Numeric conversions that behave like the GPU, on numpy arrays.

numpy and ml_dtypes get most conversions right, but not all of them:

* ``ml_dtypes`` converts float64 to bfloat16 and fp8 through float32, which rounds twice
  (``1 + 2**-8 + 2**-30`` becomes ``1.0`` instead of ``1.0078125``). The GPU's
  ``cvt.rn.bf16.f64`` rounds once. We go through float32 with *round-to-odd*, which makes
  the second rounding exact for any target of at most 22 significand bits.
* Conversions to fp8 must saturate (``cvt ... .satfinite``): ml_dtypes turns 500 into NaN
  for ``f8e4m3``. We clip to the largest finite value first; NaN stays NaN.
* Round toward zero (``rounding="rtz"``) has no numpy spelling: we round to nearest and
  step the result one ulp toward zero where it grew in magnitude.
* float -> int truncates and saturates, NaN gives 0 (PTX ``cvt.rzi.sat``); numpy's cast
  is undefined outside the range.

Narrow floats (f16, bf16, fp8) are computed in float32 and rounded to the type after every
op, as the code generators do (``round_result``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import ml_dtypes
import numpy as np

from ..ir.types import DType, Kind, PointerType, numpy_dtype

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I64 = np.dtype(np.int64)

# Largest finite value of each fp8 format: conversions saturate to it.
_FP8_MAX = {name: float(ml_dtypes.finfo(numpy_dtype(DType(name, Kind.FLOAT, 8, "", ""))).max)
            for name in ("f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz")}


def storage_dtype(t: DType | PointerType) -> np.dtype:
    """The numpy dtype that holds a value of element type ``t`` (pointers: int64 addresses)."""
    if isinstance(t, PointerType):
        return I64
    return np.dtype(numpy_dtype(t))


def is_narrow_float(t: DType) -> bool:
    """Types the GPU does arithmetic on in float32 (f16, bf16 and the fp8 formats)."""
    return t.kind == Kind.FLOAT and t.bits < 32


def compute_dtype(t: DType) -> np.dtype:
    """The dtype arithmetic on ``t`` is carried out in."""
    return F32 if is_narrow_float(t) else storage_dtype(t)


def _uint_of(bits: int) -> np.dtype:
    return np.dtype(f"uint{bits}")


def _f64_to_f32_round_to_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd: truncate, then set the last bit if inexact.

    Rounding to odd first and to nearest second equals one rounding to nearest as long as
    the intermediate has two more significand bits than the target (24 >= 8 + 2 for bf16).
    """
    r = x.astype(F32)
    r64 = r.astype(F64)
    grew = np.abs(r64) > np.abs(x)            # rounded away from zero (also overflow to inf)
    inexact = (r64 != x) & ~np.isnan(x)
    u = r.view(np.uint32) - grew.astype(np.uint32)
    u = u | inexact.astype(np.uint32)
    return u.view(F32)


def _saturate_fp8(x: np.ndarray, dst: DType) -> np.ndarray:
    limit = _FP8_MAX.get(dst.ir_name)
    if limit is None:
        return x
    return np.clip(x, -limit, limit)  # NaN stays NaN


def round_result(x: Any, dst: DType) -> np.ndarray:
    """Round a float32 (or exact wider) result of an op on ``dst`` back to ``dst``."""
    x = np.asarray(x)
    if x.dtype == F64 and dst.bits < 64:
        return float_to_float(x, dst)
    if dst.bits == 8:
        x = _saturate_fp8(x, dst)
    return x.astype(storage_dtype(dst))


def float_to_float(x: np.ndarray, dst: DType, rounding: str = "rtne") -> np.ndarray:
    """Convert a float array (any numpy float dtype) to ``dst``, rounding once."""
    want = storage_dtype(dst)
    src = x.dtype
    if src.itemsize < 4 and src not in (F32, F64):
        x = x.astype(F32)                      # exact: every narrow float fits in f32
        src = F32
    if dst.bits == 8:
        x = _saturate_fp8(x, dst)
    if want in (F32, F64, np.dtype(np.float16)) or src == F32:
        # numpy rounds f64->f32, f64->f16, f32->f16 once; ml_dtypes rounds f32->bf16/fp8 once
        r = x.astype(want)
    else:
        r = _f64_to_f32_round_to_odd(x).astype(want)
    if rounding == "rtz":
        r = _toward_zero(r, x, dst)
    return r


def _toward_zero(r: np.ndarray, x: np.ndarray, dst: DType) -> np.ndarray:
    """Step the round-to-nearest result ``r`` of ``x`` one ulp toward zero where it grew."""
    grew = np.abs(r.astype(F64)) > np.abs(x.astype(F64))
    if not grew.any():
        return r
    u_t = _uint_of(dst.bits)
    u = r.view(u_t) - grew.astype(u_t)        # sign-magnitude: one less is one ulp smaller
    if dst.ir_name.endswith("fnuz"):
        # the "negative zero" pattern is NaN in the fnuz formats: make it +0
        sign = u_t.type(1 << (dst.bits - 1))
        u = np.where(grew & (u == sign), u_t.type(0), u)
    return u.view(r.dtype)


def float_to_int(x: np.ndarray, dst: DType) -> np.ndarray:
    """Truncate toward zero and saturate to the range of ``dst``; NaN gives 0."""
    want = storage_dtype(dst)
    if dst.kind == Kind.BOOL:
        return np.asarray(x != 0)
    info = np.iinfo(want)
    t = np.trunc(x.astype(F64))
    t = np.where(np.isnan(t), 0.0, t)
    lo, hi = float(info.min), float(info.max)  # hi rounds up to 2**63 / 2**64 for 64 bits
    r = np.clip(t, lo, hi).astype(want)
    if dst.bits == 64:
        r = np.where(t >= hi, want.type(info.max), r)
    return r


def int_to_float(x: np.ndarray, dst: DType) -> np.ndarray:
    want = storage_dtype(dst)
    if want in (F32, F64) or x.dtype == np.bool_:
        return x.astype(want)
    return float_to_float(x.astype(F64), dst)   # exact below 2**53


def convert(x: Any, src: DType, dst: DType, rounding: str = "rtne") -> np.ndarray:
    """The ``convert`` op: every pair of element types, shape unchanged."""
    x = np.asarray(x)
    if dst.kind == Kind.FLOAT:
        if src.kind == Kind.FLOAT:
            return float_to_float(x, dst, rounding)
        return int_to_float(x, dst)
    if src.kind == Kind.FLOAT:
        return float_to_int(x, dst)
    if dst.kind == Kind.BOOL:
        return np.asarray(x != 0)
    return x.astype(storage_dtype(dst))      # sign/zero extension by source, or low bits


def scalar(value: Any, t: DType | PointerType) -> np.ndarray:
    """A Python or numpy number as a 0-d array of ``t`` (wrapping ints, rounding floats)."""
    if isinstance(t, PointerType):
        return np.asarray(int(value), dtype=I64)
    if t.kind == Kind.BOOL:
        return np.asarray(bool(value))
    if t.kind == Kind.FLOAT:
        return float_to_float(np.asarray(float(value), dtype=F64), t)
    v = int(value) % (1 << t.bits)
    if t.kind == Kind.INT and v >= 1 << (t.bits - 1):
        v -= 1 << t.bits
    return np.asarray(v, dtype=storage_dtype(t))


def round_to_tf32(x: np.ndarray) -> np.ndarray:
    """Keep 10 significand bits of float32 values, rounding to nearest even."""
    u = np.ascontiguousarray(x, dtype=F32).view(np.uint32)
    finite = (u & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
    bias = np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))
    r = (u + bias) & np.uint32(0xFFFFE000)
    return np.where(finite, r, u).view(F32)


_ERF: Callable[[Any], Any] = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """numpy has no erf: use math.erf per element (in float64, then the caller rounds)."""
    return np.asarray(_ERF(np.asarray(x, dtype=F64)), dtype=F64).astype(x.dtype)


def round_half_away(x: np.ndarray) -> np.ndarray:
    """llvm.round: to the nearest integer, halfway cases away from zero."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(x.dtype)


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, dst: DType) -> np.ndarray:
    """``a * b + c`` rounded once to ``dst``.

    For types up to float32 the product is exact in float64; TwoSum gives the exact sum as
    ``s + e`` and rounding ``s`` to odd with ``e`` as sticky bit makes the final rounding
    to ``dst`` a single one. float64 has no wider type: ``fma64`` computes it.
    """
    if dst.bits == 64:
        return fma64(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    p = a.astype(F64) * b.astype(F64)
    c64 = c.astype(F64)
    s = p + c64
    bb = s - p
    e = (p - (s - bb)) + (c64 - bb)
    inexact = (e != 0) & np.isfinite(s)
    if inexact.any():
        # round s to odd: truncate toward zero (step back when |s| > |exact|) and set the lsb
        toward = inexact & ((e < 0) == (s > 0))
        u = s.view(np.uint64) - toward.astype(np.uint64)
        s = (u | inexact.astype(np.uint64)).view(F64)
    return float_to_float(s, dst)


def _two_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = x + y
    bb = s - x
    return s, (x - (s - bb)) + (y - bb)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split: x = hi + lo exactly, each with at most 26 significant bits."""
    t = x * 134217729.0  # 2^27 + 1
    hi = t - (t - x)
    return hi, x - hi


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` in float64 rounded once, as the GPU's ``fma.rn.f64``.

    The product is exact as ``ph + pl`` (Dekker's product on Veltkamp's split, valid while
    neither the split nor the error term overflows or underflows); then Boldo and
    Melquiond's emulation: ``th + tl = c + ph`` exactly, ``v`` = ``tl + pl`` rounded to odd,
    and ``th + v`` rounded to nearest is the correctly rounded ``ph + pl + c``. Elements
    outside the safe exponent range (and the exact zeros, whose sign IEEE defines by the
    operands) take exact rational arithmetic instead."""
    a, b, c = np.broadcast_arrays(a, b, c)
    shape = a.shape
    a, b, c = (np.atleast_1d(t) for t in (a, b, c))
    with np.errstate(all="ignore"):
        ph = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
        th, tl = _two_sum(c, ph)
        s, e = _two_sum(tl, pl)
        inexact = e != 0
        toward = inexact & ((e < 0) == (s > 0))  # |s| > |exact|: truncate by one step
        v = ((s.view(np.uint64) - toward.astype(np.uint64)) | inexact.astype(np.uint64)).view(F64)
        out = th + v
        ea, eb, ec = (np.abs(t) for t in (a, b, c))
        safe = ((ea < 2.0 ** 995) & (eb < 2.0 ** 995) & (ec < 2.0 ** 1000) & (np.abs(ph) < 2.0 ** 1000)
                & ((np.abs(ph) > 2.0 ** -960) | (ph == 0)) & ((ec > 2.0 ** -960) | (c == 0)) & (out != 0))
        nonfinite = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c))
        out = np.where(nonfinite, a * b + c, out)
    slow = ~(safe | nonfinite)
    if slow.any():
        out = np.array(out, F64)
        for i in zip(*np.nonzero(slow)):
            out[i] = _fma_exact(float(a[i]), float(b[i]), float(c[i]))
    return out.reshape(shape)[()] if shape == () else out


def _fma_exact(a: float, b: float, c: float) -> float:
    from fractions import Fraction

    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:  # +0 unless both addends are zeros of one sign (IEEE 754 6.3)
        return a * b + c if (a * b == 0 and c == 0) else 0.0
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf
