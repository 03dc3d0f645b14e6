"""Kernels of tests/tlx/test_tlx_cluster.py and tests/gpu/test_cluster_gpu.py: CTAs of a
cluster that read their rank, exchange rows through each other's shared memory, arrive on
each other's barriers and share one TMA load."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def ranks(out_ptr):
    """Each program writes its rank in its cluster and the cluster's size."""
    pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    tl.store(out_ptr + pid * 2, tlx.cluster_cta_rank())
    tl.store(out_ptr + pid * 2 + 1, tlx.cluster_size_1d())


@tlxc.jit
def swap_async(x_ptr, y_ptr, N: tl.constexpr):
    """Pairs of CTAs swap their rows, doubled: each stores into its peer's buffer with
    st.async, which completes on the peer's barrier (arrive remote, wait local)."""
    rank = tlx.cluster_cta_rank()
    buf = tlx.local_alloc((N,), tl.float32, 1)
    bars = tlx.alloc_barriers(1)
    offs = tl.arange(0, N)
    row = tl.program_id(0) * N
    v = tl.load(x_ptr + row + offs)
    tlx.barrier_expect_bytes(bars[0], N * 4)
    tlx.cluster_barrier()  # both barriers expect their bytes before a peer's store lands
    tlx.async_remote_shmem_store(buf[0], v * 2, rank ^ 1, bars[0])
    tlx.barrier_wait(bars[0], 0)
    tl.store(y_ptr + row + offs, tlx.local_load(buf[0]))


@tlxc.jit
def swap_sync(x_ptr, y_ptr, N: tl.constexpr):
    """The same exchange with plain remote stores, ordered by cluster barriers."""
    rank = tlx.cluster_cta_rank()
    buf = tlx.local_alloc((N,), tl.float32, 1)
    offs = tl.arange(0, N)
    row = tl.program_id(0) * N
    tlx.cluster_barrier()  # the peer is running before its shared memory is written
    tlx.remote_shmem_store(buf[0], tl.load(x_ptr + row + offs) + 1, rank ^ 1)
    tlx.cluster_barrier()
    tl.store(y_ptr + row + offs, tlx.local_load(buf[0]))


@tlxc.jit
def remote_arrive(x_ptr, y_ptr, N: tl.constexpr):
    """CTA 1 writes its row into CTA 0's buffer, then arrives on CTA 0's barrier; CTA 0
    waits on its own barrier and stores the row (arrive remote, wait local)."""
    rank = tlx.cluster_cta_rank()
    buf = tlx.local_alloc((N,), tl.float32, 1)
    bars = tlx.alloc_barriers(1, arrive_count=1)
    offs = tl.arange(0, N)
    if rank == 1:
        tlx.remote_shmem_store(buf[0], tl.load(x_ptr + N + offs), 0)
        tlx.barrier_arrive(tlx.remote_view(bars[0], 0))
    else:
        tlx.barrier_wait(bars[0], 0)
        tl.store(y_ptr + offs, tlx.local_load(buf[0]))


@tlxc.jit
def release_to_peer(x_ptr, y_ptr, N: tl.constexpr):
    """CTA 1 only tells CTA 0 that it is done (no data crosses): the arrive releases at CTA
    scope, as a ring's consumer handing a stage back."""
    rank = tlx.cluster_cta_rank()
    bars = tlx.alloc_barriers(1, arrive_count=1)
    offs = tl.arange(0, N)
    if rank == 1:
        tlx.barrier_arrive(bars[0], remote_cta_rank=0)
    else:
        tlx.barrier_wait(bars[0], 0)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@tlxc.jit
def multicast_tile(desc, y_ptr, BM: tl.constexpr, BN: tl.constexpr, OTHER: tl.constexpr = 1):
    """CTA 0 loads one tile with TMA multicast into both CTAs' buffers; each waits on its
    own barrier and stores the tile into its half of y."""
    rank = tlx.cluster_cta_rank()
    buf = tlx.local_alloc((BM, BN), tl.float16, 1)
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], BM * BN * 2)
    tlx.cluster_barrier()
    if rank == 0:
        tlx.async_descriptor_load(desc, buf[0], [0, 0], bars[0], multicast_targets=[0, OTHER])
    tlx.barrier_wait(bars[0], 0)
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(y_ptr + rank * BM * BN + rows * BN + cols, tlx.local_load(buf[0]))


@tlxc.jit
def wait_on_remote_view():
    bars = tlx.alloc_barriers(1)
    tlx.barrier_wait(tlx.remote_view(bars[0], 1), 0)  # ERR tlx.barrier_wait


@tlxc.jit
def unclustered_arrive(x_ptr):
    bars = tlx.alloc_barriers(1)
    tlx.barrier_arrive(bars[0], 1, remote_cta_rank=0)  # ERR tlx.barrier_arrive
    tlx.barrier_wait(bars[0], 0)
