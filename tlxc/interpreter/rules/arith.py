"""Rules for elementwise ops: constants, arithmetic, comparison, selection, math,
conversions and bitcasts.

The numpy function for an op is chosen once per op from its element type:

* integers use numpy's wrapping arithmetic (the driver silences overflow warnings), with
  C division for signed ``idiv``/``rem``; numpy's shifts already give 0 (or -1) for
  counts at or past the bit width, as PTX ``shl``/``shr`` do;
* ``i1`` is arithmetic modulo 2 (``add`` is xor, ``mul`` is and), where numpy's bool
  arithmetic would saturate;
* narrow floats (f16, bf16, fp8) are computed in float32 and rounded back after every op,
  as the code generators lower them; fp8 results saturate like ``cvt ... .satfinite``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import arith as A
from ...ir.types import DType, Kind
from .. import numerics as N
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


def _elem(op: Operation) -> DType:
    return op.operands[0].type.scalar  # type: ignore[return-value]


@evaluates(A.ConstantOp)
def _constant(op: Operation, state: LaunchState) -> Fn:
    t = op.result.type
    value = N.scalar(op.value, t.scalar)
    if t.shape:
        value = np.broadcast_to(value, t.shape)   # read-only: values are never mutated
    return lambda: value


# -- binary arithmetic ------------------------------------------------------------------

def _c_idiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Signed division truncating toward zero: subtract C's remainder, then divide exactly."""
    return (a - np.fmod(a, b)) // b


def _first(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a


def _zeros(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.zeros_like(a)


def _bool_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logical_and(a, np.logical_not(b))   # shifting a 1-bit value by 1 gives 0


# op class -> (signed int, unsigned int, i1, float) functions; None where not allowed
_BINARY: dict[type[Operation], tuple[Fn | None, Fn | None, Fn | None, Fn | None]] = {
    A.AddOp: (np.add, np.add, np.logical_xor, np.add),
    A.SubOp: (np.subtract, np.subtract, np.logical_xor, np.subtract),
    A.MulOp: (np.multiply, np.multiply, np.logical_and, np.multiply),
    A.DivOp: (None, None, None, np.divide),
    A.IDivOp: (_c_idiv, np.floor_divide, _first, None),
    A.RemOp: (np.fmod, np.fmod, _zeros, np.fmod),
    A.AndOp: (np.bitwise_and, np.bitwise_and, np.logical_and, None),
    A.OrOp: (np.bitwise_or, np.bitwise_or, np.logical_or, None),
    A.XorOp: (np.bitwise_xor, np.bitwise_xor, np.logical_xor, None),
    A.ShlOp: (np.left_shift, np.left_shift, _bool_shift, None),
    A.ShrOp: (np.right_shift, np.right_shift, _bool_shift, None),
}


def _pick(table: tuple[Fn | None, ...], t: DType, op: Operation) -> Fn:
    index = {Kind.INT: 0, Kind.UINT: 1, Kind.BOOL: 2, Kind.FLOAT: 3}[t.kind]
    fn = table[index]
    if fn is None:  # the verifier rejects these; be explicit if one slips through
        raise TypeError(f"'{op.name}' is not defined on {t}")
    return fn


def float_op(fn: Fn, t: DType) -> Fn:
    """``fn`` on float operands of type ``t``: in float32 and rounded back if ``t`` is narrow."""
    if not N.is_narrow_float(t):
        return fn
    f32 = N.F32

    def narrow(*args: np.ndarray) -> np.ndarray:
        return N.round_result(fn(*(a.astype(f32) for a in args)), t)

    return narrow


@evaluates(*_BINARY)
def _binary(op: Operation, state: LaunchState) -> Fn:
    t = _elem(op)
    fn = _pick(_BINARY[type(op)], t, op)
    return float_op(fn, t) if t.kind == Kind.FLOAT else fn


@evaluates(A.MinimumOp, A.MaximumOp)
def _min_max(op: Operation, state: LaunchState) -> Fn:
    t = _elem(op)
    is_min = isinstance(op, A.MinimumOp)
    if t.kind == Kind.BOOL:
        return np.logical_and if is_min else np.logical_or
    if t.kind != Kind.FLOAT:
        return np.minimum if is_min else np.maximum
    if op.propagate_nan:
        fn = np.minimum if is_min else np.maximum      # a NaN operand wins
    else:
        fn = np.fmin if is_min else np.fmax            # a NaN operand loses
    return float_op(fn, t)


_PREDICATES: dict[str, Fn] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}


@evaluates(A.CmpOp)
def _cmp(op: Operation, state: LaunchState) -> Fn:
    # numpy compares unsigned types unsigned, and its float compares are ordered except
    # ``!=``, which is true with NaN: exactly the IR's rule
    fn = _PREDICATES[op.predicate]
    t = _elem(op)
    if t.kind == Kind.FLOAT and N.is_narrow_float(t):
        f32 = N.F32
        return lambda a, b: fn(a.astype(f32), b.astype(f32))
    return fn


@evaluates(A.SelectOp)
def _select(op: Operation, state: LaunchState) -> Fn:
    return np.where


# -- unary and math -----------------------------------------------------------------------

def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


_UNARY: dict[type[Operation], tuple[Fn | None, Fn | None, Fn | None, Fn | None]] = {
    A.NegOp: (np.negative, np.negative, np.asarray, np.negative),
    A.NotOp: (np.invert, np.invert, np.logical_not, None),
    A.AbsOp: (np.abs, np.asarray, np.asarray, np.abs),
}

_MATH: dict[str, Fn] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": _rsqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "floor": np.floor, "ceil": np.ceil, "erf": N.erf, "trunc": np.trunc,
    "round": N.round_half_away,
}
assert set(_MATH) == set(A.MATH_FUNCTIONS), "every math op needs an interpreter rule"


@evaluates(*_UNARY)
def _unary(op: Operation, state: LaunchState) -> Fn:
    t = _elem(op)
    fn = _pick(_UNARY[type(op)], t, op)
    return float_op(fn, t) if t.kind == Kind.FLOAT else fn


@evaluates(*A.MATH_OPS.values())
def _math(op: Operation, state: LaunchState) -> Fn:
    return float_op(_MATH[op.NAME], _elem(op))


@evaluates(A.FmaOp)
def _fma(op: Operation, state: LaunchState) -> Fn:
    t = _elem(op)
    return lambda a, b, c: N.fma(a, b, c, t)


# -- conversions ------------------------------------------------------------------------------

@evaluates(A.ConvertOp)
def _convert(op: Operation, state: LaunchState) -> Fn:
    src, dst = _elem(op), op.result.type.scalar
    rounding = op.rounding
    if src == dst:
        return np.asarray
    return lambda x: N.convert(x, src, dst, rounding)  # type: ignore[arg-type]


@evaluates(A.BitcastOp)
def _bitcast(op: Operation, state: LaunchState) -> Fn:
    # pointers are int64 addresses: a pointer<->pointer bitcast only changes the static
    # pointee type, which later loads and addptrs read from the IR
    want = N.storage_dtype(op.result.type.scalar)
    return lambda x: x.view(want)
