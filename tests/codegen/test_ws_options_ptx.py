"""The ``async_tasks`` options and barrier ids in PTX: ``mbarrier_try_wait_suspend_ns`` on
the region's waits (``mbarrier.try_wait.parity`` with a ``suspendTimeHint``), the ending
cluster sync taken by every warp (workers before their ``ret``) or left out under
``no_ending_cluster_sync=True``, and the region's barrier chosen around the user's
named barriers (``lower_tasks.region_barrier``). ptxas accepts each variant."""

from __future__ import annotations

import re
from typing import Any

import pytest

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.codegen.nvptx.lower_tasks import region_barrier
from tlxc.codegen.nvptx.partition_budget import BudgetError
from tlxc.compiler import compile_kernel
from tlxc.kernels.options import compile_options


@tlxc.jit
def suspended(out_ptr, NS: tl.constexpr):
    bars = tlx.alloc_barriers(2, arrive_count=1)
    tlx.barrier_arrive(bars[1])
    tlx.barrier_wait(bars[1], 0)  # outside the region: no hint
    with tlx.async_tasks(mbarrier_try_wait_suspend_ns=NS):
        with tlx.async_task("default"):
            tlx.barrier_wait(bars[0], 0)
            tl.store(out_ptr, 1)
        with tlx.async_task(num_warps=1):
            tlx.barrier_arrive(bars[0])
            tlx.barrier_wait(bars[0], 0)


@tlxc.jit
def clustered_ws(x_ptr, NO_END: tl.constexpr):
    rank = tlx.cluster_cta_rank()
    bars = tlx.alloc_barriers(1, arrive_count=1)
    tlx.fence_mbarrier_init_cluster()
    tlx.cluster_barrier()
    with tlx.async_tasks(no_ending_cluster_sync=NO_END):
        with tlx.async_task("default"):
            tlx.barrier_wait(bars[0], 0)
            tl.store(x_ptr + rank, rank)
        with tlx.async_task(num_warps=1):
            tlx.barrier_arrive(tlx.remote_view(bars[0], rank ^ 1))


@tlxc.jit
def user_barrier_one(y_ptr, BLOCK: tl.constexpr):
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tlx.named_barrier_arrive(1, 256)
        with tlx.async_task(num_warps=4):
            tlx.named_barrier_wait(1, 256)
            tl.store(y_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))


def _ptx(kernel: Any, signature: str, constants: dict[str, Any], cluster: Any = None) -> str:
    specs, consts = kernel.resolve_aot(signature, constants, None)
    options = compile_options({"ctas_per_cga": cluster} if cluster else {}, "sm_90a", None)
    ck = compile_kernel(kernel, specs, consts, options)
    ptx = ck.asm["ptx"]
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]  # ptxas accepts it
    return ptx


def _lines(ptx: str, pattern: str) -> list[str]:
    stripped = (line.strip().rstrip(";") for line in ptx.splitlines())
    return [line for line in stripped if re.search(pattern, line)]


def _split(ptx: str) -> tuple[str, str]:
    """The default warps' code and the worker warps' (from the ``$_ws_workers`` label)."""
    main, workers = re.split(r"^\$_ws_workers\d*:$", ptx, maxsplit=1, flags=re.M)
    return main, workers


def test_suspend_hint_on_the_regions_waits() -> None:
    ptx = _ptx(suspended, "*i32", {"NS": 50000})
    hinted = _lines(ptx, r"^mbarrier\.try_wait\.parity\.shared::cta\.b64 %p\d+, \[%r\d+(\+\d+)?\], %r\d+, 50000$")
    plain = _lines(ptx, r"^mbarrier\.try_wait\.parity\.shared::cta\.b64 %p\d+, \[%r\d+(\+\d+)?\], %r\d+$")
    assert len(hinted) == 2 and len(plain) == 1  # the default's and the worker's; the one before the region


@pytest.mark.parametrize("ns", [0, -1])
def test_no_hint_when_zero_or_not_given(ns: int) -> None:
    # TLX: 0 turns the hint off; -1 is the IR's "not given"
    ptx = _ptx(suspended, "*i32", {"NS": ns if ns >= 0 else None})
    assert not _lines(ptx, r"^mbarrier\.try_wait\.parity.*, \d+$")
    assert len(_lines(ptx, r"^mbarrier\.try_wait\.parity")) == 3


def test_workers_join_the_ending_cluster_sync() -> None:
    ptx = _ptx(clustered_ws, "*i32", {"NO_END": False}, cluster=(2, 1, 1))
    main, workers = _split(ptx)
    # the user's cluster_barrier before the region, then the ending sync: default warps at the
    # kernel's end, worker warps after their arrive at the region's barrier, before ret
    assert len(_lines(main, r"^barrier\.cluster\.arrive\.aligned$")) == 2
    assert _lines(main, r"^barrier\.cluster\.wait\.aligned$")[-1] == "barrier.cluster.wait.aligned"
    tail = [line for line in _lines(workers, r"\S")]
    i = tail.index("bar.arrive 1, 160")
    assert tail[i + 1:i + 4] == ["barrier.cluster.arrive.aligned", "barrier.cluster.wait.aligned", "ret"]
    # the worker warps branched away at the start: they meet the cluster at the default path's two
    # syncs before the region (after the mbarrier init, and the user's cluster_barrier), then wait for it;
    # they have not touched memory yet, so their arrives are relaxed (a released one is a MEMBAR.ALL.GPU)
    head = [line for line in _lines(workers, r"\S")]
    first = head.index("bar.sync 1, 160")
    assert [x for x in head[:first] if x.startswith("barrier.cluster")] == \
        ["barrier.cluster.arrive.relaxed.aligned", "barrier.cluster.wait.aligned"] * 2


def test_no_ending_cluster_sync_leaves_it_out() -> None:
    ptx = _ptx(clustered_ws, "*i32", {"NO_END": True}, cluster=(2, 1, 1))
    main, workers = _split(ptx)
    assert len(_lines(main, r"^barrier\.cluster\.arrive\.aligned$")) == 1  # the user's only
    # the workers still meet the cluster's syncs before the region, and none after it
    tail = [line for line in _lines(workers, r"\S")]
    assert len(_lines(workers, r"^barrier\.cluster\.arrive")) == 2
    assert not [x for x in tail[tail.index("bar.arrive 1, 160"):] if x.startswith("barrier.cluster")]


def test_the_region_barrier_moves_around_the_users_barrier_1() -> None:
    ptx = _ptx(user_barrier_one, "*fp32", {"BLOCK": 128})
    # the region starts and ends at barrier 2; the user's barrier 1 stays the user's;
    # the 4-warp worker partition takes the next free id, 3
    assert len(_lines(ptx, r"^bar\.sync 2, 256$")) == 3 and _lines(ptx, r"^bar\.arrive 2, 256$")
    assert _lines(ptx, r"^bar\.arrive 1, 256$") and _lines(ptx, r"^bar\.sync 1, 256$")
    assert len(_lines(ptx, r"^bar\.(sync|arrive) 1,")) == 2


@pytest.mark.parametrize("user,want", [(set(), 1), ({9, 10}, 1), ({1}, 2), ({1, 2, 3}, 4)])
def test_region_barrier_table(user: set[int], want: int) -> None:
    assert region_barrier(user) == want


def test_no_free_region_barrier() -> None:
    with pytest.raises(BudgetError, match="every id from 1 to 15"):
        region_barrier(set(range(1, 16)))


def test_a_cluster_over_the_portable_limit_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        compile_options({"ctas_per_cga": (4, 4, 1)}, "sm_90a", None)
    assert info.value.code == "TLXC-OPTION-001" and "clusters of 16 blocks" in str(info.value)
    assert "at most 8" in str(info.value)
