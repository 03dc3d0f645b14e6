"""Regression: ``tl.map_elementwise(fn, *args, pack=1)`` (recent Triton) was missing
("tl.map_elementwise has no attribute"). tlxc inlines ``fn`` over whole tiles, turning
its ifs, conditional expressions and early returns on the elements into selects
(tlxc/frontend/map_elementwise.py); what cannot be applied that way is refused at its
line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc

COMPARE = """
@tlxc.jit
def compare(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@tlxc.jit
def k(X, Y, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.load(Y + tl.arange(0, BLOCK))
    z = tl.map_elementwise(compare, x, y)
    tl.store(Z + tl.arange(0, BLOCK), z)
"""


def test_compare_as_in_triton(load_kernels: Any) -> None:
    """Triton's own test (test_core.py::test_map_elementwise), in the interpreter."""
    m = load_kernels(COMPARE)
    rs = np.random.RandomState(17)
    x = rs.randint(-4, 4, 128).astype(np.int32)
    y = rs.randint(-4, 4, 128).astype(np.int32)
    z = np.full(128, 7, np.int32)
    ck = m.k.interpret[(1,)](x, y, z, BLOCK=128)
    np.testing.assert_array_equal(z, (x > y).astype(np.int32) - (y > x).astype(np.int32))
    ir = ck.asm["ir"]
    assert " = if " not in ir and ir.count(" = select ") == 2, ir  # -1, then 0 or 1 where not returned


def test_compare_compiles_for_both_targets(load_kernels: Any) -> None:
    m = load_kernels(COMPARE)
    assert ".entry k(" in m.k.compile("*i32,*i32,*i32", {"BLOCK": 128}, arch="sm_90a").asm["ptx"]
    assert m.k.compile("*i32,*i32,*i32", {"BLOCK": 128}, arch="gfx942").asm["amdgcn"]


MASK = """
@tlxc.jit
def mask_scalar(qk, col_limit_right, s, i):
    col_lim_right_s = col_limit_right - s
    col_lim_right_cur = max(col_lim_right_s, 0)
    mask = -1 << col_lim_right_cur
    mask_i_bit = (mask & (1 << i)) == 0
    return tl.where(mask_i_bit, qk, -float("inf"))


@tlxc.jit
def k(QK, LIM, OUT, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    qk = tl.load(QK + rows * N + cols)
    col_limit_right = tl.load(LIM + rows)
    offs_n = tl.arange(0, N)[None, :]
    s = offs_n & ~0xF
    i = offs_n & 0xF
    tl.store(OUT + rows * N + cols, tl.map_elementwise(mask_scalar, qk, col_limit_right, s, i))
"""


def test_causal_mask_of_the_attention_tutorial(load_kernels: Any) -> None:
    """The map_elementwise of Triton's attention kernels (a bitmask per 16 columns), its
    arguments broadcast from [M, 1] and [1, N] to [M, N]."""
    m = load_kernels(MASK)
    M, N = 4, 32
    qk = np.arange(M * N, dtype=np.float32).reshape(M, N)
    lim = np.array([0, 5, 17, 40], np.int32)
    out = np.zeros((M, N), np.float32)
    m.k.interpret[(1,)](qk, lim, out, M=M, N=N)
    cols = np.arange(N)
    want = np.where(cols[None, :] < lim[:, None], qk, -np.inf)
    np.testing.assert_array_equal(out, want)


def test_branches_assign_names_and_call_helpers(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def clip(v, hi):
    if v > hi:
        return hi
    return v


@tlxc.jit
def f(x, t):
    y = x * 2
    if x < 0:
        y = -x
        z = 1.0
    elif x > t:
        y = clip(x + t, 10.0)
        z = 2.0
    else:
        z = 3.0 if x > 1 else 4.0
    for j in range(3):
        y = y + 0.5
    return y, z * y


@tlxc.jit
def k(X, A, B, T, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b = tl.map_elementwise(f, tl.load(X + offs), T)
    tl.store(A + offs, a)
    tl.store(B + offs, b)
""")

    def f(x: float, t: float) -> tuple[float, float]:
        y = x * 2
        if x < 0:
            y, z = -x, 1.0
        elif x > t:
            y, z = min(x + t, 10.0), 2.0
        else:
            z = 3.0 if x > 1 else 4.0
        y += 1.5
        return y, z * y

    x = np.array([-3, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3, 4, 8, 9, 20, -7, 1.25, 2.0], np.float32)
    a, b = np.zeros(16, np.float32), np.zeros(16, np.float32)
    m.k.interpret[(1,)](x, a, b, 2.0, BLOCK=16)
    want = np.array([f(float(v), 2.0) for v in x], np.float32)
    np.testing.assert_allclose(a, want[:, 0])
    np.testing.assert_allclose(b, want[:, 1])


def _refusal(load_kernels: Any, body: str, call: str = "tl.map_elementwise(f, x, X + tl.arange(0, BLOCK))",
             ) -> tlxc.CompilationError:
    m = load_kernels(f"""
@tlxc.jit
def f(x, p):
{body}


@tlxc.jit
def k(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), {call})  # CALL
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*i32", {"BLOCK": 32})
    e = info.value
    assert e.loc is not None and e.loc.file == m.__path_str__
    e.source_line = open(m.__path_str__).read().splitlines()[e.loc.line - 1]  # type: ignore[attr-defined]
    return e


@pytest.mark.parametrize("body,marker,words", [
    ("    tl.store(p, x)  # HERE\n    return x", "# HERE", "'store' in f is not an elementwise operation"),
    ("    return tl.load(p)  # HERE", "# HERE", "'load' in f is not an elementwise operation"),
    ("    return tl.sum(x, 0) + x  # HERE", "# HERE", "'reduce' in f is not an elementwise operation"),
    ("    while x > 0:  # HERE\n        x = x - 3\n    return x", "# HERE",
     "the condition of a while loop depends on the element"),
    ("    for i in range(x):  # HERE\n        x = x - 1\n    return x", "# HERE",
     "a bound of a range loop depends on the element"),
    ("    if x > 0:\n        return x", "if x > 0", "f returns a value on some paths and nothing on others"),
])
def test_refused_at_the_line(load_kernels: Any, body: str, marker: str, words: str) -> None:
    e = _refusal(load_kernels, body)
    assert words in e.message, e.message
    assert marker in e.source_line  # type: ignore[attr-defined]


def test_pack_is_refused_by_name(load_kernels: Any) -> None:
    e = _refusal(load_kernels, "    return x", "tl.map_elementwise(f, x, x, pack=4)")
    assert e.code == "TLXC-CALL-002" and "tl.map_elementwise(pack=4) is not supported" in e.message
    assert "# CALL" in e.source_line  # type: ignore[attr-defined]
