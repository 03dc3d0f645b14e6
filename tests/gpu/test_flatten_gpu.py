"""``tl.range(flatten=True)`` on the GPU (``pytest -m gpu``): the persistent matmul of
``tests/passes/test_flatten_loops.py``, its tile loop fused with its K loop, pipelined
(cp.async ring, wgmma in flight across tiles) against torch."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.gpu

_spec = importlib.util.spec_from_file_location(
    "flatten_kernels", Path(__file__).resolve().parents[1] / "passes" / "test_flatten_loops.py")
assert _spec is not None and _spec.loader is not None
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.mark.parametrize("mnk", [(1024, 768, 512), (1000, 520, 300), (256, 256, 64), (384, 256, 0)])
@pytest.mark.parametrize("cfg", [(128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (64, 64, 32, 4, 4)])
def test_persistent_matmul_flattened(torch: Any, mnk: tuple[int, int, int], cfg: tuple[int, ...]) -> None:
    m, n, k = mnk
    bm, bn, bk, warps, stages = cfg
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), 7.0, device="cuda", dtype=torch.float16)
    sms = 7
    _mod.persistent_mm[(sms,)](a, b, c, m, n, k, k, n, n, BM=bm, BN=bn, BK=bk, NUM_SMS=sms, FLATTEN=True,
                               num_warps=warps, num_stages=stages)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=5e-2)
