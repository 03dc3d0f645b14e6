"""``reassociate-pointers`` (tlxc/ir/passes/reassociate_pointers.py): in a loop,
``(base + row) + col`` with ``base`` and ``col`` the same every iteration becomes
``(base + col) + row``, the first sum built before the loop. The interpreter runs the tile
IR, so the numbers check the rewrite (offsets that wrap in ``i32`` when summed, negative
ones, masks); then the IR's shape, the cases it must leave alone, and the PTX of the
attention example's key loads on sm_90a.
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
def column_sums(x_ptr, out_ptr, n_rows, stride, col0, shift, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Sum the rows of a strided matrix, ``BLOCK_R`` rows an iteration: the load's address is
    ``base + rows[:, None] * stride + cols[None, :]``."""
    base = x_ptr + shift + tl.program_id(0) * BLOCK_C
    cols = col0 + tl.arange(0, BLOCK_C)
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        acc += tl.load(base + rows[:, None] * stride + cols[None, :], mask=rows[:, None] < n_rows, other=0.0)
    tl.store(out_ptr + tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C), tl.sum(acc, 0))


@tlxc.jit
def shared_row_pointer(x_ptr, out_ptr, n_rows, stride, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """The row pointers are used twice (also for the first column alone): left as written."""
    cols = tl.arange(0, BLOCK_C)
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    first = tl.zeros([BLOCK_R], dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        row_ptrs = x_ptr + rows * stride
        acc += tl.load(row_ptrs[:, None] + cols[None, :])
        first += tl.load(row_ptrs)
    tl.store(out_ptr + cols, tl.sum(acc, 0) + tl.sum(first, 0))


def _loop(ir: str) -> str:
    start = ir.index("= for ")
    return ir[start:ir.index("yield", start)]


@pytest.mark.parametrize("n_rows", [1, 16, 37])
@pytest.mark.parametrize("col0", [0, 5])
def test_the_sums_are_those_of_numpy(n_rows: int, col0: int) -> None:
    rng = np.random.default_rng(n_rows)
    stride = 160
    x = rng.standard_normal((n_rows, stride)).astype(np.float32)
    out = np.zeros(128, np.float32)
    column_sums.interpret[(2,)](x, out, n_rows, stride, col0, 0, BLOCK_R=16, BLOCK_C=64)
    want = np.concatenate([x[:, p * 64 + col0:p * 64 + col0 + 64].sum(0) for p in range(2)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_offsets_whose_i32_sum_wraps_still_reach_their_elements() -> None:
    """cols start near 2**31 and the base is moved back by as much: ``row * stride + col``
    would wrap in i32, the 64-bit sum does not (each offset is extended on its own)."""
    stride, n_rows = 64, 8
    x = np.arange(n_rows * stride, dtype=np.float32).reshape(n_rows, stride)
    col0 = 2 ** 31 - 64  # the last column is 2**31 - 1; from row 1 on, row * stride + col is not an i32
    out = np.zeros(64, np.float32)
    column_sums.interpret[(1,)](x, out, n_rows, stride, col0, -col0, BLOCK_R=4, BLOCK_C=64)
    np.testing.assert_array_equal(out, x.sum(0))


def test_the_invariant_part_is_built_before_the_loop() -> None:
    ir = column_sums.compile("*fp32:16,*fp32:16,i32,i32:16,i32,i32", constants=dict(BLOCK_R=16, BLOCK_C=64)).asm["ir"]
    before, loop = ir[:ir.index("= for ")], _loop(ir)
    # before the loop: base splat over the whole tile plus the columns
    assert re.search(r"= splat %\d+ : tile<16x64xptr<f32>>", before)
    assert re.search(r"= addptr %\d+, %\d+ : tile<16x64xptr<f32>>", before)
    # in it: one addptr, adding the broadcast row offsets
    assert len(re.findall(r"= addptr ", loop)) == 1
    assert "expand_dims %" in loop and not re.search(r"splat %\d+ : tile<16x64xptr", loop)


def test_a_row_pointer_used_twice_is_left_as_written() -> None:
    ir = shared_row_pointer.compile("*fp32:16,*fp32:16,i32,i32:16", constants=dict(BLOCK_R=16, BLOCK_C=64)).asm["ir"]
    assert len(re.findall(r"= addptr ", _loop(ir))) == 2
    x = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.zeros(64, np.float32)
    shared_row_pointer.interpret[(1,)](x, out, 16, 64, BLOCK_R=8, BLOCK_C=64)
    np.testing.assert_allclose(out, x.sum(0) + x[:, 0].sum(), rtol=1e-6)


def test_attention_key_loads_take_one_widening_add_each_on_sm_90a() -> None:
    """examples/attention.py: in the key/value loop, each 16-byte cp.async address is the
    hoisted ``k_base + col`` plus the row offset, one ``mad.wide.s32`` (ptxas: a LEA pair),
    not a 64-bit row pointer plus the column."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
    try:
        from attention import attn_fwd
    finally:
        sys.path.pop(0)
    sig = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,fp32," + ",".join(["i32:16"] * 12) + ",i32,i32:16"
    ptx = attn_fwd.compile(sig, constants=dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=False),
                           arch="sm_90a", num_warps=8, num_stages=3).asm["ptx"]
    loop = ptx[ptx.index("wgmma.mma_async"):]
    loop = loop[:loop.index("bra.uni")] if "bra.uni" in loop else loop
    copies = re.findall(r"cp\.async\.cg\.shared\.global \[[^\]]+\], \[(%rd\d+)\]", loop)
    assert len(copies) == 8  # 4 key and 4 value chunks a thread, per iteration
    for reg in copies:
        assert re.search(rf"mad\.wide\.s32 {reg}, %r\d+, 2, %rd\d+;", loop), reg
