"""Accuracy of the math routines of ``tlxc/codegen/nvptx/lower_math.py`` on the GPU
(``pytest -m gpu``): erf (f32 and, through it, f16/bf16), round, float ``%`` (fmod) and
the f64 transcendentals, over edge cases (0, -0, subnormals, huge, inf, NaN, negative)
and random inputs of the whole range, in ulps against references that are far more
accurate than the result: mpmath (f64), float64 (f32 erf), C's fmod and an exact decimal
rounding.

The kernels are ``@tlxc.jit`` kernels launched on torch tensors where the frontend spells
the function (``tl.exp``, ``tl.erf``, ``%``...); ``tanh``, ``tan`` and ``round`` have no
frontend spelling yet, so their kernels are IR text, compiled by the code generator and
launched with ``tlxc.runtime.LoadedKernel``. Each test prints a ``MATH-ULP`` line with
what it measured.
"""

from __future__ import annotations

import decimal
import math
from typing import Any, Callable

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.gpu
BLOCK = 1024
F64_MAX_ULP = 2.0
F32_ERF_MAX_ULP = 2.0


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def mp() -> Any:
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 160
    return mpmath


@tlxc.jit
def unary_kernel(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "exp2":
        y = tl.exp2(x)
    elif FN == "log":
        y = tl.log(x)
    elif FN == "log2":
        y = tl.log2(x)
    elif FN == "sin":
        y = tl.sin(x)
    elif FN == "cos":
        y = tl.cos(x)
    elif FN == "rsqrt":
        y = tl.rsqrt(x)
    else:
        y = tl.erf(x)
    tl.store(y_ptr + offs, y, mask=m)


@tlxc.jit
def rem_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(z_ptr + offs, x % y, mask=m)


_IR = '''module {{
^():
  func {{sym_name = "{op}_{t}", arg_divisibility = [16, 16, 1], num_warps = 4}} {{
  ^(%x: ptr<{t}>, %y: ptr<{t}>, %n: i32):
    %0 = program_id {{axis = 0}} : i32
    %1 = constant {{value = {b}}} : i32
    %2 = mul %0, %1 : i32
    %3 = arange {{start = 0, end = {b}}} : tile<{b}xi32>
    %4 = splat %2 : tile<{b}xi32>
    %5 = add %4, %3 : tile<{b}xi32>
    %6 = splat %n : tile<{b}xi32>
    %7 = cmp %5, %6 {{predicate = "lt"}} : tile<{b}xi1>
    %8 = splat %x : tile<{b}xptr<{t}>>
    %9 = addptr %8, %5 : tile<{b}xptr<{t}>>
    %10 = load %9, mask=%7 : tile<{b}x{t}>
    %11 = {op} %10 : tile<{b}x{t}>
    %12 = splat %y : tile<{b}xptr<{t}>>
    %13 = addptr %12, %5 : tile<{b}xptr<{t}>>
    store %13, %11, mask=%7
    return
  }}
}}
'''
_ir_kernels: dict[tuple[str, str], Any] = {}


def ir_unary(torch: Any, op: str, x: Any) -> Any:
    """op(x) by a kernel written as IR (for the functions without a frontend spelling)."""
    from tlxc.runtime import LoadedKernel

    from tlxc.codegen.nvptx import compile as nvptx
    from tlxc.codegen.nvptx.toolchain import find_tool, ptxas
    from tlxc.ir.parser import parse_ir

    t = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}[x.dtype]
    key = (op, t)
    if key not in _ir_kernels:
        major, _ = torch.cuda.get_device_capability()
        arch = "sm_100a" if major >= 10 else "sm_90a"
        k = nvptx.generate(parse_ir(_IR.format(op=op, t=t, b=BLOCK)), arch)
        binary = ptxas(k.ptx, arch).cubin if find_tool("ptxas") else k.ptx
        sig = {"f64": "fp64", "f32": "fp32", "f16": "fp16", "bf16": "bf16"}[t]
        _ir_kernels[key] = LoadedKernel(binary, k.name, [f"*{sig}:16", f"*{sig}:16", "i32"], num_warps=k.num_warps)
    y = torch.empty_like(x)
    _ir_kernels[key][(tlxc.cdiv(x.numel(), BLOCK),)](x, y, x.numel())
    torch.cuda.synchronize()
    return y


def run_unary(torch: Any, fn: str, x: np.ndarray | Any) -> np.ndarray:
    xt = torch.as_tensor(x).cuda() if isinstance(x, np.ndarray) else x
    if fn in ("tanh", "tan", "round"):
        y = ir_unary(torch, fn, xt)
    else:
        y = torch.empty_like(xt)
        unary_kernel[(tlxc.cdiv(xt.numel(), BLOCK),)](xt, y, xt.numel(), FN=fn, BLOCK=BLOCK)
        torch.cuda.synchronize()
    return y.cpu().numpy() if isinstance(x, np.ndarray) else y


def run_rem(torch: Any, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xt, yt = torch.as_tensor(x).cuda(), torch.as_tensor(y).cuda()
    zt = torch.empty_like(xt)
    rem_kernel[(tlxc.cdiv(len(x), BLOCK),)](xt, yt, zt, len(x), BLOCK=BLOCK)
    return zt.cpu().numpy()


# -- inputs ------------------------------------------------------------------------------------------

EDGES64 = [0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310, 2.2250738585072014e-308, -2.2250738585072014e-308,
           1e-300, 1e-20, -1e-20, 1e-8, 0.5, 1.0, -1.0, 2.0, 3.0, 0.625, 0.921875, 1.0000000000000002,
           0.9999999999999999, 5.9, 6.0, 7.0, 20.0, 22.0, 100.0, 355.0, 709.78, 709.79, -744.0, -745.1, -745.2,
           1023.9, -1074.0, -1075.0, 1e5, 1e9, 2.0 ** 32, 1e15, 1e22, 1e300, 1.7976931348623157e308,
           -1.7976931348623157e308, math.pi / 2, math.pi / 4, math.pi, -math.pi, 6381956970095103 * 2.0 ** 797,
           math.inf, -math.inf, math.nan]


def random_f64(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n doubles that cover ``name``'s interesting range: uniform over the range, and
    log-uniform magnitudes down to subnormals or up to the largest double."""
    def magnitudes(lo: float, hi: float, k: int) -> np.ndarray:
        return np.exp2(rng.uniform(lo, hi, k)) * rng.choice([-1.0, 1.0], k)

    k = n // 3
    if name in ("log", "log2", "rsqrt"):
        bits = rng.integers(0, 0x7FF0000000000000, n, dtype=np.int64)  # every positive finite double
        near1 = 1.0 + rng.uniform(-0.3, 0.3, k)
        return np.concatenate([bits.view(np.float64), near1])
    span = {"exp": (-745.2, 709.8), "exp2": (-1075.5, 1024.0), "sin": (-20.0, 20.0), "cos": (-20.0, 20.0),
            "tan": (-20.0, 20.0), "tanh": (-22.0, 22.0), "erf": (-6.5, 6.5)}[name]
    parts = [rng.uniform(*span, n), magnitudes(-60, 3, k)]
    if name in ("sin", "cos", "tan"):
        parts += [rng.uniform(-1e5, 1e5, k), magnitudes(17, 1023.9, k),
                  (np.round(rng.uniform(-1e4, 1e4, k)) * (np.pi / 2)) * (1 + rng.uniform(-1e-15, 1e-15, k))]
    return np.concatenate(parts)


def numpy_reference(name: str, x: np.ndarray) -> np.ndarray:
    import scipy.special  # float64 references for the special cases (its erf is libm's quality)

    with np.errstate(all="ignore"):
        return {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
                "tan": np.tan, "tanh": np.tanh, "rsqrt": lambda v: 1 / np.sqrt(v), "erf": scipy.special.erf}[name](x)


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal as floats, NaN equal to NaN, and zeros of the same sign."""
    return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))


# -- f64 transcendentals --------------------------------------------------------------------------


F64_FUNCTIONS = ("exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh", "rsqrt", "erf")


@pytest.mark.parametrize("name", F64_FUNCTIONS)
def test_f64_function_ulp(torch: Any, mp: Any, name: str) -> None:
    """Random inputs and the edges: where the result is finite and nonzero, its error in
    ulps against mpmath; elsewhere (NaN, inf, zero, underflow) exactly numpy's value."""
    ref_fn: Callable[[Any], Any] = {
        "exp": mp.exp, "exp2": lambda v: mp.power(2, v), "log": mp.log, "log2": lambda v: mp.log(v, 2),
        "sin": mp.sin, "cos": mp.cos, "tan": mp.tan, "tanh": mp.tanh, "rsqrt": lambda v: 1 / mp.sqrt(v),
        "erf": mp.erf}[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    x = np.concatenate([random_f64(name, 10000, rng), EDGES64])
    got = run_unary(torch, name, x)
    special = numpy_reference(name, x)
    exact = ~np.isfinite(x) | ~np.isfinite(special) | (special == 0)
    bad = [(xv, gv, sv) for xv, gv, sv, ok in zip(x[exact], got[exact], special[exact],
                                                  same(got[exact], special[exact])) if not ok]
    worst, at = 0.0, math.nan
    for xv, gv in zip(x[~exact].tolist(), got[~exact].tolist()):
        ref = ref_fn(mp.mpf(xv))
        if not math.isfinite(gv):
            err = 0.0 if float(ref) == gv else math.inf  # overflow: inf exactly when the rounded result is
        else:
            _, e = mp.frexp(ref)
            err = float(abs(mp.mpf(gv) - ref)) / 2.0 ** max(int(e) - 53, -1074)
        if not err <= worst:
            worst, at = err, xv
    print(f"MATH-ULP f64 {name}: max {worst:.3f} ulp at {at!r} over {len(x)} inputs; special-value mismatches {bad}")
    assert worst <= F64_MAX_ULP, f"{name}: {worst} ulp at {at!r}"
    assert not bad


# -- erf in f32, f16, bf16 -------------------------------------------------------------------------


def ulp_errors(torch: Any, got: Any, ref: Any, mant: int, min_exp: int) -> Any:
    """|got - ref| in ulps of a format of ``mant`` fraction bits and smallest normal
    exponent ``min_exp``, ``ref`` being the (float64) exact values; a zero ``ref`` must be
    met exactly."""
    _, e = torch.frexp(ref.abs().clamp(min=1e-300))
    ulp = torch.ldexp(torch.ones_like(ref), torch.clamp(e - 1 - mant, min=min_exp - mant))
    err = (got.double() - ref).abs() / ulp
    return torch.where(ref == 0, torch.where(got == 0, 0.0, math.inf), err)


def test_f32_erf_sweep(torch: Any) -> None:
    """Every third f32 in [0, 4.5] (erf is +-1 beyond), a million negatives, and the
    edges."""
    hi = int(np.float32(4.5).view(np.int32))
    x = torch.arange(0, hi, 3, dtype=torch.int32, device="cuda").view(torch.float32)
    neg = -torch.rand(1 << 20, device="cuda") * 5
    x = torch.cat([x, neg])
    got = run_unary(torch, "erf", x)
    ref = torch.special.erf(x.double())
    err = ulp_errors(torch, got, ref, 23, -126)
    i = int(torch.argmax(err))
    worst, at = float(err[i]), float(x[i])
    edges = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.1754944e-38, 0.5, 0.921875, -0.921875, 3.83, 3.9,
                      4.0, 10.0, -10.0, np.inf, -np.inf, np.nan], np.float32)
    got_e = run_unary(torch, "erf", edges)
    want_e = numpy_reference("erf", edges.astype(np.float64)).astype(np.float32)
    close = np.abs(got_e - want_e) <= 1.5 * np.spacing(np.abs(want_e))
    bad = [(e, g, w) for e, g, w, ok in zip(edges, got_e, want_e, same(got_e, want_e) | close) if not ok]
    print(f"MATH-ULP f32 erf: max {worst:.3f} ulp at {at!r} over {x.numel()} inputs; edge mismatches {bad}")
    assert worst <= F32_ERF_MAX_ULP
    assert not bad


@pytest.mark.parametrize("dtype,mant,min_exp", [("float16", 10, -14), ("bfloat16", 7, -126)])
def test_16bit_erf_exhaustive(torch: Any, dtype: str, mant: int, min_exp: int) -> None:
    """Every 16-bit value: erf through f32, rounded once more, so within 1 ulp of the
    16-bit format (almost always the correctly rounded value)."""
    dt = getattr(torch, dtype)
    x = torch.arange(-32768, 32768, dtype=torch.int32, device="cuda").to(torch.int16).view(dt)
    got = run_unary(torch, "erf", x)
    ref = torch.special.erf(x.double())
    finite = torch.isfinite(x)
    err = ulp_errors(torch, got, ref, mant, min_exp)[finite]
    exact = float((got.double() == ref.to(dt).double())[finite].double().mean())
    print(f"MATH-ULP {dtype} erf: max {float(err.max()):.3f} ulp, correctly rounded {100 * exact:.3f}%")
    assert float(err.max()) <= 1.0
    assert bool(torch.isnan(got[torch.isnan(x)]).all())


# -- round -----------------------------------------------------------------------------------------


def round_reference(x: np.ndarray) -> np.ndarray:
    """C's round, exactly: Decimal's ROUND_HALF_UP rounds halves away from zero."""
    out = []
    for v in x.tolist():
        if not math.isfinite(v):
            out.append(v)
        else:
            r = float(decimal.Decimal(v).to_integral_value(rounding=decimal.ROUND_HALF_UP))
            out.append(math.copysign(r, v))
    return np.array(out, dtype=x.dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_round(torch: Any, dtype: str) -> None:
    rng = np.random.default_rng(7)
    fl = np.dtype(dtype).type
    halves = np.arange(-100, 100) + 0.5
    x = np.concatenate([rng.uniform(-1e6, 1e6, 20000), rng.uniform(-3, 3, 20000), halves,
                        np.nextafter(halves, 0), np.nextafter(halves, np.inf), np.exp2(rng.uniform(-200, 200, 2000)),
                        [0.0, -0.0, 0.49999999999999994, -0.49999999999999994, 0.5, -0.5, 4503599627370495.5,
                         8388607.5, 8388609.0, 1e300, 5e-324, np.inf, -np.inf, np.nan]]).astype(fl)
    got = run_unary(torch, "round", x)
    ok = same(got, round_reference(x))
    print(f"MATH-ULP {dtype} round: {int((~ok).sum())} of {len(x)} differ")
    assert ok.all(), list(zip(x[~ok][:5], got[~ok][:5]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_round_16bit_exhaustive(torch: Any, dtype: str) -> None:
    dt = getattr(torch, dtype)
    x = torch.arange(-32768, 32768, dtype=torch.int32, device="cuda").to(torch.int16).view(dt)
    got = run_unary(torch, "round", x).float().cpu().numpy()
    ok = same(got, round_reference(x.float().cpu().numpy()))
    assert ok.all(), list(zip(x.float().cpu().numpy()[~ok][:5], got[~ok][:5]))


# -- fmod ------------------------------------------------------------------------------------------


def random_pairs(fl: type, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random finite bit patterns of both signs (every exponent difference), quotients of
    a few sizes, and every pair of edge values."""
    ib, top = (np.int32, 0x7F800000) if fl is np.float32 else (np.int64, 0x7FF0000000000000)
    sign = np.array([0], ib) | np.array(1, ib) << (8 * np.dtype(ib).itemsize - 1)

    def finite(k: int) -> np.ndarray:
        b = rng.integers(0, top, k, dtype=ib) | np.where(rng.random(k) < 0.5, sign, 0).astype(ib)
        return b.view(fl)

    x, y = finite(n), finite(n)
    x2 = finite(n)
    y2 = (x2 / rng.choice([3.0, 7.0, 1.5, 1e-3, 1e5, 1e20, 0.7], n)).astype(fl)
    tiny = np.finfo(fl).smallest_subnormal
    edges = np.array([0.0, -0.0, tiny, -tiny, 3 * tiny, np.finfo(fl).tiny, 1.0, -1.0, 3.0, 0.5, 2.5, -7.5, 0.1,
                      np.finfo(fl).max, -np.finfo(fl).max, np.inf, -np.inf, np.nan], fl)
    ex, ey = np.meshgrid(edges, edges)
    return np.concatenate([x, x2, ex.ravel()]), np.concatenate([y, y2, ey.ravel()])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fmod_exact(torch: Any, dtype: str) -> None:
    fl = np.dtype(dtype).type
    x, y = random_pairs(fl, 100000, np.random.default_rng(11))
    got = run_rem(torch, x, y)
    with np.errstate(all="ignore"):
        want = np.fmod(x, y)  # C fmod: exact
    ok = same(got, want)
    print(f"MATH-ULP {dtype} fmod: {int((~ok).sum())} of {len(x)} differ")
    assert ok.all(), list(zip(x[~ok][:5], y[~ok][:5], got[~ok][:5], want[~ok][:5]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fmod_16bit(torch: Any, dtype: str) -> None:
    """Random pairs of 16-bit patterns: fmod in f32 is exact, and so is its rounding back."""
    dt = getattr(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(3)
    bits = torch.randint(-32768, 32768, (2, 1 << 20), device="cuda", dtype=torch.int32, generator=g)
    x, y = bits.to(torch.int16).view(dt)
    z = torch.empty_like(x)
    rem_kernel[(tlxc.cdiv(x.numel(), BLOCK),)](x, y, z, x.numel(), BLOCK=BLOCK)
    with np.errstate(all="ignore"):  # C's fmodf (torch's CPU fmod is x - trunc(x/y)*y, not exact)
        want32 = np.fmod(x.float().cpu().numpy(), y.float().cpu().numpy())
    want = torch.from_numpy(want32).to(dt).float().numpy()
    got = z.float().cpu().numpy()
    ok = same(got, want)
    print(f"MATH-ULP {dtype} fmod: {int((~ok).sum())} of {x.numel()} differ")
    assert ok.all()
