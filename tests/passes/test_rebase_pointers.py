"""``rebase-pointers`` (tlxc/ir/passes/rebase_pointers.py): a tile of pointers that a loop
moves by a runtime scalar each iteration is carried as its scalar base, and rebuilt in the
body from it and the offsets it started with. The interpreter runs the tile IR, so the
numbers check the rewrite (negative and zero steps, the pointers used after the loop, a
rebuilt tile used in a nested ``if``); then the IR's shape, the cases it must leave alone,
and the loop of the matmul example on sm_90a.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.interpreter_only


@tlxc.jit
def walk_rows(x_ptr, out_ptr, last_ptr, start, n_rows, stride, BLOCK: tl.constexpr):
    """Sum ``n_rows`` rows ``stride`` elements apart from element ``start`` (a runtime step,
    maybe negative or 0), odd rows twice (the pointers read in an ``if``), then store the row
    after the last."""
    offs = tl.arange(0, BLOCK)
    p = x_ptr + start + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, n_rows):
        v = tl.load(p)
        acc += v
        if i % 2 == 1:
            acc += tl.load(p)
        p += stride
    tl.store(out_ptr + offs, acc)
    tl.store(last_ptr + offs, tl.load(p))


@tlxc.jit
def fixed_step(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    """The step is a constant (BLOCK): left as written."""
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, n_rows):
        acc += tl.load(p)
        p += BLOCK
    tl.store(out_ptr + offs, acc)


@tlxc.jit
def step_used_twice(x_ptr, out_ptr, n_rows, stride, BLOCK: tl.constexpr):
    """The moved pointers are read in the same iteration: left as written."""
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, n_rows):
        q = p + stride
        acc += tl.load(p) + tl.load(q, mask=offs < 0, other=0.0)
        p = q
    tl.store(out_ptr + offs, acc)


@tlxc.jit
def varying_step(x_ptr, out_ptr, n_rows, stride, BLOCK: tl.constexpr):
    """Each element moves by its own amount: no scalar base to carry."""
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, n_rows):
        acc += tl.load(p)
        p += stride + offs * 0
    tl.store(out_ptr + offs, acc)


SIG = "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32"


def _loop(ir: str) -> str:
    """The text of the (first, top-level) loop, to its closing brace."""
    start = ir.index("= for ")
    return ir[start:ir.index("\n    } loc", start)]


def _carried(ir: str) -> list[str]:
    m = re.search(r"= for [^\n]*: ([^{]*)\{", ir)
    assert m is not None
    return [t.strip() for t in m.group(1).split(", ")]


@pytest.mark.parametrize("n_rows,stride,start", [(5, 32, 0), (4, -32, 7 * 32), (3, 0, 64), (0, 32, 0), (6, 40, 0)])
def test_the_sums_and_the_pointers_after_the_loop_are_numpys(n_rows: int, stride: int, start: int) -> None:
    flat = np.arange(12 * 32, dtype=np.float32)
    out, last = np.zeros(32, np.float32), np.zeros(32, np.float32)
    walk_rows.interpret[(1,)](flat, out, last, start, n_rows, stride, BLOCK=32)
    want = np.zeros(32, np.float32)
    for i in range(n_rows):
        row = flat[start + i * stride:start + i * stride + 32]
        want += row * (2 if i % 2 else 1)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(last, flat[start + n_rows * stride:start + n_rows * stride + 32])


def test_the_loop_carries_a_scalar_base_and_rebuilds_the_tile() -> None:
    ir = walk_rows.compile(SIG, constants=dict(BLOCK=32)).asm["ir"]
    assert _carried(ir) == ["tile<32xf32>", "ptr<f32>"]
    loop = _loop(ir)
    # the tile: splat of the carried base plus the hoisted offsets, first in the body
    body = loop.split("\n")[2:4]
    assert re.search(r"= splat %\w+ : tile<32xptr<f32>>", body[0])
    assert re.search(r"= addptr %\d+, %\d+ : tile<32xptr<f32>>", body[1])
    # one scalar add moves the base; no tile addptr by a splat step is left
    assert len(re.findall(r"= addptr %\w+, %\w+ : ptr<f32>", loop)) == 1
    assert len(re.findall(r"= addptr .* : tile<32xptr<f32>>", loop)) == 1
    # after the loop the pointers are rebuilt from the base the loop returns
    after = ir[ir.index("\n    } loc", ir.index("= for ")):]
    assert re.search(r"= splat %\d+ : tile<32xptr<f32>>", after)


@pytest.mark.parametrize("kernel,sig", [
    (fixed_step, "*fp32:16,*fp32:16,i32"),
    (step_used_twice, "*fp32:16,*fp32:16,i32,i32"),
    (varying_step, "*fp32:16,*fp32:16,i32,i32"),
])
def test_left_as_written(kernel: object, sig: str) -> None:
    ir = kernel.compile(sig, constants=dict(BLOCK=32)).asm["ir"]  # type: ignore[attr-defined]
    assert "tile<32xptr<f32>>" in _carried(ir) and "ptr<f32>" not in _carried(ir)
    x = np.arange(8 * 32, dtype=np.float32)
    out = np.zeros(32, np.float32)
    args = (x, out, 4) if kernel is fixed_step else (x, out, 4, 32)
    kernel.interpret[(1,)](*args, BLOCK=32)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(out, x[:4 * 32].reshape(4, 32).sum(0))


def test_a_counting_down_loop_is_left_as_written() -> None:
    """A loop without a constant positive step keeps its carried values (``dce`` could not drop
    the old one), so it is not rewritten."""
    @tlxc.jit
    def down(x_ptr, out_ptr, n_rows, stride, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        p = x_ptr + offs
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for _ in range(n_rows, 0, -1):
            acc += tl.load(p)
            p += stride
        tl.store(out_ptr + offs, acc)

    ir = down.compile("*fp32:16,*fp32:16,i32,i32", constants=dict(BLOCK=32)).asm["ir"]
    assert _carried(ir) == ["tile<32xptr<f32>>", "tile<32xf32>"]


def test_matmul_moves_b_by_one_scalar_add_on_sm_90a() -> None:
    """examples/matmul.py at 128x256x64, 8 warps: B (runtime step ``BLOCK_K * stride_bk``) is
    carried as a base, A (``stride_ak`` specialized to 1: a constant step) as its tile. The
    loop's PTX adds a 32-bit offset to a base per copy (``mad.wide.s32``) instead of a 64-bit
    add per element (70 ``add.s64`` before the pass, 7 with it)."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
    try:
        from matmul import matmul_kernel
    finally:
        sys.path.pop(0)
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
    ck = matmul_kernel.compile(sig, constants=dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_SIZE_M=8),
                               arch="sm_90a", num_warps=8, num_stages=3)
    assert _carried(ck.asm["ir"]) == ["tile<128x64xptr<f16>>", "tile<128x256xf32>", "ptr<f16>"]
    ptx = ck.asm["ptx"]
    loop = ptx[ptx.index("wgmma.mma_async"):]
    loop = loop[:loop.index("bra.uni")]
    assert len(re.findall(r"cp\.async\.cg\.shared\.global", loop)) == 12
    assert len(re.findall(r"^\s*add\.s64", loop, re.M)) <= 8
