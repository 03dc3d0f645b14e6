"""The NVIDIA emitter's scope: a rule that synchronizes or asks for a thread id gets the
enclosing partition's barrier and thread numbering, so the same rule is right inside any
warp-specialized partition. The default scope (the whole CTA) emits what it always did."""

from __future__ import annotations

from tlxc.codegen.nvptx.emitter import Emitter, Scope
from tlxc.codegen.nvptx.isa import TARGETS
from tlxc.codegen.nvptx.lower_sync import thread0
from tlxc.codegen.nvptx.ptx import PtxFunction


def _emitter(num_warps: int = 4) -> Emitter:
    return Emitter(PtxFunction("k", []), TARGETS["sm_90a"], num_warps)


def test_the_whole_cta_keeps_bar_sync_0_and_raw_thread_ids() -> None:
    e = _emitter()
    e.barrier()
    tid = e.special("tid")
    assert e.fn.body[-1].strip() == "bar.sync 0;"
    assert e.prologue == [f"\tmov.u32 {tid}, %tid.x;"]


def test_a_partition_synchronizes_its_own_warps_and_counts_threads_from_its_first_warp() -> None:
    e = _emitter(4)
    outer_tid = e.special("tid")
    with e.enter(Scope(first_warp=4, num_warps=8, barrier_id=3, whole_cta=False)):
        assert e.num_warps == 8
        e.barrier()
        tid = e.special("tid")
        p = thread0(e)
        assert e.special("tid") == tid  # cached within the scope
    assert e.num_warps == 4 and e.special("tid") == outer_tid and thread0(e) != p
    assert e.fn.body[0].strip() == "bar.sync 3, 256;"
    assert f"\tsub.u32 {tid}, {tid}, 128;" in e.prologue
    assert f"\tsetp.eq.u32 {p}, {tid}, 0;" in e.prologue


def test_a_one_warp_partition_uses_bar_warp_sync() -> None:
    e = _emitter(4)
    with e.enter(Scope(first_warp=5, num_warps=1, barrier_id=None, whole_cta=False)):
        e.barrier()
    assert e.fn.body[-1].strip() == "bar.warp.sync -1;"
