"""``tl.reduce`` / ``x.reduce`` with a ``@tlxc.jit`` combine function
(tlxc/frontend/reduce_combine.py, the ``reduce_combine`` op): numbers in the interpreter
against numpy, code for sm_90a (assembled by ptxas) and gfx942 (compiled by LLVM), and
the user's mistakes reported at their line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

KERNELS = """
@tlxc.jit
def add(a, b):
    return a + b


@tlxc.jit
def mul(a, b):
    return a * b


@tlxc.jit
def argmax_combine(v1, i1, v2, i2):
    # Triton's tie-break-left combine: the larger value, the smaller index on a tie
    gt = v1 > v2 or (v1 == v2 and i1 < i2)
    v = tl.where(gt, v1, v2)
    i = tl.where(gt, i1, i2)
    return v, i


@tlxc.jit
def argmax_if(v1, i1, v2, i2):
    if v1 > v2:
        return v1, i1
    elif v1 == v2:
        return v1, tl.minimum(i1, i2)
    else:
        return v2, i2


@tlxc.jit
def rows(X, Y, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    r = tl.reduce(x, AXIS, add, keep_dims=KEEP)
    if AXIS == 0:
        if KEEP:
            tl.store(Y + tl.arange(0, N)[None, :], r)
        else:
            tl.store(Y + tl.arange(0, N), r)
    else:
        if KEEP:
            tl.store(Y + tl.arange(0, M)[:, None], r)
        else:
            tl.store(Y + tl.arange(0, M), r)


@tlxc.jit
def product_all(X, Y, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    tl.store(Y, x.reduce(None, mul))


@tlxc.jit
def product_all_keep(X, Y, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    r = tl.reduce(x, None, mul, keep_dims=True)
    tl.static_assert(r.shape[0] == 1 and r.shape[1] == 1)
    tl.store(Y + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :], r)


@tlxc.jit
def argmax_rows(X, V, I, M: tl.constexpr, N: tl.constexpr, USE_IF: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    idx = tl.broadcast_to(tl.arange(0, N)[None, :], (M, N))
    if USE_IF:
        v, i = tl.reduce((x, idx), 1, argmax_if)
    else:
        v, i = tl.reduce((x, idx), 1, argmax_combine)
    tl.store(V + tl.arange(0, M), v)
    tl.store(I + tl.arange(0, M), i)
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: Any) -> Any:
    import importlib.util
    import sys

    path = tmp_path_factory.mktemp("reduce_combine") / "_tlxc_reduce_combine_kernels.py"
    path.write_text("import tlxc\nimport tlxc.language as tl\n" + KERNELS)
    spec = importlib.util.spec_from_file_location("_tlxc_reduce_combine_kernels", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("keep", [False, True])
def test_sum_by_a_custom_add(kernels: Any, axis: int, keep: bool) -> None:
    rs = np.random.RandomState(axis + 2 * keep)
    x = rs.randint(-100, 100, (16, 32)).astype(np.int32)
    y = np.zeros(x.shape[1 - axis], np.int32)
    kernels.rows.interpret[(1,)](x, y, 16, 32, axis, keep)
    np.testing.assert_array_equal(y, x.sum(axis=axis))


def test_float_sum_by_a_custom_add(kernels: Any) -> None:
    x = np.random.RandomState(3).rand(16, 32).astype(np.float32)
    y = np.zeros(16, np.float32)
    kernels.rows.interpret[(1,)](x, y, 16, 32, 1, False)
    np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-6)


def test_product_of_everything(kernels: Any) -> None:
    x = np.random.RandomState(4).uniform(0.9, 1.1, (8, 16)).astype(np.float32)
    y = np.zeros(1, np.float32)
    kernels.product_all.interpret[(1,)](x, y, 8, 16)
    np.testing.assert_allclose(y[0], np.prod(x.astype(np.float64)), rtol=1e-5)
    y[0] = 0
    kernels.product_all_keep.interpret[(1,)](x, y, 8, 16)
    np.testing.assert_allclose(y[0], np.prod(x.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("use_if", [False, True])
def test_argmax_as_a_tuple_reduction(kernels: Any, use_if: bool) -> None:
    rs = np.random.RandomState(5)
    x = rs.randint(0, 6, (16, 64)).astype(np.float32)  # many ties: the first index must win
    v = np.zeros(16, np.float32)
    i = np.full(16, -1, np.int32)
    kernels.argmax_rows.interpret[(1,)](x, v, i, 16, 64, use_if)
    np.testing.assert_array_equal(v, x.max(axis=1))
    np.testing.assert_array_equal(i, x.argmax(axis=1))
