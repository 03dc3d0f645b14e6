"""Float max/min reductions are NaN when any element is, on the GPU as in the interpreter
(``np.max``'s rule; ``max.NaN.f32`` in the PTX)."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.gpu


@tlxc.jit
def extremes(x, y, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.store(y, tl.max(v, axis=0))
    tl.store(y + 1, tl.min(v, axis=0))


@pytest.mark.parametrize("where", [None, 0, 77, 255])
def test_max_and_min_see_a_nan(where: int | None) -> None:
    torch = pytest.importorskip("torch")
    host = np.random.default_rng(1).standard_normal(256).astype(np.float32)
    if where is not None:
        host[where] = np.nan
    want = np.zeros(2, np.float32)
    extremes.interpret[(1,)](host.copy(), want, N=256)
    x, y = torch.from_numpy(host).cuda(), torch.zeros(2, device="cuda")
    extremes[(1,)](x, y, N=256)
    np.testing.assert_array_equal(y.cpu().numpy(), want)
    assert np.isnan(want).all() == (where is not None)
