"""A GEMM for AMD's CDNA / RDNA chips that stages its tiles through LDS by hand, in the
shape of TLX's ``amd_gemm_pipelined`` tutorial.

On an AMD GPU a ``tl.load`` lands in registers (VGPRs), and a matrix instruction (MFMA on
gfx942 / gfx950, WMMA on gfx1250) wants each operand in a layout where every lane holds a
few consecutive K elements of its row or column. The rows a lane loads with a wide
16-byte global load are not the rows it needs for the MFMA, so the tile has to be
reshuffled between the lanes of a workgroup, and the place to do that is LDS (the 64 KiB
on-chip memory of a compute unit, AMD's "shared memory"). This example does the
reshuffle itself, one tile ahead of its use:

* ``tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, NUM_BUFFERS)`` reserves a ring of LDS
  buffers; ``tlx.local_view(bufs, i)`` is buffer ``i`` (``i`` may be a runtime value);
* ``tlx.local_store(view, regs)`` writes a register tile into a buffer, and
  ``tlx.local_load(view)`` reads it back in whatever layout its user (here ``tl.dot``)
  wants;
* the compiler puts an ``s_barrier`` between an LDS write and the first read of the same
  bytes by other lanes, and between the last read and the next overwrite, so the kernel
  has no barrier of its own.

**The pipeline.** With ``NUM_STAGES`` stages, a tile goes through three steps: a global
load into registers, a store into LDS, and (``NUM_STAGES - 1`` iterations later) a load
from LDS followed by the dot. Because the global load's results wait in registers until
the end of the iteration, only ``NUM_BUFFERS = NUM_STAGES - 1`` tiles need to sit in LDS
at once. Iteration ``k`` of the main loop

1. issues the global loads for tile ``k`` (they take hundreds of cycles: nothing waits for
   them until step 3),
2. reads tile ``k - NUM_BUFFERS`` out of LDS buffer ``k % NUM_BUFFERS`` and multiplies it,
3. stores tile ``k`` into that same buffer, which step 2 has just finished with.

A prologue fills the ring with the first ``NUM_BUFFERS`` tiles and an epilogue drains it.
The loop is written out by hand, so ``tl.range(..., num_stages=1)`` tells a compiler with
its own software pipeliner (Triton's) to leave it alone; tlxc has none and ignores it.

**Edges.** As in ``examples/matmul.py``, rows of ``A`` and columns of ``B`` past ``M`` /
``N`` are wrapped with ``% M`` / ``% N`` (in-bounds garbage that is never stored), and the
``K`` tail is masked with ``other=0.0`` so it adds zero. The prologue always loads
``NUM_BUFFERS`` tiles; when ``K`` has fewer tiles than that, the extra ones are fully
masked zeros, and the epilogue drains all of them, which keeps the loop bounds simple.

**Hints.** ``tl.assume(stride > 0)`` tells LLVM the strides are positive, which lets it
prove address arithmetic does not wrap and fold it into the loads' immediate offsets.

**Choosing a configuration.** The default, ``128 x 128 x 64`` tiles with 8 waves
(``num_warps=8``) and ``NUM_STAGES=2``, keeps one fp16 tile of A and one of B in LDS:
``(128*64 + 64*128) * 2`` bytes = 32 KiB. The epilogue reshuffles the fp16 tile of C
through LDS too (so that each lane stores 16 contiguous bytes), another 32 KiB after the
ring: 64 KiB in all, exactly gfx942's limit (gfx950 has 160 KiB, gfx1250 320 KiB). A
deeper ring at this tile size is therefore for gfx950 / gfx1250 only; on gfx942 use
smaller tiles with it, or the compiler refuses the kernel (``TLXC-RESOURCE-001``, with
a table of the buffers). The fp32 accumulator is ``128*128 / 512`` = 32 registers per lane
on wave64 and 64 on wave32. Compiled, the kernel uses about 100 VGPRs on gfx942 / gfx950
and 180 on gfx1250, no AGPRs, no scratch and no spills
(``tests/codegen/test_amd_examples.py`` checks it).

The compiled signature declares ``M``, ``N``, ``K`` and the row strides multiples of 16
(``i32:16``) and the column strides 1: that is what lets the compiler prove 8 consecutive
fp16 elements are contiguous, aligned and equally masked, and issue 16-byte loads
(``global_load_dwordx4``). Without it, it has to load element by element.

Run ``python examples/amd_gemm_pipelined.py`` to multiply two matrices on the CPU
interpreter and see the register and LDS figures of the compiled kernel on each chip.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest

# the configuration the tests compile for gfx942 / gfx950 / gfx1250
DEFAULT_CONFIG = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_SIZE_M=4, NUM_STAGES=2)
DEFAULT_NUM_WARPS = 8
SIGNATURE = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1"


@tlxc.jit
def gemm_lds_pipelined(a_ptr, b_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_SIZE_M: tl.constexpr, NUM_STAGES: tl.constexpr):
    # -- which tile of C this program computes (grouped order, as in examples/matmul.py) --
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    tl.assume(stride_am > 0)
    tl.assume(stride_ak > 0)
    tl.assume(stride_bk > 0)
    tl.assume(stride_bn > 0)
    tl.assume(stride_cm > 0)
    tl.assume(stride_cn > 0)

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    k_tiles = tl.cdiv(K, BLOCK_K)

    # the global load of a tile waits in registers for one iteration, so LDS holds
    # NUM_STAGES - 1 tiles, not NUM_STAGES
    NUM_BUFFERS: tl.constexpr = NUM_STAGES - 1
    bufs_a = tlx.local_alloc((BLOCK_M, BLOCK_K), tlx.dtype_of(a_ptr), NUM_BUFFERS)
    bufs_b = tlx.local_alloc((BLOCK_K, BLOCK_N), tlx.dtype_of(b_ptr), NUM_BUFFERS)

    # -- prologue: tiles 0 .. NUM_BUFFERS-1 into buffers 0 .. NUM_BUFFERS-1 --
    for i in tl.range(0, NUM_BUFFERS, loop_unroll_factor=NUM_BUFFERS):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - i * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - i * BLOCK_K, other=0.0)
        tlx.local_store(tlx.local_view(bufs_a, i), a)
        tlx.local_store(tlx.local_view(bufs_b, i), b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # -- main loop: load tile k, multiply tile k - NUM_BUFFERS, store tile k --
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(NUM_BUFFERS, k_tiles, num_stages=1):
        a_next = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b_next = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        # tile k - NUM_BUFFERS lives in buffer (k - NUM_BUFFERS) % NUM_BUFFERS = k % NUM_BUFFERS
        slot = k % NUM_BUFFERS
        a = tlx.local_load(tlx.local_view(bufs_a, slot))
        b = tlx.local_load(tlx.local_view(bufs_b, slot))
        acc = tl.dot(a, b, acc)
        # the same buffer, now free (the compiler puts a barrier between the reads above
        # and these writes)
        tlx.local_store(tlx.local_view(bufs_a, slot), a_next)
        tlx.local_store(tlx.local_view(bufs_b, slot), b_next)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # -- epilogue: the last NUM_BUFFERS tiles loaded (all of them zero past K) --
    loaded = tl.maximum(k_tiles, NUM_BUFFERS)
    for k in tl.range(loaded - NUM_BUFFERS, loaded, loop_unroll_factor=NUM_BUFFERS):
        slot = k % NUM_BUFFERS
        a = tlx.local_load(tlx.local_view(bufs_a, slot))
        b = tlx.local_load(tlx.local_view(bufs_b, slot))
        acc = tl.dot(a, b, acc)

    # -- store the tile, masked at the edges of C --
    c = acc.to(tlx.dtype_of(c_ptr))
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: np.ndarray, b: np.ndarray, block: tuple[int, int, int] = (32, 32, 16), stages: int = 2,
           group_size_m: int = 4) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype (fp16 or bf16), accumulated in fp32, on the interpreter.
    The strides are passed, so transposed views work unchanged."""
    (M, K), (K2, N) = a.shape, b.shape
    assert K == K2 and a.dtype == b.dtype
    c = np.empty((M, N), dtype=a.dtype)
    bm, bn, bk = block
    s = a.itemsize
    grid = (tlxc.cdiv(M, bm) * tlxc.cdiv(N, bn),)
    gemm_lds_pipelined.interpret[grid](
        a, b, c, M, N, K, a.strides[0] // s, a.strides[1] // s, b.strides[0] // s, b.strides[1] // s,
        c.strides[0] // s, c.strides[1] // s,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=group_size_m, NUM_STAGES=stages)
    return c


def compile_for(arch: str, signature: str = SIGNATURE, num_warps: int = DEFAULT_NUM_WARPS, **config):
    """The kernel compiled ahead of time for ``arch`` (``gfx942``, ``gfx950`` or ``gfx1250``)."""
    return gemm_lds_pipelined.compile(signature, {**DEFAULT_CONFIG, **config}, arch=arch, num_warps=num_warps)


# -- tests ---------------------------------------------------------------------------------


def _inputs(M: int, N: int, K: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    return rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)


def _check(c: np.ndarray, a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> None:
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize("M, N, K, stages", [
    (64, 64, 64, 2),   # whole tiles, several K iterations
    (50, 70, 45, 2),   # ragged M, N and K
    (33, 17, 100, 3),  # two buffers in the ring, ragged everywhere
    (40, 40, 16, 4),   # fewer K tiles than buffers: the prologue loads zero tiles
])
def test_fp16(M: int, N: int, K: int, stages: int) -> None:
    a, b = _inputs(M, N, K, np.float16)
    _check(matmul(a, b, stages=stages), a, b, rtol=1e-3, atol=1e-2)


def test_bf16() -> None:
    import ml_dtypes

    a, b = _inputs(48, 40, 72, ml_dtypes.bfloat16)
    # bf16 keeps 8 mantissa bits: the one rounding of C dominates
    _check(matmul(a, b, stages=3), a, b, rtol=1e-2, atol=1e-1)


def test_transposed_operands_through_strides() -> None:
    a, b = _inputs(20, 36, 48, np.float16)
    c = matmul(np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T, block=(16, 16, 16))
    _check(c, a, b, rtol=1e-3, atol=1e-2)


def test_stages_and_grouping_do_not_change_the_result() -> None:
    """Every tile sees the same products in the same K order, whatever the ring depth and
    the tile order: the results are bit-identical."""
    a, b = _inputs(70, 60, 80, np.float16)
    runs = [matmul(a, b, stages=s, group_size_m=g) for s, g in ((2, 1), (3, 2), (4, 8))]
    for r in runs[1:]:
        np.testing.assert_array_equal(r, runs[0])


if __name__ == "__main__":
    a, b = _inputs(96, 80, 112, np.float16)
    c = matmul(a, b)
    err = np.max(np.abs(c.astype(np.float64) - a.astype(np.float64) @ b.astype(np.float64)))
    print(f"C = A @ B, (96x112) @ (112x80) fp16, 32x32x16 tiles, 2 stages: max |error| = {err:.3g}")
    cfg = ", ".join(f"{k}={v}" for k, v in DEFAULT_CONFIG.items())
    print(f"compiled with {cfg}, num_warps={DEFAULT_NUM_WARPS}:")
    for arch in ("gfx942", "gfx950", "gfx1250"):
        md = compile_for(arch).metadata
        print(f"  {arch}: {md['vgprs']} VGPRs, {md.get('agprs', 0)} AGPRs, {md['shared']} B LDS, "
              f"{md['scratch']} B scratch")
