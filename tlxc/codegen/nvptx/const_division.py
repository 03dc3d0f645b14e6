"""Integer division and remainder by a constant, as a multiply-high and shifts.

ptxas compiles every ``div``/``rem`` on integers, even ``div.s32 %r1, %r2, 128``, into its
generic sequence (a conversion to float, an ``MUFU.RCP``, a dozen integer instructions):
the strength reduction that nvcc's and Triton's code gets is done by LLVM before the PTX.
This module does it for tlxc, after Granlund and Montgomery, "Division by Invariant
Integers using Multiplication" (PLDI 1994), figures 4.1 and 5.1 (and Hacker's Delight
ch. 10 for the powers of two):

* unsigned ``x / d``: ``d = 2**k`` is a right shift; ``mulhi(m, x) >> s`` where an
  N-bit ``m = ceil(2**(N + s) / d)`` is exact for every ``x`` (``m d - 2**(N + s) <=
  2**s``, GM theorem 4.2: 3, 5, 6, 10...); otherwise, with ``l = ceil(log2 d)`` and
  ``m = floor(2**N (2**l - d) / d) + 1``: ``t = mulhi(m, x)``,
  ``q = (t + ((x - t) >> 1)) >> (l - 1)`` (7, 14, ...);
* signed ``x / d`` (truncating, as ``div.s``): ``|d| = 2**k`` adds ``2**k - 1`` to a
  negative ``x`` before the arithmetic shift; otherwise, with ``l = ceil(log2 |d|)`` and
  ``m = 1 + floor(2**(N + l - 1) / |d|) - 2**N`` (negative): ``q = ((x + mulhi(m, x)) >>
  (l - 1)) - (x >> (N - 1))``, negated for a negative ``d``;
* a dividend known to be non-negative (axis analysis) divides as unsigned;
* ``x % d`` is ``x - q * d``, or ``x & (d - 1)`` for an unsigned (or non-negative)
  ``x`` and ``d = 2**k``.

A plan is a list of ``Step``s over named values (``"x"`` the dividend, each step's
``dst`` a new name, the last one the result), so that the same plan is emitted as PTX
(``lower_arith``) and evaluated with Python's integers in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """``dst = op(a, b)``; ``b`` is a value's name or an int immediate (None for ``neg``).
    Ops: ``add``, ``sub``, ``mul.lo``, ``mul.hi.u``, ``mul.hi.s``, ``shr.u``, ``shr.s``,
    ``and``, ``neg``."""

    op: str
    dst: str
    a: str
    b: str | int | None = None


def plan(d: int, bits: int, signed: bool, rem: bool, non_negative: bool = False) -> list[Step] | None:
    """The steps of ``x // d`` (``rem``: ``x % d``) on ``bits``-bit integers, or None where
    the division instruction stays (``d`` 0, or an unsigned ``d`` of ``2**(bits - 1)`` or
    more, rare enough to leave alone)."""
    if d == 0:
        return None
    if signed and non_negative and d > 0:
        signed = False  # x >= 0: the unsigned division gives the same quotient
    steps: list[Step] = []
    q = _signed_quotient(d, bits, steps) if signed else _unsigned_quotient(d, bits, steps)
    if q is None:
        return None
    if not rem:
        return steps if steps else [Step("add", "q", "x", 0)]
    if not signed and d & (d - 1) == 0:
        return [Step("and", "r", "x", d - 1)]
    steps.append(Step("mul.lo", "qd", q, d))
    steps.append(Step("sub", "r", "x", "qd"))
    return steps


def _unsigned_quotient(d: int, bits: int, steps: list[Step]) -> str | None:
    d &= (1 << bits) - 1
    if d >= 1 << (bits - 1):
        return None
    if d & (d - 1) == 0:
        k = d.bit_length() - 1
        if k:
            steps.append(Step("shr.u", "q", "x", k))
            return "q"
        return "x"
    for s in range(bits):  # a multiplier of N bits, if one is exact for every x (GM theorem 4.2)
        m = -(-(1 << (bits + s)) // d)
        if m >> bits:
            break
        if m * d - (1 << (bits + s)) <= 1 << s:
            steps += [Step("mul.hi.u", "t", "x", m)] + ([Step("shr.u", "q", "t", s)] if s else [])
            return "q" if s else "t"
    l = d.bit_length()  # ceil(log2 d): d is not a power of two
    m = ((1 << bits) * ((1 << l) - d)) // d + 1
    steps += [Step("mul.hi.u", "t", "x", m), Step("sub", "u", "x", "t"), Step("shr.u", "u1", "u", 1),
              Step("add", "v", "t", "u1"), Step("shr.u", "q", "v", l - 1)]
    return "q"


def _signed_quotient(d: int, bits: int, steps: list[Step]) -> str | None:
    a = abs(d)
    if a == 1:
        q = "x"
    elif a & (a - 1) == 0:
        k = a.bit_length() - 1
        steps += [Step("shr.s", "s", "x", bits - 1), Step("shr.u", "bias", "s", bits - k),
                  Step("add", "xb", "x", "bias"), Step("shr.s", "q", "xb", k)]
        q = "q"
    else:
        l = a.bit_length()
        m = 1 + (1 << (bits + l - 1)) // a - (1 << bits)
        steps += [Step("mul.hi.s", "t", "x", m), Step("add", "u", "x", "t"), Step("shr.s", "v", "u", l - 1),
                  Step("shr.s", "s", "x", bits - 1), Step("sub", "q", "v", "s")]
        q = "q"
    if d < 0:
        steps.append(Step("neg", "nq", q))
        q = "nq"
    return q


def evaluate(steps: list[Step], x: int, bits: int, signed: bool) -> int:
    """The plan's result for ``x``, with the machine's wrap-around (for the tests)."""
    mask = (1 << bits) - 1

    def sgn(v: int) -> int:
        v &= mask
        return v - (1 << bits) if v >> (bits - 1) else v

    env = {"x": x & mask}
    for s in steps:
        a = env[s.a]
        b = env[s.b] if isinstance(s.b, str) else (s.b if s.b is not None else 0)
        if s.op == "add":
            v = a + b
        elif s.op == "sub":
            v = a - b
        elif s.op == "mul.lo":
            v = a * b
        elif s.op == "mul.hi.u":
            v = ((a & mask) * (b & mask)) >> bits
        elif s.op == "mul.hi.s":
            v = (sgn(a) * sgn(b)) >> bits
        elif s.op == "shr.u":
            v = (a & mask) >> b
        elif s.op == "shr.s":
            v = sgn(a) >> b
        elif s.op == "and":
            v = a & b
        elif s.op == "neg":
            v = -a
        else:
            raise ValueError(s.op)
        env[s.dst] = v & mask
    out = env[steps[-1].dst]
    return sgn(out) if signed else out
