"""``tlx.vote_ballot_sync`` and ``tlx.warp_redux``: the interpreter against numpy under
tlxc's ownership rule (lanes run along dim 0, 32 rows per warp: ``ir/ops/warp.py``), the
PTX on both NVIDIA targets, ptxas, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tlx_warp_kernels as K  # tests/tlx/tlx_warp_kernels.py

import tlxc
from tlxc.ir.ops.warp import WARP_LANES


def _ballot_numpy(pred: np.ndarray, mask: int) -> np.ndarray:
    """The rule written out by hand: a lane votes for its row, a group's rows get the word."""
    rows = pred.reshape(pred.shape[0], -1).any(axis=1)
    out = np.zeros(pred.shape[0], np.uint32)
    for g in range(pred.shape[0] // WARP_LANES):
        word = 0
        for lane in range(WARP_LANES):
            if rows[g * WARP_LANES + lane]:
                word |= 1 << lane
        out[g * WARP_LANES:(g + 1) * WARP_LANES] = word & mask
    return np.broadcast_to(out.reshape((-1,) + (1,) * (pred.ndim - 1)), pred.shape)


def _redux_numpy(x: np.ndarray, op: str) -> np.ndarray:
    out = np.empty_like(x)
    for g in range(x.shape[0] // WARP_LANES):
        rows = x[g * WARP_LANES:(g + 1) * WARP_LANES]
        if op.startswith("abs_"):
            rows = np.abs(rows)
        red = {"max": np.nanmax, "min": np.nanmin, "abs_max": np.nanmax, "abs_min": np.nanmin}.get(op)
        if red is not None:
            col = red(rows, axis=0)
        elif op == "add":
            col = rows.astype(np.int64).sum(axis=0).astype(x.dtype)
        else:
            fn = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
                  "xor": np.bitwise_xor}[op]
            col = fn.reduce(rows, axis=0)
        out[g * WARP_LANES:(g + 1) * WARP_LANES] = col
    return out


# -- interpreter ------------------------------------------------------------------------------
@pytest.mark.parametrize("mask", [0xFFFFFFFF, 0x0000FFFF, 0x80000001])
def test_ballot_of_a_tile_in_the_interpreter(mask: int) -> None:
    x = np.random.default_rng(1).random((64, 4)).astype(np.float32) ** 3  # rows with no vote too
    out = np.zeros((64, 4), np.int32)
    K.ballot_rows.interpret[(1,)](x, out, MASK=mask, R=64, C=4)
    want = _ballot_numpy(x > 0.5, mask)
    assert np.array_equal(out.view(np.uint32), want)
    assert len(np.unique(out[:32])) == 1 and out[0, 0] != out[32, 0]  # one word per warp row group


def test_ballot_of_a_1d_tile_is_per_32_elements() -> None:
    x = np.zeros(64, np.bool_)
    x[[0, 3, 31, 33]] = True
    out = np.zeros(64, np.int32)
    K.ballot_1d.interpret[(1,)](x, out, R=64)
    assert (out[:32].view(np.uint32) == (1 | 1 << 3 | 1 << 31)).all()
    assert (out[32:] == 1 << 1).all()


@pytest.mark.parametrize("flag,want", [(1, 0x0F0F0F0F), (0, 0)])
def test_ballot_of_a_uniform_scalar(flag: int, want: int) -> None:
    out = np.zeros(1, np.int32)
    K.ballot_scalar.interpret[(1,)](np.int32(flag), out)
    assert out.view(np.uint32)[0] == want


@pytest.mark.interpreter_only  # an interpreter diagnostic: on a GPU the ballot just runs
def test_ballot_of_a_thread_id_is_refused_by_the_interpreter() -> None:
    with pytest.raises(tlxc.InterpreterError, match="thread_id"):
        K.ballot_thread_id.interpret[(1,)](np.zeros(1, np.int32))


@pytest.mark.parametrize("op", ["max", "min", "abs_max", "abs_min"])
def test_float_redux_in_the_interpreter(op: str) -> None:
    x = np.random.default_rng(2).standard_normal((128, 2)).astype(np.float32)
    x[5, 0] = np.nan  # skipped, as redux.sync without .NaN does
    out = np.zeros_like(x)
    K.redux_rows.interpret[(1,)](x, out, OP=op, R=128, C=2)
    want = _redux_numpy(x, op)
    assert np.array_equal(out, want)
    assert not np.isnan(out).any()
    assert out[0, 0] == out[31, 0] and out[0, 0] != out[32, 0]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("op", ["add", "min", "max", "and", "or", "xor"])
def test_integer_redux_in_the_interpreter(op: str, dtype: Any) -> None:
    x = np.random.default_rng(3).integers(-2**31, 2**31, (64, 2), dtype=np.int64).astype(dtype)
    out = np.zeros_like(x)
    K.redux_rows.interpret[(1,)](x, out, OP=op, R=64, C=2)
    assert np.array_equal(out, _redux_numpy(x, op))


def test_integer_add_wraps() -> None:
    x = np.full((32, 1), 2**30, np.int32)
    out = np.zeros_like(x)
    K.redux_rows.interpret[(1,)](x, out, OP="add", R=32, C=1)
    assert (out == 0).all()  # 32 * 2**30 = 2**35 wraps to 0


# -- errors -------------------------------------------------------------------------------------
def _error(kernel: Any, **constants: Any) -> tlxc.CompilationError:
    with pytest.raises(tlxc.CompilationError) as info:
        kernel.compile(signature={"x": "*fp32", "out": "*fp32"}, constants=constants, arch="sm_90a")
    return info.value


def test_rows_that_are_not_whole_warps_are_an_error() -> None:
    err = _error(K.redux_rows, OP="max", R=16, C=2)
    assert err.code == "TLXC-SHAPE-003" and "not a multiple of 32" in str(err)
    assert "tlx.warp_redux(tl.load(x + r * C + c), OP)" in str(err)


def test_an_unknown_redux_op_is_an_error() -> None:
    err = _error(K.redux_rows, OP="add", R=32, C=2)
    assert err.code == "TLXC-CALL-002" and "'max', 'min', 'abs_max', 'abs_min'" in str(err)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1250"])
def test_warp_ops_are_nvidia_only(arch: str) -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        ck = K.redux_rows.compile(signature={"x": "*fp32", "out": "*fp32"},
                                  constants={"OP": "max", "R": 64, "C": 2}, arch=arch)
        ck.asm["llir"]
    assert info.value.code == "TLXC-TLX-006" and "tlx.warp_redux" in str(info.value)
    assert "tlx.warp_redux(tl.load(x + r * C + c), OP)" in str(info.value)
