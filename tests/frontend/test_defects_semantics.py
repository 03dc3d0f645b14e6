"""Regressions in the frontend's semantic rules: what Triton refuses is refused at the
user's line, and what it accepts works the same in the interpreter and the code
generators."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc


def _error(load_kernels: Any, source: str, signature: str, **consts: Any) -> tlxc.CompilationError:
    mod = load_kernels(source)
    with pytest.raises(tlxc.CompilationError) as info:
        mod.k.compile(signature, consts)
    return info.value


def _line_of(source: str, marker: str) -> int:
    lines = ("import numpy as np\nimport tlxc\nimport tlxc.language as tl\n" + source).splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text)


# -- tl.store / tl.load through a scalar pointer ---------------------------------------------------
STORE_TILE_TO_SCALAR = """
@tlxc.jit
def k(out, B: tl.constexpr):
    tl.store(out, tl.arange(0, B))  # HERE
"""
STORE_TILE_MASK_TO_SCALAR = """
@tlxc.jit
def k(out, B: tl.constexpr):
    tl.store(out, 1, mask=tl.arange(0, B) < 3)  # HERE
"""
STORE_WIDER_VALUE = """
@tlxc.jit
def k(out, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(out + offs[:, None], offs[:, None] + offs[None, :])  # HERE
"""
LOAD_TILE_MASK_FROM_SCALAR = """
@tlxc.jit
def k(x, B: tl.constexpr):
    v = tl.load(x, mask=tl.arange(0, B) < 3, other=0)  # HERE
"""
LOAD_TILE_OTHER_FROM_SCALAR = """
@tlxc.jit
def k(x, B: tl.constexpr):
    v = tl.load(x, mask=True, other=tl.zeros((B,), tl.int32))  # HERE
"""


@pytest.mark.parametrize("source,words", [
    (STORE_TILE_TO_SCALAR, "tl.store through a scalar pointer needs a scalar `value`, got a tile"),
    (STORE_TILE_MASK_TO_SCALAR, "tl.store through a scalar pointer needs a scalar `mask`, got a tile"),
    (STORE_WIDER_VALUE, "tl.store's value has shape [16, 16], which does not fit the pointer's shape [16, 1]"),
    (LOAD_TILE_MASK_FROM_SCALAR, "tl.load through a scalar pointer needs a scalar `mask`, got a tile"),
    (LOAD_TILE_OTHER_FROM_SCALAR, "tl.load through a scalar pointer needs a scalar `other`, got a tile"),
])
def test_scalar_pointer_takes_no_tiles(load_kernels: Any, source: str, words: str) -> None:
    err = _error(load_kernels, source, "*i32", B=16)
    assert err.code == "TLXC-SHAPE-001" and words in err.message, str(err)
    assert err.loc is not None and err.loc.line == _line_of(source, "# HERE")


def test_store_value_and_mask_still_broadcast_to_the_pointer(load_kernels: Any) -> None:
    mod = load_kernels("""
@tlxc.jit
def k(out, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(out + offs[:, None] * B + offs[None, :], 7, mask=offs[None, :] < 2)
    tl.store(out, 5)
""")
    out = np.zeros(16, np.int32)
    mod.k.interpret[(1,)](out, B=4)
    assert out.reshape(4, 4).tolist() == [[5, 7, 0, 0], [7, 7, 0, 0], [7, 7, 0, 0], [7, 7, 0, 0]]


# -- a if c else b -------------------------------------------------------------------------------
IFEXP_TILE_COND = """
@tlxc.jit
def k(out, B: tl.constexpr):
    offs = tl.arange(0, B)
    v = offs if offs < 3 else offs + 1  # HERE
    tl.store(out + offs, v)
"""


def test_ifexp_refuses_a_tile_condition(load_kernels: Any) -> None:
    err = _error(load_kernels, IFEXP_TILE_COND, "*i32", B=16)
    assert err.code == "TLXC-TYPE-001" and "'a if c else b' must be a scalar" in err.message
    assert "tl.where" in err.help
    assert err.loc is not None and err.loc.line == _line_of(IFEXP_TILE_COND, "# HERE")
    assert err.loc.col == 16  # the condition (0-based)


IFEXP_SCALAR = """
@tlxc.jit
def k(out, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    v = offs * n if n > 3 else offs - n
    tl.store(out + offs, v)
"""


@pytest.mark.parametrize("n,expected", [(5, [0, 5, 10, 15]), (2, [-2, -1, 0, 1])])
def test_ifexp_on_a_runtime_scalar(load_kernels: Any, n: int, expected: list[int]) -> None:
    out = np.zeros(4, np.int32)
    load_kernels(IFEXP_SCALAR).k.interpret[(1,)](out, n, B=4)
    assert out.tolist() == expected


def test_ifexp_on_a_thread_dependent_scalar_branches_divergently(load_kernels: Any) -> None:
    mod = load_kernels("""
import tlxc.tlx as tlx

@tlxc.jit
def k(out, n):
    t = tlx.thread_id(0)
    v = n * 2 if t < 40 else n + 100
    tl.store(out + t, v)
""")
    ptx = mod.k.compile("*i32,i32", arch="sm_90a").asm["ptx"]
    branches = [line.strip() for line in ptx.splitlines() if "bra" in line and "@" in line]
    assert branches and all(" bra " in b and "bra.uni" not in b for b in branches), branches
