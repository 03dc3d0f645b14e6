"""Shape ops, reductions and dot under the interpreter."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from interp_kernels import KernelBuilder, run

from tlxc.interpreter import numerics
from tlxc.ir import Value
from tlxc.ir import types as T
from tlxc.ir.ops import arith as A
from tlxc.ir.ops import reduce as R
from tlxc.ir.ops import shape as S
from tlxc.ir.types import DType


def offsets_2d(kb: KernelBuilder, rows: int, cols: int, stride: int | None = None) -> Value:
    """``r * stride + c`` as a [rows, cols] i32 tile (row-major by default)."""
    r = kb.op(S.ExpandDimsOp, [kb.arange(rows)], T.tile([rows, 1], T.int32), axis=1)
    c = kb.op(S.ExpandDimsOp, [kb.arange(cols)], T.tile([1, cols], T.int32), axis=0)
    r = kb.binary(A.MulOp, r, kb.const(stride or cols, r.type))
    r = kb.op(S.BroadcastOp, [r], T.tile([rows, cols], T.int32))
    c = kb.op(S.BroadcastOp, [c], T.tile([rows, cols], T.int32))
    return kb.binary(A.AddOp, r, c)


def load_2d(kb: KernelBuilder, ptr: Value, rows: int, cols: int) -> Value:
    return kb.load(kb.ptrs(ptr, offsets_2d(kb, rows, cols)))


def store_nd(kb: KernelBuilder, ptr: Value, value: Value) -> None:
    """Store a tile of any shape as its row-major flattening."""
    n = value.type.numel if value.type.shape else 1
    if value.type.shape:
        flat = kb.op(S.ReshapeOp, [value], T.tile([n], value.type.scalar))
    else:
        flat = kb.splat(value, [1])
    kb.store(kb.ptrs(ptr, kb.arange(n)), flat)


def run_unary_tile(x: np.ndarray, dtype: DType, out_shape: tuple[int, ...], out_dtype: DType, build) -> np.ndarray:
    """Load 2-D ``x``, apply ``build(kb, tile) -> Value``, return the stored result."""
    kb = KernelBuilder([("x", T.pointer(dtype)), ("out", T.pointer(out_dtype))])
    tile = load_2d(kb, kb.args[0], *x.shape)
    store_nd(kb, kb.args[1], build(kb, tile))
    out = np.zeros(int(np.prod(out_shape)), T.numpy_dtype(out_dtype))
    run(kb.finish(), (1, 1, 1), [x, out])
    return out.reshape(out_shape)


X = np.arange(32, dtype=np.int32).reshape(4, 8)


def test_trans() -> None:
    got = run_unary_tile(X, T.int32, (8, 4), T.int32,
                         lambda kb, t: kb.op(S.TransOp, [t], T.tile([8, 4], T.int32), order=(1, 0)))
    np.testing.assert_array_equal(got, X.T)


def test_reshape_is_row_major() -> None:
    got = run_unary_tile(X, T.int32, (8, 4), T.int32,
                         lambda kb, t: kb.op(S.ReshapeOp, [t], T.tile([8, 4], T.int32)))
    np.testing.assert_array_equal(got, X.reshape(8, 4))


def test_join_and_split() -> None:
    def build(kb: KernelBuilder, t: Value) -> Value:
        j = kb.op(S.JoinOp, [t, kb.binary(A.MulOp, t, kb.const(10, t.type))], T.tile([4, 8, 2], T.int32))
        lo, hi = kb.ops(S.SplitOp, [j], [t.type, t.type])
        return kb.op(S.JoinOp, [hi, lo], j.type)

    got = run_unary_tile(X, T.int32, (4, 8, 2), T.int32, build)
    np.testing.assert_array_equal(got, np.stack([X * 10, X], axis=-1))


def test_splat_broadcast_expand_dims() -> None:
    def build(kb: KernelBuilder, t: Value) -> Value:
        row = kb.op(S.ExpandDimsOp, [kb.arange(8)], T.tile([1, 8], T.int32), axis=0)
        row = kb.op(S.BroadcastOp, [row], t.type)
        seven = kb.splat(kb.const(7, T.int32), [4, 8])
        return kb.binary(A.AddOp, kb.binary(A.AddOp, t, row), seven)

    got = run_unary_tile(X, T.int32, (4, 8), T.int32, build)
    np.testing.assert_array_equal(got, X + np.arange(8) + 7)


REDUCE_X = np.array([[3, -1, 7, 7], [2, 2, -5, 0], [9, 9, 9, 9], [-4, -8, -8, 1]], np.int32)


@pytest.mark.parametrize("kind,ref", [
    ("sum", np.sum), ("max", np.max), ("min", np.min),
    ("argmax", np.argmax), ("argmin", np.argmin), ("xor_sum", np.bitwise_xor.reduce),
])
@pytest.mark.parametrize("axis", [0, 1])
def test_reduce_int(kind, ref, axis) -> None:
    out_t = T.int32
    got = run_unary_tile(REDUCE_X, T.int32, (4,), out_t,
                         lambda kb, t: kb.op(R.ReduceOp, [t], T.tile([4], out_t), axis=axis, kind=kind))
    np.testing.assert_array_equal(got, ref(REDUCE_X, axis=axis))


def test_argmax_ties_pick_the_first() -> None:
    x = np.array([[1, 5, 5, 2], [7, 7, 7, 7], [0, -1, -1, 0], [4, 3, 4, 3]], np.int32)
    got = run_unary_tile(x, T.int32, (4,), T.int32,
                         lambda kb, t: kb.op(R.ReduceOp, [t], T.tile([4], T.int32), axis=1, kind="argmax"))
    np.testing.assert_array_equal(got, [1, 0, 0, 0])
    got = run_unary_tile(x, T.int32, (4,), T.int32,
                         lambda kb, t: kb.op(R.ReduceOp, [t], T.tile([4], T.int32), axis=1, kind="argmin"))
    np.testing.assert_array_equal(got, [0, 0, 1, 1])


def test_reduce_to_scalar_and_wraparound() -> None:
    x = np.full((2, 2), 100, np.int8)
    got = run_unary_tile(x, T.int8, (1,), T.int8, lambda kb, t: kb.op(
        R.ReduceOp, [kb.op(R.ReduceOp, [t], T.tile([2], T.int8), axis=0, kind="sum")], T.int8, axis=0, kind="sum"))
    np.testing.assert_array_equal(got, [np.int8(400 - 512)])


def test_f16_sum_accumulates_in_f32() -> None:
    x = np.full((1, 4096), 1.0, np.float16)   # an f16 accumulator would stop at 2048
    got = run_unary_tile(x, T.float16, (1,), T.float16,
                         lambda kb, t: kb.op(R.ReduceOp, [t], T.tile([1], T.float16), axis=1, kind="sum"))
    assert got[0] == 4096.0


def test_float_max_min_propagate_nan() -> None:
    x = np.array([[1.0, np.nan, 3.0, 2.0], [1.0, 4.0, 3.0, 2.0]], np.float32)
    got = run_unary_tile(x, T.float32, (2,), T.float32,
                         lambda kb, t: kb.op(R.ReduceOp, [t], T.tile([2], T.float32), axis=1, kind="max"))
    assert np.isnan(got[0]) and got[1] == 4.0
    b = x.astype(ml_dtypes.bfloat16)
    got = run_unary_tile(b, T.bfloat16, (2,), T.bfloat16,
                         lambda kb, t: kb.op(R.ReduceOp, [t], T.tile([2], T.bfloat16), axis=1, kind="min"))
    assert np.isnan(float(got[0])) and float(got[1]) == 1.0


# -- dot ------------------------------------------------------------------------------------

def run_dot(a: np.ndarray, b: np.ndarray, acc: np.ndarray, in_t: DType, acc_t: DType,
            precision: str = "ieee") -> np.ndarray:
    m, k = a.shape
    n = b.shape[1]
    kb = KernelBuilder([("a", T.pointer(in_t)), ("b", T.pointer(in_t)), ("c", T.pointer(acc_t))])
    ta, tb = load_2d(kb, kb.args[0], m, k), load_2d(kb, kb.args[1], k, n)
    tc = load_2d(kb, kb.args[2], m, n)
    d = kb.op(R.DotOp, [ta, tb, tc], tc.type, input_precision=precision)
    kb.store(kb.ptrs(kb.args[2], offsets_2d(kb, m, n)), d)
    out = acc.copy()
    run(kb.finish(), (1, 1, 1), [a, b, out])
    return out


RNG = np.random.default_rng(1)


@pytest.mark.parametrize("np_t,in_t", [(np.float16, T.float16), (ml_dtypes.bfloat16, T.bfloat16),
                                       (ml_dtypes.float8_e4m3fn, T.float8e4nv)])
def test_dot_narrow_inputs_f32_acc(np_t, in_t) -> None:
    a = RNG.uniform(-2, 2, (16, 32)).astype(np_t)
    b = RNG.uniform(-2, 2, (32, 16)).astype(np_t)
    c = RNG.uniform(-1, 1, (16, 16)).astype(np.float32)
    got = run_dot(a, b, c, in_t, T.float32)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dot_f16_accumulator_rounds_once() -> None:
    a = np.full((16, 16), 1.0, np.float16)
    b = np.full((16, 16), 2.0**-11, np.float16)   # each product is half an ulp of 1.0 in f16
    c = np.ones((16, 16), np.float16)
    got = run_dot(a, b, c, T.float16, T.float16)
    np.testing.assert_array_equal(got, np.full((16, 16), 1 + 16 * 2.0**-11, np.float16))


def test_dot_int8_is_exact_int32() -> None:
    a = RNG.integers(-128, 128, (16, 64)).astype(np.int8)
    b = RNG.integers(-128, 128, (64, 16)).astype(np.int8)
    c = RNG.integers(-1000, 1000, (16, 16)).astype(np.int32)
    got = run_dot(a, b, c, T.int8, T.int32)
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64) + c)
    assert got.dtype == np.int32


def test_dot_tf32_rounds_inputs() -> None:
    a = np.full((16, 16), 1 + 2**-12, np.float32)   # not representable in tf32: rounds to 1.0
    b = np.eye(16, dtype=np.float32)
    c = np.zeros((16, 16), np.float32)
    np.testing.assert_array_equal(run_dot(a, b, c, T.float32, T.float32, "tf32"), np.ones((16, 16)))
    np.testing.assert_array_equal(run_dot(a, b, c, T.float32, T.float32, "ieee"), a)
    np.testing.assert_array_equal(numerics.round_to_tf32(a), np.ones((16, 16)))


def test_batched_dot() -> None:
    a = RNG.uniform(-1, 1, (2, 16, 16)).astype(np.float32)
    b = RNG.uniform(-1, 1, (2, 16, 16)).astype(np.float32)
    kb = KernelBuilder([("a", T.pointer(T.float32)), ("b", T.pointer(T.float32)), ("c", T.pointer(T.float32))])
    ta = kb.op(S.ReshapeOp, [load_2d(kb, kb.args[0], 32, 16)], T.tile([2, 16, 16], T.float32))
    tb = kb.op(S.ReshapeOp, [load_2d(kb, kb.args[1], 32, 16)], T.tile([2, 16, 16], T.float32))
    d = kb.op(R.DotOp, [ta, tb, kb.const(0.0, ta.type)], ta.type)
    store_nd(kb, kb.args[2], d)
    out = np.zeros(512, np.float32)
    run(kb.finish(), (1, 1, 1), [a.reshape(32, 16), b.reshape(32, 16), out])
    np.testing.assert_allclose(out.reshape(2, 16, 16), a @ b, rtol=1e-5, atol=1e-6)
