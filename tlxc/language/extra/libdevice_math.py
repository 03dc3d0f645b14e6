"""libdevice's inverse trigonometric, hyperbolic and a few more elementary functions
(``asin``, ``acos``, ``atan``, ``atan2``, ``sinh``, ``cosh``, ``asinh``, ``acosh``,
``atanh``, ``expm1``, ``log1p``, ``cbrt``, ``hypot``, ``exp10``, ``log10``), written in the
kernel language so that one definition serves every target and the interpreter.

Each is computed in float64 and rounded to the operand's type. The building blocks are
exact or correctly rounded everywhere (``+ - *``, ``fma``, ``div_rn``, ``sqrt``, ``floor``,
``where``), plus tlxc's float64 ``exp`` and ``log``, which are tlxc's own routines on every
target (within about 1 ulp, ``codegen/*/lower_math.py``), never the f32 hardware
approximations. Because float64 carries 29 more bits than float32, the float32 results are
the correctly rounded value in all but rare halfway-close cases.

The algorithms:

- ``atan`` of t in [0, 1]: the nearest c = k/8, atan(t) = atan(c) + atan(u) with
  u = (t - c) / (1 + t c), |u| <= 1/16 (t - c is exact), atan(c) as a double-double table
  and atan(u) by its Taylor series to u^17 (the next term is below 2^-64 of u). ``atan`` of
  |x| > 1 is pi/2 - atan(1/|x|); ``atan2`` divides the smaller magnitude by the larger and
  moves to the quadrant; ``asin`` and ``acos`` are atan2 of x and sqrt((1 - x)(1 + x))
  (1 - x^2 by one fma below 1/2).
- ``sinh``: Taylor to x^19 below 1, (e - 1/e)/2 with e = exp(|x|) up to 22, and
  (h/2) h with h = exp(|x|/2) beyond (exp(x) alone would overflow before sinh does);
  ``cosh`` the same without the series.
- ``log1p``: Kahan's u = 1 + x, log(u) x / (u - 1), exact in its rounding of u; ``asinh``,
  ``acosh``, ``atanh`` on log1p near their zero and on log further out (log(|x|) + ln 2
  past 2^28); ``expm1``: Taylor to x^20 below 1, exp(x) - 1 beyond.
- ``cbrt``: an exponent-divided-by-three first guess and Newton steps; ``hypot``:
  max * sqrt(1 + (min/max)^2); ``exp10``: x ln 10 as a double-double hi + lo (one fma),
  exp(hi) (1 + lo); ``log10``: log(x) times 1/ln 10 as a double-double.

Accuracy, measured in the interpreter (tests/frontend/test_libdevice_math.py asserts these
bounds on wide ranges and the special values; libdevice's own bounds beside them):

======  ==================  =================  ==================
name    float64, at most    float32, at most   libdevice f32 / f64
======  ==================  =================  ==================
asin    2.5 ulp             0.5 ulp            2 / 2 ulp
acos    2.5 ulp             0.5 ulp            2 / 2 ulp
atan    2 ulp               0.5 ulp            2 / 2 ulp
atan2   2.5 ulp             0.5 ulp            3 / 2 ulp
sinh    3 ulp               0.5 ulp            3 / 2 ulp
cosh    3 ulp               0.5 ulp            2 / 1 ulp
asinh   3 ulp               0.5 ulp            3 / 2 ulp
acosh   3.5 ulp             0.5 ulp            4 / 2 ulp
atanh   3 ulp               0.5 ulp            3 / 2 ulp
expm1   3 ulp               0.5 ulp            1 / 1 ulp
log1p   2.5 ulp             0.5 ulp            1 / 1 ulp
cbrt    1.5 ulp             0.5 ulp            1 / 1 ulp
hypot   2.5 ulp             0.5 ulp            3 / 2 ulp
exp10   2 ulp               0.5 ulp            2 / 1 ulp
log10   2 ulp               0.5 ulp            2 / 1 ulp
======  ==================  =================  ==================

(float64 bounds: the largest error seen over several random samples, rounded up to half
an ulp with half an ulp to spare, as a fixed sample can miss the worst case. 0.5 ulp for
float32 means "0.5 ulp plus the float64 result's error": the tests allow 0.501.) On the
GPU float64 ``exp``/``log`` are tlxc's routines rather than numpy's, which can add about
one ulp to the names built on them (sinh ... log10) in float64.
"""

from __future__ import annotations

import tlxc
from tlxc.language import core as tl

# pi/2 and pi as double-doubles: the double nearest, and the double nearest the remainder
PIO2_HI: tl.constexpr = tl.constexpr(1.5707963267948966)
PIO2_LO: tl.constexpr = tl.constexpr(6.123233995736766e-17)
PI_HI: tl.constexpr = tl.constexpr(3.141592653589793)
PI_LO: tl.constexpr = tl.constexpr(1.2246467991473532e-16)
LN2: tl.constexpr = tl.constexpr(0.6931471805599453)
LN10_HI: tl.constexpr = tl.constexpr(2.302585092994046)
LN10_LO: tl.constexpr = tl.constexpr(-2.17057274931598e-16)
LOG10E_HI: tl.constexpr = tl.constexpr(0.4342944819032518)
LOG10E_LO: tl.constexpr = tl.constexpr(1.0977546996415732e-17)
TWO_28: tl.constexpr = tl.constexpr(268435456.0)

# atan(k/8), k = 0..8, as hi + lo (hi the nearest double; lo the rest, from long double
# arithmetic: 2^-64 relative, far below what it corrects)
_ATAN_K8 = (
    (0.0, 0.0),
    (0.12435499454676144, -3.1238575094738597e-18),
    (0.24497866312686414, 1.0692943926138287e-17),
    (0.35877067027057225, -2.461138931542095e-17),
    (0.4636476090008061, 2.268693045925918e-17),
    (0.5585993153435624, -5.4752209710517974e-18),
    (0.6435011087932844, 1.5829351718288365e-17),
    (0.7188299996216245, -2.1467203015212988e-17),
    (0.7853981633974483, 3.061616997868383e-17),
)


@tlxc.constexpr_function
def _atan_k8(k, part):  # noqa: ANN001, ANN202
    return _ATAN_K8[k][part]


@tlxc.constexpr_function
def _inv_factorial(n):  # noqa: ANN001, ANN202
    f = 1
    for i in range(2, n + 1):
        f *= i
    return 1.0 / f


@tlxc.constexpr_function
def _check_float(dt, name):  # noqa: ANN001, ANN202
    if not dt.is_floating() or dt.is_fp8():
        raise ValueError(f"libdevice.{name}: expected a float operand, got {dt!r}")
    return True


# -- float64 cores --------------------------------------------------------------------------------
@tlxc.jit
def _copysign(x, y):
    b = (x.to(tl.int64, bitcast=True) & 0x7FFFFFFFFFFFFFFF) | (y.to(tl.int64, bitcast=True) & -0x8000000000000000)
    return b.to(tl.float64, bitcast=True)


@tlxc.jit
def _atan01(t):
    """atan(t) for t in [0, 1] (NaN in, NaN out)."""
    k = tl.floor(t * 8.0 + 0.5)
    c = k * 0.125
    u = tl.div_rn(t - c, tl.fma(t, c, 1.0))
    u2 = u * u
    # atan(u) = u - u^3/3 + u^5/5 - ... : p(u2) = -1/3 + u2/5 - ... + u2^7/17
    p = tl.fma(u2, 1.0 / 17.0, -1.0 / 15.0)
    p = tl.fma(u2, p, 1.0 / 13.0)
    p = tl.fma(u2, p, -1.0 / 11.0)
    p = tl.fma(u2, p, 1.0 / 9.0)
    p = tl.fma(u2, p, -1.0 / 7.0)
    p = tl.fma(u2, p, 1.0 / 5.0)
    p = tl.fma(u2, p, -1.0 / 3.0)
    hi = tl.zeros_like(t)
    lo = tl.zeros_like(t)
    for i in tl.static_range(1, 9):
        hi = tl.where(k == i, _atan_k8(i, 0), hi)
        lo = tl.where(k == i, _atan_k8(i, 1), lo)
    return hi + (lo + tl.fma(u * u2, p, u))


@tlxc.jit
def _atan_ratio(n, d):
    """atan(n / d) for n, d >= 0, not both 0 or both inf: the smaller over the larger."""
    swap = n > d
    r = _atan01(tl.div_rn(tl.where(swap, d, n), tl.where(swap, n, d)))
    return tl.where(swap, (PIO2_HI - r) + PIO2_LO, r)


@tlxc.jit
def _atan64(x):
    return _copysign(_atan_ratio(tl.abs(x), 1.0), x)


@tlxc.jit
def _atan2_64(y, x):
    ay = tl.abs(y)
    ax = tl.abs(x)
    both_inf = (ay == float("inf")) & (ax == float("inf"))
    both_zero = (ay == 0.0) & (ax == 0.0)
    # both infinite: atan2 is +-pi/4 or +-3pi/4, the angle of (1, 1); both zero: 0 or pi
    ay = tl.where(both_inf, 1.0, tl.where(both_zero, 0.0, ay))
    ax = tl.where(both_inf, 1.0, tl.where(both_zero, 1.0, ax))
    a = _atan_ratio(ay, ax)
    x_neg = x.to(tl.int64, bitcast=True) < 0  # -0 counts: atan2(+-0, -0) = +-pi
    a = tl.where(x_neg, (PI_HI - a) + PI_LO, a)
    r = _copysign(a, y)
    return tl.where((x != x) | (y != y), x + y, r)


@tlxc.jit
def _sqrt_one_minus_sq(a):
    """sqrt(1 - a^2) for a = |x|: one fma below 1/2; (1 - a)(1 + a) above, 1 - a exact."""
    return tl.sqrt(tl.where(a < 0.5, tl.fma(-a, a, 1.0), (1.0 - a) * (1.0 + a)))


@tlxc.jit
def _asin64(x):
    a = tl.abs(x)
    return _copysign(_atan_ratio(a, _sqrt_one_minus_sq(a)), x)


@tlxc.jit
def _acos64(x):
    a = tl.abs(x)
    r = _atan_ratio(_sqrt_one_minus_sq(a), a)
    return tl.where(x < 0.0, (PI_HI - r) + PI_LO, r)


@tlxc.jit
def _exp_halves(a):
    """exp(a)/2 for large a without overflowing early: (h/2) h with h = exp(a/2)."""
    h = tl.exp(a * 0.5)
    return (h * 0.5) * h


@tlxc.jit
def _sinh64(x):
    a = tl.abs(x)
    a2 = a * a
    p = tl.full(x.shape, _inv_factorial(19), tl.float64)
    for i in tl.static_range(1, 9):
        p = tl.fma(a2, p, _inv_factorial(19 - 2 * i))
    small = tl.fma(a * a2, p, a)
    e = tl.exp(a)
    mid = (e - tl.div_rn(1.0, e)) * 0.5
    r = tl.where(a < 1.0, small, tl.where(a <= 22.0, mid, _exp_halves(a)))
    return _copysign(r, x)


@tlxc.jit
def _cosh64(x):
    a = tl.abs(x)
    e = tl.exp(a)
    return tl.where(a <= 22.0, (e + tl.div_rn(1.0, e)) * 0.5, _exp_halves(a))


@tlxc.jit
def _log1p64(x):
    u = 1.0 + x
    r = tl.log(u) * tl.div_rn(x, u - 1.0)
    return tl.where(u == 1.0, x, tl.where(u == float("inf"), u, r))


@tlxc.jit
def _log_big(a):
    """log(2a) for a >= 2^28 (a^2 may overflow): log(a) + ln 2."""
    return tl.log(a) + LN2


@tlxc.jit
def _asinh64(x):
    a = tl.abs(x)
    a2 = a * a
    s = tl.sqrt(tl.fma(a, a, 1.0))
    near = _log1p64(a + tl.div_rn(a2, 1.0 + s))
    mid = tl.log(tl.fma(a, 2.0, tl.div_rn(1.0, s + a)))
    r = tl.where(a < 2.0, near, tl.where(a < TWO_28, mid, _log_big(a)))
    return _copysign(r, x)


@tlxc.jit
def _acosh64(x):
    t = x - 1.0
    near = _log1p64(t + tl.sqrt(t * (t + 2.0)))
    mid = tl.log(tl.fma(x, 2.0, -tl.div_rn(1.0, x + tl.sqrt(tl.fma(x, x, -1.0)))))
    r = tl.where(x <= 2.0, near, tl.where(x < TWO_28, mid, _log_big(x)))
    return tl.where(x < 1.0, tl.sqrt(t), r)  # below 1: sqrt of a negative, NaN


@tlxc.jit
def _atanh64(x):
    a = tl.abs(x)
    t = a + a
    one_minus = 1.0 - a
    r = tl.where(a < 0.5, _log1p64(tl.fma(t, tl.div_rn(a, one_minus), t)), _log1p64(tl.div_rn(t, one_minus)))
    return _copysign(r * 0.5, x)


@tlxc.jit
def _expm1_64(x):
    p = tl.full(x.shape, _inv_factorial(20), tl.float64)
    for i in tl.static_range(1, 19):
        p = tl.fma(x, p, _inv_factorial(20 - i))
    small = tl.where(x == 0.0, x, tl.fma(x * x, p, x))  # expm1(-0) = -0
    return tl.where(tl.abs(x) < 1.0, small, tl.exp(x) - 1.0)


@tlxc.jit
def _cbrt64(x):
    a = tl.abs(x)
    tiny = a < 2.0 ** -1000
    a = tl.where(tiny, a * 2.0 ** 300, a)  # exact; the result is scaled back by 2^-100
    # a first guess within about 6%: the biased exponent divided by three, the bits below
    # it following along
    bits = a.to(tl.int64, bitcast=True)
    y = ((bits - (1023 << 52)) // 3 + (1023 << 52)).to(tl.float64, bitcast=True)
    for _ in tl.static_range(5):
        y = y + (tl.div_rn(a, y * y) - y) * (1.0 / 3.0)
    y = tl.where(tiny, y * 2.0 ** -100, y)
    return tl.where((a == 0.0) | (a == float("inf")) | (x != x), x, _copysign(y, x))


@tlxc.jit
def _hypot64(x, y):
    a = tl.abs(x)
    b = tl.abs(y)
    swap = b > a
    big = tl.where(swap, b, a)
    small = tl.where(swap, a, b)
    r = tl.where((big == 0.0) | (big == float("inf")), 0.0, tl.div_rn(small, big))
    h = big * tl.sqrt(tl.fma(r, r, 1.0))
    h = tl.where((x != x) | (y != y), x + y, h)
    return tl.where((a == float("inf")) | (b == float("inf")), float("inf"), h)


@tlxc.jit
def _exp10_64(x):
    hi = x * LN10_HI
    lo = tl.fma(x, LN10_HI, -hi) + x * LN10_LO
    e = tl.exp(hi)
    return tl.where((e < float("inf")) & (tl.abs(hi) < float("inf")), tl.fma(e, lo, e), e)


@tlxc.jit
def _log10_64(x):
    g = tl.log(x)
    return tl.fma(g, LOG10E_HI, g * LOG10E_LO)


# -- the libdevice names: float64 inside, rounded to the operand's type ----------------------------
@tlxc.jit
def _f64(x, name: tl.constexpr):
    tl.static_assert(_check_float(x.dtype, name), "libdevice: a float operand is needed")
    return x.to(tl.float64)


@tlxc.jit
def asin(x):
    """Arc sine; NaN outside [-1, 1]."""
    return _asin64(_f64(x, "asin")).to(x.dtype)


@tlxc.jit
def acos(x):
    """Arc cosine, in [0, pi]; NaN outside [-1, 1]."""
    return _acos64(_f64(x, "acos")).to(x.dtype)


@tlxc.jit
def atan(x):
    """Arc tangent, in [-pi/2, pi/2]."""
    return _atan64(_f64(x, "atan")).to(x.dtype)


@tlxc.jit
def atan2(y, x):
    """The angle of the point (x, y), in [-pi, pi], with C's rules for zeros and infinities."""
    tl.static_assert(x.dtype == y.dtype, "libdevice.atan2 needs two operands of one float type")
    return _atan2_64(_f64(y, "atan2"), _f64(x, "atan2")).to(x.dtype)


@tlxc.jit
def sinh(x):
    return _sinh64(_f64(x, "sinh")).to(x.dtype)


@tlxc.jit
def cosh(x):
    return _cosh64(_f64(x, "cosh")).to(x.dtype)


@tlxc.jit
def asinh(x):
    return _asinh64(_f64(x, "asinh")).to(x.dtype)


@tlxc.jit
def acosh(x):
    """Inverse hyperbolic cosine; NaN below 1."""
    return _acosh64(_f64(x, "acosh")).to(x.dtype)


@tlxc.jit
def atanh(x):
    """Inverse hyperbolic tangent; +-inf at +-1, NaN beyond."""
    return _atanh64(_f64(x, "atanh")).to(x.dtype)


@tlxc.jit
def expm1(x):
    """exp(x) - 1, accurate near 0."""
    return _expm1_64(_f64(x, "expm1")).to(x.dtype)


@tlxc.jit
def log1p(x):
    """log(1 + x), accurate near 0."""
    return _log1p64(_f64(x, "log1p")).to(x.dtype)


@tlxc.jit
def cbrt(x):
    """Cube root (of negative numbers too)."""
    return _cbrt64(_f64(x, "cbrt")).to(x.dtype)


@tlxc.jit
def hypot(x, y):
    """sqrt(x^2 + y^2) without overflow or underflow in between; inf if either is infinite."""
    tl.static_assert(x.dtype == y.dtype, "libdevice.hypot needs two operands of one float type")
    return _hypot64(_f64(x, "hypot"), _f64(y, "hypot")).to(x.dtype)


@tlxc.jit
def exp10(x):
    return _exp10_64(_f64(x, "exp10")).to(x.dtype)


@tlxc.jit
def log10(x):
    return _log10_64(_f64(x, "log10")).to(x.dtype)
