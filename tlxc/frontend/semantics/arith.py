"""Arithmetic with Triton's type promotion: binary and unary operators, comparisons,
``where``, ``minimum``/``maximum``, math functions and dtype conversion.

Promotion follows Triton exactly, so kernels give the same dtypes as under Triton:
a Python number does not widen a tensor of its kind or a higher one (``x_f16 * 2.0``
stays f16); otherwise f64 > f32 > f16 > bf16 (f16 with bf16 gives f16, bf16 with fp8 gives
f32, and ``/`` and ``%`` on 16-bit floats compute in f32); integers follow C's usual
conversions.
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import DType, Kind, PointerType, int8, int16, uint32, uint64
from ..values import Tensor, describe, unwrap
from .base import (
    Ctx,
    constant,
    dtype_arg,
    fail,
    float32,
    float64,
    int1,
    int32,
    int64,
    is_number,
    python_dtype,
    result_like,
    rule,
    to_tensor,
)
from .shape import broadcast_all

BINARY_OPS = {
    "add": ops.AddOp, "sub": ops.SubOp, "mul": ops.MulOp, "truediv": ops.DivOp, "floordiv": ops.IDivOp,
    "mod": ops.RemOp, "and": ops.AndOp, "or": ops.OrOp, "xor": ops.XorOp, "lshift": ops.ShlOp,
    "rshift": ops.ShrOp,
}
SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "and": "&",
           "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=",
           "gt": ">", "ge": ">="}


def integer_promote(a: DType, b: DType) -> DType:
    """C's usual arithmetic conversions between two integer types."""
    sa, sb = a.kind == Kind.INT, b.kind == Kind.INT
    if sa == sb:
        return a if a.bits > b.bits else b
    if not sa:  # a unsigned
        return a if a.bits >= b.bits else b
    return b if b.bits >= a.bits else a


def _promotion_kind(d: DType) -> int:
    """Triton's ``dtype.kind()`` order for the scalar rule: bool < integer < float. Signed
    and unsigned integers are one kind, so ``x_u8 + 1`` stays uint8 (``Kind`` orders
    uint below int, which is right for C's conversions but not for this rule)."""
    return {Kind.BOOL: 0, Kind.UINT: 1, Kind.INT: 1}.get(d.kind, 2)


def computation_type(a: DType, a_py: bool, b: DType, b_py: bool, div_or_mod: bool, what: str) -> DType:
    """The dtype in which ``a <op> b`` is computed (Triton's rule)."""
    if a_py != b_py:
        scalar, tensor = (a, b) if a_py else (b, a)
        if _promotion_kind(scalar) <= _promotion_kind(tensor):
            if div_or_mod and tensor.ir_name in ("f16", "bf16"):
                return float32
            return tensor
    if a.is_fp64() or b.is_fp64():
        return float64
    if a.is_fp32() or b.is_fp32():
        return float32
    if a.is_fp16() or b.is_fp16():
        return float32 if div_or_mod else (a if a.is_fp16() else b)
    if a.is_bf16() and b.is_bf16():
        return float32 if div_or_mod else a
    if a.is_bf16() or b.is_bf16():
        return float32
    if a.is_fp8() and b.is_fp8():
        from ...ir.types import float16

        return a if a == b else float16
    if not a.is_int() or not b.is_int():
        fail("TLXC-TYPE-001", f"{what}: unexpected operand types {a!r} and {b!r}")
    if div_or_mod and (a.kind == Kind.INT) != (b.kind == Kind.INT) and a.kind != Kind.BOOL and b.kind != Kind.BOOL:
        fail("TLXC-TYPE-001", f"Cannot use {what} with {a!r} and {b!r} because they have different signedness; "
                              f"convert one with .to(...)")
    return integer_promote(a, b)


def _dtype_of(v: Any) -> DType | PointerType:
    return v.dtype if isinstance(v, Tensor) else python_dtype(v)


def _check_operand(v: Any, what: str) -> Any:
    v = unwrap(v)
    if not isinstance(v, Tensor) and not is_number(v):
        fail("TLXC-TYPE-001", f"{what}: expected a tensor or a number, got {describe(v)}")
    return v


def promote_pair(ctx: Ctx, a: Any, b: Any, what: str, div_or_mod: bool = False) -> tuple[Tensor, Tensor]:
    """Both operands converted to their computation dtype (shapes untouched)."""
    a, b = _check_operand(a, what), _check_operand(b, what)
    ta, tb = _dtype_of(a), _dtype_of(b)
    if isinstance(ta, PointerType) or isinstance(tb, PointerType):
        if ta != tb:
            fail("TLXC-TYPE-001", f"{what}: cannot combine {describe(a)} with {describe(b)}")
        return to_tensor(ctx, a), to_tensor(ctx, b)
    ct = computation_type(ta, not isinstance(a, Tensor), tb, not isinstance(b, Tensor), div_or_mod, what)
    return cast_value(ctx, a, ct), cast_value(ctx, b, ct)


def cast_value(ctx: Ctx, v: Any, dtype: DType) -> Tensor:
    if isinstance(v, Tensor):
        return cast(ctx, v, dtype)
    return constant(ctx, v, dtype)


# -- binary operators ----------------------------------------------------------------------
def binary(ctx: Ctx, name: str, lhs: Any, rhs: Any) -> Tensor:
    """``lhs <op> rhs`` for the operator ``name`` (a key of BINARY_OPS)."""
    what = f"operator {SYMBOLS[name]}"
    lhs, rhs = _check_operand(lhs, what), _check_operand(rhs, what)
    lt, rt = _dtype_of(lhs), _dtype_of(rhs)
    if isinstance(lt, PointerType) or isinstance(rt, PointerType):
        return _pointer_arith(ctx, name, lhs, rhs)
    if name in ("and", "or", "xor", "lshift", "rshift", "floordiv"):
        for t in (lt, rt):
            if not t.is_int():
                kind = "bitwise operators" if name != "floordiv" else "floor division //"
                fail("TLXC-TYPE-001", f"invalid operands of type {lt!r} and {rt!r}: {what} needs integer operands",
                     f"{kind} work on integers only" + ("; use / and tl.floor for floats"
                                                        if name == "floordiv" else ""))
    a, b = promote_pair(ctx, lhs, rhs, what, div_or_mod=name in ("truediv", "mod", "floordiv"))
    if name == "truediv" and a.dtype.is_int():
        a, b = cast(ctx, a, float32), cast(ctx, b, float32)
    a, b = broadcast_all(ctx, a, b)
    if name == "rshift" and isinstance(lt, DType) and lt.kind == Kind.INT and a.dtype.kind == Kind.UINT:
        # Triton shifts by the left operand's own signedness: i8 >> u8 is computed in u8 (the
        # promoted type) but shifts in copies of the sign bit
        signed = _SIGNED[a.dtype.bits]
        sa, sb = cast(ctx, a, signed, bitcast=True), cast(ctx, b, signed, bitcast=True)
        return cast(ctx, Tensor(ctx.b.value(ops.ShrOp, [sa.handle, sb.handle], sa.type)), a.dtype, bitcast=True)
    return Tensor(ctx.b.value(BINARY_OPS[name], [a.handle, b.handle], a.type))


_SIGNED = {8: int8, 16: int16, 32: int32, 64: int64}


def _pointer_arith(ctx: Ctx, name: str, lhs: Any, rhs: Any) -> Tensor:
    lt, rt = _dtype_of(lhs), _dtype_of(rhs)
    if name == "add" and isinstance(rt, PointerType) and not isinstance(lt, PointerType):
        lhs, rhs, lt, rt = rhs, lhs, rt, lt
    if name not in ("add", "sub") or isinstance(rt, PointerType) or not rt.is_int():
        fail("TLXC-TYPE-001", f"operator {SYMBOLS[name]} cannot combine {describe(lhs)} and {describe(rhs)}",
             "pointers support + and - with integer offsets")
    ptr = to_tensor(ctx, lhs)
    off = to_tensor(ctx, rhs)
    if name == "sub":
        off = Tensor(ctx.b.value(ops.NegOp, [off.handle], off.type))
    read_only = is_const_pointer(ptr)
    ptr, off = broadcast_all(ctx, ptr, off)
    out = Tensor(ctx.b.value(ops.AddPtrOp, [ptr.handle, off.handle], ptr.type))
    if read_only:
        mark_const_pointer(out)
    return out


def is_const_pointer(t: Tensor) -> bool:
    """Whether ``t`` is a ``tl.const`` parameter or pointer arithmetic on one."""
    from .tlx_tasks import kernel_facts

    return id(t.handle) in kernel_facts().const_pointers


def mark_const_pointer(t: Tensor) -> None:
    from .tlx_tasks import kernel_facts

    kernel_facts().const_pointers.add(id(t.handle))


def compare(ctx: Ctx, predicate: str, lhs: Any, rhs: Any) -> Tensor:
    what = f"comparison {SYMBOLS[predicate]}"
    a, b = promote_pair(ctx, lhs, rhs, what)
    if isinstance(a.dtype, PointerType):
        a = Tensor(ctx.b.value(ops.PtrToIntOp, [a.handle], result_like(a, int64)))
        b = Tensor(ctx.b.value(ops.PtrToIntOp, [b.handle], result_like(b, int64)))
    a, b = broadcast_all(ctx, a, b)
    return Tensor(ctx.b.value(ops.CmpOp, [a.handle, b.handle], result_like(a, int1), predicate=predicate))


def negate(ctx: Ctx, x: Any) -> Any:
    t = to_tensor(ctx, x)
    if isinstance(t.dtype, PointerType):
        fail("TLXC-TYPE-001", "cannot negate a pointer")
    return Tensor(ctx.b.value(ops.NegOp, [t.handle], t.type))


def invert(ctx: Ctx, x: Any) -> Tensor:
    t = to_tensor(ctx, x)
    if isinstance(t.dtype, PointerType) or not t.dtype.is_int():
        fail("TLXC-TYPE-001", f"operator ~ needs an integer operand, got {describe(t)}")
    return Tensor(ctx.b.value(ops.NotOp, [t.handle], t.type))


def logical_not(ctx: Ctx, x: Any) -> Tensor:
    t = to_tensor(ctx, x)
    return compare(ctx, "eq", t, 0 if not t.dtype.is_floating() else 0.0)


def to_bool(ctx: Ctx, x: Any) -> Tensor:
    """``x != 0`` as i1 (the truth value of a runtime condition)."""
    t = to_tensor(ctx, x)
    if t.dtype == int1:
        return t
    if isinstance(t.dtype, PointerType):
        fail("TLXC-TYPE-001", "a pointer cannot be used as a condition")
    return cast(ctx, t, int1)


# -- conversions ------------------------------------------------------------------------------
@rule("cast")
def cast(ctx: Ctx, input: Any, dtype: Any, fp_downcast_rounding: Any = None, bitcast: Any = False) -> Tensor:
    """``x.to(dtype)``: numeric conversion, or a bit reinterpretation with ``bitcast=True``."""
    t = to_tensor(ctx, input)
    dst = dtype_arg(dtype)
    src = t.dtype
    if unwrap(bitcast):
        if src.bits != dst.bits:
            fail("TLXC-TYPE-001", f"cannot bitcast {src!r} ({src.bits} bits) to {dst!r} ({dst.bits} bits)",
                 "a bitcast keeps the number of bits")
        return t if src == dst else Tensor(ctx.b.value(ops.BitcastOp, [t.handle], result_like(t, dst)))
    if src == dst:
        return t
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return Tensor(ctx.b.value(ops.BitcastOp, [t.handle], result_like(t, dst)))
    if isinstance(src, PointerType):
        if not dst.is_int():
            fail("TLXC-TYPE-001", f"a pointer converts only to an integer, not {dst!r}")
        as_int = Tensor(ctx.b.value(ops.PtrToIntOp, [t.handle], result_like(t, int64)))
        return cast(ctx, as_int, dst)
    if isinstance(dst, PointerType):
        if not src.is_int():
            fail("TLXC-TYPE-001", f"only an integer converts to a pointer, not {src!r}")
        t = cast(ctx, t, int64)
        return Tensor(ctx.b.value(ops.IntToPtrOp, [t.handle], result_like(t, dst)))
    rounding = unwrap(fp_downcast_rounding)
    if rounding is None:
        rounding = "rtne"
    if rounding not in ops.ROUNDINGS:
        fail("TLXC-TYPE-001", f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
    if rounding != "rtne" and not (src.is_floating() and dst.is_floating() and dst.bits < src.bits):
        fail("TLXC-TYPE-001", "fp_downcast_rounding applies only to conversions to a narrower float type")
    return Tensor(ctx.b.value(ops.ConvertOp, [t.handle], result_like(t, dst), rounding=rounding))


# -- elementwise builtins -------------------------------------------------------------------
@rule("where")
def where(ctx: Ctx, condition: Any, x: Any, y: Any) -> Tensor:
    c = to_bool(ctx, condition)
    a, b = promote_pair(ctx, x, y, "tl.where")
    c, a, b = broadcast_all(ctx, c, a, b)
    return Tensor(ctx.b.value(ops.SelectOp, [c.handle, a.handle, b.handle], a.type))


def _minmax(ctx: Ctx, cls: type, x: Any, y: Any, propagate_nan: Any, what: str) -> Tensor:
    a, b = promote_pair(ctx, x, y, what)
    if isinstance(a.dtype, PointerType):
        fail("TLXC-TYPE-001", f"{what} does not work on pointers")
    a, b = broadcast_all(ctx, a, b)
    nan = bool(unwrap(propagate_nan)) and a.dtype.is_floating()
    return Tensor(ctx.b.value(cls, [a.handle, b.handle], a.type, propagate_nan=nan))


def _functional_rule(name: str) -> Any:
    """``tl.add(x, y)`` & co: the operators as functions. ``sanitize_overflow`` (Triton's
    debug-mode overflow check) changes nothing here."""
    def apply(ctx: Ctx, x: Any, y: Any, sanitize_overflow: Any = True) -> Tensor:
        return binary(ctx, name, x, y)

    apply.__name__ = name
    return apply


for _name in ("add", "sub", "mul"):
    rule(_name)(_functional_rule(_name))


@rule("minimum")
def minimum(ctx: Ctx, x: Any, y: Any, propagate_nan: Any = 0) -> Tensor:
    return _minmax(ctx, ops.MinimumOp, x, y, propagate_nan, "tl.minimum")


@rule("maximum")
def maximum(ctx: Ctx, x: Any, y: Any, propagate_nan: Any = 0) -> Tensor:
    return _minmax(ctx, ops.MaximumOp, x, y, propagate_nan, "tl.maximum")


@rule("clamp")
def clamp(ctx: Ctx, x: Any, min: Any, max: Any, propagate_nan: Any = 0) -> Tensor:
    return minimum(ctx, maximum(ctx, x, min, propagate_nan), max, propagate_nan)


def _float_operand(ctx: Ctx, x: Any, what: str) -> Tensor:
    t = to_tensor(ctx, x)
    if isinstance(t.dtype, PointerType) or not t.dtype.is_floating():
        fail("TLXC-TYPE-001", f"{what} needs a floating-point operand, got {describe(t)}",
             "convert it first, e.g. x.to(tl.float32)")
    return t


def _math(name: str, op_name: str | None = None) -> None:
    """Register the rule ``name`` (``exp``, or ``libdevice.tanh`` for a namespaced builtin)
    as the math op ``op_name`` (by default the name's last part) on a float operand."""
    short = name.rsplit(".", 1)[-1]
    cls = ops.MATH_OPS[op_name or short]
    what = name if "." in name else f"tl.{name}"

    def impl(ctx: Ctx, x: Any) -> Tensor:
        t = _float_operand(ctx, x, what)
        return Tensor(ctx.b.value(cls, [t.handle], t.type))

    impl.__name__ = short
    rule(name)(impl)


for _f in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil", "erf"):
    _math(_f)
_math("sqrt_rn", "sqrt")
# math ops that tl itself does not name: libdevice's tan, tanh, trunc and round (half away
# from zero, C's round) are builtins of tlxc.language.extra.libdevice
for _f in ("tan", "tanh", "trunc", "round"):
    _math(f"libdevice.{_f}")


@rule("abs")
def abs_(ctx: Ctx, x: Any) -> Tensor:
    t = to_tensor(ctx, x)
    if isinstance(t.dtype, PointerType):
        fail("TLXC-TYPE-001", "tl.abs does not work on pointers")
    if t.dtype.kind in (Kind.UINT, Kind.BOOL):
        return t
    return Tensor(ctx.b.value(ops.AbsOp, [t.handle], t.type))


@rule("fma")
def fma(ctx: Ctx, x: Any, y: Any, z: Any) -> Tensor:
    a, b = promote_pair(ctx, x, y, "tl.fma")
    a, c = promote_pair(ctx, a, z, "tl.fma")
    b = cast(ctx, b, a.dtype)
    for t in (a, b, c):
        _float_operand(ctx, t, "tl.fma")
    a, b, c = broadcast_all(ctx, a, b, c)
    return Tensor(ctx.b.value(ops.FmaOp, [a.handle, b.handle, c.handle], a.type))


@rule("sigmoid")
def sigmoid(ctx: Ctx, x: Any) -> Tensor:
    t = _float_operand(ctx, x, "tl.sigmoid")
    e = Tensor(ctx.b.value(ops.MATH_OPS["exp"], [negate(ctx, t).handle], t.type))
    return binary(ctx, "truediv", 1.0, binary(ctx, "add", 1.0, e))


@rule("div_rn", "fdiv")
def div_rn(ctx: Ctx, x: Any, y: Any, ieee_rounding: Any = False) -> Tensor:
    a, b = promote_pair(ctx, x, y, "tl.div_rn")
    _float_operand(ctx, a, "tl.div_rn")
    a, b = broadcast_all(ctx, a, b)
    return Tensor(ctx.b.value(ops.DivOp, [a.handle, b.handle], a.type, precise=True))


@rule("cdiv")
def cdiv(ctx: Ctx, x: Any, div: Any) -> Any:
    x, div = unwrap(x), unwrap(div)
    if not isinstance(x, Tensor) and not isinstance(div, Tensor):
        return (x + div - 1) // div
    return binary(ctx, "floordiv", binary(ctx, "sub", binary(ctx, "add", x, div), 1), div)


@rule("swizzle2d")
def swizzle2d(ctx: Ctx, i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any) -> Any:
    """Triton's ``tl.swizzle2d``: the indices (i, j) of a row-major ``size_i x size_j``
    grid renumbered so that, within each group of ``size_g`` rows, consecutive numbers run
    down the columns (the last group may have fewer rows). The usual use is grouping
    program ids so that neighbouring programs share tiles in L2."""
    args = [unwrap(a) for a in (i, j, size_i, size_j, size_g)]
    if not any(isinstance(a, Tensor) for a in args):
        i, j, size_i, size_j, size_g = args
        ij = i * size_j + j
        size_gj = size_g * size_j
        off_i = ij // size_gj * size_g
        rows = min(size_i - off_i, size_g)
        local = ij % size_gj  # the position within the group: a last, shorter group starts at 0
        return off_i + local % rows, local // rows
    ij = binary(ctx, "add", binary(ctx, "mul", i, size_j), j)
    size_gj = binary(ctx, "mul", size_g, size_j)
    off_i = binary(ctx, "mul", binary(ctx, "floordiv", ij, size_gj), size_g)
    rows = minimum(ctx, binary(ctx, "sub", size_i, off_i), size_g)
    local = binary(ctx, "mod", ij, size_gj)
    return binary(ctx, "add", off_i, binary(ctx, "mod", local, rows)), binary(ctx, "floordiv", local, rows)


@rule("to_tensor")
def to_tensor_rule(ctx: Ctx, x: Any) -> Tensor:
    return to_tensor(ctx, x)


@rule("umulhi")
def umulhi(ctx: Ctx, x: Any, y: Any) -> Tensor:
    """The high half of the 2N-bit product of two N-bit integers (N = 32 or 64), the
    operands read as unsigned whatever their signedness, as Triton's ``mulhiui`` does (and
    PTX ``mul.hi.u32``); the result keeps the operands' type. 64 bits have no wider type to
    multiply in: the product is assembled from the four 32x32 partial products."""
    a, b = promote_pair(ctx, x, y, "tl.umulhi")
    if not a.dtype.is_int() or a.dtype.bits not in (32, 64):
        fail("TLXC-TYPE-001", f"tl.umulhi needs 32- or 64-bit integers, got {a.dtype!r}")
    a, b = broadcast_all(ctx, a, b)
    out = a.dtype
    if a.dtype.bits == 32:
        p = binary(ctx, "mul", cast(ctx, cast(ctx, a, uint32, bitcast=True), uint64),
                   cast(ctx, cast(ctx, b, uint32, bitcast=True), uint64))
        return cast(ctx, cast(ctx, binary(ctx, "rshift", p, constant(ctx, 32, uint64)), uint32), out, bitcast=True)
    ua, ub = cast(ctx, a, uint64, bitcast=True), cast(ctx, b, uint64, bitcast=True)
    c32, mask = constant(ctx, 32, uint64), constant(ctx, 0xFFFFFFFF, uint64)

    def halves(v: Tensor) -> tuple[Tensor, Tensor]:
        return binary(ctx, "and", v, mask), binary(ctx, "rshift", v, c32)

    (al, ah), (bl, bh) = halves(ua), halves(ub)
    ll, lh = binary(ctx, "mul", al, bl), binary(ctx, "mul", al, bh)
    hl, hh = binary(ctx, "mul", ah, bl), binary(ctx, "mul", ah, bh)
    # the carry out of the low 64 bits: at most 3 * (2^32 - 1), no overflow in 64 bits
    mid = binary(ctx, "add", binary(ctx, "add", binary(ctx, "rshift", ll, c32), binary(ctx, "and", lh, mask)),
                 binary(ctx, "and", hl, mask))
    hi = binary(ctx, "add", binary(ctx, "add", hh, binary(ctx, "rshift", lh, c32)),
                binary(ctx, "add", binary(ctx, "rshift", hl, c32), binary(ctx, "rshift", mid, c32)))
    return cast(ctx, hi, out, bitcast=True)


__all__ = ["binary", "compare", "negate", "invert", "logical_not", "to_bool", "cast", "promote_pair", "int32"]
