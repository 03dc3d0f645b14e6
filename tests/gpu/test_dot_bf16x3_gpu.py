"""fp32 ``tl.dot`` at bf16x3 / bf16x6 on the GPU (bf16 tensor-core dots on split operands:
``ir/passes/split_f32_dot.py``) against a float64 reference, within the split's accuracy,
on wgmma (M = 64) and on mma.sync (M = 32)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from test_dot_bf16x3 import dot_f32  # noqa: E402  (tests/frontend)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("m", [64, 32])
@pytest.mark.parametrize("precision, bits", [("bf16x3", 16), ("bf16x6", 23)])
def test_split_dot_on_the_gpu(m: int, precision: str, bits: int) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(bits + m)
    a = rng.standard_normal((m, 64)).astype(np.float32)
    b = rng.standard_normal((64, 64)).astype(np.float32)
    c = rng.standard_normal((m, 64)).astype(np.float32)
    out = torch.from_numpy(c).cuda()
    dot_f32[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), out, M=m, N=64, K=64, P=precision)
    got = out.cpu().numpy().astype(np.float64)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    scale = np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(c)
    assert np.all(np.abs(got - want) <= scale * 2.0 ** -bits * 4 + 1e-6)
