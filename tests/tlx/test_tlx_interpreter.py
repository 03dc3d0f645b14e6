"""TLX kernels in the CPU interpreter: numerics against numpy, and the protocol errors
(deadlocks, reads before an async copy completed)."""

from __future__ import annotations

import numpy as np
import pytest
from tlx_kernels import roundtrip_smem  # tests/tlx/tlx_kernels.py

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


def test_local_trans_view_reads_transposed() -> None:
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    y = np.zeros_like(x)
    roundtrip_smem.interpret[(1,)](x, y, BLOCK=16)
    np.testing.assert_array_equal(y, x.T)


@tlxc.jit
def _barrier_protocol(out, CASE: tl.constexpr):
    bars = tlx.alloc_barriers(2, arrive_count=1)
    if CASE == 0:      # arrive then wait(0): fine
        tlx.barrier_arrive(bars[0])
        tlx.barrier_wait(bars[0], 0)
        tlx.barrier_wait(bars[1], 1)   # a fresh barrier's phase "1" counts as done
    elif CASE == 1:    # wait(0) before any arrive: deadlock
        tlx.barrier_wait(bars[0], 0)
    elif CASE == 2:    # arrive then wait(1): waits for a phase that never comes
        tlx.barrier_arrive(bars[0])
        tlx.barrier_wait(bars[0], 1)
    else:              # expect bytes that never arrive
        tlx.barrier_expect_bytes(bars[0], 1024)
        tlx.barrier_wait(bars[0], 0)
    tl.store(out, 1)


@pytest.mark.interpreter_only  # checks the interpreter's diagnostics (on a GPU the kernel would hang)
def test_barrier_phases_and_deadlocks() -> None:
    out = np.zeros(1, np.int32)
    _barrier_protocol.interpret[(1,)](out, CASE=0)
    assert out[0] == 1
    for case, line_text in [(1, "barrier_wait(bars[0], 0)"), (2, "barrier_wait(bars[0], 1)"),
                            (3, "barrier_wait(bars[0], 0)")]:
        with pytest.raises(tlxc.InterpreterError) as info:
            _barrier_protocol.interpret[(1,)](out, CASE=case)
        err = info.value
        assert err.code == "TLXC-INTERP-004" and "deadlock" in err.message
        assert line_text in str(err)
    with pytest.raises(tlxc.InterpreterError, match="1024 transaction byte"):
        _barrier_protocol.interpret[(1,)](out, CASE=3)


@tlxc.jit
def _read_too_early(x_ptr, y_ptr, WAIT: tl.constexpr):
    offs = tl.arange(0, 32)
    bufs = tlx.local_alloc((32,), tl.float32, 1)
    tok = tlx.async_load(x_ptr + offs, bufs[0])
    tlx.async_load_commit_group([tok])
    if WAIT:
        tlx.async_load_wait_group(0)
    tl.store(y_ptr + offs, tlx.local_load(bufs[0]))


@pytest.mark.interpreter_only  # checks the interpreter's diagnostics (on a GPU the kernel would hang)
def test_reading_before_the_copy_completed_is_reported() -> None:
    x = np.arange(32, dtype=np.float32)
    y = np.zeros_like(x)
    _read_too_early.interpret[(1,)](x, y, WAIT=True)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(tlxc.InterpreterError) as info:
        _read_too_early.interpret[(1,)](x, y, WAIT=False)
    assert info.value.code == "TLXC-INTERP-005"
    assert "has not completed" in info.value.message and "tlx.local_load(bufs[0])" in str(info.value)


@tlxc.jit
def _uninitialized(y_ptr):
    bufs = tlx.local_alloc((32,), tl.float32, 1)
    tl.store(y_ptr + tl.arange(0, 32), tlx.local_load(bufs[0]))


@pytest.mark.interpreter_only  # checks the interpreter's diagnostics (on a GPU the kernel would hang)
def test_reading_an_unwritten_buffer_is_reported() -> None:
    with pytest.raises(tlxc.InterpreterError, match="before anything was written"):
        _uninitialized.interpret[(1,)](np.zeros(32, np.float32))


@tlxc.jit
def _warp_barrier(out):
    bar = tlx.alloc_warp_barrier(1, num_warps=4)
    tlx.barrier_arrive(bar[0])      # every one of the 4*32 threads arrives
    tlx.barrier_wait(bar[0], 0)
    tl.store(out, 7)


def test_warp_barrier_counts_every_thread() -> None:
    out = np.zeros(1, np.int32)
    _warp_barrier.interpret[(1,)](out)
    assert out[0] == 7


@tlxc.jit
def _device_desc_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Copy through device-built descriptors and a register tile; the edge tiles are clipped."""
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    yd.store([om, on], xd.load([om, on]) * 2)


def test_device_descriptors_clip_at_the_edges() -> None:
    x = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
    y = np.zeros_like(x)
    _device_desc_copy.interpret[(3, 2)](x, y, 40, 24, BM=16, BN=16)
    np.testing.assert_array_equal(y, 2 * x)


@tlxc.jit
def _tma_without_wait(d, y_ptr):
    bufs = tlx.local_alloc((16, 16), tl.float32, 1)
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], 16 * 16 * 4)
    tlx.async_descriptor_load(d, bufs[0], [0, 0], bars[0])
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs[:, None] * 16 + offs[None, :], tlx.local_load(bufs[0]))


@pytest.mark.interpreter_only  # checks the interpreter's diagnostics (on a GPU the kernel would hang)
def test_reading_a_tma_buffer_before_the_barrier_wait_is_reported() -> None:
    x = np.ones((16, 16), np.float32)
    with pytest.raises(tlxc.InterpreterError, match="has not completed"):
        _tma_without_wait.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(x, [16, 16]), np.zeros_like(x))
