"""Regression: a helper that returns a value from ``if`` statements whose both branches
may fall through (``if a > r: if b > s: return v``) copied the statements after each such
``if`` into both of its branches: 2**n copies for n of them in a row (5063 IR lines for 8,
hours for 12). The returned value now travels beside the return flag (control.py), so the
size grows linearly, and an ``if`` with a branch that always returns keeps its IR."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import tlxc


def _helper(reps: int, nested: bool = True) -> str:
    lines = ["@tlxc.jit", "def h(a, b):", "    acc = a"]
    for r in range(reps):
        if nested:
            lines += [f"    if a > {r}:", f"        if b > {r * 2}:", f"            return acc + {r}",
                      f"        acc += {r + 1}"]
        else:
            lines += [f"    if a > {r}:", f"        return acc * {r + 2}", "    acc += b"]
    lines += ["    return acc - 1", "", "@tlxc.jit", "def k(out, a, b):", "    tl.store(out, h(a, b))"]
    return "\n".join(lines) + "\n"


def _python(reps: int, a: int, b: int, nested: bool = True) -> int:
    acc = a
    for r in range(reps):
        if nested:
            if a > r:
                if b > r * 2:
                    return acc + r
                acc += r + 1
        else:
            if a > r:
                return acc * (r + 2)
            acc += b
    return acc - 1


@pytest.mark.parametrize("nested", [True, False])
def test_repeated_value_returns_are_linear(load_kernels: Any, nested: bool) -> None:
    sizes = {}
    for reps in (4, 12):
        mod = load_kernels(_helper(reps, nested))
        start = time.perf_counter()
        sizes[reps] = len(mod.k.compile("*i32,i32,i32").asm["ir"].splitlines())
        assert time.perf_counter() - start < 10.0
    per_if = (sizes[12] - sizes[4]) / 8
    assert sizes[12] < 3 * sizes[4], sizes  # nested: 5063 lines for 8 before, over a million for 12
    assert per_if < 50, sizes


@pytest.mark.parametrize("nested", [True, False])
def test_repeated_value_returns_compute_what_python_does(load_kernels: Any, nested: bool) -> None:
    mod = load_kernels(_helper(12, nested))
    for a in (-3, 0, 1, 5, 11, 12, 40):
        for b in (-1, 0, 3, 9, 22, 23, 100):
            out = np.zeros(1, np.int32)
            mod.k.interpret[(1,)](out, a, b)
            assert out[0] == _python(12, a, b, nested), (a, b)


def test_one_early_return_keeps_its_ir(load_kernels: Any) -> None:
    """``if c: return v`` (a branch that always returns) copies nothing: no flag, no
    placeholder, the if yields the two values (what the golden files hold)."""
    mod = load_kernels("""
@tlxc.jit
def h(a):
    if a > 3:
        return a * 2
    return a + 1


@tlxc.jit
def k(out, a):
    tl.store(out, h(a))
""")
    ir = mod.k.compile("*i32,i32").asm["ir"]
    assert ir.count(" = if ") == 1 and "inttoptr" not in ir and ir.count("constant") <= 3, ir


def test_tuples_tiles_and_pointers_travel_with_the_flag(load_kernels: Any) -> None:
    mod = load_kernels("""
@tlxc.jit
def pick(x, a, b, B: tl.constexpr):
    offs = tl.arange(0, B)
    v = tl.load(x + offs)
    if a > 0:
        if b > 0:
            return v * 2, x + 1, a
        v = v + 1
    if a > 1:
        if b > 1:
            return v * 3, x + 2, b
    return v, x, a + b


@tlxc.jit
def k(x, out, a, b, B: tl.constexpr):
    v, p, s = pick(x, a, b, B)
    tl.store(out + tl.arange(0, B), v + tl.load(p) + s)
""")
    x = np.arange(8, dtype=np.float32) + 10

    def want(a: int, b: int) -> np.ndarray:
        v = x.copy()
        if a > 0:
            if b > 0:
                return v * 2 + x[1] + a
            v = v + 1
        if a > 1:
            if b > 1:
                return v * 3 + x[2] + b
        return v + x[0] + a + b

    for a, b in [(0, 0), (1, 1), (2, 0), (2, 2), (3, -1), (0, 5)]:
        out = np.zeros(8, np.float32)
        ck = mod.k.interpret[(1,)](x, out, a, b, B=8)
        np.testing.assert_array_equal(out, want(a, b), err_msg=str((a, b)))
    assert "inttoptr" in ck.asm["ir"]  # the null pointer that stands for x + 1 where nothing returned yet
    assert ".entry k(" in mod.k.compile("*fp32,*fp32,i32,i32", {"B": 8}, arch="sm_90a").asm["ptx"]
    assert mod.k.compile("*fp32,*fp32,i32,i32", {"B": 8}, arch="gfx950").asm["amdgcn"]


def test_constants_that_cannot_travel_take_the_copying_way(load_kernels: Any) -> None:
    """A returned dtype cannot be a result of an if: such helpers still compile by
    copying (the attempt with the flag is undone, nothing of it left in the IR)."""
    mod = load_kernels("""
@tlxc.jit
def kind(a, b):
    if a > 0:
        if b > 0:
            return tl.float32
        a = a + 1
    return tl.float32


@tlxc.jit
def k(out, a, b):
    t: tl.constexpr = kind(a, b)
    tl.store(out, a.to(t))
""")
    out = np.zeros(1, np.float32)
    ck = mod.k.interpret[(1,)](out, 3, 4)
    assert out[0] == 3.0 and " = if " not in ck.asm["ir"]  # the branches did no work: folded away


def test_returning_a_value_on_one_path_only_is_refused(load_kernels: Any) -> None:
    mod = load_kernels("""
@tlxc.jit
def h(a, b):
    if a > 0:
        if b > 0:
            return a
        a = a + 1
    tl.device_assert(a > 0)


@tlxc.jit
def k(out, a, b):
    tl.store(out, h(a, b))
""")
    with pytest.raises(tlxc.CompilationError) as info:
        mod.k.compile("*i32,i32,i32")
    assert info.value.code == "TLXC-TYPE-002"
    assert "the function returns scalar int32 on one path and nothing on another" in info.value.message
