"""A persistent matrix multiplication ``C = A @ B``: one program per SM walks over the
tiles of ``C``, reading its operands with TMA through tensor descriptors.

``matmul.py`` launches one program per tile: each loads its tiles of A and B, runs its K
loop and stores its tile of C, and the GPU starts the next program when one finishes.
Between two tiles, an SM waits for the first loads of the next tile -- the pipeline that
``num_stages`` builds inside the K loop drains and fills again at every tile. Here the
grid has ``NUM_SMS`` programs, and program ``p`` computes tiles ``p``, ``p + NUM_SMS``,
``p + 2 * NUM_SMS``, ... in the same grouped order as ``matmul.py``.

**``tl.range(..., flatten=True)``.** The tile loop asks the compiler to fuse it with the
K loop nested in it: one loop of ``tiles x k_blocks`` iterations, the tile's indices
computed at its first K block, the epilogue (convert, store) run after its last one. The
loads of the fused loop are pipelined like any ``tl.dot`` loop's, so the first blocks of
the next tile are already in flight while this tile's last products and its store run,
and the accumulator is reset for the next tile by the MMA itself (wgmma's ``scale-d``),
not by writing zeros. The numbers are the same as the nest's: flattening only changes
when the work is issued.

**Tensor descriptors.** ``TensorDescriptor.from_tensor(t, block_shape)`` describes a
row-major tensor and the block that one ``desc.load([row, col])`` reads: on sm_90a a
single TMA copy, which also fills what lies outside the tensor with zeros -- the K tail and
ragged edges need no mask. ``desc.store`` writes only the part of a block inside C. TMA
needs each row to start on a 16-byte boundary: for fp16, ``K`` and ``N`` multiples of 8
(pad the rows otherwise); ``M`` and the blocks are free.

The idioms this example shows: a persistent grid (``min(NUM_SMS, tiles)`` programs, a
``tl.range`` with the grid size as its step), ``flatten=True``, tensor-descriptor loads
and stores, and the grouped tile order of ``matmul.py`` in a helper function.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.optional_pytest import pytest
from tlxc.tools.tensor_descriptor import TensorDescriptor


@tlxc.jit
def tile_of(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr):
    """``(pid_m, pid_n)`` of tile ``tile_id`` in the grouped order (see ``matmul.py``)."""
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@tlxc.jit
def persistent_matmul_kernel(a_desc, b_desc, c_desc, M, N, K,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_blocks = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(axis=0), num_pid_m * num_pid_n, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_of(tile_id, num_pid_m, num_pid_n, GROUP_SIZE_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(k_blocks):
            a = a_desc.load([off_m, kb * BLOCK_K])   # zeros past the edges of A
            b = b_desc.load([kb * BLOCK_K, off_n])
            accumulator = tl.dot(a, b, accumulator)
        c_desc.store([off_m, off_n], accumulator.to(c_desc.dtype))   # clipped to C


def descriptors(a, b, c, block: tuple[int, int, int]) -> tuple[TensorDescriptor, ...]:
    """The descriptors of A, B and C (numpy arrays or torch tensors) for ``block``."""
    bm, bn, bk = block
    return (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bk, bn]),
            TensorDescriptor.from_tensor(c, [bm, bn]))


def matmul(a: np.ndarray, b: np.ndarray, block: tuple[int, int, int] = (32, 32, 16), num_sms: int = 3,
           group_size_m: int = 4) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype, accumulated in fp32, by ``num_sms`` persistent programs
    (in the interpreter)."""
    (M, K), (K2, N) = a.shape, b.shape
    assert K == K2 and a.dtype == b.dtype
    c = np.zeros((M, N), dtype=a.dtype)
    bm, bn, _ = block
    grid = (min(num_sms, tlxc.cdiv(M, bm) * tlxc.cdiv(N, bn)),)
    persistent_matmul_kernel.interpret[grid](*descriptors(a, b, c, block), M, N, K, BLOCK_M=bm, BLOCK_N=bn,
                                             BLOCK_K=block[2], GROUP_SIZE_M=group_size_m, NUM_SMS=grid[0])
    return c


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K, sms", [(64, 64, 32, 1), (96, 64, 48, 2), (50, 72, 40, 3), (33, 24, 104, 4),
                                          (128, 96, 16, 12), (7, 8, 8, 2)])
def test_persistent_matmul_fp16(M: int, N: int, K: int, sms: int) -> None:
    """Fewer, as many and more tiles than programs; one K block, several, a ragged tail;
    ragged edges of C."""
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = matmul(a, b, num_sms=sms)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-3, atol=1e-2)


def test_the_tile_order_does_not_change_the_result() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((100, 40)).astype(np.float16)
    b = rng.standard_normal((40, 88)).astype(np.float16)
    results = [matmul(a, b, block=(16, 16, 16), num_sms=s, group_size_m=g) for s, g in ((1, 1), (3, 2), (5, 8))]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_the_tile_loop_and_the_k_loop_are_one_loop() -> None:
    ck = persistent_matmul_kernel.compile(
        "tensordesc<fp16[128,64]>,tensordesc<fp16[64,128]>,tensordesc<fp16[128,128]>,i32,i32,i32",
        constants=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_SIZE_M=8, NUM_SMS=132), arch="sm_90a",
        num_warps=4, num_stages=4)
    ptx = ck.asm["ptx"]
    loop = ptx[ptx.index("$_for_head"):ptx.index("bra.uni $_for_head")]
    # the TMA loads of a later iteration, an mbarrier wait for this one's, one wgmma left in
    # flight, and the epilogue's TMA store, all in the one loop
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in loop and "mbarrier.try_wait" in loop
    assert "wgmma.wait_group.sync.aligned 1;" in loop
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in loop


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((100, 72)).astype(np.float16)
    b = rng.standard_normal((72, 96)).astype(np.float16)
    c = matmul(a, b)
    err = np.max(np.abs(c.astype(np.float64) - a.astype(np.float64) @ b.astype(np.float64)))
    print(f"C = A @ B, (100x72) @ (72x96) fp16, 32x32x16 tiles on 3 persistent programs: max |error| = {err:.3g}")
