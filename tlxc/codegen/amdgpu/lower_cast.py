"""Conversions (``convert``) between every pair of element types, and the float helpers
the other elementwise rules share: widening a narrow float to f32 (exact), rounding an
f32 or f64 back to a narrow type, the fp8 formats, and the fp8 flavour check.

Semantics are the IR's (``ConvertOp``; the interpreter's ``tlxc/interpreter/numerics.py``
is the reference): float -> float rounds once, to nearest even or toward zero; to fp8 it
saturates to the largest finite value (NaN stays NaN); float -> int truncates and
saturates, NaN gives 0 (``llvm.fpto[su]i.sat``); int -> int extends by the source's
signedness or keeps the low bits; to i1 is ``x != 0``.

How each kind of conversion is built:

- **fp8 <-> f32** uses the chips' conversion instructions, which read and write the
  chip's own flavour only: gfx942 the "fnuz" ones (fp8e4b8 / fp8e5b16), gfx950 and gfx1250
  the OCP ones (fp8e4nv / fp8e5) -- ``llvm.amdgcn.cvt.f32.fp8`` / ``.bf8`` (``v_cvt_f32_fp8``)
  and ``llvm.amdgcn.cvt.pk.fp8.f32`` / ``.bf8.f32`` (``v_cvt_pk_fp8_f32``, round to nearest
  even). The instructions saturate only when the mode register asks (Triton sets
  ``fp16_ovfl`` with ``s_setreg``); tlxc clamps the input to +-max first instead, which
  keeps NaN and needs no mode change. An fp8 type of the other flavour is a
  ``TLXC-TLX-006`` error at the user's line (``check_fp8``). The software versions
  (``fp8_encode_soft`` / ``fp8_decode_soft``) are exact for every format; the host
  test harness (``tests/codegen/amd_host_jit.py``) runs them in place of the instructions.
- **to bf16** from f32: ``fptrunc`` on gfx950 and gfx1250 (``v_cvt_pk_bf16_f32``); on gfx942,
  which has no such instruction, the integer round-to-nearest-even that Triton's AMD
  backend also writes (``f32_to_bf16_soft``).
- **from f64 to a type narrower than f32**: f64 -> f32 rounding *to odd*, then to the
  type: one correct rounding (f32 has 24 >= p + 2 bits for every such p), as the
  interpreter does.
- **toward zero** (``rounding="rtz"``): the nearest-even result, stepped one ulp toward
  zero where it grew in magnitude (again the interpreter's method); also for fp8.
- **int -> bf16 / fp8** goes through f64 (exact for 32-bit integers) and the rule above,
  int -> f16 through f32 (an integer f32 cannot hold exactly overflows f16 anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType, Kind
from .emitter import Emitter, lowers
from .llvm import BFLOAT, F16, F32, F64, I1, I8, I16, I32, I64, value_type

#: chips with a native f32 -> bf16 conversion instruction (``v_cvt_pk_bf16_f32``): LLVM
#: selects it for ``fptrunc float to bfloat`` (AMD CDNA4 ISA, "VOP3 instructions"; gfx12.5
#: likewise). gfx942 (CDNA3) has none.
NATIVE_BF16_CVT = frozenset({"gfx950", "gfx1250"})


@dataclass(frozen=True)
class Fp8Format:
    """One 8-bit float format: exponent bias, fraction bits, the largest finite value
    (and its bits), and how NaN / negative zero are encoded."""

    bias: int
    man: int
    max_value: float
    max_bits: int
    nan_bits: int
    fnuz: bool      # no -0, no inf, the "negative zero" pattern 0x80 is the only NaN
    has_inf: bool   # OCP e5m2: exponent all ones with fraction 0 is inf


FP8: dict[str, Fp8Format] = {
    "f8e4m3": Fp8Format(7, 3, 448.0, 0x7E, 0x7F, fnuz=False, has_inf=False),
    "f8e5m2": Fp8Format(15, 2, 57344.0, 0x7B, 0x7E, fnuz=False, has_inf=True),
    "f8e4m3fnuz": Fp8Format(8, 3, 240.0, 0x7F, 0x80, fnuz=True, has_inf=False),
    "f8e5m2fnuz": Fp8Format(16, 2, 57344.0, 0x7F, 0x80, fnuz=True, has_inf=False),
}


def is_fp8(t: object) -> bool:
    return isinstance(t, DType) and t.kind == Kind.FLOAT and t.bits == 8


def is_float(t: object) -> bool:
    return isinstance(t, DType) and t.kind == Kind.FLOAT


# -- the fp8 flavour check --------------------------------------------------------------------------

def fp8_flavour_error(dtype: DType, target, loc) -> CompilationError:
    e4, e5 = target.fp8_dtypes
    has = f"{e4} / {e5}"
    return CompilationError(
        "TLXC-TLX-006", f"{dtype.sig_name} is not an fp8 format of {target.arch}: its fp8 instructions use the "
        f"{'fnuz' if target.fp8 == 'fnuz' else 'OCP'} formats {has}", loc,
        f"use tl.{'float8e4b8' if e4 == 'fp8e4b8' else 'float8e4nv'} / "
        f"tl.{'float8e5b16' if e5 == 'fp8e5b16' else 'float8e5'} on {target.arch}")


def check_fp8(e: Emitter, op: Operation) -> None:
    """Refuse an fp8 operand or result of the flavour the chip does not have."""
    have = e.target.fp8_dtypes
    for v in list(op.operands) + list(op.results):
        t = getattr(v.type, "scalar", None)
        if is_fp8(t) and t.sig_name not in have:
            raise fp8_flavour_error(t, e.target, op.loc)


def check_fp8_types(func, target) -> None:
    """The same check over a whole function (every op's operand and result types, buffers
    included), for ``compile.check_target_ops``: loads, stores, dots and LDS buffers of
    the other flavour are refused there, before any code is built."""
    have = target.fp8_dtypes
    for op in func.walk():
        for v in list(op.operands) + list(op.results):
            t = getattr(v.type, "element", None) or getattr(v.type, "scalar", None)
            while hasattr(t, "pointee"):
                t = t.pointee
            if is_fp8(t) and t.sig_name not in have:
                raise fp8_flavour_error(t, target, op.loc)


# -- small helpers ------------------------------------------------------------------------------------

def c32(v: int) -> ir.Constant:
    return ir.Constant(I32, v & 0xFFFFFFFF)


def f32c(v: float) -> ir.Constant:
    return ir.Constant(F32, v)


def _fabs(e: Emitter, x: ir.Value) -> ir.Value:
    return e.call(f"llvm.fabs.{'f64' if x.type == F64 else 'f32'}", x.type, [x])


def _on_host(e: Emitter) -> bool:
    """The host test harness's stand-in emitter: LLVM's x86 back end has no inline
    ``fptrunc`` to bfloat (it calls a runtime function the JIT cannot find)."""
    return bool(getattr(e, "host", False))


# -- f32 <-> bf16 ------------------------------------------------------------------------------------

def f32_to_bf16_soft(e: Emitter, x: ir.Value) -> ir.Value:
    """Round f32 to bf16, nearest even, in integer operations; NaN stays a (quiet) NaN."""
    b = e.b
    u = b.bitcast(x, I32)
    lsb = b.and_(b.lshr(u, c32(16)), c32(1))
    r = b.lshr(b.add(u, b.add(c32(0x7FFF), lsb)), c32(16))
    nan = b.fcmp_unordered("uno", x, x)
    r = b.select(nan, b.or_(b.lshr(u, c32(16)), c32(0x40)), r)
    return b.bitcast(b.trunc(r, I16), BFLOAT)


def f32_to_bf16(e: Emitter, x: ir.Value) -> ir.Value:
    if e.target.arch in NATIVE_BF16_CVT and not _on_host(e):
        return e.b.fptrunc(x, BFLOAT)
    return f32_to_bf16_soft(e, x)


def bf16_to_f32(e: Emitter, x: ir.Value) -> ir.Value:
    return e.b.bitcast(e.b.shl(e.b.zext(e.b.bitcast(x, I16), I32), c32(16)), F32)


# -- fp8 -----------------------------------------------------------------------------------------------

def fp8_decode_soft(b: ir.IRBuilder, fmt: Fp8Format, x: ir.Value) -> ir.Value:
    """The f32 value of fp8 bits ``x`` (i8), exactly."""
    u = b.zext(x, I32)
    mag = b.and_(u, c32(0x7F))
    sign = b.shl(b.and_(u, c32(0x80)), c32(24))
    expo = b.lshr(mag, c32(fmt.man))
    # normal: rebias the exponent and move the fraction to f32's place
    normal = b.add(b.shl(mag, c32(23 - fmt.man)), c32((127 - fmt.bias) << 23))
    # subnormal (exponent 0): fraction * 2^(1 - bias - man), exact
    sub = b.fmul(b.uitofp(mag, F32), f32c(2.0 ** (1 - fmt.bias - fmt.man)))
    val = b.select(b.icmp_unsigned("==", expo, c32(0)), b.bitcast(sub, I32), normal)
    val = b.or_(val, sign)
    out = b.bitcast(val, F32)
    if fmt.fnuz:
        nan = b.icmp_unsigned("==", u, c32(0x80))
    elif fmt.has_inf:
        top = b.icmp_unsigned("==", expo, c32((1 << (7 - fmt.man)) - 1))
        inf = b.bitcast(b.or_(sign, c32(0x7F800000)), F32)
        out = b.select(b.and_(top, b.icmp_unsigned("==", b.and_(mag, c32((1 << fmt.man) - 1)), c32(0))), inf, out)
        nan = b.and_(top, b.icmp_unsigned("!=", b.and_(mag, c32((1 << fmt.man) - 1)), c32(0)))
    else:
        nan = b.icmp_unsigned("==", mag, c32(0x7F))
    return b.select(nan, f32c(float("nan")), out)


def fp8_encode_soft(e: Emitter, fmt: Fp8Format, x: ir.Value) -> ir.Value:
    """f32 -> fp8 bits (i8), rounding to nearest even and saturating to +-max (NaN gives
    the format's NaN)."""
    b = e.b
    u = b.bitcast(x, I32)
    a = b.and_(u, c32(0x7FFFFFFF))
    ax = b.bitcast(a, F32)
    shift = 23 - fmt.man
    # normal results: round the f32 bits at the fp8 fraction's last place, then rebias
    lsb = b.and_(b.lshr(a, c32(shift)), c32(1))
    rn = b.lshr(b.add(a, b.add(c32((1 << (shift - 1)) - 1), lsb)), c32(shift))
    rn = b.sub(rn, c32((127 - fmt.bias) << fmt.man))
    # subnormal results (below the smallest normal): the fraction as an integer, rounded
    # to nearest even (it may round up to the smallest normal, whose bits are the same)
    q = e.call("llvm.roundeven.f32", F32, [b.fmul(ax, f32c(2.0 ** (fmt.bias - 1 + fmt.man)))])
    rs = b.fptoui(q, I32)
    tiny = b.fcmp_ordered("<", ax, f32c(2.0 ** (1 - fmt.bias)))
    r = b.select(tiny, rs, rn)
    big = b.fcmp_ordered(">", ax, f32c(fmt.max_value))
    r = b.select(b.or_(big, b.icmp_unsigned(">", r, c32(fmt.max_bits))), c32(fmt.max_bits), r)
    neg = b.icmp_unsigned("!=", b.and_(u, c32(0x80000000)), c32(0))
    if fmt.fnuz:  # no negative zero
        neg = b.and_(neg, b.icmp_unsigned("!=", r, c32(0)))
    r = b.or_(r, b.select(neg, c32(0x80), c32(0)))
    r = b.select(b.fcmp_unordered("uno", x, x), c32(fmt.nan_bits), r)
    return b.trunc(r, I8)


def _fp8_hw_names(t: DType) -> tuple[str, str]:
    """(decode, encode) intrinsics of ``t``'s format: fp8 = the e4m3 kind, bf8 = e5m2."""
    kind = "fp8" if t.man_bits == 3 else "bf8"
    return f"llvm.amdgcn.cvt.f32.{kind}", f"llvm.amdgcn.cvt.pk.{kind}.f32"


def fp8_to_f32(e: Emitter, t: DType, x: ir.Value) -> ir.Value:
    """fp8 bits -> f32 with the chip's conversion instruction (exact)."""
    dec, _ = _fp8_hw_names(t)
    return e.call(dec, F32, [e.b.zext(x, I32), c32(0)])


def f32_to_fp8(e: Emitter, t: DType, x: ir.Value) -> ir.Value:
    """f32 -> fp8 bits, nearest even, saturating: clamp |x| to max (NaN is not clamped:
    the compare is false), then the chip's conversion."""
    fmt = FP8[t.ir_name]
    b = e.b
    big = b.fcmp_ordered(">", _fabs(e, x), f32c(fmt.max_value))
    clamped = b.select(big, e.call("llvm.copysign.f32", F32, [f32c(fmt.max_value), x]), x)
    _, enc = _fp8_hw_names(t)
    packed = e.call(enc, I32, [clamped, f32c(0.0), c32(0), ir.Constant(I1, 0)])
    return b.trunc(packed, I8)


# -- widening and rounding ------------------------------------------------------------------------------

def to_f32(e: Emitter, t: DType, x: ir.Value) -> ir.Value:
    """A float of at most 32 bits as f32 (exact)."""
    if t.ir_name == "f32":
        return x
    if t.ir_name == "f16":
        return e.b.fpext(x, F32)
    if t.ir_name == "bf16":
        return bf16_to_f32(e, x)
    if is_fp8(t):
        return fp8_to_f32(e, t, x)
    raise AssertionError(f"to_f32 of {t}")


def to_f64(e: Emitter, t: DType, x: ir.Value) -> ir.Value:
    if t.ir_name == "f64":
        return x
    return e.b.fpext(to_f32(e, t, x), F64)


def _bits_type(t: DType) -> ir.Type:
    return ir.IntType(t.bits)


def _step_toward_zero(e: Emitter, dst: DType, r: ir.Value, back: ir.Value, x: ir.Value) -> ir.Value:
    """The round-to-nearest result ``r`` (whose exact value is ``back``, of ``x``'s type)
    one ulp toward zero where it grew in magnitude: round toward zero."""
    b = e.b
    grew = b.fcmp_ordered(">", _fabs(e, back), _fabs(e, x))
    it = _bits_type(dst)
    u = r if is_fp8(dst) else b.bitcast(r, it)
    u = b.sub(u, b.zext(grew, it))
    if dst.ir_name in FP8 and FP8[dst.ir_name].fnuz:  # the "negative zero" pattern is NaN: +0
        u = b.select(b.and_(grew, b.icmp_unsigned("==", u, ir.Constant(it, 0x80))), ir.Constant(it, 0), u)
    return u if is_fp8(dst) else b.bitcast(u, value_type(dst))


def from_f32(e: Emitter, dst: DType, x: ir.Value, rounding: str = "rtne") -> ir.Value:
    """f32 -> a float type of at most 32 bits, rounded once."""
    if dst.ir_name == "f32":
        return x
    if dst.ir_name == "f16":
        r = e.b.fptrunc(x, F16)
    elif dst.ir_name == "bf16":
        r = f32_to_bf16(e, x)
    else:
        r = f32_to_fp8(e, dst, x)
    if rounding == "rtz":
        r = _step_toward_zero(e, dst, r, to_f32(e, dst, r), x)
    return r


def f64_to_f32_odd(e: Emitter, x: ir.Value) -> ir.Value:
    """f64 -> f32 rounding to odd: truncate, and set the last bit if inexact."""
    b = e.b
    r = b.fptrunc(x, F32)
    back = b.fpext(r, F64)
    grew = b.fcmp_ordered(">", _fabs(e, back), _fabs(e, x))
    inexact = b.fcmp_ordered("!=", back, x)
    u = b.sub(b.bitcast(r, I32), b.zext(grew, I32))
    u = b.or_(u, b.zext(inexact, I32))
    return b.bitcast(u, F32)


def from_f64(e: Emitter, dst: DType, x: ir.Value, rounding: str = "rtne") -> ir.Value:
    """f64 -> any float type, rounded once."""
    if dst.ir_name == "f64":
        return x
    if dst.ir_name == "f32":
        r = e.b.fptrunc(x, F32)
    else:
        r = from_f32(e, dst, f64_to_f32_odd(e, x))
    if rounding == "rtz":
        r = _step_toward_zero(e, dst, r, to_f64(e, dst, r), x)
    return r


def from_float(e: Emitter, src: DType, dst: DType, x: ir.Value, rounding: str = "rtne") -> ir.Value:
    """float -> float, rounded once."""
    if src == dst:
        return x
    if src.ir_name == "f64":
        return from_f64(e, dst, x, rounding)
    if dst.ir_name == "f64":
        return to_f64(e, src, x)
    f = to_f32(e, src, x)
    if dst.ir_name == "f32":
        return f
    # a narrow type to another: every value of an 8- or 16-bit float is exact in f32
    return from_f32(e, dst, f, rounding)


# -- the convert op -------------------------------------------------------------------------------------

def _int_to_float(e: Emitter, src: DType, dst: DType, x: ir.Value) -> ir.Value:
    b = e.b
    signed = src.kind == Kind.INT
    if src.kind == Kind.BOOL:
        return from_f32(e, dst, b.select(x, f32c(1.0), f32c(0.0))) if dst.ir_name != "f64" else \
            b.select(x, ir.Constant(F64, 1.0), ir.Constant(F64, 0.0))
    cvt = b.sitofp if signed else b.uitofp
    if dst.ir_name in ("f32", "f64"):
        return cvt(x, value_type(dst))
    if dst.ir_name == "f16" or src.bits <= 16:  # exact in f32 (or beyond f16's range either way)
        return from_f32(e, dst, cvt(x, F32))
    return from_f64(e, dst, cvt(x, F64))


def _float_to_int(e: Emitter, src: DType, dst: DType, x: ir.Value) -> ir.Value:
    b = e.b
    if src.ir_name != "f64":
        x = to_f32(e, src, x)
    if dst.kind == Kind.BOOL:
        return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
    name = "llvm.fptosi.sat" if dst.kind == Kind.INT else "llvm.fptoui.sat"
    rt = value_type(dst)
    return e.call(f"{name}.i{dst.bits}.{'f64' if x.type == F64 else 'f32'}", rt, [x])


def _int_to_int(e: Emitter, src: DType, dst: DType, x: ir.Value) -> ir.Value:
    b = e.b
    if dst.kind == Kind.BOOL:
        return b.icmp_unsigned("!=", x, ir.Constant(x.type, 0))
    rt = value_type(dst)
    if src.kind == Kind.BOOL:
        return b.zext(x, rt)
    if dst.bits == src.bits:
        return x
    if dst.bits < src.bits:
        return b.trunc(x, rt)
    return b.sext(x, rt) if src.kind == Kind.INT else b.zext(x, rt)


def convert_value(e: Emitter, src: DType, dst: DType, x: ir.Value, rounding: str = "rtne") -> ir.Value:
    """One element of ``convert`` from ``src`` to ``dst``."""
    if src == dst:
        return x
    if is_float(src) and is_float(dst):
        return from_float(e, src, dst, x, rounding)
    if is_float(dst):
        return _int_to_float(e, src, dst, x)
    if is_float(src):
        return _float_to_int(e, src, dst, x)
    return _int_to_int(e, src, dst, x)


@lowers(ops.ConvertOp)
def convert(e: Emitter, op: Operation) -> None:
    from .lower_arith import elementwise

    check_fp8(e, op)
    src, dst = op.x.type.scalar, op.result.type.scalar
    rounding = op.rounding
    elementwise(e, op, lambda a: convert_value(e, src, dst, a[0], rounding))


__all__ = ["FP8", "Fp8Format", "check_fp8", "check_fp8_types", "convert_value", "from_f32", "from_f64",
           "from_float", "to_f32", "to_f64", "fp8_decode_soft", "fp8_encode_soft", "f32_to_bf16_soft", "I64"]
