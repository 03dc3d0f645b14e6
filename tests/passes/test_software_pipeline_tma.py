"""``software-pipeline``'s TMA form (tlxc/ir/passes/tma_ring.py): descriptor loads feeding
``tl.dot`` in a loop issued ``num_stages - 1`` iterations ahead into a ring of buffers with
one mbarrier per slot.

The key check runs the NVIDIA pipeline up to and including the pass and interprets that
IR (the interpreter simulates the TMA copies, the mbarriers' phases and reports a read of
a copy that has not landed): its numbers must be those of the kernel as written for loops
of 0, 1, few and many iterations, ragged K (zero-filled boxes), a transposed operand and
a persistent outer loop (the ring and barriers made again for each tile). Then the IR's
shape and the sm_90a PTX: TMA in the loop, a parity wait per slot, a wgmma left in flight,
ptxas accepting it for sm_90a and sm_100a without serializing wgmma.
"""

from __future__ import annotations

import re

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

pytestmark = pytest.mark.interpreter_only


@tlxc.jit
def desc_matmul(a_ptr, b_ptr, c_ptr, M, N, K, K_END, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                B_T: tl.constexpr):
    """C = A @ B with A [M, K] and B [K, N] (or B^T given as [N, K] with ``B_T``) read
    through device-side tensor descriptors, as tutorial 09's descriptor kernels do; the K
    loop stops at ``K_END`` (a descriptor cannot have an empty dimension)."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    if B_T:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K_END, BK):
        a = a_desc.load([pid_m * BM, k])
        if B_T:
            b = b_desc.load([pid_n * BN, k]).T
        else:
            b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=mask)


@tlxc.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, PROGRAMS, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    """Tutorial 09's persistent shape: each program walks tiles, a K loop in each."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for tile_id in range(tl.program_id(0), tiles, PROGRAMS):
        pid_m, pid_n = tile_id // tiles_n, tile_id % tiles_n
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([pid_n * BN, k]).T, acc)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=mask)


SIG = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32"


def _upto_pass(module: Operation, stages: int, arch: str = "sm_90a") -> Operation:
    be = backend(arch)
    names = [n for n, _ in be.lowering]
    passes = be.lowering[:names.index("software-pipeline") + 1]
    return run_pipeline(clone(module), PassOptions(target=be.info, num_stages=stages), passes, verify_each=True)


def _compile(b_t: bool, block: tuple[int, int, int] = (32, 32, 16), **options):
    bm, bn, bk = block
    return desc_matmul.compile(SIG, constants=dict(BM=bm, BN=bn, BK=bk, B_T=b_t), arch="sm_90a", **options)


def _operands(m: int, n: int, k: int, b_t: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k) if b_t else (k, n)).astype(np.float16)
    return a, b


def _run(module: Operation, m: int, n: int, k: int, b_t: bool, k_end: int) -> np.ndarray:
    a, b = _operands(m, n, k, b_t)
    c = np.full((m, n), 7, np.float16)
    grid = (-(-m // 32), -(-n // 32), 1)
    run_kernel(module.funcs[0], grid, [a, b, c, m, n, k, k_end])
    return c


@pytest.mark.parametrize("b_t", [False, True], ids=["b", "b_t"])
@pytest.mark.parametrize("stages", [2, 3, 4])
# K: 0 iterations, 1, fewer than the stages, ragged (zero-filled boxes), many
@pytest.mark.parametrize("mnk", [(32, 32, 16, 0), (64, 32, 16, 16), (32, 64, 40, 40), (48, 40, 24, 24),
                                 (64, 64, 200, 200)])
def test_pipelined_ir_computes_what_the_kernel_does(stages: int, mnk: tuple[int, int, int, int], b_t: bool) -> None:
    ck = _compile(b_t)
    want = _run(ck.module, *mnk[:3], b_t, mnk[3])
    piped = _upto_pass(ck.module, stages)
    assert "tma_load" in print_ir(piped)
    got = _run(piped, *mnk[:3], b_t, mnk[3])
    np.testing.assert_array_equal(got, want)
    if mnk[3]:
        a, b = _operands(*mnk[:3], b_t)
        ref = a.astype(np.float32) @ (b.T if b_t else b).astype(np.float32)
        np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("tiles_per_program", [1, 3])
def test_a_persistent_loop_makes_the_ring_again_for_each_tile(tiles_per_program: int) -> None:
    m, n, k = 64, 32 * 3, 72  # 6 tiles of 32x32; K = 4.5 blocks of 16
    ck = persistent_matmul.compile(SIG, constants=dict(BM=32, BN=32, BK=16), arch="sm_90a")
    piped = _upto_pass(ck.module, 3)
    programs = 6 // tiles_per_program
    outs = []
    for module in (ck.module, piped):
        a, b = _operands(m, n, k, True)
        c = np.zeros((m, n), np.float16)
        run_kernel(module.funcs[0], (programs, 1, 1), [a, b, c, m, n, k, programs])
        outs.append(c)
    np.testing.assert_array_equal(outs[1], outs[0])
    assert outs[0].any()


def test_the_loop_gets_a_ring_a_barrier_per_slot_and_a_carried_phase() -> None:
    text = print_ir(_upto_pass(_compile(True).module, 3))
    assert text.count("local_alloc : memdesc<32x16xf16, smem, num=3>") == 2  # A and B^T: [32, 16] blocks
    assert text.count("barrier_alloc {count = 1} : mbarrier<3>") == 1
    # prologue: iterations 0 and 1, one expect each for both blocks (2 * 32*16*2 bytes);
    # the loop: iteration i + 2
    assert text.count("barrier_expect") == 3 and text.count("{bytes = 2048}") == 3
    assert text.count("tma_load") == 6 and len(re.findall(r"tma_load [^\n]*pred=", text)) == 6
    assert "descriptor_load" not in text
    loop = text[text.index("= for"):]
    assert loop.index("barrier_wait") < loop.index("local_load") < loop.index(" dot ") < loop.index("tma_load")
    # carried: the accumulator, the read slot, its phase and the write slot
    head = re.search(r"= for [^\n]*: ([^{]*)\{", text)
    assert head is not None
    assert [t.split("<")[0] for t in head.group(1).split(", ")] == ["tile", "i32", "i32", "i32 "]
    assert re.search(r"= xor %\w+, %\w+ : i32", loop)  # the phase flips as the ring wraps


def test_num_stages_one_keeps_the_staging_form() -> None:
    text = print_ir(_upto_pass(_compile(False).module, 1))
    assert "descriptor_load" in text and "tma_load" not in text


def _loop_of(ptx: str) -> str:
    return ptx[ptx.index("$_for_head"):ptx.index("bra.uni $_for_head")]


@pytest.fixture(scope="module")
def big_ptx() -> str:
    return _compile(False, (128, 128, 64), num_warps=4, num_stages=3).asm["ptx"]


def test_sm90a_loop_issues_tma_ahead_and_keeps_a_wgmma_in_flight(big_ptx: str) -> None:
    body = _loop_of(big_ptx)
    # A's 128x64 block fits one TMA message; B's 64x128 is two 64-column boxes (128-byte swizzle)
    assert body.count("cp.async.bulk.tensor.2d") == 3
    assert body.count("mbarrier.arrive.expect_tx") == 1 and "expect_tx.shared::cta.b64 _, [%r" in body
    assert body.count("mbarrier.try_wait.parity") == 1
    assert "wgmma.wait_group.sync.aligned 1;" in body and "wgmma.wait_group.sync.aligned 0;" not in body
    # the copy into the slot that the previous wgmma read starts after that wgmma retired
    # (wait 1) and after every thread is past it (the CTA barrier), with no proxy fence
    assert body.index("wgmma.wait_group.sync.aligned 1;") < body.index("bar.sync 0;") \
        < body.index("mbarrier.arrive.expect_tx") < body.index("cp.async.bulk.tensor")
    assert "fence.proxy.async" not in body
    assert "ld.global" not in body and "ld.shared" not in body and "st.shared" not in body
    # the barriers are initialized once, before the loop
    head = big_ptx[:big_ptx.index("$_for_head")]
    assert head.count("mbarrier.init.shared") == 3 and "mbarrier.init" not in big_ptx[big_ptx.index("$_for_head"):]
    tail = big_ptx[big_ptx.index("$_for_exit"):]
    assert tail.index("wgmma.wait_group.sync.aligned 0;") < tail.index("st.global")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptxas_accepts_it_without_serializing(arch: str) -> None:
    from tlxc.codegen.nvptx.toolchain import find_tool, ptxas

    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    ck = _compile(True, (128, 128, 64), num_warps=4, num_stages=4)
    ptx = ck.asm["ptx"] if arch == "sm_90a" else desc_matmul.compile(
        SIG, constants=dict(BM=128, BN=128, BK=64, B_T=True), arch=arch, num_warps=4, num_stages=4).asm["ptx"]
    assert "cp.async.bulk.tensor" in _loop_of(ptx)
    log = ptxas(ptx, arch).log
    assert "serialized" not in log and "Performance Loss" not in log, log


@tlxc.jit
def two_loops(a_ptr, b_ptr, c_ptr, M, N, K, K_END, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
              TWICE: tl.constexpr):
    """``desc_matmul``'s loop, and (``TWICE``) the same loop again after it, as causal
    attention runs one loop left of the diagonal and one on it."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K_END, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([pid_n * BN, k]).T, acc)
    if TWICE:
        for k in tl.range(0, K_END, BK):
            acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([pid_n * BN, k]).T, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def test_the_rings_of_two_loops_share_their_bytes() -> None:
    # each ring's TMA copies are retired by the waits on its own mbarriers, all in its
    # own loop: the second loop's rings reuse the first one's bytes (before, a TMA copy
    # lasted until the kernel's last barrier_wait of any barrier -- the second loop's)
    shared = []
    for twice in (False, True):
        ck = two_loops.compile(SIG, constants=dict(BM=128, BN=128, BK=64, TWICE=twice), arch="sm_90a",
                               num_warps=4, num_stages=3)
        ck.asm["ptx"]
        shared.append(ck.metadata["shared"])
    assert shared[0] >= 3 * (128 * 64 * 2) * 2  # two rings of three 16 KB slots
    assert 0 <= shared[1] - shared[0] <= 64  # only the second loop's mbarriers (live for the whole kernel)
