"""``tl.dot(..., out_dtype=tl.float16)`` on the GPU (wgmma ``.f16`` accumulators on
sm_90a, and ``mma.sync ... .f16.f16.f16.f16`` where wgmma does not fit) against an fp32
reference, within what f16 accumulation loses."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from test_dot_f16_accumulator import _inputs, dot_loop  # noqa: E402  (tests/frontend)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("m, n, k, kt, warps", [
    (64, 64, 32, 3, 4), (128, 128, 64, 4, 4), (128, 256, 64, 2, 8),  # wgmma .f16
    (32, 64, 32, 3, 4), (64, 64, 64, 2, 2)])                           # mma.sync .f16 (M = 32; 2 warps)
def test_f16_accumulator_on_the_gpu(m: int, n: int, k: int, kt: int, warps: int) -> None:
    torch = pytest.importorskip("torch")
    a, b = _inputs(m, n, k * kt)
    c = torch.zeros((m, n), dtype=torch.float16, device="cuda")
    dot_loop[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, kt, M=m, N=n, K=k,
                   num_warps=warps)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.float().cpu().numpy(), want, rtol=1e-2, atol=2e-2)
