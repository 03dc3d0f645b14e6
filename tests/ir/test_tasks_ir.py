"""``async_tasks`` in the IR: the verifier's rules for partitions, and kernels with
warp specialization that print and parse back."""

from __future__ import annotations

import re

import pytest
from roundtrip_tasks import PRODUCER_CONSUMER, TASKS_INVALID

from tlxc.ir.core import VerificationError
from tlxc.ir.ops.tasks import AsyncTasksOp, enclosing_partition, warps_at
from tlxc.ir.parser import parse_ir
from tlxc.ir.printer import print_ir
from tlxc.ir.verifier import verify


@pytest.mark.parametrize("name", sorted(TASKS_INVALID))
def test_verifier_refuses(name: str) -> None:
    text, message = TASKS_INVALID[name]
    with pytest.raises(VerificationError, match=re.escape(message)):
        verify(parse_ir(text))


def test_partitions_read_as_records() -> None:
    module = parse_ir(PRODUCER_CONSUMER)
    verify(module)
    op = next(o for o in module.walk() if isinstance(o, AsyncTasksOp))
    parts = op.partitions
    assert [(p.task, p.replica, p.default, p.num_warps, p.registers, p.warp_start) for p in parts] == [
        (0, 0, True, 4, 0, 0), (1, 0, False, 1, 24, 4), (1, 1, False, 1, 24, 5)]
    assert op.default_partition.index == 0 and op.total_warps == 6
    assert [p.describe() for p in parts] == ["the default task", "task 1, replica 0", "task 1, replica 1"]
    assert op.attrs["exclusive"] is True and op.attrs["mbarrier_try_wait_suspend_ns"] == 0
    add = parts[2].block.ops[0]
    found = enclosing_partition(add)
    assert found is not None and found[1].index == 2
    assert warps_at(add, 4) == 1 and warps_at(op, 4) == 4
    assert print_ir(module) == PRODUCER_CONSUMER
