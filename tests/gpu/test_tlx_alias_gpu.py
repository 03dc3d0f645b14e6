"""storage_alias_spec aliases and pinned shared layouts on the GPU (``pytest -m gpu``):
the kernels of tests/tlx/tlx_alias_kernels.py give the interpreter's results (which
tests/tlx/test_tlx_alias_interpreter.py checks against numpy)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_alias_kernels as K  # noqa: E402  (tests/tlx/tlx_alias_kernels.py)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def _both(torch: Any, kernel: Any, arrays: list[np.ndarray], scalars: list[int], **constants: int) -> None:
    """Run ``kernel`` in the interpreter and on the GPU; every array must agree."""
    host = [a.copy() for a in arrays]
    kernel.interpret[(1,)](*host, *scalars, **constants)
    dev = [torch.from_numpy(a.copy()).cuda() for a in arrays]
    kernel[(1,)](*dev, *scalars, **constants)
    for want, got in zip(host, dev):
        np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_shared_and_distinct_groups(torch: Any) -> None:
    x = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    _both(torch, K.shared_overlap, [x, np.zeros_like(x)], [], B=64)
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    _both(torch, K.distinct_overlap, [x, np.zeros((2, 32, 32), np.float32), np.zeros((4, 32, 32), np.float32)],
          [], B=32)


def test_nested_groups_and_runtime_indices(torch: Any) -> None:
    x = np.random.default_rng(0).random((2, 64, 64)).astype(np.float32)
    _both(torch, K.nested_group_size, [x, np.zeros((4, 64, 32), np.float16), np.zeros((2, 64, 1), np.float32)],
          [], B=64)
    x = np.random.default_rng(1).random((6, 128)).astype(np.float32)
    _both(torch, K.runtime_index_alias, [x, np.zeros_like(x)], [6], B=128)


@pytest.mark.parametrize("kind", range(5))
def test_pinned_layouts(torch: Any, kind: int) -> None:
    x = np.random.default_rng(kind).standard_normal((64, 64)).astype(np.float16)
    _both(torch, K.pinned_store_load, [x, np.zeros_like(x)], [], R=64, C=64, KIND=kind)
