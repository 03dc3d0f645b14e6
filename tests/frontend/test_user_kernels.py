"""The "new user" check: kernels written the way a Triton user writes them, run on the CPU
interpreter and compared with numpy.

Each test is one small kernel exercising a corner of the language a user relies on
without thinking about it: strides and masks in 2-D, reductions with ``keep_dims``, C's
integer division next to Python's, unsigned wraparound, narrow-float rounding, NaN in
``tl.where`` and ``tl.maximum``, shape manipulation, unrolled and runtime loops, helper
functions with tuple results and early returns, constexpr folding, specialization, hints,
and the interpreter's errors. Every test checks numbers, not just that it compiles.

Triton's semantics are the reference: where tlxc differs, the test says what Triton does
and is marked ``xfail(strict=True)`` with the bug, so that it flips when the bug is fixed.
Several tests here (marked "regression") are bugs this file found, since fixed.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tlxc
import tlxc.language as tl

RNG = np.random.default_rng(20240601)


def _line_of(fn: object, text: str) -> int:
    """The file line number of the first line of ``fn``'s source containing ``text``."""
    import inspect

    src, start = inspect.getsourcelines(fn.fn)  # type: ignore[attr-defined]
    for i, line in enumerate(src):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in the source of {fn}")


# -- 2-D tiles, strides, masks ------------------------------------------------------------


@tlxc.jit
def transpose_kernel(src, dst, M, N, stride_sm, stride_sn, stride_dm, stride_dn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(src + rm[:, None] * stride_sm + rn[None, :] * stride_sn, mask=mask)
    # dst is N x M: write the transposed tile, indexed (n, m)
    tl.store(dst + rn[:, None] * stride_dm + rm[None, :] * stride_dn, tile.T, mask=mask.T)


def test_tiled_transpose_with_strides() -> None:
    big = RNG.standard_normal((40, 70)).astype(np.float32)
    src = big[3:33, 5:68:2]  # 30 x 32, non-unit column stride
    M, N = src.shape
    dst = np.zeros((N, M), dtype=np.float32)
    s = src.itemsize
    grid = (tlxc.cdiv(M, 16), tlxc.cdiv(N, 8))
    transpose_kernel.interpret[grid](big[3:, 5:], dst, M, N, src.strides[0] // s, src.strides[1] // s,
                                     dst.strides[0] // s, dst.strides[1] // s, BLOCK_M=16, BLOCK_N=8)
    np.testing.assert_array_equal(dst, src.T)


# -- reductions ----------------------------------------------------------------------------------


@tlxc.jit
def row_argmax_kernel(x_ptr, idx_ptr, val_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(idx_ptr + row, tl.argmax(x, axis=0))
    v, i = tl.max(x, axis=0, return_indices=True)
    tl.static_assert(i.dtype == tl.int32)
    tl.store(val_ptr + row, v + i.to(tl.float32) * 0.0)


def test_row_argmax_first_of_ties() -> None:
    x = RNG.integers(-5, 5, (9, 37)).astype(np.float32)  # many ties
    x[2] = -3.0
    idx = np.zeros(9, dtype=np.int32)
    val = np.zeros(9, dtype=np.float32)
    row_argmax_kernel.interpret[(9,)](x, idx, val, 37, 37, BLOCK=64)
    np.testing.assert_array_equal(idx, np.argmax(x, axis=1))
    np.testing.assert_array_equal(val, x.max(axis=1))


@tlxc.jit
def reduce_2d_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    col_sum = tl.sum(x, axis=0)                        # [N]
    row_max = tl.max(x, axis=1, keep_dims=True)        # [M, 1]
    col_min = tl.min(x, axis=0, keep_dims=True)        # [1, N]
    tl.static_assert(row_max.shape == (M, 1))
    tl.static_assert(col_min.shape == (1, N))
    centered = x - row_max + col_min                   # broadcasts back to [M, N]
    total = tl.sum(tl.sum(x, axis=1), axis=0)          # scalar
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], centered)
    tl.store(out_ptr + M * N + rn, col_sum)
    tl.store(out_ptr + M * N + N, total)
    tl.store(out_ptr + M * N + N + 1 + rm, tl.sum(x, axis=1, keep_dims=True).reshape(M))
    tl.store(out_ptr + M * N + N + 1 + M, tl.max(x))  # axis=None: the whole tile


def test_reductions_axis0_axis1_keep_dims() -> None:
    M, N = 8, 16
    x = RNG.integers(-50, 50, (M, N)).astype(np.float32)  # integers: sums are exact
    out = np.zeros(M * N + N + 1 + M + 1, dtype=np.float32)
    reduce_2d_kernel.interpret[(1,)](x, out, M=M, N=N)
    np.testing.assert_array_equal(out[:M * N].reshape(M, N),
                                  x - x.max(axis=1, keepdims=True) + x.min(axis=0, keepdims=True))
    np.testing.assert_array_equal(out[M * N:M * N + N], x.sum(axis=0))
    assert out[M * N + N] == x.sum()
    np.testing.assert_array_equal(out[M * N + N + 1:M * N + N + 1 + M], x.sum(axis=1))
    assert out[-1] == x.max()


@tlxc.jit
def int_reduce_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))          # int8
    s = tl.sum(x, axis=0)                         # Triton widens int8 sums to int32
    tl.static_assert(s.dtype == tl.int32)
    tl.store(out_ptr, s)
    tl.store(out_ptr + 1, tl.xor_sum(x.to(tl.int32), axis=0))
    tl.store(out_ptr + 2, tl.min(x, axis=0).to(tl.int32))


def test_int8_sum_widens_to_int32() -> None:
    x = np.full(64, 100, dtype=np.int8)
    x[::3] = -128
    out = np.zeros(3, dtype=np.int32)
    int_reduce_kernel.interpret[(1,)](x, out, N=64)
    assert out[0] == x.astype(np.int64).sum()  # no int8 wraparound
    assert out[1] == np.bitwise_xor.reduce(x.astype(np.int32))
    assert out[2] == -128


# -- integer arithmetic ------------------------------------------------------------------------


@tlxc.jit
def int_ops_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, a // b)      # C: truncates toward zero
    tl.store(out_ptr + 1 * N + offs, a % b)       # C: the sign of the dividend
    tl.store(out_ptr + 2 * N + offs, a >> 2)      # arithmetic shift on signed
    tl.store(out_ptr + 3 * N + offs, a * 65536 * 65536 + a)  # wraps in int32
    tl.store(out_ptr + 4 * N + offs, -a & 0xFF)
    tl.store(out_ptr + 5 * N + offs, a ^ b | (a << 3))


def _c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a) * np.sign(b) * q).astype(a.dtype)


def test_int32_c_division_and_wraparound() -> None:
    N = 64
    a = RNG.integers(-1000, 1000, N).astype(np.int32)
    b = RNG.integers(1, 13, N).astype(np.int32) * RNG.choice([-1, 1], N).astype(np.int32)
    a[:4] = [-7, 7, -7, 7]
    b[:4] = [2, -2, -2, 2]
    out = np.zeros(6 * N, dtype=np.int32)
    int_ops_kernel.interpret[(1,)](a, b, out, N=N)
    o = out.reshape(6, N)
    np.testing.assert_array_equal(o[0], _c_div(a, b))
    np.testing.assert_array_equal(o[0, :4], [-3, -3, 3, 3])
    np.testing.assert_array_equal(o[1], np.fmod(a, b))
    np.testing.assert_array_equal(o[1, :4], [-1, 1, -1, 1])
    np.testing.assert_array_equal(o[2], a >> 2)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(o[3], a)  # a * 2**32 wraps to 0
    np.testing.assert_array_equal(o[4], -a & 0xFF)
    np.testing.assert_array_equal(o[5], a ^ b | (a << 3))


@tlxc.jit
def small_int_kernel(x_ptr, y_ptr, u_ptr, out8_ptr, outu8_ptr, outu32_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)            # int8
    y = tl.load(y_ptr + offs)            # int8
    u = tl.load(u_ptr + offs)            # uint8
    s = x + y                            # stays int8 and wraps
    tl.static_assert(s.dtype == tl.int8)
    tl.store(out8_ptr + offs, s)
    tl.store(out8_ptr + N + offs, x // y)
    tl.store(out8_ptr + 2 * N + offs, x % y)
    tl.store(out8_ptr + 3 * N + offs, x * 3)  # a Python int does not widen int8
    m = u + x                            # uint8 with int8: unsigned wins (C's rule)
    tl.static_assert(m.dtype == tl.uint8)
    tl.store(outu8_ptr + offs, m)
    tl.store(outu8_ptr + N + offs, u >> 1)  # logical shift on unsigned
    v = u + 250                          # a Python int is the same kind as uint8: stays uint8, wraps
    tl.static_assert(v.dtype == tl.uint8)
    tl.store(outu8_ptr + 2 * N + offs, v)
    w = u.to(tl.uint32) - 200            # wraps below zero
    tl.store(outu32_ptr + offs, w)
    tl.store(outu32_ptr + N + offs, w // 3)
    tl.store(outu32_ptr + 2 * N + offs, w % 7)


def test_int8_uint_wraparound() -> None:
    N = 32
    x = RNG.integers(-128, 128, N).astype(np.int8)
    y = RNG.integers(1, 128, N).astype(np.int8) * RNG.choice([-1, 1], N).astype(np.int8)
    y[(x == -128) & (y == -1)] = 1  # INT8_MIN // -1 overflows: undefined in LLVM, not tested
    u = RNG.integers(0, 256, N).astype(np.uint8)
    out8 = np.zeros(4 * N, dtype=np.int8)
    outu8 = np.zeros(3 * N, dtype=np.uint8)
    outu32 = np.zeros(3 * N, dtype=np.uint32)
    small_int_kernel.interpret[(1,)](x, y, u, out8, outu8, outu32, N=N)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out8[:N], x + y)
        np.testing.assert_array_equal(out8[N:2 * N], _c_div(x, y))
        np.testing.assert_array_equal(out8[2 * N:3 * N], np.fmod(x.astype(np.int32), y).astype(np.int8))
        np.testing.assert_array_equal(out8[3 * N:], (x.astype(np.int32) * 3).astype(np.int8))
        np.testing.assert_array_equal(outu8[:N], u + x.view(np.uint8))
        np.testing.assert_array_equal(outu8[N:2 * N], u >> 1)
        np.testing.assert_array_equal(outu8[2 * N:], u + np.uint8(250))
        w = u.astype(np.uint32) - np.uint32(200)
    np.testing.assert_array_equal(outu32[:N], w)
    np.testing.assert_array_equal(outu32[N:2 * N], w // np.uint32(3))
    np.testing.assert_array_equal(outu32[2 * N:], w % np.uint32(7))


@tlxc.jit
def scalar_div_kernel(out_ptr, a, b, A: tl.constexpr, B: tl.constexpr):
    tl.store(out_ptr + 0, a // b)       # runtime scalars: C semantics
    tl.store(out_ptr + 1, a % b)
    tl.store(out_ptr + 2, A // B)       # compile-time constants: Python semantics
    tl.store(out_ptr + 3, A % B)
    tl.store(out_ptr + 4, tl.cdiv(a, 4))
    tl.store(out_ptr + 5, tl.cdiv(A, 4))


def test_runtime_vs_constexpr_division() -> None:
    out = np.zeros(6, dtype=np.int32)
    scalar_div_kernel.interpret[(1,)](out, -7, 2, A=-7, B=2)
    np.testing.assert_array_equal(out, [-3, -1, -4, 1, -1, -1])


# -- floating point: conversions, rounding, NaN --------------------------------------------------


@tlxc.jit
def narrow_float_kernel(x_ptr, bf_ptr, f16z_ptr, e4_ptr, e5_ptr, i_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(bf_ptr + offs, x.to(tl.bfloat16))
    tl.store(f16z_ptr + offs, x.to(tl.float16, fp_downcast_rounding="rtz"))
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv))
    tl.store(e5_ptr + offs, x.to(tl.float8e5))
    tl.store(i_ptr + offs, x.to(tl.int32))


def test_bf16_fp8_conversions_and_rounding() -> None:
    N = 256
    x = (RNG.standard_normal(N) * RNG.choice([0.01, 1, 30, 300], N)).astype(np.float32)
    x[:6] = [1000.0, -1000.0, 1e6, 2.5, -2.5, 65519.0]
    bf = np.zeros(N, dtype=ml_dtypes.bfloat16)
    f16z = np.zeros(N, dtype=np.float16)
    e4 = np.zeros(N, dtype=ml_dtypes.float8_e4m3fn)
    e5 = np.zeros(N, dtype=ml_dtypes.float8_e5m2)
    i = np.zeros(N, dtype=np.int32)
    narrow_float_kernel.interpret[(1,)](x, bf, f16z, e4, e5, i, N=N)
    np.testing.assert_array_equal(bf.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    # round toward zero: never larger in magnitude, and within one fp16 ulp
    f = f16z.astype(np.float64)
    assert np.all(np.abs(f) <= np.abs(x)) and np.all(np.sign(f) * np.sign(x) >= 0)
    with np.errstate(over="ignore"):
        nxt = np.nextafter(f16z, np.where(x > 0, np.float16(np.inf), np.float16(-np.inf))).astype(np.float64)
    assert np.all(np.abs(nxt) > np.abs(x))
    assert f16z[5] == 65504.0  # rtz does not overflow to inf
    # fp8: round to nearest even within range, saturate (satfinite) outside
    inside = np.abs(x) <= 448
    np.testing.assert_array_equal(e4[inside].view(np.uint8), x[inside].astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    np.testing.assert_array_equal(e4[:3].astype(np.float32), [448.0, -448.0, 448.0])
    inside = np.abs(x) <= 57344
    np.testing.assert_array_equal(e5[inside].view(np.uint8), x[inside].astype(ml_dtypes.float8_e5m2).view(np.uint8))
    assert float(e5[2]) == 57344.0
    np.testing.assert_array_equal(i, np.trunc(x).astype(np.int32))  # truncation toward zero


@tlxc.jit
def bf16_math_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = a * b + a
    tl.static_assert(c.dtype == tl.bfloat16)
    d = a * 2.0
    tl.static_assert(d.dtype == tl.bfloat16)  # a Python float does not widen
    tl.store(out_ptr + offs, c)
    tl.store(out_ptr + N + offs, d)


def test_bf16_arithmetic_rounds_each_op() -> None:
    N = 64
    a = RNG.standard_normal(N).astype(ml_dtypes.bfloat16)
    b = RNG.standard_normal(N).astype(ml_dtypes.bfloat16)
    out = np.zeros(2 * N, dtype=ml_dtypes.bfloat16)
    bf16_math_kernel.interpret[(1,)](a, b, out, N=N)
    f32 = np.float32
    prod = (a.astype(f32) * b.astype(f32)).astype(ml_dtypes.bfloat16)
    expect = (prod.astype(f32) + a.astype(f32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out[:N].view(np.uint16), expect.view(np.uint16))
    np.testing.assert_array_equal(out[N:].astype(f32), a.astype(f32) * 2)


@tlxc.jit
def nan_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + 0 * N + offs, tl.where(x != x, 0.0, x))           # NaN != NaN
    tl.store(out_ptr + 1 * N + offs, tl.where(x > 0, x, y))               # NaN > 0 is false
    tl.store(out_ptr + 2 * N + offs, tl.maximum(x, y))                    # ignores NaN (fmax)
    tl.store(out_ptr + 3 * N + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 4 * N + offs, tl.minimum(x, y))
    tl.store(out_ptr + 5 * N + offs, tl.where(tl.abs(x) < float("inf"), 1.0, 0.0))


def test_where_and_minmax_with_nan() -> None:
    N = 16
    x = RNG.standard_normal(N).astype(np.float32)
    y = RNG.standard_normal(N).astype(np.float32)
    x[[1, 5, 9]] = np.nan
    y[[5, 7]] = np.nan
    x[3] = np.inf
    out = np.zeros(6 * N, dtype=np.float32)
    nan_kernel.interpret[(1,)](x, y, out, N=N)
    o = out.reshape(6, N)
    np.testing.assert_array_equal(o[0], np.where(np.isnan(x), 0.0, x))
    np.testing.assert_array_equal(o[1], np.where(x > 0, x, y))
    np.testing.assert_array_equal(o[2], np.fmax(x, y))
    np.testing.assert_array_equal(o[3], np.maximum(x, y))
    np.testing.assert_array_equal(o[4], np.fmin(x, y))
    np.testing.assert_array_equal(o[5], np.isfinite(x).astype(np.float32))


@tlxc.jit
def math_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    ax = tl.abs(x) + 0.5
    results = (tl.exp(x), tl.log(ax), tl.sqrt(ax), tl.rsqrt(ax), tl.sigmoid(x), tl.erf(x),
               tl.fma(x, x, 1.0), tl.floor(x), tl.ceil(x), tl.clamp(x, -0.5, 0.5), tl.exp2(x), tl.log2(ax),
               tl.sin(x), tl.cos(x), x / 3)
    for i in tl.static_range(15):
        tl.store(out_ptr + i * N + offs, results[i])


def test_math_functions() -> None:
    N = 64
    x = RNG.uniform(-3, 3, N).astype(np.float32)
    out = np.zeros(15 * N, dtype=np.float32)
    math_kernel.interpret[(1,)](x, out, N=N)
    from math import erf

    ax = np.abs(x) + 0.5
    ref = [np.exp(x), np.log(ax), np.sqrt(ax), 1 / np.sqrt(ax), 1 / (1 + np.exp(-x)), np.vectorize(erf)(x),
           x * x + 1, np.floor(x), np.ceil(x), np.clip(x, -0.5, 0.5), np.exp2(x), np.log2(ax),
           np.sin(x), np.cos(x), x / 3]
    for i, r in enumerate(ref):
        np.testing.assert_allclose(out[i * N:(i + 1) * N], r, rtol=2e-6, atol=1e-6, err_msg=f"result {i}")


# -- shapes: join, split, reshape, permute, trans ---------------------------------------------------


@tlxc.jit
def interleave_kernel(a_ptr, b_ptr, out_ptr, evens_ptr, odds_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    ab = tl.join(a, b)                          # [N, 2]
    tl.static_assert(ab.shape == (N, 2))
    flat = tl.reshape(ab, [2 * N])              # a0 b0 a1 b1 ...
    tl.store(out_ptr + tl.arange(0, 2 * N), flat)
    ev, od = tl.split(tl.reshape(flat, (N, 2)))
    tl.store(evens_ptr + offs, od)              # swapped on purpose
    tl.store(odds_ptr + offs, ev)


def test_join_split_reshape() -> None:
    N = 16
    a = np.arange(N, dtype=np.float32)
    b = -np.arange(N, dtype=np.float32) - 100
    out = np.zeros(2 * N, dtype=np.float32)
    ev, od = np.zeros(N, np.float32), np.zeros(N, np.float32)
    interleave_kernel.interpret[(1,)](a, b, out, ev, od, N=N)
    np.testing.assert_array_equal(out, np.stack([a, b], axis=1).reshape(-1))
    np.testing.assert_array_equal(ev, b)
    np.testing.assert_array_equal(od, a)


@tlxc.jit
def split_pair_kernel(x_ptr, lo_ptr, hi_ptr):
    x = tl.load(x_ptr + tl.arange(0, 2))
    lo, hi = tl.split(x)  # a [2] tile into two scalars (Triton's test_split_to_scalar)
    tl.static_assert(lo.shape == [])
    tl.store(lo_ptr, lo)
    tl.store(hi_ptr, hi + 1)


def test_split_of_a_pair_into_scalars() -> None:
    x = np.array([7, -3], dtype=np.int64)
    lo, hi = np.zeros(1, np.int64), np.zeros(1, np.int64)
    split_pair_kernel.interpret[(1,)](x, lo, hi)
    assert (lo[0], hi[0]) == (7, -2)


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942", "gfx1250"])
def test_split_of_a_pair_into_scalars_compiles(arch: str) -> None:
    # the [2] tile was left spread over two lanes, which split cannot take apart
    ck = split_pair_kernel.compile("*i64:16,*i64:16,*i64:16", {}, arch=arch, num_warps=4)
    text = ck.asm["ptx" if arch.startswith("sm_") else "llir"]
    assert text.count("st.global" if arch.startswith("sm_") else "store") >= 2


@tlxc.jit
def static_print_kernel(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 128)[:, None] + tl.arange(0, 4)[None, :])
    tl.static_print("shapes:", x, n + 1, 3)


def test_static_print_spells_tensors_as_triton(capsys: pytest.CaptureFixture[str]) -> None:
    static_print_kernel.compile("*fp32,i32", {}, arch="sm_90a")
    assert capsys.readouterr().out == "shapes: fp32[constexpr[128], constexpr[4]] int32[] 3\n"


@tlxc.jit
def permute_kernel(x_ptr, out_ptr, T_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ia = tl.arange(0, A)[:, None, None]
    ib = tl.arange(0, B)[None, :, None]
    ic = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + ia * B * C + ib * C + ic)       # [A, B, C]
    y = tl.permute(x, (2, 0, 1))                         # [C, A, B]
    tl.static_assert(y.shape == (C, A, B))
    jc = tl.arange(0, C)[:, None, None]
    ja = tl.arange(0, A)[None, :, None]
    jb = tl.arange(0, B)[None, None, :]
    tl.store(out_ptr + jc * A * B + ja * B + jb, y)
    m = tl.reshape(x, (A * B, C))
    mt = tl.trans(m)                                    # [C, A*B]
    r = tl.arange(0, C)[:, None]
    s = tl.arange(0, A * B)[None, :]
    tl.store(T_ptr + r * (A * B) + s, mt + m.T * 0)


def test_permute_and_trans() -> None:
    A, B, C = 2, 4, 8
    x = np.arange(A * B * C, dtype=np.int32).reshape(A, B, C)
    out = np.zeros((C, A, B), dtype=np.int32)
    t = np.zeros((C, A * B), dtype=np.int32)
    permute_kernel.interpret[(1,)](x, out, t, A=A, B=B, C=C)
    np.testing.assert_array_equal(out, np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(t, x.reshape(A * B, C).T)


@tlxc.jit
def broadcast_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    row = tl.load(x_ptr + tl.arange(0, N))
    tile = tl.broadcast_to(row[None, :], (M, N))
    col = tl.expand_dims(tl.arange(0, M), 1).to(tl.float32)
    full = tl.full((M, N), 2, tl.float32)
    z = tl.zeros_like(tile)
    r = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + r, tile * full + col + z)


def test_broadcast_full_zeros_like() -> None:
    M, N = 4, 8
    x = RNG.standard_normal(N).astype(np.float32)
    out = np.zeros((M, N), np.float32)
    broadcast_kernel.interpret[(1,)](x, out, M=M, N=N)
    np.testing.assert_array_equal(out, x[None, :] * 2 + np.arange(M, dtype=np.float32)[:, None])


# -- loops -------------------------------------------------------------------------------------------


@tlxc.jit
def horner_kernel(x_ptr, out_ptr, n, COEFFS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(len(COEFFS)):
        acc = acc * x + COEFFS[i]
    tl.store(out_ptr + offs, acc, mask=mask)


def test_static_range_unrolls() -> None:
    coeffs = (2.0, -1.0, 0.5, 3.0)
    x = RNG.uniform(-2, 2, 100).astype(np.float32)
    out = np.zeros_like(x)
    horner_kernel.interpret[(4,)](x, out, 100, COEFFS=coeffs, BLOCK=32)
    ref = np.zeros_like(x)
    for c in coeffs:
        ref = ref * x + np.float32(c)
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    ir = horner_kernel.compile("*fp32,*fp32,i32", {"COEFFS": coeffs, "BLOCK": 32}).asm["ir"]
    assert " for " not in ir and ir.count("fma") + ir.count(" mul ") >= 4


@tlxc.jit
def chunked_sum_while_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    off = 0
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = 0
    while off < n:
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < n, other=0.0)
        off += BLOCK
        count += 1
    tl.store(out_ptr, tl.sum(acc, axis=0))
    tl.store(out_ptr + 1, count.to(tl.float32))


def test_while_loop_carried_values() -> None:
    x = RNG.integers(-9, 9, 203).astype(np.float32)
    out = np.zeros(2, dtype=np.float32)
    chunked_sum_while_kernel.interpret[(1,)](x, out, 203, BLOCK=32)
    assert out[0] == x.sum() and out[1] == 7


@tlxc.jit
def searchsorted_kernel(sorted_ptr, n, queries_ptr, out_ptr):
    pid = tl.program_id(0)
    q = tl.load(queries_ptr + pid)
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        v = tl.load(sorted_ptr + mid)
        if v < q:
            lo = mid + 1
        else:
            hi = mid
    tl.store(out_ptr + pid, lo)


def test_while_binary_search_with_if() -> None:
    a = np.sort(RNG.integers(0, 100, 57)).astype(np.float32)
    qs = np.array([-1, 0, 5, 50, 50.5, 99, 100, 200] + list(a[::7]), dtype=np.float32)
    out = np.zeros(qs.size, dtype=np.int32)
    searchsorted_kernel.interpret[(qs.size,)](a, a.size, qs, out)
    np.testing.assert_array_equal(out, np.searchsorted(a, qs, side="left"))


@tlxc.jit
def pointer_walk_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    x_ptr += pid * stride
    total = 0.0
    for _ in range(tl.cdiv(n_cols, BLOCK)):
        cols = tl.arange(0, BLOCK)
        v = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
        total += tl.sum(v, axis=0)
        x_ptr += BLOCK
        n_cols -= BLOCK
    first = tl.load(out_ptr + pid)      # scalar load
    tl.store(out_ptr + pid, total + first)


def test_pointer_increment_in_loop_and_scalar_load_store() -> None:
    x = RNG.integers(-5, 5, (6, 45)).astype(np.float32)
    out = np.arange(6, dtype=np.float32) * 1000
    pointer_walk_kernel.interpret[(6,)](x, out, 6, 45, 45, BLOCK=16)
    np.testing.assert_array_equal(out, x.sum(axis=1) + np.arange(6) * 1000)


@tlxc.jit
def nested_loop_kernel(out_ptr, M, N, K: tl.constexpr):
    acc = 0
    for i in range(M):
        for j in tl.range(i, N, 2, num_stages=2):
            acc += i * j
            for k in range(K):
                acc += k
    tl.store(out_ptr, acc)


def test_nested_loops_scalar_carried() -> None:
    out = np.zeros(1, dtype=np.int32)
    nested_loop_kernel.interpret[(1,)](out, 5, 9, K=3)
    ref = sum(i * j + 3 for i in range(5) for j in range(i, 9, 2))
    assert out[0] == ref


# -- functions, returns, constexpr ----------------------------------------------------------------


@tlxc.jit
def _clamp_index(i, n):
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


@tlxc.jit
def _row_stats(x, mask):
    s = tl.sum(tl.where(mask, x, 0.0), axis=0)
    mx = tl.max(tl.where(mask, x, -float("inf")), axis=0)
    return s, mx


@tlxc.jit
def _normalize(x, mask):
    s, mx = _row_stats(x, mask)
    return x / s, mx


@tlxc.jit
def helpers_kernel(x_ptr, out_ptr, idx_ptr, n, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + pid * n + offs, mask=mask, other=1.0)
    y, mx = _normalize(x, mask)
    tl.store(out_ptr + pid * n + offs, y + mx, mask=mask)
    tl.store(idx_ptr + pid, _clamp_index(pid + shift, 4))


def test_helpers_tuple_returns_and_early_return() -> None:
    x = RNG.uniform(1, 2, (6, 20)).astype(np.float32)
    out = np.zeros_like(x)
    idx = np.zeros(6, dtype=np.int32)
    helpers_kernel.interpret[(6,)](x, out, idx, 20, -2, BLOCK=32)
    np.testing.assert_allclose(out, x / x.sum(axis=1, keepdims=True) + x.max(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(idx, np.clip(np.arange(6) - 2, 0, 3))


@tlxc.jit
def early_exit_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def test_kernel_early_return() -> None:
    x = np.arange(50, dtype=np.float32)
    out = np.full(50, -1, dtype=np.float32)
    early_exit_kernel.interpret[(10,)](x, out, 50, BLOCK=16)  # programs 4..9 return at once
    np.testing.assert_array_equal(out, x * 2)


ACTIVATION_SLOPE = tl.constexpr(0.25)
OFFSETS = tl.constexpr((1, 2, 3))


@tlxc.jit
def constexpr_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, USE_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if MODE == "relu":
        y = tl.maximum(x, 0.0)
    elif MODE == "leaky":
        y = tl.where(x > 0, x, x * ACTIVATION_SLOPE)
    else:
        tl.static_assert(MODE == "id", "unknown MODE")
        y = x
    if USE_BIAS:
        y += OFFSETS[1]
    factor = 3 if MODE == "relu" else 1     # folded: a constant
    tl.store(out_ptr + offs, y * factor, mask=mask)


def test_constexpr_folding_and_globals() -> None:
    x = RNG.standard_normal(30).astype(np.float32)
    cases = [("relu", False, np.maximum(x, 0) * 3), ("leaky", True, np.where(x > 0, x, x * 0.25) + 2),
             ("id", True, x + 2)]
    for mode, use_bias, ref in cases:
        out = np.zeros_like(x)
        constexpr_kernel.interpret[(1,)](x, out, 30, MODE=mode, USE_BIAS=use_bias, BLOCK=32)
        np.testing.assert_allclose(out, ref, rtol=1e-7, err_msg=mode)
    ir = constexpr_kernel.compile("*fp32,*fp32,i32", {"MODE": "relu", "USE_BIAS": False, "BLOCK": 32}).asm["ir"]
    assert "select" not in ir and " if " not in ir and "maximum" in ir


@tlxc.jit(do_not_specialize=["n"])
def no_spec_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + n, mask=offs < n)


@tlxc.jit
def spec_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + n, mask=offs < n)


def test_do_not_specialize() -> None:
    a = np.zeros(32, dtype=np.int32)
    k1 = no_spec_kernel.interpret[(1,)](a, 16, BLOCK=32)
    k2 = no_spec_kernel.interpret[(1,)](a, 17, BLOCK=32)
    assert k1 is k2  # one variant: n's divisibility by 16 is not specialized on
    np.testing.assert_array_equal(a, np.where(np.arange(32) < 16, 33, np.where(np.arange(32) < 17, 17, 0)))
    s1 = spec_kernel.interpret[(1,)](a, 16, BLOCK=32)
    s2 = spec_kernel.interpret[(1,)](a, 17, BLOCK=32)
    assert s1 is not s2 and "n: i32:16" in s1.specialization and "n: i32:16" not in s2.specialization


@tlxc.jit
def hinted_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.multiple_of(pid * BLOCK, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_multiple_of_max_contiguous_hints() -> None:
    x = np.arange(100, dtype=np.float16)
    y = np.zeros_like(x)
    hinted_copy_kernel.interpret[(4,)](x, y, 100, BLOCK=32)
    np.testing.assert_array_equal(y, x + 1)
    ir = hinted_copy_kernel.compile("*fp16,*fp16,i32", {"BLOCK": 32}).asm["ir"]
    assert "multiple_of" in ir and "max_contiguous" in ir


@tlxc.jit
def minmax_scalar_kernel(out_ptr, a, b, BLOCK: tl.constexpr):
    lo = min(a, b)
    hi = max(a, b, 0)
    c = max(BLOCK, 4) + min(BLOCK, 4)         # constants: Python's min/max
    both = a if a > b else b                  # runtime ternary on scalars
    tl.store(out_ptr + tl.arange(0, 4), tl.where(tl.arange(0, 4) == 0, lo, tl.where(tl.arange(0, 4) == 1, hi,
                                                 tl.where(tl.arange(0, 4) == 2, c, both))))


def test_python_min_max_on_scalars() -> None:
    out = np.zeros(4, dtype=np.int32)
    minmax_scalar_kernel.interpret[(1,)](out, -5, -9, BLOCK=16)
    np.testing.assert_array_equal(out, [-9, 0, 20, -5])


# -- launching: grids, dots ---------------------------------------------------------------------------


@tlxc.jit
def grid3d_kernel(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    nx = tl.num_programs(0)
    ny = tl.num_programs(1)
    tl.store(out_ptr + (z * ny + y) * nx + x, x * 100 + y * 10 + z)


def test_3d_grid_and_callable_grid() -> None:
    out = np.zeros((2, 3, 4), dtype=np.int32)
    grid3d_kernel.interpret[lambda meta: (4, 3, 2)](out)
    z, y, x = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(out, x * 100 + y * 10 + z)


@tlxc.jit
def int8_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn)
    c = tl.dot(a, b)
    tl.static_assert(c.dtype == tl.int32)
    tl.store(c_ptr + rm * N + rn, c)


def test_int8_dot_exact() -> None:
    M, N, K = 16, 32, 64
    a = RNG.integers(-128, 128, (M, K)).astype(np.int8)
    b = RNG.integers(-128, 128, (K, N)).astype(np.int8)
    c = np.zeros((M, N), dtype=np.int32)
    int8_dot_kernel.interpret[(1,)](a, b, c, M=M, N=N, K=K)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


@tlxc.jit
def bitcast_kernel(x_ptr, bits_ptr, hi_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    bits = x.to(tl.int32, bitcast=True)
    tl.store(bits_ptr + offs, bits)
    u = bits.to(tl.uint32, bitcast=True)
    tl.store(hi_ptr + offs, tl.umulhi(u, u))


def test_bitcast_and_umulhi() -> None:
    x = RNG.standard_normal(32).astype(np.float32)
    bits = np.zeros(32, dtype=np.int32)
    hi = np.zeros(32, dtype=np.uint32)
    bitcast_kernel.interpret[(1,)](x, bits, hi, N=32)
    np.testing.assert_array_equal(bits, x.view(np.int32))
    u = x.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(hi, ((u * u) >> np.uint64(32)).astype(np.uint32))


# -- errors from the interpreter -----------------------------------------------------------------------


@tlxc.jit
def assert_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x >= 0, "x must be non-negative")


@pytest.mark.interpreter_only
def test_device_assert_raises() -> None:
    assert_kernel.interpret[(1,)](np.ones(8, np.float32), N=8)  # passes
    with pytest.raises(tlxc.InterpreterError) as info:
        assert_kernel.interpret[(1,)](np.array([1, 2, -3, 4, 5, 6, 7, 8], np.float32), N=8)
    assert info.value.code == "TLXC-INTERP-002"
    assert "x must be non-negative" in str(info.value)


@tlxc.jit
def oob_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)  # no mask: reads past the end in the last program
    tl.store(y_ptr + offs, v, mask=offs < 40)


@pytest.mark.interpreter_only
def test_out_of_bounds_load_names_the_line() -> None:
    x = np.zeros(40, np.float32)
    y = np.zeros(40, np.float32)
    with pytest.raises(tlxc.InterpreterError) as info:
        oob_kernel.interpret[(3,)](x, y, BLOCK=16)
    err = info.value
    assert err.code == "TLXC-INTERP-001"
    line = _line_of(oob_kernel, "v = tl.load(x_ptr + offs)")
    assert err.loc is not None and err.loc.line == line and err.loc.file == __file__
    assert f"{__file__}:{line}" in str(err) and "tl.load(x_ptr + offs)" in str(err)


# -- more kernels: promotion, conversions, control flow ------------------------------------------


@tlxc.jit
def promote_kernel(a_ptr, b_ptr, i_ptr, u_ptr, out_ptr, outu_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)   # fp16
    b = tl.load(b_ptr + offs)   # bf16
    i = tl.load(i_ptr + offs)   # int32
    u = tl.load(u_ptr + offs)   # uint8
    c = a + b                   # the fp16 rule comes before the bf16 one
    tl.static_assert(c.dtype == tl.float16)
    d = i + 1.5                 # a float scalar is a higher kind: fp32
    tl.static_assert(d.dtype == tl.float32)
    e = a * i
    tl.static_assert(e.dtype == tl.float16)
    f = i / 2                   # true division of integers: fp32
    tl.static_assert(f.dtype == tl.float32)
    g = a / 3                   # / on fp16 computes in fp32
    tl.static_assert(g.dtype == tl.float32)
    v = u * 3 + 1               # regression: a Python int does not widen uint8 (same kind in Triton)
    tl.static_assert(v.dtype == tl.uint8)
    w = u // 3                  # ... so uint8 // 3 has no signedness clash
    tl.static_assert(w.dtype == tl.uint8)
    results = (c, d, e, f, g)
    for k in tl.static_range(len(results)):
        tl.store(out_ptr + k * N + offs, results[k])
    tl.store(outu_ptr + offs, v)
    tl.store(outu_ptr + N + offs, w)


@tlxc.jit
def shift_kernel(x_ptr, y_ptr, u_ptr, w_ptr, out8_ptr, outu8_ptr, out64_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)   # int8
    y = tl.load(y_ptr + offs)   # uint8
    u = tl.load(u_ptr + offs)   # uint8, as the left operand
    w = tl.load(w_ptr + offs)   # uint64
    a = x >> y                  # Triton: computed in u8, but shifting in copies of x's sign
    tl.static_assert(a.dtype == tl.uint8)
    b = u >> y                  # an unsigned left operand shifts in zeros
    c = x >> w                  # x sign-extended to 64 bits first
    tl.static_assert(c.dtype == tl.uint64)
    tl.store(out8_ptr + offs, a)
    tl.store(outu8_ptr + offs, b)
    tl.store(out64_ptr + offs, c)


@pytest.mark.parametrize("arch", ["", "sm_90a", "gfx942"])
def test_right_shift_takes_the_left_operands_signedness(arch: str) -> None:
    """Triton's rule (its TTIR: arith.shrsi for an i8 left operand whatever the right one;
    Triton's test_core test_shift_op): i8 >> u8 is an arithmetic shift whose result is u8."""
    if arch:  # the code: an arithmetic shift where the left operand is signed
        ck = shift_kernel.compile("*i8,*u8,*u8,*u64,*u8,*u8,*u64", {"N": 8}, arch=arch)
        text = ck.asm["ptx" if arch.startswith("sm") else "llir"]
        signed, unsigned = ("shr.s16", "shr.u16") if arch.startswith("sm") else ("ashr", "lshr")
        assert signed in text and unsigned in text
        return
    N = 8
    x = np.array([-17, -86, 113, -1, 64, -128, 5, 0], np.int8)
    y = np.array([6, 3, 5, 7, 1, 2, 0, 7], np.uint8)
    u = np.array([200, 255, 3, 128, 17, 9, 1, 250], np.uint8)
    w = np.array([1, 60, 63, 0, 3, 8, 2, 9], np.uint64)
    o8, ou8, o64 = np.zeros(N, np.uint8), np.zeros(N, np.uint8), np.zeros(N, np.uint64)
    shift_kernel.interpret[(1,)](x, y, u, w, o8, ou8, o64, N=N)
    np.testing.assert_array_equal(o8, (x >> y.astype(np.int8)).view(np.uint8))
    np.testing.assert_array_equal(ou8, u >> y)
    np.testing.assert_array_equal(o64, (x.astype(np.int64) >> w.astype(np.int64)).view(np.uint64))


def test_promotion_rules() -> None:
    N = 8
    a = RNG.standard_normal(N).astype(np.float16)
    b = RNG.standard_normal(N).astype(ml_dtypes.bfloat16)
    i = RNG.integers(-100, 100, N).astype(np.int32)
    u = RNG.integers(0, 256, N).astype(np.uint8)
    out = np.zeros(5 * N, dtype=np.float32)
    outu = np.zeros(2 * N, dtype=np.uint8)
    promote_kernel.interpret[(1,)](a, b, i, u, out, outu, N=N)
    f32 = np.float32
    o = out.reshape(5, N)
    np.testing.assert_array_equal(o[0], (a + b.astype(f32).astype(np.float16)).astype(f32))
    np.testing.assert_array_equal(o[1], i + f32(1.5))
    np.testing.assert_array_equal(o[2], (a * i.astype(np.float16)).astype(f32))
    # '/' on f32 is Triton's fast division (div.full.f32, within 2 ulp) on the GPU; exact here
    np.testing.assert_allclose(o[3], i.astype(f32) / 2, rtol=2.5e-7)
    np.testing.assert_allclose(o[4], a.astype(f32) / 3, rtol=2.5e-7)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(outu[:N], u * np.uint8(3) + np.uint8(1))
    np.testing.assert_array_equal(outu[N:], u // 3)


@tlxc.jit
def compare_kernel(u_ptr, i_ptr, x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    u = tl.load(u_ptr + offs)   # uint32
    i = tl.load(i_ptr + offs)   # int32
    x = tl.load(x_ptr + offs)   # fp32
    tl.store(out_ptr + offs, (u > i).to(tl.int32))           # C: -1 converts to 2**32 - 1
    tl.store(out_ptr + N + offs, (-2 <= i < 3).to(tl.int32))  # chained comparison
    tl.store(out_ptr + 2 * N + offs, ((i > 0) & (x > 0) | (i == -1)).to(tl.int32))
    tl.store(out_ptr + 3 * N + offs, x % 3.0)                 # fmod: the sign of the dividend


def test_comparisons_mixed_sign_chained_and_float_mod() -> None:
    N = 8
    u = np.array([1, 5, 0, 3, 7, 4294967295, 2, 9], np.uint32)
    i = np.array([-1, 3, 0, 4, -2, -1, 2, 10], np.int32)
    x = np.array([-7.5, 7.5, -1, 2, 0.5, -0.25, 9, 3], np.float32)
    out = np.zeros(4 * N, dtype=np.int32)
    compare_kernel.interpret[(1,)](u, i, x, out, N=N)
    o = out.reshape(4, N)
    np.testing.assert_array_equal(o[0], u > i.view(np.uint32))
    np.testing.assert_array_equal(o[1], (-2 <= i) & (i < 3))
    np.testing.assert_array_equal(o[2], (i > 0) & (x > 0) | (i == -1))
    np.testing.assert_array_equal(o[3], np.fmod(x, 3).astype(np.int32))


@tlxc.jit
def int_convert_kernel(i_ptr, u_ptr, x_ptr, out8_ptr, outf_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    i = tl.load(i_ptr + offs)
    u = tl.load(u_ptr + offs)
    x = tl.load(x_ptr + offs)
    tl.store(out8_ptr + offs, i.to(tl.int8))                    # keeps the low bits
    tl.store(out8_ptr + N + offs, tl.abs(i.to(tl.int8)))         # abs(-128) wraps to -128
    tl.store(outf_ptr + offs, u.to(tl.float32))                  # rounds to nearest even
    tl.store(outf_ptr + N + offs, x.to(tl.int32).to(tl.float32))  # toward zero


def test_integer_conversions() -> None:
    i = np.array([300, -129, 127, -128, 255, 256, -1, 70000], np.int32)
    u = np.array([4294967295, 16777217, 0, 2 ** 31, 16777219, 1, 33554435, 7], np.uint32)
    x = np.array([2.9, -2.9, 0.5, -0.5, 1e3, -1e3, 7.0, -7.0], np.float32)
    out8 = np.zeros(16, np.int8)
    outf = np.zeros(16, np.float32)
    int_convert_kernel.interpret[(1,)](i, u, x, out8, outf, N=8)
    np.testing.assert_array_equal(out8[:8], i.astype(np.int8))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out8[8:], np.abs(i.astype(np.int8)))
    np.testing.assert_array_equal(outf[:8], u.astype(np.float32))
    np.testing.assert_array_equal(outf[8:], np.trunc(x))


@tlxc.jit
def bool_array_kernel(m_ptr, x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    m = tl.load(m_ptr + offs)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(m, x, 0))
    tl.store(m_ptr + offs, x > 2)


def test_bool_arrays_load_and_store() -> None:
    m = np.array([True, False, True, False, True, True, False, False])
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    bool_array_kernel.interpret[(1,)](m, x, out, N=8)
    np.testing.assert_array_equal(out, np.where([1, 0, 1, 0, 1, 1, 0, 0], x, 0))
    np.testing.assert_array_equal(m, x > 2)


@tlxc.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :]).to(tl.float8e4nv)
    b = tl.load(b_ptr + r[:, None] * N + r[None, :]).to(tl.float8e4nv)
    tl.store(c_ptr + r[:, None] * N + r[None, :], tl.dot(a, b))


def test_fp8_dot_accumulates_in_fp32() -> None:
    a = RNG.standard_normal((32, 32)).astype(np.float32)
    b = RNG.standard_normal((32, 32)).astype(np.float32)
    c = np.zeros((32, 32), np.float32)
    fp8_dot_kernel.interpret[(1,)](a, b, c, N=32)
    f8 = ml_dtypes.float8_e4m3fn
    np.testing.assert_allclose(c, a.astype(f8).astype(np.float64) @ b.astype(f8).astype(np.float64),
                               rtol=1e-5, atol=1e-5)


@tlxc.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr):
    ib = tl.arange(0, B)[:, None, None]
    im = tl.arange(0, M)[None, :, None]
    ik = tl.arange(0, M)[None, None, :]
    a = tl.load(a_ptr + ib * M * M + im * M + ik)
    b = tl.load(b_ptr + ib * M * M + im * M + ik)
    tl.store(c_ptr + ib * M * M + im * M + ik, tl.dot(a, b))


def test_batched_3d_dot() -> None:
    a = RNG.standard_normal((2, 16, 16)).astype(np.float16)
    b = RNG.standard_normal((2, 16, 16)).astype(np.float16)
    c = np.zeros((2, 16, 16), np.float32)
    batched_dot_kernel.interpret[(1,)](a, b, c, B=2, M=16)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


@tlxc.jit
def collatz_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    steps = tl.zeros([N], dtype=tl.int32)
    while tl.max(x, axis=0) > 1:       # the condition reduces a loop-carried tile
        big = x > 1
        x = tl.where(big, tl.where(x % 2 == 0, x // 2, 3 * x + 1), x)
        steps += big.to(tl.int32)
    tl.store(x_ptr + tl.arange(0, N), steps)


def test_while_condition_on_a_reduction() -> None:
    def collatz(n: int) -> int:
        s = 0
        while n > 1:
            n, s = (n // 2 if n % 2 == 0 else 3 * n + 1), s + 1
        return s

    x = np.arange(1, 33, dtype=np.int32)
    collatz_kernel.interpret[(1,)](x, N=32)
    np.testing.assert_array_equal(x, [collatz(n) for n in range(1, 33)])


@tlxc.jit
def newton_sqrt_kernel(x_ptr, out_ptr, it_ptr, N: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, N))
    y = a
    err = 1.0                          # a Python float that becomes a loop-carried fp32
    it = 0
    while err > 1e-6:
        y_new = 0.5 * (y + a / y)
        err = tl.max(tl.abs(y_new - y), axis=0)
        y = y_new
        it += 1
    tl.store(out_ptr + tl.arange(0, N), y)
    tl.store(it_ptr, it)


def test_newton_iteration_until_converged() -> None:
    x = np.linspace(1, 100, 16).astype(np.float32)
    out = np.zeros(16, np.float32)
    it = np.zeros(1, np.int32)
    newton_sqrt_kernel.interpret[(1,)](x, out, it, N=16)
    np.testing.assert_allclose(out, np.sqrt(x), rtol=1e-6)
    assert 3 < it[0] < 30


@tlxc.jit
def loop_forms_kernel(out_ptr, n):
    a = 0
    b = 1
    for _ in range(n):
        a, b = b, a + b                # tuple assignment of two carried values
    tl.store(out_ptr, a)
    digits = 0
    for i in range(n - 1, -1, -3):     # negative step
        digits = digits * 3 + i
    tl.store(out_ptr + 1, digits)
    acc = 0
    for i in tl.static_range(0, 8, 2):
        acc += i
    for j in tl.range(0, 10, 3, loop_unroll_factor=2):
        acc += j
    tl.store(out_ptr + 2, acc)


def test_loop_forms() -> None:
    out = np.zeros(3, np.int32)
    loop_forms_kernel.interpret[(1,)](out, 20)
    digits = 0
    for i in range(19, -1, -3):
        digits = digits * 3 + i
    np.testing.assert_array_equal(out, [6765, digits, 0 + 2 + 4 + 6 + 0 + 3 + 6 + 9])


@tlxc.jit
def _write_clamped(ptr, i):
    if i < 0:
        tl.store(ptr, -1)
        return
    tl.store(ptr, i)


@tlxc.jit
def void_helper_kernel(out_ptr):
    pid = tl.program_id(0)
    _write_clamped(out_ptr + pid, pid - 2)


def test_helper_without_result_returns_early() -> None:
    """Regression: both paths return None; the stores on each path must survive."""
    out = np.zeros(5, np.int32)
    void_helper_kernel.interpret[(5,)](out)
    np.testing.assert_array_equal(out, [-1, -1, 0, 1, 2])


@tlxc.jit
def bf16_max_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    v, i = tl.max(x, axis=0, return_indices=True)
    tl.static_assert(v.dtype == tl.float32)  # regression: Triton promotes bf16 before reducing
    m = tl.min(x, axis=0)
    tl.static_assert(m.dtype == tl.float32)
    tl.store(out_ptr, v)
    tl.store(out_ptr + 1, i.to(tl.float32))
    tl.store(out_ptr + 2, m)


def test_bf16_max_with_indices_is_fp32() -> None:
    x = RNG.standard_normal(16).astype(ml_dtypes.bfloat16)
    out = np.zeros(3, np.float32)
    bf16_max_kernel.interpret[(1,)](x, out, N=16)
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(out, [xf.max(), np.argmax(xf), xf.min()])


@tlxc.jit
def dtype_param_kernel(x_ptr, out_ptr, flag, N: tl.constexpr, DT: tl.constexpr):
    N2: tl.constexpr = N * 2
    x = tl.load(x_ptr + tl.arange(0, N2))
    if x.dtype.is_fp64():
        y = x.to(DT).to(tl.float64)
    else:
        y = x.to(DT).to(tl.float32)
    if flag:                           # a runtime bool argument
        y = y + 1
    elif not flag:
        y = y - 1
    tl.store(out_ptr + tl.arange(0, N2), y + x.dtype.primitive_bitwidth)


def test_dtype_constexpr_and_runtime_bool() -> None:
    x = (np.linspace(-3, 3, 16) * 1.001).astype(np.float32)
    out = np.zeros(16, np.float32)
    dtype_param_kernel.interpret[(1,)](x, out, True, N=8, DT=tl.bfloat16)
    np.testing.assert_array_equal(out, x.astype(ml_dtypes.bfloat16).astype(np.float32) + 1 + 32)
    x64 = np.linspace(-3, 3, 16) / 7
    out64 = np.zeros(16)
    dtype_param_kernel.interpret[(1,)](x64, out64, False, N=8, DT=tl.float16)
    np.testing.assert_array_equal(out64, x64.astype(np.float16).astype(np.float64) - 1 + 64)


@tlxc.jit
def methods_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r)
    tl.store(out_ptr + tl.arange(0, M), x.sum(axis=1))
    tl.store(out_ptr + M + tl.arange(0, N), x.max(axis=0))
    tl.store(out_ptr + M + N, x.exp().sum())
    tl.store(out_ptr + M + N + 1, x.to(tl.int32).argmax(axis=1).sum().to(tl.float32))


def test_tensor_methods() -> None:
    x = RNG.uniform(0, 10, (4, 8)).astype(np.float32)
    out = np.zeros(4 + 8 + 2, np.float32)
    methods_kernel.interpret[(1,)](x, out, M=4, N=8)
    np.testing.assert_allclose(out[:4], x.sum(1), rtol=1e-6)
    np.testing.assert_array_equal(out[4:12], x.max(0))
    np.testing.assert_allclose(out[12], np.exp(x).sum(), rtol=1e-6)
    assert out[13] == np.argmax(x.astype(np.int32), axis=1).sum()


# -- regressions: each of these once differed from Triton --------------------------------------------


@tlxc.jit
def scale_kernel(x_ptr, scale, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = x * scale
    tl.static_assert(y.dtype == tl.float32)
    tl.store(x_ptr + offs, y)


def test_python_float_scalar_is_fp32() -> None:
    x = np.ones(8, np.float32)
    scale_kernel.interpret[(1,)](x, 0.5, N=8)
    np.testing.assert_array_equal(x, 0.5)


def test_numpy_float64_scalar_is_fp32_like_triton() -> None:
    x = np.ones(8, np.float32)
    scale_kernel.interpret[(1,)](x, np.float64(0.5), N=8)
    np.testing.assert_array_equal(x, 0.5)


@tlxc.jit
def tuple_len_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    parts = (x, x * 2, x * 3)
    for i in tl.static_range(len(parts)):
        tl.store(out_ptr + i * N + offs, parts[i])


def test_len_of_tuple_of_tensors() -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(24, dtype=np.float32)
    tuple_len_kernel.interpret[(1,)](x, out, N=8)
    np.testing.assert_array_equal(out, np.concatenate([x, x * 2, x * 3]))


def test_enumerate_over_tuple_of_pointers(load_kernels) -> None:
    mod = load_kernels("""
@tlxc.jit
def fill(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for i, p in enumerate((x_ptr, y_ptr)):
        tl.store(p + offs, offs * (i + 1))
    for p, q in zip((x_ptr,), (y_ptr,)):
        tl.store(q + offs, tl.load(p + offs) + 100)
""")
    x = np.zeros(8, np.int32)
    y = np.zeros(8, np.int32)
    mod.fill.interpret[(1,)](x, y, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(8))
    np.testing.assert_array_equal(y, np.arange(8) + 100)
