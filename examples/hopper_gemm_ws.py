"""A persistent, warp-specialized GEMM on Hopper with TLX: one producer task feeds a ring
of shared-memory stages with TMA, and consumer warpgroups multiply them on wgmma.

``with tlx.async_tasks():`` splits the CTA's warps into partitions that run at the same
time. Here:

* the **default task** (the kernel's ``num_warps``) is the producer. For every K step of
  every tile this CTA owns it waits until the stage is free (``empty``), announces the
  stage's bytes on ``full`` and starts the TMA copies of A and B into it;
* ``NUM_CONSUMERS`` **consumer replicas** of 4 warps each (one warpgroup, the unit of
  wgmma) split the tile's rows between them ("cooperative" consumers). Each waits on
  ``full``, multiplies its rows of A by B with ``async_dot``, and keeps one wgmma in
  flight (``async_dot_wait(1)``): the stage of the *previous* step is released with an
  arrive on ``empty`` once its wgmma has retired. ``empty`` expects one arrival per
  consumer. ``registers=232`` gives the consumers' warpgroups most of the register file
  (``setmaxnreg``); the producer keeps what is left.

Each stage's phase follows from a running count of the steps done
(``get_bufidx_phase(count, NUM_STAGES)``: the stage is ``count % NUM_STAGES``, its phase
``(count // NUM_STAGES) & 1``), so the ring keeps going across tiles. The kernel is
persistent: ``NUM_SMS`` CTAs walk the tiles with a stride of ``NUM_SMS``.

Run ``python examples/hopper_gemm_ws.py`` to multiply two matrices on the CPU
interpreter, where the partitions run as cooperative tasks.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest
from tlxc.tlx.warp_spec import get_bufidx_phase


@tlxc.jit
def matmul_ws(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr, NUM_CONSUMERS: tl.constexpr, NUM_SMS: tl.constexpr):
    ROWS: tl.constexpr = BLOCK_M // NUM_CONSUMERS  # each consumer's rows of the tile
    dtype = tlx.dtype_of(a_desc)
    a_bufs = tlx.local_alloc((ROWS, BLOCK_K), dtype, NUM_STAGES * NUM_CONSUMERS)
    b_bufs = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, NUM_STAGES)
    full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    empty = tlx.alloc_barriers(NUM_STAGES, arrive_count=NUM_CONSUMERS)
    stage_bytes: tl.constexpr = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * tlx.size_of(dtype)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    first = tl.program_id(0)

    with tlx.async_tasks():
        with tlx.async_task("default"):  # the producer
            count = 0
            for tile in range(first, num_tiles, NUM_SMS):
                off_m = (tile // tiles_n) * BLOCK_M
                off_n = (tile % tiles_n) * BLOCK_N
                for k in range(0, k_tiles):
                    buf, phase = get_bufidx_phase(count, NUM_STAGES)
                    tlx.barrier_wait(empty[buf], phase ^ 1)  # the consumers released the stage
                    tlx.barrier_expect_bytes(full[buf], stage_bytes)
                    for g in tl.static_range(NUM_CONSUMERS):
                        tlx.async_descriptor_load(a_desc, a_bufs[buf * NUM_CONSUMERS + g],
                                                  [off_m + g * ROWS, k * BLOCK_K], full[buf])
                    tlx.async_descriptor_load(b_desc, b_bufs[buf], [k * BLOCK_K, off_n], full[buf])
                    count += 1
        with tlx.async_task(num_warps=4, registers=232, replicate=NUM_CONSUMERS):  # the consumers
            g = tlx.async_task_replica_id()
            count = 0
            for tile in range(first, num_tiles, NUM_SMS):
                off_m = (tile // tiles_n) * BLOCK_M
                off_n = (tile % tiles_n) * BLOCK_N
                acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
                prev = 0
                for k in range(0, k_tiles):
                    buf, phase = get_bufidx_phase(count, NUM_STAGES)
                    tlx.barrier_wait(full[buf], phase)
                    acc = tlx.async_dot(a_bufs[buf * NUM_CONSUMERS + g], b_bufs[buf], acc)
                    acc = tlx.async_dot_wait(1, acc)  # the previous step's wgmma is done
                    if k > 0:
                        tlx.barrier_arrive(empty[prev])
                    prev = buf
                    count += 1
                acc = tlx.async_dot_wait(0, acc)
                tlx.barrier_arrive(empty[prev])
                c_desc.store([off_m + g * ROWS, off_n], acc.to(tlx.dtype_of(c_desc)))


def launch(a, b, c, block=(128, 128, 64), stages=3, consumers=2, num_sms=132, run=None):
    """``c = a @ b`` (``run``: ``matmul_ws`` or ``matmul_ws.interpret``), persistent over
    ``num_sms`` programs."""
    (M, K), (_, N) = a.shape, b.shape
    bm, bn, bk = block
    a_d = tlxc.TensorDescriptor.from_tensor(a, [bm // consumers, bk])
    b_d = tlxc.TensorDescriptor.from_tensor(b, [bk, bn])
    c_d = tlxc.TensorDescriptor.from_tensor(c, [bm // consumers, bn])
    tiles = tlxc.cdiv(M, bm) * tlxc.cdiv(N, bn)
    grid = (min(num_sms, tiles),)
    (run or matmul_ws)[grid](a_d, b_d, c_d, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=stages,
                             NUM_CONSUMERS=consumers, NUM_SMS=grid[0], num_warps=4)
    return c


def matmul(a: np.ndarray, b: np.ndarray, **kw) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype on the interpreter."""
    c = np.zeros((a.shape[0], b.shape[1]), dtype=a.dtype)
    return launch(a, b, c, run=matmul_ws.interpret, **kw)


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K, consumers, stages, sms", [(128, 128, 128, 2, 2, 1), (256, 128, 192, 2, 3, 3),
                                                           (128, 192, 64, 1, 2, 2)])
def test_matmul_ws(M: int, N: int, K: int, consumers: int, stages: int, sms: int) -> None:
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    block = (64 * consumers, 64, 64)
    c = matmul(a, b, block=block, stages=stages, consumers=consumers, num_sms=sms)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=3e-2)


def test_matmul_ws_ptx() -> None:
    ck = matmul_ws.compile("tensordesc<fp16[64,64]>,tensordesc<fp16[64,256]>,tensordesc<fp16[64,256]>,i32,i32,i32",
                           {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "NUM_STAGES": 3, "NUM_CONSUMERS": 2,
                            "NUM_SMS": 132}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert ck.metadata["num_warps"] == 12
    assert ptx.count("setmaxnreg.inc.sync.aligned.u32 232") == 2 and "setmaxnreg.dec.sync.aligned.u32 40" in ptx
    assert "wgmma.wait_group.sync.aligned 1" in ptx


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128)).astype(np.float16)
    b = rng.standard_normal((128, 192)).astype(np.float16)
    c = matmul(a, b, block=(128, 64, 64), num_sms=4)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    print("max |error| vs numpy:", float(np.abs(c.astype(np.float32) - ref).max()))
