"""``tlx.vote_ballot_sync`` and ``tlx.warp_redux`` on the GPU against the interpreter (the
ownership rule of ``ir/ops/warp.py``: lanes along dim 0, 32 rows per warp)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_warp_kernels as K  # noqa: E402  (tests/tlx/tlx_warp_kernels.py)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("rows,cols", [(64, 4), (256, 2), (32, 64)])
def test_ballot_like_the_interpreter(rows: int, cols: int) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).random((rows, cols)).astype(np.float32) ** 3
    want = np.zeros((rows, cols), np.int32)
    K.ballot_rows.interpret[(1,)](x, want, MASK=0xFFFF00FF, R=rows, C=cols)
    out = torch.zeros((rows, cols), dtype=torch.int32, device="cuda")
    K.ballot_rows[(1,)](torch.from_numpy(x).cuda(), out, MASK=0xFFFF00FF, R=rows, C=cols)
    assert np.array_equal(out.cpu().numpy(), want)


def test_thread_id_ballot() -> None:
    torch = pytest.importorskip("torch")
    out = torch.zeros(1, dtype=torch.int32, device="cuda")
    K.ballot_thread_id[(1,)](out, num_warps=1)
    assert out.item() == 0x0000FFFF


@pytest.mark.parametrize("op", ["max", "min", "abs_max", "abs_min"])
@pytest.mark.parametrize("rows,cols", [(128, 2), (32, 64)])
def test_float_redux_like_the_interpreter(op: str, rows: int, cols: int) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    want = np.zeros_like(x)
    K.redux_rows.interpret[(1,)](x, want, OP=op, R=rows, C=cols)
    out = torch.zeros((rows, cols), dtype=torch.float32, device="cuda")
    K.redux_rows[(1,)](torch.from_numpy(x).cuda(), out, OP=op, R=rows, C=cols)
    assert np.array_equal(out.cpu().numpy(), want)


@pytest.mark.parametrize("op", ["add", "min", "max", "and", "or", "xor"])
def test_integer_redux_like_the_interpreter(op: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(6).integers(-2**31, 2**31, (64, 2), dtype=np.int64).astype(np.int32)
    want = np.zeros_like(x)
    K.redux_rows.interpret[(1,)](x, want, OP=op, R=64, C=2)
    out = torch.zeros((64, 2), dtype=torch.int32, device="cuda")
    K.redux_rows[(1,)](torch.from_numpy(x).cuda(), out, OP=op, R=64, C=2)
    assert np.array_equal(out.cpu().numpy(), want)
