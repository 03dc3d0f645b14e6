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

``CLUSTER=2`` (launched with ``ctas_per_cga=(2, 1, 1)``) pairs the CTAs: the two CTAs of a
cluster take the two row tiles of a ``2 * BLOCK_M`` "super tile", which share their B
block. Each producer loads its own A rows and *half* of B with a TMA multicast that lands
in both CTAs' stage, so each CTA's ``full`` barrier expects the whole B; a stage is free
again only when the consumers of *both* CTAs released it (each consumer arrives on its
own CTA's ``empty`` and on the peer's, which expects ``2 * NUM_CONSUMERS`` arrivals:
"arrive remote, wait local").

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
def _tile_coords(tile, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Tile ``tile`` of the grid in grouped order: ``GROUP_M`` row tiles walk the columns
    together, so the CTAs working at one time share their A rows and B columns in L2."""
    in_group = GROUP_M * tiles_n
    first_m = (tile // in_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    return first_m + (tile % in_group) % rows, (tile % in_group) // rows


@tlxc.jit
def _release(bar, rank, CLUSTER: tl.constexpr):
    """Release a stage: arrive on its ``empty`` barrier in every CTA of the cluster (each
    CTA's producer writes into all of them with its multicast)."""
    tlx.barrier_arrive(bar)
    for peer in tl.static_range(1, CLUSTER):
        tlx.barrier_arrive(bar, remote_cta_rank=(rank + peer) % CLUSTER)


@tlxc.jit
def matmul_ws(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr, NUM_CONSUMERS: tl.constexpr, NUM_SMS: tl.constexpr,
              GROUP_M: tl.constexpr = 8, EPI_SPLIT: tl.constexpr = 1, B_KMAJOR: tl.constexpr = False,
              CLUSTER: tl.constexpr = 1):
    ROWS: tl.constexpr = BLOCK_M // NUM_CONSUMERS  # each consumer's rows of the tile
    EPI_N: tl.constexpr = BLOCK_N // EPI_SPLIT  # the columns of one epilogue store
    B_PART: tl.constexpr = BLOCK_N // CLUSTER  # the B columns this CTA loads (for the cluster)
    dtype = tlx.dtype_of(a_desc)
    a_bufs = tlx.local_alloc((ROWS, BLOCK_K), dtype, NUM_STAGES * NUM_CONSUMERS)
    if B_KMAJOR:  # b_desc describes B^T (N x K): the operand order fp8 wgmma reads
        b_bufs = tlx.local_alloc((BLOCK_N, BLOCK_K), dtype, NUM_STAGES)
    else:
        b_bufs = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, NUM_STAGES)
    c_bufs = tlx.local_alloc((ROWS, EPI_N), tlx.dtype_of(c_desc), NUM_CONSUMERS)  # one per consumer
    full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    # a stage is free again once every consumer of every CTA of the cluster released it
    empty = tlx.alloc_barriers(NUM_STAGES, arrive_count=NUM_CONSUMERS * CLUSTER)
    stage_bytes: tl.constexpr = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * tlx.size_of(dtype)
    # A cluster of CLUSTER CTAs walks the tiles as one: its CTAs take the CLUSTER row tiles
    # of one "super tile" (CLUSTER * BLOCK_M rows, the same columns).
    if CLUSTER > 1:
        rank = tlx.cluster_cta_rank()
    else:
        rank = 0
    tiles_m = tl.cdiv(M, BLOCK_M * CLUSTER)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tiles_m * tiles_n
    k_tiles = tl.cdiv(K, BLOCK_K)
    first = tl.program_id(0) // CLUSTER
    STRIDE: tl.constexpr = NUM_SMS // CLUSTER

    with tlx.async_tasks():
        with tlx.async_task("default"):  # the producer
            count = 0
            for tile in range(first, num_tiles, STRIDE):
                pid_m, pid_n = _tile_coords(tile, tiles_m, tiles_n, GROUP_M)
                off_m = (pid_m * CLUSTER + rank) * BLOCK_M
                off_n = pid_n * BLOCK_N
                for k in range(0, k_tiles):
                    buf, phase = get_bufidx_phase(count, NUM_STAGES)
                    tlx.barrier_wait(empty[buf], phase ^ 1)  # the consumers released the stage
                    tlx.barrier_expect_bytes(full[buf], stage_bytes)
                    for g in tl.static_range(NUM_CONSUMERS):
                        tlx.async_descriptor_load(a_desc, a_bufs[buf * NUM_CONSUMERS + g],
                                                  [off_m + g * ROWS, k * BLOCK_K], full[buf])
                    if CLUSTER == 1:
                        if B_KMAJOR:
                            tlx.async_descriptor_load(b_desc, b_bufs[buf], [off_n, k * BLOCK_K], full[buf])
                        else:
                            tlx.async_descriptor_load(b_desc, b_bufs[buf], [k * BLOCK_K, off_n], full[buf])
                    else:  # this CTA's part of B, multicast into the same place of every CTA's stage
                        if B_KMAJOR:
                            part = tlx.local_slice(b_bufs[buf], [rank * B_PART, 0], [B_PART, BLOCK_K])
                            tlx.async_descriptor_load(b_desc, part, [off_n + rank * B_PART, k * BLOCK_K], full[buf],
                                                      multicast_targets=list(range(CLUSTER)))
                        else:
                            part = tlx.local_slice(b_bufs[buf], [0, rank * B_PART], [BLOCK_K, B_PART])
                            tlx.async_descriptor_load(b_desc, part, [k * BLOCK_K, off_n + rank * B_PART], full[buf],
                                                      multicast_targets=list(range(CLUSTER)))
                    count += 1
        with tlx.async_task(num_warps=4, registers=232, replicate=NUM_CONSUMERS):  # the consumers
            g = tlx.async_task_replica_id()
            count = 0
            for tile in range(first, num_tiles, STRIDE):
                pid_m, pid_n = _tile_coords(tile, tiles_m, tiles_n, GROUP_M)
                off_m = (pid_m * CLUSTER + rank) * BLOCK_M
                off_n = pid_n * BLOCK_N
                acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
                prev = 0
                for k in range(0, k_tiles):
                    buf, phase = get_bufidx_phase(count, NUM_STAGES)
                    tlx.barrier_wait(full[buf], phase)
                    if B_KMAJOR:
                        acc = tlx.async_dot(a_bufs[buf * NUM_CONSUMERS + g], tlx.local_trans(b_bufs[buf]), acc)
                    else:
                        acc = tlx.async_dot(a_bufs[buf * NUM_CONSUMERS + g], b_bufs[buf], acc)
                    acc = tlx.async_dot_wait(1, acc)  # the previous step's wgmma is done
                    if k > 0:
                        _release(empty[prev], rank, CLUSTER)
                    prev = buf
                    count += 1
                acc = tlx.async_dot_wait(0, acc)
                _release(empty[prev], rank, CLUSTER)
                # The epilogue does not wait for its TMA stores: the next tile's wgmmas start
                # while they run. Only a reuse of the consumer's buffer waits for the store
                # that reads it (store_wait(0): the bulk reads of this thread's stores are done).
                out = acc.to(tlx.dtype_of(c_desc))
                if EPI_SPLIT == 1:
                    tlx.async_descriptor_store_wait(0)
                    tlx.local_store(c_bufs[g], out)
                    tlx.fence_async_shared()
                    tlx.async_descriptor_store(c_desc, c_bufs[g], [off_m + g * ROWS, off_n])
                else:
                    parts = tl.split(tl.permute(tl.reshape(out, (ROWS, 2, EPI_N)), (0, 2, 1)))
                    for h in tl.static_range(2):
                        tlx.async_descriptor_store_wait(0)
                        tlx.local_store(c_bufs[g], parts[h])
                        tlx.fence_async_shared()
                        tlx.async_descriptor_store(c_desc, c_bufs[g], [off_m + g * ROWS, off_n + h * EPI_N])
            tlx.async_descriptor_store_wait(0)


def launch(a, b, c, block=(128, 128, 64), stages=3, consumers=2, num_sms=132, group_m=8, epi_split=1,
           b_kmajor=False, cluster=1, run=None):
    """``c = a @ b`` (``run``: ``matmul_ws`` or ``matmul_ws.interpret``), persistent over
    ``num_sms`` programs; tiles in groups of ``group_m`` rows, the epilogue stored in
    ``epi_split`` (1 or 2) column blocks. ``b_kmajor``: ``b`` is given as B^T (N x K),
    as fp8 needs. ``cluster`` > 1: clusters of that many CTAs along M share each B block
    through TMA multicast (``num_sms`` is rounded down to whole clusters)."""
    (M, K) = a.shape
    N = b.shape[0] if b_kmajor else b.shape[1]
    bm, bn, bk = block
    a_d = tlxc.TensorDescriptor.from_tensor(a, [bm // consumers, bk])
    b_d = tlxc.TensorDescriptor.from_tensor(b, [bn // cluster, bk] if b_kmajor else [bk, bn // cluster])
    c_d = tlxc.TensorDescriptor.from_tensor(c, [bm // consumers, bn // epi_split])
    tiles = tlxc.cdiv(M, bm * cluster) * tlxc.cdiv(N, bn)  # one per cluster
    grid = (min(num_sms // cluster, tiles) * cluster,)
    extra = {"ctas_per_cga": (cluster, 1, 1)} if cluster > 1 else {}
    (run or matmul_ws)[grid](a_d, b_d, c_d, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=stages,
                             NUM_CONSUMERS=consumers, NUM_SMS=grid[0], GROUP_M=group_m, EPI_SPLIT=epi_split,
                             B_KMAJOR=b_kmajor, CLUSTER=cluster, num_warps=4, **extra)
    return c


def matmul(a: np.ndarray, b: np.ndarray, out_dtype=None, **kw) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype (or ``out_dtype``) on the interpreter (``b_kmajor=True``:
    ``b`` is B^T)."""
    n = b.shape[0] if kw.get("b_kmajor") else b.shape[1]
    c = np.zeros((a.shape[0], n), dtype=out_dtype or a.dtype)
    return launch(a, b, c, run=matmul_ws.interpret, **kw)


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("M, N, K, consumers, stages, sms, group_m, epi_split", [
    (128, 128, 128, 2, 2, 1, 8, 1), (256, 128, 192, 2, 3, 3, 8, 2), (128, 192, 64, 1, 2, 2, 8, 1),
    (384, 256, 128, 2, 2, 2, 2, 2)])
def test_matmul_ws(M: int, N: int, K: int, consumers: int, stages: int, sms: int, group_m: int,
                   epi_split: int) -> None:
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    block = (64 * consumers, 64, 64)
    c = matmul(a, b, block=block, stages=stages, consumers=consumers, num_sms=sms, group_m=group_m,
               epi_split=epi_split)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=3e-2)


@pytest.mark.parametrize("M, N, K, sms, b_kmajor", [(512, 128, 192, 4, False), (384, 256, 128, 2, False),
                                                      (256, 128, 128, 4, True)])
def test_matmul_ws_cluster(M: int, N: int, K: int, sms: int, b_kmajor: bool) -> None:
    """Clusters of two CTAs sharing B through multicast; ragged super tiles (384 rows are
    one and a half) and clusters that get no tile."""
    rng = np.random.default_rng(M + N + K + sms)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = matmul(a, np.ascontiguousarray(b.T) if b_kmajor else b, block=(128, 128, 64), stages=2, num_sms=sms,
               group_m=2, cluster=2, b_kmajor=b_kmajor)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=1e-2, atol=3e-2)


def test_matmul_ws_fp8_with_b_kmajor() -> None:
    """fp8 e4m3 operands (B given as B^T, K contiguous, as fp8 wgmma reads it), fp32
    accumulation, a bf16 result."""
    import ml_dtypes

    rng = np.random.default_rng(8)
    a = rng.standard_normal((128, 192)).astype(ml_dtypes.float8_e4m3fn)
    bt = rng.standard_normal((128, 192)).astype(ml_dtypes.float8_e4m3fn)
    c = matmul(a, bt, out_dtype=ml_dtypes.bfloat16, block=(128, 128, 64), stages=2, consumers=2, num_sms=1,
               epi_split=2, b_kmajor=True)
    want = a.astype(np.float32) @ bt.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=0.1)


def test_matmul_ws_fp8_ptx() -> None:
    ck = matmul_ws.compile("tensordesc<fp8e4nv[64,128]>,tensordesc<fp8e4nv[256,128]>,tensordesc<bf16[64,128]>,"
                           "i32,i32,i32", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "NUM_STAGES": 4,
                                           "NUM_CONSUMERS": 2, "NUM_SMS": 132, "EPI_SPLIT": 2, "B_KMAJOR": True},
                           arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in ptx
    if "cubin" in ck.asm.available():
        ck.asm["cubin"]
        assert ck.metadata["spill_stores"] == 0


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
