"""A warp-specialized FlashAttention forward pass on Hopper with TLX: a producer task
streams K and V through a ring of shared-memory stages with TMA, and consumer
warpgroups run both matrix products on wgmma with an online softmax in between.

Q, K, V and O are ``(Z * H * N_CTX) x HEAD_DIM`` fp16 matrices (batch and heads
flattened into rows), passed as TMA descriptors. A tile is ``BLOCK_M`` queries of one
head:

* the **default task** is the producer: it loads each consumer's rows of Q once (barrier
  ``q_full``), then for every key block waits until its K and V stages are free
  (``k_empty`` / ``v_empty``), announces their bytes and starts their TMA copies;
* ``NUM_CONSUMERS`` **consumer replicas** of one warpgroup each own ``BLOCK_M /
  NUM_CONSUMERS`` query rows. Per key block ``j``: ``S_j = Q K_j^T`` (``async_dot`` of two
  shared-memory operands, K read transposed through ``local_trans``), the online softmax
  in registers (running max ``m_i``, sum ``l_i``, scale ``alpha``, in base 2), and
  ``acc += P_j V_j`` with P **from registers** as wgmma's A operand. The loop is
  *software-pipelined*: iteration ``j`` issues ``S_j`` and ``P_{j-1} V_{j-1}`` back to back,
  waits only for ``S_j`` (``async_dot_wait(1)``), and runs the softmax of block ``j``
  while the second wgmma is still in flight; K and V stages are released as soon as
  their wgmma has retired. ``registers=232`` gives the consumers most of the register
  file (``setmaxnreg``);
* ``PINGPONG``: the two consumers take turns to issue their matrix products (named
  barriers 9 and 10, 256 threads each), so that one warpgroup's softmax overlaps the
  other's wgmma instead of both competing for the tensor cores at once;
* ``CAUSAL``: the consumers stop at the diagonal; only the blocks that need it (the
  diagonal, the ragged end of ``N_CTX``) are masked with ``tl.where``, the others run
  the mask-free softmax (the producer walks the same number of blocks).

Stage ``s`` of the K ring (and of the V ring) is used for blocks ``s, s + NUM_STAGES,
...``; ``get_bufidx_phase(kv, NUM_STAGES)`` gives the stage and phase of the ``kv``-th key
block a program has loaded.

Each program walks tiles (a query block of one head) with the grid's stride: one
program per tile is the plain launch; ``launch(num_sms=132)`` makes the kernel
**persistent**, each program taking every 132nd tile. Both tasks count the key blocks
across tiles, so the ring runs on, and each consumer releases its Q buffer
(``q_empty``) once the last ``S`` of a tile is done, so the producer loads the next
tile's Q and keys while the consumers finish the current tile's ``P V`` and epilogue.
Causal tiles are taken longest first. On the H200 the persistent launch is the faster one
at 4k tokens and the plain one at 8k (``bench/tlx_attention.py``).

Run ``python examples/hopper_fa_ws.py`` for a small attention on the CPU interpreter.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest
from tlxc.tlx.warp_spec import get_bufidx_phase


@tlxc.jit
def _softmax_step(s, m_i, l_i, qk_scale, rows, cols, N_CTX, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """One key block of the online softmax: ``p = exp2(s * scale - m)`` with the running
    row max ``m_i`` and sum ``l_i`` updated, and ``alpha`` to rescale the accumulator by.
    ``MASKED`` blocks (the causal diagonal, the ragged end) drop the keys past the query
    or past ``N_CTX``; the others need no mask."""
    if MASKED:
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = tl.where(keep, s, -1.0e6)
    m_ij = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    p = tl.math.exp2(s * qk_scale - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    return p, m_ij, l_i, alpha


@tlxc.jit
def _tile(tile, n_m, N_CTX, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):
    """Tile ``tile``'s first query row and its head's first row in the flattened matrices.
    Causal tiles are walked from the last query block down, so that the longest rows
    (most key blocks) start first and the short ones fill the end."""
    m = tile % n_m
    if CAUSAL:
        m = n_m - 1 - m
    return m * BLOCK_M, (tile // n_m) * N_CTX


@tlxc.jit
def attn_fwd_ws(q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX, N_HEADS, HEAD_DIM: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, NUM_STAGES: tl.constexpr, NUM_CONSUMERS: tl.constexpr,
                CAUSAL: tl.constexpr, PINGPONG: tl.constexpr = False):
    ROWS: tl.constexpr = BLOCK_M // NUM_CONSUMERS
    dtype = tlx.dtype_of(q_desc)
    q_bufs = tlx.local_alloc((ROWS, HEAD_DIM), dtype, NUM_CONSUMERS)
    k_bufs = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, NUM_STAGES)
    v_bufs = tlx.local_alloc((BLOCK_N, HEAD_DIM), dtype, NUM_STAGES)
    q_full = tlx.alloc_barriers(NUM_CONSUMERS, arrive_count=1)
    q_empty = tlx.alloc_barriers(NUM_CONSUMERS, arrive_count=1)
    k_full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    v_full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    k_empty = tlx.alloc_barriers(NUM_STAGES, arrive_count=NUM_CONSUMERS)
    v_empty = tlx.alloc_barriers(NUM_STAGES, arrive_count=NUM_CONSUMERS)
    block_bytes: tl.constexpr = BLOCK_N * HEAD_DIM * tlx.size_of(dtype)
    n_m = N_CTX // BLOCK_M
    n_tiles = n_m * N_HEADS  # tile t: query block t % n_m of head t // n_m
    first = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    step = tl.num_programs(0) * tl.num_programs(1)

    with tlx.async_tasks():
        with tlx.async_task("default"):  # the producer
            kv = 0  # key blocks loaded so far: the ring runs on from tile to tile
            t = 0
            for tile in range(first, n_tiles, step):
                start_m, head = _tile(tile, n_m, N_CTX, BLOCK_M, CAUSAL)
                hi = tl.minimum(start_m + BLOCK_M, N_CTX) if CAUSAL else N_CTX
                for g in tl.static_range(NUM_CONSUMERS):
                    tlx.barrier_wait(q_empty[g], (t & 1) ^ 1)  # consumer g is done with the last tile's Q
                    tlx.barrier_expect_bytes(q_full[g], ROWS * HEAD_DIM * tlx.size_of(dtype))
                    tlx.async_descriptor_load(q_desc, q_bufs[g], [head + start_m + g * ROWS, 0], q_full[g])
                for j in range(0, tl.cdiv(hi, BLOCK_N)):
                    buf, phase = get_bufidx_phase(kv, NUM_STAGES)
                    tlx.barrier_wait(k_empty[buf], phase ^ 1)
                    tlx.barrier_expect_bytes(k_full[buf], block_bytes)
                    tlx.async_descriptor_load(k_desc, k_bufs[buf], [head + j * BLOCK_N, 0], k_full[buf])
                    tlx.barrier_wait(v_empty[buf], phase ^ 1)
                    tlx.barrier_expect_bytes(v_full[buf], block_bytes)
                    tlx.async_descriptor_load(v_desc, v_bufs[buf], [head + j * BLOCK_N, 0], v_full[buf])
                    kv += 1
                t += 1
        with tlx.async_task(num_warps=4, registers=232, replicate=NUM_CONSUMERS):  # the consumers
            g = tlx.async_task_replica_id()
            qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x * log2(e))
            if PINGPONG and g == 1:
                tlx.named_barrier_arrive(9, 256)  # consumer 0 issues first
            kv = 0
            t = 0
            for tile in range(first, n_tiles, step):
                start_m, head = _tile(tile, n_m, N_CTX, BLOCK_M, CAUSAL)
                hi = tl.minimum(start_m + BLOCK_M, N_CTX) if CAUSAL else N_CTX
                n_blocks = tl.cdiv(hi, BLOCK_N)
                # the blocks before this one need no mask: every key is in range and (causal) before every query
                n_clear = start_m // BLOCK_N if CAUSAL else N_CTX // BLOCK_N
                rows = start_m + g * ROWS + tl.arange(0, ROWS)
                m_i = tl.full((ROWS,), -1.0e6, tl.float32)
                l_i = tl.zeros((ROWS,), tl.float32)
                acc = tl.zeros((ROWS, HEAD_DIM), tl.float32)
                tlx.barrier_wait(q_full[g], t & 1)
                # block 0 on its own: S = Q K^T, then its softmax
                buf, phase = get_bufidx_phase(kv, NUM_STAGES)
                tlx.barrier_wait(k_full[buf], phase)
                if PINGPONG:
                    tlx.named_barrier_wait(9 + g, 256)
                s = tlx.async_dot(q_bufs[g], tlx.local_trans(k_bufs[buf]))
                if PINGPONG:
                    tlx.named_barrier_arrive(10 - g, 256)
                s = tlx.async_dot_wait(0, s)
                tlx.barrier_arrive(k_empty[buf])
                cols = tl.arange(0, BLOCK_N)
                p, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale, rows, cols, N_CTX, True, CAUSAL)
                # Block j >= 1, pipelined: S_j = Q K_j^T and acc += P_{j-1} V_{j-1} are issued back
                # to back; the softmax of S_j runs while the wgmma of P_{j-1} V_{j-1} is in flight.
                for j in range(1, n_blocks):
                    buf, phase = get_bufidx_phase(kv + j, NUM_STAGES)
                    prev, prev_phase = get_bufidx_phase(kv + j - 1, NUM_STAGES)
                    tlx.barrier_wait(k_full[buf], phase)
                    if PINGPONG:  # the consumers take turns to issue their matrix products
                        tlx.named_barrier_wait(9 + g, 256)
                    s = tlx.async_dot(q_bufs[g], tlx.local_trans(k_bufs[buf]))
                    tlx.barrier_wait(v_full[prev], prev_phase)
                    acc = tlx.async_dot(p.to(dtype), v_bufs[prev], acc)
                    if PINGPONG:
                        tlx.named_barrier_arrive(10 - g, 256)
                    s = tlx.async_dot_wait(1, s)  # S_j is done; P_{j-1} V_{j-1} may still run
                    tlx.barrier_arrive(k_empty[buf])
                    cols = j * BLOCK_N + tl.arange(0, BLOCK_N)
                    if j < n_clear:
                        p, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale, rows, cols, N_CTX, False, CAUSAL)
                    else:
                        p, m_i, l_i, alpha = _softmax_step(s, m_i, l_i, qk_scale, rows, cols, N_CTX, True, CAUSAL)
                    acc = tlx.async_dot_wait(0, acc)
                    tlx.barrier_arrive(v_empty[prev])
                    acc = acc * alpha[:, None]
                tlx.barrier_arrive(q_empty[g])  # every S of this tile is done: the producer may load the next Q
                last, last_phase = get_bufidx_phase(kv + n_blocks - 1, NUM_STAGES)
                tlx.barrier_wait(v_full[last], last_phase)
                acc = tlx.async_dot(p.to(dtype), v_bufs[last], acc)
                acc = tlx.async_dot_wait(0, acc)
                tlx.barrier_arrive(v_empty[last])
                acc = acc / l_i[:, None]
                o_desc.store([head + start_m + g * ROWS, 0], acc.to(tlx.dtype_of(o_desc)))
                kv += n_blocks
                t += 1


def launch(q, k, v, o, sm_scale, causal, block=(128, 128), stages=2, consumers=2, pingpong=False, num_sms=None,
           run=None):
    """``o`` = attention of ``q``, ``k``, ``v`` (``Z x H x N_CTX x HEAD_DIM``, contiguous);
    ``run``: ``attn_fwd_ws`` or ``attn_fwd_ws.interpret``. ``num_sms``: a persistent launch
    of that many programs, each walking the query tiles with that stride (the ring and
    the next tile's Q loads run on under the current tile's epilogue); None: one program
    per tile."""
    Z, H, N_CTX, D = q.shape
    bm, bn = block
    # the heads are stacked in one matrix: a query block past N_CTX would be the next head's rows
    assert N_CTX % bm == 0, f"N_CTX ({N_CTX}) must be a multiple of BLOCK_M ({bm}); BLOCK_N may leave a ragged end"
    flat = [t.reshape(Z * H * N_CTX, D) for t in (q, k, v, o)]
    qd = tlxc.TensorDescriptor.from_tensor(flat[0], [bm // consumers, D])
    kd = tlxc.TensorDescriptor.from_tensor(flat[1], [bn, D])
    vd = tlxc.TensorDescriptor.from_tensor(flat[2], [bn, D])
    od = tlxc.TensorDescriptor.from_tensor(flat[3], [bm // consumers, D])
    tiles = (N_CTX // bm, Z * H)
    grid = tiles if num_sms is None else (min(num_sms, tiles[0] * tiles[1]), 1)
    (run or attn_fwd_ws)[grid](qd, kd, vd, od, sm_scale, N_CTX, Z * H, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                               NUM_STAGES=stages, NUM_CONSUMERS=consumers, CAUSAL=causal, PINGPONG=pingpong,
                               num_warps=4)
    return o


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, sm_scale: float, causal: bool) -> np.ndarray:
    s = np.einsum("zhid,zhjd->zhij", q.astype(np.float32), k.astype(np.float32)) * sm_scale
    if causal:
        n = q.shape[2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("zhij,zhjd->zhid", p, v.astype(np.float32))


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_ctx, consumers, stages, block_n, pingpong", [
    (128, 2, 2, 64, False), (192, 1, 3, 64, False), (256, 2, 2, 64, True), (256, 2, 2, 128, True),
    (192, 1, 2, 128, False)])
def test_attention_ws(causal: bool, n_ctx: int, consumers: int, stages: int, block_n: int, pingpong: bool) -> None:
    rng = np.random.default_rng(n_ctx + consumers)
    q, k, v = (rng.standard_normal((1, 2, n_ctx, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    launch(q, k, v, o, 0.125, causal, block=(64 * consumers, block_n), stages=stages, consumers=consumers,
           pingpong=pingpong, run=attn_fwd_ws.interpret)
    np.testing.assert_allclose(o.astype(np.float32), reference(q, k, v, 0.125, causal), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sms, pingpong", [(1, False), (3, True), (5, False)])
def test_attention_ws_persistent(causal: bool, sms: int, pingpong: bool) -> None:
    """Fewer programs than tiles: each walks several (query block, head) tiles, the K/V
    ring and the Q buffers running on from one tile to the next."""
    rng = np.random.default_rng(sms)
    q, k, v = (rng.standard_normal((2, 2, 256, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    launch(q, k, v, o, 0.125, causal, block=(128, 64), stages=2, consumers=2, pingpong=pingpong, num_sms=sms,
           run=attn_fwd_ws.interpret)
    np.testing.assert_allclose(o.astype(np.float32), reference(q, k, v, 0.125, causal), atol=2e-2, rtol=2e-2)


def test_attention_ws_ptx() -> None:
    ck = attn_fwd_ws.compile("tensordesc<fp16[64,128]>,tensordesc<fp16[128,128]>,tensordesc<fp16[128,128]>,"
                             "tensordesc<fp16[64,128]>,fp32,i32,i32",
                             {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 128, "NUM_STAGES": 2,
                              "NUM_CONSUMERS": 2, "CAUSAL": False}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert ck.metadata["num_warps"] == 12
    # P @ V takes P from registers: a wgmma whose A operand is four registers, not a descriptor
    assert any("wgmma.mma_async" in line and ".f16.f16" in line and "{%r" in line.split("}, ")[1]
               for line in ptx.splitlines() if "wgmma.mma_async" in line)
    # each consumer raises its registers at the top of its own code, so ptxas allocates that
    # code with 232 registers (set before the branch to the partitions, it spilled 960 bytes)
    if "cubin" in ck.asm.available():
        ck.asm["cubin"]
        assert ck.metadata["spill_stores"] == 0


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 256, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    launch(q, k, v, o, 0.125, True, run=attn_fwd_ws.interpret)
    print("max |error| vs numpy:", float(np.abs(o.astype(np.float32) - reference(q, k, v, 0.125, True)).max()))
