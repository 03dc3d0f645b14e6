"""``tl.rand`` and friends: counter-based random numbers from the Philox 4x32 generator
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), written in the
kernel language itself, so every target and the interpreter get them from the same
source. The construction is Triton's, so a (seed, offset) pair gives Triton's numbers
bit for bit: the 64-bit ``seed`` is the key (low word, high word), ``offset`` the first
counter word (a 64-bit offset's high half the second; the others are 0), 10 rounds by
default. ``tl.philox`` on 64-bit counters runs Philox4x64 instead.

    r = tl.rand(seed, offsets)        # uniform in [0, 1), fp32
    n = tl.randn(seed, offsets)       # standard normal, fp32
    i = tl.randint(seed, offsets)     # uint32 words (the first of the four)
"""

from __future__ import annotations

# absolute imports: this module is loaded on first use of tl.rand & co (language/__init__.py)
import tlxc
from tlxc.language import core as tl
from tlxc.language import math as tlmath

# Philox4x32's constants: the Weyl sequence that advances the key, then the round multipliers
PHILOX_KEY_A: tl.constexpr = tl.constexpr(0x9E3779B9)
PHILOX_KEY_B: tl.constexpr = tl.constexpr(0xBB67AE85)
PHILOX_ROUND_A: tl.constexpr = tl.constexpr(0xD2511F53)
PHILOX_ROUND_B: tl.constexpr = tl.constexpr(0xCD9E8D57)
# Philox4x64's (what numpy's Philox uses), for counters of 64-bit words
PHILOX64_KEY_A: tl.constexpr = tl.constexpr(0x9E3779B97F4A7C15)
PHILOX64_KEY_B: tl.constexpr = tl.constexpr(0xBB67AE8584CAA73B)
PHILOX64_ROUND_A: tl.constexpr = tl.constexpr(0xD2E7470EE14C6C93)
PHILOX64_ROUND_B: tl.constexpr = tl.constexpr(0xCA5A826395121157)
N_ROUNDS_DEFAULT: tl.constexpr = tl.constexpr(10)


@tlxc.jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """``n_rounds`` Philox rounds on the counter words ``c0..c3`` with key ``(k0, k1)``,
    all uint32 (Philox4x32) or all uint64 (Philox4x64): each round multiplies two words by
    the round constants, mixes the high halves with the other words and the key, and bumps
    the key."""
    if c0.dtype == tl.uint32:
        round_a: tl.constexpr = PHILOX_ROUND_A
        round_b: tl.constexpr = PHILOX_ROUND_B
        key_a: tl.constexpr = PHILOX_KEY_A
        key_b: tl.constexpr = PHILOX_KEY_B
    else:
        tl.static_assert(c0.dtype == tl.uint64, "philox_impl takes uint32 or uint64 counter words")
        round_a: tl.constexpr = PHILOX64_ROUND_A
        round_b: tl.constexpr = PHILOX64_ROUND_B
        key_a: tl.constexpr = PHILOX64_KEY_A
        key_b: tl.constexpr = PHILOX64_KEY_B
    for _ in tl.static_range(n_rounds):
        a = c0
        b = c2
        c0 = tl.umulhi(b, round_b) ^ c1 ^ k0
        c2 = tl.umulhi(a, round_a) ^ c3 ^ k1
        c1 = b * round_b
        c3 = a * round_a
        k0 = k0 + key_a
        k1 = k1 + key_b
    return c0, c1, c2, c3


@tlxc.jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """The four random words for counter ``(c0, c1, c2, c3)`` (integers used as their
    bits) under the 64-bit ``seed``. 32-bit counters run Philox4x32 keyed by the seed's low
    and high words and give uint32 words; 64-bit counters run Philox4x64 keyed by
    ``(seed, 0)`` and give uint64 words."""
    s = tl.to_tensor(seed)
    tl.static_assert(s.dtype.is_int(), "the seed of a Philox generator is an integer")
    s = s.to(tl.uint64)
    c0 = tl.to_tensor(c0)
    c1 = tl.to_tensor(c1)
    c2 = tl.to_tensor(c2)
    c3 = tl.to_tensor(c3)
    if tl.constexpr(c0.dtype.primitive_bitwidth) == 32:
        word: tl.constexpr = tl.uint32
        lo = (s & 0xFFFFFFFF).to(tl.uint32)
        hi = ((s >> 32) & 0xFFFFFFFF).to(tl.uint32)
    else:
        tl.static_assert(tl.constexpr(c0.dtype.primitive_bitwidth) == 64, "philox takes 32- or 64-bit counters")
        word: tl.constexpr = tl.uint64
        lo = s
        hi = s * 0
    c0 = c0.to(word, bitcast=True)
    c1 = c1.to(word, bitcast=True)
    c2 = c2.to(word, bitcast=True)
    c3 = c3.to(word, bitcast=True)
    return philox_impl(c0, c1, c2, c3, lo, hi, n_rounds)


@tlxc.jit
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """Four uint32 random words per element of ``offset``: its low 32 bits are the first
    counter word and, for a 64-bit offset, its high 32 bits the second (as Triton does, so
    offsets past 2^32 give new numbers and smaller ones the same as a 32-bit offset)."""
    offset = tl.to_tensor(offset)
    lo = offset.to(tl.uint32)
    zero = lo * 0
    if tl.constexpr(offset.dtype.primitive_bitwidth) > 32:
        hi = (offset >> 32).to(tl.uint32)
    else:
        hi = zero
    return philox(seed, lo, hi, zero, zero, n_rounds)


@tlxc.jit
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    """One uint32 random word per element of ``offset``."""
    r, _a, _b, _c = randint4x(seed, offset, n_rounds)
    return r


@tlxc.jit
def uint_to_uniform_float(x):
    """Random words to fp32 in [0, 1): the word as a signed integer, folded onto the
    non-negative half (``~x`` for negatives), times the largest scale that keeps the
    maximum below 1.0 after rounding (2^-31 or 2^-63, each rounded down)."""
    if tl.constexpr(x.dtype == tl.uint32) or tl.constexpr(x.dtype == tl.int32):
        x = x.to(tl.int32, bitcast=True)
        scale: tl.constexpr = 4.6566127342e-10
    else:
        tl.static_assert(tl.constexpr(x.dtype == tl.uint64) or tl.constexpr(x.dtype == tl.int64),
                         "uint_to_uniform_float takes 32- or 64-bit integers")
        x = x.to(tl.int64, bitcast=True)
        scale: tl.constexpr = 1.0842020432385337e-19
    x = tl.where(x < 0, ~x, x)
    return x * scale


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
         "PHILOX_ROUND_B", "PHILOX64_KEY_A", "PHILOX64_KEY_B", "PHILOX64_ROUND_A", "PHILOX64_ROUND_B",
         "N_ROUNDS_DEFAULT")
