"""``tl.sort``, ``tl.flip``, ``tl.topk`` and ``tl.bitonic_merge`` (tlxc/language/standard.py: a bitonic network on
``tl.gather``) against numpy in the interpreter, and compiled for every target."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def rows(x, ys, yd, yf, yt, R: tl.constexpr, C: tl.constexpr, K: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    v = tl.load(x + offs)
    tl.store(ys + offs, tl.sort(v))
    tl.store(yd + offs, tl.sort(v, descending=True))
    tl.store(yf + offs, tl.flip(v, 1))
    tl.store(yt + tl.arange(0, R)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(v, K))


@tlxc.jit
def smallest(x, y, R: tl.constexpr, C: tl.constexpr, K: tl.constexpr):
    v = tl.load(x + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(y + tl.arange(0, R)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(v, K, descending=False))


@tlxc.jit
def columns(x, ys, yf, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    v = tl.load(x + offs)
    tl.store(ys + offs, tl.sort(v, 0))
    tl.store(yf + offs, tl.flip(v, 0))


@tlxc.jit
def vector(x, y, N: tl.constexpr):
    tl.store(y + tl.arange(0, N), tl.sort(tl.load(x + tl.arange(0, N))))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
@pytest.mark.parametrize("r,c,k", [(4, 16, 4), (2, 64, 8), (1, 2, 1)])
def test_rows(dtype: Any, r: int, c: int, k: int) -> None:
    rng = np.random.default_rng(r * c)
    x = (rng.standard_normal((r, c)) * 10).astype(dtype)
    if dtype == np.int32:
        x[0, : c // 2] = 3  # ties
    ys, yd, yf = (np.zeros_like(x) for _ in range(3))
    yt = np.zeros((r, k), dtype)
    rows.interpret[(1,)](x, ys, yd, yf, yt, R=r, C=c, K=k)
    np.testing.assert_array_equal(ys, np.sort(x, 1))
    np.testing.assert_array_equal(yd, np.sort(x, 1)[:, ::-1])
    np.testing.assert_array_equal(yf, x[:, ::-1])
    np.testing.assert_array_equal(yt, np.sort(x, 1)[:, ::-1][:, :k])


def test_topk_not_descending_gives_the_smallest_first() -> None:
    """Triton's ``topk(x, k, descending=False)`` (its test_sort); was TLXC-CALL-002."""
    x = np.array([[5, -1, 9, 3, 3, 0, 7, -8], [1, 2, 3, 4, 5, 6, 7, 8]], np.int32)
    y = np.zeros((2, 4), np.int32)
    smallest.interpret[(1,)](x, y, R=2, C=8, K=4)
    assert y.tolist() == [[-8, -1, 0, 3], [1, 2, 3, 4]]


def test_columns_and_vectors() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    ys, yf = np.zeros_like(x), np.zeros_like(x)
    columns.interpret[(1,)](x, ys, yf, R=8, C=4)
    np.testing.assert_array_equal(ys, np.sort(x, 0))
    np.testing.assert_array_equal(yf, x[::-1])
    v = rng.permutation(256).astype(np.int32)
    out = np.zeros_like(v)
    vector.interpret[(1,)](v, out, N=256)
    np.testing.assert_array_equal(out, np.arange(256))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942", "gfx950", "gfx1250"])
def test_every_target_compiles_them(arch: str) -> None:
    ck = rows.compile("*fp32,*fp32,*fp32,*fp32,*fp32", {"R": 4, "C": 32, "K": 8}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm_") else "amdgcn"]
    ck = merged.compile("*fp32,*fp32,*fp32", {"R": 4, "C": 32}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm_") else "amdgcn"]


def test_a_dim_out_of_range_is_an_error_at_the_call(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    w = tl.sort(v, 1)
    tl.store(x + tl.arange(0, 16), w)
""")
    with pytest.raises(tlxc.CompilationError, match="dim 1 is out of range for a tile of rank 1") as info:
        m.k.compile("*fp32")
    assert "w = tl.sort(v, 1)" in str(info.value)


@tlxc.jit
def merged(x, y, yd, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    v = tl.load(x + offs)
    tl.store(y + offs, tl.bitonic_merge(v))
    tl.store(yd + offs, tl.bitonic_merge(v, descending=True))


def _merge_reference(x: np.ndarray, descending: bool) -> np.ndarray:
    """Triton's network: rounds r = log2(n) - 1 .. 0 over partners i ^ 2**r along the last
    axis; an element takes its partner's value when (x > partner) != (upper xor descending)."""
    x = x.copy()
    n = x.shape[-1]
    i = np.arange(n)
    r = n.bit_length() - 2
    while r >= 0:
        j = 1 << r
        y = x[..., i ^ j]
        upper = ((i & j) != 0) != descending
        x = np.where((x > y) != upper, y, x)
        r -= 1
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("r,c", [(4, 16), (2, 64), (1, 2)])
def test_bitonic_merge(dtype: Any, r: int, c: int) -> None:
    """Triton's tl.bitonic_merge: a bitonic row comes out sorted; any row goes through the
    same network as Triton's, NaN included."""
    rng = np.random.default_rng(c)
    half = np.sort((rng.standard_normal((r, c // 2)) * 10).astype(dtype), 1)
    bitonic = np.concatenate([half, np.sort((rng.standard_normal((r, c - c // 2)) * 10).astype(dtype), 1)[:, ::-1]],
                             1)
    for x in (np.ascontiguousarray(bitonic), (rng.standard_normal((r, c)) * 10).astype(dtype)):
        if dtype == np.float32 and c > 2:
            x = x.copy()
            x[0, 1] = np.nan
        y, yd = np.zeros_like(x), np.zeros_like(x)
        merged.interpret[(1,)](x, y, yd, R=r, C=c)
        np.testing.assert_array_equal(y, _merge_reference(x, False))
        np.testing.assert_array_equal(yd, _merge_reference(x, True))
    y, yd = np.zeros_like(bitonic), np.zeros_like(bitonic)
    merged.interpret[(1,)](np.ascontiguousarray(bitonic), y, yd, R=r, C=c)
    np.testing.assert_array_equal(y, np.sort(bitonic, 1))
    np.testing.assert_array_equal(yd, np.sort(bitonic, 1)[:, ::-1])
