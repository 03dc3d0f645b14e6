"""The interpreter reports writing the shared-memory source of a TMA store before
``async_descriptor_store_wait`` let it go (on an H200 the store then sent old and new data
mixed, in every launch); ``async_descriptor_store_wait(pendings)`` keeps the newest
``pendings`` stores outstanding."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

import tlxc

SOURCE = """
import tlxc.tlx as tlx

@tlxc.jit
def ring(y_desc, N: tl.constexpr, BUFS: tl.constexpr, WAIT: tl.constexpr):
    bufs = tlx.local_alloc((16, 16), tl.float32, BUFS)
    for i in range(N):
        b = bufs[i % BUFS]
        tlx.async_descriptor_store_wait(WAIT)
        tlx.local_store(b, tl.full((16, 16), i, tl.float32))
        tlx.fence_async_shared()
        tlx.async_descriptor_store(y_desc, b, [0, 16 * i])
    tlx.async_descriptor_store_wait(0)

@tlxc.jit
def reload(x_desc, y_desc):
    buf = tlx.local_alloc((16, 16), tl.float32, 1)
    bar = tlx.alloc_barriers(1, arrive_count=1)
    tlx.barrier_expect_bytes(bar[0], 16 * 16 * 4)
    tlx.async_descriptor_load(x_desc, buf[0], [0, 0], bar[0])
    tlx.barrier_wait(bar[0], 0)
    tlx.async_descriptor_store(y_desc, buf[0], [0, 0])
    tlx.barrier_expect_bytes(bar[0], 16 * 16 * 4)
    tlx.async_descriptor_load(x_desc, buf[0], [0, 16], bar[0])
    tlx.barrier_wait(bar[0], 1)
    tlx.async_descriptor_store(y_desc, buf[0], [0, 16])
    tlx.async_descriptor_store_wait(0)

@tlxc.jit
def two_tasks(y_desc, N: tl.constexpr):
    bufs = tlx.local_alloc((16, 16), tl.float32, 2)
    with tlx.async_tasks():
        with tlx.async_task("default"):
            pass
        with tlx.async_task(num_warps=1, replicate=2):
            g = tlx.async_task_replica_id()
            for i in range(N):
                tlx.async_descriptor_store_wait(0)
                tlx.local_store(bufs[g], tl.full((16, 16), 10 * g + i, tl.float32))
                tlx.fence_async_shared()
                tlx.async_descriptor_store(y_desc, bufs[g], [16 * g, 16 * i])
                tlx.named_barrier_wait(3, 64)  # both tasks' stores are outstanding together
            tlx.async_descriptor_store_wait(0)
"""


def _line(text: str, nth: int = 0) -> int:
    """Line of the nth occurrence of ``text`` in the loaded file (3 header lines come first)."""
    lines = [i for i, ln in enumerate(textwrap.dedent(SOURCE).splitlines()) if text in ln]
    return lines[nth] + 4


@pytest.fixture
def mod(load_kernels: Any) -> Any:
    return load_kernels(textwrap.dedent(SOURCE))


def _run_ring(mod: Any, n: int, bufs: int, wait: int) -> np.ndarray:
    y = np.zeros((16, 16 * n), np.float32)
    mod.ring.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(y, [16, 16]), N=n, BUFS=bufs, WAIT=wait)
    return y


@pytest.mark.parametrize("bufs, wait", [(1, 0), (2, 1), (2, 0), (3, 2), (3, 1)])
def test_waiting_enough_is_fine(mod: Any, bufs: int, wait: int) -> None:
    y = _run_ring(mod, 5, bufs, wait)
    np.testing.assert_array_equal(y, np.repeat(np.arange(5, dtype=np.float32), 16)[None].repeat(16, 0))


def test_stores_of_two_tasks_from_one_allocation(mod: Any) -> None:
    """Each task waits for its own stores; the buffers' outstanding reads interleave in one
    allocation (this once raised a numpy ValueError inside the interpreter)."""
    y = np.zeros((32, 16 * 3), np.float32)
    mod.two_tasks.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(y, [16, 16]), N=3)
    want = np.concatenate([np.repeat(np.arange(3, dtype=np.float32) + 10 * g, 16)[None].repeat(16, 0)
                           for g in range(2)])
    np.testing.assert_array_equal(y, want)


@pytest.mark.interpreter_only  # the interpreter's race report; on a GPU the data would just mix
@pytest.mark.parametrize("bufs, wait", [(1, 1), (2, 2), (3, 3)])
def test_overwrite_before_the_wait_is_an_error(mod: Any, bufs: int, wait: int) -> None:
    """Buffer i % BUFS is written again while `wait` >= BUFS stores may still be reading it."""
    with pytest.raises(tlxc.InterpreterError) as info:
        _run_ring(mod, 5, bufs, wait)
    e = info.value
    text = str(e)
    assert e.code == "TLXC-INTERP-007" and e.loc is not None
    assert e.loc.line == _line("tlx.local_store(b")
    assert f"local_store writes a buffer (allocated at line {_line('local_alloc')}) that the TMA store at line " \
           f"{_line('async_descriptor_store(y_desc, b,')} (async_descriptor_store) may still be reading" in text
    assert "tlx.local_store(b, tl.full((16, 16), i, tl.float32))" in text


@pytest.mark.interpreter_only
def test_async_load_into_a_store_source(mod: Any) -> None:
    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    y = np.zeros_like(x)
    with pytest.raises(tlxc.InterpreterError) as info:
        mod.reload.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(x, [16, 16]),
                                   tlxc.TensorDescriptor.from_tensor(y, [16, 16]))
    assert info.value.code == "TLXC-INTERP-007"
    assert info.value.loc.line == _line("tlx.async_descriptor_load(x_desc, buf[0], [0, 16]")
    assert f"async_descriptor_load writes a buffer (allocated at line {_line('local_alloc', 1)}) that the TMA store " \
           f"at line {_line('async_descriptor_store(y_desc, buf[0], [0, 0])')}" in str(info.value)
