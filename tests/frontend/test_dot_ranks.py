"""``tl.dot`` of tiles with several batch dimensions, and ``tl.trans`` without dims on
N-D tiles, as Triton takes them (its test_core ``test_dot_multidim``): the leading axes
merge into one batch for the dot and come back; ``tl.trans(x)`` swaps the last two axes."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def multidim_dot(x_ptr, y_ptr, z_ptr, RANK: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr,
                 ACC: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 64 << RANK)).reshape([2] * (RANK - 2) + [16, 16])
    y = tl.load(y_ptr + tl.arange(0, 64 << RANK)).reshape([2] * (RANK - 2) + [16, 16])
    if TRANS_A:
        x = tl.trans(x)
    if TRANS_B:
        y = tl.trans(y)
    if ACC:
        z = tl.dot(x, y, tl.full([2] * (RANK - 2) + [16, 16], 1.0, tl.float32))
    else:
        z = tl.dot(x, y)
    tl.store(z_ptr + tl.arange(0, 64 << RANK), z.reshape([64 << RANK]))


@pytest.mark.parametrize("rank", [2, 3, 4, 5])
@pytest.mark.parametrize("trans_a, trans_b, acc", [(False, False, False), (True, False, True), (False, True, False),
                                                   (True, True, True)])
def test_multidim_dots(rank: int, trans_a: bool, trans_b: bool, acc: bool) -> None:
    shape = (2,) * (rank - 2) + (16, 16)
    rng = np.random.default_rng(rank)
    a = rng.integers(-4, 5, shape).astype(np.float16)
    b = rng.integers(-4, 5, shape).astype(np.float16)
    z = np.zeros(shape, np.float32)
    multidim_dot.interpret[(1,)](a, b, z, RANK=rank, TRANS_A=trans_a, TRANS_B=trans_b, ACC=acc)
    x = np.swapaxes(a, -1, -2) if trans_a else a
    y = np.swapaxes(b, -1, -2) if trans_b else b
    want = np.matmul(x.astype(np.float32), y.astype(np.float32)) + (1.0 if acc else 0.0)
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx950"])
def test_a_rank_5_dot_compiles(arch: str) -> None:
    ck = multidim_dot.compile("*fp16:16,*fp16:16,*fp32:16", {"RANK": 5, "TRANS_A": True, "TRANS_B": False,
                                                            "ACC": True}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm") else "amdgcn"]


@tlxc.jit
def trans_1d(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), tl.trans(tl.load(x_ptr + tl.arange(0, 16))))


def test_trans_of_a_1d_tile_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        trans_1d.compile("*fp32")
    assert info.value.code == "TLXC-SHAPE-003" and "2 or more dimensions" in info.value.message
