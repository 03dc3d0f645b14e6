"""``libdevice``: the math names Triton kernels call through
``triton.language.extra.libdevice`` / ``triton.language.extra.cuda.libdevice``, for tlxc::

    import tlxc.language.extra.libdevice as libdevice      # or
    from tlxc.language.extra.cuda import libdevice          # or, in a kernel,
    y = tl.extra.cuda.libdevice.tanh(x)

Triton calls NVIDIA's libdevice bitcode for these. tlxc links no bitcode: each name here
is a tlxc builtin (the same op as ``tl.exp`` & co, so the same code on every target and in
the interpreter), or a function written in the kernel language on top of them where that
composition is exact. A libdevice name tlxc has no faithful implementation of is listed in
``NOT_YET``: using it is ``TLXC-NAME-002`` ("not supported by tlxc yet") at the user's
line, never a less accurate stand-in. For the same reason the launch option
``extern_libs={"libdevice": path}`` (Triton's way to pick the bitcode file) is accepted
for a ``libdevice*.bc`` file only and changes nothing: the file is not read
(``kernels/extern_libs.py``).

Precision. Where a name is a tlxc math op, it has that op's precision, which on NVIDIA
follows Triton's ``tl.*`` (fast hardware approximations in f32), not libdevice's:

=====================  ======================================  ==============================
name                   tlxc, NVIDIA f32                         libdevice f32
=====================  ======================================  ==============================
exp                    ``ex2.approx`` of x*log2(e): about       ``__nv_expf``: 2 ulp
                       2^-22 relative plus |x| * 2^-24 (the
                       rounding of x*log2(e))
exp2                   ``ex2.approx.ftz`` (subnormals to 0)     2 ulp, subnormals kept
log, log2              ``lg2.approx``: 2^-22 absolute near 1    1 ulp
sin, cos               ``sin/cos.approx``: 2^-20.5 absolute     2 ulp over the whole range
                       for |x| <= pi; about 2^-19 measured on
                       an H200 for |x| <= 20, worse far out
tan                    sin.approx / cos.approx                  4 ulp
tanh                   ``tanh.approx``: about 2^-11 relative    2 ulp
rsqrt                  ``rsqrt.approx`` (2 ulp class)           2 ulp
=====================  ======================================  ==============================

so ``tanh``, ``sin``, ``cos``, ``tan`` and ``exp`` differ most; the ``fast_*`` names
(``fast_expf``...) are libdevice's own approximations and match tlxc's class. Exact or
correctly rounded on every target, as libdevice: ``sqrt``/``sqrt_rn``, ``div_rn``,
``rcp_rn``, ``fma``/``fma_rn``, ``floor``, ``ceil``, ``trunc``, ``round``, ``rint``,
``nearbyint``, ``fmod``, ``fdim``, ``abs``, ``copysign``, the classifications (``isnan``,
``isinf``, ``signbit``, ``finitef``, ``isfinited``) and the conversions and bit casts.
``erf`` is tlxc's routine (at most 1.2 ulp in f32). ``asin``, ``acos``, ``atan``,
``atan2``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh``, ``expm1``, ``log1p``,
``cbrt``, ``hypot``, ``exp10`` and ``log10`` are computed in float64 on exact operations
(``libdevice_math.py``, with their measured bounds): 0.5 ulp in f32, at most 3 in f64.
float64 math and, on AMD, f32 sin, cos, tan, tanh and erf are tlxc's routines, within
about 1 ulp (``codegen/*/lower_math.py``).

Result types follow Triton's declarations (``isnan`` and ``isinf`` give ``int1``, the other
classifications ``int32``), except that the unsigned conversions (``float2uint_rn``...)
give unsigned types rather than Triton's ``int32``. The integer conversions assume the
value is in range, as a C cast does (out of range is unspecified in libdevice too).

This module is imported on first use (never by ``import tlxc``): its functions are
``@tlxc.jit`` functions, which need the whole package.
"""

from __future__ import annotations

# absolute imports: the module is made on first use, once the tlxc package exists
import tlxc
from tlxc.language import core as tl
from tlxc.language.core import Builtin

# written in the kernel language, float64 inside (libdevice_math.py says how, and how accurate)
from tlxc.language.extra.libdevice_math import (  # noqa: F401 (libdevice's names)
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    cosh,
    exp10,
    expm1,
    hypot,
    log1p,
    log10,
    sinh,
)

# -- the math ops tl itself does not name ---------------------------------------------------
tan = Builtin("tan", "Tangent.", namespace="libdevice")
tanh = Builtin("tanh", "Hyperbolic tangent.", namespace="libdevice")
trunc = Builtin("trunc", "Round toward zero.", namespace="libdevice")
round = Builtin("round", "Round to nearest, halfway cases away from zero (C round).", namespace="libdevice")  # noqa: A001

# -- the same op as a tl builtin --------------------------------------------------------------
abs = tl.abs  # noqa: A001
exp = tl.exp
exp2 = tl.exp2
log = tl.log
log2 = tl.log2
sin = tl.sin
cos = tl.cos
sqrt = tl.sqrt
sqrt_rn = tl.sqrt_rn
rsqrt = tl.rsqrt
erf = tl.erf
floor = tl.floor
ceil = tl.ceil
fma = tl.fma
fma_rn = tl.fma
div_rn = tl.div_rn
# libdevice's __nv_fast_* are the hardware approximations tlxc's ops already are
fast_expf = tl.exp
fast_logf = tl.log
fast_log2f = tl.log2
fast_sinf = tl.sin
fast_cosf = tl.cos
fast_tanf = tan

LOG2_10: tl.constexpr = tl.constexpr(3.321928094887362)
LOG10_2: tl.constexpr = tl.constexpr(0.3010299956639812)


@tlxc.constexpr_function
def _int_type(dt):  # noqa: ANN001, ANN202
    """The signed integer type as wide as the float type ``dt`` (for bit manipulation)."""
    if not dt.is_floating() or dt.bits not in (16, 32, 64):
        raise ValueError(f"libdevice: expected a 16-, 32- or 64-bit float operand, got {dt!r}")
    return {16: tl.int16, 32: tl.int32, 64: tl.int64}[dt.bits]


@tlxc.constexpr_function
def _magnitude_mask(dt):  # noqa: ANN001, ANN202
    return (1 << (dt.bits - 1)) - 1


@tlxc.constexpr_function
def _integral_from(dt):  # noqa: ANN001, ANN202
    """2^m for a float type with m mantissa bits: every float of magnitude >= 2^m is an
    integer, and adding 2^m to a smaller magnitude rounds it to an integer."""
    if not dt.is_floating() or dt.is_fp8():
        raise ValueError(f"libdevice: expected a float operand, got {dt!r}")
    return float(2 ** dt.man_bits)


@tlxc.constexpr_function
def _is_float(dt, bits=None):  # noqa: ANN001, ANN202
    return dt.is_floating() and (bits is None or dt.bits == bits)


@tlxc.constexpr_function
def _is_int(dt, bits=None):  # noqa: ANN001, ANN202
    return dt.is_int() and not dt.is_bool() and (bits is None or dt.bits == bits)


# -- classification ---------------------------------------------------------------------------
@tlxc.jit
def isnan(x):
    """True (int1) where x is NaN."""
    return x != x


@tlxc.jit
def isinf(x):
    """True (int1) where x is +inf or -inf."""
    return tl.abs(x) == float("inf")


@tlxc.jit
def finitef(x):
    """1 (int32) where x is neither infinite nor NaN, else 0."""
    return (tl.abs(x) < float("inf")).to(tl.int32)


isfinited = finitef


@tlxc.jit
def signbit(x):
    """1 (int32) where x's sign bit is set (also -0.0 and negative NaNs), else 0."""
    b = x.to(_int_type(x.dtype), bitcast=True)
    return (b < 0).to(tl.int32)


@tlxc.jit
def copysign(x, y):
    """x's magnitude with y's sign bit."""
    tl.static_assert(x.dtype == y.dtype, "libdevice.copysign needs two operands of one float type")
    it = _int_type(x.dtype)
    mag = _magnitude_mask(x.dtype)
    b = (x.to(it, bitcast=True) & mag) | (y.to(it, bitcast=True) & ~mag)
    return b.to(x.dtype, bitcast=True)


# -- rounding -----------------------------------------------------------------------------------
@tlxc.jit
def rint(x):
    """Round to the nearest integer, halfway cases to even (exact): below 2^m (m the
    mantissa bits), |x| + 2^m rounds to an integer under the default round-to-nearest-even
    and subtracting 2^m back is exact; the sign is put back so that -0.3 gives -0.0."""
    big = _integral_from(x.dtype)
    a = tl.abs(x)
    r = copysign((a + big) - big, x)
    return tl.where(a < big, r, x)


nearbyint = rint  # the same without the inexact flag, which kernels cannot see


@tlxc.jit
def llrint(x):
    """rint(x) as int64."""
    return rint(x).to(tl.int64)


@tlxc.jit
def llround(x):
    """round(x) (halfway away from zero) as int64."""
    return round(x).to(tl.int64)


# -- arithmetic ---------------------------------------------------------------------------------
@tlxc.jit
def rcp_rn(x):
    """1 / x, correctly rounded."""
    return tl.div_rn(1.0, x)


@tlxc.jit
def fast_dividef(x, y):
    """x / y as the '/' operator computes it (``div.full.f32`` on NVIDIA, as __fdividef)."""
    return x / y


@tlxc.jit
def fmod(x, y):
    """C's fmod: x - trunc(x / y) * y, exact (tlxc's float '%')."""
    return x % y


@tlxc.jit
def fdim(x, y):
    """x - y where x > y, else +0; NaN if either is NaN."""
    return tl.where(x <= y, 0.0, x - y)


@tlxc.jit
def saturatef(x):
    """x clamped to [0, 1]; NaN gives 0."""
    return tl.minimum(tl.maximum(x, 0.0), 1.0)


@tlxc.jit
def fast_exp10f(x):
    """10^x as 2^(x * log2(10)) on the fast exp2, as __nv_fast_exp10f."""
    return tl.exp2(x * LOG2_10)


@tlxc.jit
def fast_log10f(x):
    """log10(x) as log2(x) * log10(2) on the fast log2, as __nv_fast_log10f."""
    return tl.log2(x) * LOG10_2


@tlxc.jit
def fast_powf(x, y):
    """x^y as 2^(y * log2(x)) on the fast exp2 and log2, as __nv_fast_powf (NaN for x < 0)."""
    return tl.exp2(y * tl.log2(x))


# -- integers -----------------------------------------------------------------------------------
@tlxc.jit
def mulhi(x, y):
    """The high 32 bits of the 64-bit product of two 32-bit integers (signed or unsigned)."""
    tl.static_assert(_is_int(x.dtype, 32) and x.dtype == y.dtype,
                     "libdevice.mulhi: tlxc has it for two int32 or two uint32 operands")
    if x.dtype == tl.uint32:
        return tl.umulhi(x, y)
    return ((x.to(tl.int64) * y.to(tl.int64)) >> 32).to(tl.int32)


@tlxc.jit
def hadd(x, y):
    """(x + y) >> 1 without overflowing: the shared bits plus half the differing ones."""
    return (x & y) + ((x ^ y) >> 1)


@tlxc.jit
def rhadd(x, y):
    """(x + y + 1) >> 1 without overflowing."""
    return (x | y) - ((x ^ y) >> 1)


# -- conversions and bit casts ------------------------------------------------------------------
@tlxc.jit
def _float_to(x, dt: tl.constexpr, mode: tl.constexpr, bits: tl.constexpr):
    tl.static_assert(_is_float(x.dtype, bits), "libdevice: this conversion needs a float operand of its width")
    if mode == "rn":
        x = rint(x)
    elif mode == "rd":
        x = tl.floor(x)
    elif mode == "ru":
        x = tl.ceil(x)
    return x.to(dt)  # a float-to-integer cast truncates (rz)


@tlxc.jit
def _int_to(x, dt: tl.constexpr, bits: tl.constexpr):
    tl.static_assert(_is_int(x.dtype, bits), "libdevice: this conversion needs an integer operand of its width")
    return x.to(dt)  # rounds to nearest even


@tlxc.jit
def float2int_rn(x):
    return _float_to(x, tl.int32, "rn", 32)


@tlxc.jit
def float2int_rz(x):
    return _float_to(x, tl.int32, "rz", 32)


@tlxc.jit
def float2int_rd(x):
    return _float_to(x, tl.int32, "rd", 32)


@tlxc.jit
def float2int_ru(x):
    return _float_to(x, tl.int32, "ru", 32)


@tlxc.jit
def float2uint_rn(x):
    return _float_to(x, tl.uint32, "rn", 32)


@tlxc.jit
def float2uint_rz(x):
    return _float_to(x, tl.uint32, "rz", 32)


@tlxc.jit
def float2uint_rd(x):
    return _float_to(x, tl.uint32, "rd", 32)


@tlxc.jit
def float2uint_ru(x):
    return _float_to(x, tl.uint32, "ru", 32)


@tlxc.jit
def float2ll_rn(x):
    return _float_to(x, tl.int64, "rn", 32)


@tlxc.jit
def float2ll_rz(x):
    return _float_to(x, tl.int64, "rz", 32)


@tlxc.jit
def float2ll_rd(x):
    return _float_to(x, tl.int64, "rd", 32)


@tlxc.jit
def float2ll_ru(x):
    return _float_to(x, tl.int64, "ru", 32)


@tlxc.jit
def float2ull_rn(x):
    return _float_to(x, tl.uint64, "rn", 32)


@tlxc.jit
def float2ull_rz(x):
    return _float_to(x, tl.uint64, "rz", 32)


@tlxc.jit
def float2ull_rd(x):
    return _float_to(x, tl.uint64, "rd", 32)


@tlxc.jit
def float2ull_ru(x):
    return _float_to(x, tl.uint64, "ru", 32)


@tlxc.jit
def double2int_rn(x):
    return _float_to(x, tl.int32, "rn", 64)


@tlxc.jit
def double2int_rz(x):
    return _float_to(x, tl.int32, "rz", 64)


@tlxc.jit
def double2int_rd(x):
    return _float_to(x, tl.int32, "rd", 64)


@tlxc.jit
def double2int_ru(x):
    return _float_to(x, tl.int32, "ru", 64)


@tlxc.jit
def double2uint_rn(x):
    return _float_to(x, tl.uint32, "rn", 64)


@tlxc.jit
def double2uint_rz(x):
    return _float_to(x, tl.uint32, "rz", 64)


@tlxc.jit
def double2uint_rd(x):
    return _float_to(x, tl.uint32, "rd", 64)


@tlxc.jit
def double2uint_ru(x):
    return _float_to(x, tl.uint32, "ru", 64)


@tlxc.jit
def double2ll_rn(x):
    return _float_to(x, tl.int64, "rn", 64)


@tlxc.jit
def double2ll_rz(x):
    return _float_to(x, tl.int64, "rz", 64)


@tlxc.jit
def double2ll_rd(x):
    return _float_to(x, tl.int64, "rd", 64)


@tlxc.jit
def double2ll_ru(x):
    return _float_to(x, tl.int64, "ru", 64)


@tlxc.jit
def double2ull_rn(x):
    return _float_to(x, tl.uint64, "rn", 64)


@tlxc.jit
def double2ull_rz(x):
    return _float_to(x, tl.uint64, "rz", 64)


@tlxc.jit
def double2ull_rd(x):
    return _float_to(x, tl.uint64, "rd", 64)


@tlxc.jit
def double2ull_ru(x):
    return _float_to(x, tl.uint64, "ru", 64)


@tlxc.jit
def double2float_rn(x):
    tl.static_assert(_is_float(x.dtype, 64), "libdevice.double2float_rn needs a float64 operand")
    return x.to(tl.float32)


@tlxc.jit
def double2float_rz(x):
    tl.static_assert(_is_float(x.dtype, 64), "libdevice.double2float_rz needs a float64 operand")
    return x.to(tl.float32, fp_downcast_rounding="rtz")


@tlxc.jit
def int2float_rn(x):
    return _int_to(x, tl.float32, 32)


@tlxc.jit
def uint2float_rn(x):
    return _int_to(x, tl.float32, 32)


@tlxc.jit
def ll2float_rn(x):
    return _int_to(x, tl.float32, 64)


@tlxc.jit
def ull2float_rn(x):
    return _int_to(x, tl.float32, 64)


@tlxc.jit
def int2double_rn(x):
    return _int_to(x, tl.float64, 32)


@tlxc.jit
def uint2double_rn(x):
    return _int_to(x, tl.float64, 32)


@tlxc.jit
def ll2double_rn(x):
    return _int_to(x, tl.float64, 64)


@tlxc.jit
def ull2double_rn(x):
    return _int_to(x, tl.float64, 64)


@tlxc.jit
def float_as_int(x):
    return x.to(tl.int32, bitcast=True)


@tlxc.jit
def float_as_uint(x):
    return x.to(tl.uint32, bitcast=True)


@tlxc.jit
def int_as_float(x):
    return x.to(tl.float32, bitcast=True)


@tlxc.jit
def uint_as_float(x):
    return x.to(tl.float32, bitcast=True)


@tlxc.jit
def double_as_longlong(x):
    return x.to(tl.int64, bitcast=True)


@tlxc.jit
def longlong_as_double(x):
    return x.to(tl.float64, bitcast=True)


@tlxc.jit
def double2hiint(x):
    """The high 32 bits of a float64 as int32."""
    return (x.to(tl.int64, bitcast=True) >> 32).to(tl.int32)


@tlxc.jit
def double2loint(x):
    """The low 32 bits of a float64 as int32."""
    return x.to(tl.int64, bitcast=True).to(tl.int32)


@tlxc.jit
def hiloint2double(hi, lo):
    """The float64 whose high and low 32 bits are the int32s ``hi`` and ``lo``."""
    b = (hi.to(tl.int64) << 32) | (lo.to(tl.int64) & 0xFFFFFFFF)
    return b.to(tl.float64, bitcast=True)


# -- what tlxc does not have yet ----------------------------------------------------------------
_NO_ROUTINE = "tlxc has no routine of libdevice's accuracy for it"
_DIRECTED = "tlxc has no directed-rounding arithmetic"
_CONTRACT = "tlxc's float + - * may be contracted into an fma by ptxas, which libdevice's _rn forms forbid"
_INT = "tlxc has no instruction sequence for this integer operation yet"

NOT_YET: dict[str, str] = {
    **{n: _NO_ROUTINE for n in (
        "sinpi", "cospi", "pow", "rcbrt", "rhypot", "norm3d", "rnorm3d",
        "norm4d", "rnorm4d", "erfc", "erfcx", "erfinv", "erfcinv", "normcdf", "normcdfinv", "lgamma",
        "tgamma", "j0", "j1", "y0", "y1", "jn", "yn", "cyl_bessel_i0", "cyl_bessel_i1", "ldexp", "scalbn",
        "remainder", "nextafter", "ilogb", "logb", "rcp64h", "rsqrt_rn")},
    **{f"{op}_{r}": _DIRECTED for op in ("fma", "div", "rcp", "sqrt") for r in ("rz", "rd", "ru")},
    **{f"{op}_{r}": _DIRECTED for op in ("add", "sub", "mul") for r in ("rz", "rd", "ru")},
    **{f"{op}_rn": _CONTRACT for op in ("add", "sub", "mul")},
    **{f"{src}2float_{r}": _DIRECTED for src in ("int", "uint", "ll", "ull") for r in ("rz", "rd", "ru")},
    **{f"{src}2double_{r}": _DIRECTED for src in ("ll", "ull") for r in ("rz", "rd", "ru")},
    "double2float_rd": _DIRECTED, "double2float_ru": _DIRECTED,
    **{n: _INT for n in ("clz", "popc", "brev", "ffs", "byte_perm", "mul24", "sad")},
}
