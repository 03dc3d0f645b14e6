"""Small ``tl.dot`` tiles (M or N under 16, K one MMA step) on the GPU against float64."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from test_small_dots import CASES, inputs, small_dot  # noqa: E402  (tests/frontend)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("warps", [1, 4])
@pytest.mark.parametrize("dt, sig, m, n, k", CASES)
def test_small_dots_on_the_gpu(dt: type, sig: str, m: int, n: int, k: int, warps: int) -> None:
    torch = pytest.importorskip("torch")
    a, b, c = inputs(dt, m, n, k)
    out = torch.from_numpy(c).cuda()
    small_dot[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), out, M=m, N=n, K=k, num_warps=warps)
    np.testing.assert_allclose(out.cpu().numpy(), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("rank", [4, 5])
def test_multidim_dots_on_the_gpu(rank: int) -> None:
    torch = pytest.importorskip("torch")
    from test_dot_ranks import multidim_dot  # tests/frontend

    shape = (2,) * (rank - 2) + (16, 16)
    rng = np.random.default_rng(rank)
    a = rng.integers(-4, 5, shape).astype(np.float16)
    b = rng.integers(-4, 5, shape).astype(np.float16)
    z = torch.zeros(shape, dtype=torch.float32, device="cuda")
    multidim_dot[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), z, RANK=rank, TRANS_A=True,
                       TRANS_B=False, ACC=True)
    want = np.matmul(np.swapaxes(a, -1, -2).astype(np.float32), b.astype(np.float32)) + 1.0
    np.testing.assert_array_equal(z.cpu().numpy(), want)
