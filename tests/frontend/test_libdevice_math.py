"""The libdevice names written in the kernel language (``libdevice_math.py``): their
error in ulp, measured in the interpreter over wide ranges against numpy's long double
functions (64-bit significands, so the reference is exact to about 2^-11 of a float64
ulp), each held to the bound the module's table states; C's special values (signed zeros,
infinities, NaN, the domain edges); and the code of several names compiled for sm_90a
(through ptxas where installed) and gfx942."""

from __future__ import annotations

import functools
import zlib
from typing import Any, Callable

import numpy as np
import pytest

from tlxc.codegen.nvptx.toolchain import find_tool

N = 4096
LD = np.longdouble
INF, NAN = np.inf, np.nan


def _log_uniform(rng: np.random.Generator, lo: int, hi: int, n: int, signed: bool = True) -> np.ndarray:
    """Magnitudes spread evenly over the binary exponents lo..hi, random significands."""
    m = rng.uniform(1, 2, n) * np.exp2(rng.integers(lo, hi, n).astype(np.float64))
    return m * rng.choice([-1.0, 1.0], n) if signed else m


def _inputs(name: str, dtype: Any) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # hash() is salted per process
    lo, hi = (-1074, 1023) if dtype is np.float64 else (-149, 127)
    q = N // 4
    wide = _log_uniform(rng, lo, hi, q)
    special = np.array([0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-300, -1e-300])
    if name in ("asin", "acos", "atanh"):
        near_one = (1 - np.exp2(-rng.integers(1, 53, q).astype(np.float64))) * rng.choice([-1.0, 1.0], q)
        parts = [rng.uniform(-1, 1, N - 3 * q), near_one, _log_uniform(rng, lo, 0, q), wide]
    elif name in ("sinh", "cosh"):
        parts = [rng.uniform(-30, 30, N - 3 * q), _log_uniform(rng, lo, 0, q), rng.uniform(-715, 715, q), wide]
    elif name == "acosh":
        parts = [1 + _log_uniform(rng, -52, 1, N - 3 * q, False), rng.uniform(1, 30, q),
                 _log_uniform(rng, 0, hi, q, False), wide]
    elif name == "expm1":
        parts = [rng.uniform(-2, 2, N - 3 * q), _log_uniform(rng, lo, 0, q), rng.uniform(-750, 710, q), wide]
    elif name == "log1p":
        parts = [-1 + np.exp2(-rng.integers(1, 53, N - 3 * q).astype(np.float64)), rng.uniform(-1, 2, q),
                 _log_uniform(rng, lo, 0, q), _log_uniform(rng, lo, hi, q, False)]
    elif name == "exp10":
        parts = [rng.uniform(-330, 310, N - 3 * q), rng.uniform(-2, 2, q), _log_uniform(rng, lo, 0, q), wide]
    elif name == "log10":
        parts = [10.0 ** rng.integers(-300, 300, N - 3 * q).astype(np.float64), rng.uniform(0.5, 2, q),
                 _log_uniform(rng, lo, hi, q, False), wide]
    else:  # atan, asinh, cbrt, and each operand of atan2 and hypot
        parts = [rng.uniform(-4, 4, N - 3 * q), _log_uniform(rng, lo, 0, q), _log_uniform(rng, 0, hi, q), wide]
    x = np.concatenate(parts)
    x[:len(special)] = special
    if name in ("atan2", "hypot"):
        y = np.roll(_inputs("atan", dtype)[0].astype(np.float64), 7)
        s = np.array([0.0, -0.0, INF, -INF, NAN, 1.0])
        x[:36], y[:36] = np.repeat(s, 6), np.tile(s, 6)  # every pair of specials
        x[36:48] = y[36:48] * rng.uniform(0.999, 1.001, 12)  # near the diagonal
        with np.errstate(all="ignore"):
            return x.astype(dtype), y.astype(dtype)
    with np.errstate(all="ignore"):
        return (x.astype(dtype),)


REFERENCE: dict[str, Callable[..., np.ndarray]] = {
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "expm1": np.expm1, "log1p": np.log1p, "cbrt": np.cbrt, "hypot": np.hypot,
    "exp10": lambda x: np.power(LD(10), x), "log10": np.log10,
}
# the module docstring's table: (float64, float32) bounds in ulp
BOUND: dict[str, tuple[float, float]] = {
    "asin": (2.5, 0.501), "acos": (2.5, 0.501), "atan": (2, 0.501), "atan2": (2.5, 0.501),
    "sinh": (3, 0.501), "cosh": (3, 0.501), "asinh": (3, 0.501), "acosh": (3.5, 0.501), "atanh": (3, 0.501),
    "expm1": (3, 0.501), "log1p": (2.5, 0.501), "cbrt": (1.5, 0.501), "hypot": (2.5, 0.501),
    "exp10": (2, 0.501), "log10": (2, 0.501),
}


@functools.lru_cache(maxsize=None)
def _kernel(name: str, nargs: int, load_kernels: Any) -> Any:
    params = ", ".join(f"x{i}" for i in range(nargs))
    loads = ", ".join(f"tl.load(x{i} + offs)" for i in range(nargs))
    return load_kernels(f"""
from tlxc.language.extra import libdevice


@tlxc.jit
def k({params}, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, libdevice.{name}({loads}))
""").k


def _run(load_kernels: Any, name: str, *args: np.ndarray) -> np.ndarray:
    out = np.zeros(len(args[0]), args[0].dtype)
    _kernel(name, len(args), load_kernels).interpret[(1,)](*args, out, N=len(args[0]))
    return out


def ulp_error(got: np.ndarray, ref: np.ndarray, dtype: Any) -> np.ndarray:
    """|got - ref| in ulps of the reference rounded to ``dtype``; 0 where both are the
    same infinity or both NaN, inf where only one is."""
    want = ref.astype(dtype)
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(LD) - ref) / np.spacing(np.abs(want)).astype(LD)
    special = ~np.isfinite(want) | ~np.isfinite(got)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return np.where(special, np.where(same, 0.0, np.inf), err.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_ulp_error_within_the_documented_bound(load_kernels: Any, name: str, dtype: Any) -> None:
    args = _inputs(name, dtype)
    got = _run(load_kernels, name, *args)
    with np.errstate(all="ignore"):
        ref = REFERENCE[name](*(a.astype(LD) for a in args))
    err = ulp_error(got, ref, dtype)
    bound = BOUND[name][0 if dtype is np.float64 else 1]
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (f"{name}({', '.join(repr(a[worst]) for a in args)}) = {got[worst]!r}, "
                                 f"want {ref[worst]!r}: {err[worst]:.3f} ulp > {bound}")
    # a sign of zero is a result too (asin(-0) = -0, atan2(-0, -1) = -pi...)
    zero = ref.astype(dtype) == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(ref[zero].astype(dtype)))


def test_c_special_values(load_kernels: Any) -> None:
    x = np.resize([-0.0, 1.0, -1.0, 1.5, INF, -INF], 16)
    assert np.signbit(_run(load_kernels, "asin", x)[0]) and np.isnan(_run(load_kernels, "asin", x)[3])
    assert _run(load_kernels, "acos", x)[2] == np.pi and _run(load_kernels, "atan", x)[4] == np.pi / 2
    assert _run(load_kernels, "atanh", x)[1:3].tolist() == [INF, -INF]
    assert _run(load_kernels, "log1p", -x)[1] == -INF and np.isnan(_run(load_kernels, "acosh", x)[0])
    y = np.resize([0.0, -0.0, 0.0, INF, -INF, 1.0], 16)
    a2 = _run(load_kernels, "atan2", y, np.resize([-0.0, -0.0, 0.0, -INF, INF, -INF], 16))
    assert a2[:6].tolist() == [np.pi, -np.pi, 0.0, 3 * np.pi / 4, -np.pi / 4, np.pi]
    assert _run(load_kernels, "hypot", np.full(16, NAN), x)[4:6].tolist() == [INF, INF]


CODEGEN = """
from tlxc.language.extra import libdevice


@tlxc.jit
def k(x, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(x + offs)
    r = libdevice.asin(a) + libdevice.atan2(a, a) + libdevice.sinh(a) + libdevice.acosh(a) + libdevice.cbrt(a)
    r += libdevice.hypot(a, a) + libdevice.exp10(a) + libdevice.log10(a) + libdevice.expm1(a)
    tl.store(out + offs, r)
"""


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_compiles_for_sm90a_and_gfx942(load_kernels: Any, dtype: str) -> None:
    k = load_kernels(CODEGEN).k
    ck = k.compile(f"*{dtype},*{dtype}", {"N": 128}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    # float64 inside, on exact operations: no f32 approximation appears
    assert "fma.rn.f64" in ptx and "div.rn.f64" in ptx and "sqrt.rn.f64" in ptx
    assert ".approx.f32" not in ptx
    if find_tool("ptxas") is not None:
        assert len(ck.asm["cubin"]) > 0
    gcn = k.compile(f"*{dtype},*{dtype}", {"N": 128}, arch="gfx942").asm["hsaco" if find_tool("ld.lld") else "amdgcn"]
    assert len(gcn) > 0
