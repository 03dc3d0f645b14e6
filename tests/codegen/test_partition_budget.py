"""The register budgets and barrier ids of warp-specialized partitions, against tables
worked by hand (the arithmetic is in each row's comment)."""

from __future__ import annotations

import pytest

from tlxc.codegen.nvptx.partition_budget import (
    BudgetError,
    RegisterBudget,
    Worker,
    barrier_ids,
    default_maxnreg,
    padded_warps,
    register_budget,
    round_regs,
)


@pytest.mark.parametrize("n,want", [(1, 24), (24, 24), (25, 32), (152, 152), (153, 160), (255, 256), (400, 256)])
def test_round_regs(n: int, want: int) -> None:
    assert round_regs(n) == want


@pytest.mark.parametrize("warps,want", [(4, 256), (8, 256), (12, 168), (16, 128), (32, 64)])
def test_default_maxnreg(warps: int, want: int) -> None:
    # 65536 / (warps * 32), down to 8, at most 256: 12 warps -> 170.67 -> 168; 16 -> 128; 32 -> 64
    assert default_maxnreg(warps) == want


def test_padding_to_whole_warpgroups() -> None:
    # 4 default warps + a 1-warp MMA task (warp 4) + a 1-warp load task (warp 5) -> warps 0..5 -> 8
    assert padded_warps(4, [Worker(4, 1), Worker(5, 1)]) == 8
    assert padded_warps(4, [Worker(4, 4), Worker(8, 4)]) == 12
    assert padded_warps(8, []) == 8


BUDGETS = [
    # HPC tutorial: 4-warp producer (default, no request), two 4-warp consumers asking 232.
    # 12 warps, maxnreg 168, a pool of 168 x 384 = 64512; consumers 232 each (2 x 128 x
    # 232 = 59392); the default gets (64512 - 59392) / 128 = 40 (what Triton gives it too).
    (4, None, [Worker(4, 4, 232), Worker(8, 4, 232)], RegisterBudget(168, 12, 40, {1: 232, 2: 232})),
    # Blackwell GEMM: 4-warp epilogue default, 1-warp MMA and 1-warp producer asking 24.
    # 8 warps, maxnreg 256; warpgroup 1 holds both workers and two padding warps: 24;
    # the default gets (65536 - 128 x 24) / 128 = 488 -> clamped to 256.
    (4, None, [Worker(4, 1, 24), Worker(5, 1, 24)], RegisterBudget(256, 8, 256, {1: 24})),
    # a default with its own request keeps it: 80 (unit test test_default_task_register_budget)
    (4, 80, [Worker(4, 1, 24)], RegisterBudget(256, 8, 80, {1: 24})),
    # Blackwell FA: default 4 warps, two 4-warp softmax replicas asking 152, MMA and load
    # warps asking 24 in a fourth warpgroup: 16 warps, maxnreg 128; workers 2 x 128 x 152
    # + 128 x 24 = 41984; default (65536 - 41984) / 128 = 184.
    (4, None, [Worker(4, 4, 152), Worker(8, 4, 152), Worker(12, 1, 24), Worker(13, 1, 24)],
     RegisterBudget(128, 16, 184, {1: 152, 2: 152, 3: 24})),
    # nobody asks: no setmaxnreg
    (4, None, [Worker(4, 4), Worker(8, 4)], RegisterBudget(168, 12, None, {})),
]


@pytest.mark.parametrize("default_warps,default_regs,workers,want", BUDGETS)
def test_register_budget(default_warps: int, default_regs: int | None, workers: list[Worker],
                         want: RegisterBudget) -> None:
    assert register_budget(default_warps, default_regs, workers) == want


@pytest.mark.parametrize("default_regs,workers,message", [
    (None, [Worker(4, 4, 100)], "multiple of 8"),
    (None, [Worker(4, 4, 16)], "from 24 to 256"),
    (260, [Worker(4, 4, 24)], "multiple of 8 from 24 to 256"),
    (None, [Worker(4, 4, 232), Worker(8, 4)], "some worker tasks only"),
    # three consumers at 256 take 3 x 128 x 256 = 98304 > 65536
    (None, [Worker(4, 4, 256), Worker(8, 4, 256), Worker(12, 4, 256)], "under the minimum of 24"),
    # a fixed default of 256 beside two consumers at 232: 128 x 256 + 2 x 128 x 232 = 92160
    (256, [Worker(4, 4, 232), Worker(8, 4, 232)], "need 92160 registers per CTA; its 12 warps start with 168"),
    # a default of 64 beside them: 8192 + 59392 = 67584, over the pool of 64512 (setmaxnreg.inc would wait forever)
    (64, [Worker(4, 4, 232), Worker(8, 4, 232)], "need 67584 registers per CTA"),
])
def test_budgets_the_hardware_cannot_honour(default_regs: int | None, workers: list[Worker], message: str) -> None:
    with pytest.raises(BudgetError, match=message):
        register_budget(4, default_regs, workers)


@pytest.mark.parametrize("warps,user,want", [
    ([4, 1, 4], {1, 9}, [2, None, 3]),     # 1 is the user's, a 1-warp partition needs none
    ([4, 4], {9, 10}, [1, 2]),             # the ping-pong tutorial's named barriers 9 and 10
    ([1, 1], set(), [None, None]),
    ([4] * 15, set(), list(range(1, 16))),
])
def test_barrier_ids(warps: list[int], user: set[int], want: list[int | None]) -> None:
    assert barrier_ids(warps, user) == want


def test_too_many_partitions_for_the_barriers() -> None:
    with pytest.raises(BudgetError, match="the kernel's named barriers take 9, 10"):
        barrier_ids([4] * 14, {9, 10})
