"""Division and remainder by a constant as multiply-high and shifts
(tlxc/codegen/nvptx/const_division.py): each plan, evaluated with the machine's
wrap-around, against truncating division (PTX's ``div.s``/``rem.s``, C's ``/`` and ``%``)
for the extreme and many random dividends; the PTX that a kernel gets, through ptxas."""

from __future__ import annotations

import random

import pytest
from codegen_helpers import NVIDIA_ARCHS

import tlxc
import tlxc.language as tl
from tlxc.codegen.nvptx.const_division import Step, evaluate, plan


def _trunc_div(x: int, d: int) -> int:
    q = abs(x) // abs(d)
    return q if (x < 0) == (d < 0) else -q


def _dividends(bits: int, signed: bool) -> list[int]:
    rng = random.Random(bits * 2 + signed)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edge = [lo, lo + 1, hi, hi - 1, 0, 1, 2, 3, 1000, (hi + 1) // 2, (hi + 1) // 2 - 1]
    if signed:
        edge += [-1, -2, -3, -1000]
    return edge + [rng.randint(lo, hi) for _ in range(600)] + [rng.randint(-5000, 5000) & (hi if not signed else -1)
                                                               for _ in range(200)]


DIVISORS = [1, 2, 3, 4, 5, 6, 7, 10, 12, 14, 25, 64, 100, 127, 128, 255, 641, 1000, 1 << 20, (1 << 20) + 7,
            (1 << 29) + 1, (1 << 30) + 3]


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("rem", [False, True], ids=["div", "rem"])
def test_every_plan_divides_as_the_hardware(bits: int, signed: bool, rem: bool) -> None:
    lo = -(1 << (bits - 1))
    divisors = DIVISORS + [(1 << (bits - 2)) + 5] + ([-d for d in DIVISORS] + [lo + 1] if signed else [])
    for d in divisors:
        for non_negative in (False, True):
            steps = plan(d, bits, signed, rem, non_negative)
            assert steps is not None, d
            assert not any(s.op == "div" for s in steps)
            for x in _dividends(bits, signed):
                if (non_negative and x < 0) or (x == lo and d == -1):
                    continue
                q = _trunc_div(x, d)
                assert evaluate(steps, x, bits, signed) == (x - q * d if rem else q), (d, x, non_negative)


def test_short_plans() -> None:
    """Powers of two are shifts (a masked ``and`` for an unsigned remainder), a divisor
    with an exact N-bit multiplier one multiply-high and a shift."""
    assert plan(8, 32, False, False) == [Step("shr.u", "q", "x", 3)]
    assert plan(8, 32, False, True) == [Step("and", "r", "x", 7)]
    assert plan(8, 32, True, True, non_negative=True) == [Step("and", "r", "x", 7)]
    assert plan(3, 32, False, False) == [Step("mul.hi.u", "t", "x", 0xAAAAAAAB), Step("shr.u", "q", "t", 1)]
    assert len(plan(7, 32, False, False) or []) == 5  # needs the 33-bit multiplier: the add-and-shift form
    assert len(plan(-8, 32, True, False) or []) == 5  # bias, shift, negate
    assert plan(0, 32, True, False) is None and plan(1 << 31, 32, False, False) is None


@tlxc.jit
def divide_by_constants(x_ptr, q_ptr, r_ptr, D: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(q_ptr + offs, x // D)
    tl.store(r_ptr + offs, x % D)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("dtype, d", [("i32", 3), ("i32", -7), ("i32", 64), ("u32", 7), ("i64", 1000), ("u64", 6)])
def test_a_kernel_divides_by_a_constant_without_div(arch: str, dtype: str, d: int) -> None:
    ck = divide_by_constants.compile(f"*{dtype}:16,*{dtype}:16,*{dtype}:16", {"D": d, "N": 128}, arch=arch)
    ptx = ck.asm["ptx"]
    assert "div." not in ptx and "rem." not in ptx
    assert "mul.hi" in ptx or "shr" in ptx
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]
