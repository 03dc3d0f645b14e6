"""Scans on the GPU give the interpreter's numbers (tests/frontend/test_scan.py has the
kernels and checks those against numpy)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
import test_scan as K  # noqa: E402  (tests/frontend/test_scan.py)

pytestmark = pytest.mark.gpu


def _same(kernel: Any, arrays: list[np.ndarray], outs: list[int], **constants: Any) -> None:
    torch = pytest.importorskip("torch")
    want = [a.copy() for a in arrays]
    kernel.interpret[(1,)](*want, **constants)
    dev = [torch.from_numpy(a.copy()).cuda() for a in arrays]
    kernel[(1,)](*dev, **constants)
    for i in outs:
        np.testing.assert_array_equal(dev[i].cpu().numpy(), want[i])


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(8, 32), (64, 16), (2, 128)])
def test_cumsum_2d(dtype: Any, axis: int, reverse: bool, shape: tuple[int, int]) -> None:
    x = np.random.default_rng(1).integers(-50, 50, shape).astype(dtype)
    _same(K.cumsum_2d, [x, np.zeros_like(x)], [1], M=shape[0], N=shape[1], AXIS=axis, REVERSE=reverse)


@pytest.mark.parametrize("n", [16, 128, 1024])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_1d(n: int, reverse: bool) -> None:
    x = np.random.default_rng(2).integers(-9, 9, n).astype(np.float32)
    _same(K.cumsum_1d, [x, np.zeros_like(x)], [1], N=n, REVERSE=reverse)


def test_cumprod_and_tuples() -> None:
    rng = np.random.default_rng(3)
    x = rng.choice(np.array([-1.0, 0.5, 1.0, 2.0], np.float32), (4, 8))
    _same(K.cumprod_2d, [x, np.zeros_like(x)], [1], M=4, N=8, AXIS=1, REVERSE=True)
    v = rng.integers(0, 10, (4, 16)).astype(np.float32)
    _same(K.running_argmax, [v, np.zeros_like(v), np.zeros(v.shape, np.int32)], [1, 2], M=4, N=16)
    a = rng.choice(np.array([0.5, 1.0, -1.0, 2.0], np.float32), 32)
    b = rng.integers(-4, 4, 32).astype(np.float32)
    for reverse in (False, True):
        _same(K.linear_recurrence, [a, b, np.zeros(32, np.float32)], [2], N=32, REVERSE=reverse)
    s = np.random.default_rng(4).integers(-100, 100, 16).astype(np.int32)
    _same(K.running_max, [s, np.zeros_like(s)], [1], N=16)
