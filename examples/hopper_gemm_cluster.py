"""A clustered GEMM on Hopper with TLX: the two CTAs of a cluster compute two tiles of C
that share their columns, so they share every B block, and each CTA loads only half of it
with a TMA **multicast** that lands in both CTAs' shared memory.

Launched with ``ctas_per_cga=(2, 1, 1)``: programs ``2i`` and ``2i + 1`` of grid axis 0
form a cluster and own tiles ``2i`` and ``2i + 1`` of C's rows, with the same columns.
For every K step, CTA ``r`` (its rank in the cluster, ``tlx.cluster_cta_rank()``):

* loads its own A block into its own stage;
* loads half ``r`` of the shared B block (``BLOCK_N / 2`` columns) with
  ``multicast_targets=[0, 1]``: the half lands at the same place in both CTAs' stage and
  completes on both CTAs' ``full`` barrier, so each CTA's ``full`` expects its A block and
  the *whole* B block;
* before loading into a stage again, waits until **both** CTAs are done reading it: each
  CTA, once the wgmma that read a stage has retired, arrives on its own ``empty`` barrier
  and on its peer's (``barrier_arrive(bar, remote_cta_rank=r ^ 1)``), and ``empty``
  expects 2 arrivals ("arrive remote, wait local").

The compiler adds the cluster syncs this needs around it: after the mbarriers are
initialized (a peer may arrive on them) and before a CTA exits (a peer may still write
into its shared memory).

Run ``python examples/hopper_gemm_cluster.py`` to multiply two matrices on the CPU
interpreter, which runs the two CTAs of each cluster together.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest


@tlxc.jit
def matmul_cluster(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   NUM_STAGES: tl.constexpr):
    HALF: tl.constexpr = BLOCK_N // 2
    rank = tlx.cluster_cta_rank()
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    dtype = tlx.dtype_of(a_desc)
    bufs_a = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, NUM_STAGES)
    bufs_b = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, NUM_STAGES)
    full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    empty = tlx.alloc_barriers(NUM_STAGES, arrive_count=2)  # this CTA and its peer released the stage
    stage_bytes: tl.constexpr = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * tlx.size_of(dtype)
    k_tiles = tl.cdiv(K, BLOCK_K)

    # -- prologue: the first NUM_STAGES - 1 stages are free in both CTAs --
    for i in tl.static_range(NUM_STAGES - 1):
        if i < k_tiles:
            tlx.barrier_expect_bytes(full[i], stage_bytes)
            tlx.async_descriptor_load(a_desc, bufs_a[i], [off_m, i * BLOCK_K], full[i])
            half = tlx.local_slice(bufs_b[i], [0, rank * HALF], [BLOCK_K, HALF])
            tlx.async_descriptor_load(b_desc, half, [i * BLOCK_K, off_n + rank * HALF], full[i],
                                      multicast_targets=[0, 1])

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_tiles):
        s = k % NUM_STAGES
        tlx.barrier_wait(full[s], (k // NUM_STAGES) & 1)
        acc = tlx.async_dot(bufs_a[s], bufs_b[s], acc)
        acc = tlx.async_dot_wait(1, acc)  # the wgmma of step k - 1 has retired: release its stage
        if k > 0:
            p = (k - 1) % NUM_STAGES
            tlx.barrier_arrive(empty[p])
            tlx.barrier_arrive(empty[p], remote_cta_rank=rank ^ 1)
        nk = k + NUM_STAGES - 1
        if nk < k_tiles:
            ns = nk % NUM_STAGES
            if nk >= NUM_STAGES:  # the stage was used before: both CTAs must have released it
                tlx.barrier_wait(empty[ns], ((nk // NUM_STAGES) - 1) & 1)
            tlx.barrier_expect_bytes(full[ns], stage_bytes)
            tlx.async_descriptor_load(a_desc, bufs_a[ns], [off_m, nk * BLOCK_K], full[ns])
            half = tlx.local_slice(bufs_b[ns], [0, rank * HALF], [BLOCK_K, HALF])
            tlx.async_descriptor_load(b_desc, half, [nk * BLOCK_K, off_n + rank * HALF], full[ns],
                                      multicast_targets=[0, 1])
    acc = tlx.async_dot_wait(0, acc)

    out = tlx.local_alloc((BLOCK_M, BLOCK_N), tlx.dtype_of(c_desc), 1)
    tlx.local_store(out[0], acc.to(tlx.dtype_of(c_desc)))
    tlx.fence_async_shared()
    tlx.async_descriptor_store(c_desc, out[0], [off_m, off_n])
    tlx.async_descriptor_store_wait(0)


def launch(a, b, c, block=(128, 128, 64), stages=3, num_warps=4, run=None):
    """``c = a @ b`` in clusters of two CTAs along M (``run``: ``matmul_cluster`` or its
    ``.interpret``); M must hold a whole number of tile pairs."""
    (M, K), (_, N) = a.shape, b.shape
    bm, bn, bk = block
    assert M % (2 * bm) == 0, "the two CTAs of a cluster take two row tiles"
    a_d = tlxc.TensorDescriptor.from_tensor(a, [bm, bk])
    b_d = tlxc.TensorDescriptor.from_tensor(b, [bk, bn // 2])
    c_d = tlxc.TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (M // bm, tlxc.cdiv(N, bn))
    (run or matmul_cluster)[grid](a_d, b_d, c_d, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=stages,
                                  num_warps=num_warps, ctas_per_cga=(2, 1, 1))
    return c


def matmul(a: np.ndarray, b: np.ndarray, **kw) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype on the interpreter."""
    c = np.zeros((a.shape[0], b.shape[1]), dtype=a.dtype)
    return launch(a, b, c, run=matmul_cluster.interpret, **kw)


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K, stages", [(128, 64, 64, 2), (256, 128, 192, 3), (128, 128, 320, 2)])
def test_matmul_cluster(M: int, N: int, K: int, stages: int) -> None:
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = matmul(a, b, block=(64, 64, 32), stages=stages)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=3e-2)


def test_matmul_cluster_ptx() -> None:
    from tlxc.compiler import compile_kernel
    from tlxc.kernels.options import compile_options

    specs, consts = matmul_cluster.resolve_aot(
        "tensordesc<fp16[128,64]>,tensordesc<fp16[64,64]>,tensordesc<fp16[128,128]>,i32",
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_STAGES": 3}, None)
    ck = compile_kernel(matmul_cluster, specs, consts, compile_options({"ctas_per_cga": (2, 1, 1)}, "sm_90a", None))
    ptx = ck.asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx
    assert ".multicast::cluster" in ptx and "mbarrier.arrive.shared::cluster.b64" in ptx
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128)).astype(np.float16)
    b = rng.standard_normal((128, 192)).astype(np.float16)
    c = matmul(a, b, block=(64, 64, 32))
    ref = a.astype(np.float32) @ b.astype(np.float32)
    print("max |error| vs numpy:", float(np.abs(c.astype(np.float32) - ref).max()))
