"""A GEMM whose MFMA instructions are laid out by hand, with TLX's AMD scheduling
operations, for CDNA3 (gfx942, MI300) and CDNA4 (gfx950, MI350).

``tl.dot(a, b, acc)`` leaves everything about the matrix instructions to the compiler:
which MFMA, how the output tile is split into native fragments, and in which order the
fragments are updated. TLX's AMD operations let a kernel say these things itself:

* ``tlx.amd_mfma_layout(version, instr_shape, transposed, warps_per_cta)`` names the
  register layout of an MFMA result: ``version`` 3 is CDNA3's MFMA, 4 is CDNA4's;
  ``instr_shape`` ``[32, 32, K]`` is one ``v_mfma_f32_32x32xK`` instruction; ``transposed``
  gives each lane consecutive N values of a row (so the epilogue stores vectors);
  ``warps_per_cta`` tiles M and N over the waves. ``tlx.dot_operand_layout(i, mma,
  k_width)`` is the matching layout of operand A (``i = 0``) or B (``i = 1``), each lane
  holding ``k_width`` consecutive K values. ``tlx.require_layout(x, layout)`` puts a
  loaded tile into one, and ``tlx.zeros(shape, dtype, layout=mma)`` makes an accumulator
  directly in the MFMA layout.
* ``tlx.amd_scheduled_mfma(a, b, acc, accumulator_role="transient", initialize=...)`` is
  ``acc + a @ b`` (or ``a @ b`` with ``initialize=True``) as native MFMA intrinsics, one
  dependency chain per output fragment, issued **K-major, N-major, M-minor**::

      for k in native K steps:
          for n in N fragments:
              for m in M fragments:
                  acc[m, n] = mfma(a[m, k], b[k, n], acc[m, n])

  Two MFMAs in a row never update the same accumulator, so each one's latency is hidden
  behind the others (a 32x32 MFMA takes 16 passes; a chain that waits on itself would
  stall on every step).
* ``tlx.extract_slice(x, shape, offsets)`` takes a sub-tile out of the registers that hold
  it, moving no data between lanes (the offsets must fall on whole fragments: the
  compiler refuses a slice that would need a shuffle).
* ``tlx.amd_sched_barrier(0)`` keeps LLVM's scheduler from moving any instruction across
  that point (it is neither a memory fence nor a workgroup barrier).
* ``tlx.amd_mfma_commit((acc0, acc1))`` is the point where the results are ready to be
  read by ordinary code; each chain must reach it unforked, and the code after it uses
  the values it returns.

**The kernel.** Each program computes a ``BLOCK_M x BLOCK_N`` tile of ``C`` as two
independent output regions, the left and right halves of the N range, each with its own
fp32 accumulator. Per ``BLOCK_K`` step it loads a tile of ``A`` and of ``B``, cuts ``B``
into its two halves, and cuts both operands into *bands* of one native MFMA K step
(``INSTR_K``); then, band by band, it issues the left half's chains, a scheduling
barrier, and the right half's chains. The two scheduled regions are where a tuned kernel
would slot independent work (the next tile's loads) between them.

**``initialize`` on the first band only.** ``initialize=True`` *discards* the accumulator
passed in, so it is right for exactly one band of the whole reduction: the first band of
the first ``K`` step. The kernel peels that step off the runtime loop (one call of the
``mma_step`` helper with ``FIRST=True``) so that the flag stays a compile-time constant;
every later band accumulates.

**One kernel, two chips.** CDNA3's bf16 / f16 MFMA takes ``K = 8`` per instruction
(``v_mfma_f32_32x32x8_bf16``, two K values per lane, ``k_width = 4``); CDNA4's takes
``K = 16`` (``v_mfma_f32_32x32x16_bf16``, ``k_width = 8``). The layout version and
``INSTR_K`` are constexpr parameters, chosen per chip by ``mfma_config``; the scheduled
operation refuses a shape the chip lacks (``TLXC-TLX-007``), and gfx1250 (RDNA, WMMA,
no MFMA) refuses it altogether (``TLXC-TLX-006``).

**Resources.** The default ``128 x 256 x 32`` tile on 4 waves holds ``128*256 / 256`` =
128 fp32 accumulator registers per lane. The chains are transient, so LLVM keeps them in
VGPRs and carries them around the K loop in place, without a register copy (216 VGPRs in
all on both chips, no AGPRs), with no scratch and no spills. The fp32 epilogue goes
through LDS (64 KiB, half a tile at a time).

**Edges.** Rows of ``A`` and columns of ``B`` past ``M`` / ``N`` are wrapped with ``% M``
/ ``% N`` and the ``K`` tail is loaded as zeros, as in ``examples/matmul.py``.

The interpreter runs the scheduling operations as what they compute (``acc + a @ b``,
identities for the barrier and the commit), so the tests below check the numbers there;
``tests/codegen/test_amd_examples.py`` checks the instruction order in the gfx950 ISA.

Run ``python examples/amd_scheduled_mfma_gemm.py`` to multiply two bf16 matrices on the
interpreter and print the MFMA sequence of the compiled kernel.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.optional_pytest import pytest

# The scheduling operations are AMD's: under TLXC_TEST_ON_GPU=1 (an NVIDIA GPU) these tests
# stay in the interpreter
pytestmark = pytest.mark.interpreter_only

DEFAULT_CONFIG = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=32)
NUM_WARPS = 4  # the layout's warps_per_cta is [2, 2]
SIGNATURE = "*bf16:16,*bf16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1"


def mfma_config(arch: str) -> dict[str, int]:
    """The MFMA version and native K step of ``arch``'s bf16 / f16 32x32 instruction."""
    return {"gfx942": dict(MFMA_VERSION=3, INSTR_K=8), "gfx950": dict(MFMA_VERSION=4, INSTR_K=16)}[arch]


@tlxc.jit
def mma_step(a, b, acc_left, acc_right, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             INSTR_K: tl.constexpr, FIRST: tl.constexpr):
    """acc_left += a @ b[:, :BLOCK_N/2] and acc_right += a @ b[:, BLOCK_N/2:], one native K
    band at a time; with FIRST, the first band initializes both accumulators."""
    HALF: tl.constexpr = BLOCK_N // 2
    b_left = tlx.extract_slice(b, [BLOCK_K, HALF], [0, 0])
    b_right = tlx.extract_slice(b, [BLOCK_K, HALF], [0, HALF])
    for band in tl.static_range(BLOCK_K // INSTR_K):
        a_band = tlx.extract_slice(a, [BLOCK_M, INSTR_K], [0, band * INSTR_K])
        bl_band = tlx.extract_slice(b_left, [INSTR_K, HALF], [band * INSTR_K, 0])
        br_band = tlx.extract_slice(b_right, [INSTR_K, HALF], [band * INSTR_K, 0])
        init: tl.constexpr = FIRST and band == 0
        acc_left = tlx.amd_scheduled_mfma(a_band, bl_band, acc_left, accumulator_role="transient",
                                          initialize=init)
        tlx.amd_sched_barrier(0)
        acc_right = tlx.amd_scheduled_mfma(a_band, br_band, acc_right, accumulator_role="transient",
                                           initialize=init)
        tlx.amd_sched_barrier(0)
    return acc_left, acc_right


@tlxc.jit
def scheduled_mfma_gemm(a_ptr, b_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        MFMA_VERSION: tl.constexpr, INSTR_K: tl.constexpr):
    mma: tl.constexpr = tlx.amd_mfma_layout(version=MFMA_VERSION, instr_shape=[32, 32, INSTR_K],
                                            transposed=True, warps_per_cta=[2, 2])
    # one MFMA reads INSTR_K // 2 consecutive K values per lane (two groups of lanes split K)
    dot_a: tl.constexpr = tlx.dot_operand_layout(0, mma, k_width=INSTR_K // 2)
    dot_b: tl.constexpr = tlx.dot_operand_layout(1, mma, k_width=INSTR_K // 2)
    HALF: tl.constexpr = BLOCK_N // 2

    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    # -- the first K step, peeled: its first band initializes the accumulators --
    a = tlx.require_layout(tl.load(a_ptrs, mask=offs_k[None, :] < K, other=0.0), dot_a)
    b = tlx.require_layout(tl.load(b_ptrs, mask=offs_k[:, None] < K, other=0.0), dot_b)
    acc_left = tlx.zeros((BLOCK_M, HALF), tl.float32, layout=mma)
    acc_right = tlx.zeros((BLOCK_M, HALF), tl.float32, layout=mma)
    acc_left, acc_right = mma_step(a, b, acc_left, acc_right, BLOCK_M, BLOCK_N, BLOCK_K, INSTR_K, True)

    # -- the other K steps accumulate --
    for k in range(1, tl.cdiv(K, BLOCK_K)):
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        a = tlx.require_layout(tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0), dot_a)
        b = tlx.require_layout(tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0), dot_b)
        acc_left, acc_right = mma_step(a, b, acc_left, acc_right, BLOCK_M, BLOCK_N, BLOCK_K, INSTR_K, False)

    # -- both regions ready at one boundary, then stored (each half on its own) --
    acc_left, acc_right = tlx.amd_mfma_commit((acc_left, acc_right))
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, HALF)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    in_m = offs_cm[:, None] < M
    tl.store(c_ptrs, acc_left, mask=in_m & (offs_cn[None, :] < N))
    tl.store(c_ptrs + HALF * stride_cn, acc_right, mask=in_m & (offs_cn[None, :] + HALF < N))


def matmul(a: np.ndarray, b: np.ndarray, block: tuple[int, int, int] = (64, 128, 32),
           arch: str = "gfx950") -> np.ndarray:
    """``a @ b`` in fp32 for bf16 or fp16 ``a`` and ``b``, on the interpreter, with the MFMA
    shape of ``arch``."""
    (M, K), (K2, N) = a.shape, b.shape
    assert K == K2 and a.dtype == b.dtype
    c = np.empty((M, N), dtype=np.float32)
    bm, bn, bk = block
    s = a.itemsize
    scheduled_mfma_gemm.interpret[(tlxc.cdiv(M, bm), tlxc.cdiv(N, bn))](
        a, b, c, M, N, K, a.strides[0] // s, a.strides[1] // s, b.strides[0] // s, b.strides[1] // s,
        c.strides[0] // 4, c.strides[1] // 4, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, **mfma_config(arch))
    return c


def compile_for(arch: str, signature: str = SIGNATURE, **config):
    """The kernel compiled ahead of time for ``arch`` (``gfx942`` or ``gfx950``)."""
    constants = {**DEFAULT_CONFIG, **mfma_config(arch), **config}
    return scheduled_mfma_gemm.compile(signature, constants, arch=arch, num_warps=NUM_WARPS)


# -- tests ---------------------------------------------------------------------------------


def _inputs(M: int, N: int, K: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    return rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)


def _exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("M, N, K", [(64, 128, 64), (70, 150, 40)])
def test_bf16(M: int, N: int, K: int, arch: str) -> None:
    import ml_dtypes

    a, b = _inputs(M, N, K, ml_dtypes.bfloat16)
    # products of bf16 values are exact in fp32; only the fp32 sums round
    np.testing.assert_allclose(matmul(a, b, arch=arch), _exact(a, b), rtol=1e-5, atol=1e-4)


def test_fp16_ragged() -> None:
    a, b = _inputs(33, 100, 20, np.float16)
    np.testing.assert_allclose(matmul(a, b), _exact(a, b), rtol=1e-5, atol=1e-4)


def test_initialize_discards_only_what_came_before() -> None:
    """One K step (only the peeled step runs) and several: with initialize on the first
    band and never again, both equal the full product."""
    a, b = _inputs(64, 128, 96, np.float16)
    np.testing.assert_allclose(matmul(a[:, :32], b[:32]), _exact(a[:, :32], b[:32]), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(matmul(a, b), _exact(a, b), rtol=1e-5, atol=1e-4)


if __name__ == "__main__":
    import ml_dtypes

    a, b = _inputs(96, 200, 80, ml_dtypes.bfloat16)
    err = np.max(np.abs(matmul(a, b) - _exact(a, b)))
    print(f"C = A @ B, (96x80) @ (80x200) bf16 -> fp32 on the interpreter: max |error| = {err:.3g}")
    for arch in ("gfx942", "gfx950"):
        k = compile_for(arch)
        md = k.metadata
        mfma = [ln.split()[0] for ln in k.asm["amdgcn"].splitlines() if ln.strip().startswith("v_mfma")]
        print(f"{arch}: {len(mfma)} x {mfma[0]}, {md['vgprs']} VGPRs, {md['agprs']} AGPRs, "
              f"{md['lds']} B LDS, {md['scratch']} B scratch")
