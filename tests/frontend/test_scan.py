"""Scans: ``tl.cumsum``, ``tl.cumprod``, ``tl.associative_scan`` and the methods
``x.cumsum`` / ``x.cumprod``: numbers in the interpreter against numpy, and the errors
for bad input at the user's line. (Generated code: tests/codegen/test_scan_codegen.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def cumsum_2d(x, y, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    v = tl.load(x + offs)
    tl.store(y + offs, tl.cumsum(v, AXIS, reverse=REVERSE))


@tlxc.jit
def cumprod_2d(x, y, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    v = tl.load(x + offs)
    tl.store(y + offs, v.cumprod(axis=AXIS, reverse=REVERSE))


@tlxc.jit
def cumsum_1d(x, y, N: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.load(x + offs).cumsum(0, REVERSE))


def _ref_scan(x: np.ndarray, axis: int, reverse: bool, fn: Any) -> np.ndarray:
    if reverse:
        return np.flip(fn(np.flip(x, axis), axis=axis), axis)
    return fn(x, axis=axis)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_2d(dtype: Any, axis: int, reverse: bool) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 50, (8, 32)).astype(dtype)
    y = np.zeros_like(x)
    cumsum_2d.interpret[(1,)](x, y, M=8, N=32, AXIS=axis, REVERSE=reverse)
    want = _ref_scan(x, axis, reverse, np.cumsum).astype(dtype)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_1d(reverse: bool) -> None:
    x = np.arange(1, 129, dtype=np.float32)
    y = np.zeros_like(x)
    cumsum_1d.interpret[(1,)](x, y, N=128, REVERSE=reverse)
    np.testing.assert_array_equal(y, _ref_scan(x, 0, reverse, np.cumsum))
    assert y[0 if reverse else -1] == 128 * 129 / 2


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_2d(axis: int, reverse: bool) -> None:
    rng = np.random.default_rng(2)
    x = rng.choice(np.array([-1.0, 0.5, 1.0, 2.0], np.float32), (4, 8))
    y = np.zeros_like(x)
    cumprod_2d.interpret[(1,)](x, y, M=4, N=8, AXIS=axis, REVERSE=reverse)
    np.testing.assert_array_equal(y, _ref_scan(x, axis, reverse, np.cumprod))


@tlxc.jit
def cumsum_int8(x, y, N: tl.constexpr):
    offs = tl.arange(0, N)
    s = tl.cumsum(tl.load(x + offs), 0)
    tl.static_assert(s.dtype == tl.int32)
    tl.store(y + offs, s)


def test_cumsum_of_int8_promotes_to_int32() -> None:
    x = np.full(64, 100, np.int8)  # 6400 does not fit in int8
    y = np.zeros(64, np.int32)
    cumsum_int8.interpret[(1,)](x, y, N=64)
    np.testing.assert_array_equal(y, np.arange(1, 65) * 100)


@tlxc.jit
def _argmax_combine(v0, i0, v1, i1):
    # the later position wins only when strictly larger: the first maximum is kept
    take = v1 > v0
    return tl.where(take, v1, v0), tl.where(take, i1, i0)


@tlxc.jit
def running_argmax(x, vals, idxs, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    v = tl.load(x + offs)
    i = tl.broadcast_to(tl.arange(0, N)[None, :], (M, N))
    mv, mi = tl.associative_scan((v, i), 1, _argmax_combine)
    tl.store(vals + offs, mv)
    tl.store(idxs + offs, mi)


def test_associative_scan_running_argmax() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 10, (4, 16)).astype(np.float32)
    vals, idxs = np.zeros_like(x), np.zeros(x.shape, np.int32)
    running_argmax.interpret[(1,)](x, vals, idxs, M=4, N=16)
    np.testing.assert_array_equal(vals, np.maximum.accumulate(x, axis=1))
    want = np.array([[int(np.argmax(row[:j + 1])) for j in range(16)] for row in x])
    np.testing.assert_array_equal(idxs, want)


@tlxc.jit
def _affine_combine(a0, b0, a1, b1):
    # x -> a0 x + b0 then x -> a1 x + b1
    return a1 * a0, a1 * b0 + b1


@tlxc.jit
def linear_recurrence(a, b, h, N: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    _, hs = tl.associative_scan((tl.load(a + offs), tl.load(b + offs)), axis=0, combine_fn=_affine_combine,
                                reverse=REVERSE)
    tl.store(h + offs, hs)


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_linear_recurrence(reverse: bool) -> None:
    rng = np.random.default_rng(4)
    a = rng.choice(np.array([0.5, 1.0, -1.0, 2.0], np.float32), 32)
    b = rng.integers(-4, 4, 32).astype(np.float32)
    h = np.zeros(32, np.float32)
    linear_recurrence.interpret[(1,)](a, b, h, N=32, REVERSE=reverse)
    want, acc = np.zeros(32, np.float32), np.float32(0)
    for i in (range(31, -1, -1) if reverse else range(32)):  # h_i = a_i h_prev + b_i, h_prev = 0 at the start
        acc = a[i] * acc + b[i]
        want[i] = acc
    np.testing.assert_array_equal(h, want)


@tlxc.jit
def _max_combine(a, b):
    if a > b:  # an if on the values: a select in the region
        return a
    return b


@tlxc.jit
def running_max(x, y, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y + offs, tl.associative_scan(tl.load(x + offs), -1, _max_combine))


def test_associative_scan_with_an_if_and_a_single_tensor() -> None:
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6] * 2, np.int32)
    y = np.zeros_like(x)
    running_max.interpret[(1,)](x, y, N=16)
    np.testing.assert_array_equal(y, np.maximum.accumulate(x))


# -- errors -----------------------------------------------------------------------------------

BAD = {
    "not_jit": ("tl.associative_scan(v, 0, abs)", "TLXC-CALL-002",
                "tl.associative_scan combines with a @tlxc.jit function"),
    "arity": ("tl.associative_scan(v, 0, three)", "TLXC-CALL-002",
              "the combine function three must take 2 values"),
    "axis": ("tl.cumsum(v, 1)", "TLXC-SHAPE-003", "axis 1 is out of range for a tile of rank 1"),
    "axis_scan": ("tl.associative_scan(v, -2, add)", "TLXC-SHAPE-003", "axis -2 is out of range"),
    "shapes": ("tl.associative_scan((v, w), 0, add2)", "TLXC-SHAPE-001",
               "the scanned tiles must have one shape, got [16] and [8]"),
    "scalar": ("tl.cumprod(s, 0)", "TLXC-TYPE-001", "tl.cumprod scans tiles"),
    "type": ("tl.associative_scan(v, 0, widen)", "TLXC-TYPE-002", "widen returns f64 for a scan of f32"),
    "effects": ("tl.associative_scan(v, 0, asserts)", "TLXC-CALL-002", "'assert' in asserts is not an elementwise"),
    "count": ("tl.associative_scan((v, v), 0, add2one)", "TLXC-TYPE-002", "add2one returns 1 value(s) for 2"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input(load_kernels: Any, name: str) -> None:
    expr, code, message = BAD[name]
    m = load_kernels(f"""
@tlxc.jit
def add(a, b):
    return a + b

@tlxc.jit
def add2(a, b, c, d):
    return a + c, b + d

@tlxc.jit
def add2one(a, b, c, d):
    return a + c

@tlxc.jit
def three(a, b, c):
    return a

@tlxc.jit
def widen(a, b):
    return a.to(tl.float64) + b

@tlxc.jit
def asserts(a, b):
    tl.device_assert(a == a)  # ERR
    return a + b

@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    w = tl.load(x + tl.arange(0, 8))
    s = tl.load(x)
    r = {expr}
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    err = info.value
    assert err.code == code, str(err)
    assert message in str(err), str(err)
    # the user's line: the call, or the line in the combine function that breaks the rule
    line = "tl.device_assert(a == a)" if name == "effects" else f"r = {expr}"
    assert f"    {line}" in str(err).splitlines()[1], str(err)
