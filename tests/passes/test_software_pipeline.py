"""``software-pipeline`` (tlxc/ir/passes/software_pipeline.py): loads feeding ``tl.dot`` in a
loop issued ``num_stages - 1`` iterations ahead into a ``cp.async`` ring.

The key check runs the NVIDIA pipeline up to and including the pass and interprets that
IR: its numbers must be those of the kernel as written (the interpreter runs the tile IR)
for loops shorter than, as long as and longer than the pipeline, with masked K tails,
pointer increments carried by the loop, transposed operands and block pointers. Then the
structure (ring sizes, waits, the carried state), what is left alone, and the PTX: the
cp.async ring and ``wgmma.wait_group 1`` in a pipelined sm_90a loop.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tlxc
import tlxc.language as tl
from tlxc.codegen.targets import backend
from tlxc.interpreter.run import run_kernel
from tlxc.ir import print_ir
from tlxc.ir.clone import clone
from tlxc.ir.core import Operation
from tlxc.ir.passes import PassOptions, run_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from matmul import matmul_kernel  # noqa: E402

# the reference is the interpreter itself, on the tile IR
pytestmark = pytest.mark.interpreter_only

SIG = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
ANY_K = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,i32:1"  # ragged shapes


@tlxc.jit
def qk_loop(q_ptr, k_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """sum over key blocks of q @ k^T, with k loaded row-major and transposed (attention's
    first dot)."""
    rm, rn, rd = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, BN), tl.float32)
    for start in tl.range(0, N, BN, num_stages=4):
        keys = start + rn
        k = tl.load(k_ptr + keys[:, None] * D + rd[None, :], mask=keys[:, None] < N, other=0.0)
        acc = tl.dot(q, tl.trans(k), acc)
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc)


def _upto_pass(module: Operation, stages: int, arch: str = "sm_90a") -> Operation:
    be = backend(arch)
    names = [n for n, _ in be.lowering]
    passes = be.lowering[:names.index("software-pipeline") + 1]
    return run_pipeline(clone(module), PassOptions(target=be.info, num_stages=stages), passes, verify_each=True)


def _matmul_ir(stages: int, block: tuple[int, int, int] = (32, 32, 16)) -> Operation:
    bm, bn, bk = block
    ck = matmul_kernel.compile(SIG, constants=dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=2),
                               arch="sm_90a")
    return _upto_pass(ck.module, stages)


def _run_matmul(module: Operation, m: int, n: int, k: int, block: tuple[int, int, int] = (32, 32, 16)) -> np.ndarray:
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    bm, bn, _ = block
    grid = (-(-m // bm) * -(-n // bn), 1, 1)
    run_kernel(module.funcs[0], grid, [a, b, c, m, n, k, k, 1, n, 1, n, 1])
    return c


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("mnk", [(64, 64, 80), (64, 32, 16), (32, 32, 5), (48, 64, 200), (32, 32, 0)])
def test_pipelined_ir_computes_what_the_kernel_does(stages: int, mnk: tuple[int, int, int]) -> None:
    """Loops of 0, 1, fewer and more iterations than stages, K tails masked."""
    ck = matmul_kernel.compile(ANY_K, constants=dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=2),
                               arch="sm_90a")
    want = _run_matmul(ck.module, *mnk)
    got = _run_matmul(_upto_pass(ck.module, stages), *mnk)
    np.testing.assert_array_equal(got, want)


def test_the_loop_gets_rings_waits_and_carried_state() -> None:
    text = print_ir(_matmul_ir(3))
    # two rings of 3 buffers, one per operand
    assert len(re.findall(r"local_alloc : memdesc<32x16xf16, smem, num=3>", text)) == 1
    assert len(re.findall(r"local_alloc : memdesc<16x32xf16, smem, num=3>", text)) == 1
    # prologue: 2 stages of 2 copies; the loop: 2 copies, one wait for this iteration's group
    assert text.count("async_load") == 6 and text.count("async_commit_group") == 3
    assert "async_wait_group {pendings = 1}" in text and "async_wait_group {pendings = 0}" in text
    assert " load " not in text.split("= for")[1].split("async_wait_group {pendings = 0}")[0]
    # the original pointer increments are gone (dead once the loads moved); the ahead ones
    # (A's tile; B's scalar base, for its runtime step: rebase-pointers) and the two slot counters
    # are carried instead
    loop = re.search(r"= for [^\n]*: ([^{]*)\{", text)
    assert loop is not None
    assert loop.group(1).split(", ") == ["tile<32x32xf32>", "tile<32x16xptr<f16>>", "ptr<f16>", "i32",
                                         "i32 "]


def test_num_stages_one_leaves_the_loop_alone() -> None:
    assert "async_load" not in print_ir(_matmul_ir(1))
    # the AMD chips pipeline through registers instead (test_software_pipeline_amd.py)
    assert backend("gfx942").info.pipelined_loads == "registers"


def test_a_transposed_operand_and_the_loops_own_num_stages() -> None:
    ck = qk_loop.compile("*fp16:16,*fp16:16,*fp32:16,i32", constants=dict(BM=64, BN=32, D=64), arch="sm_90a")
    piped = _upto_pass(ck.module, 1)  # the kernel's 1 is overridden by tl.range(num_stages=4)
    assert "async_wait_group {pendings = 2}" in print_ir(piped)
    qk_agrees(ck.module, piped, (32, 100, 160))


def qk_agrees(kernel: Operation, piped: Operation, keys: tuple[int, ...]) -> None:
    """``qk_loop`` as compiled and as pipelined give the same numbers for each key count."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((64, 64)).astype(np.float16)
    for n in keys:
        k = rng.standard_normal((max(n, 1), 64)).astype(np.float16)
        outs = []
        for module in (kernel, piped):
            o = np.zeros((64, 32), np.float32)
            run_kernel(module.funcs[0], (1, 1, 1), [q, k, o, n])
            outs.append(o)
        np.testing.assert_array_equal(outs[1], outs[0])


def test_sm90a_ptx_has_the_cp_async_ring_and_an_in_flight_wgmma() -> None:
    ck = matmul_kernel.compile(SIG, constants=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_SIZE_M=8),
                               arch="sm_90a", num_warps=4, num_stages=3)
    ptx = ck.asm["ptx"]
    body = ptx[ptx.index("$_for_head"):ptx.index("bra.uni $_for_head")]
    # 128x64 + 64x128 fp16 per stage over 128 threads: 16 copies of 16 bytes each
    assert body.count("cp.async.cg.shared.global") == 16
    assert "cp.async.wait_group 1;" in body and "wgmma.wait_group.sync.aligned 1;" in body
    assert body.count("cp.async.commit_group") == 1
    assert "ld.global" not in body and "st.shared" not in body  # no staging through registers
    tail = ptx[ptx.index("$_for_exit"):]
    assert tail.index("wgmma.wait_group.sync.aligned 0;") < tail.index("st.global")
    assert (ck.metadata.get("spill_stores") or 0) == 0


def test_range_hints_triton_accepts() -> None:
    @tlxc.jit
    def hinted(x_ptr, n):
        acc = 0.0
        for i in tl.range(0, n, flatten=True, disallow_acc_multi_buffer=True):
            acc += tl.load(x_ptr + i)
        tl.store(x_ptr, acc)

    x = np.arange(5, dtype=np.float32)
    hinted.interpret[(1,)](x, 5)
    assert x[0] == 10.0


@tlxc.jit
def desc_loop(a_ptr, b_ptr, c_ptr, K):
    """Operands from tensor descriptors (TMA through a staging buffer refilled every
    iteration), B transposed, as in Triton's persistent-matmul tutorial."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[64, K], strides=[K, 1], block_shape=[64, 64])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[64, K], strides=[K, 1], block_shape=[64, 64])
    acc = tl.zeros((64, 64), tl.float32)
    for k in range(0, K, 64):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([0, k]).T, acc)
    r = tl.arange(0, 64)
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], acc)


def test_a_staging_buffer_refilled_every_iteration_keeps_no_wgmma_in_flight() -> None:
    """Regression (Triton's tutorial 09 on the H200, wrong at 8192x8192): wgmma reads the
    TMA staging buffers in place; the next iteration's TMA load refills them, so the wgmma
    must be complete by then (``wgmma.wait_group 0`` in the loop, not 1). With
    ``num_stages=1`` the descriptor loads are not pipelined and keep that staging form; with
    more stages they become a TMA ring (test_software_pipeline_tma.py), whose slots let one
    wgmma stay in flight."""
    ptx = desc_loop.compile("*fp16:16,*fp16:16,*fp32:16,i32:16", arch="sm_90a", num_stages=1).asm["ptx"]
    assert "wgmma.mma_async" in ptx
    assert "wgmma.wait_group.sync.aligned 1;" not in ptx
    piped = desc_loop.compile("*fp16:16,*fp16:16,*fp32:16,i32:16", arch="sm_90a", num_stages=3).asm["ptx"]
    assert "wgmma.wait_group.sync.aligned 1;" in piped
