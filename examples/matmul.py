"""Matrix multiplication ``C = A @ B`` with ``tl.dot``, in the style of Triton's tutorial.

``A`` is ``M x K``, ``B`` is ``K x N``. Each program computes one ``BLOCK_M x BLOCK_N``
tile of ``C``: it walks ``K`` in steps of ``BLOCK_K``, loads a ``BLOCK_M x BLOCK_K`` tile
of ``A`` and a ``BLOCK_K x BLOCK_N`` tile of ``B``, and accumulates their product into an
fp32 accumulator with ``tl.dot`` (the tensor cores on a GPU). The accumulator is converted
to ``C``'s dtype once, at the end.

**Tile order ("super-grouping").** Programs run roughly in the order of their ids. With a
row-major order (``pid_m = pid // num_pid_n``) consecutive programs share a row of ``A``
but each reads a different column block of ``B``: one row of ``C`` tiles reads all of
``B``. Grouping ``GROUP_SIZE_M`` rows of tiles together and walking *down* a group
before moving right makes consecutive programs share column blocks of ``B`` too, so
the tiles they load stay in the L2 cache. The mapping from ``pid`` to ``(pid_m, pid_n)``
is a permutation of the tiles, so the result does not depend on it -- only the speed on a
GPU does; the tests check every ``GROUP_SIZE_M`` gives the same ``C``.

**Edges.** ``M``, ``N`` and ``K`` need not be multiples of the blocks.
Rows and columns past ``M``/``N`` are *wrapped* with ``% M`` / ``% N`` when loading (so
the loads stay in bounds without a mask; the extra rows compute garbage that is never
stored) and masked off when storing. The ``K`` tail must contribute zero to the sum, so
its loads are masked with ``other=0.0``.

The idioms this example shows:

* pointer tiles built by broadcasting ``offs_m[:, None] * stride_am + offs_k[None, :] *
  stride_ak`` -- strides are arguments, so transposed or sliced inputs work unchanged;
* advancing pointer tiles in the ``K`` loop with ``a_ptrs += BLOCK_K * stride_ak``
  (the pointer tile is a loop-carried value);
* ``tl.dot(a, b, acc)`` accumulating in fp32, and ``input_precision``: on fp32 inputs
  ``tl.dot`` defaults to TF32 (10 mantissa bits, as the tensor cores do), and the
  interpreter rounds the inputs to TF32 likewise; ``input_precision="ieee"`` asks for full
  fp32 products;
* a compile-time string parameter (``ACTIVATION``) selecting an epilogue, and a
  ``@tlxc.jit`` helper function (inlined) for it;
* ``tl.cdiv`` and Python's ``min`` on runtime scalars inside the kernel.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.optional_pytest import pytest


@tlxc.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@tlxc.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr = "",
                  INPUT_PRECISION: tl.constexpr = "tf32"):
    # -- which tile of C this program computes (grouped order) --
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # -- pointers to the first tiles of A and B --
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # -- the K loop --
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)

    # -- store the tile, masked at the edges of C --
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: np.ndarray, b: np.ndarray, block: tuple[int, int, int] = (32, 32, 16), group_size_m: int = 4,
           activation: str = "", input_precision: str = "tf32") -> np.ndarray:
    """``a @ b`` in ``a``'s dtype, accumulated in fp32."""
    (M, K), (K2, N) = a.shape, b.shape
    assert K == K2 and a.dtype == b.dtype
    c = np.empty((M, N), dtype=a.dtype)
    bm, bn, bk = block
    grid = (tlxc.cdiv(M, bm) * tlxc.cdiv(N, bn),)
    s = a.itemsize
    matmul_kernel.interpret[grid](
        a, b, c, M, N, K,
        a.strides[0] // s, a.strides[1] // s, b.strides[0] // s, b.strides[1] // s,
        c.strides[0] // s, c.strides[1] // s,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=group_size_m,
        ACTIVATION=activation, INPUT_PRECISION=input_precision)
    return c


def round_to_tf32(x: np.ndarray) -> np.ndarray:
    """Finite fp32 values rounded to TF32's 10 explicit mantissa bits (to nearest even)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K", [(64, 64, 32), (50, 70, 45), (33, 17, 100), (1, 40, 16)])
def test_matmul_fp16(M: int, N: int, K: int) -> None:
    rng = np.random.default_rng(M * N * K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = matmul(a, b)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 accumulation is nearly exact here; the one fp16 rounding of C dominates
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-3, atol=1e-2)


def test_matmul_fp32_ieee() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((45, 37)).astype(np.float32)
    b = rng.standard_normal((37, 51)).astype(np.float32)
    c = matmul(a, b, input_precision="ieee")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_matmul_fp32_default_is_tf32() -> None:
    """Default precision on fp32: the products of TF32-rounded inputs. Close to the
    rounded inputs' product, and visibly off (~1e-3 relative) from the exact one."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 64)).astype(np.float32)
    b = rng.standard_normal((64, 24)).astype(np.float32)
    c = matmul(a, b)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    rounded = round_to_tf32(a).astype(np.float64) @ round_to_tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, rounded, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(c, exact, rtol=2e-2, atol=2e-2)


def test_group_order_does_not_change_result() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((100, 40)).astype(np.float16)
    b = rng.standard_normal((40, 90)).astype(np.float16)
    results = [matmul(a, b, block=(16, 16, 16), group_size_m=g) for g in (1, 2, 3, 8)]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_transposed_input_through_strides() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((48, 20)).astype(np.float16)
    bt = rng.standard_normal((30, 48)).astype(np.float16)  # B = bt.T, a strided view
    c = matmul(a.T, bt.T, block=(16, 16, 32))
    np.testing.assert_allclose(c.astype(np.float64), a.T.astype(np.float64) @ bt.T.astype(np.float64),
                               rtol=1e-3, atol=1e-2)


def test_leaky_relu_epilogue() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    c = matmul(a, b, activation="leaky_relu")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-3, atol=1e-2)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 70)).astype(np.float16)
    b = rng.standard_normal((70, 30)).astype(np.float16)
    c = matmul(a, b)
    err = np.max(np.abs(c.astype(np.float64) - a.astype(np.float64) @ b.astype(np.float64)))
    print(f"C = A @ B, (50x70) @ (70x30) fp16, 32x32x16 tiles: max |error| = {err:.3g}")
