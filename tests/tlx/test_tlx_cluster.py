"""Clusters: the interpreter's ranks, the PTX of every cluster op (ptxas accepts it), the
compiler's own cluster syncs, and the errors. The CTAs of a cluster run together in the
interpreter (exchanges through a peer's shared memory, remote arrives, TMA multicast,
deadlocks across CTAs); the same kernels run on the H200 in tests/gpu/test_cluster_gpu.py."""

from __future__ import annotations

import inspect
import re
from typing import Any

import numpy as np
import pytest
import tlx_cluster_kernels as K  # tests/tlx/tlx_cluster_kernels.py
import tlx_ws_kernels  # tests/tlx/tlx_ws_kernels.py

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.compiler import compile_kernel
from tlxc.kernels.options import compile_options


def _compile(kernel: Any, signature: str, constants: dict[str, Any], cluster: Any = (2, 1, 1)) -> Any:
    specs, consts = kernel.resolve_aot(signature, constants, None)
    options = compile_options({"ctas_per_cga": cluster} if cluster else {}, "sm_90a", None)
    return compile_kernel(kernel, specs, consts, options)


def _lines(ptx: str, pattern: str) -> list[str]:
    stripped = (line.strip().rstrip(";") for line in ptx.splitlines())
    return [line for line in stripped if re.search(pattern, line)]


def test_ranks_follow_the_cluster_shape_in_the_interpreter() -> None:
    out = np.zeros((8, 2), np.int32)
    K.ranks.interpret[(4, 2)](out, ctas_per_cga=(2, 1, 1))
    assert out.tolist() == [[0, 2], [1, 2]] * 4
    K.ranks.interpret[(4, 2)](out, ctas_per_cga=(2, 2, 1))
    # program (x, y): rank x % 2 + 2 (y % 2), in the order the kernel numbers programs (x fastest)
    assert out[:, 0].tolist() == [0, 1, 0, 1, 2, 3, 2, 3] and set(out[:, 1]) == {4}
    K.ranks.interpret[(4, 2)](out)
    assert out.tolist() == [[0, 1]] * 8


def _swapped(x: np.ndarray) -> np.ndarray:
    """Rows of x with the rows of each pair of programs exchanged."""
    programs, n = x.shape
    return x.reshape(programs // 2, 2, n)[:, ::-1].reshape(programs, n)


@pytest.mark.parametrize("kernel,expect", [("swap_async", lambda x: 2 * x), ("swap_sync", lambda x: x + 1)])
def test_pairs_swap_rows_through_each_others_shared_memory(kernel: str, expect: Any) -> None:
    programs, n = 6, 64
    x = np.random.default_rng(0).standard_normal((programs, n)).astype(np.float32)
    y = np.zeros_like(x)
    getattr(K, kernel).interpret[(programs,)](x, y, N=n, ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y, expect(_swapped(x)))


def test_arrive_remote_wait_local() -> None:
    x = np.arange(2 * 32, dtype=np.float32).reshape(2, 32)
    y = np.zeros((1, 32), np.float32)
    K.remote_arrive.interpret[(2,)](x, y, N=32, ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y[0], x[1])


def test_one_tma_load_lands_in_both_ctas() -> None:
    a = np.random.default_rng(1).standard_normal((32, 16)).astype(np.float16)
    y = np.zeros((2, 32, 16), np.float16)
    K.multicast_tile.interpret[(2,)](tlxc.TensorDescriptor.from_tensor(a, [32, 16]), y, BM=32, BN=16,
                                     ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y[0], a)
    np.testing.assert_array_equal(y[1], a)


@tlxc.jit
def _multicast_to_peer_only(desc, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """CTA 0 loads a tile into CTA 1's buffer only; CTA 1 stores it."""
    rank = tlx.cluster_cta_rank()
    buf = tlx.local_alloc((BM, BN), tl.float16, 1)
    bars = tlx.alloc_barriers(1)
    if rank == 1:
        tlx.barrier_expect_bytes(bars[0], BM * BN * 2)
    tlx.cluster_barrier()
    if rank == 0:
        tlx.async_descriptor_load(desc, buf[0], [0, BN], bars[0], multicast_targets=[1])
    else:
        tlx.barrier_wait(bars[0], 0)
        rows = tl.arange(0, BM)[:, None]
        cols = tl.arange(0, BN)[None, :]
        tl.store(y_ptr + rows * BN + cols, tlx.local_load(buf[0]))


def test_a_multicast_skips_the_issuing_cta_when_it_is_no_target() -> None:
    a = np.arange(16 * 32, dtype=np.float16).reshape(16, 32)
    y = np.zeros((16, 16), np.float16)
    _multicast_to_peer_only.interpret[(2,)](tlxc.TensorDescriptor.from_tensor(a, [16, 16]), y, BM=16, BN=16,
                                            ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y, a[:, 16:])


@tlxc.jit
def _store_before_the_peer_allocates(x_ptr, y_ptr, N: tl.constexpr):
    """CTA 1 writes CTA 0's buffer while CTA 0 still waits before its allocation:
    shared memory is laid out when a CTA starts, so the bytes are there when CTA 0 gets
    to the allocation."""
    rank = tlx.cluster_cta_rank()
    bars = tlx.alloc_barriers(1, arrive_count=1)
    if rank == 0:
        tlx.barrier_wait(bars[0], 0)
    buf = tlx.local_alloc((N,), tl.float32, 1)
    offs = tl.arange(0, N)
    if rank == 1:
        tlx.remote_shmem_store(buf[0], tl.load(x_ptr + offs) - 1, 0)
        tlx.barrier_arrive(tlx.remote_view(bars[0], 0))
    else:
        tl.store(y_ptr + offs, tlx.local_load(buf[0]))


def test_a_peer_may_write_a_buffer_before_its_owner_reaches_the_allocation() -> None:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros_like(x)
    _store_before_the_peer_allocates.interpret[(2,)](x, y, N=16, ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y, x - 1)


@tlxc.jit
def _ws_exchange(x_ptr, y_ptr, N: tl.constexpr):
    """Warp-specialized CTAs of a pair: each CTA's producer stores its row, tripled, into
    the peer's buffer; each CTA's default task waits for its own barrier and stores."""
    buf = tlx.local_alloc((N,), tl.float32, 1)
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], N * 4)
    tlx.cluster_barrier()
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tlx.barrier_wait(bars[0], 0)
            offs = tl.arange(0, N)
            tl.store(y_ptr + tl.program_id(0) * N + offs, tlx.local_load(buf[0]))
        with tlx.async_task(num_warps=1, registers=24):
            o = tl.arange(0, N)
            v = tl.load(x_ptr + tl.program_id(0) * N + o)
            tlx.async_remote_shmem_store(buf[0], v * 3, tlx.cluster_cta_rank() ^ 1, bars[0])


def test_partitions_of_the_ctas_of_a_cluster_take_turns() -> None:
    x = np.random.default_rng(2).standard_normal((4, 32)).astype(np.float32)
    y = np.zeros_like(x)
    _ws_exchange.interpret[(4,)](x, y, N=32, ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y, 3 * _swapped(x))


@tlxc.jit
def _bulk_copy_to_peer(x_ptr, y_ptr, N: tl.constexpr):
    """Each CTA writes its row into a buffer of its own and copies the buffer's bytes into
    the peer's [2, N // 2] buffer with one bulk copy, which completes on the peer's
    barrier."""
    rank = tlx.cluster_cta_rank()
    src = tlx.local_alloc((N,), tl.float32, 1)
    dst = tlx.local_alloc((2, N // 2), tl.float32, 1)
    bars = tlx.alloc_barriers(1)
    tlx.local_store(src[0], tl.load(x_ptr + tl.program_id(0) * N + tl.arange(0, N)) * 5)
    tlx.fence_async_shared()
    tlx.barrier_expect_bytes(bars[0], N * 4)
    tlx.cluster_barrier()
    tlx.async_remote_shmem_copy(dst[0], src[0], rank ^ 1, bars[0])
    tlx.barrier_wait(bars[0], 0)
    rows = tl.arange(0, 2)[:, None]
    cols = tl.arange(0, N // 2)[None, :]
    tl.store(y_ptr + tl.program_id(0) * N + rows * (N // 2) + cols, tlx.local_load(dst[0]))


def test_a_bulk_copy_into_the_peers_buffer_completes_on_its_barrier() -> None:
    x = np.random.default_rng(3).standard_normal((4, 32)).astype(np.float32)
    y = np.zeros_like(x)
    _bulk_copy_to_peer.interpret[(4,)](x, y, N=32, ctas_per_cga=(2, 1, 1))
    np.testing.assert_array_equal(y, 5 * _swapped(x))


def _line(kernel: Any, text: str) -> int:
    source, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, s in enumerate(source) if text in s)


@tlxc.jit
def _never_arrives(y_ptr, ARRIVE: tl.constexpr):
    rank = tlx.cluster_cta_rank()
    bars = tlx.alloc_barriers(1, arrive_count=1)
    if rank == 0:
        tlx.barrier_wait(bars[0], 0)  # waits for CTA 1
    elif ARRIVE:
        tlx.barrier_arrive(tlx.remote_view(bars[0], 0))
    tl.store(y_ptr + rank, rank + 1)


@pytest.mark.interpreter_only  # on a GPU the kernel would hang
def test_a_deadlock_across_ctas_names_the_waiting_cta_and_the_peer() -> None:
    y = np.zeros(2, np.int32)
    _never_arrives.interpret[(2,)](y, ARRIVE=True, ctas_per_cga=(2, 1, 1))
    assert y.tolist() == [1, 2]
    with pytest.raises(tlxc.InterpreterError) as info:
        _never_arrives.interpret[(4,)](y, ARRIVE=False, ctas_per_cga=(2, 1, 1))
    err = info.value
    wait, alloc = _line(_never_arrives, "tlx.barrier_wait"), _line(_never_arrives, "tlx.alloc_barriers")
    assert err.code == "TLXC-INTERP-004" and err.loc is not None and err.loc.line == wait
    assert err.message.splitlines() == [
        "deadlock: every task of the cluster of programs (0, 0, 0) to (1, 0, 0) is waiting and none can go on "
        "(1 waiting):",
        f"  CTA 0 (program (0, 0, 0)) (warps 0-3) waits at line {wait} for phase 0 of mbarrier 0 of the array "
        f"allocated at line {alloc}: its current phase has parity 0 and still expects 1 arrival(s) of 1 and 0 "
        "transaction byte(s)",
        "  CTA 1 (program (1, 0, 0)) (warps 0-3) has finished",
    ]


@tlxc.jit
def _wait_then_arrive():
    """Each CTA waits for its peer's arrive before it makes its own: both wait."""
    rank = tlx.cluster_cta_rank()
    bars = tlx.alloc_barriers(1, arrive_count=1)
    tlx.barrier_wait(bars[0], 0)
    tlx.barrier_arrive(tlx.remote_view(bars[0], rank ^ 1))


@pytest.mark.interpreter_only  # on a GPU the kernel would hang
def test_ctas_waiting_for_each_other_are_both_named() -> None:
    with pytest.raises(tlxc.InterpreterError) as info:
        _wait_then_arrive.interpret[(2,)](ctas_per_cga=(2, 1, 1))
    lines = info.value.message.splitlines()
    assert "(2 waiting)" in lines[0] and len(lines) == 3
    wait = _line(_wait_then_arrive, "tlx.barrier_wait")
    assert lines[1].startswith(f"  CTA 0 (program (0, 0, 0)) (warps 0-3) waits at line {wait} for phase 0")
    assert lines[2].startswith(f"  CTA 1 (program (1, 0, 0)) (warps 0-3) waits at line {wait} for phase 0")


@tlxc.jit
def _half_cluster_barrier(y_ptr):
    rank = tlx.cluster_cta_rank()
    if rank == 0:
        tlx.cluster_barrier()
    tl.store(y_ptr + rank, rank)


@pytest.mark.interpreter_only  # on a GPU the kernel would hang
def test_a_cluster_barrier_that_a_cta_never_reaches_is_a_deadlock() -> None:
    with pytest.raises(tlxc.InterpreterError) as info:
        _half_cluster_barrier.interpret[(2,)](np.zeros(2, np.int32), ctas_per_cga=(2, 1, 1))
    line = _line(_half_cluster_barrier, "tlx.cluster_barrier")
    assert info.value.code == "TLXC-INTERP-004" and info.value.loc is not None and info.value.loc.line == line
    assert info.value.message.splitlines()[1:] == [
        f"  CTA 0 (program (0, 0, 0)) (warps 0-3) waits at line {line} for the cluster_barrier at line {line}, "
        "which every thread of every CTA must reach (CTA 0 128 of 128 threads, CTA 1 0 of 128 threads have "
        "reached it)",
        "  CTA 1 (program (1, 0, 0)) (warps 0-3) has finished",
    ]


@pytest.mark.interpreter_only  # checks the interpreter's own report
def test_a_deadlock_inside_a_partition_of_a_cluster_names_its_cta() -> None:
    x = np.zeros(2 * 2 * 32, np.float32)
    with pytest.raises(tlxc.InterpreterError) as info:
        tlx_ws_kernels.ring_copy.interpret[(2,)](x, np.zeros_like(x), 2, BLOCK=32, NUM_BUFS=2, SCALE=1.0, BUG=1,
                                                 ctas_per_cga=(2, 1, 1))
    lines = info.value.message.splitlines()
    assert "(4 waiting)" in lines[0]
    names = [line.split(" waits at ")[0].strip() for line in lines[1:]]
    assert names == [f"CTA {r} (program ({r}, 0, 0)): {task}" for r in (0, 1)
                     for task in ("the default task (warps 0-3)", "task 1, replica 0 (warp 4)")]


@tlxc.jit
def _barriers_in_one_cta(y_ptr):
    if tlx.cluster_cta_rank() == 0:
        bars = tlx.alloc_barriers(1)
        tlx.barrier_arrive(bars[0])
    tl.store(y_ptr, 1)


@pytest.mark.interpreter_only  # on a GPU the kernel would hang
def test_alloc_barriers_syncs_the_cluster() -> None:
    # the compiler follows the mbarrier inits with a cluster sync (peers may arrive on them)
    with pytest.raises(tlxc.InterpreterError) as info:
        _barriers_in_one_cta.interpret[(2,)](np.zeros(1, np.int32), ctas_per_cga=(2, 1, 1))
    line = _line(_barriers_in_one_cta, "tlx.alloc_barriers")
    assert info.value.code == "TLXC-INTERP-004" and info.value.loc is not None and info.value.loc.line == line
    assert (f"waits at line {line} for the cluster barrier after alloc_barriers at line {line} (the compiler's"
            in info.value.message)
    out = np.zeros(1, np.int32)
    _barriers_in_one_cta.interpret[(1,)](out)  # without clusters: nothing to wait for
    assert out[0] == 1


@tlxc.jit
def _outside(x_ptr, RANK: tl.constexpr):
    buf = tlx.local_alloc((16,), tl.float32, 1)
    tlx.remote_shmem_store(buf[0], tl.load(x_ptr + tl.arange(0, 16)), RANK)


@pytest.mark.interpreter_only  # checks the interpreter's own report
def test_a_rank_outside_the_cluster_is_a_fault() -> None:
    with pytest.raises(tlxc.InterpreterError) as info:
        _outside.interpret[(2,)](np.zeros(16, np.float32), RANK=2, ctas_per_cga=(2, 1, 1))
    assert info.value.code == "TLXC-INTERP-001"
    assert "remote_shmem_store names CTA rank 2, outside the cluster of 2 CTAs" in str(info.value)


def test_async_remote_store_ptx() -> None:
    ck = _compile(K.swap_async, "*fp32:16,*fp32:16", {"N": 256})
    ptx = ck.asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx
    assert _lines(ptx, "cluster_ctarank") == ["mov.u32 %r0, %cluster_ctarank"]
    # after the mbarrier init: the fence and a cluster sync (peers may arrive on it), not bar.sync 0
    init = ptx.index("mbarrier.init")
    assert ptx.index("fence.mbarrier_init.release.cluster", init) < ptx.index("barrier.cluster.arrive.relaxed.aligned",
                                                                                 init)
    assert len(_lines(ptx, r"mapa\.shared::cluster\.u32")) == 2  # the buffer and the barrier of the peer
    stores = _lines(ptx, r"st\.async\.shared::cluster\.mbarrier::complete_tx::bytes")
    assert stores and all(".f32 [" in s for s in stores)
    # the user's cluster barrier, and the compiler's before exit (a peer may still write here)
    assert len(_lines(ptx, r"^barrier\.cluster\.wait\.aligned")) == 3
    assert _lines(ptx, r"barrier\.cluster")[-2:] == ["barrier.cluster.arrive.aligned", "barrier.cluster.wait.aligned"]
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_remote_store_and_arrive_ptx() -> None:
    ptx = _compile(K.swap_sync, "*fp32:16,*fp32:16", {"N": 128}).asm["ptx"]
    assert _lines(ptx, r"st\.shared::cluster") and not _lines(ptx, r"st\.async")
    # data stored into the peer before the arrive: released to the cluster
    ptx = _compile(K.remote_arrive, "*fp32:16,*fp32:16", {"N": 128}).asm["ptx"]
    assert _lines(ptx, r"mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64 _, \[%r\d+\]")
    # nothing stored into a peer: PTX's default release at CTA scope (ptxas makes a cluster
    # release a MEMBAR.ALL.GPU, which cost a clustered GEMM a third of its speed)
    ptx = _compile(K.release_to_peer, "*fp32:16,*fp32:16", {"N": 128}).asm["ptx"]
    assert _lines(ptx, r"mbarrier\.arrive\.shared::cluster\.b64 _, \[%r\d+\]")
    assert ".release.cluster.shared::cluster" not in ptx


def test_multicast_tma_ptx() -> None:
    ck = _compile(K.multicast_tile, "tensordesc<fp16[64,64]>,*fp16:16", {"BM": 64, "BN": 64, "OTHER": 1})
    loads = _lines(ck.asm["ptx"], r"cp\.async\.bulk\.tensor")
    assert loads and all(".multicast::cluster" in x and x.endswith(", %h0") for x in loads)
    assert _lines(ck.asm["ptx"], r"mov\.b16 %h0, 3")  # CTAs 0 and 1
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_an_unclustered_kernel_compiles_no_cluster_sync() -> None:
    ptx = _compile(K.ranks, "*i32:16", {}, cluster=None).asm["ptx"]
    assert "reqnctapercluster" not in ptx and "barrier.cluster" not in ptx and "%cluster_ctarank" in ptx


def test_a_peer_in_a_kernel_without_clusters_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        _compile(K.unclustered_arrive, "*fp32", {}, cluster=None).asm["ptx"]
    assert info.value.code == "TLXC-TLX-008" and "1cta mode" in str(info.value)
    assert "tlx.barrier_arrive(bars[0], 1, remote_cta_rank=0)" in str(info.value)


def test_barrier_wait_on_a_remote_view_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        _compile(K.wait_on_remote_view, "", {})
    assert info.value.code == "TLXC-TLX-002" and "barrier_wait on a remote view" in str(info.value)


def test_multicast_outside_the_cluster_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError, match="multicast target 2 is outside the cluster of 2"):
        _compile(K.multicast_tile, "tensordesc<fp16[64,64]>,*fp16:16", {"BM": 64, "BN": 64, "OTHER": 2}).asm["ptx"]


def test_clusters_are_nvidia_only() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        K.ranks.compile("*i32:16", arch="gfx950").asm["amdgcn"]
    assert info.value.code == "TLXC-TLX-006" and "cluster" in str(info.value)
