"""Regression: ``tlxc.constexpr_function`` (Triton's ``triton.constexpr_function``) did not
exist, and ``tlxc.cdiv`` / ``tlxc.next_power_of_2`` inside a kernel were refused as plain
Python functions (TLXC-CALL-001), where Triton runs them at compile time on constexpr
arguments. On runtime values Triton refuses them too (they are no tl.* operations);
tlxc says so at the call and points at ``tl.cdiv``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

SOURCE = """
@tlxc.constexpr_function
def plus_one(x, by=1):
    return x + by


@tl.constexpr_function
def shape_of(m, n):
    return (m, n)


class Tiles:
    def __init__(self, cap):
        self.cap = cap

    @tlxc.constexpr_function
    def block(self, n):
        return min(tlxc.next_power_of_2(n), self.cap)


TILES = Tiles(8)


@tlxc.jit
def k(out, N: tl.constexpr):
    B: tl.constexpr = tlxc.next_power_of_2(N)
    offs = tl.arange(0, B)
    chunks: tl.constexpr = tlxc.cdiv(N, 4)
    tl.store(out + offs, offs * plus_one(chunks, by=tl.constexpr(2)) + shape_of(2, 3)[1], mask=offs < N)


@tlxc.jit
def capped(out, N: tl.constexpr):
    offs = tl.arange(0, TILES.block(N))
    tl.store(out + offs, offs)
"""


def test_host_calls_are_plain_calls() -> None:
    assert tlxc.cdiv(33, 32) == 2 and tlxc.cdiv(tl.constexpr(33), 32) == 2
    assert tlxc.next_power_of_2(5) == 8 and tlxc.next_power_of_2(1) == 1
    assert isinstance(tlxc.cdiv, tlxc.ConstexprFunction)

    @tlxc.constexpr_function
    def with_kwargs(**kw: Any) -> int:
        return kw["value"] + 1

    assert with_kwargs(value=tl.constexpr(7)) == 8
    assert with_kwargs.__name__ == "with_kwargs" and tl.constexpr_function is tlxc.constexpr_function


def test_called_at_compile_time_in_kernels(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    out = np.zeros(8, np.int32)
    ck = m.k.interpret[(1,)](out, N=5)
    # B = 8, chunks = cdiv(5, 4) = 2, plus_one(2, by=2) = 4, shape_of(2, 3)[1] = 3
    np.testing.assert_array_equal(out[:5], np.arange(5) * 4 + 3)
    assert out[5:].tolist() == [0, 0, 0]
    ir = ck.asm["ir"]
    assert "arange {start = 0, end = 8} : tile<8xi32>" in ir, ir
    assert m.plus_one in ck.callees and m.shape_of in ck.callees  # the on-disk cache checks their sources
    out = np.zeros(16, np.int32)
    m.capped.interpret[(1,)](out, N=100)  # a constexpr_function method, capped at 8
    assert out.tolist() == list(range(8)) + [0] * 8


BAD_RUNTIME = """
@tlxc.jit
def k(out, n):
    tl.store(out, tlxc.cdiv(n, 4))  # HERE
"""
BAD_RUNTIME_KW = """
@tlxc.constexpr_function
def f(x, y=1):
    return x * y


@tlxc.jit
def k(out, n):
    tl.store(out, f(2, y=n))  # HERE
"""
BAD_RAISES = """
@tlxc.jit
def k(out, N: tl.constexpr):
    tl.store(out, tlxc.cdiv(N, 0))  # HERE
"""


@pytest.mark.parametrize("source,code,words,help_words", [
    (BAD_RUNTIME, "TLXC-CONSTEXPR-001", "cdiv() is a constexpr_function: it runs while the kernel compiles, on "
     "compile-time values, but its argument 1 is scalar int32", "tl.cdiv(x, y) divides runtime values"),
    (BAD_RUNTIME_KW, "TLXC-CONSTEXPR-001", "f() is a constexpr_function: it runs while the kernel compiles, on "
     "compile-time values, but its argument 'y' is scalar int32", "pass it a tl.constexpr parameter"),
    (BAD_RAISES, "TLXC-TYPE-001", "cdiv() raised ZeroDivisionError: integer division or modulo by zero", None),
])
def test_refused_at_the_call(load_kernels: Any, source: str, code: str, words: str, help_words: str | None) -> None:
    m = load_kernels(source)
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*i32,i32" if "n)" in source else "*i32", {"N": 8} if "N:" in source else None)
    e = info.value
    assert e.code == code and e.message == words
    lines = m.__path_str__ and open(m.__path_str__).read().splitlines()
    assert lines[e.loc.line - 1].endswith("# HERE") and e.loc.file == m.__path_str__
    if help_words:
        assert help_words in e.help
