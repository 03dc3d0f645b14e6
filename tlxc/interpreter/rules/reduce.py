"""Rules for ``reduce`` and ``dot``.

Accumulation follows the hardware: a ``sum`` adds in its element type (the frontend chose
that type, ``semantics.reduce.sum_dtype``), so an f16 sum rounds to f16 after every add,
pairwise as the GPU's tree does (fp8, which no target reduces, is summed in float32 and
rounded once); narrow floats in ``dot`` are multiplied and summed in float32 and rounded
once at the end; integer sums wrap in the element type;
an integer ``dot`` is exact (int8 x int8 products summed in int32 on the tensor cores).
A float ``max``/``min`` reduction gives NaN when any element is NaN (like ``np.max``);
``argmax``/``argmin`` give the first extreme index, a NaN counting as the extreme.

``dot``'s ``max_num_imprecise_acc`` (Hopper's reduced-precision fp8 accumulation) is not
modelled: the interpreter always accumulates in full float32, the most accurate result the
GPU can give.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import reduce as R
from ...ir.types import DType, Kind
from .. import numerics as N
from ..compiler import Compiler
from ..registry import Env, LaunchState, Step, evaluates, executes

Fn = Callable[..., Any]


@evaluates(R.ReduceOp)
def _reduce(op: Operation, state: LaunchState) -> Fn:
    t: DType = op.x.type.scalar  # type: ignore[assignment]
    axis, kind = op.axis, op.kind
    narrow = N.is_narrow_float(t)
    f32 = N.F32
    if kind == "xor_sum" or (kind == "sum" and t.kind == Kind.BOOL):
        return lambda x: np.bitwise_xor.reduce(x, axis=axis)    # i1 sums wrap modulo 2
    if kind == "sum":
        if narrow and t.bits == 16:
            return lambda x: _pairwise_sum(x, axis, t)
        if narrow:
            return lambda x: N.round_result(np.sum(x.astype(f32), axis=axis, dtype=f32), t)
        dt = N.storage_dtype(t)
        return lambda x: np.sum(x, axis=axis, dtype=dt)
    if kind in ("argmax", "argmin"):
        fn = np.argmax if kind == "argmax" else np.argmin
        if narrow:
            return lambda x: fn(x.astype(f32), axis=axis).astype(np.int32)
        return lambda x: fn(x, axis=axis).astype(np.int32)
    fn = np.max if kind == "max" else np.min
    if narrow:
        return lambda x: fn(x.astype(f32), axis=axis).astype(x.dtype)
    return lambda x: fn(x, axis=axis)


def _pairwise_sum(x: np.ndarray, axis: int, t: DType) -> np.ndarray:
    """A sum of 16-bit floats rounded to ``t`` after every add, halving the axis each step
    (its length is a power of two). Each add is done in float64, where the sum of two
    16-bit floats is exact, so the one rounding per add is the hardware's."""
    x = np.moveaxis(np.asarray(x), axis, -1)
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        x = N.round_result(x[..., :half].astype(np.float64) + x[..., half:].astype(np.float64), t)
    return x[..., 0]


@executes(R.ReduceCombineOp)
def _reduce_combine(op: Operation, compiler: Compiler) -> Step:
    """The combine region runs on whole arrays: every step pairs the first half of the
    axis (as ``a``) with the second half (as ``b``), the tree a GPU reduction makes, with
    the lower positions always on the left; the region's scalar ops apply elementwise
    to numpy arrays."""
    xs = [compiler.slot(v) for v in op.xs]
    outs = [compiler.slot(r) for r in op.results]
    body = compiler.block(op.body)
    axis = op.axis

    def run(env: Env) -> None:
        vals = [np.moveaxis(np.asarray(env[s]), axis, -1) for s in xs]
        while vals[0].shape[-1] > 1:
            m = vals[0].shape[-1]
            half = m // 2
            a = [v[..., :half] for v in vals]
            got = body.run(env, a + [v[..., half:2 * half] for v in vals])
            shape = a[0].shape
            vals = [np.concatenate([np.broadcast_to(np.asarray(g, dtype=v.dtype), shape), v[..., 2 * half:]], -1)
                    for g, v in zip(got, vals)]  # an odd length keeps its last element for the next step
        for s, v in zip(outs, vals):
            env[s] = v[..., 0].copy()

    return run


# Below this many significand bits per operand, int products summed in float64 stay exact.
_EXACT_F64_BITS = 53


@evaluates(R.DotOp)
def _dot(op: Operation, state: LaunchState) -> Fn:
    a_t: DType = op.a.type.scalar  # type: ignore[assignment]
    acc_t: DType = op.acc.type.scalar  # type: ignore[assignment]
    k = op.a.type.shape[-1]
    if a_t.kind != Kind.FLOAT:
        return _int_dot(a_t, acc_t, k)
    if a_t.bits == 64 or acc_t.bits == 64:
        f64 = N.F64
        return lambda a, b, c: (np.matmul(a.astype(f64), b.astype(f64)) + c.astype(f64)).astype(c.dtype)
    f32 = N.F32
    # "tf32x3"/"bf16x3"/"bf16x6" emulate full float32 accuracy with several MMAs: like ieee
    tf32 = op.input_precision == "tf32" and a_t.ir_name == "f32"

    def dot(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        a32, b32 = a.astype(f32), b.astype(f32)   # exact for f16/bf16/fp8 inputs
        if tf32:
            a32, b32 = N.round_to_tf32(a32), N.round_to_tf32(b32)
        out = np.matmul(a32, b32) + c.astype(f32)
        return out if acc_t.ir_name == "f32" else N.round_result(out, acc_t)

    return dot


def _int_dot(a_t: DType, acc_t: DType, k: int) -> Fn:
    acc_dt = N.storage_dtype(acc_t)
    # BLAS in float64 is exact while k * max|a| * max|b| < 2**53; int64 matmul (numpy's
    # slow generic loop) otherwise. Either way the sum then wraps to the accumulator.
    if 2 * a_t.bits + k.bit_length() < _EXACT_F64_BITS:
        f64, i64 = N.F64, N.I64

        def dot(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
            prod = np.matmul(a.astype(f64), b.astype(f64)).astype(i64)
            return (prod + c.astype(i64)).astype(acc_dt)
    else:
        i64 = N.I64

        def dot(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
            return (np.matmul(a.astype(i64), b.astype(i64)) + c.astype(i64)).astype(acc_dt)

    return dot
