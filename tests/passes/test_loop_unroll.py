"""``loop-unroll`` (tlxc/ir/passes/loop_unroll.py): ``tl.range(..., loop_unroll_factor=F)``
runs the body ``F`` times per iteration of an unrolled loop, then the loop itself for the
iterations left. The interpreter runs the tile IR, so the numbers check the rewrite: every
factor against trip counts below, at and above it, steps of either sign and bounds known
only at run time; then the IR's shape and a pipelined ``tl.dot`` loop unrolled on sm_90a.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.interpreter_only


@tlxc.jit
def order_sensitive(out, lb, ub, STEP: tl.constexpr, F: tl.constexpr):
    """A sum whose value depends on the order of the iterations, and their count."""
    acc = 0
    cnt = 0
    for i in tl.range(lb, ub, STEP, loop_unroll_factor=F):
        acc = acc * 3 + i
        cnt += 1
    tl.store(out, acc)
    tl.store(out + 1, cnt)


def _reference(lb: int, ub: int, step: int) -> tuple[int, int]:
    acc, cnt = 0, 0
    for i in range(lb, ub, step):
        acc = (acc * 3 + i) % 2 ** 32
        cnt += 1
    return int(np.array([acc], np.uint32).view(np.int32)[0]), cnt


@pytest.mark.parametrize("factor", [2, 3, 4])
@pytest.mark.parametrize("step", [1, 2, -1, -3])
def test_every_iteration_runs_once_in_order(factor: int, step: int) -> None:
    for lb, ub in [(0, 0), (0, 1), (0, 5), (3, 17), (10, -4), (-5, 9), (7, 7), (0, 12)]:
        out = np.zeros(2, np.int32)
        order_sensitive.interpret[(1,)](out, lb, ub, STEP=step, F=factor)
        assert tuple(out) == _reference(lb, ub, step), (lb, ub)


def test_the_unrolled_loop_steps_by_f_and_the_rest_runs_unpipelined() -> None:
    ir = order_sensitive.compile("*i32,i32,i32", constants=dict(STEP=2, F=3)).asm["ir"]
    assert "loop_unroll_factor" + " =" not in ir
    loops = re.findall(r"= for [^\n]*", ir)
    assert len(loops) == 2 and "num_stages = 1" in loops[1] and "num_stages" not in loops[0]
    main = ir[ir.index(loops[0]):ir.index(loops[1])]
    assert main.count("mul %acc") + main.count("mul %") >= 3  # the body three times


@tlxc.jit
def fixed_trips(out, F: tl.constexpr):
    acc = 0
    for i in tl.range(0, 4, loop_unroll_factor=F):
        acc = acc * 10 + i
    tl.store(out, acc)


def test_constant_trips_fold_the_loops_that_run_once_or_never() -> None:
    # 4 trips: F=4 and F=3 unroll into copies that run once (and one left over for 3),
    # which fold inlines; F=2 keeps a loop of two trips and nothing left over
    assert " for " not in fixed_trips.compile("*i32", constants=dict(F=4)).asm["ir"]
    assert " for " not in fixed_trips.compile("*i32", constants=dict(F=3)).asm["ir"]
    assert fixed_trips.compile("*i32", constants=dict(F=2)).asm["ir"].count(" for ") == 1
    for f in (2, 3, 4):
        out = np.zeros(1, np.int32)
        fixed_trips.interpret[(1,)](out, F=f)
        assert out[0] == 123


@tlxc.jit
def dot_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K, BK, loop_unroll_factor=2):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(k + rk)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :], mask=(k + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("k", [16, 48, 64, 80])
def test_an_unrolled_dot_loop_computes_the_product(k: int) -> None:
    rng = np.random.default_rng(k)
    a = rng.standard_normal((64, k)).astype(np.float16)
    b = rng.standard_normal((k, 32)).astype(np.float16)
    c = np.zeros((64, 32), np.float32)
    dot_loop.interpret[(1,)](a, b, c, k, BM=64, BN=32, BK=16)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_sm90a_pipelines_the_unrolled_loop() -> None:
    ptx = dot_loop.compile("*fp16:16,*fp16:16,*fp32:16,i32:16", constants=dict(BM=64, BN=32, BK=16),
                           arch="sm_90a", num_warps=4, num_stages=3).asm["ptx"]
    first = ptx[ptx.index("$_for_head"):ptx.index("bra.uni $_for_head")]
    # two copies of the body: two wgmma groups and two iterations' copies per trip
    assert first.count("wgmma.commit_group") == 2 and "cp.async.cg.shared.global" in first
