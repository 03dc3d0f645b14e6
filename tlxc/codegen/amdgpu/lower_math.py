"""The math ops (``ops.MATH_OPS``: exp, exp2, log, log2, sqrt, rsqrt, sin, cos, tan, tanh,
floor, ceil, erf, trunc, round) and the exact floating-point remainder (``fmod``), as
LLVM IR.

What each becomes, following Triton's AMD backend where it has a choice (its
``ElementwiseOpToLLVM.cpp``, with ``allow_flush_denorm=False``, the default):

==========  =============================================  ====================================
op          f32 (f16 / bf16 / fp8: in f32, rounded back)   f64
==========  =============================================  ====================================
exp2        ``llvm.exp2.f32``: ``v_exp_f32`` with LLVM's   routine (``exp2_f64``)
            denormal scaling (Triton's ``Exp2OpConversion``)
exp         ``llvm.exp2.f32(x * log2 e)`` (Triton's        routine (``exp_f64``)
            ``ExpOpConversionApprox``: the fast one)
log, log2   ``llvm.log.f32`` / ``llvm.log2.f32``            routines (fdlibm's reduction)
            (``v_log_f32``; what ocml's ``log``/``log2`` are)
sqrt        ``llvm.sqrt.f32``: correctly rounded            ``llvm.sqrt.f64`` (correctly rounded)
            (tlxc's ``sqrt`` is ``sqrt_rn`` on every target)
rsqrt       ``llvm.amdgcn.rsq.f32`` (``v_rsq_f32``, 1 ulp)  ``v_rsq_f64`` seed + two Newton
            with denormal inputs scaled by 2^24             steps (``rsqrt_f64``)
sin cos     in f64 (``sin_f64``...), rounded to f32:       routines: Cody-Waite reduction,
tan tanh    ocml-class accuracy for every input (Triton     Payne-Hanek from 2^32 on, fdlibm
erf         calls ocml's accurate routines for these)       kernels
floor ceil  ``llvm.floor/ceil/trunc/round`` (``v_floor``,   the same on f64
trunc round ``v_ceil``, ``v_trunc``; round: half away)
==========  =============================================  ====================================

The f64 routines are those of ``codegen/nvptx/lower_math.py`` (same algorithms, and the
coefficient tables of ``codegen/math_constants.py``: one set of verified fits), written
with ``llvmlite.ir`` instead of PTX text. Only target-independent LLVM instructions and
intrinsics are used, except ``llvm.amdgcn.rsq.*``: the host test harness substitutes an
exact equivalent for that one, so the routines' numerics are tested on the CPU.
No fast-math flags are set, so LLVM does not contract or reassociate the error-free
transformations (TwoSum, hi/lo splits) the routines rely on.
"""

from __future__ import annotations

from typing import Callable, Sequence

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType
from .. import math_constants as _tables
from .emitter import Emitter, lowers
from .llvm import F32, F64, I1, I32, I64, mangle

LOG2E = 1.4426950408889634
INF = float("inf")
NAN = float("nan")

Operand = ir.Value | float | int


class Fp:
    """LLVM float instructions on one type (f32 or f64); Python numbers become constants."""

    def __init__(self, e: Emitter, ty: ir.Type) -> None:
        self.e = e
        self.b = e.b
        self.t = ty
        self.w = 32 if ty == F32 else 64
        self.it = ir.IntType(self.w)
        self.sfx = mangle(ty)

    def v(self, x: Operand) -> ir.Value:
        return x if isinstance(x, ir.Value) else ir.Constant(self.t, float(x))

    def _i(self, name: str, *args: Operand) -> ir.Value:
        vals = [self.v(a) for a in args]
        return self.e.call(f"llvm.{name}.{self.sfx}", self.t, vals)

    def add(self, a: Operand, b: Operand) -> ir.Value:
        return self.b.fadd(self.v(a), self.v(b))

    def sub(self, a: Operand, b: Operand) -> ir.Value:
        return self.b.fsub(self.v(a), self.v(b))

    def mul(self, a: Operand, b: Operand) -> ir.Value:
        return self.b.fmul(self.v(a), self.v(b))

    def div(self, a: Operand, b: Operand) -> ir.Value:
        return self.b.fdiv(self.v(a), self.v(b))

    def fma(self, a: Operand, b: Operand, c: Operand) -> ir.Value:
        return self._i("fma", a, b, c)

    def neg(self, a: Operand) -> ir.Value:
        return self.b.fneg(self.v(a))

    def abs(self, a: Operand) -> ir.Value:
        return self._i("fabs", a)

    def min(self, a: Operand, b: Operand) -> ir.Value:
        return self._i("minnum", a, b)

    def max(self, a: Operand, b: Operand) -> ir.Value:
        return self._i("maxnum", a, b)

    def rint(self, a: Operand) -> ir.Value:
        return self._i("rint", a)

    def trunc(self, a: Operand) -> ir.Value:
        return self._i("trunc", a)

    def copysign(self, mag: Operand, sign: Operand) -> ir.Value:
        return self._i("copysign", mag, sign)

    def sel(self, p: ir.Value, a: Operand, b: Operand) -> ir.Value:
        return self.b.select(p, self.v(a), self.v(b))

    def cmp(self, cond: str, a: Operand, b: Operand) -> ir.Value:
        """``lt``/``le``/``gt``/``ge``/``eq`` ordered, ``ltu`` unordered, ``nan``: either is NaN."""
        x, y = self.v(a), self.v(b)
        if cond == "nan":
            return self.b.fcmp_unordered("uno", x, y)
        sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
        if cond.endswith("u"):
            return self.b.fcmp_unordered(sym[cond[:-1]], x, y)
        return self.b.fcmp_ordered(sym[cond], x, y)

    def bits(self, a: ir.Value) -> ir.Value:
        return self.b.bitcast(a, self.it)

    def from_bits(self, a: ir.Value) -> ir.Value:
        return self.b.bitcast(a, self.t)

    def poly(self, x: ir.Value, coeffs: Sequence[float]) -> ir.Value:
        """sum coeffs[i] * x^i by Horner's rule."""
        acc = self.fma(x, coeffs[-1], coeffs[-2])
        for c in reversed(coeffs[:-2]):
            acc = self.fma(acc, x, c)
        return acc


def i32(v: int) -> ir.Constant:
    return ir.Constant(I32, v & 0xFFFFFFFF)


def i64(v: int) -> ir.Constant:
    return ir.Constant(I64, v & 0xFFFFFFFFFFFFFFFF)


# -- exponentials ------------------------------------------------------------------------------------

def _pow2(F: Fp, n: ir.Value) -> ir.Value:
    """2^n as an f64 for an i32 ``n`` in [-1022, 1023], built in the exponent field."""
    b = F.b
    return F.from_bits(b.shl(b.zext(b.add(n, i32(1023)), I64), i64(52)))


def _scale(F: Fp, p: ir.Value, k: ir.Value) -> ir.Value:
    """p * 2^k for an integral f64 ``k`` in [-1080, 1080], in two steps so that results near
    the overflow and in the subnormal range are rounded once."""
    b = F.b
    n = b.fptosi(k, I32)
    n1 = b.ashr(n, i32(1))
    n2 = b.sub(n, n1)
    return F.mul(F.mul(p, _pow2(F, n1)), _pow2(F, n2))


def _exp_core(F: Fp, a: ir.Value, a_lo: ir.Value | None = None) -> ir.Value:
    """e^(a + a_lo) in f64 (Cody-Waite reduction by ln 2, Taylor to r^13, scaling); NaN is
    the caller's to handle."""
    a = F.min(F.max(a, -746.0), 710.0)
    k = F.rint(F.mul(a, LOG2E))
    r = F.fma(k, -_tables.LN2_HI, a)
    r = F.fma(k, -_tables.LN2_LO, r)
    if a_lo is not None:
        r = F.add(r, a_lo)
    return _scale(F, F.poly(r, _tables.EXP64), k)


def exp_f64(e: Emitter, x: ir.Value) -> ir.Value:
    F = Fp(e, F64)
    return F.sel(F.cmp("nan", x, x), x, _exp_core(F, x))


def exp2_f64(e: Emitter, x: ir.Value) -> ir.Value:
    """2^x: k = rint(x), f = x - k (exact), r = f*ln2 carried in two parts, then as exp."""
    F = Fp(e, F64)
    a = F.min(F.max(x, -1080.0), 1080.0)
    k = F.rint(a)
    f = F.sub(a, k)
    r = F.fma(f, _tables.LN2_HI, F.mul(f, _tables.LN2_LO))
    y = _scale(F, F.poly(r, _tables.EXP64), k)
    return F.sel(F.cmp("nan", x, x), x, y)


# -- logarithms --------------------------------------------------------------------------------------

def _log_parts(F: Fp, x: ir.Value) -> tuple[ir.Value, ...]:
    """fdlibm's reduction x = 2^k (1 + f), 1 + f in [sqrt(2)/2, sqrt(2)); returns
    (k as f64, f, hfsq, s, R) with log(1 + f) = f - hfsq + s*(hfsq + R)."""
    b = F.b
    tiny = F.cmp("lt", x, 2.0 ** -1022)
    xs = F.sel(tiny, F.mul(x, 2.0 ** 54), x)
    k_adj = b.select(tiny, i32(-54), i32(0))
    bits = F.bits(xs)
    lo = b.and_(bits, i64(0xFFFFFFFF))
    hi = b.trunc(b.lshr(bits, i64(32)), I32)
    hx = b.add(hi, i32(0x3FF00000 - 0x3FE6A09E))
    k = b.sub(b.add(b.ashr(hx, i32(20)), k_adj), i32(0x3FF))
    hx = b.add(b.and_(hx, i32(0x000FFFFF)), i32(0x3FE6A09E))
    m = F.from_bits(b.or_(b.shl(b.zext(hx, I64), i64(32)), lo))
    f = F.sub(m, 1.0)
    hfsq = F.mul(F.mul(f, f), 0.5)
    s = F.div(f, F.add(f, 2.0))
    z = F.mul(s, s)
    R = F.mul(z, F.poly(z, _tables.LOG_R))
    return b.sitofp(k, F64), f, hfsq, s, R


def _log_specials(F: Fp, x: ir.Value, y: ir.Value) -> ir.Value:
    y = F.sel(F.cmp("eq", x, INF), x, y)
    y = F.sel(F.cmp("eq", x, 0.0), -INF, y)
    return F.sel(F.cmp("ltu", x, 0.0), NAN, y)


def log_f64(e: Emitter, x: ir.Value) -> ir.Value:
    F = Fp(e, F64)
    dk, f, hfsq, s, R = _log_parts(F, x)
    t = F.fma(s, F.add(hfsq, R), F.mul(dk, _tables.LN2_LO_T))
    t = F.add(F.sub(t, hfsq), f)
    return _log_specials(F, x, F.fma(dk, _tables.LN2_HI_T, t))


def log2_f64(e: Emitter, x: ir.Value) -> ir.Value:
    F = Fp(e, F64)
    dk, f, hfsq, s, R = _log_parts(F, x)
    hi = F.from_bits(F.b.and_(F.bits(F.sub(f, hfsq)), i64(0xFFFFFFFF00000000)))
    lo = F.fma(s, F.add(hfsq, R), F.sub(F.sub(f, hi), hfsq))
    val_hi = F.mul(hi, _tables.IVLN2_HI)
    val_lo = F.fma(F.add(lo, hi), _tables.IVLN2_LO, F.mul(lo, _tables.IVLN2_HI))
    w = F.add(dk, val_hi)
    val_lo = F.add(val_lo, F.add(F.sub(dk, w), val_hi))
    return _log_specials(F, x, F.add(val_lo, w))


# -- trigonometry ------------------------------------------------------------------------------------

def _reduce_pio2(F: Fp, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """x - k*pi/2 = r + rr (double-double), returns (k mod 4 as i32, r, rr): Cody-Waite
    with three parts of pi/2, and a branch to ``_payne_hanek`` for finite |x| >= 2^32."""
    b = F.b
    k = F.rint(F.mul(x, _tables.TWO_OVER_PI))
    r1 = F.fma(k, -_tables.PIO2_1, x)
    p = F.mul(k, _tables.PIO2_2)
    p_lo = F.fma(k, _tables.PIO2_2, F.neg(p))
    s = F.sub(r1, p)
    bb = F.sub(s, r1)
    err = F.sub(F.sub(r1, F.sub(s, bb)), F.add(p, bb))
    tail = F.fma(k, -_tables.PIO2_3, F.sub(err, p_lo))
    r = F.add(s, tail)
    rr = F.sub(tail, F.sub(r, s))
    # k may be NaN or huge here (then the Payne-Hanek path or NaN is taken): saturate
    q = b.and_(b.trunc(F.e.call("llvm.fptosi.sat.i64.f64", I64, [k]), I32), i32(3))
    ax = F.abs(x)
    big = b.and_(F.cmp("ge", ax, 2.0 ** 32), F.cmp("lt", ax, INF))
    fn = b.function
    far = fn.append_basic_block("trig.far")
    join = fn.append_basic_block("trig.reduced")
    near_end = b.block
    b.cbranch(big, far, join)
    b.position_at_end(far)
    q2, r2, rr2 = _payne_hanek(F, x)
    far_end = b.block
    b.branch(join)
    b.position_at_end(join)
    out = []
    for near_v, far_v in ((q, q2), (r, r2), (rr, rr2)):
        phi = b.phi(near_v.type)
        phi.add_incoming(near_v, near_end)
        phi.add_incoming(far_v, far_end)
        out.append(phi)
    return out[0], out[1], out[2]


def _mul_wide(b: ir.IRBuilder, w: ir.Value, m: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(high, low) 64-bit words of the 128-bit product of two u64."""
    I128 = ir.IntType(128)
    p = b.mul(b.zext(w, I128), b.zext(m, I128))
    return b.trunc(b.lshr(p, ir.Constant(I128, 64)), I64), b.trunc(p, I64)


def _payne_hanek(F: Fp, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """Payne-Hanek reduction of a finite |x| >= 2^32 (see the NVIDIA routine of the same
    name for the derivation): four 64-bit words of 2/pi chosen by the exponent, times the
    53-bit significand, the 128 bits around the units place rounded to a quadrant and a
    signed fraction, times pi/2 as a double-double."""
    b = F.b
    I128 = ir.IntType(128)
    bits = F.bits(x)
    m = b.or_(b.and_(bits, i64((1 << 52) - 1)), i64(1 << 52))
    ex = b.sub(b.trunc(b.and_(b.lshr(bits, i64(52)), i64(0x7FF)), I32), i32(1075))
    j0 = b.ashr(b.sub(ex, i32(2)), i32(6))
    j0 = b.select(b.icmp_signed("<", j0, i32(0)), i32(0), j0)
    c = b.sub(ex, b.shl(j0, i32(6)))
    j_bits = [b.icmp_unsigned("!=", b.and_(j0, i32(1 << k)), i32(0)) for k in range(4)]
    words = []
    for off in range(4):
        level: list[ir.Value] = [i64(_tables.TWO_OVER_PI_WORDS[j + off]) for j in range(16)]
        for k in range(4):
            level = [b.select(j_bits[k], level[i + 1], level[i]) for i in range(0, len(level), 2)]
        words.append(level[0])
    A, B, C, D = words
    a_hi, a_lo = _mul_wide(b, A, m)
    b_hi, b_lo = _mul_wide(b, B, m)
    c_hi, c_lo = _mul_wide(b, C, m)
    d_hi, _ = _mul_wide(b, D, m)

    def add3(x1: ir.Value, x2: ir.Value, carry: ir.Value | None) -> tuple[ir.Value, ir.Value]:
        t = b.add(b.zext(x1, I128), b.zext(x2, I128))
        if carry is not None:
            t = b.add(t, carry)
        return b.trunc(t, I64), b.lshr(t, ir.Constant(I128, 64))

    p1, cy = add3(d_hi, c_lo, None)
    p2, cy = add3(c_hi, b_lo, cy)
    p3, cy = add3(b_hi, a_lo, cy)
    p4 = b.add(a_hi, b.trunc(cy, I64))
    s = b.sub(i32(66), c)
    second = b.icmp_signed(">=", s, i32(64))
    w0 = b.select(second, p2, p1)
    w1 = b.select(second, p3, p2)
    w2 = b.select(second, p4, p3)
    s = b.zext(b.select(second, b.sub(s, i32(64)), s), I64)
    fshr = "llvm.fshr.i64"
    v_lo = F.e.call(fshr, I64, [w1, w0, s])
    v_hi = F.e.call(fshr, I64, [w2, w1, s])
    quad = b.trunc(b.lshr(v_hi, i64(62)), I32)
    half = b.trunc(b.and_(b.lshr(v_hi, i64(61)), i64(1)), I32)
    quad = b.add(quad, half)
    f_hi = b.or_(b.shl(v_hi, i64(2)), b.lshr(v_lo, i64(62)))
    f_lo = b.shl(v_lo, i64(2))
    a = F.mul(b.sitofp(b.and_(f_hi, i64(0xFFFFFFFF00000000)), F64), 2.0 ** -64)
    bl = F.mul(b.uitofp(b.and_(f_hi, i64(0xFFFFFFFF)), F64), 2.0 ** -64)
    cl = F.mul(b.uitofp(f_lo, F64), 2.0 ** -128)
    hi = F.add(a, bl)
    lo = F.add(F.add(F.sub(a, hi), bl), cl)
    r_hi = F.mul(hi, _tables.PIO2_1)
    t = F.fma(hi, _tables.PIO2_2, F.fma(lo, _tables.PIO2_1, F.fma(hi, _tables.PIO2_1, F.neg(r_hi))))
    r_new = F.add(r_hi, t)
    rr_new = F.sub(t, F.sub(r_new, r_hi))
    neg = F.cmp("lt", x, 0.0)
    r = F.sel(neg, F.neg(r_new), r_new)
    rr = F.sel(neg, F.neg(rr_new), rr_new)
    quad = b.select(neg, b.neg(quad), quad)
    return b.and_(quad, i32(3)), r, rr


def _sin_kernel(F: Fp, r: ir.Value, rr: ir.Value) -> tuple[ir.Value, ir.Value]:
    z = F.mul(r, r)
    v = F.mul(z, r)
    tail = F.poly(z, _tables.SIN[1:])
    a = F.fma(F.neg(v), tail, F.mul(rr, 0.5))
    b2 = F.fma(z, a, F.neg(rr))
    c = F.fma(F.neg(v), _tables.SIN[0], b2)
    hi = F.sub(r, c)
    return hi, F.sub(F.sub(r, hi), c)


def _cos_kernel(F: Fp, r: ir.Value, rr: ir.Value) -> tuple[ir.Value, ir.Value]:
    z = F.mul(r, r)
    zc = F.mul(z, F.poly(z, _tables.COS))
    hz = F.mul(z, 0.5)
    w = F.sub(1.0, hz)
    corr = F.fma(z, zc, F.neg(F.mul(r, rr)))
    small = F.add(F.sub(F.sub(1.0, w), hz), corr)
    hi = F.add(w, small)
    return hi, F.sub(small, F.sub(hi, w))


def _trig(e: Emitter, x: ir.Value, which: str) -> ir.Value:
    F = Fp(e, F64)
    b = F.b
    q, r, rr = _reduce_pio2(F, x)
    (s, s_lo), (c, c_lo) = _sin_kernel(F, r, rr), _cos_kernel(F, r, rr)
    odd = b.icmp_unsigned("!=", b.and_(q, i32(1)), i32(0))
    if which == "tan":
        n, n_lo = F.sel(odd, F.neg(c), s), F.sel(odd, F.neg(c_lo), s_lo)
        d, d_lo = F.sel(odd, s, c), F.sel(odd, s_lo, c_lo)
        y = F.div(n, d)
        rem = F.fma(F.neg(y), d_lo, F.add(F.fma(F.neg(y), d, n), n_lo))
        y = F.add(y, F.div(rem, d))
        tiny_value: Operand = x
    else:
        quadrant = q if which == "sin" else b.add(q, i32(1))
        y = F.sel(odd, c, s) if which == "sin" else F.sel(odd, s, c)
        flip = b.icmp_unsigned("!=", b.and_(quadrant, i32(2)), i32(0))
        y = F.sel(flip, F.neg(y), y)
        tiny_value = x if which == "sin" else 1.0
    return F.sel(F.cmp("lt", F.abs(x), 2.0 ** -27), tiny_value, y)


def sin_f64(e: Emitter, x: ir.Value) -> ir.Value:
    return _trig(e, x, "sin")


def cos_f64(e: Emitter, x: ir.Value) -> ir.Value:
    return _trig(e, x, "cos")


def tan_f64(e: Emitter, x: ir.Value) -> ir.Value:
    return _trig(e, x, "tan")


# -- tanh, rsqrt, erf ---------------------------------------------------------------------------------

def tanh_f64(e: Emitter, x: ir.Value) -> ir.Value:
    F = Fp(e, F64)
    t = F.abs(x)
    z = F.mul(x, x)
    small = F.copysign(F.fma(F.mul(x, z), F.poly(z, _tables.TANH), x), x)
    big = F.sub(1.0, F.div(2.0, F.add(_exp_core(F, F.add(t, t)), 1.0)))
    return F.sel(F.cmp("ltu", t, _tables.TANH_SPLIT), small, F.copysign(big, x))


def rsqrt_f64(e: Emitter, x: ir.Value) -> ir.Value:
    """``v_rsq_f64`` (about 2^-22 relative) and two Newton steps, the second with an exact
    residual; tiny inputs scaled by 2^200 to keep x*y normal."""
    F = Fp(e, F64)
    tiny = F.cmp("lt", x, 2.0 ** -1000)
    xs = F.sel(tiny, F.mul(x, 2.0 ** 200), x)
    y = e.call("llvm.amdgcn.rsq.f64", F64, [xs])
    h = F.mul(xs, y)
    y = F.fma(F.mul(y, 0.5), F.fma(F.neg(h), y, 1.0), y)
    h = F.mul(xs, y)
    h_lo = F.fma(xs, y, F.neg(h))
    res = F.fma(F.neg(h_lo), y, F.fma(F.neg(h), y, 1.0))
    y = F.fma(F.mul(y, 0.5), res, y)
    y = F.mul(y, F.sel(tiny, 2.0 ** 100, 1.0))
    y = F.sel(F.cmp("eq", x, INF), 0.0, y)
    y = F.sel(F.cmp("eq", x, 0.0), F.copysign(INF, x), y)
    return F.sel(F.cmp("ltu", x, 0.0), NAN, y)


def erf_f64(e: Emitter, x: ir.Value) -> ir.Value:
    F = Fp(e, F64)
    t = F.abs(x)
    small = F.fma(x, F.poly(F.mul(x, x), _tables.ERF_SMALL), x)
    u = F.min(t, 6.0)
    h = F.mul(u, u)
    h_lo = F.fma(u, u, F.neg(h))
    g = F.poly(F.div(F.sub(u, 3.0), F.add(u, 3.0)), _tables.ERF_TAIL)
    erfc = F.mul(_exp_core(F, F.neg(h), F.neg(h_lo)), F.div(g, F.fma(u, 2.0, 1.0)))
    big = F.copysign(F.sub(1.0, erfc), x)
    return F.sel(F.cmp("ltu", t, 1.0), small, big)


# -- fmod --------------------------------------------------------------------------------------------

def fmod(e: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """C's fmod(x, y) for f32 or f64, exactly: the integer long division of the NVIDIA
    routine (musl's method). The significand remainder is reduced ``step`` exponent bits
    at a time in a loop (at most 7 trips for f32, 186 for f64; one for operands of nearby
    magnitudes), then renormalized (subnormal where it falls below the normal range).
    fmod(x, +-0), fmod(+-inf, y) and NaN operands give NaN; |x| < |y| gives x."""
    b = e.b
    F = Fp(e, x.type)
    W, M = (32, 23) if x.type == F32 else (64, 52)
    step = 40 if W == 32 else 11
    it = F.it
    sign = 1 << (W - 1)
    inf_bits = 0x7F800000 if W == 32 else 0x7FF0000000000000

    def ci(v: int) -> ir.Constant:
        return ir.Constant(it, v & ((1 << W) - 1))

    bx, by = F.bits(x), F.bits(y)
    ax, ay = b.and_(bx, ci(sign - 1)), b.and_(by, ci(sign - 1))
    sx = b.and_(bx, ci(sign))
    nan = b.or_(b.or_(b.icmp_unsigned("==", ay, ci(0)), b.icmp_unsigned(">=", ax, ci(inf_bits))),
                b.icmp_unsigned(">", ay, ci(inf_bits)))
    keep_x = b.icmp_unsigned("<", ax, ay)

    def significand(a: ir.Value) -> tuple[ir.Value, ir.Value]:
        ex = b.lshr(a, ci(M))
        ex = b.trunc(ex, I32) if W == 64 else ex
        normal = b.icmp_unsigned("!=", ex, i32(0))
        mant = b.or_(b.and_(a, ci((1 << M) - 1)), b.select(normal, ci(1 << M), ci(0)))
        mant = b.zext(mant, I64) if W == 32 else mant
        return mant, b.select(normal, ex, i32(1))

    mx, ex = significand(ax)
    my, ey = significand(ay)
    my = b.select(nan, i64(1), my)
    d = b.select(b.or_(nan, keep_x), i32(0), b.sub(ex, ey))
    r0 = b.urem(mx, my)
    fn = b.function
    head, body, done = (fn.append_basic_block(n) for n in ("fmod.head", "fmod.body", "fmod.done"))
    before = b.block
    b.branch(head)
    b.position_at_end(head)
    r = b.phi(I64)
    dd = b.phi(I32)
    r.add_incoming(r0, before)
    dd.add_incoming(d, before)
    b.cbranch(b.icmp_signed("<=", dd, i32(0)), done, body)
    b.position_at_end(body)
    k = b.select(b.icmp_signed("<", dd, i32(step)), dd, i32(step))
    r_next = b.urem(b.shl(r, b.zext(k, I64)), my)
    d_next = b.sub(dd, k)
    r.add_incoming(r_next, body)
    dd.add_incoming(d_next, body)
    b.branch(head)
    b.position_at_end(done)
    lz = b.trunc(e.call("llvm.ctlz.i64", I64, [r, ir.Constant(I1, 0)]), I32)
    s = b.sub(lz, i32(63 - M))
    s = b.select(b.icmp_signed(">", s, i32(63)), i32(63), s)
    en = b.sub(ey, s)
    expo = b.zext(b.sub(en, i32(1)), I64)
    normal_bits = b.add(b.shl(r, b.zext(s, I64)), b.shl(expo, i64(M)))
    sub_bits = b.shl(r, b.zext(b.and_(b.sub(ey, i32(1)), i32(63)), I64))
    mag = b.select(b.icmp_signed(">=", en, i32(1)), normal_bits, sub_bits)
    mag = b.select(b.icmp_unsigned("==", r, i64(0)), i64(0), mag)
    if W == 32:
        mag = b.trunc(mag, I32)
    res = F.from_bits(b.or_(mag, sx))
    res = F.sel(keep_x, x, res)
    return F.sel(nan, NAN, res)


# -- the math ops --------------------------------------------------------------------------------------

def _via_f64(fn: Callable[[Emitter, ir.Value], ir.Value]) -> Callable[[Emitter, ir.Value], ir.Value]:
    def f32(e: Emitter, x: ir.Value) -> ir.Value:
        return e.b.fptrunc(fn(e, e.b.fpext(x, F64)), F32)

    return f32


def _llvm(name: str) -> Callable[[Emitter, ir.Value], ir.Value]:
    def f(e: Emitter, x: ir.Value) -> ir.Value:
        return e.call(f"llvm.{name}.{mangle(x.type)}", x.type, [x])

    return f


def exp_f32(e: Emitter, x: ir.Value) -> ir.Value:
    """Triton's fast exp: 2^(x * log2 e) with ``v_exp_f32`` (the product's rounding costs up
    to ~2^-18 relative for large |x|, as on NVIDIA)."""
    return e.call("llvm.exp2.f32", F32, [e.b.fmul(x, ir.Constant(F32, LOG2E))])


def rsqrt_f32(e: Emitter, x: ir.Value) -> ir.Value:
    """``v_rsq_f32`` (1 ulp); a denormal input is scaled by 2^24 first (the instruction
    flushes it) and the result by 2^12."""
    b = e.b
    tiny = b.fcmp_ordered("<", e.call("llvm.fabs.f32", F32, [x]), ir.Constant(F32, 2.0 ** -126))
    xs = b.select(tiny, b.fmul(x, ir.Constant(F32, 2.0 ** 24)), x)
    y = e.call("llvm.amdgcn.rsq.f32", F32, [xs])
    return b.select(tiny, b.fmul(y, ir.Constant(F32, 2.0 ** 12)), y)


F32_MATH: dict[str, Callable[[Emitter, ir.Value], ir.Value]] = {
    "exp": exp_f32, "exp2": _llvm("exp2"), "log": _llvm("log"), "log2": _llvm("log2"), "sqrt": _llvm("sqrt"),
    "rsqrt": rsqrt_f32, "sin": _via_f64(sin_f64), "cos": _via_f64(cos_f64), "tan": _via_f64(tan_f64),
    "tanh": _via_f64(tanh_f64), "erf": _via_f64(erf_f64), "floor": _llvm("floor"), "ceil": _llvm("ceil"),
    "trunc": _llvm("trunc"), "round": _llvm("round"),
}
F64_MATH: dict[str, Callable[[Emitter, ir.Value], ir.Value]] = {
    "exp": exp_f64, "exp2": exp2_f64, "log": log_f64, "log2": log2_f64, "sqrt": _llvm("sqrt"),
    "rsqrt": rsqrt_f64, "sin": sin_f64, "cos": cos_f64, "tan": tan_f64, "tanh": tanh_f64, "erf": erf_f64,
    "floor": _llvm("floor"), "ceil": _llvm("ceil"), "trunc": _llvm("trunc"), "round": _llvm("round"),
}
assert set(F32_MATH) == set(F64_MATH) == set(ops.MATH_OPS), "every math op needs an AMDGPU lowering"


def math_value(e: Emitter, t: DType, name: str, x: ir.Value) -> ir.Value:
    """One element of ``tl.<name>`` on ``t``: f64 and f32 directly, the narrow floats in
    f32 and rounded back (fp8 saturating), as the interpreter computes them."""
    from .lower_cast import from_f32, to_f32

    if t.ir_name == "f64":
        return F64_MATH[name](e, x)
    if t.ir_name == "f32":
        return F32_MATH[name](e, x)
    return from_f32(e, t, F32_MATH[name](e, to_f32(e, t, x)))


@lowers(*ops.MATH_OPS.values())
def math(e: Emitter, op: Operation) -> None:
    from .lower_arith import elementwise
    from .lower_cast import check_fp8

    check_fp8(e, op)
    t = op.result.type.scalar
    elementwise(e, op, lambda a: math_value(e, t, op.NAME, a[0]))


__all__ = ["math_value", "fmod", "F32_MATH", "F64_MATH", "Fp"]
