"""Math routines that PTX has no instruction for, as PTX instruction sequences: ``tl.erf``
(f32 and f64), ``tl.math.round`` (half away from zero), floating-point remainder ``%``
(C ``fmod``), and the f64 transcendentals (exp, exp2, log, log2, sin, cos, tan, tanh,
rsqrt, erf).

Triton links libdevice for these; tlxc writes PTX directly, so each routine here is the
classic method written out instruction by instruction: range reduction, a polynomial,
reconstruction, then the IEEE special cases chosen with ``selp``. One function per
routine; ``math`` and ``fmod`` are what ``lower_arith`` calls (16-bit floats arrive
already widened to f32). Every routine is branch-free except ``fmod``, whose long
division loops over the exponent difference of its operands, and sin/cos/tan, which
branch to a Payne-Hanek reduction for |x| >= 2^32.

Accuracy, as measured on an H200 by tests/gpu/test_math_gpu.py (edge cases and random
inputs of the whole range, against mpmath or float64): f32 erf at most 1.2 ulp (every
third f32 in [0, 4.5]), f16/bf16 erf correctly rounded everywhere; f64 exp 1.0 (where
the result is subnormal; 0.8 elsewhere), exp2 0.8, log 0.7, log2 0.6, sin 0.74 and cos
0.74 (up to the largest double), tan 0.9, tanh 1.2, rsqrt 0.5, erf 0.9 ulp; fmod and round
exact.

Polynomials. The constants and coefficient sets are in ``tlxc/codegen/math_constants.py``
(shared with the AMDGPU routines). Evaluation is Horner's rule in ``fma.rn``; every other
operation is written with ``.rn`` so that ptxas does not fuse a multiply and an add that
an error-free transformation (TwoSum, hi/lo splits) depends on.
"""

from __future__ import annotations

import struct
from typing import Callable, Sequence

from ..math_constants import (
    COS,
    ERF32_SMALL,
    ERF32_SPLIT,
    ERF32_TAIL,
    ERF_SMALL,
    ERF_TAIL,
    EXP32,
    EXP64,
    INF,
    IVLN2_HI,
    IVLN2_LO,
    LN2_HI,
    LN2_HI32,
    LN2_HI_T,
    LN2_LO,
    LN2_LO32,
    LN2_LO_T,
    LOG2E,
    LOG_R,
    NAN64,
    PIO2_1,
    PIO2_2,
    PIO2_3,
    SIN,
    TANH,
    TANH_SPLIT,
    TWO_OVER_PI,
    TWO_OVER_PI_WORDS,
)
from .emitter import Emitter
from .ptx import Reg

Operand = Reg | float | int | str


# -- instruction helpers ---------------------------------------------------------------------------

class Fp:
    """PTX instructions on one float type (``f32`` or ``f64``), each into a fresh register
    that is returned; Python numbers become immediates of the type. Arithmetic is written
    with ``.rn`` so that ptxas never contracts it into an fma."""

    def __init__(self, e: Emitter, t: str) -> None:
        self.fn = e.fn
        self.t = t
        self.w = 32 if t == "f32" else 64
        self.b = f"b{self.w}"  # the integer register class of the same width

    def imm(self, v: float) -> str:
        if self.t == "f32":
            return "0f" + struct.pack(">f", v).hex().upper()
        return "0d" + struct.pack(">d", v).hex().upper()

    def src(self, v: Operand) -> str:
        return str(v) if isinstance(v, (Reg, str)) else self.imm(float(v))

    def ins(self, cls: str, opcode: str, *srcs: Operand, into: Reg | None = None) -> Reg:
        """``opcode d, srcs``; ints are integer immediates, floats this type's."""
        d = into if into is not None else self.fn.reg(cls)
        text = ", ".join(str(s) if isinstance(s, (Reg, str, int)) else self.imm(s) for s in srcs)
        self.fn.emit(f"{opcode} {d}, {text}")
        return d

    def _f(self, opcode: str, *srcs: Operand) -> Reg:
        return self.ins(self.t, f"{opcode}.{self.t}", *(self.src(s) for s in srcs))

    def add(self, a: Operand, b: Operand) -> Reg:
        return self._f("add.rn", a, b)

    def sub(self, a: Operand, b: Operand) -> Reg:
        return self._f("sub.rn", a, b)

    def mul(self, a: Operand, b: Operand) -> Reg:
        return self._f("mul.rn", a, b)

    def fma(self, a: Operand, b: Operand, c: Operand) -> Reg:
        return self._f("fma.rn", a, b, c)

    def div(self, a: Operand, b: Operand) -> Reg:
        return self._f("div.rn", a, b)

    def neg(self, a: Operand) -> Reg:
        return self._f("neg", a)

    def abs(self, a: Operand) -> Reg:
        return self._f("abs", a)

    def min(self, a: Operand, b: Operand) -> Reg:
        return self._f("min", a, b)

    def max(self, a: Operand, b: Operand) -> Reg:
        return self._f("max", a, b)

    def rint(self, a: Reg) -> Reg:
        return self.ins(self.t, f"cvt.rni.{self.t}.{self.t}", a)

    def trunc(self, a: Reg) -> Reg:
        return self.ins(self.t, f"cvt.rzi.{self.t}.{self.t}", a)

    def copysign(self, mag: Operand, sign: Operand) -> Reg:
        """|mag| with the sign of ``sign`` (PTX's copysign takes the sign first)."""
        return self._f("copysign", sign, mag)

    def sel(self, p: Reg, a: Operand, b: Operand) -> Reg:
        """``p ? a : b``."""
        return self.ins(self.t, f"selp.{self.t}", self.src(a), self.src(b), p)

    def cmp(self, cond: str, a: Operand, b: Operand) -> Reg:
        return self.ins("pred", f"setp.{cond}.{self.t}", self.src(a), self.src(b))

    def bits(self, a: Reg) -> Reg:
        return self.ins(self.b, f"mov.b{self.w}", a)

    def from_bits(self, a: Reg) -> Reg:
        return self.ins(self.t, f"mov.b{self.w}", a)

    def poly(self, x: Reg, coeffs: Sequence[float]) -> Reg:
        """sum coeffs[i] * x^i by Horner's rule."""
        acc = self.fma(x, coeffs[-1], coeffs[-2])
        for c in reversed(coeffs[:-2]):
            acc = self.fma(acc, x, c)
        return acc

    def por(self, a: Reg, b: Reg) -> Reg:
        return self.ins("pred", "or.pred", a, b)


# -- exponentials ----------------------------------------------------------------------------------

def _pow2(F: Fp, n: Reg) -> Reg:
    """2^n as an f64 for an s32 ``n`` in [-1022, 1023], built in the exponent field."""
    biased = F.ins("b32", "add.s32", n, 1023)
    wide = F.ins("b64", "cvt.u64.u32", biased)
    return F.from_bits(F.ins("b64", "shl.b64", wide, 52))


def _exp_core(F: Fp, a: Reg, a_lo: Reg | None = None) -> Reg:
    """e^(a + a_lo) in f64, ``a_lo`` a small tail of the argument (or none); NaN is the
    caller's to handle (the clamp below drops it).

    Cody-Waite reduction: k = rint(a / ln2), r = a - k*LN2_HI - k*LN2_LO. The first fma is
    exact: for |a| >= 1 both a and k*LN2_HI are multiples of 2^-53 and |r| < 1/2, and for
    |a| < 1, k is -1, 0 or 1 (Sterbenz). Then e^r by its Taylor series to r^13 and
    e^a = e^r * 2^k, the scaling split into two powers of two so that results near the
    overflow and in the subnormal range are rounded once. The clamp to [-746, 710] keeps k
    in range and still gives inf / 0 beyond it.
    """
    a = F.min(F.max(a, -746.0), 710.0)
    k = F.rint(F.mul(a, LOG2E))
    r = F.fma(k, -LN2_HI, a)
    r = F.fma(k, -LN2_LO, r)
    if a_lo is not None:
        r = F.add(r, a_lo)
    return _scale(F, F.poly(r, EXP64), k)


def _scale(F: Fp, p: Reg, k: Reg) -> Reg:
    """p * 2^k for an integral f64 ``k`` in [-1080, 1080] and p in [0.7, 1.5]."""
    n = F.ins("b32", "cvt.rzi.s32.f64", k)
    n1 = F.ins("b32", "shr.s32", n, 1)
    n2 = F.ins("b32", "sub.s32", n, n1)
    return F.mul(F.mul(p, _pow2(F, n1)), _pow2(F, n2))


def exp_f64(e: Emitter, x: Reg) -> Reg:
    """e^x: ``_exp_core``; NaN passes through."""
    F = Fp(e, "f64")
    y = _exp_core(F, x)
    return F.sel(F.cmp("nan", x, x), x, y)


def exp2_f64(e: Emitter, x: Reg) -> Reg:
    """2^x: k = rint(x), f = x - k (exact), r = f*ln2 with the rounding of ln2 carried by
    LN2_LO, then the Taylor polynomial and scaling of ``_exp_core``."""
    F = Fp(e, "f64")
    a = F.min(F.max(x, -1080.0), 1080.0)
    k = F.rint(a)
    f = F.sub(a, k)
    r = F.fma(f, LN2_HI, F.mul(f, LN2_LO))
    y = _scale(F, F.poly(r, EXP64), k)
    return F.sel(F.cmp("nan", x, x), x, y)


def _exp_f32(F: Fp, a: Reg) -> Reg:
    """e^a in f32 for a in [-80, 80] (no overflow or subnormal result): the reduction of
    ``_exp_core`` with LN2_HI32 (exact for the same reasons), Taylor to r^7, and 2^k added
    to the exponent field."""
    k = F.rint(F.mul(a, LOG2E))
    r = F.fma(k, -LN2_HI32, a)
    r = F.fma(k, -LN2_LO32, r)
    p = F.poly(r, EXP32)
    n = F.ins("b32", "cvt.rzi.s32.f32", k)
    shift = F.ins("b32", "shl.b32", n, 23)
    return F.from_bits(F.ins("b32", "add.s32", F.bits(p), shift))


# -- logarithms ------------------------------------------------------------------------------------

def _log_parts(F: Fp, x: Reg) -> tuple[Reg, Reg, Reg, Reg, Reg]:
    """fdlibm's reduction for log(x), x > 0: x = 2^k * (1 + f) with 1 + f in
    [sqrt(2)/2, sqrt(2)), s = f / (2 + f), and log(1 + f) = f - hfsq + s*(hfsq + R) with
    hfsq = f^2 / 2 and R = z*P(z), z = s^2 (see ``LOG_R``). Subnormals are scaled by 2^54
    first. Returns (k as f64, f, hfsq, s, R)."""
    tiny = F.cmp("lt", x, 2.0 ** -1022)
    xs = F.sel(tiny, F.mul(x, 2.0 ** 54), x)
    k_adj = F.ins("b32", "selp.b32", -54, 0, tiny)
    lo, hi = F.fn.reg("b32"), F.fn.reg("b32")
    F.fn.emit(f"mov.b64 {{{lo}, {hi}}}, {F.bits(xs)}")
    # move the mantissa's top bits so that m in [sqrt(2)/2, sqrt(2)) gets exponent 0 or -1
    hx = F.ins("b32", "add.s32", hi, 0x3FF00000 - 0x3FE6A09E)
    k = F.ins("b32", "shr.s32", hx, 20)
    k = F.ins("b32", "add.s32", k, k_adj)
    k = F.ins("b32", "sub.s32", k, 0x3FF)
    hx = F.ins("b32", "and.b32", hx, 0x000FFFFF)
    hx = F.ins("b32", "add.s32", hx, 0x3FE6A09E)
    m_bits = F.fn.reg("b64")
    F.fn.emit(f"mov.b64 {m_bits}, {{{lo}, {hx}}}")
    f = F.sub(F.from_bits(m_bits), 1.0)
    hfsq = F.mul(F.mul(f, f), 0.5)
    s = F.div(f, F.add(f, 2.0))
    z = F.mul(s, s)
    R = F.mul(z, F.poly(z, LOG_R))
    dk = F.ins("f64", "cvt.rn.f64.s32", k)
    return dk, f, hfsq, s, R


def _log_specials(F: Fp, x: Reg, y: Reg) -> Reg:
    """log(+inf) = +inf, log(+-0) = -inf, log(x < 0) = log(NaN) = NaN."""
    y = F.sel(F.cmp("eq", x, INF), x, y)
    y = F.sel(F.cmp("eq", x, 0.0), -INF, y)
    return F.sel(F.cmp("ltu", x, 0.0), NAN64, y)


def log_f64(e: Emitter, x: Reg) -> Reg:
    """log(x) = k*ln2 + log(1 + f), summed as fdlibm does:
    s*(hfsq + R) + k*LN2_LO_T - hfsq + f + k*LN2_HI_T (k*LN2_HI_T is exact)."""
    F = Fp(e, "f64")
    dk, f, hfsq, s, R = _log_parts(F, x)
    t = F.fma(s, F.add(hfsq, R), F.mul(dk, LN2_LO_T))
    t = F.add(F.sub(t, hfsq), f)
    return _log_specials(F, x, F.fma(dk, LN2_HI_T, t))


def log2_f64(e: Emitter, x: Reg) -> Reg:
    """log2(x) = k + log(1 + f)/ln2 as fdlibm's e_log2.c: log(1 + f) split into hi (f - hfsq
    with its low 32 bits cleared, so hi*IVLN2_HI is exact) and lo, each multiplied by the
    two-part 1/ln2, and k added with the rounding error of that sum kept."""
    F = Fp(e, "f64")
    dk, f, hfsq, s, R = _log_parts(F, x)
    hi_bits = F.ins("b64", "and.b64", F.bits(F.sub(f, hfsq)), "0xFFFFFFFF00000000")
    hi = F.from_bits(hi_bits)
    lo = F.fma(s, F.add(hfsq, R), F.sub(F.sub(f, hi), hfsq))
    val_hi = F.mul(hi, IVLN2_HI)
    val_lo = F.fma(F.add(lo, hi), IVLN2_LO, F.mul(lo, IVLN2_HI))
    w = F.add(dk, val_hi)
    val_lo = F.add(val_lo, F.add(F.sub(dk, w), val_hi))
    return _log_specials(F, x, F.add(val_lo, w))


# -- trigonometry ----------------------------------------------------------------------------------

def _reduce_pio2(F: Fp, x: Reg) -> tuple[Reg, Reg, Reg]:
    """x - k*pi/2 = r + rr as a double-double with k = rint(x * 2/pi); returns
    (k mod 4 as b32, r, rr).

    Cody-Waite with a three-part constant (about 160 bits of pi/2): x - k*PIO2_1 is exact
    in one fma (both are multiples of ulp(PIO2_1) once |x| >= 1, and the difference is
    below 1), k*PIO2_2 is subtracted with TwoSum and its product's rounding error, and
    k*PIO2_3 joins the tail. That keeps ~1 ulp up to |x| ~ 2^45; from |x| >= 2^32 on a
    branch replaces it with ``_payne_hanek``, exact for every finite double.
    """
    k = F.rint(F.mul(x, TWO_OVER_PI))
    r1 = F.fma(k, -PIO2_1, x)
    p = F.mul(k, PIO2_2)
    p_lo = F.fma(k, PIO2_2, F.neg(p))       # k*PIO2_2 = p + p_lo exactly
    s = F.sub(r1, p)                         # TwoSum(r1, -p) = s + err
    bb = F.sub(s, r1)
    err = F.sub(F.sub(r1, F.sub(s, bb)), F.add(p, bb))
    tail = F.fma(k, -PIO2_3, F.sub(err, p_lo))
    r = F.add(s, tail)
    rr = F.sub(tail, F.sub(r, s))
    q64 = F.ins("b64", "cvt.rzi.s64.f64", k)
    q = F.ins("b32", "and.b32", F.ins("b32", "cvt.u32.u64", q64), 3)
    ax = F.abs(x)
    big = F.ins("pred", "and.pred", F.cmp("ge", ax, 2.0 ** 32), F.cmp("lt", ax, INF))
    skip = F.fn.label("trig_reduced")
    F.fn.emit(f"bra {skip}", big, negate=True)
    _payne_hanek(F, x, q, r, rr)
    F.fn.place(skip)
    return q, r, rr


def _payne_hanek(F: Fp, x: Reg, q: Reg, r: Reg, rr: Reg) -> None:
    """Payne-Hanek reduction of a finite x (|x| >= 2^32) into q, r, rr (overwritten).

    |x| = m * 2^e with m the 53-bit integer significand. Of m * 2/pi * 2^e only the part
    mod 4 matters, so the words of 2/pi whose products are multiples of 4 are skipped:
    from word j0 = max(0, (e - 2) >> 6) on, four words N (256 bits, chosen from the table
    by a tree of selp on j0's bits) times m give a 320-bit product P whose units bit is
    bit 256 - c, c = e - 64*j0 in [-20, 65]. The 128 bits from there down (two bits of
    quadrant, 126 of fraction; the table's truncation costs under 2^-130) are rounded to
    the nearest quadrant by reading them shifted left by two as a signed fraction f in
    [-1/2, 1/2), which becomes a double-double and is multiplied by pi/2.
    """
    def u64(opcode: str, *srcs: Operand) -> Reg:
        return F.ins("b64", opcode, *srcs)

    def u32(opcode: str, *srcs: Operand) -> Reg:
        return F.ins("b32", opcode, *srcs)

    bits = F.bits(x)
    m = u64("or.b64", u64("and.b64", bits, (1 << 52) - 1), 1 << 52)
    e = u32("sub.s32", u32("cvt.u32.u64", u64("bfe.u64", bits, 52, 11)), 1075)
    j0 = u32("max.s32", u32("shr.s32", u32("sub.s32", e, 2), 6), 0)
    c = u32("sub.s32", e, u32("shl.b32", j0, 6))
    # words j0 .. j0+3 of the table: j0 <= 15 (the largest exponent, 971, gives 15)
    j_bits = [F.ins("pred", "setp.ne.b32", u32("and.b32", j0, 1 << b), 0) for b in range(4)]
    words = []
    for off in range(4):
        level: list[Operand] = [hex(TWO_OVER_PI_WORDS[j + off]) for j in range(16)]
        for b in range(4):
            level = [u64("selp.b64", level[i + 1], level[i], j_bits[b]) for i in range(0, len(level), 2)]
        words.append(level[0])
    A, B, C, D = words
    # P = m * (A:B:C:D), five words P4 (high) .. P0; P0 is never needed (the shift is >= 65)
    a_hi, b_hi, c_hi, d_hi = (u64("mul.hi.u64", w, m) for w in (A, B, C, D))
    a_lo, b_lo, c_lo = (u64("mul.lo.u64", w, m) for w in (A, B, C))
    p1, p2, p3, p4 = (F.fn.reg("b64") for _ in range(4))
    F.fn.emit(f"add.cc.u64 {p1}, {d_hi}, {c_lo}")
    F.fn.emit(f"addc.cc.u64 {p2}, {c_hi}, {b_lo}")
    F.fn.emit(f"addc.cc.u64 {p3}, {b_hi}, {a_lo}")
    F.fn.emit(f"addc.u64 {p4}, {a_hi}, 0")
    # V = (P >> (130 - c)) mod 2^128, the shift done as one word dropped (P0), perhaps a
    # second, then a funnel shift by s in [0, 63]
    s = u32("sub.s32", 66, c)
    second = F.ins("pred", "setp.ge.s32", s, 64)
    w0 = u64("selp.b64", p2, p1, second)
    w1 = u64("selp.b64", p3, p2, second)
    w2 = u64("selp.b64", p4, p3, second)
    s = u32("selp.b32", u32("sub.s32", s, 64), s, second)
    back = u32("sub.s32", 64, s)
    v_lo = u64("or.b64", u64("shr.b64", w0, s), u64("shl.b64", w1, back))
    v_hi = u64("or.b64", u64("shr.b64", w1, s), u64("shl.b64", w2, back))
    # quadrant, rounded to nearest by the fraction's top bit
    quad = u32("cvt.u32.u64", u64("shr.b64", v_hi, 62))
    half = u32("cvt.u32.u64", u64("bfe.u64", v_hi, 61, 1))
    quad = u32("add.s32", quad, half)
    f_hi = u64("or.b64", u64("shl.b64", v_hi, 2), u64("shr.b64", v_lo, 62))
    f_lo = u64("shl.b64", v_lo, 2)
    # f = (f_hi:f_lo) * 2^-128 as a double-double: f_hi's top and bottom 32 bits are exact
    # doubles, f_lo rounds far below them
    a = F.mul(F.ins("f64", "cvt.rn.f64.s64", u64("and.b64", f_hi, "0xFFFFFFFF00000000")), 2.0 ** -64)
    b = F.mul(F.ins("f64", "cvt.rn.f64.u64", u64("and.b64", f_hi, 0xFFFFFFFF)), 2.0 ** -64)
    cl = F.mul(F.ins("f64", "cvt.rn.f64.u64", f_lo), 2.0 ** -128)
    hi = F.add(a, b)
    lo = F.add(F.add(F.sub(a, hi), b), cl)
    # times pi/2 (PIO2_1 + PIO2_2), again as a double-double
    r_hi = F.mul(hi, PIO2_1)
    t = F.fma(hi, PIO2_2, F.fma(lo, PIO2_1, F.fma(hi, PIO2_1, F.neg(r_hi))))
    r_new = F.add(r_hi, t)
    rr_new = F.sub(t, F.sub(r_new, r_hi))
    # x < 0: sin and cos of -x from those of x, with the quadrant negated too
    neg = F.cmp("lt", x, 0.0)
    F.ins("f64", "selp.f64", F.neg(r_new), r_new, neg, into=r)
    F.ins("f64", "selp.f64", F.neg(rr_new), rr_new, neg, into=rr)
    quad = u32("selp.b32", u32("neg.s32", quad), quad, neg)
    F.ins("b32", "and.b32", quad, 3, into=q)


def _sin_kernel(F: Fp, r: Reg, rr: Reg) -> tuple[Reg, Reg]:
    """sin(r + rr), |r| <= pi/4, as fdlibm's __kernel_sin:
    r - ((z*(rr/2 - v*S') - rr) - v*S1), z = r^2, v = z*r, S' = (S - S1)/z. Returned as
    hi + lo: the final subtraction's rounding error (Fast2Sum), which tan uses."""
    z = F.mul(r, r)
    v = F.mul(z, r)
    tail = F.poly(z, SIN[1:])
    a = F.fma(F.neg(v), tail, F.mul(rr, 0.5))
    b = F.fma(z, a, F.neg(rr))
    c = F.fma(F.neg(v), SIN[0], b)
    hi = F.sub(r, c)
    return hi, F.sub(F.sub(r, hi), c)


def _cos_kernel(F: Fp, r: Reg, rr: Reg) -> tuple[Reg, Reg]:
    """cos(r + rr), |r| <= pi/4, as fdlibm's __kernel_cos: with hz = z/2 and w = 1 - hz,
    w + (((1 - w) - hz) + (z*z*C(z) - r*rr)), which keeps 1 - hz's rounding error.
    Returned as hi + lo like ``_sin_kernel``."""
    z = F.mul(r, r)
    zc = F.mul(z, F.poly(z, COS))
    hz = F.mul(z, 0.5)
    w = F.sub(1.0, hz)
    corr = F.fma(z, zc, F.neg(F.mul(r, rr)))
    small = F.add(F.sub(F.sub(1.0, w), hz), corr)
    hi = F.add(w, small)
    return hi, F.sub(small, F.sub(hi, w))


def _trig(e: Emitter, x: Reg, which: str) -> Reg:
    """sin / cos / tan of x: reduce by pi/2, evaluate both kernels, and pick by the
    quadrant (tan = sin/cos, or -cos/sin in odd quadrants, each a hi + lo pair, so the
    quotient is about as accurate as sin and cos themselves). |x| < 2^-27 returns x (sin,
    tan; this keeps -0) or 1 (cos). inf and NaN give NaN through the reduction."""
    F = Fp(e, "f64")
    q, r, rr = _reduce_pio2(F, x)
    (s, s_lo), (c, c_lo) = _sin_kernel(F, r, rr), _cos_kernel(F, r, rr)
    odd = F.ins("pred", "setp.ne.b32", F.ins("b32", "and.b32", q, 1), 0)
    if which == "tan":
        # (n + n_lo) / (d + d_lo): the quotient of the leading parts, corrected by the
        # exact remainder n - q*d (one fma) and the tails
        n, n_lo = F.sel(odd, F.neg(c), s), F.sel(odd, F.neg(c_lo), s_lo)
        d, d_lo = F.sel(odd, s, c), F.sel(odd, s_lo, c_lo)
        y = F.div(n, d)
        rem = F.fma(F.neg(y), d_lo, F.add(F.fma(F.neg(y), d, n), n_lo))
        y = F.add(y, F.div(rem, d))
        tiny_value: Operand = x
    else:
        # sin: S, C, -S, -C by quadrant; cos: C, -S, -C, S (its quadrant shifted by one)
        quadrant = q if which == "sin" else F.ins("b32", "add.s32", q, 1)
        y = F.sel(odd, c, s) if which == "sin" else F.sel(odd, s, c)
        flip = F.ins("pred", "setp.ne.b32", F.ins("b32", "and.b32", quadrant, 2), 0)
        y = F.sel(flip, F.neg(y), y)
        tiny_value = x if which == "sin" else 1.0
    return F.sel(F.cmp("lt", F.abs(x), 2.0 ** -27), tiny_value, y)


def sin_f64(e: Emitter, x: Reg) -> Reg:
    """sin(x): see ``_trig``."""
    return _trig(e, x, "sin")


def cos_f64(e: Emitter, x: Reg) -> Reg:
    """cos(x): see ``_trig``."""
    return _trig(e, x, "cos")


def tan_f64(e: Emitter, x: Reg) -> Reg:
    """tan(x): see ``_trig``."""
    return _trig(e, x, "tan")


# -- tanh, rsqrt, erf, round ----------------------------------------------------------------------

def tanh_f64(e: Emitter, x: Reg) -> Reg:
    """tanh(x): x + x^3*T(x^2) for |x| < 0.625; beyond, 1 - 2/(e^(2|x|) + 1) with the sign
    of x, where 2/(e^2|x| + 1) <= 0.45 so its rounding errors shrink in the difference.
    e^(2|x|) overflows to inf from |x| ~ 355, which gives exactly +-1. NaN takes the
    polynomial path (unordered compare) and stays NaN."""
    F = Fp(e, "f64")
    t = F.abs(x)
    z = F.mul(x, x)
    small = F.copysign(F.fma(F.mul(x, z), F.poly(z, TANH), x), x)  # tanh(-0) = -0
    big = F.sub(1.0, F.div(2.0, F.add(_exp_core(F, F.add(t, t)), 1.0)))
    return F.sel(F.cmp("ltu", t, TANH_SPLIT), small, F.copysign(big, x))


def rsqrt_f64(e: Emitter, x: Reg) -> Reg:
    """1/sqrt(x): ``rsqrt.approx.f64`` (about 2^-20 relative) and two Newton steps
    y += y*(1 - x*y^2)/2; the second computes the residual exactly (x*y as a hi/lo pair
    via fma), so the result is rounded about once. Inputs below 2^-1000 are scaled by
    2^200 (and the result by 2^100) to keep x*y normal. rsqrt(+inf) = 0,
    rsqrt(+-0) = +-inf, negative and NaN give NaN."""
    F = Fp(e, "f64")
    tiny = F.cmp("lt", x, 2.0 ** -1000)
    xs = F.sel(tiny, F.mul(x, 2.0 ** 200), x)
    y = F.ins("f64", "rsqrt.approx.f64", xs)
    h = F.mul(xs, y)
    y = F.fma(F.mul(y, 0.5), F.fma(F.neg(h), y, 1.0), y)
    h = F.mul(xs, y)
    h_lo = F.fma(xs, y, F.neg(h))
    res = F.fma(F.neg(h_lo), y, F.fma(F.neg(h), y, 1.0))
    y = F.fma(F.mul(y, 0.5), res, y)
    y = F.mul(y, F.sel(tiny, 2.0 ** 100, 1.0))
    y = F.sel(F.cmp("eq", x, INF), 0.0, y)
    y = F.sel(F.cmp("eq", x, 0.0), F.copysign(INF, x), y)
    return F.sel(F.cmp("ltu", x, 0.0), NAN64, y)


def erf_f64(e: Emitter, x: Reg) -> Reg:
    """erf(x): x + x*P(x^2) for |x| < 1; for 1 <= |x| (clamped to 6, where erf rounds to
    +-1) erf = 1 - erfc with erfc(u) = exp(-u^2) * G((u - 3)/(u + 3)) / (1 + 2u) (the
    rational change of variable of Chebyshev-style erfc fits, ``ERF_TAIL``). u^2 is formed
    exactly as a hi/lo pair so that exp(-u^2) keeps full accuracy; erfc <= 0.16 there, so
    its error is scaled down in 1 - erfc. NaN takes the polynomial path."""
    F = Fp(e, "f64")
    t = F.abs(x)
    small = F.fma(x, F.poly(F.mul(x, x), ERF_SMALL), x)
    u = F.min(t, 6.0)
    h = F.mul(u, u)
    h_lo = F.fma(u, u, F.neg(h))
    g = F.poly(F.div(F.sub(u, 3.0), F.add(u, 3.0)), ERF_TAIL)
    erfc = F.mul(_exp_core(F, F.neg(h), F.neg(h_lo)), F.div(g, F.fma(u, 2.0, 1.0)))
    big = F.copysign(F.sub(1.0, erfc), x)
    return F.sel(F.cmp("ltu", t, 1.0), small, big)


def erf_f32(e: Emitter, x: Reg) -> Reg:
    """erf(x) in f32: x + x*P(x^2) for |x| < 0.921875; beyond, 1 - exp(Q(|x|)) with Q a
    fit of log(erfc) on [0.921875, 4] (|x| clamped to 4, where erf rounds to +-1) and an
    accurate f32 exp (``_exp_f32``; erfc <= 0.2 there, so its error shrinks in
    1 - erfc). The split and the use of log(erfc) follow the usual f32 erf designs
    (e.g. CUDA's erff). NaN takes the polynomial path."""
    F = Fp(e, "f32")
    t = F.abs(x)
    small = F.fma(x, F.poly(F.mul(x, x), ERF32_SMALL), x)
    big = F.sub(1.0, _exp_f32(F, F.poly(F.min(t, 4.0), ERF32_TAIL)))
    return F.sel(F.cmp("ltu", t, ERF32_SPLIT), small, F.copysign(big, x))


def round_half_away(e: Emitter, t: str, x: Reg) -> Reg:
    """round(x), halfway cases away from zero (C's round): trunc(x), plus +-1 where
    |x - trunc(x)| >= 1/2. The difference is exact, and is 0 for the large values that are
    already integers; inf - inf = NaN fails the comparison, so +-inf and NaN pass through,
    and -0.3 keeps its sign (-0)."""
    F = Fp(e, t)
    r = F.trunc(x)
    away = F.cmp("ge", F.abs(F.sub(x, r)), 0.5)
    return F.sel(away, F.add(r, F.copysign(1.0, x)), r)


# -- fmod ------------------------------------------------------------------------------------------

def fmod(e: Emitter, t: str, x: Reg, y: Reg) -> Reg:
    """C's fmod(x, y) for f32 or f64, exactly: x - n*y with n = trunc(x/y), the sign of x.

    The classic integer method (as musl's fmod): with |x| = mx * 2^ex and |y| = my * 2^ey
    (integer significands with the leading bit made explicit; subnormals have exponent 1
    and no leading bit), the remainder of mx * 2^(ex - ey) by my is found by long
    division: r = mx mod my, then repeatedly r = (r << k) mod my, k at most 40 (f32) or
    11 (f64) bits so that the shifted r fits in 64 bits. That loops at most 7 (f32) or 186
    (f64) times, once for operands of nearby magnitudes. r * 2^ey is exact and is
    renormalized into the result's bits (subnormal where it falls below the normal range).

    Special cases as C: fmod(x, +-0), fmod(+-inf, y) and NaN operands give NaN;
    |x| < |y| (y = +-inf included) gives x; a zero remainder is 0 with the sign of x.
    """
    F = Fp(e, t)
    W, M = (32, 23) if t == "f32" else (64, 52)
    step = 40 if t == "f32" else 11
    sign = 1 << (W - 1)
    inf_bits = 0x7F800000 if t == "f32" else 0x7FF0000000000000
    ib = F.b
    bx, by = F.bits(x), F.bits(y)
    ax = F.ins(ib, f"and.b{W}", bx, sign - 1)
    ay = F.ins(ib, f"and.b{W}", by, sign - 1)
    sx = F.ins(ib, f"and.b{W}", bx, sign)
    nan = F.por(F.por(F.ins("pred", f"setp.eq.u{W}", ay, 0), F.ins("pred", f"setp.ge.u{W}", ax, inf_bits)),
                F.ins("pred", f"setp.gt.u{W}", ay, inf_bits))
    keep_x = F.ins("pred", f"setp.lt.u{W}", ax, ay)

    def significand(a: Reg) -> tuple[Reg, Reg]:
        """(the integer significand as u64, the exponent as s32 with subnormals at 1)"""
        ex = F.ins(ib, f"shr.u{W}", a, M)
        if W == 64:
            ex = F.ins("b32", "cvt.u32.u64", ex)
        normal = F.ins("pred", "setp.ne.u32", ex, 0)
        lead = F.ins(ib, f"selp.b{W}", 1 << M, 0, normal)
        m = F.ins(ib, f"or.b{W}", F.ins(ib, f"and.b{W}", a, (1 << M) - 1), lead)
        if W == 32:
            m = F.ins("b64", "cvt.u64.u32", m)
        return m, F.ins("b32", "max.s32", ex, 1)

    mx, ex = significand(ax)
    my, ey = significand(ay)
    my = F.ins("b64", "selp.b64", 1, my, nan)  # no division by zero; the result is NaN anyway
    d = F.ins("b32", "sub.s32", ex, ey)
    d = F.ins("b32", "selp.b32", 0, d, F.por(nan, keep_x))
    r = F.ins("b64", "rem.u64", mx, my)
    head, done = F.fn.label("fmod"), F.fn.label("fmod_done")
    F.fn.place(head)
    stop = F.ins("pred", "setp.le.s32", d, 0)
    F.fn.emit(f"bra {done}", stop)
    k = F.ins("b32", "min.s32", d, step)
    F.ins("b64", "shl.b64", r, k, into=r)
    F.ins("b64", "rem.u64", r, my, into=r)
    F.ins("b32", "sub.s32", d, k, into=d)
    F.fn.emit(f"bra {head}")
    F.fn.place(done)
    # r * 2^(ey - 1 - M - bias): shift r's leading bit to bit M and set the exponent, or
    # leave it subnormal when the exponent would fall below 1
    lz = F.ins("b32", "clz.b64", r)
    s = F.ins("b32", "sub.s32", lz, 63 - M)
    en = F.ins("b32", "sub.s32", ey, s)
    expo = F.ins("b64", "cvt.u64.u32", F.ins("b32", "sub.s32", en, 1))
    normal_bits = F.ins("b64", "add.s64", F.ins("b64", "shl.b64", r, s), F.ins("b64", "shl.b64", expo, M))
    sub_bits = F.ins("b64", "shl.b64", r, F.ins("b32", "sub.s32", ey, 1))
    mag = F.ins("b64", "selp.b64", normal_bits, sub_bits, F.ins("pred", "setp.ge.s32", en, 1))
    mag = F.ins("b64", "selp.b64", 0, mag, F.ins("pred", "setp.eq.u64", r, 0))
    if W == 32:
        mag = F.ins("b32", "cvt.u32.u64", mag)
    res = F.from_bits(F.ins(ib, f"or.b{W}", mag, sx))
    res = F.sel(keep_x, x, res)
    return F.sel(nan, NAN64, res)


# -- the table lower_arith asks ---------------------------------------------------------------------

F64: dict[str, Callable[[Emitter, Reg], Reg]] = {
    "exp": exp_f64, "exp2": exp2_f64, "log": log_f64, "log2": log2_f64, "sin": sin_f64, "cos": cos_f64,
    "tan": tan_f64, "tanh": tanh_f64, "rsqrt": rsqrt_f64, "erf": erf_f64,
    "round": lambda e, x: round_half_away(e, "f64", x),
}
F32: dict[str, Callable[[Emitter, Reg], Reg]] = {
    "erf": erf_f32,
    "round": lambda e, x: round_half_away(e, "f32", x),
}


def math(e: Emitter, name: str, t: str, x: Reg) -> Reg | None:
    """``tl.<name>`` of an f32 or f64 register by a routine of this module, or None when
    this module has none for it (``lower_arith`` has single instructions for the rest)."""
    fn = (F64 if t == "f64" else F32).get(name)
    return fn(e, x) if fn is not None else None
