"""``tl.reduce`` / ``x.reduce`` with a ``@tlxc.jit`` combine function
(tlxc/frontend/reduce_combine.py, the ``reduce_combine`` op): numbers in the interpreter
against numpy, code for sm_90a (assembled by ptxas) and gfx942 (compiled by LLVM), and
the user's mistakes reported at their line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc

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


# -- code for the GPUs (no numbers here: the machines of CI have none) -----------------------------
COMPILE_CASES = [
    ("rows", "*i32,*i32", {"M": 16, "N": 64, "AXIS": 1, "KEEP": False}),
    ("rows", "*i32,*i32", {"M": 64, "N": 16, "AXIS": 0, "KEEP": True}),
    ("product_all", "*f32,*f32", {"M": 16, "N": 64}),
    ("argmax_rows", "*f32,*f32,*i32", {"M": 16, "N": 64, "USE_IF": True}),
]


@pytest.mark.parametrize("name,sig,consts", COMPILE_CASES)
def test_ptx_for_sm90a_assembles(kernels: Any, name: str, sig: str, consts: dict) -> None:
    ck = getattr(kernels, name).compile(sig, consts, arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert "shfl.sync.bfly.b32" in ptx
    if name == "product_all":  # 4 warps meet in shared memory, and the region's mul is in the tree
        assert "bar.sync" in ptx and ptx.count("mul.rn.f32") + ptx.count("mul.f32") >= 10, ptx
    if name == "argmax_rows":
        assert "selp.f32" in ptx and "selp.b32" in ptx
    assert ck.asm["cubin"]  # ptxas (skipped where it is not installed)


@pytest.mark.parametrize("name,sig,consts", COMPILE_CASES)
def test_amdgcn_for_gfx942_compiles(kernels: Any, name: str, sig: str, consts: dict) -> None:
    ck = getattr(kernels, name).compile(sig, consts, arch="gfx942")
    asm = ck.asm["amdgcn"]
    assert "s_endpgm" in asm
    if name == "product_all":
        assert "v_mul_f32" in asm and "s_barrier" in asm, asm
    if name == "rows":
        assert "v_add_u32" in asm or "v_add_nc_u32" in asm or "v_add_co_u32" in asm, asm


# -- the user's mistakes -------------------------------------------------------------------------
def _error(load_kernels: Any, helper: str, call: str, sig: str = "*f32") -> tlxc.CompilationError:
    m = load_kernels(f"""
{helper}


@tlxc.jit
def k(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    i = tl.arange(0, BLOCK)
    r = {call}  # CALL
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile(sig, {"BLOCK": 16})
    e = info.value
    assert e.loc is not None and e.loc.file == m.__path_str__
    e.source_line = open(m.__path_str__).read().splitlines()[e.loc.line - 1]  # type: ignore[attr-defined]
    return e


ADD = "@tlxc.jit\ndef add(a, b):\n    return a + b\n\ndef plain(a, b):\n    return a + b"
PAIR = "@tlxc.jit\ndef pair(a, b, c, d):\n    return a + c, b + d\n\n@tlxc.jit\ndef one(a, b, c, d):\n    return a + c"


@pytest.mark.parametrize("helper,call,code,words,marker", [
    (ADD, "tl.reduce(x, 0, plain)", "TLXC-CALL-002", "combine_fn must be a @tlxc.jit function", "# CALL"),
    (ADD, "tl.reduce(x, 0, 3)", "TLXC-CALL-002", "combine_fn must be a @tlxc.jit function", "# CALL"),
    (ADD, "tl.reduce((x, x), 0, add)", "TLXC-CALL-002", "add must take 4 values", "# CALL"),
    (PAIR, "tl.reduce((x, i), 0, pair)", "TLXC-SHAPE-001",
     "input 0 is [16, 16] and input 1 is [16]", "# CALL"),
    (PAIR, "tl.reduce((x, x.to(tl.int32)), 0, one)", "TLXC-TYPE-002", "one returns 1 value for 2 inputs", "# CALL"),
    (ADD, "tl.reduce(x, 2, add)", "TLXC-SHAPE-003", "axis 2 is out of range for a tile of rank 2", "# CALL"),
    ("@tlxc.jit\ndef dbl(a, b):\n    return (a + b).to(tl.float64)", "tl.reduce(x, 0, dbl)", "TLXC-TYPE-002",
     "but input 0 holds float32", "# CALL"),
    ("@tlxc.jit\ndef bad(a, b):\n    return tl.sum(tl.full([2], a, tl.float32), 0)  # HERE",
     "tl.reduce(x, 0, bad)", "TLXC-CALL-002", "in bad is not scalar arithmetic", "# HERE"),
])
def test_mistakes_at_the_line(load_kernels: Any, helper: str, call: str, code: str, words: str,
                              marker: str) -> None:
    e = _error(load_kernels, helper, call)
    assert e.code == code and words in e.message, (e.code, e.message)
    assert marker in e.source_line  # type: ignore[attr-defined]


def test_the_method_form(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def mx(a, b):
    return tl.maximum(a, b)


@tlxc.jit
def k(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(Y, x.reduce(0, mx))
""")
    x = np.random.RandomState(9).randn(128).astype(np.float32)
    y = np.zeros(1, np.float32)
    m.k.interpret[(1,)](x, y, BLOCK=128)
    assert y[0] == x.max()


def test_an_unused_reduction_is_removed(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def add(a, b):
    return a + b


@tlxc.jit
def k(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    unused = tl.reduce(x, 0, add)
    tl.store(Y, tl.reduce(x * 2.0, 0, add))
""")
    ir = m.k.compile("*f32,*f32", {"BLOCK": 64}).asm["ir"]
    assert ir.count("reduce_combine") == 1, ir
