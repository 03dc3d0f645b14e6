"""A pipelined GEMM on Hopper with TLX: TMA copies completing on mbarriers, wgmma on
shared-memory operands, and a TMA store of the result.

The A, B and C matrices are passed as TMA tensor descriptors, made on the host with
``tlxc.TensorDescriptor.from_tensor(t, block_shape)``: the descriptor knows the tensor's
shape and strides and the block (box) one copy moves. In the kernel:

* ``tlx.alloc_barriers(NUM_STAGES, arrive_count=1)`` makes one mbarrier per stage. A
  barrier's phase completes when the expected arrivals *and* the expected transaction
  bytes have all arrived; ``barrier_expect_bytes(bar, n)`` is one arrival that also
  announces ``n`` bytes, and each TMA copy that names the barrier delivers its bytes;
* ``tlx.async_descriptor_load(desc, buf, [row, col], bar)`` starts a TMA copy of the
  block at ``[row, col]`` (element coordinates, innermost last; blocks that stick out
  of the tensor are zero-filled, and their full size still counts as bytes);
* ``tlx.barrier_wait(bar, phase)`` waits for the phase with that parity. Stage ``s`` is
  used for tiles ``s, s + NUM_STAGES, ...``; tile ``k`` is its ``k // NUM_STAGES``-th
  use, so its phase is ``(k // NUM_STAGES) & 1``;
* the epilogue writes the accumulator to a buffer with ``local_store`` and stores the
  buffer with one TMA copy (``async_descriptor_store``); TMA clips the block at the
  tensor's edges, so no masks are needed anywhere. ``fence_async_shared`` orders the
  ordinary shared-memory writes before the TMA engine reads them (the compiler inserts
  that fence too), and ``async_descriptor_store_wait(0)`` waits until the TMA engine has
  finished reading the buffer.

The interpreter runs the barrier protocol for real: a wait for a phase that can never
complete is reported as a deadlock naming the barrier's line (``TLXC-INTERP-004``), and
reading a buffer before the wait on its barrier as ``TLXC-INTERP-005``.

Run ``python examples/hopper_gemm_tma.py`` to multiply two matrices on the CPU
interpreter.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest


@tlxc.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               NUM_STAGES: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    dtype = tlx.dtype_of(a_desc)
    bufs_a = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, NUM_STAGES)
    bufs_b = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, NUM_STAGES)
    full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    stage_bytes: tl.constexpr = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * tlx.size_of(dtype)
    k_tiles = tl.cdiv(K, BLOCK_K)

    # -- prologue: start the first NUM_STAGES - 1 tiles --
    for i in tl.static_range(NUM_STAGES - 1):
        if i < k_tiles:
            tlx.barrier_expect_bytes(full[i], stage_bytes)
            tlx.async_descriptor_load(a_desc, bufs_a[i], [off_m, i * BLOCK_K], full[i])
            tlx.async_descriptor_load(b_desc, bufs_b[i], [i * BLOCK_K, off_n], full[i])

    # -- steady state --
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_tiles):
        s = k % NUM_STAGES
        tlx.barrier_wait(full[s], (k // NUM_STAGES) & 1)
        acc = tlx.async_dot(bufs_a[s], bufs_b[s], acc)
        # the MMA of iteration k - 1 is done: its stage can be refilled
        acc = tlx.async_dot_wait(1, acc)
        nk = k + NUM_STAGES - 1
        if nk < k_tiles:
            ns = nk % NUM_STAGES
            tlx.barrier_expect_bytes(full[ns], stage_bytes)
            tlx.async_descriptor_load(a_desc, bufs_a[ns], [off_m, nk * BLOCK_K], full[ns])
            tlx.async_descriptor_load(b_desc, bufs_b[ns], [nk * BLOCK_K, off_n], full[ns])
    acc = tlx.async_dot_wait(0, acc)

    # -- epilogue: registers -> shared memory -> TMA store --
    out = tlx.local_alloc((BLOCK_M, BLOCK_N), tlx.dtype_of(c_desc), 1)
    tlx.local_store(out[0], acc.to(tlx.dtype_of(c_desc)))
    tlx.fence_async_shared()
    tlx.async_descriptor_store(c_desc, out[0], [off_m, off_n])
    tlx.async_descriptor_store_wait(0)


def matmul(a: np.ndarray, b: np.ndarray, block: tuple[int, int, int] = (64, 64, 32), stages: int = 3) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype (fp16 or bf16), accumulated in fp32, on the interpreter."""
    (M, K), (_, N) = a.shape, b.shape
    c = np.zeros((M, N), dtype=a.dtype)
    bm, bn, bk = block
    a_d = tlxc.TensorDescriptor.from_tensor(a, [bm, bk])
    b_d = tlxc.TensorDescriptor.from_tensor(b, [bk, bn])
    c_d = tlxc.TensorDescriptor.from_tensor(c, [bm, bn])
    matmul_tma.interpret[(tlxc.cdiv(M, bm), tlxc.cdiv(N, bn))](a_d, b_d, c_d, K, BLOCK_M=bm, BLOCK_N=bn,
                                                               BLOCK_K=bk, NUM_STAGES=stages)
    return c


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K, stages", [(64, 64, 32, 2), (128, 64, 96, 3), (96, 72, 80, 4)])
def test_matmul_tma(M: int, N: int, K: int, stages: int) -> None:
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = matmul(a, b, stages=stages)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=2e-2)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128)).astype(np.float16)
    b = rng.standard_normal((128, 192)).astype(np.float16)
    c = matmul(a, b)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    print("max |error| vs numpy:", float(np.abs(c.astype(np.float32) - ref).max()))
