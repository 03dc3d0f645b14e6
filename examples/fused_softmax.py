"""Fused row-wise softmax: one read of the input, one write of the output.

``softmax(x)[i, j] = exp(x[i, j] - max_j x[i, j]) / sum_j exp(x[i, j] - max_j x[i, j])``

A framework computes this with several kernels (max, subtract, exp, sum, divide), each
reading and writing the whole matrix. When a row fits in the registers of one program,
one kernel can do all of it: load the row once, reduce it twice in registers, store the
result once. That is what "fused" means here, and why this kernel is memory-bound at
close to the copy speed on a GPU.

The algorithm, per row:

1. load the row into a tile of ``BLOCK`` lanes, ``BLOCK = next_power_of_2(n_cols)``
   (tile sizes are powers of two). Lanes past ``n_cols`` are masked off and read as
   ``-inf``: they then lose every ``max`` and contribute ``exp(-inf) = 0`` to the sum, so
   the padding changes nothing;
2. subtract the row maximum before exponentiating. Softmax is invariant under this
   shift, and it keeps ``exp`` from overflowing (``exp(89.0)`` is already ``inf`` in
   fp32) -- the usual "stable softmax";
3. divide by the sum and store.

The idioms this example shows:

* a persistent-style grid: a fixed number of programs, each looping over rows with
  ``for row in tl.range(pid, n_rows, tl.num_programs(0))``. The same kernel works with one
  program per row (grid = ``n_rows``) or with fewer programs than rows;
* row strides passed as arguments, so the kernel also reads a slice of a larger matrix;
* ``tl.load(..., other=-float("inf"))`` as the neutral element of ``max``;
* reductions ``tl.max(x, axis=0)`` / ``tl.sum(x, axis=0)`` of a tile to a scalar;
* computing in fp32 whatever the storage dtype: fp16 rows are upcast with ``.to`` after
  the load, and the store converts back to the output pointer's dtype.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.optional_pytest import pytest


@tlxc.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(pid, n_rows, tl.num_programs(0)):
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


def softmax(x: np.ndarray, num_programs: int | None = None) -> np.ndarray:
    """Row-wise softmax of the 2-D array ``x`` (fp32 or fp16), in ``x``'s dtype.

    ``num_programs`` defaults to one program per row."""
    n_rows, n_cols = x.shape
    out = np.empty_like(x)
    block = tlxc.next_power_of_2(n_cols)
    grid = (num_programs or n_rows,)
    softmax_kernel.interpret[grid](out, x, x.strides[0] // x.itemsize, out.strides[0] // out.itemsize,
                                   n_rows, n_cols, BLOCK=block)
    return out


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 1), (7, 100), (16, 256), (5, 781)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax(shape: tuple[int, int], dtype: type) -> None:
    x = (np.random.default_rng(shape[1]).standard_normal(shape) * 4).astype(dtype)
    tol = {np.float32: 1e-6, np.float16: 2e-3}[dtype]
    np.testing.assert_allclose(softmax(x).astype(np.float64), reference(x), rtol=tol, atol=tol)


def test_fewer_programs_than_rows() -> None:
    x = np.random.default_rng(3).standard_normal((13, 50)).astype(np.float32)
    np.testing.assert_allclose(softmax(x, num_programs=4), reference(x), rtol=1e-6, atol=1e-7)


def test_large_values_do_not_overflow() -> None:
    """Without the max subtraction, exp(1000) would be inf and every value NaN."""
    x = np.array([[1000.0, 999.0, 998.0], [-1000.0, 0.0, 1000.0]], dtype=np.float32)
    np.testing.assert_allclose(softmax(x), reference(x), rtol=1e-6, atol=1e-30)


def test_strided_input() -> None:
    """A slice of a wider matrix: the row stride is not the row length."""
    big = np.random.default_rng(5).standard_normal((6, 40)).astype(np.float32)
    x = big[:, :33]
    out = np.empty((6, 33), dtype=np.float32)
    softmax_kernel.interpret[(6,)](out, big, 40, 33, 6, 33, BLOCK=64)
    np.testing.assert_allclose(out, reference(x), rtol=1e-6, atol=1e-7)


if __name__ == "__main__":
    x = np.random.default_rng(0).standard_normal((4, 10)).astype(np.float32)
    y = softmax(x)
    print("softmax of a 4x10 matrix, row sums:", y.sum(axis=1))
    print("max |error| vs numpy:", np.max(np.abs(y - reference(x))))
