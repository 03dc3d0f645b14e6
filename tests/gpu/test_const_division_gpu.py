"""Integer ``//`` and ``%`` by constants (multiply-high and shifts, not ``div``) on the GPU,
against the interpreter, for both signs of dividend and divisor, the extremes of each
type, and dividends known non-negative (a loop counter)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from test_const_division import divide_by_constants as divide  # noqa: E402  (tests/codegen)

pytestmark = pytest.mark.gpu


@tlxc.jit
def count_stages(out_ptr, n, STAGES: tl.constexpr):
    for i in range(n):  # i >= 0: divided as unsigned
        tl.store(out_ptr + 2 * i, i % STAGES)
        tl.store(out_ptr + 2 * i + 1, (i // STAGES) & 1)


@pytest.mark.parametrize("np_dtype", [np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("d", [3, 7, 10, 64, 641, 1000, -3, -7, -64, -1000])
def test_division_by_a_constant_matches_the_interpreter(np_dtype: type, d: int) -> None:
    torch = pytest.importorskip("torch")
    if d < 0 and np.iinfo(np_dtype).min == 0:
        pytest.skip("a negative divisor of an unsigned type")
    info = np.iinfo(np_dtype)
    rng = np.random.default_rng(abs(d))
    x = rng.integers(info.min, info.max, 1024, dtype=np_dtype, endpoint=True)
    x[:6] = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
    q = np.zeros_like(x)
    r = np.zeros_like(x)
    divide.interpret[(1,)](x, q, r, D=d, N=1024)
    tx = torch.from_numpy(x.view(np.int64 if x.itemsize == 8 else np.int32)).cuda()
    gq, gr = torch.zeros_like(tx), torch.zeros_like(tx)
    t = {np.int32: tl.int32, np.uint32: tl.uint32, np.int64: tl.int64, np.uint64: tl.uint64}[np_dtype]
    divide[(1,)](tlxc.reinterpret(tx, t), tlxc.reinterpret(gq, t), tlxc.reinterpret(gr, t), D=d, N=1024)
    assert np.array_equal(gq.cpu().numpy().view(np_dtype), q)
    assert np.array_equal(gr.cpu().numpy().view(np_dtype), r)


def test_a_ring_counter_divides_by_its_stages() -> None:
    torch = pytest.importorskip("torch")
    out = torch.zeros(2 * 1000, dtype=torch.int32, device="cuda")
    count_stages[(1,)](out, 1000, STAGES=3)
    i = np.arange(1000)
    want = np.stack([i % 3, (i // 3) & 1], 1).reshape(-1)
    assert np.array_equal(out.cpu().numpy(), want)
