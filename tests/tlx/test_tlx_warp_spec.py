"""Warp specialization in the interpreter: partitions and replicas run as cooperative
tasks that switch at barrier waits (``tlxc/interpreter/tasks.py``); producer/consumer
rings give numpy's numbers, arrivals count per partition (per thread on warp
barriers), named barriers order partitions, and a deadlock names every waiting task."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import tlx_ws_kernels  # tests/tlx/tlx_ws_kernels.py
import tlxc.language.extra.tlx as tlx
from tlx_ws_kernels import pingpong, ring_copy, warp_barrier_release, ws_gemm  # tests/tlx/tlx_ws_kernels.py

import tlxc
import tlxc.language as tl


@pytest.mark.parametrize("bufs", [1, 2, 3])
def test_ring_through_shared_memory(bufs: int) -> None:
    tiles, block = 7, 32
    x = np.arange(3 * tiles * block, dtype=np.float32) - 100.0
    y = np.zeros_like(x)
    ring_copy.interpret[(3,)](x, y, tiles, BLOCK=block, NUM_BUFS=bufs, SCALE=3.0, BUG=0)
    np.testing.assert_array_equal(y, 3.0 * x)


@pytest.mark.parametrize("groups,stages", [(1, 1), (2, 2), (2, 3)])
def test_warp_specialized_gemm_with_tma_and_wgmma(groups: int, stages: int) -> None:
    rng = np.random.default_rng(1)
    m, n, k = 256, 64, 160
    bm, bn, bk = 64 * groups, 32, 32
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    desc = tlxc.TensorDescriptor.from_tensor
    ws_gemm.interpret[(m // bm, n // bn)](desc(a, [bm // groups, bk]), desc(b, [bk, bn]), desc(c, [bm // groups, bn]),
                                          k, BM=bm, BN=bn, BK=bk, NUM_STAGES=stages, NUM_MMA_GROUPS=groups)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=1e-2, atol=2e-2)


def test_named_barriers_order_the_partitions() -> None:
    x = np.full(16, 1.0, np.float32)
    y = np.zeros(16, np.float32)
    pingpong.interpret[(1,)](x, y, ROUNDS=3, BLOCK=16)
    # turns alternate +1 (replica 0) and *2 (replica 1): ((1+1)*2+1)*2+1)*2
    np.testing.assert_array_equal(y, np.full(16, 22.0, np.float32))


def test_warp_barrier_counts_every_thread_of_each_partition() -> None:
    out = np.zeros(1, np.int32)
    warp_barrier_release.interpret[(1,)](out, NUM=7)
    assert out[0] == 7


@pytest.mark.interpreter_only  # on a GPU the kernel would hang
def test_deadlock_names_every_waiting_task_barrier_phase_and_line() -> None:
    x = np.zeros(2 * 32, np.float32)
    with pytest.raises(tlxc.InterpreterError) as info:
        ring_copy.interpret[(1,)](x, np.zeros_like(x), 2, BLOCK=32, NUM_BUFS=2, SCALE=1.0, BUG=1)
    err = info.value
    assert err.code == "TLXC-INTERP-004"
    lines = err.message.splitlines()
    assert lines[0].startswith("deadlock: every task of the async_tasks region is waiting") and "2 waiting" in lines[0]
    source = inspect.getsource(tlx_ws_kernels).splitlines()
    wait_full = next(i for i, s in enumerate(source, 1) if "tlx.barrier_wait(full[buf], phase)" in s)
    wait_empty = next(i for i, s in enumerate(source, 1) if "tlx.barrier_wait(empty[buf], phase)" in s)
    alloc_full = next(i for i, s in enumerate(source, 1) if "full = tlx.alloc_barriers(NUM_BUFS" in s)
    alloc_empty = alloc_full + 1
    assert lines[1] == (f"  the default task (warps 0-3) waits at line {wait_full} for phase 0 of mbarrier 0 of the "
                        f"array allocated at line {alloc_full}: its current phase has parity 0 and still expects 1 "
                        "arrival(s) of 1 and 0 transaction byte(s)")
    assert lines[2] == (f"  task 1, replica 0 (warp 4) waits at line {wait_empty} for phase 0 of mbarrier 0 of the "
                        f"array allocated at line {alloc_empty}: its current phase has parity 0 and still expects 1 "
                        "arrival(s) of 1 and 0 transaction byte(s)")
    assert err.loc is not None and err.loc.line == wait_full


@tlxc.jit
def _replicas(out_ptr):
    with tlx.async_tasks():
        with tlx.async_task("default", replicate=2):
            r = tlx.async_task_replica_id()
            tl.store(out_ptr + r, 10 + r)
        with tlx.async_task(num_warps=1, replicate=3):
            r = tlx.async_task_replica_id()
            tl.store(out_ptr + 2 + r, 20 + r)


def test_every_replica_runs_with_its_replica_id() -> None:
    out = np.zeros(5, np.int32)
    _replicas.interpret[(1,)](out)
    np.testing.assert_array_equal(out, [10, 11, 20, 21, 22])


@tlxc.jit
def _guarded(x_ptr, z_ptr, c_ptr, BLOCK: tl.constexpr, SECOND: tl.constexpr, LARGE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    with tlx.async_tasks():
        if LARGE:
            with tlx.async_task("default", warp_group_start_id=0):
                tl.store(z_ptr + offs, tl.load(x_ptr + offs) + 1.0)
        else:
            with tlx.async_task("default", warp_group_start_id=1):
                tl.store(z_ptr + offs, tl.load(x_ptr + offs) * 3.0)
        if SECOND:
            with tlx.async_task(num_warps=1, registers=96):
                o = tl.arange(0, BLOCK)
                tl.store(c_ptr + o, tl.load(x_ptr + o) - 1.0)


@pytest.mark.parametrize("second", [True, False])
@pytest.mark.parametrize("large", [True, False])
def test_constexpr_guards_choose_tasks(second: bool, large: bool) -> None:
    x = np.arange(64, dtype=np.float32)
    z, c = np.zeros_like(x), np.zeros_like(x)
    _guarded.interpret[(1,)](x, z, c, BLOCK=64, SECOND=second, LARGE=large)
    np.testing.assert_array_equal(z, x + 1.0 if large else x * 3.0)
    np.testing.assert_array_equal(c, x - 1.0 if second else np.zeros_like(x))
    ir = _guarded.compile("*fp32,*fp32,*fp32", constants={"BLOCK": 64, "SECOND": second, "LARGE": large}).asm["ir"]
    assert ("async_tasks" in ir) == second  # only the default task left: emitted inline
