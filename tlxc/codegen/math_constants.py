"""Constants and polynomial coefficients of the math routines that neither PTX nor the
AMDGPU instruction set has (f64 exp / log / sin / cos / tan / tanh / erf, f32 erf): data
only, shared by ``nvptx/lower_math.py`` and ``amdgpu/lower_math.py``, which write the same
algorithms out in their own instructions.

The coefficient sets (``LOG_R``, ``SIN``, ``ERF_TAIL``...) are Chebyshev fits
(``mpmath.chebyfit`` at 60 digits) of the function named in their comment, rounded to the
working precision; each fit's own error is below 0.1 ulp of the result, so the
evaluation's roundings dominate. The exponential uses its Taylor series (1/k!), within
2^-57 on the reduced range.
"""

from __future__ import annotations

import struct

LOG2E = 1.4426950408889634
LN2_HI = 0.6931471805599453       # ln 2 rounded to double
LN2_LO = 2.3190468138462996e-17   # ln 2 - LN2_HI
# fdlibm's split of ln 2 and 1/ln 2 with 32 significant bits, so that k * LN2_HI_T is exact
LN2_HI_T = float.fromhex("0x1.62e42fee00000p-1")
LN2_LO_T = float.fromhex("0x1.a39ef35793c76p-33")
IVLN2_HI = float.fromhex("0x1.7154765200000p+0")
IVLN2_LO = float.fromhex("0x1.705fc2eefa200p-33")
TWO_OVER_PI = 0.6366197723675814
# pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (+ 2^-160): each the double nearest to what is left
PIO2_1 = 1.5707963267948966
PIO2_2 = 6.123233995736766e-17
PIO2_3 = -1.4973849048591698e-33
NAN64 = float("nan")
INF = float("inf")

# e^r = sum r^k / k!, k <= 13: truncation error below 2^-57 for |r| <= ln2/2
EXP64 = tuple(1.0 / f for f in (1, 1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800, 39916800, 479001600,
                                6227020800))
# the same to k <= 7 for f32: below 2^-28 relative
EXP32 = tuple(float(struct.unpack(">f", struct.pack(">f", c))[0]) for c in EXP64[:8])
# log(1+f) = 2s + s*R(z), s = f/(2+f), z = s^2, R(z) = z * P(z) for |s| <= 3 - 2*sqrt(2)
LOG_R = (0.666666666666667, 0.39999999999899505, 0.28571428625975487, 0.2222221113479508, 0.18182889125261723,
         0.15331721600556042, 0.14616449685043406)
# sin r = r + r^3 * S(r^2) and cos r = 1 - r^2/2 + r^4 * C(r^2) on |r| <= pi/4
SIN = (-0.16666666666666666, 0.008333333333330948, -0.00019841269836758574, 2.755731610255244e-06,
       -2.5051131845003624e-08, 1.5918129294866608e-10)
COS = (0.041666666666666664, -0.0013888888888887398, 2.480158729876569e-05, -2.7557317271729793e-07,
       2.08761462684032e-09, -1.1382632425521717e-11)
# tanh x = x + x^3 * T(x^2) on |x| <= TANH_SPLIT
TANH_SPLIT = 0.625
TANH = (-0.3333333333333333, 0.13333333333333042, -0.05396825396789699, 0.021869488519008305,
        -0.008863235103240878, 0.0035921217511549622, -0.0014557754120478055, 0.0005896606577757043,
        -0.0002375906496055562, 9.257116129556769e-05, -3.12011014257974e-05, 6.485163482793113e-06)
# erf x = x + x * P(x^2) on |x| <= 1
ERF_SMALL = (0.1283791670955126, -0.3761263890318375, 0.11283791670954879, -0.026866170645076792,
             0.0052239776248180145, -0.000854832698083379, 0.0001205533111164271, -1.4925595266831182e-05,
             1.6461000484121368e-06, -1.6350312701054695e-07, 1.4659775274047436e-08, -1.1372848856791674e-09,
             5.957176147748911e-11)
# erfc x = exp(-x^2) * G(t) / (1 + 2x), t = (x - 3) / (x + 3), on 1 <= x <= 6
ERF_TAIL = (1.2530080582697296, -0.1356211061245812, -0.04756229435345138, 0.12964515870276402,
            -0.11927366341524273, 0.06830802734381189, -0.02377051492166855, 0.0025293918199671304,
            0.0018886904382191838, -0.0007798322989976216, -0.00010516105757847154, 0.00012509872522756537,
            4.961221060958892e-06, -2.0086107812713232e-05, -7.879926769870066e-07, 3.3607217706286008e-06,
            4.441155248337316e-07, -2.950461038452191e-07)
# f32: erf x = x + x * P(x^2) on |x| <= 0.921875, and log(erfc x) as a polynomial in x on [0.921875, 4]
ERF32_SPLIT = 0.921875
ERF32_SMALL = (0.12837916612625122, -0.37612634897232056, 0.11283699423074722, -0.026859592646360397,
               0.0052014668472111225, -0.0008147202315740287, 8.387590787606314e-05)
ERF32_TAIL = (0.0002265758957946673, -1.1297439336776733, -0.6329522132873535, -0.10858069360256195,
              0.025142906233668327, -0.004030938260257244, 0.0003155666636303067, 2.6528517992119305e-05,
              -1.0358504368923604e-05, 1.1471281595731853e-06, -4.825063015800879e-08)
LN2_HI32 = 0.6931471824645996     # ln 2 rounded to f32
LN2_LO32 = -1.9046542121259336e-09

# 2/pi in binary: bits 2^-1 .. 2^-1216 as 19 words, most significant first (enough for the
# largest double exponent plus 256 bits; tests/codegen/test_math_ptx.py recomputes them)
TWO_OVER_PI_BITS = (
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09d1921c"
    "fe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde05980f"
    "ef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d08"
    "56033046fc7b6bab")
TWO_OVER_PI_WORDS = tuple(int(TWO_OVER_PI_BITS[i:i + 16], 16) for i in range(0, len(TWO_OVER_PI_BITS), 16))
