"""``with tlx.async_tasks():`` in the frontend: every form of ``tlx.async_task`` TLX
accepts, the partitions and warp placement recorded on the ``async_tasks`` op, its
options, the inline default task, and the printed IR reading back the same."""

from __future__ import annotations

import numpy as np
import pytest
import tlxc.language.extra.tlx as tlx

import tlxc
import tlxc.language as tl
from tlxc.ir.ops.tasks import AsyncTasksOp
from tlxc.ir.parser import parse_ir
from tlxc.ir.printer import print_ir


def _parts(kernel: object, sig: str, num_warps: int = 4, **constants: object) -> tuple[AsyncTasksOp, str]:
    compiled = kernel.compile(sig, constants=constants, num_warps=num_warps)  # type: ignore[attr-defined]
    text = compiled.asm["ir"]
    assert print_ir(parse_ir(text)) == text  # the region prints and parses back
    op = next(o for o in compiled.module.walk() if isinstance(o, AsyncTasksOp))
    return op, text


def _table(op: AsyncTasksOp) -> list[tuple[int, int, bool, int, int, int]]:
    return [(p.task, p.replica, p.default, p.num_warps, p.registers, p.warp_start) for p in op.partitions]


@tlxc.jit
def _placed(x):
    with tlx.async_tasks(exclusive=True, no_ending_cluster_sync=True, mbarrier_try_wait_suspend_ns=100):
        with tlx.async_task("default", registers=120, replicate=2):
            tl.store(x, 0.0)
        with tlx.async_task(num_warps=1, num_regs=24):
            tl.store(x + 1, 1.0)
        with tlx.async_task(num_warps=4, registers=232, replicate=2):
            tl.store(x + 2 + tlx.async_task_replica_id(), 2.0)


def test_partitions_replicas_and_placement_largest_first() -> None:
    op, text = _parts(_placed, "*fp32", num_warps=4)
    # default on [0, 4); then, largest first and in order among equals: the default's
    # second replica, the two 4-warp consumers, the 1-warp producer last
    assert _table(op) == [(0, 0, True, 4, 120, 0), (0, 1, False, 4, 120, 4), (1, 0, False, 1, 24, 16),
                          (2, 0, False, 4, 232, 8), (2, 1, False, 4, 232, 12)]
    assert op.attrs["exclusive"] is True and op.attrs["no_ending_cluster_sync"] is True
    assert op.attrs["mbarrier_try_wait_suspend_ns"] == 100
    assert "exclusive = true, no_ending_cluster_sync = true, mbarrier_try_wait_suspend_ns = 100" in text


@tlxc.jit
def _start_ids(x):
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 0.0)
        with tlx.async_task(num_warps=2, warp_group_start_id=4, replicate=2):
            tl.store(x + 1, 1.0)
        with tlx.async_task(num_warps=1, warp_group_start_id=8):
            tl.store(x + 2, 2.0)


def test_explicit_warp_group_start_ids_place_replicas_side_by_side() -> None:
    op, _ = _parts(_start_ids, "*fp32")
    assert [(p.warp_start, p.num_warps) for p in op.partitions] == [(0, 4), (4, 2), (6, 2), (8, 1)]


@tlxc.jit
def _inline_default(x, out):
    with tlx.async_tasks():
        with tlx.async_task("default", num_regs=64):
            v = tl.load(x) + tlx.async_task_replica_id()
    tl.store(out, v)  # the inline default's names stay visible, as in TLX


def test_only_the_default_task_is_emitted_inline() -> None:
    compiled = _inline_default.compile("*fp32,*fp32")
    assert "async_tasks" not in compiled.asm["ir"]
    x, out = np.array([2.5], np.float32), np.zeros(1, np.float32)
    _inline_default.interpret[(1,)](x, out)
    assert out[0] == 2.5


@tlxc.jit
def _names_stay_inside(x):
    v = 1.0
    with tlx.async_tasks():
        with tlx.async_task("default"):
            v = 5.0
            tl.store(x, v)
        with tlx.async_task(num_warps=1):
            v = 7.0
            tl.store(x + 1, v)
    tl.store(x + 2, v)


def test_names_assigned_in_tasks_do_not_leak() -> None:
    x = np.zeros(3, np.float32)
    _names_stay_inside.interpret[(1,)](x)
    np.testing.assert_array_equal(x, [5.0, 7.0, 1.0])


def test_get_bufidx_phase_imports_both_ways_and_counts_rings() -> None:
    from tlxc.language.extra.tlx.warp_spec import get_bufidx_phase as a

    from tlxc.tlx.warp_spec import get_bufidx_phase as b

    assert a.__name__ == b.__name__ == "get_bufidx_phase"

    @tlxc.jit
    def ring(out, N: tl.constexpr):
        for i in range(7):
            buf, phase = a(i, N)
            tl.store(out + 2 * i, buf)
            tl.store(out + 2 * i + 1, phase)

    out = np.zeros(14, np.int32)
    ring.interpret[(1,)](out, N=3)
    np.testing.assert_array_equal(out.reshape(7, 2), [[i % 3, (i // 3) & 1] for i in range(7)])


def test_host_side_task_objects_check_registers_as_tlx_does() -> None:
    assert tlx.async_task("default", registers=128).num_regs == 128
    assert tlx.async_task("default", num_regs=128).num_regs == 128
    for kwargs in ({"num_regs": 25}, {"registers": 25}):
        with pytest.raises(ValueError, match="divisible by 8"):
            tlx.async_task(num_warps=1, **kwargs)
        with pytest.raises(ValueError, match="divisible by 8"):
            tlx.async_task("default", **kwargs)
    with pytest.raises(ValueError, match="non-negative"):
        tlx.async_tasks(mbarrier_try_wait_suspend_ns=-1)


def test_calling_the_context_managers_is_refused() -> None:
    @tlxc.jit
    def k(x):
        tlx.async_tasks()
        tl.store(x, 1.0)

    with pytest.raises(tlxc.CompilationError, match="is used as `with tlx.async_tasks"):
        k.compile("*fp32")
