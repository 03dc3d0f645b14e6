"""Clusters on the H200: ranks, rows exchanged through a peer's shared memory (st.async
on the peer's barrier, plain remote stores between cluster barriers), a remote mbarrier
arrive, and one TMA load multicast to both CTAs of a pair."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_cluster_kernels as K  # noqa: E402  (tests/tlx/tlx_cluster_kernels.py)

import tlxc  # noqa: E402

pytestmark = pytest.mark.gpu
PAIR = (2, 1, 1)


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def test_ranks(torch: Any) -> None:
    out = torch.zeros((8, 2), device="cuda", dtype=torch.int32)
    K.ranks[(4, 2)](out, ctas_per_cga=(2, 2, 1))
    got = out.cpu().tolist()
    assert [r for r, _ in got] == [0, 1, 0, 1, 2, 3, 2, 3] and {n for _, n in got} == {4}


@pytest.mark.parametrize("kernel,expect", [("swap_async", lambda x: 2 * x), ("swap_sync", lambda x: x + 1)])
def test_pairs_swap_rows_through_each_others_shared_memory(torch: Any, kernel: str, expect: Any) -> None:
    n, programs = 256, 8
    x = torch.randn((programs, n), device="cuda")
    y = torch.zeros_like(x)
    getattr(K, kernel)[(programs,)](x, y, N=n, ctas_per_cga=PAIR)
    torch.cuda.synchronize()
    swapped = x.view(programs // 2, 2, n).flip(1).reshape(programs, n)
    torch.testing.assert_close(y, expect(swapped), rtol=0, atol=0)


def test_arrive_remote_wait_local(torch: Any) -> None:
    n = 128
    x = torch.randn((2, n), device="cuda")
    y = torch.zeros((1, n), device="cuda")
    K.remote_arrive[(2,)](x, y, N=n, ctas_per_cga=PAIR)
    torch.cuda.synchronize()
    torch.testing.assert_close(y[0], x[1], rtol=0, atol=0)


def test_one_tma_load_lands_in_both_ctas(torch: Any) -> None:
    a = torch.randn((64, 64), device="cuda", dtype=torch.float16)
    y = torch.zeros((2, 64, 64), device="cuda", dtype=torch.float16)
    K.multicast_tile[(2,)](tlxc.TensorDescriptor.from_tensor(a, [64, 64]), y, BM=64, BN=64, ctas_per_cga=PAIR)
    torch.cuda.synchronize()
    torch.testing.assert_close(y[0], a, rtol=0, atol=0)
    torch.testing.assert_close(y[1], a, rtol=0, atol=0)


NUM_CTAS = """
@tlxc.jit
def count_and_fill(out, hits, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(out + offs, offs.to(tl.float32) + tl.num_programs(0) * 0.0)
    tl.atomic_add(hits + tl.program_id(0), 1)  # once per program, not once per CTA of its cluster
"""


@pytest.mark.parametrize("num_ctas", [2, 4])
def test_num_ctas_runs_each_program_once(torch: Any, load_kernels: Any, num_ctas: int) -> None:
    """Triton's num_ctas: a program is a cluster of num_ctas CTAs and runs once."""
    m = load_kernels(NUM_CTAS)
    out = torch.zeros(5 * 128, device="cuda")
    hits = torch.zeros(5, device="cuda", dtype=torch.int32)
    m.count_and_fill[(5,)](out, hits, N=128, num_ctas=num_ctas)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.arange(5 * 128, device="cuda", dtype=torch.float32))
    assert hits.cpu().tolist() == [1] * 5
