"""Elementwise arithmetic, comparisons, selects, neg/not/abs, fma and bitcasts, as LLVM
instructions on each register (``elementwise``).

The semantics are the IR's (``tlxc/ir/ops/arith.py``; the interpreter,
``tlxc/interpreter/rules/arith.py``, is the reference), including where LLVM's own
instructions are undefined:

- integers wrap; ``idiv``/``rem`` truncate toward zero; division and remainder by zero
  give 0, and ``MIN / -1`` wraps to ``MIN`` with remainder 0 (LLVM's ``sdiv``/``srem`` are
  undefined there: the divisor is replaced first, then the result selected);
- ``shl``/``shr`` by a count at or past the bit width (or negative) give 0, or the sign
  fill for ``shr`` of a signed value (numpy's rule; LLVM gives poison, so the count is
  masked and the result selected);
- i1 is arithmetic modulo 2 (``add`` is xor, ``mul`` is and, ``idiv`` is the dividend,
  ``rem`` is 0, shifts give ``a and not b``);
- floats: ``/`` is ``fdiv`` -- correctly rounded. Triton's AMD backend also lowers ``/``
  to a plain ``fdiv`` (no ``afn``, no ``!fpmath``), which LLVM's AMDGPU back end expands
  to the IEEE sequence ``v_div_scale`` / ``v_rcp`` / ``v_div_fmas`` / ``v_div_fixup``; the
  interpreter's ``np.divide`` is the same rounding. ``%`` is C's ``fmod``, exactly
  (``lower_math.fmod``). ``minimum``/``maximum`` are ``llvm.minnum``/``maxnum`` (a NaN
  operand loses: ``np.fmin``) or, with ``propagate_nan``, ``llvm.minimum``/``maximum``
  (a NaN wins: ``np.minimum``);
- f16 arithmetic is native except ``/`` (through f32: LLVM's f16 division is an
  approximation on some chips); bf16 and the fp8 formats compute in f32 and round back
  after every op, fp8 saturating (the interpreter's rule); rounding twice is harmless
  for + - * / (f32 has more than 2p + 2 bits). ``fma`` on bf16 and fp8 sums the exact
  product in f64 with TwoSum and rounds to odd, so that the final rounding is the only
  one.

Each rule is split into an op-level part (types, attributes, the fp8 flavour check) and
a per-element function of ``(e, values)`` -- ``int_binary``, ``float_binary``,
``compare``, ``unary_value``, ``fma_value`` -- that only uses ``e.b``, ``e.call`` and
``e.target``, so that ``tests/codegen/amd_host_jit.py`` can run the very same code on the
host CPU.
"""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType, Kind, PointerType
from . import lower_math
from .emitter import Emitter, lowers
from .llvm import F16, F32, F64, I1, I64, mangle, value_type
from .lower_cast import check_fp8, from_f32, from_f64, is_float, is_fp8, to_f32, to_f64


def unsupported(e: Emitter, op: Operation, what: str) -> None:
    raise CompilationError("TLXC-CODEGEN-001", f"{what} cannot be compiled for {e.target.arch} yet", op.loc)


def elementwise(e: Emitter, op: Operation, body: Callable[[list[ir.Value]], ir.Value]) -> None:
    """``op``'s result register by register, ``body`` building one. The ops lowered this
    way are pure, so registers whose operands are the same values (a splat, a broadcast,
    a layout holding an element twice) share one result."""
    ins = [e.get(v).vals for v in op.operands]
    n = len(ins[0])
    for vals in ins:
        if len(vals) != n:
            raise AssertionError(f"{op.NAME}: operands hold {[len(r) for r in ins]} registers")
    done: dict[tuple[int, ...], ir.Value] = {}
    out = []
    for i in range(n):
        args = [vals[i] for vals in ins]
        key = tuple(id(a) for a in args)
        if key not in done:
            done[key] = body(args)
        out.append(done[key])
    e.set(op.result, out)


def _const(ty: ir.Type, v: int) -> ir.Constant:
    return ir.Constant(ty, v & ((1 << ty.width) - 1))


# -- integers --------------------------------------------------------------------------------------

def int_binary(e: Emitter, t: DType, name: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """One element of an integer (or i1) binary op, with the IR's semantics everywhere."""
    b = e.b
    ty = x.type
    if t.kind == Kind.BOOL:
        table = {"add": b.xor, "sub": b.xor, "mul": b.and_, "and": b.and_, "or": b.or_, "xor": b.xor,
                 "minimum": b.and_, "maximum": b.or_}
        if name in table:
            return table[name](x, y)
        if name == "idiv":
            return x
        if name == "rem":
            return ir.Constant(I1, 0)
        return b.and_(x, b.not_(y))  # shl, shr: shifting a 1-bit value by 1 gives 0
    signed = t.kind == Kind.INT
    simple = {"add": b.add, "sub": b.sub, "mul": b.mul, "and": b.and_, "or": b.or_, "xor": b.xor}
    if name in simple:
        return simple[name](x, y)
    zero = _const(ty, 0)
    if name in ("minimum", "maximum"):
        cmp = b.icmp_signed if signed else b.icmp_unsigned
        return b.select(cmp("<" if name == "minimum" else ">", x, y), x, y)
    if name in ("idiv", "rem"):
        by_zero = b.icmp_unsigned("==", y, zero)
        safe = b.select(by_zero, _const(ty, 1), y)
        if signed:  # MIN / -1 overflows: divide by 1 and negate instead (wraps to MIN)
            minus_one = b.icmp_signed("==", safe, _const(ty, -1))
            safe = b.select(minus_one, _const(ty, 1), safe)
            if name == "idiv":
                q = b.sdiv(x, safe)
                r = b.select(minus_one, b.sub(zero, x), q)
            else:
                r = b.select(minus_one, zero, b.srem(x, safe))
        else:
            r = b.udiv(x, safe) if name == "idiv" else b.urem(x, safe)
        return b.select(by_zero, zero, r)
    if name in ("shl", "shr"):
        width = ty.width
        in_range = b.icmp_unsigned("<", y, _const(ty, width))
        count = b.and_(y, _const(ty, width - 1))
        if name == "shl":
            return b.select(in_range, b.shl(x, count), zero)
        if signed:  # past the width: the sign fill
            return b.ashr(x, b.select(in_range, count, _const(ty, width - 1)))
        return b.select(in_range, b.lshr(x, count), zero)
    raise AssertionError(f"integer op {name}")


def trap_if_negative(e: Emitter, vals: list[ir.Value]) -> None:
    """Stop the kernel (``llvm.trap``: ``s_trap``) if any of this lane's ``vals`` is
    negative: the run-time check of a ``%`` dividend that the axis analysis assumed
    non-negative (its assumption (4)); one OR of the values and one sign test per lane."""
    b = e.b
    acc = None
    for v in dict.fromkeys(vals):
        acc = v if acc is None else b.or_(acc, v)
    assert acc is not None
    neg = b.icmp_signed("<", acc, _const(acc.type, 0))
    with b.if_then(neg, likely=False):
        e.call("llvm.trap", ir.VoidType(), [])


# -- floats ----------------------------------------------------------------------------------------

def _minmax(e: Emitter, name: str, propagate: bool, x: ir.Value, y: ir.Value) -> ir.Value:
    base = {"minimum": "minimum" if propagate else "minnum", "maximum": "maximum" if propagate else "maxnum"}[name]
    return e.call(f"llvm.{base}.{mangle(x.type)}", x.type, [x, y])


def _float_native(e: Emitter, name: str, propagate: bool, x: ir.Value, y: ir.Value) -> ir.Value:
    """The op on f16 / f32 / f64 values of one type."""
    b = e.b
    if name == "add":
        return b.fadd(x, y)
    if name == "sub":
        return b.fsub(x, y)
    if name == "mul":
        return b.fmul(x, y)
    if name == "div":
        return b.fdiv(x, y)
    if name == "rem":
        return lower_math.fmod(e, x, y)
    if name in ("minimum", "maximum"):
        return _minmax(e, name, propagate, x, y)
    raise AssertionError(f"float op {name}")


def float_binary(e: Emitter, t: DType, name: str, x: ir.Value, y: ir.Value, propagate_nan: bool = False) -> ir.Value:
    """One element of a float binary op on ``t`` (see the module docstring)."""
    if t.ir_name in ("f32", "f64") or (t.ir_name == "f16" and name in ("add", "sub", "mul", "minimum", "maximum")):
        return _float_native(e, name, propagate_nan, x, y)
    r = _float_native(e, name, propagate_nan, to_f32(e, t, x), to_f32(e, t, y))
    return from_f32(e, t, r)


_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def compare(e: Emitter, t: DType | PointerType, predicate: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """One element of ``cmp``: ordered float compares except ``ne`` (true on NaN)."""
    b = e.b
    pred = _CMP[predicate]
    if isinstance(t, PointerType):
        return b.icmp_unsigned(pred, x, y)
    if t.kind == Kind.FLOAT:
        if t.ir_name not in ("f16", "f32", "f64"):
            x, y = to_f32(e, t, x), to_f32(e, t, y)
        return b.fcmp_unordered(pred, x, y) if pred == "!=" else b.fcmp_ordered(pred, x, y)
    if t.kind == Kind.INT:
        return b.icmp_signed(pred, x, y)
    return b.icmp_unsigned(pred, x, y)


def unary_value(e: Emitter, t: DType, name: str, x: ir.Value) -> ir.Value:
    """One element of ``neg`` / ``not`` / ``abs``."""
    b = e.b
    if t.kind == Kind.BOOL:
        return b.not_(x) if name == "not" else x
    if t.kind == Kind.FLOAT:
        if t.ir_name in ("f16", "bf16", "f32", "f64"):  # the sign bit (exact, NaN included)
            it = ir.IntType(t.bits)
            bits = b.bitcast(x, it)
            sign = _const(it, 1 << (t.bits - 1))
            r = b.xor(bits, sign) if name == "neg" else b.and_(bits, _const(it, (1 << (t.bits - 1)) - 1))
            return b.bitcast(r, x.type)
        # fp8: through f32, so that the fnuz formats keep +0 and their one NaN
        f = to_f32(e, t, x)
        f = b.fneg(f) if name == "neg" else e.call("llvm.fabs.f32", F32, [f])
        return from_f32(e, t, f)
    if name == "not":
        return b.not_(x)
    if name == "neg":
        return b.neg(x)
    if t.kind == Kind.UINT:
        return x
    return b.select(b.icmp_signed("<", x, _const(x.type, 0)), b.neg(x), x)  # abs(MIN) wraps to MIN


def fma_value(e: Emitter, t: DType, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """``x * y + z`` rounded once to ``t``."""
    if t.ir_name in ("f16", "f32", "f64"):
        return e.call(f"llvm.fma.{mangle(x.type)}", x.type, [x, y, z])
    return fma_via_f64(e, t, x, y, z)


def fma_via_f64(e: Emitter, t: DType, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """fma of a type of at most 16 bits: the product is exact in f64; TwoSum gives the
    sum's rounding error, and rounding the sum to odd with it as sticky bit makes the
    final rounding to ``t`` the only one."""
    b = e.b
    p = b.fmul(to_f64(e, t, x), to_f64(e, t, y))
    c = to_f64(e, t, z)
    s = b.fadd(p, c)
    bb = b.fsub(s, p)
    err = b.fadd(b.fsub(p, b.fsub(s, bb)), b.fsub(c, bb))
    zero = ir.Constant(F64, 0.0)
    finite = b.fcmp_ordered("<", e.call("llvm.fabs.f64", F64, [s]), ir.Constant(F64, float("inf")))
    inexact = b.and_(b.fcmp_ordered("!=", err, zero), finite)
    # truncate toward zero where the rounding went away from zero, then set the last bit
    toward = b.and_(inexact, b.icmp_unsigned("==", b.fcmp_ordered("<", err, zero), b.fcmp_ordered(">", s, zero)))
    u = b.sub(b.bitcast(s, I64), b.zext(toward, I64))
    u = b.or_(u, b.zext(inexact, I64))
    return from_f64(e, t, b.bitcast(u, F64))


# -- rules -----------------------------------------------------------------------------------------

@lowers(ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp, ops.XorOp, ops.ShlOp,
        ops.ShrOp, ops.MinimumOp, ops.MaximumOp, ops.DivOp)
def binary(e: Emitter, op: Operation) -> None:
    check_fp8(e, op)
    t = op.result.type.scalar
    name = op.NAME
    if isinstance(t, DType) and t.kind == Kind.FLOAT:
        propagate = bool(op.attrs.get("propagate_nan", False))
        return elementwise(e, op, lambda a: float_binary(e, t, name, a[0], a[1], propagate))
    if name == "rem" and t.kind == Kind.INT and e.axis is not None and op in e.axis.assumed_non_negative:
        trap_if_negative(e, e.get(op.lhs).vals)
    elementwise(e, op, lambda a: int_binary(e, t, name, a[0], a[1]))


@lowers(ops.CmpOp)
def cmp(e: Emitter, op: Operation) -> None:
    check_fp8(e, op)
    t = op.lhs.type.scalar
    pred = op.predicate
    elementwise(e, op, lambda a: compare(e, t, pred, a[0], a[1]))


@lowers(ops.SelectOp)
def select(e: Emitter, op: Operation) -> None:
    check_fp8(e, op)
    elementwise(e, op, lambda a: e.b.select(a[0], a[1], a[2]))


@lowers(ops.NegOp, ops.NotOp, ops.AbsOp)
def unary(e: Emitter, op: Operation) -> None:
    check_fp8(e, op)
    t = op.result.type.scalar
    elementwise(e, op, lambda a: unary_value(e, t, op.NAME, a[0]))


@lowers(ops.FmaOp)
def fma(e: Emitter, op: Operation) -> None:
    check_fp8(e, op)
    t = op.result.type.scalar
    elementwise(e, op, lambda a: fma_value(e, t, a[0], a[1], a[2]))


def bitcast_value(e: Emitter, src: DType | PointerType, dst: DType | PointerType, x: ir.Value) -> ir.Value:
    """The same bits as ``dst`` (fp8 values already are their i8 bits; pointers keep
    their address: only the pointee type, which the IR carries, changes)."""
    st, dt = value_type(src), value_type(dst)
    if st == dt:
        return x
    return e.b.bitcast(x, dt)


@lowers(ops.BitcastOp)
def bitcast(e: Emitter, op: Operation) -> None:
    check_fp8(e, op)
    src, dst = op.x.type.scalar, op.result.type.scalar
    elementwise(e, op, lambda a: bitcast_value(e, src, dst, a[0]))


__all__ = ["I1", "F16", "F32", "F64", "value_type", "int_binary", "float_binary", "compare", "unary_value",
           "fma_value", "fma_via_f64", "bitcast_value", "elementwise", "is_float", "is_fp8"]
