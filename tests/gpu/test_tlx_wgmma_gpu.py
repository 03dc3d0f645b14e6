"""``tlx.async_dot`` (wgmma) and TMA variants on the GPU (``pytest -m gpu``, sm_90): the
cases of tests/tlx/tlx_wgmma_kernels.py launched on torch tensors with the same
arguments as the interpreter tests (``run_case``), against a float64 reference of the
same inputs, at tolerances for the operand types (int8: exact)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_wgmma_kernels as W  # noqa: E402  (tests/tlx/tlx_wgmma_kernels.py)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch() -> Any:
    t = pytest.importorskip("torch")
    if t.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma and TMA need sm_90")
    return t


@pytest.mark.parametrize("name", sorted(W.CASES))
def test_async_dot_case(torch: Any, name: str) -> None:
    W.check_case(name, torch)
