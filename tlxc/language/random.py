"""``tl.rand`` and friends: counter-based random numbers from the Philox 4x32 generator
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), written in the
kernel language itself, so every target and the interpreter get them from the same
source. The construction is Triton's, so a (seed, offset) pair gives Triton's numbers
bit for bit: the 64-bit ``seed`` is the key (low word, high word), ``offset`` the first
counter word (the other three are 0), 10 rounds by default.

    r = tl.rand(seed, offsets)        # uniform in [0, 1), fp32
    n = tl.randn(seed, offsets)       # standard normal, fp32
    i = tl.randint(seed, offsets)     # uint32 words (the first of the four)
"""

from __future__ import annotations

# absolute imports: this module is loaded on first use of tl.rand & co (language/__init__.py)
import tlxc
from tlxc.language import core as tl
from tlxc.language import math as tlmath

PHILOX_KEY_A: tl.constexpr = tl.constexpr(0x9E3779B9)  # the Weyl sequence that advances the key
PHILOX_KEY_B: tl.constexpr = tl.constexpr(0xBB67AE85)
PHILOX_ROUND_A: tl.constexpr = tl.constexpr(0xD2511F53)  # the round multipliers
PHILOX_ROUND_B: tl.constexpr = tl.constexpr(0xCD9E8D57)
N_ROUNDS_DEFAULT: tl.constexpr = tl.constexpr(10)


@tlxc.jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """``n_rounds`` Philox rounds on the counter words ``c0..c3`` (uint32) with key
    ``(k0, k1)``: each round multiplies two words by the round constants, mixes the high
    halves with the other words and the key, and bumps the key."""
    for _ in tl.static_range(n_rounds):
        a = c0
        b = c2
        c0 = tl.umulhi(PHILOX_ROUND_B, b) ^ c1 ^ k0
        c2 = tl.umulhi(PHILOX_ROUND_A, a) ^ c3 ^ k1
        c1 = b * PHILOX_ROUND_B
        c3 = a * PHILOX_ROUND_A
        k0 = k0 + PHILOX_KEY_A
        k1 = k1 + PHILOX_KEY_B
    return c0, c1, c2, c3


@tlxc.jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """The four uint32 words for counter ``(c0, c1, c2, c3)`` (32-bit integers, used as
    their bits) under the 64-bit ``seed``."""
    s = tl.to_tensor(seed).to(tl.uint64)
    lo = (s & 0xFFFFFFFF).to(tl.uint32)
    hi = ((s >> 32) & 0xFFFFFFFF).to(tl.uint32)
    c0 = c0.to(tl.uint32, bitcast=True)
    c1 = c1.to(tl.uint32, bitcast=True)
    c2 = c2.to(tl.uint32, bitcast=True)
    c3 = c3.to(tl.uint32, bitcast=True)
    return philox_impl(c0, c1, c2, c3, lo, hi, n_rounds)


@tlxc.jit
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four uint32 random words per element of ``offset`` (a 32-bit integer tensor)."""
    offset = tl.to_tensor(offset)
    zero = tl.zeros(offset.shape, offset.dtype)
    return philox(seed, offset, zero, zero, zero, n_rounds)


@tlxc.jit
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """One uint32 random word per element of ``offset``."""
    r, _a, _b, _c = randint4x(seed, offset, n_rounds)
    return r


@tlxc.jit
def uint_to_uniform_float(x):
    """uint32 words to floats in [0, 1): the word as an int32, folded onto [0, 2^31)
    (``-x - 1`` for negatives), times 2^-31 rounded down to an fp32."""
    x = x.to(tl.int32, bitcast=True)
    x = tl.where(x < 0, -x - 1, x)
    return x * 4.6566127342e-10


@tlxc.jit
def rand(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A uniform fp32 in [0, 1) per element of ``offset``."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@tlxc.jit
def rand4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four independent uniforms per element of ``offset``."""
    i1, i2, i3, i4 = randint4x(seed, offset, n_rounds)
    return uint_to_uniform_float(i1), uint_to_uniform_float(i2), uint_to_uniform_float(i3), \
        uint_to_uniform_float(i4)


@tlxc.jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniforms to two standard normals (``u1`` kept above 1e-7)."""
    u1 = tl.maximum(1.0e-7, u1)
    th = 6.283185307179586 * u2
    r = tlmath.sqrt(-2.0 * tlmath.log(u1))
    return r * tlmath.cos(th), r * tlmath.sin(th)


@tlxc.jit
def randn(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """A standard normal fp32 per element of ``offset`` (from the first two words)."""
    i1, i2, _a, _b = randint4x(seed, offset, n_rounds)
    n1, _n2 = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1


@tlxc.jit
def randn4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four standard normals per element of ``offset``."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4


NAMES = ("philox_impl", "philox", "randint4x", "randint", "uint_to_uniform_float", "rand", "rand4x",
         "pair_uniform_to_normal", "randn", "randn4x", "PHILOX_KEY_A", "PHILOX_KEY_B", "PHILOX_ROUND_A",
         "PHILOX_ROUND_B", "N_ROUNDS_DEFAULT")
