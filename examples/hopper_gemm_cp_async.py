"""A pipelined GEMM on Hopper with TLX: cp.async copies into a ring of shared-memory
buffers, and wgmma (``tlx.async_dot``) reading them straight from shared memory.

``tl.dot`` leaves staging to the compiler. TLX lets you write it yourself:

* ``tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, NUM_STAGES)`` reserves ``NUM_STAGES``
  buffers in shared memory; ``bufs[s]`` is buffer ``s`` (``s`` may be a runtime value);
* ``tlx.async_load(ptrs, buf, mask=...)`` starts a per-thread copy from global memory
  (``cp.async``; masked-off elements are zero-filled) and returns a token;
  ``async_load_commit_group`` closes a group of copies and ``async_load_wait_group(n)``
  waits until at most ``n`` groups are still in flight;
* ``tlx.async_dot(a_buf, b_buf, acc)`` starts ``acc + a @ b`` on the tensor cores with
  both operands in shared memory; ``tlx.async_dot_wait(n, acc)`` waits until at most
  ``n`` of them are in flight and returns ``acc``, now safe to use.

The pipeline keeps ``NUM_STAGES - 1`` copies ahead of the MMA. In iteration ``k`` the
loads for tile ``k + NUM_STAGES - 1`` go into the buffer that iteration ``k - 1`` read:
``async_dot_wait(1)`` has just retired that MMA, so the buffer is free, while the MMA of
iteration ``k`` may still be running. The prefetches past the last tile are fully masked
(zero-filled), which keeps the loop free of branches; so are the rows and columns past
the edges of A and B.

The interpreter checks the protocol as it runs: reading a buffer whose cp.async group was
not waited for is an error (``TLXC-INTERP-005``) that names the line.

Run ``python examples/hopper_gemm_cp_async.py`` to multiply two matrices on the CPU
interpreter.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest


@tlxc.jit
def matmul_cp_async(a_ptr, b_ptr, c_ptr, M, N, K,
                    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    NUM_STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    # rows of A and columns of B past the edges are masked off: cp.async fills them with zeros
    in_m = offs_m[:, None] < M
    in_n = offs_n[None, :] < N

    bufs_a = tlx.local_alloc((BLOCK_M, BLOCK_K), tlx.dtype_of(a_ptr), NUM_STAGES)
    bufs_b = tlx.local_alloc((BLOCK_K, BLOCK_N), tlx.dtype_of(b_ptr), NUM_STAGES)
    k_tiles = tl.cdiv(K, BLOCK_K)

    # -- prologue: start the first NUM_STAGES - 1 tiles --
    for i in tl.static_range(NUM_STAGES - 1):
        in_k = K - i * BLOCK_K
        ta = tlx.async_load(a_ptrs + i * BLOCK_K * stride_ak, bufs_a[i], mask=in_m & (offs_k[None, :] < in_k))
        tb = tlx.async_load(b_ptrs + i * BLOCK_K * stride_bk, bufs_b[i], mask=(offs_k[:, None] < in_k) & in_n)
        tlx.async_load_commit_group([ta, tb])

    # -- steady state: wait for tile k, start its MMA, prefetch tile k + NUM_STAGES - 1 --
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_tiles):
        s = k % NUM_STAGES
        tlx.async_load_wait_group(NUM_STAGES - 2)
        acc = tlx.async_dot(bufs_a[s], bufs_b[s], acc)
        acc = tlx.async_dot_wait(1, acc)
        nk = k + NUM_STAGES - 1
        ns = nk % NUM_STAGES
        ta = tlx.async_load(a_ptrs + nk * BLOCK_K * stride_ak, bufs_a[ns],
                            mask=in_m & (offs_k[None, :] < K - nk * BLOCK_K))
        tb = tlx.async_load(b_ptrs + nk * BLOCK_K * stride_bk, bufs_b[ns],
                            mask=(offs_k[:, None] < K - nk * BLOCK_K) & in_n)
        tlx.async_load_commit_group([ta, tb])
    acc = tlx.async_dot_wait(0, acc)

    # -- epilogue: store C, masked at the edges --
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tlx.dtype_of(c_ptr)), mask=in_m & in_n)


def matmul(a: np.ndarray, b: np.ndarray, block: tuple[int, int, int] = (64, 64, 32), stages: int = 3) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype (fp16 or bf16), accumulated in fp32, on the interpreter."""
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), dtype=a.dtype)
    bm, bn, bk = block
    s = a.itemsize
    matmul_cp_async.interpret[(tlxc.cdiv(M, bm), tlxc.cdiv(N, bn))](
        a, b, c, M, N, K, a.strides[0] // s, a.strides[1] // s, b.strides[0] // s, b.strides[1] // s,
        c.strides[0] // s, c.strides[1] // s, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=stages)
    return c


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K, stages", [(64, 64, 32, 2), (128, 64, 96, 3), (100, 72, 80, 4)])
def test_matmul_cp_async(M: int, N: int, K: int, stages: int) -> None:
    rng = np.random.default_rng(M + N + K)
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
