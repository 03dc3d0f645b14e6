"""Warp-specialized kernels for the interpreter tests (``test_tlx_warp_spec.py``):
producer/consumer rings as TLX's Hopper tutorials write them, written for these tests."""

from __future__ import annotations

import tlxc.language.extra.tlx as tlx
from tlxc.language.extra.tlx.warp_spec import get_bufidx_phase

import tlxc
import tlxc.language as tl


@tlxc.jit
def ring_copy(x_ptr, y_ptr, n_tiles, BLOCK: tl.constexpr, NUM_BUFS: tl.constexpr, SCALE: tl.constexpr,
              BUG: tl.constexpr):
    """y = SCALE * x through a NUM_BUFS-slot shared-memory ring: a 1-warp producer task
    loads tiles and stores them into the ring; the default task (4 warps) reads them,
    scales and stores. ``full[i]`` says slot i holds data, ``empty[i]`` that it may be
    refilled. BUG=1 makes the producer wait for the wrong phase of ``empty``."""
    bufs = tlx.local_alloc((BLOCK,), tl.float32, NUM_BUFS)
    full = tlx.alloc_barriers(NUM_BUFS, arrive_count=1)
    empty = tlx.alloc_barriers(NUM_BUFS, arrive_count=1)
    base = tl.program_id(0) * n_tiles * BLOCK
    with tlx.async_tasks():
        with tlx.async_task("default"):
            for t in range(n_tiles):
                buf, phase = get_bufidx_phase(t, NUM_BUFS)
                tlx.barrier_wait(full[buf], phase)
                v = tlx.local_load(bufs[buf])
                tlx.barrier_arrive(empty[buf])
                tl.store(y_ptr + base + t * BLOCK + tl.arange(0, BLOCK), v * SCALE)
        with tlx.async_task(num_warps=1, registers=24):
            for t in range(n_tiles):
                buf, phase = get_bufidx_phase(t, NUM_BUFS)
                if BUG:
                    tlx.barrier_wait(empty[buf], phase)
                else:
                    tlx.barrier_wait(empty[buf], phase ^ 1)
                v = tl.load(x_ptr + base + t * BLOCK + tl.arange(0, BLOCK))
                tlx.local_store(bufs[buf], v)
                tlx.barrier_arrive(full[buf])


@tlxc.jit
def ws_gemm(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
            NUM_STAGES: tl.constexpr, NUM_MMA_GROUPS: tl.constexpr):
    """C = A @ B per [BM, BN] tile, warp-specialized as TLX's Hopper GEMM: the default
    task is the TMA producer (A split into NUM_MMA_GROUPS row blocks, B shared), and
    NUM_MMA_GROUPS consumer replicas of 4 warps each run wgmma on their rows. ``full``
    completes on the TMA bytes of a stage, ``empty`` when every consumer released it."""
    BM_SPLIT: tl.constexpr = BM // NUM_MMA_GROUPS
    dtype = tlx.dtype_of(a_desc)
    a_bufs = tlx.local_alloc((BM_SPLIT, BK), dtype, NUM_STAGES * NUM_MMA_GROUPS)
    b_bufs = tlx.local_alloc((BK, BN), dtype, NUM_STAGES)
    full = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    empty = tlx.alloc_barriers(NUM_STAGES, arrive_count=NUM_MMA_GROUPS)
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    k_tiles = tl.cdiv(K, BK)
    with tlx.async_tasks():
        with tlx.async_task("default"):
            for k in range(0, k_tiles):
                buf, phase = get_bufidx_phase(k, NUM_STAGES)
                tlx.barrier_wait(empty[buf], phase ^ 1)
                tlx.barrier_expect_bytes(full[buf], (BM * BK + BK * BN) * tlx.size_of(dtype))
                for g in tl.static_range(NUM_MMA_GROUPS):
                    tlx.async_descriptor_load(a_desc, a_bufs[buf * NUM_MMA_GROUPS + g],
                                              [off_m + g * BM_SPLIT, k * BK], full[buf])
                tlx.async_descriptor_load(b_desc, b_bufs[buf], [k * BK, off_n], full[buf])
        with tlx.async_task(num_warps=4, registers=232, replicate=NUM_MMA_GROUPS):
            g = tlx.async_task_replica_id()
            acc = tl.zeros((BM_SPLIT, BN), dtype=tl.float32)
            for k in range(0, k_tiles):
                buf, phase = get_bufidx_phase(k, NUM_STAGES)
                tlx.barrier_wait(full[buf], phase)
                acc = tlx.async_dot(a_bufs[buf * NUM_MMA_GROUPS + g], b_bufs[buf], acc)
                acc = tlx.async_dot_wait(0, acc)
                tlx.barrier_arrive(empty[buf])
            c_desc.store([off_m + g * BM_SPLIT, off_n], acc.to(tlx.dtype_of(c_desc)))


@tlxc.jit
def pingpong(x_ptr, y_ptr, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    """Two consumer replicas take turns through named barriers 9 and 10 (each a round of
    both replicas' 256 threads): replica 0 adds 1 to y[0:BLOCK] on even turns, replica 1
    doubles it on odd ones, so the order of turns shows in the result."""
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    with tlx.async_tasks():
        with tlx.async_task("default"):
            pass
        with tlx.async_task(num_warps=4, replicate=2):
            r = tlx.async_task_replica_id()
            o = tl.arange(0, BLOCK)
            if r == 1:
                tlx.named_barrier_wait(9, 256)
            for i in range(ROUNDS):
                v = tl.load(y_ptr + o)
                if r == 0:
                    tl.store(y_ptr + o, v + 1.0)
                    tlx.named_barrier_arrive(9, 256)
                    tlx.named_barrier_wait(10, 256)
                else:
                    tl.store(y_ptr + o, v * 2.0)
                    tlx.named_barrier_arrive(10, 256)
                    if i + 1 < ROUNDS:
                        tlx.named_barrier_wait(9, 256)


@tlxc.jit
def warp_barrier_release(out_ptr, NUM: tl.constexpr):
    """Two 2-warp consumer replicas each release a warp barrier with every thread
    (count 2 * 32 * 2 = 128); the default task waits for it, then stores NUM."""
    bars = tlx.alloc_warp_barrier(1, num_warps=2, num_arrivals=2)
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tlx.barrier_wait(bars[0], 0)
            tl.store(out_ptr, NUM)
        with tlx.async_task(num_warps=2, replicate=2):
            tlx.barrier_arrive(bars[0])
