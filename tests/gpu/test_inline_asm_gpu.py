"""``tl.inline_asm_elementwise`` on the GPU: the snippets compute what they say."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import inline_asm_kernels as K  # noqa: E402  (tests/inline_asm_kernels.py)

pytestmark = pytest.mark.gpu


def test_add_and_convert() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(-100, 156, dtype=torch.int32, device="cuda")
    y = torch.zeros(256, dtype=torch.float32, device="cuda")
    K.add_and_convert[(1,)](x, y, BLOCK=256)
    assert torch.equal(y, (x + 7).float())


def test_two_results() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(64, device="cuda")
    lo = torch.zeros(64, dtype=torch.int32, device="cuda")
    hi = torch.zeros(64, dtype=torch.int32, device="cuda")
    K.two_results[(1,)](x, lo, hi, BLOCK=64)
    bits = x.cpu().numpy().view(np.uint32)
    assert np.array_equal(lo.cpu().numpy(), (bits & 0xFFFF).astype(np.int32))
    assert np.array_equal(hi.cpu().numpy(), (bits >> 16).astype(np.int32))


def test_impure_snippet_without_operands() -> None:
    torch = pytest.importorskip("torch")
    y = torch.zeros(1, device="cuda")
    K.sleep_then_store[(1,)](y)
    assert y.item() == 1.0
