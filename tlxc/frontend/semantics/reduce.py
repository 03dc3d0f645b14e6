"""Reductions (``tl.sum``, ``tl.max``, ``tl.argmax``...) and ``tl.dot``."""

from __future__ import annotations

import math
from typing import Any

from ...ir import ops
from ...ir.types import DType, Kind, float16, float32, int32, uint32
from ..values import Tensor, describe, unwrap
from .arith import cast
from .base import Ctx, axis_arg, const_value, dtype_arg, fail, result_like, rule, shaped
from .shape import as_tile, expand_dims, reshape
from .tlx_tasks import kernel_facts


def _reduce(ctx: Ctx, t: Tensor, axis: Any, keep_dims: Any, kind: str, what: str) -> Tensor:
    if not t.shape:
        fail("TLXC-SHAPE-003", f"{what} needs a tile, got {describe(t)}")
    if isinstance(t.dtype, DType) is False:
        fail("TLXC-TYPE-001", f"{what} cannot reduce pointers")
    rank = len(t.shape)
    keep = bool(const_value(keep_dims, "keep_dims", (bool, int)))
    if unwrap(axis) is None:
        flat = reshape(ctx, t, t.numel, can_reorder=True) if rank > 1 else t
        r = _reduce_axis(ctx, flat, 0, kind)
        if keep:
            return reshape(ctx, r, *([1] * rank))
        return r
    a = axis_arg(axis, rank)
    r = _reduce_axis(ctx, t, a, kind)
    return expand_dims(ctx, r, a) if keep else r


def _reduce_axis(ctx: Ctx, t: Tensor, axis: int, kind: str) -> Tensor:
    if t.dtype.kind == Kind.BOOL:  # on 0/1 in int32 (the targets reduce no i1): i1 addition is xor
        r = _reduce_axis(ctx, cast(ctx, t, int32), axis, "xor_sum" if kind == "sum" else kind)
        return r if kind in ("argmax", "argmin") else cast(ctx, r, t.dtype)
    shape = t.shape[:axis] + t.shape[axis + 1:]
    elem = int32 if kind in ("argmax", "argmin") else t.dtype
    return Tensor(ctx.b.value(ops.ReduceOp, [t.handle], shaped(elem, shape), axis=axis, kind=kind))


def sum_dtype(t: DType, dtype: Any = None) -> DType:
    """The type ``tl.sum`` of ``t`` accumulates in, which is also its result's: TLX's Triton
    rule (``_pick_sum_dtype`` then bf16 promoted). ``dtype`` when given; integers narrower
    than 32 bits in int32 or uint32 by their signedness (i1 counts as unsigned); then bf16
    in float32. fp16 stays fp16: Triton adds it in fp16. Every target and the interpreter
    accumulate in exactly the reduce op's type, so this is the one place the choice is made."""
    out = dtype_arg(dtype) if unwrap(dtype) is not None else t
    if unwrap(dtype) is None and t.bits < 32 and t.kind in (Kind.INT, Kind.UINT, Kind.BOOL):
        out = int32 if t.kind == Kind.INT else uint32
    if isinstance(out, DType) and out.is_bf16():
        out = float32
    return out  # type: ignore[return-value]


@rule("sum")
def sum_(ctx: Ctx, input: Any, axis: Any = None, keep_dims: Any = False, dtype: Any = None) -> Tensor:
    t = as_tile(input, "tl.sum")
    if isinstance(t.dtype, DType):
        acc = sum_dtype(t.dtype, dtype)
        if acc != t.dtype:  # (dtype=tl.int1: the values as i1, summed as _reduce_axis sums i1)
            t = cast(ctx, t, acc)
    return _reduce(ctx, t, axis, keep_dims, "sum", "tl.sum")


def _widen_small(ctx: Ctx, t: Tensor) -> Tensor:
    """Triton computes max/min of sub-32-bit values in 32 bits."""
    if t.dtype.bits < 32:
        return cast(ctx, t, float32 if t.dtype.is_floating() else int32)
    return t


def _extreme(ctx: Ctx, input: Any, axis: Any, return_indices: Any, keep_dims: Any, kind: str) -> Any:
    t = as_tile(input, f"tl.{kind}")
    if t.dtype.is_bf16():  # Triton promotes bf16 first, also when returning indices
        t = cast(ctx, t, float32)
    if const_value(return_indices, "return_indices", (bool, int)):
        values = _reduce(ctx, t, axis, keep_dims, kind, f"tl.{kind}")
        index = _reduce(ctx, t, axis, keep_dims, "arg" + kind, f"tl.{kind}")
        return values, index
    return _reduce(ctx, _widen_small(ctx, t), axis, keep_dims, kind, f"tl.{kind}")


@rule("max")
def max_(ctx: Ctx, input: Any, axis: Any = None, return_indices: Any = False,
         return_indices_tie_break_left: Any = True, keep_dims: Any = False) -> Any:
    return _extreme(ctx, input, axis, return_indices, keep_dims, "max")


@rule("min")
def min_(ctx: Ctx, input: Any, axis: Any = None, return_indices: Any = False,
         return_indices_tie_break_left: Any = True, keep_dims: Any = False) -> Any:
    return _extreme(ctx, input, axis, return_indices, keep_dims, "min")


@rule("argmax")
def argmax(ctx: Ctx, input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> Tensor:
    return _reduce(ctx, as_tile(input, "tl.argmax"), axis, keep_dims, "argmax", "tl.argmax")


@rule("argmin")
def argmin(ctx: Ctx, input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> Tensor:
    return _reduce(ctx, as_tile(input, "tl.argmin"), axis, keep_dims, "argmin", "tl.argmin")


@rule("xor_sum")
def xor_sum(ctx: Ctx, input: Any, axis: Any = None, keep_dims: Any = False) -> Tensor:
    t = as_tile(input, "tl.xor_sum")
    if not t.dtype.is_int():
        fail("TLXC-TYPE-001", f"tl.xor_sum needs integers, got {t.dtype!r}")
    return _reduce(ctx, t, axis, keep_dims, "xor_sum", "tl.xor_sum")


_DOT_INPUTS = ("f16", "bf16", "f32", "f64", "i8", "u8", "f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz")


def _batched_dot(ctx: Ctx, a: Tensor, b: Tensor, acc: Any, input_precision: Any, allow_tf32: Any,
                 max_num_imprecise_acc: Any, out_dtype: Any) -> Tensor:
    """``tl.dot`` of tiles with several leading batch dimensions: they are reshaped into one
    (a row-major merge, which keeps each batch's matrices whole), dotted as a 3-D dot and
    the result reshaped back."""
    lead = a.shape[:-2]
    if b.shape[:-2] != lead:
        fail("TLXC-DOT-001", f"tl.dot batch dimensions differ: {list(lead)} and {list(b.shape[:-2])}")
    count = math.prod(lead)
    a3 = reshape(ctx, a, (count,) + a.shape[-2:])
    b3 = reshape(ctx, b, (count,) + b.shape[-2:])
    acc = unwrap(acc)
    if acc is not None:
        c = as_tile(acc, "tl.dot's acc")
        if c.shape != lead + (a.shape[-2], b.shape[-1]):
            fail("TLXC-DOT-001", f"tl.dot accumulator has shape {list(c.shape)}, expected "
                                 f"{list(lead + (a.shape[-2], b.shape[-1]))}")
        acc = reshape(ctx, c, (count, a.shape[-2], b.shape[-1]))
    out = dot(ctx, a3, b3, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype)
    return reshape(ctx, out, lead + (a.shape[-2], b.shape[-1]))


# the least K of a tl.dot per operand bit width (Triton's NVIDIA backend asks for 32 with
# 8-bit operands; tlxc fills half an MMA step there); M and N may be anything -- the MMAs
# pad them, or the FMA path runs the dot
_MIN_K = {8: 16, 16: 16, 32: 8, 64: 4}


@rule("dot")
def dot(ctx: Ctx, input: Any, other: Any, acc: Any = None, input_precision: Any = None,
        allow_tf32: Any = None, max_num_imprecise_acc: Any = None, out_dtype: Any = float32) -> Tensor:
    a, b = as_tile(input, "tl.dot"), as_tile(other, "tl.dot")
    if len(a.shape) < 2 or len(b.shape) != len(a.shape):
        fail("TLXC-DOT-001", f"tl.dot needs two tiles of 2 or more dimensions, of the same rank, got shapes "
                             f"{list(a.shape)} and {list(b.shape)}")
    if len(a.shape) > 3:  # several batch dimensions: one, and back (as Triton takes them)
        return _batched_dot(ctx, a, b, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype)
    if a.shape[-1] != b.shape[-2]:
        fail("TLXC-DOT-001", f"tl.dot inner dimensions differ: a is {list(a.shape)} and b is {list(b.shape)}, "
                             f"so K is {a.shape[-1]} for a but {b.shape[-2]} for b")
    if len(a.shape) == 3 and a.shape[0] != b.shape[0]:
        fail("TLXC-DOT-001", f"tl.dot batch dimensions differ: {a.shape[0]} and {b.shape[0]}")
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    min_k = _MIN_K.get(a.dtype.bits, 16)
    if k < min_k:
        fail("TLXC-DOT-001", f"tl.dot needs K of at least {min_k} for {a.dtype!r} operands, got "
                             f"M={m}, N={n}, K={k}")
    if a.dtype != b.dtype and not (a.dtype.is_fp8() and b.dtype.is_fp8()):
        fail("TLXC-DOT-002", f"tl.dot operand dtypes differ: {a.dtype!r} and {b.dtype!r}")
    if a.dtype.is_fp8() and b.dtype.is_fp8() and a.dtype != b.dtype:
        fail("TLXC-DOT-002", f"tl.dot with mixed fp8 formats ({a.dtype!r} and {b.dtype!r}) is not supported",
             "convert both operands to one fp8 format")
    if a.dtype.ir_name not in _DOT_INPUTS:
        fail("TLXC-DOT-002", f"tl.dot does not take {a.dtype!r} operands")
    precision = unwrap(input_precision)
    tf32 = unwrap(allow_tf32)
    if precision is None:  # as Triton: the knob, else tf32 unless allow_tf32=False
        precision = kernel_facts().fp32_default or ("tf32" if (tf32 is None or tf32) else "ieee")
    elif tf32 is not None:
        fail("TLXC-TYPE-001", "give either input_precision or allow_tf32, not both")
    if precision not in ops.reduce.INPUT_PRECISIONS:
        fail("TLXC-TYPE-001", f"unknown input_precision {precision!r}; use one of {list(ops.reduce.INPUT_PRECISIONS)}")
    if not a.dtype.is_fp32():
        precision = "ieee"
    out = dtype_arg(out_dtype, "out_dtype")
    if a.dtype.is_int():
        ret = int32
    elif a.dtype.is_floating() and out in (float16, float32) or a.dtype.is_fp64():
        ret = a.dtype if a.dtype.is_fp64() else out
    else:
        fail("TLXC-DOT-002", f"tl.dot cannot accumulate {a.dtype!r} in {out!r}")
    if out == float16 and a.dtype not in (float16,) and not a.dtype.is_fp8():
        fail("TLXC-DOT-002", f"out_dtype=float16 needs float16 or fp8 operands, got {a.dtype!r}")
    shape = a.shape[:-1] + (n,)
    acc = unwrap(acc)
    if acc is None:
        from .shape import full

        c = full(ctx, shape, 0, ret)
    else:
        c = as_tile(acc, "tl.dot's acc")
        if c.shape != shape:
            fail("TLXC-DOT-001", f"tl.dot accumulator has shape {list(c.shape)}, expected {list(shape)}")
        if c.dtype != ret:
            if a.dtype.is_floating() and c.dtype in (float16, float32) and acc is not None:
                ret = c.dtype
            else:
                fail("TLXC-DOT-002", f"tl.dot accumulator is {c.dtype!r}, expected {ret!r}")
    imprecise = unwrap(max_num_imprecise_acc)
    attrs = {"input_precision": precision, "max_num_imprecise_acc": int(imprecise or 0)}
    return Tensor(ctx.b.value(ops.DotOp, [a.handle, b.handle, c.handle], result_like(c, ret), **attrs))
