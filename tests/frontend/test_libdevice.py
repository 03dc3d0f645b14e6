"""``tlxc.language.extra.libdevice`` (also ``...extra.cuda.libdevice`` and
``tl.extra.cuda.libdevice`` in kernels): each mapped name in the interpreter against numpy,
every import spelling, a kernel of a dozen names compiled for sm_90a (through ptxas where
installed) and gfx942, and TLXC-NAME-002 for a name tlxc has no faithful version of.

Under ``TLXC_TEST_ON_GPU=1`` (root ``conftest.py``) the ``.interpret`` launches run on the
GPU: the f32 names that are NVIDIA's hardware approximations (the module docstring's table)
are then held to the bound the PTX ISA documents for them instead of numpy's precision.
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable

import numpy as np
import pytest

import tlxc
from tlxc.codegen.nvptx.toolchain import find_tool

N = 64
ON_GPU = os.environ.get("TLXC_TEST_ON_GPU") not in (None, "", "0")
_RNG = np.random.default_rng(7)


def _spread(dtype: Any) -> np.ndarray:
    """Values of both signs and several magnitudes, halfway cases, -0, inf and NaN."""
    base = np.concatenate([
        [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, -7.5, 1.0, -1.0, np.inf, -np.inf, np.nan,
         2.0 ** 23 + 1, -(2.0 ** 23) - 3, 1e30, -1e-30],
        _RNG.uniform(-20, 20, N - 18),
    ])
    return base.astype(dtype)


def _kernel_source(call: str, nargs: int, spelling: str = "from tlxc.language.extra import libdevice") -> str:
    params = ", ".join(f"x{i}" for i in range(nargs))
    loads = ", ".join(f"tl.load(x{i} + offs)" for i in range(nargs))
    return f"""
{spelling}


@tlxc.jit
def k({params}, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, {call}({loads}))
"""


@functools.lru_cache(maxsize=None)
def _kernel(call: str, nargs: int, spelling: str = "from tlxc.language.extra import libdevice") -> Any:
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="tlxc_libdevice_"))
    name = f"_libdevice_case_{abs(hash((call, nargs, spelling)))}"
    path = folder / f"{name}.py"
    path.write_text("import tlxc\nimport tlxc.language as tl\n" + _kernel_source(call, nargs, spelling))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod.k


def _run(name: str, out_dtype: Any, *args: np.ndarray) -> np.ndarray:
    out = np.zeros(N, out_dtype)
    _kernel(f"libdevice.{name}", len(args)).interpret[(1,)](*args, out, N=N)
    return out


def _round_away(x: np.ndarray) -> np.ndarray:
    """C's round, exactly: trunc(x), plus one away from zero where the dropped part is >= 1/2."""
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x - t) >= 0.5, t + np.copysign(1.0, x), t).astype(x.dtype)


_ERF = np.vectorize(math.erf)
FLOAT_UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], float]] = {
    # name: (numpy reference, relative tolerance); the interpreter computes the math ops in
    # numpy, so these show that each name is the op it should be
    "exp": (np.exp, 1e-6), "exp2": (np.exp2, 1e-6), "log": (np.log, 1e-6), "log2": (np.log2, 1e-6),
    "sin": (np.sin, 1e-6), "cos": (np.cos, 1e-6), "tan": (np.tan, 1e-5), "tanh": (np.tanh, 1e-6),
    "sqrt": (np.sqrt, 0), "sqrt_rn": (np.sqrt, 0), "rsqrt": (lambda x: 1 / np.sqrt(x), 1e-6),
    "erf": (_ERF, 1e-6), "floor": (np.floor, 0), "ceil": (np.ceil, 0), "trunc": (np.trunc, 0),
    "round": (_round_away, 0), "rint": (np.rint, 0),
    "nearbyint": (np.rint, 0), "abs": (np.abs, 0), "rcp_rn": (lambda x: 1 / x, 0),
    "fast_expf": (np.exp, 1e-6), "fast_logf": (np.log, 1e-6), "fast_log2f": (np.log2, 1e-6),
    "fast_sinf": (np.sin, 1e-6), "fast_cosf": (np.cos, 1e-6), "fast_tanf": (np.tan, 1e-5),
    "fast_exp10f": (lambda x: 10.0 ** x, 1e-5), "fast_log10f": (np.log10, 1e-6),
    "saturatef": (lambda x: np.where(np.isnan(x), 0, np.clip(x, 0, 1)), 0),
}
ONLY_F32 = {n for n in FLOAT_UNARY if n.startswith("fast_")} | {"saturatef"}

# The PTX ISA's bounds for the approximations NVIDIA f32 uses (section "Floating Point
# Instructions"), each plus one ulp at 1 for the rounding of the f32 reference.
SINCOS_APPROX = 2.0 ** -20.5 + 2.0 ** -23  # sin/cos.approx.f32: absolute, for |x| <= pi
# beyond pi the hardware's own range reduction adds error: up to 1.94e-6 (2^-19) measured
# on the H200 for |x| <= 20; 2^-18 is allowed up to 100 pi
SINCOS_APPROX_WIDE = 2.0 ** -18
TANH_APPROX = 2.0 ** -10.9                 # tanh.approx.f32: 2^-10.987 relative
DIV_FULL = 2.0 ** -22                      # div.full.f32: 2 ulp
EX2_LG2_APPROX = 2.0 ** -21                # ex2.approx / lg2.approx.f32: 2^-22 (relative; absolute near 1 for lg2)


def _tan_bound(x: np.ndarray, want: np.ndarray) -> np.ndarray:
    """sin.approx / cos.approx: absolute errors d in both give about d (1 + |tan x|) / |cos x|,
    and the quotient's own rounding."""
    c = np.abs(np.cos(x.astype(np.float64)))
    d = np.where(np.abs(x.astype(np.float64)) <= np.pi, SINCOS_APPROX, SINCOS_APPROX_WIDE)
    return d * (1 + np.abs(want)) / c + DIV_FULL * np.abs(want)


def _gpu_f32_check(name: str, x: np.ndarray, got: np.ndarray, want: np.ndarray) -> bool:
    """On the GPU, check ``name`` (f32) against its documented bound; False if the name is
    not an approximation there (then the interpreter's tolerance holds)."""
    in_range = np.abs(x.astype(np.float64)) <= 100 * np.pi  # nothing is promised beyond
    if name in ("sin", "cos", "fast_sinf", "fast_cosf"):
        core = np.abs(x.astype(np.float64)) <= np.pi
        np.testing.assert_allclose(got[core], want[core], rtol=0, atol=SINCOS_APPROX)
        np.testing.assert_allclose(got[in_range], want[in_range], rtol=0, atol=SINCOS_APPROX_WIDE)
    elif name in ("tan", "fast_tanf"):
        # closer to a pole than 2^-10 the bound says little (cos.approx may even give 0)
        near = in_range & (np.abs(np.cos(x.astype(np.float64))) > 2.0 ** -10)
        err = np.abs(got[near].astype(np.float64) - want[near])
        assert (err <= _tan_bound(x[near], want[near])).all(), (x[near], got[near], want[near])
    elif name == "tanh":
        np.testing.assert_allclose(got, want, rtol=TANH_APPROX, atol=0, equal_nan=True)
    else:
        return False
    assert np.array_equal(np.isnan(got[in_range]), np.isnan(want[in_range]))
    return True


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_against_numpy(name: str, dtype: Any) -> None:
    if dtype is np.float64 and name in ONLY_F32:
        pytest.skip("libdevice has this name for float32 only")
    ref, rtol = FLOAT_UNARY[name]
    x = _spread(dtype)
    with np.errstate(all="ignore"):
        want = ref(x).astype(dtype)
        got = _run(name, dtype, x)
    if ON_GPU and dtype is np.float32 and _gpu_f32_check(name, x, got, want):
        return
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    if rtol == 0 and name != "saturatef":  # the exact ones also keep the sign of zero
        # (of a NaN too, except that numpy's sqrt(-1) has its sign bit set and the GPU's
        # canonical NaN does not: a NaN's sign is not a result)
        number = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


def test_rint_is_half_to_even_not_away() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.5, 4.5, -0.3, 8388607.5, 2.0 ** 24 + 2] + [0.0] * (N - 10),
                 np.float32)
    got = _run("rint", np.float32, x)
    assert got[:10].tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 4.0, 4.0, -0.0, 8388608.0, 2.0 ** 24 + 2]
    assert np.signbit(got[7]) and np.signbit(got[3])
    assert _run("round", np.float32, x)[:7].tolist() == [1.0, 2.0, 3.0, -1.0, -3.0, 4.0, 5.0]


FLOAT_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "copysign": np.copysign, "fmod": np.fmod, "div_rn": np.divide, "fast_dividef": np.divide,
    "fdim": lambda x, y: np.where(x <= y, 0.0, x - y).astype(x.dtype),
    "fast_powf": lambda x, y: np.exp2(y * np.log2(x)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_float_binary_against_numpy(name: str, dtype: Any) -> None:
    if dtype is np.float64 and name.startswith("fast_"):
        pytest.skip("libdevice has this name for float32 only")
    x, y = _spread(dtype), _spread(dtype)[::-1].copy()
    if name == "fast_powf":
        x = np.abs(x)
    with np.errstate(all="ignore"):
        want = FLOAT_BINARY[name](x, y).astype(dtype)
        got = _run(name, dtype, x, y)
        if ON_GPU and name == "fast_powf":
            # ex2.approx(y * lg2.approx(x)): lg2's error scaled by |y|, ex2's own, the
            # product's rounding (relative 2^-24 of y*log2(x), times ln 2 in the result)
            t = (y * np.log2(x)).astype(np.float64)
            rel = EX2_LG2_APPROX * (1 + np.log(2) * np.abs(y) * np.maximum(1, np.abs(np.log2(x)))
                                    + np.log(2) * np.abs(t) / 4)
            normal = np.isfinite(want) & (np.abs(want) >= 2.0 ** -126) & (np.abs(t) < 126)
            err = np.abs(got[normal].astype(np.float64) - want[normal])
            assert (err <= rel[normal] * np.abs(want[normal])).all(), (x[normal], y[normal], got[normal], want[normal])
            assert np.array_equal(np.isnan(got), np.isnan(want))
            return
    rtol = {"fast_powf": 1e-6, "fast_dividef": DIV_FULL if ON_GPU else 0}.get(name, 0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


def test_fdim_of_nan_is_nan() -> None:
    x = np.full(N, np.nan, np.float32)
    x[1] = 3.0
    y = np.full(N, 1.0, np.float32)
    y[1] = np.nan
    got = _run("fdim", np.float32, x, y)
    assert np.isnan(got).all()


def _fma_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once (math.fma from Python 3.13, exact rationals before)."""
    from fractions import Fraction

    one = getattr(math, "fma", None) or (lambda x, y, z: float(Fraction(x) * Fraction(y) + Fraction(z)))
    return np.array([one(float(x), float(y), float(z)) for x, y, z in zip(a, b, c)])


def test_fma() -> None:
    a, b, c = (_RNG.uniform(-4, 4, N).astype(np.float64) for _ in range(3))
    c[:8] = -(a[:8] * b[:8])  # the rounding error of the product is all that is left
    want = _fma_reference(a, b, c)
    assert (want[:8] != 0).any() and not np.array_equal(want, a * b + c)
    for name in ("fma", "fma_rn"):
        np.testing.assert_array_equal(_run(name, np.float64, a, b, c), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_classification(dtype: Any) -> None:
    x = _spread(dtype)
    x[20] = -np.nan
    np.testing.assert_array_equal(_run("isnan", np.bool_, x), np.isnan(x))
    np.testing.assert_array_equal(_run("isinf", np.bool_, x), np.isinf(x))
    np.testing.assert_array_equal(_run("signbit", np.int32, x), np.signbit(x).astype(np.int32))
    name = "finitef" if dtype is np.float32 else "isfinited"
    np.testing.assert_array_equal(_run(name, np.int32, x), np.isfinite(x).astype(np.int32))


def test_float_to_int_roundings() -> None:
    x = np.tile(np.array([2.5, -2.5, 2.4, -2.6, 3.5, 0.0, -0.5, 7.9], np.float32), N // 8)
    assert _run("float2int_rn", np.int32, x)[:8].tolist() == [2, -2, 2, -3, 4, 0, 0, 8]
    assert _run("float2int_rz", np.int32, x)[:8].tolist() == [2, -2, 2, -2, 3, 0, 0, 7]
    assert _run("float2int_rd", np.int32, x)[:8].tolist() == [2, -3, 2, -3, 3, 0, -1, 7]
    assert _run("float2int_ru", np.int32, x)[:8].tolist() == [3, -2, 3, -2, 4, 0, 0, 8]
    assert _run("float2ll_rd", np.int64, x)[:8].tolist() == [2, -3, 2, -3, 3, 0, -1, 7]
    d = x.astype(np.float64) * 1e9
    np.testing.assert_array_equal(_run("double2ll_rn", np.int64, d), np.rint(d).astype(np.int64))
    np.testing.assert_array_equal(_run("llrint", np.int64, d), np.rint(d).astype(np.int64))
    np.testing.assert_array_equal(_run("llround", np.int64, x), _round_away(x))
    p = np.abs(x)
    assert _run("float2uint_ru", np.uint32, p)[:8].tolist() == [3, 3, 3, 3, 4, 0, 1, 8]


def test_int_to_float_and_bit_casts() -> None:
    i = _RNG.integers(-(2 ** 31), 2 ** 31, N, dtype=np.int64).astype(np.int32)
    np.testing.assert_array_equal(_run("int2float_rn", np.float32, i), i.astype(np.float32))
    np.testing.assert_array_equal(_run("int2double_rn", np.float64, i), i.astype(np.float64))
    big = _RNG.integers(-(2 ** 62), 2 ** 62, N, dtype=np.int64)
    np.testing.assert_array_equal(_run("ll2double_rn", np.float64, big), big.astype(np.float64))
    f = _spread(np.float32)
    np.testing.assert_array_equal(_run("float_as_int", np.int32, f), f.view(np.int32))
    np.testing.assert_array_equal(_run("int_as_float", np.float32, f.view(np.int32)).view(np.int32), f.view(np.int32))
    d = _spread(np.float64)
    np.testing.assert_array_equal(_run("double_as_longlong", np.int64, d), d.view(np.int64))
    words = d.view(np.int32).reshape(N, 2)  # little endian: [lo, hi]
    np.testing.assert_array_equal(_run("double2hiint", np.int32, d), words[:, 1])
    np.testing.assert_array_equal(_run("double2loint", np.int32, d), words[:, 0])
    back = _run("hiloint2double", np.float64, words[:, 1].copy(), words[:, 0].copy())
    np.testing.assert_array_equal(back.view(np.int64), d.view(np.int64))
    np.testing.assert_array_equal(_run("double2float_rn", np.float32, d), d.astype(np.float32))


def test_integer_helpers() -> None:
    a = _RNG.integers(-(2 ** 31), 2 ** 31, N, dtype=np.int64).astype(np.int32)
    b = _RNG.integers(-(2 ** 31), 2 ** 31, N, dtype=np.int64).astype(np.int32)
    a[0], b[0] = 2 ** 31 - 1, 2 ** 31 - 1  # would overflow a plain (a + b) >> 1
    wide_a, wide_b = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(_run("mulhi", np.int32, a, b), ((wide_a * wide_b) >> 32).astype(np.int32))
    np.testing.assert_array_equal(_run("hadd", np.int32, a, b), ((wide_a + wide_b) >> 1).astype(np.int32))
    np.testing.assert_array_equal(_run("rhadd", np.int32, a, b), ((wide_a + wide_b + 1) >> 1).astype(np.int32))
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    want = ((ua.astype(np.uint64) * ub.astype(np.uint64)) >> 32).astype(np.uint32)
    np.testing.assert_array_equal(_run("mulhi", np.uint32, ua, ub), want)


# -- import spellings ---------------------------------------------------------------------------
SPELLINGS = [
    ("import tlxc.language.extra.libdevice as libdevice", "libdevice.tanh"),
    ("import tlxc.language.extra.cuda.libdevice as libdevice", "libdevice.tanh"),
    ("from tlxc.language.extra.cuda import libdevice", "libdevice.tanh"),
    ("from tlxc.language.extra import libdevice", "libdevice.tanh"),
    ("from tlxc.language.extra.libdevice import tanh", "tanh"),
    ("", "tl.extra.cuda.libdevice.tanh"),
    ("", "tl.extra.libdevice.tanh"),
]


@pytest.mark.parametrize("spelling,call", SPELLINGS)
def test_every_import_spelling(spelling: str, call: str) -> None:
    x = np.linspace(-3, 3, N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    _kernel(call, 1, spelling).interpret[(1,)](x, out, N=N)
    np.testing.assert_allclose(out, np.tanh(x), rtol=TANH_APPROX if ON_GPU else 1e-6)


def test_importing_tlxc_does_not_load_libdevice() -> None:
    import subprocess
    import sys

    code = "import sys, tlxc, tlxc.language; print(any('libdevice' in m for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


# -- code generation ------------------------------------------------------------------------------
DOZEN = """
from tlxc.language.extra import libdevice


@tlxc.jit
def k(x, y, out, iout, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    r = libdevice.tanh(a) + libdevice.erf(b) + libdevice.rint(a) + libdevice.copysign(a, b)
    r += libdevice.fmod(a, b) + libdevice.fdim(a, b) + libdevice.round(b) + libdevice.trunc(a)
    r += libdevice.tan(a) + libdevice.fast_expf(b) + libdevice.rsqrt(libdevice.abs(b))
    r = tl.where(libdevice.isnan(r) | libdevice.isinf(r), 0.0, r)
    tl.store(out + offs, r)
    tl.store(iout + offs, libdevice.float2int_rd(a) + libdevice.signbit(b) + libdevice.llrint(b).to(tl.int32))
"""


def _dozen_reference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(all="ignore"):
        r = (np.tanh(a) + _ERF(b).astype(np.float32) + np.rint(a) + np.copysign(a, b) + np.fmod(a, b)
             + np.where(a <= b, 0, a - b) + _round_away(b) + np.trunc(a)
             + np.tan(a) + np.exp(b) + 1 / np.sqrt(np.abs(b))).astype(np.float32)
    r = np.where(np.isnan(r) | np.isinf(r), 0, r)
    i = np.floor(a).astype(np.int32) + np.signbit(b).astype(np.int32) + np.rint(b).astype(np.int32)
    return r, i


def test_dozen_in_interpreter(load_kernels: Any) -> None:
    m = load_kernels(DOZEN)
    a = _RNG.uniform(-3, 3, N).astype(np.float32)
    b = _RNG.uniform(-3, 3, N).astype(np.float32)
    out, iout = np.zeros(N, np.float32), np.zeros(N, np.int32)
    m.k.interpret[(1,)](a, b, out, iout, N=N)
    want, iwant = _dozen_reference(a, b)
    if ON_GPU:  # the approximations' documented bounds (tanh, tan, ex2, rsqrt), term by term
        wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
        bound = (1e-5 * (1 + np.abs(want)) + TANH_APPROX * np.abs(np.tanh(wide_a))
                 + _tan_bound(a, np.tan(wide_a)) + EX2_LG2_APPROX * (np.exp(wide_b) + 1 / np.sqrt(np.abs(wide_b))))
        keep = np.abs(np.cos(wide_a)) > 2.0 ** -10
        assert (np.abs(out - want)[keep] <= bound[keep]).all(), (a, out, want)
    else:
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(iout, iwant)


def test_dozen_compiles_for_sm90a_and_gfx942(load_kernels: Any) -> None:
    m = load_kernels(DOZEN)
    ck = m.k.compile("*fp32,*fp32,*fp32,*i32", {"N": 256}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert "tanh.approx.f32" in ptx and "rsqrt.approx.f32" in ptx and "cvt.rmi.f32.f32" in ptx
    if find_tool("ptxas") is not None:
        assert len(ck.asm["cubin"]) > 0
    amd = m.k.compile("*fp32,*fp32,*fp32,*i32", {"N": 256}, arch="gfx942")
    gcn = amd.asm["amdgcn"]
    assert "s_endpgm" in gcn and "v_rsq_f32" in gcn


def test_f64_names_compile_for_both_targets(load_kernels: Any) -> None:
    m = load_kernels(DOZEN.replace("float2int_rd", "double2int_rd").replace("fast_expf", "exp"))
    for arch, key in (("sm_90a", "ptx"), ("gfx942", "amdgcn")):
        assert m.k.compile("*fp64,*fp64,*fp64,*i32", {"N": 128}, arch=arch).asm[key]


# -- what tlxc does not have ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sinpi", "rhypot", "pow", "add_rn", "popc"])
def test_names_without_a_faithful_version_say_not_supported_yet(load_kernels: Any, name: str) -> None:
    m = load_kernels(f"""
import tlxc.language.extra.cuda.libdevice as libdevice


@tlxc.jit
def k(x):
    v = tl.load(x)
    tl.store(x, libdevice.{name}(v, v))  # ERR
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    err = info.value
    assert err.code == "TLXC-NAME-002"
    assert f"libdevice.{name} is not supported by tlxc yet" in str(err)
    src = open(m.__path_str__).read().splitlines()
    assert f":{next(i for i, s in enumerate(src, 1) if '# ERR' in s)}:" in str(err)


def test_unknown_name_is_still_an_unknown_name(load_kernels: Any) -> None:
    m = load_kernels("""
from tlxc.language.extra import libdevice


@tlxc.jit
def k(x):
    tl.store(x, libdevice.no_such_function(tl.load(x)))
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    assert info.value.code == "TLXC-NAME-001"


def test_wrong_operand_type_is_reported_at_the_call(load_kernels: Any) -> None:
    m = load_kernels("""
from tlxc.language.extra import libdevice


@tlxc.jit
def k(x):
    tl.store(x, libdevice.float2int_rn(tl.load(x)))
""")
    with pytest.raises(tlxc.CompilationError, match="needs a float operand"):
        m.k.compile("*i32")


def test_not_yet_names_are_libdevice_names_tlxc_lacks() -> None:
    from tlxc.language.extra import libdevice

    for name in libdevice.NOT_YET:
        assert not hasattr(libdevice, name), name
