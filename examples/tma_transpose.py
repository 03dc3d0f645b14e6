"""Transposing a matrix with TMA: one copy in, a transposed view, one copy out.

Each program moves one ``BLOCK x BLOCK`` tile:

1. ``async_descriptor_load`` copies the tile at ``[row, col]`` of X into a shared-memory
   buffer and completes on an mbarrier (``barrier_expect_bytes`` announces the bytes);
2. ``tlx.local_trans(buf)`` is the same bytes seen with the dimensions swapped -- a view,
   no data moves -- and ``local_load`` reads it into registers, transposed;
3. the registers go to a second buffer, which one TMA store writes to ``[col, row]`` of Y.

TMA clips blocks at the edges of the tensors (loads zero-fill, stores drop), so the
kernel needs no masks for shapes that are not multiples of the block.

Run ``python examples/tma_transpose.py`` to transpose a matrix on the CPU interpreter.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest


@tlxc.jit
def transpose_kernel(x_desc, y_desc, BLOCK: tl.constexpr):
    row = tl.program_id(0) * BLOCK
    col = tl.program_id(1) * BLOCK
    dtype = tlx.dtype_of(x_desc)
    src = tlx.local_alloc((BLOCK, BLOCK), dtype, 1)
    dst = tlx.local_alloc((BLOCK, BLOCK), dtype, 1)
    bar = tlx.alloc_barriers(1, arrive_count=1)
    tlx.barrier_expect_bytes(bar[0], BLOCK * BLOCK * tlx.size_of(dtype))
    tlx.async_descriptor_load(x_desc, src[0], [row, col], bar[0])
    tlx.barrier_wait(bar[0], 0)
    tile = tlx.local_load(tlx.local_trans(src[0]))
    tlx.local_store(dst[0], tile)
    tlx.fence_async_shared()
    tlx.async_descriptor_store(y_desc, dst[0], [col, row])
    tlx.async_descriptor_store_wait(0)


def transpose(x: np.ndarray, block: int = 32) -> np.ndarray:
    """``x.T`` (a new array) on the interpreter."""
    M, N = x.shape
    y = np.zeros((N, M), dtype=x.dtype)
    xd = tlxc.TensorDescriptor.from_tensor(x, [block, block])
    yd = tlxc.TensorDescriptor.from_tensor(y, [block, block])
    transpose_kernel.interpret[(tlxc.cdiv(M, block), tlxc.cdiv(N, block))](xd, yd, BLOCK=block)
    return y


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, dtype", [(64, 64, np.float32), (40, 72, np.float16), (36, 20, np.float32)])
def test_transpose(M: int, N: int, dtype: type) -> None:
    x = np.arange(M * N).reshape(M, N).astype(dtype)
    np.testing.assert_array_equal(transpose(x, block=16 if dtype == np.float16 else 8), x.T)


if __name__ == "__main__":
    x = np.arange(96 * 64, dtype=np.float32).reshape(96, 64)
    print("transposed correctly:", bool((transpose(x) == x.T).all()))
