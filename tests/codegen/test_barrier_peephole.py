"""A CTA barrier right after another, with only register instructions between, is dropped
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
