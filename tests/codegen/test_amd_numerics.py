"""Numerics of the AMDGPU elementwise lowerings, run on this CPU (``amd_host_jit``): the
per-element code of ``tlxc/codegen/amdgpu/lower_arith.py``, ``lower_cast.py`` and
``lower_math.py`` is JIT-compiled for the host and compared with the interpreter's rule for
the same op (``tlxc/interpreter/rules/arith.py``) on dense sweeps and special values:
+-0, +-inf, NaN, subnormals, the integer extremes, shift counts past the width, huge
arguments of sin/cos/tan.

Exact agreement is required everywhere except the math functions, which are held to the
ulp bounds of ``MATH_ULP`` (the fast f32 ``exp`` is Triton's ``exp2(x * log2 e)``; the AMD
intrinsics replaced on the host are listed in ``amd_host_jit.SUBSTITUTES``).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from amd_host_jit import jit_elementwise, reference, storage, ulp_error

from tlxc.codegen.amdgpu import lower_arith, lower_cast, lower_math
from tlxc.ir import ops
from tlxc.ir.types import BY_NAME, DType, Kind

ARCHS = ("gfx942", "gfx950")  # fnuz and OCP fp8; gfx1250 runs gfx950's code paths
FP8_OF = {"gfx942": ("f8e4m3fnuz", "f8e5m2fnuz"), "gfx950": ("f8e4m3", "f8e5m2")}
INTS = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOATS = ("f16", "bf16", "f32", "f64")
rng = np.random.default_rng(1234)


def T(name: str) -> DType:
    return BY_NAME[name]


def int_values(t: DType) -> np.ndarray:
    if t.kind == Kind.BOOL:
        return np.array([False, True])
    info = np.iinfo(storage(t))
    edge = [0, 1, 2, 3, 7, t.bits - 1, t.bits, t.bits + 1, 2 * t.bits, info.max, info.max - 1, 100]
    if t.kind == Kind.INT:
        edge += [-1, -2, -7, -t.bits, info.min, info.min + 1, -100]
    rand = rng.integers(info.min, info.max, size=40, dtype=storage(t), endpoint=True)
    edge_arr = np.array([v % (1 << t.bits) for v in edge], dtype=np.uint64).astype(storage(t))
    return np.concatenate([edge_arr, rand])


def float_values(t: DType, n: int = 300) -> np.ndarray:
    """Specials, subnormals, ordinary values of both signs over the type's range."""
    dt = storage(t)
    if t.bits <= 16:  # every value of the type
        bits = np.arange(1 << t.bits, dtype=np.uint16 if t.bits == 16 else np.uint8)
        return bits.view(dt)
    info = np.finfo(dt)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0, 0.1, float(info.max),
                -float(info.max), float(info.tiny), float(info.tiny) / 3, float(info.smallest_subnormal), 1e-30,
                7.0, -7.5, 2.0 ** 24 + 1, 1e10, 123.456]
    mant = rng.uniform(1, 2, n) * rng.choice([-1, 1], n)
    expo = rng.integers(-20, 20, n)
    wide = rng.uniform(1, 2, n // 2) * np.exp2(rng.integers(info.minexp, info.maxexp, n // 2).astype(float))
    return np.concatenate([np.array(specials), mant * np.exp2(expo), wide, -wide]).astype(dt)


def pairs(a: np.ndarray, b: np.ndarray, limit: int = 40000) -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) pair, or ``limit`` random ones when there are more."""
    if a.size * b.size <= limit:
        x, y = np.meshgrid(a, b)
        return x.ravel(), y.ravel()
    return a[rng.integers(0, a.size, limit)], b[rng.integers(0, b.size, limit)]


def same(got: np.ndarray, want: np.ndarray, t: DType, signed_zero: bool = True) -> None:
    """Equal values (NaN matching NaN, any NaN bits); ±0 told apart unless told not to."""
    if t.kind != Kind.FLOAT:
        bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~((g == w) | (np.isnan(g) & np.isnan(w)))
        if signed_zero:
            bad |= (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
    if bad.any():
        i = np.flatnonzero(bad)[:8]
        raise AssertionError(f"{int(bad.sum())} mismatches, e.g. got {got[i]!r} want {want[i]!r} (index {i})")


def quiet() -> warnings.catch_warnings:
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    return w


# -- integers ----------------------------------------------------------------------------------------

INT_BINARY = {"add": ops.AddOp, "sub": ops.SubOp, "mul": ops.MulOp, "idiv": ops.IDivOp, "rem": ops.RemOp,
              "and": ops.AndOp, "or": ops.OrOp, "xor": ops.XorOp, "shl": ops.ShlOp, "shr": ops.ShrOp,
              "minimum": ops.MinimumOp, "maximum": ops.MaximumOp}


@pytest.mark.parametrize("tn", INTS)
@pytest.mark.parametrize("name", list(INT_BINARY))
def test_int_binary(name: str, tn: str) -> None:
    quiet()
    t = T(tn)
    x, y = pairs(int_values(t), int_values(t))
    f = jit_elementwise(lambda e, a: lower_arith.int_binary(e, t, name, a[0], a[1]), [t, t], t)
    same(f(x, y), reference(INT_BINARY[name], [t, t], t, {}, x, y), t)


@pytest.mark.parametrize("tn", INTS)
@pytest.mark.parametrize("name", ["neg", "not", "abs"])
def test_int_unary(name: str, tn: str) -> None:
    quiet()
    t = T(tn)
    x = int_values(t)
    cls = {"neg": ops.NegOp, "not": ops.NotOp, "abs": ops.AbsOp}[name]
    f = jit_elementwise(lambda e, a: lower_arith.unary_value(e, t, name, a[0]), [t], t)
    same(f(x), reference(cls, [t], t, {}, x), t)


# -- floats ------------------------------------------------------------------------------------------

FLOAT_BINARY = {"add": ops.AddOp, "sub": ops.SubOp, "mul": ops.MulOp, "div": ops.DivOp, "rem": ops.RemOp,
                "minimum": ops.MinimumOp, "maximum": ops.MaximumOp}


def float_types(arch: str) -> tuple[str, ...]:
    return FLOATS + FP8_OF[arch]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", list(FLOAT_BINARY) + ["minimum!", "maximum!"])
def test_float_binary(name: str, arch: str) -> None:
    quiet()
    propagate = name.endswith("!")
    name = name.rstrip("!")
    for tn in float_types(arch):
        if arch != "gfx942" and tn in FLOATS:
            continue  # the same code on both chips: once is enough
        t = T(tn)
        vals = float_values(t)
        if t.bits == 16:
            vals = vals[rng.choice(vals.size, 600, replace=False)]
            vals = np.concatenate([vals, float_values(T("f32"), 20).astype(storage(t))])
        x, y = pairs(vals, vals)
        f = jit_elementwise(lambda e, a: lower_arith.float_binary(e, t, name, a[0], a[1], propagate), [t, t], t,
                            arch=arch)
        attrs = {"propagate_nan": propagate} if name in ("minimum", "maximum") else {}
        want = reference(FLOAT_BINARY[name], [t, t], t, attrs, x, y)
        # numpy's minimum/maximum order +0 and -0 by argument position; LLVM's by sign
        same(f(x, y), want, t, signed_zero=name not in ("minimum", "maximum"))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", ["neg", "abs"])
def test_float_unary(name: str, arch: str) -> None:
    quiet()
    for tn in float_types(arch):
        t = T(tn)
        x = float_values(t)
        cls = {"neg": ops.NegOp, "abs": ops.AbsOp}[name]
        f = jit_elementwise(lambda e, a: lower_arith.unary_value(e, t, name, a[0]), [t], t, arch=arch)
        same(f(x), reference(cls, [t], t, {}, x), t)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_float_compare(pred: str, arch: str) -> None:
    quiet()
    i1 = T("i1")
    for tn in float_types(arch):
        t = T(tn)
        vals = float_values(t)
        x, y = pairs(vals, vals, 20000)
        f = jit_elementwise(lambda e, a: lower_arith.compare(e, t, pred, a[0], a[1]), [t, t], i1, arch=arch)
        same(f(x, y), reference(ops.CmpOp, [t, t], i1, {"predicate": pred}, x, y), i1)


@pytest.mark.parametrize("arch", ARCHS)
def test_fma(arch: str) -> None:
    quiet()
    for tn in float_types(arch):
        t = T(tn)
        vals = float_values(t)
        n = 30000
        x, y, z = (vals[rng.integers(0, vals.size, n)] for _ in range(3))
        if tn == "bf16":  # products that land exactly on halfway points, plus a tiny addend
            x = np.concatenate([x, np.full(4, 1.0 + 2 ** -7, storage(t))])
            y = np.concatenate([y, np.full(4, 1.0 + 2 ** -2, storage(t))])
            z = np.concatenate([z, np.array([1e-30, -1e-30, 0.0, 2 ** -20], storage(t))])
        f = jit_elementwise(lambda e, a: lower_arith.fma_value(e, t, a[0], a[1], a[2]), [t, t, t], t, arch=arch)
        got, want = f(x, y, z), reference(ops.FmaOp, [t, t, t], t, {}, x, y, z)
        if tn == "f64":  # the interpreter's f64 fma rounds twice: check against exact sums
            want = want.copy()
            for i in np.flatnonzero(np.isfinite(x) & np.isfinite(y) & np.isfinite(z)):
                exact = Fraction(float(x[i])) * Fraction(float(y[i])) + Fraction(float(z[i]))
                try:
                    want[i] = float(exact)
                except OverflowError:
                    want[i] = np.inf if exact > 0 else -np.inf
            finite_xy = np.isfinite(x) & np.isfinite(y) & np.isinf(z)
            want[finite_xy] = z[finite_xy]  # the exact product is finite: the infinite addend wins
            same(got, want, t, signed_zero=False)
        else:
            same(got, want, t)


# -- conversions ----------------------------------------------------------------------------------------

def convert_inputs(t: DType) -> np.ndarray:
    if t.kind == Kind.FLOAT:
        v = float_values(t)
        if t.bits >= 32:  # values near the narrow formats' rounding and saturation points
            near = np.concatenate([np.linspace(-600, 600, 3001), np.linspace(-1, 1, 2001), [57344.0, 61440.0, 1e5,
                                   448.0, 464.0, 240.0, 248.0, 65504.0, 65520.0, 2.0 ** 31, -2.0 ** 63, 2.0 ** 64,
                                   3e9, -3e9, 1.0 + 2 ** -8 + 2 ** -30, 2.0 ** -133, 2.0 ** -10, 2.0 ** -17]])
            ulps = np.concatenate([near, near * (1 + 2.0 ** -20), near * (1 - 2.0 ** -20)])
            v = np.concatenate([v, ulps.astype(storage(t))])
        return v
    return int_values(t)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("src", INTS + FLOATS + ("fp8e4", "fp8e5"))
def test_convert(src: str, arch: str) -> None:
    quiet()
    fp8 = FP8_OF[arch]
    src = {"fp8e4": fp8[0], "fp8e5": fp8[1]}.get(src, src)
    s = T(src)
    x = convert_inputs(s)
    for dn in INTS + FLOATS + fp8:
        d = T(dn)
        if d == s:
            continue
        roundings = ["rtne", "rtz"] if (s.kind == Kind.FLOAT and d.kind == Kind.FLOAT and d.bits < s.bits) \
            else ["rtne"]
        for rounding in roundings:
            f = jit_elementwise(lambda e, a: lower_cast.convert_value(e, s, d, a[0], rounding), [s], d, arch=arch)
            got, want = f(x), reference(ops.ConvertOp, [s], d, {"rounding": rounding}, x)
            try:
                same(got, want, d)
            except AssertionError as err:
                raise AssertionError(f"{src} -> {dn} ({rounding}): {err}") from None


def test_fp8_software_conversions_are_exact() -> None:
    """The software fp8 encoder/decoder (the host's stand-ins for the instructions) against
    ml_dtypes, every byte and a sweep of f32 values, for all four formats."""
    quiet()
    f32 = T("f32")
    x = convert_inputs(f32)
    for name, fmt in lower_cast.FP8.items():
        t = T(name)
        dec = jit_elementwise(lambda e, a: lower_cast.fp8_decode_soft(e.b, fmt, a[0]), [T("u8")], f32)
        codes = np.arange(256, dtype=np.uint8)
        same(dec(codes), codes.view(storage(t)).astype(np.float32), f32)
        enc = jit_elementwise(lambda e, a: lower_cast.fp8_encode_soft(e, fmt, a[0]), [f32], T("u8"))
        want = np.clip(x, -fmt.max_value, fmt.max_value).astype(storage(t))
        got = enc(x).view(storage(t))
        same(got, want, t)
        assert ml_dtypes.finfo(storage(t)).max == fmt.max_value


# -- math ---------------------------------------------------------------------------------------------

#: max ulp error allowed against the interpreter (numpy) per (function, type)
MATH_ULP = {
    ("exp", "f32"): 64.0,   # Triton's fast exp2(x * log2 e): x * log2e rounded in f32, <= 2^-17.5 relative
    ("exp2", "f32"): 1.0, ("log", "f32"): 1.0, ("log2", "f32"): 1.0, ("rsqrt", "f32"): 1.0,
}
DEFAULT_ULP = {"f64": 1.0, "f32": 1.0, "f16": 1.0, "bf16": 1.0}
EXACT = ("sqrt", "floor", "ceil", "trunc", "round")
MEASURED: dict[tuple[str, str], float] = {}


def math_inputs(name: str, t: DType) -> np.ndarray:
    x = float_values(t, 2000 if t.bits >= 32 else 300)
    if t.bits >= 32 and name in ("sin", "cos", "tan"):
        big = np.concatenate([rng.uniform(1, 2, 500) * np.exp2(rng.integers(0, 127 if t.bits == 32 else 1023, 500)),
                              [2.0 ** 32, 2.0 ** 32 * (1 - 2 ** -20), 1e22, 3.14159265358979, 1.5707963267948966,
                               6.283185307179586, 1e300 if t.bits == 64 else 3e38, 355.0, 103993.0]])
        x = np.concatenate([x, big.astype(storage(t)), -big.astype(storage(t))])
    if name in ("exp", "exp2", "tanh", "erf"):
        x = np.concatenate([x, np.linspace(-120, 120, 4001).astype(storage(t))])
    if name in ("floor", "ceil", "trunc", "round"):
        x = np.concatenate([x, (np.arange(-400, 400) / 4).astype(storage(t))])
    return x


@pytest.mark.parametrize("tn", FLOATS)
@pytest.mark.parametrize("name", list(ops.MATH_OPS))
def test_math(name: str, tn: str) -> None:
    quiet()
    t = T(tn)
    x = math_inputs(name, t)
    f = jit_elementwise(lambda e, a: lower_math.math_value(e, t, name, a[0]), [t], t)
    got, want = f(x), reference(ops.MATH_OPS[name], [t], t, {}, x)
    if tn == "f32":  # numpy's own f32 log/exp are ~3 ulp here: the interpreter's f64 result, rounded
        f64 = BY_NAME["f64"]
        want = reference(ops.MATH_OPS[name], [f64], f64, {}, x.astype(np.float64)).astype(np.float32)
    err = ulp_error(got, want, t)
    bad_nan = np.isnan(err)
    assert not bad_nan.any(), \
        f"NaN/inf mismatch at {x[bad_nan][:5]!r}: got {got[bad_nan][:5]!r} want {want[bad_nan][:5]!r}"
    worst = float(err.max()) if err.size else 0.0
    MEASURED[(name, tn)] = worst
    limit = 0.0 if name in EXACT else MATH_ULP.get((name, tn), DEFAULT_ULP[tn])
    i = int(np.argmax(err))
    assert worst <= limit, f"{name} {tn}: {worst} ulp at {x[i]!r} (got {got[i]!r}, want {want[i]!r})"


@pytest.mark.parametrize("arch", ARCHS)
def test_math_fp8(arch: str) -> None:
    """fp8 math: in f32, rounded back saturating, as the interpreter computes it."""
    quiet()
    for tn in FP8_OF[arch]:
        t = T(tn)
        x = float_values(t)
        for name in ops.MATH_OPS:
            f = jit_elementwise(lambda e, a: lower_math.math_value(e, t, name, a[0]), [t], t, arch=arch)
            err = ulp_error(f(x), reference(ops.MATH_OPS[name], [t], t, {}, x), t)
            assert not np.isnan(err).any() and err.max() <= (0 if name in EXACT else 1), (name, tn)


def test_float_rem_is_exact_on_hard_cases() -> None:
    """fmod across the whole exponent range (the long division's many trips) and
    subnormal results."""
    quiet()
    for tn in ("f32", "f64"):
        t = T(tn)
        info = np.finfo(storage(t))
        n = 4000
        x = (rng.uniform(1, 2, n) * np.exp2(rng.integers(info.minexp - 20, info.maxexp, n).astype(float)))
        y = (rng.uniform(1, 2, n) * np.exp2(rng.integers(info.minexp - 20, info.maxexp, n).astype(float)))
        x, y = x.astype(storage(t)), y.astype(storage(t))
        x = np.concatenate([x, -x, [float(info.max), 5.0, -0.0]]).astype(storage(t))
        y = np.concatenate([y, y, [float(info.smallest_subnormal), 0.0, 3.0]]).astype(storage(t))
        f = jit_elementwise(lambda e, a: lower_arith.float_binary(e, t, "rem", a[0], a[1]), [t, t], t)
        same(f(x, y), np.fmod(x, y), t)
