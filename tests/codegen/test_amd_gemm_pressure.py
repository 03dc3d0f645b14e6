"""Registers and LDS of LDS-pipelined GEMMs on AMD (gfx942, gfx950, gfx1250).

The kernels below have the shape of the public TLX AMD GEMMs (``tl.load`` -> ``local_store``
into a ring of LDS buffers -> ``local_load`` -> ``tl.dot``). What is checked:

* a ``local_load`` that feeds a dot reads its buffer straight into the MFMA / WMMA operand
  layout (``layouts.dot_operand``): the kernel's LDS is its own buffers, with no second
  staging area for the dot (before: the operands went through LDS twice, and the
  128x128x64 two-buffer ring needed 98304 bytes on gfx942, which has 65536);
* those reads are deferred to the dot (``lower_buffers.DeferredLoad``) and issued one
  instruction's fragments at a time, next to the MFMAs, so not every fragment is live
  at once -- and never moved past a write to the buffer;
* the epilogue's accumulator-to-store conversion reuses the LDS of the buffers the main
  loop is done with (``Emitter.dead_window``);
* zero scratch, the MFMA / WMMA count of the plan, and LDS within the expected bytes.
"""

from __future__ import annotations

import re

import pytest

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.codegen.amdgpu.dot_plan import choose
from tlxc.codegen.amdgpu.isa import TARGETS
from tlxc.codegen.amdgpu.lower_buffers import lds_buffer_layout
from tlxc.ir.layout.shared_access import check_access, plan_shared_access

SIG = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32"
# the unit strides specialized as a launch does (contiguous rows: vectorized global accesses)
SIG_UNIT = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1"


@tlxc.jit
def ring_gemm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_BUFFERS: tl.constexpr):
    """amd_gemm_gfx942's shape: a ring of NUM_BUFFERS LDS tiles, refilled after each dot."""
    tl.assume(stride_am > 0)
    tl.assume(stride_ak > 0)
    tl.assume(stride_bk > 0)
    tl.assume(stride_bn > 0)
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    K_ITERS = tl.cdiv(K, BLOCK_K)
    smem_a = tlx.local_alloc((BLOCK_M, BLOCK_K), tlx.dtype_of(a_ptr), NUM_BUFFERS)
    smem_b = tlx.local_alloc((BLOCK_K, BLOCK_N), tlx.dtype_of(b_ptr), NUM_BUFFERS)
    for i in tl.range(0, NUM_BUFFERS, loop_unroll_factor=NUM_BUFFERS):
        tlx.local_store(tlx.local_view(smem_a, i), tl.load(a_ptrs, mask=offs_k[None, :] < K - i * BLOCK_K))
        tlx.local_store(tlx.local_view(smem_b, i), tl.load(b_ptrs, mask=offs_k[:, None] < K - i * BLOCK_K))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(NUM_BUFFERS, K_ITERS, num_stages=1):
        buf = k % NUM_BUFFERS
        a_reg = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K)
        b_reg = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K)
        a_tile = tlx.local_load(tlx.local_view(smem_a, buf))
        b_tile = tlx.local_load(tlx.local_view(smem_b, buf))
        acc = tl.dot(a_tile, b_tile, acc)
        tlx.local_store(tlx.local_view(smem_a, buf), a_reg)
        tlx.local_store(tlx.local_view(smem_b, buf), b_reg)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    for i in tl.range(0, NUM_BUFFERS, loop_unroll_factor=NUM_BUFFERS):
        buf = (K_ITERS + i) % NUM_BUFFERS
        acc = tl.dot(tlx.local_load(tlx.local_view(smem_a, buf)), tlx.local_load(tlx.local_view(smem_b, buf)), acc)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@tlxc.jit
def overwrite_before_dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The buffer is rewritten between the local_load and the dot: the dot must see the
    values read before the write (the read may not be deferred past it)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    sa = tlx.local_alloc((BM, BK), tl.float16, 1)
    sb = tlx.local_alloc((BK, BN), tl.float16, 1)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    tlx.local_store(tlx.local_view(sa, 0), a)
    tlx.local_store(tlx.local_view(sb, 0), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    a_tile = tlx.local_load(tlx.local_view(sa, 0))
    b_tile = tlx.local_load(tlx.local_view(sb, 0))
    tlx.local_store(tlx.local_view(sa, 0), a * 2)
    acc = tl.dot(a_tile, b_tile)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def compile_ring(arch: str, bm: int, bn: int, bk: int, nb: int, warps: int, sig: str = SIG):
    k = ring_gemm.compile(sig, constants={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "NUM_BUFFERS": nb},
                          arch=arch, num_warps=warps)
    return k, k.asm["amdgcn"]


def matrix_instructions(asm: str) -> int:
    return len(re.findall(r"^\s*v_(mfma|wmma)\w*", asm, re.M))


def per_dot(arch: str, bm: int, bn: int, bk: int, warps: int) -> int:
    """MFMAs / WMMAs one wave issues for one bm x bn x bk dot (fp16, fp32 accumulator)."""
    plan = choose(arch, "f16", "f32", "ieee", (bm, bk), (bk, bn), warps)
    assert plan is not None
    i = plan.instr
    return bm * bn * bk // (i.m * i.n * i.k) // warps


# (arch, BLOCK_M, BLOCK_N, BLOCK_K, NUM_BUFFERS, num_warps): trial configurations that needed
# more LDS than the chip has (the dot staged its operands a second time) or spilled
RING = [
    ("gfx942", 128, 128, 64, 2, 8),   # was: needs 98304 bytes, gfx942 allows 65536
    ("gfx942", 256, 128, 32, 2, 8),   # was: needs 73728 bytes
    ("gfx950", 128, 128, 64, 2, 8),
    ("gfx1250", 128, 128, 64, 2, 8),
    ("gfx942", 64, 64, 64, 1, 4),
    ("gfx950", 64, 64, 64, 1, 4),
    ("gfx1250", 64, 64, 64, 1, 4),
]


@pytest.mark.parametrize("arch,bm,bn,bk,nb,warps", RING)
def test_ring_gemm_fits_without_scratch(arch: str, bm: int, bn: int, bk: int, nb: int, warps: int) -> None:
    k, asm = compile_ring(arch, bm, bn, bk, nb, warps)
    md = k.metadata
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0, md
    # the LDS is the user's ring and nothing else: no staging for the dots, and the
    # epilogue's conversion reuses the ring once the loops are done with it
    buffers = nb * (bm * bk + bk * bn) * 2
    assert md["lds"] <= max(buffers, TARGETS[arch].lds_granule_bytes), (md["lds"], buffers)
    # prologue: none; main loop: one dot; epilogue: NUM_BUFFERS dots (unrolled)
    assert matrix_instructions(asm) == (1 + nb) * per_dot(arch, bm, bn, bk, warps)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_large_tile_with_unit_strides(arch: str) -> None:
    """256x256x64 on 8 waves: a 128-register accumulator per lane (gfx942 / gfx950), with
    contiguous rows (as a launch specializes unit strides) fits the 256 registers of a
    wave without scratch."""
    k, asm = compile_ring(arch, 256, 256, 32, 1, 8, SIG_UNIT)
    assert k.metadata["scratch"] == 0 and k.metadata["vgpr_spills"] == 0, k.metadata
    assert matrix_instructions(asm) == 2 * per_dot(arch, 256, 256, 32, 8)


def test_operand_reads_sit_next_to_their_mfmas() -> None:
    """The dot's fragment reads are issued K step by K step between the MFMAs (LLVM IR of
    the main loop), not all before the first one."""
    k, _ = compile_ring("gfx950", 128, 128, 64, 1, 8, SIG_UNIT)
    llir = k.asm["llir"]
    lines = llir.splitlines()
    mfma = [i for i, ln in enumerate(lines) if "llvm.amdgcn.mfma" in ln and "call" in ln]
    first, last = mfma[0], mfma[len(mfma) // 2 - 1]  # the main loop's dot comes first
    reads = [i for i, ln in enumerate(lines) if re.search(r"= load <\d+ x half>, ptr addrspace\(3\)", ln)]
    assert any(first < i < last for i in reads), "no LDS read between the MFMAs of one dot"


def test_read_is_not_deferred_past_a_write() -> None:
    k = overwrite_before_dot.compile("*fp16,*fp16,*fp32", constants={"BM": 32, "BN": 32, "BK": 32},
                                     arch="gfx950", num_warps=4)
    lines = k.asm["llir"].splitlines()
    stores = [i for i, ln in enumerate(lines) if re.match(r"\s*store .*ptr addrspace\(3\)", ln)]
    mfma = next(i for i, ln in enumerate(lines) if "llvm.amdgcn.mfma" in ln)
    # the last LDS store before the MFMAs is the rewrite of A's buffer: every operand read
    # comes before it
    rewrite = [i for i in stores if i < mfma][-1]
    reads = [i for i, ln in enumerate(lines) if re.search(r"= load .*ptr addrspace\(3\)", ln)]
    assert reads and all(i < rewrite for i in reads if i < mfma), "an operand read moved past the buffer's rewrite"
    assert k.metadata["scratch"] == 0


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
@pytest.mark.parametrize("shape", [(128, 64, 128), (256, 32, 128)])
def test_operand_layout_reads_the_default_buffer_exactly(arch: str, shape: tuple[int, int, int]) -> None:
    """Every register of the MFMA / WMMA operand layouts, read from the default AMD LDS
    buffer layout, lands on the element it holds (all threads, brute force); A (K
    contiguous in its buffer) is read K_WIDTH elements at a time."""
    m, k, n = shape
    target = TARGETS[arch]
    plan = choose(arch, "f16", "f32", "ieee", (m, k), (k, n), 8)
    assert plan is not None
    for i, buf_shape in ((0, (m, k)), (1, (k, n))):
        dist = plan.operand(i)
        shared = lds_buffer_layout(target, buf_shape, 16)
        access = plan_shared_access(dist, shared, elem_bits=16, max_vector_bytes=16, warp_size=target.wave_size)
        check_access(dist, shared, access, 8 * target.wave_size)
        if i == 0:
            assert access.vec == min(plan.k_width, 8), (arch, access.vec, plan.k_width)
