"""``tl.reduce_or`` and ``tl.softmax`` (tlxc/language/standard.py: Triton's definitions in the
kernel language, on ``tl.reduce`` and on ``tl.max``/``tl.exp``/``tl.sum``/``tl.fdiv``),
against numpy in the interpreter, as tensor methods, compiled for every target, and the
error for floats given to ``reduce_or``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def ors(x, by_col, by_row, whole, kept, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    v = tl.load(x + offs)
    tl.store(by_col + tl.arange(0, C), tl.reduce_or(v, 0))
    tl.store(by_row + tl.arange(0, R), v.reduce_or(1))
    tl.store(whole, tl.reduce_or(v, None))
    tl.store(kept + tl.arange(0, R)[:, None], tl.reduce_or(v, 1, keep_dims=True))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_reduce_or_along_each_axis(dtype: Any) -> None:
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 8 * np.dtype(dtype).itemsize - (dtype != np.uint8), (4, 16))
    x = (np.ones((4, 16), dtype) << bits.astype(dtype)) * (rng.random((4, 16)) < 0.3)
    x = x.astype(dtype)
    x[0, 0] = 6
    by_col, by_row, whole, kept = np.zeros(16, dtype), np.zeros(4, dtype), np.zeros(1, dtype), np.zeros(4, dtype)
    ors.interpret[(1,)](x, by_col, by_row, whole, kept, R=4, C=16)
    np.testing.assert_array_equal(by_col, np.bitwise_or.reduce(x, 0))
    np.testing.assert_array_equal(by_row, np.bitwise_or.reduce(x, 1))
    np.testing.assert_array_equal(kept, by_row)
    assert whole[0] == np.bitwise_or.reduce(x, None) and whole[0] & 6 == 6


def test_reduce_or_small_numbers() -> None:
    x = np.array([[1, 2, 4, 8], [16, 1, 1, 0], [0, 0, 0, 256], [0, 0, 0, 0]], np.int32)
    by_col, by_row, whole, kept = np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(1, np.int32), \
        np.zeros(4, np.int32)
    ors.interpret[(1,)](x, by_col, by_row, whole, kept, R=4, C=4)
    assert by_col.tolist() == [17, 3, 5, 264]
    assert by_row.tolist() == [15, 17, 256, 0]
    assert whole.tolist() == [287]


def test_reduce_or_of_floats_is_an_error_at_the_call(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    w = tl.reduce_or(v, 0)
    tl.store(x, w)
""")
    with pytest.raises(tlxc.CompilationError, match="tl.reduce_or needs integers") as info:
        m.k.compile("*fp32")
    assert "w = tl.reduce_or(v, 0)" in str(info.value)


@tlxc.jit
def softmaxes(x, cols, rows, vec, ieee, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    v = tl.load(x + offs)
    tl.store(cols + offs, tl.softmax(v))  # dim 0 by default, as in Triton
    tl.store(rows + offs, v.softmax(1, keep_dims=True))
    tl.store(vec + tl.arange(0, C), tl.softmax(tl.load(x + tl.arange(0, C))))
    tl.store(ieee + offs, tl.softmax(v, 0, ieee_rounding=True))


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax(dtype: Any) -> None:
    x = (np.random.default_rng(6).standard_normal((8, 32)) * 4).astype(dtype)
    x[3, 5] = 60  # exp(60) overflows float32: the max is subtracted first
    cols, rows, ieee = (np.zeros((8, 32), np.float32) for _ in range(3))
    vec = np.zeros(32, np.float32)  # fp16 in, float32 out: tl.max computes fp16 in float32
    softmaxes.interpret[(1,)](x, cols, rows, vec, ieee, R=8, C=32)
    xf = x.astype(np.float64)
    np.testing.assert_allclose(cols, _softmax(xf, 0), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(rows, _softmax(xf, 1), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(vec, _softmax(xf[0], 0), rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(ieee, cols)
    assert cols[3, 5] == 1.0 and np.allclose(cols.sum(0), 1.0, rtol=1e-6)


def test_softmax_along_a_later_dim_without_keep_dims_is_triton_s_shape_error(load_kernels: Any) -> None:
    """Triton's softmax subtracts the reduced tile without the axis: along dim 1 of an 8x32
    tile that is [8] against [8, 32], which does not broadcast (the same in Triton)."""
    m = load_kernels("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :])
    w = tl.softmax(v, 1)
    tl.store(x + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :], w)
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    assert "w = tl.softmax(v, 1)" in str(info.value) and info.value.code.startswith("TLXC-SHAPE")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942", "gfx950", "gfx1250"])
def test_every_target_compiles_them(arch: str) -> None:
    a = softmaxes.compile("*fp32,*fp32,*fp32,*fp32,*fp32", {"R": 8, "C": 32}, arch=arch)
    b = ors.compile("*i32,*i32,*i32,*i32,*i32", {"R": 4, "C": 16}, arch=arch)
    key = "ptx" if arch.startswith("sm_") else "amdgcn"
    assert a.asm[key] and b.asm[key]
    if key == "ptx":
        assert "ex2.approx" in a.asm[key] and "or.b32" in b.asm[key]
