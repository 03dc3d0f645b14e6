"""Tensor methods Triton's tests call that tlxc lacked: ``x.item()`` (a one-element tile
as a scalar; Triton's test_atomic_cas builds its lock values so), and the method spellings
of ``tl`` functions that take the tensor first: ``ptr.store``, ``ptr.atomic_*``,
``x.flip``, ``x.associative_scan``, ``x.sqrt_rn``. Each ran into TLXC-NAME-001 ("a tensor
has no attribute ...")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

ARCHS = ["sm_90a", "gfx942", "gfx950", "gfx1250"]


@tlxc.jit
def items(x, lock, out):
    one = tl.full((1,), 1, dtype=tl.int32).item()
    v = tl.load(x + tl.arange(0, 4)).reshape(2, 2)
    total = tl.sum(tl.sum(v, axis=1).reshape(1, 2), axis=1).item()  # rank 1, one element
    corner = tl.load(x + tl.arange(0, 1)[:, None]).item()  # rank 2, one element
    tl.atomic_cas(lock, 0, one)
    tl.store(out, total * 100 + corner)
    tl.store(out + 1, tl.full((1,), 3, dtype=tl.int32).item() + one)


def test_item_gives_the_one_element_as_a_scalar() -> None:
    x = np.array([5, 6, 7, 8], np.int32)
    lock = np.zeros(1, np.int32)
    out = np.zeros(2, np.int32)
    items.interpret[(1,)](x, lock, out)
    assert lock.tolist() == [1]
    assert out.tolist() == [2605, 4]


@pytest.mark.parametrize("arch", ARCHS)
def test_item_compiles_for_every_target(arch: str) -> None:
    ck = items.compile("*i32,*i32,*i32", {}, arch=arch)
    assert ck.asm["cubin" if arch.startswith("sm_") and "cubin" in ck.asm.available() else
                  "ptx" if arch.startswith("sm_") else "amdgcn"]


def test_item_of_many_elements_is_an_error(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def many(x):
    v = tl.arange(0, 4)
    tl.store(x, v.item())
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.many.interpret[(1,)](np.zeros(1, np.int32))
    e = info.value
    assert e.code == "TLXC-SHAPE-003"
    assert "item() needs a tile of one element, got shape [4] (4 elements)" in str(e)
    assert "tl.store(x, v.item())\n                    ^~~~~~~~" in str(e)
    assert (e.loc.line, e.loc.col) == (8, 16)  # after load_kernels' three import lines


@tlxc.jit
def add_fn(a, b):
    return a + b


@tlxc.jit
def methods(x, y, z, c, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(x + o)
    (y + o).store(v.flip(0))
    (z + o).store(v.associative_scan(0, add_fn, reverse=True))
    (c + o * 0).atomic_add(1.0, mask=o < 3)
    (c + 1).atomic_max(7.0)
    (c + 2).atomic_xchg(-2.0)
    (y + N + o).store(v.sqrt_rn())


def test_method_spellings_of_tl_functions() -> None:
    n = 8
    x = np.arange(n, dtype=np.float32) * 2
    y = np.zeros(2 * n, np.float32)
    z = np.zeros(n, np.float32)
    c = np.zeros(3, np.float32)
    methods.interpret[(1,)](x, y, z, c, N=n)
    assert y[:n].tolist() == x[::-1].tolist()
    assert z.tolist() == np.cumsum(x[::-1])[::-1].tolist()
    assert c.tolist() == [3.0, 7.0, -2.0]
    assert np.array_equal(y[n:], np.sqrt(x))


@pytest.mark.parametrize("arch", ARCHS)
def test_method_spellings_compile_for_every_target(arch: str) -> None:
    ck = methods.compile("*fp32,*fp32,*fp32,*fp32", {"N": 64}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm_") else "amdgcn"]
