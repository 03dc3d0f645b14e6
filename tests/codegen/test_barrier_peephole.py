"""A barrier right after the same one, with only register instructions between, is dropped
(tlxc/codegen/nvptx/barrier_peephole.py); anything else keeps it."""

from __future__ import annotations

import pytest

from tlxc.codegen.nvptx.barrier_peephole import drop_repeated_barriers

B = "\tbar.sync 0;"


def test_a_barrier_after_register_work_only_is_dropped() -> None:
    body = [B, "\t.loc\t1 35 30", "\tmov.b32 %r9, 0;", "\t@%p0 add.s32 %r1, %r2, 4;", "\tcvt.f32.f16 %f1, %h1;", B,
            "\tst.shared.b32 [%r1+0], %r2;"]
    assert drop_repeated_barriers(body) == body[:5] + body[6:]


@pytest.mark.parametrize("between", [
    "\tst.shared.b32 [%r1+0], %r2;",           # a shared-memory access
    "\tld.global.b32 %r1, [%rd1];",            # global memory: a barrier orders it too
    "\tcp.async.wait_group 0;",
    "\tfence.proxy.async.shared::cta;",
    "\tbar.sync 1, 128;",                      # a named barrier of some warps
    "\t@%p1 bar.sync 0;",                      # a predicated barrier
    "$_for_head1:",                            # control flow joins here
    "\tbra.uni $_for_head1;",
    "\tshfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;",
    "\twgmma.wait_group.sync.aligned 0;",
])
def test_anything_else_between_keeps_the_second_barrier(between: str) -> None:
    body = [B, between, B]
    assert drop_repeated_barriers(body) == body


def test_three_in_a_row_leave_one() -> None:
    assert drop_repeated_barriers([B, B, "\tmov.b32 %r1, 0;", B]) == [B, "\tmov.b32 %r1, 0;"]


def test_a_partition_barrier_repeated_after_register_work_is_dropped() -> None:
    """A consumer warpgroup's arrive on its own CTA's barrier, then on the peer's (mapa
    only computes the peer's address): one sync of its 128 threads is enough."""
    P = "\tbar.sync 3, 128;"
    body = [P, "\t@%p0 mbarrier.arrive.shared::cta.b64 _, [%r57];", "\tmapa.shared::cluster.u32 %r59, %r57, %r58;",
            P, "\t@%p0 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r59];"]
    assert drop_repeated_barriers(body) == body[:3] + body[4:]


@pytest.mark.parametrize("between", ["\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;",
                                     "\tmbarrier.init.shared::cta.b64 [%r9+0], 1;",
                                     "\tmbarrier.inval.shared::cta.b64 [%r9+0];"])
def test_an_mbarrier_wait_or_init_keeps_the_second_barrier(between: str) -> None:
    body = ["\tbar.sync 3, 128;", between, "\tbar.sync 3, 128;"]
    assert drop_repeated_barriers(body) == body


@pytest.mark.parametrize("other", ["\tbar.sync 3, 256;", "\tbar.sync 4, 128;", "\tbar.sync 0;"])
def test_a_different_barrier_is_kept(other: str) -> None:
    body = ["\tbar.sync 3, 128;", "\tmov.b32 %r1, 0;", other, "\tmov.b32 %r1, 0;", "\tbar.sync 3, 128;"]
    assert drop_repeated_barriers(body) == body
