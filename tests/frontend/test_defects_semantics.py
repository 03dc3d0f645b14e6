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


# -- tl.sum's accumulation type ------------------------------------------------------------------
SUM_DTYPE = """
@tlxc.jit
def k(x, out, B: tl.constexpr, D: tl.constexpr, W: tl.constexpr):
    s = tl.sum(tl.load(x + tl.arange(0, B)), axis=0, dtype=D)
    tl.static_assert(s.dtype == W, "sum dtype")
    tl.store(out, s)
"""


@pytest.mark.parametrize("x,d,want", [
    ("fp16", None, "float16"), ("bf16", None, "float32"), ("bf16", "bfloat16", "float32"),
    ("fp32", None, "float32"), ("i8", None, "int32"), ("i16", None, "int32"), ("u8", None, "uint32"),
    ("u16", None, "uint32"), ("i1", None, "uint32"), ("i64", None, "int64"), ("fp16", "float32", "float32"),
    ("i8", "int8", "int8"),
])
def test_sum_dtype_is_tritons(load_kernels: Any, x: str, d: str | None, want: str) -> None:
    import tlxc.language as tl

    mod = load_kernels(SUM_DTYPE)
    dt = getattr(tl, d) if d else None
    ir = mod.k.compile(f"*{x},*{x}", {"B": 16, "D": dt, "W": getattr(tl, want)}).asm["ir"]
    reduce_line = next(line for line in ir.splitlines() if "reduce" in line)
    short = {"float16": "f16", "float32": "f32", "int32": "i32", "uint32": "u32", "int64": "i64", "int8": "i8"}
    assert f"}} : {short[want]} loc(" in reduce_line, reduce_line


def _f16_pairwise(v: np.ndarray) -> np.float16:
    while len(v) > 1:
        v = (v[: len(v) // 2].astype(np.float64) + v[len(v) // 2:].astype(np.float64)).astype(np.float16)
    return v[0]


def test_fp16_sum_adds_in_fp16_in_the_interpreter(load_kernels: Any) -> None:
    import tlxc.language as tl

    mod = load_kernels(SUM_DTYPE)
    x = np.array([2048.0] + [1.0] * 15, np.float16)  # 2048 + 1 rounds back to 2048 in fp16
    out = np.zeros(1, np.float16)
    mod.k.interpret[(1,)](x, out, B=16, D=None, W=tl.float16)
    assert out[0] == _f16_pairwise(x) == np.float16(2062.0)  # an fp32 accumulation gives 2063 -> 2064
    assert np.float16(np.sum(x.astype(np.float32))) == np.float16(2064.0)


def test_bf16_sum_accumulates_in_fp32_in_the_interpreter(load_kernels: Any) -> None:
    import ml_dtypes

    import tlxc.language as tl

    mod = load_kernels(SUM_DTYPE)
    x = np.array([256.0] + [1.0] * 15, ml_dtypes.bfloat16)  # bf16 adds would lose every 1
    out = np.zeros(1, ml_dtypes.bfloat16)
    mod.k.interpret[(1,)](x, out, B=16, D=None, W=tl.float32)
    assert float(out[0]) == 272.0


def test_sum_accumulation_on_both_targets(load_kernels: Any) -> None:
    import tlxc.language as tl

    mod = load_kernels(SUM_DTYPE)
    ptx = mod.k.compile("*bf16,*bf16", {"B": 128, "D": None, "W": tl.float32}, arch="sm_90a").asm["ptx"]
    assert "add.f32" in ptx and "add.bf16" not in ptx and "add.rn.bf16" not in ptx
    llir = mod.k.compile("*fp16,*fp16", {"B": 128, "D": None, "W": tl.float16}, arch="gfx950").asm["llir"]
    adds = [i for i, line in enumerate(llir.splitlines()) if "fadd float" in line]
    lines = llir.splitlines()
    assert adds and all("fptrunc float" in lines[i + 1] for i in adds), "each f32 add rounds back to f16"


# -- globals that can change in place ----------------------------------------------------------------
@pytest.mark.parametrize("definition,kind", [
    ("SIZES = [1, 2]", "list"), ("SIZES = {0: 1, 1: 2}", "dict"), ("SIZES = tl.constexpr([1, 2])", "list"),
    ("SIZES = (1, [2])", "tuple holding a list"),
])
def test_mutable_globals_are_refused(load_kernels: Any, definition: str, kind: str) -> None:
    source = definition + """

@tlxc.jit
def k(out):
    tl.store(out, SIZES[1])  # HERE
"""
    err = _error(load_kernels, source, "*i32")
    assert err.code == "TLXC-CONSTEXPR-001", str(err)
    assert f"'SIZES' is a {kind} from outside the kernel" in err.message
    assert err.loc is not None and err.loc.line == _line_of(source, "# HERE") and err.loc.col == 18


def test_tuple_globals_still_recompile_when_rebound(load_kernels: Any) -> None:
    mod = load_kernels("""
SIZES = (1, 2)

@tlxc.jit
def k(out):
    tl.store(out, SIZES[1])
""")
    out = np.zeros(1, np.int32)
    mod.k.interpret[(1,)](out)
    assert out[0] == 2
    mod.SIZES = (1, 7)
    mod.k.interpret[(1,)](out)
    assert out[0] == 7


# -- tl.join of two scalars ----------------------------------------------------------------------
JOIN_SCALARS = """
@tlxc.jit
def k(out, a, b):
    j = tl.join(a, b * 2)
    tl.static_assert(j.shape == (2,), "a tile of 2")
    tl.store(out + tl.arange(0, 2), j)
"""


def test_join_of_two_scalars_in_the_interpreter(load_kernels: Any) -> None:
    out = np.zeros(2, np.float32)
    load_kernels(JOIN_SCALARS).k.interpret[(1,)](out, 3.5, 4.0)
    assert out.tolist() == [3.5, 8.0]


@pytest.mark.parametrize("arch", ["sm_90a", "gfx950"])
def test_join_of_two_scalars_compiles(load_kernels: Any, arch: str) -> None:
    asm = load_kernels(JOIN_SCALARS).k.compile("*fp32,fp32,fp32", arch=arch).asm
    assert asm["ptx" if arch.startswith("sm") else "amdgcn"]


# -- valid Triton that used to be refused ------------------------------------------------------------
def _swizzle_reference(i: int, j: int, size_i: int, size_j: int, size_g: int) -> tuple[int, int]:
    ij = i * size_j + j
    group = ij // (size_g * size_j)
    off_i = group * size_g
    rows = min(size_i - off_i, size_g)
    local = ij % (size_g * size_j)
    return off_i + local % rows, local // rows


SWIZZLE = """
@tlxc.jit
def k(out, size_i, size_j, size_g, B: tl.constexpr):
    offs = tl.arange(0, B)
    ii = offs // 4
    jj = offs % 4
    ni, nj = tl.swizzle2d(ii, jj, size_i, size_j, size_g)
    tl.store(out + offs * 2, ni)
    tl.store(out + offs * 2 + 1, nj)
    tl.static_assert(tl.swizzle2d(1, 2, 4, 4, 2) == (0, 3), "constants fold")
    tl.static_assert(tl.swizzle2d(3, 0, 5, 7, 3) == (3, 0), "a last, shorter group starts at its own row")
    tl.static_assert(tl.swizzle2d(3, 1, 5, 7, 3) == (4, 0), "a last, shorter group fills its columns")
"""


def test_swizzle2d_matches_tritons_definition(load_kernels: Any) -> None:
    mod = load_kernels(SWIZZLE)
    out = np.zeros(32, np.int32)
    mod.k.interpret[(1,)](out, 4, 4, 3, B=16)
    got = [tuple(p) for p in out.reshape(16, 2).tolist()]
    assert got == [_swizzle_reference(n // 4, n % 4, 4, 4, 3) for n in range(16)]
    # Triton's docstring example: 4x4, groups of 2 rows
    out2 = np.zeros(32, np.int32)
    mod.k.interpret[(1,)](out2, 4, 4, 2, B=16)
    new = np.zeros((4, 4), np.int32)
    for n, (a, b) in enumerate(out2.reshape(16, 2).tolist()):
        new[a, b] = n
    assert new.tolist() == [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]


def test_swizzle2d_last_group_of_fewer_rows(load_kernels: Any) -> None:
    """5 rows in groups of 3 with 7 columns: the last group has 2 rows and 14 elements, an
    odd group size (21) before it; its rows were swapped (``ij % rows`` on the global index
    rather than on the index within the group; Triton's test_swizzle2d)."""
    mod = load_kernels(SWIZZLE.replace("offs // 4", "offs // 7").replace("offs % 4", "offs % 7"))
    out = np.zeros(2 * 64, np.int32)
    mod.k.interpret[(1,)](out, 5, 7, 3, B=64)
    new = np.full((5, 7), -1, np.int32)
    for n, (a, b) in enumerate(out.reshape(64, 2).tolist()[:35]):
        new[a, b] = n
    assert new.tolist() == [[0, 3, 6, 9, 12, 15, 18], [1, 4, 7, 10, 13, 16, 19], [2, 5, 8, 11, 14, 17, 20],
                            [21, 23, 25, 27, 29, 31, 33], [22, 24, 26, 28, 30, 32, 34]]


@pytest.mark.parametrize("factor,unrolled", [(0, False), (1, False), (4, True)])
def test_loop_unroll_factor_zero_and_one_mean_none(load_kernels: Any, factor: int, unrolled: bool) -> None:
    mod = load_kernels(f"""
@tlxc.jit
def k(out, n):
    acc = 0
    for i in tl.range(0, n, loop_unroll_factor={factor}):
        acc += i
    tl.store(out, acc)
""")
    ir = mod.k.compile("*i32,i32").asm["ir"]
    # 4: the body four times in a loop stepping by 4, then the loop itself for what is left
    assert "loop_unroll_factor =" not in ir
    assert ir.count(" = for ") == (2 if unrolled else 1) and ir.count("add %") >= (5 if unrolled else 1), ir
    out = np.zeros(1, np.int32)
    mod.k.interpret[(1,)](out, 5)
    assert out[0] == 10


def test_loop_unroll_factor_stays_a_non_negative_integer(load_kernels: Any) -> None:
    err = _error(load_kernels, """
@tlxc.jit
def k(out, n):
    for i in tl.range(0, n, loop_unroll_factor=-1):  # HERE
        pass
""", "*i32,i32")
    assert err.code == "TLXC-CONSTEXPR-001" and "non-negative" in err.message


@pytest.mark.parametrize("arch", ["sm_90a", "gfx950"])
def test_swizzle2d_compiles(load_kernels: Any, arch: str) -> None:
    asm = load_kernels(SWIZZLE).k.compile("*i32,i32,i32,i32", {"B": 16}, arch=arch).asm
    assert asm["ptx" if arch.startswith("sm") else "amdgcn"]
