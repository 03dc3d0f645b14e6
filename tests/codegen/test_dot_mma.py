"""``tl.dot`` on the tensor cores: which ``mma.sync`` form each operand type gets, per
target (FileCheck lines), that ptxas assembles it, and -- under the
interpreter, or on the GPU with ``TLXC_TEST_ON_GPU=1`` -- that it computes the right thing.

Forms (tlxc/codegen/nvptx/lower_mma.py): f16/bf16 m16n8k16; fp32 with tf32 or tf32x3
m16n8k8 ``.tf32`` (tf32x3: three MMAs per step); int8/uint8 m16n8k32 ``.s32``; fp8
m16n8k32 ``.e4m3`` / ``.e5m2`` where the PTX version has it (sm_100a, PTX 8.6), else
(both targets emit PTX ≥ 8.4, which has fp8 mma.sync). fp32 ``ieee`` stays on the
FMA loop.
"""

from __future__ import annotations

import functools
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from codegen_helpers import NVIDIA_ARCHS, filecheck, ptxas_or_skip

import tlxc
import tlxc.language as tl

RNG = np.random.default_rng(7)


@tlxc.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
               PRECISION: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@tlxc.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                       PRECISION: tl.constexpr = "tf32"):
    ib = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + ib * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + ib * K * N + rk[None, :, None] * N + rn[None, None, :])
    tl.store(c_ptr + ib * M * N + rm[None, :, None] * N + rn[None, None, :],
             tl.dot(a, b, input_precision=PRECISION))


SIG = {"f32": "*fp32,*fp32,*fp32", "i8": "*i8,*i8,*i32", "u8": "*u8,*u8,*i32", "e4m3": "*fp8e4nv,*fp8e4nv,*fp32",
       "e5m2": "*fp8e5,*fp8e5,*fp32", "f16": "*fp16,*fp16,*fp32", "bf16": "*bf16,*bf16,*fp32"}


@functools.lru_cache(maxsize=None)
def _compiled(ty: str, arch: str, m: int = 32, n: int = 32, k: int = 32, precision: str = "tf32",
              num_warps: int = 4, batch: int = 0) -> Any:
    if batch:
        return batched_dot_kernel.compile(SIG[ty], {"B": batch, "M": m, "N": n, "K": k, "PRECISION": precision},
                                          arch=arch, num_warps=num_warps)
    return dot_kernel.compile(SIG[ty], {"M": m, "N": n, "K": k, "PRECISION": precision}, arch=arch,
                              num_warps=num_warps)


def _ptx(*args: Any, **kwargs: Any) -> str:
    return _compiled(*args, **kwargs).asm["ptx"]


per_arch = pytest.mark.parametrize("arch", NVIDIA_ARCHS)


# -- the instruction each type gets ----------------------------------------------------------------


@per_arch
def test_tf32_dot_uses_mma_m16n8k8(arch: str) -> None:
    """32x32x32 fp32 with tf32, 4 warps: 2x4 m16n8 tiles split 2x2 over the warps, 4 K
    steps of 8: 1 * 2 * 4 = 8 MMAs a warp, each operand rounded to tf32 after its load
    (``ldmatrix`` moves 32-bit elements as pairs of 16-bit halves, into f32 registers)."""
    filecheck(_ptx("f32", arch), test_tf32_dot_uses_mma_m16n8k8, arch)
    # CHECK-LABEL: .visible .entry dot_kernel(
    # CHECK:       ldmatrix.sync.aligned.m8n8.x{{[24]}}.shared.b16 {%f{{[0-9]+}}, %f{{[0-9]+}}
    # CHECK:       cvt.rna.tf32.f32 %r{{[0-9]+}}, %f{{[0-9]+}};
    # CHECK:       mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
    # CHECK-SAME:  {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}},
    # CHECK-SAME:  {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}},
    # CHECK-COUNT-7: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f
    # CHECK-NOT:   mma.sync
    # CHECK-NOT:   fma.rn.f32
    # CHECK:       ret;


@per_arch
def test_tf32x3_dot_runs_three_mmas_per_step(arch: str) -> None:
    """tf32x3 splits each operand into big + small tf32 parts: 3 MMAs where tf32 has 1."""
    filecheck(_ptx("f32", arch, precision="tf32x3"), test_tf32x3_dot_runs_three_mmas_per_step, arch)
    # CHECK-LABEL: .visible .entry dot_kernel(
    # CHECK:       cvt.rna.tf32.f32 [[BIG:%r[0-9]+]], [[X:%f[0-9]+]];
    # CHECK:       mov.b32 [[BIGF:%f[0-9]+]], [[BIG]];
    # CHECK-NEXT:  sub.f32 [[SMALL:%f[0-9]+]], [[X]], [[BIGF]];
    # CHECK-NEXT:  cvt.rna.tf32.f32 %r{{[0-9]+}}, [[SMALL]];
    # CHECK-COUNT-24: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
    # CHECK-NOT:   mma.sync
    # CHECK:       ret;


@per_arch
def test_ieee_fp32_dot_stays_on_fma(arch: str) -> None:
    """``input_precision="ieee"`` must not round to tf32: the exact FMA loop."""
    filecheck(_ptx("f32", arch, precision="ieee"), test_ieee_fp32_dot_stays_on_fma, arch)
    # CHECK-LABEL: .visible .entry dot_kernel(
    # CHECK-NOT:   mma.sync
    # CHECK-NOT:   cvt.rna.tf32
    # CHECK:       fma.rn.f32
    # CHECK-NOT:   mma.sync
    # CHECK:       ret;


@per_arch
def test_int8_dot_uses_mma_m16n8k32(arch: str) -> None:
    """8-bit operands are staged one byte each; each ldmatrix register holds 4 K
    elements; 32x32x32 is one K step: 2 MMAs a warp."""
    filecheck(_ptx("i8", arch), test_int8_dot_uses_mma_m16n8k32, arch)
    # CHECK-LABEL: .visible .entry dot_kernel(
    # CHECK:       st.shared.u8
    # CHECK:       ldmatrix.sync.aligned.m8n8.x4.shared.b16
    # CHECK:       mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
    # CHECK-SAME:  {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
    # CHECK-COUNT-1: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
    # CHECK-NOT:   mma.sync
    # CHECK-NOT:   mad.lo.s32
    # CHECK:       ret;


@per_arch
def test_uint8_dot_uses_mma_u8(arch: str) -> None:
    filecheck(_ptx("u8", arch), test_uint8_dot_uses_mma_u8, arch)
    # CHECK-COUNT-2: mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32
    # CHECK-NOT:   mma.sync


@per_arch
def test_int8_dot_with_k16_fills_half_a_k32_step(arch: str) -> None:
    """K=16 of 8-bit elements is half an instruction: the other half reads zeros (the
    padded staging, one ld.shared.b32 per fragment register, not ldmatrix)."""
    filecheck(_ptx("i8", arch, k=16), test_int8_dot_with_k16_fills_half_a_k32_step, arch)
    # CHECK-NOT:   ldmatrix
    # CHECK:       mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
    # CHECK-SAME:  {%r{{[0-9]+}}, %r{{[0-9]+}}, [[ZERO:%r[0-9]+]], [[ZERO]]}, {%r{{[0-9]+}}, [[ZERO]]},
    # CHECK-COUNT-1: mma.sync.aligned.m16n8k32
    # CHECK-NOT:   mma.sync


@per_arch
@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_fp8_dot_form_per_target(arch: str, fmt: str) -> None:
    """fp8 mma.sync needs PTX 8.4, which both targets emit (sm_90a 8.4, sm_100a 8.6): one
    m16n8k32 per k32 step, no widening to f16."""
    filecheck(_ptx(fmt, arch), test_fp8_dot_form_per_target, arch, FMT=fmt)
    # CHECK-LABEL:  .visible .entry dot_kernel(
    # CHECK:        mma.sync.aligned.m16n8k32.row.col.f32.[[FMT]].[[FMT]].f32
    # CHECK-COUNT-1: mma.sync.aligned.m16n8k32.row.col.f32.[[FMT]].[[FMT]].f32
    # CHECK-NOT:    mma.sync
    # CHECK:        ret;


@per_arch
def test_batched_dot_uses_mma_per_batch_slice(arch: str) -> None:
    """[2, 16, 16] x [2, 16, 16] f16 with 4 warps: 2 warps on the batch, 2 on N; each
    warp one m16n8 tile, one K step."""
    filecheck(_ptx("f16", arch, m=16, n=16, k=16, batch=2), test_batched_dot_uses_mma_per_batch_slice, arch)
    # CHECK-LABEL: .visible .entry batched_dot_kernel(
    # CHECK:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    # CHECK-NOT:   mma.sync
    # CHECK:       ret;


# -- ptxas ---------------------------------------------------------------------------------------

PTXAS_CASES = [
    ("f32", {}), ("f32", {"precision": "tf32x3"}), ("f32", {"m": 64, "n": 16, "k": 64, "num_warps": 8}),
    ("i8", {}), ("i8", {"k": 16}), ("u8", {"m": 16, "n": 64, "k": 128}), ("e4m3", {}), ("e5m2", {"k": 16}),
    ("bf16", {"m": 64, "n": 64, "k": 16, "num_warps": 2}), ("f16", {"m": 16, "n": 16, "k": 16, "batch": 2}),
    ("i8", {"m": 16, "n": 32, "k": 32, "batch": 8}), ("e4m3", {"m": 32, "n": 16, "k": 64, "batch": 2, "num_warps": 2}),
    ("f32", {"m": 16, "n": 16, "k": 16, "batch": 4, "num_warps": 8}),
]
# the FMA loop (fp32 ieee), batched too
FMA_CASES = [("f32", {"precision": "ieee"}), ("f32", {"m": 16, "n": 16, "k": 16, "batch": 2, "precision": "ieee"})]


@per_arch
@pytest.mark.parametrize("case", range(len(PTXAS_CASES)))
def test_ptxas_assembles_mma_dots(arch: str, case: int) -> None:
    ptxas_or_skip()
    ty, kw = PTXAS_CASES[case]
    ck = _compiled(ty, arch, **kw)
    assert "mma.sync" in ck.asm["ptx"]
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    md = ck.metadata
    assert (md["spill_stores"], md["spill_loads"]) == (0, 0)


@per_arch
@pytest.mark.parametrize("case", range(len(FMA_CASES)))
def test_ptxas_assembles_fma_dots(arch: str, case: int) -> None:
    ptxas_or_skip()
    ty, kw = FMA_CASES[case]
    ck = _compiled(ty, arch, **kw)
    assert "mma.sync" not in ck.asm["ptx"] and "fma.rn.f32" in ck.asm["ptx"]
    assert ck.asm["cubin"][:4] == b"\x7fELF"


@per_arch
def test_16_bit_dot_uses_wgmma_on_hopper(arch: str) -> None:
    """64x64x32 f16, 4 warps (one warpgroup). sm_90a (tlxc/ir/passes/dot_to_wgmma.py): A
    and B stored to shared memory, a proxy fence and a barrier, two m64n64k16 wgmma (K
    steps of 16) in one group, waited for at once. sm_100a: mma.sync (tcgen05 not yet)."""
    filecheck(_ptx("f16", arch, m=64, n=64, k=32), test_16_bit_dot_uses_wgmma_on_hopper, arch)
    # CHECK-LABEL: .visible .entry dot_kernel(
    # SM90A:       st.shared
    # SM90A:       fence.proxy.async.shared::cta;
    # SM90A-NEXT:  bar.sync 0;
    # SM90A:       wgmma.fence.sync.aligned;
    # SM90A-NEXT:  wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f
    # SM90A-COUNT-1: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f
    # SM90A-NEXT:  wgmma.commit_group.sync.aligned;
    # SM90A-NEXT:  wgmma.wait_group.sync.aligned 0;
    # SM90A-NOT:   mma.sync
    # SM100A:      mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    # SM100A-NOT:  wgmma
    # CHECK:       ret;


@per_arch
@pytest.mark.parametrize("ty,m,n,k,num_warps", [("f16", 128, 128, 64, 4), ("f16", 128, 64, 32, 8),
                                                ("bf16", 64, 256, 32, 8)])
def test_ptxas_assembles_wgmma_dots(arch: str, ty: str, m: int, n: int, k: int, num_warps: int) -> None:
    """The wgmma shapes of the results test below assemble, without spills and (sm_90a)
    without ptxas serializing the wgmma pipeline."""
    ptxas_or_skip()
    ck = _compiled(ty, arch, m=m, n=n, k=k, num_warps=num_warps)
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert ("wgmma.mma_async" in ck.asm["ptx"]) == (arch == "sm_90a")
    assert (ck.metadata["spill_stores"], ck.metadata["spill_loads"]) == (0, 0)
    from tlxc.codegen.nvptx.toolchain import ptxas
    assert "serialized" not in ptxas(ck.asm["ptx"], arch).log


# -- results (interpreter; the GPU under TLXC_TEST_ON_GPU=1) -------------------------------------------

F8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _operands(ty: str, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    if ty in ("i8", "u8"):
        lo, hi = (-128, 128) if ty == "i8" else (0, 256)
        dt = np.int8 if ty == "i8" else np.uint8
        return RNG.integers(lo, hi, shape_a).astype(dt), RNG.integers(lo, hi, shape_b).astype(dt)
    dt = F8.get(ty) or {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[ty]
    return RNG.standard_normal(shape_a).astype(dt), RNG.standard_normal(shape_b).astype(dt)


def _tf32(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def _check(ty: str, got: np.ndarray, a: np.ndarray, b: np.ndarray, precision: str = "tf32") -> None:
    if ty in ("i8", "u8"):
        np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))
        return
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if ty == "f32" and precision == "tf32":
        a64, b64 = _tf32(a).astype(np.float64), _tf32(b).astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    # tf32 operands round to 10 mantissa bits; the interpreter rounds ties to even, the
    # hardware (and this reference) away from zero, so a tie may differ by one tf32 ulp
    rel = 2.0 ** -10 if ty == "f32" and precision == "tf32" else 1e-5
    np.testing.assert_array_less(np.abs(got - a64 @ b64), rel * scale + 1e-6)


@pytest.mark.parametrize("ty,m,n,k,precision,num_warps", [
    ("f32", 32, 32, 32, "tf32", 4), ("f32", 64, 16, 64, "tf32x3", 8), ("i8", 16, 32, 64, "tf32", 4),
    ("u8", 32, 16, 16, "tf32", 2), ("e4m3", 32, 32, 32, "tf32", 4), ("e5m2", 16, 64, 64, "tf32", 4),
    ("bf16", 64, 32, 32, "tf32", 4),
    # wgmma on sm_90a: one warpgroup; two on M; two on N
    ("f16", 128, 128, 64, "tf32", 4), ("f16", 128, 64, 32, "tf32", 8), ("bf16", 64, 256, 32, "tf32", 8),
])
def test_dot_results(ty: str, m: int, n: int, k: int, precision: str, num_warps: int) -> None:
    a, b = _operands(ty, (m, k), (k, n))
    c = np.zeros((m, n), np.int32 if ty in ("i8", "u8") else np.float32)
    dot_kernel.interpret[(1,)](a, b, c, M=m, N=n, K=k, PRECISION=precision, num_warps=num_warps)
    _check(ty, c, a, b, precision)


@pytest.mark.parametrize("ty,batch,m,n,k,precision,num_warps", [
    ("f16", 2, 16, 16, 16, "tf32", 4), ("i8", 4, 16, 32, 32, "tf32", 2), ("e4m3", 2, 32, 16, 64, "tf32", 2),
    ("f32", 4, 16, 16, 16, "tf32", 8), ("f32", 2, 16, 32, 16, "ieee", 4),
])
def test_batched_dot_results(ty: str, batch: int, m: int, n: int, k: int, precision: str, num_warps: int) -> None:
    a, b = _operands(ty, (batch, m, k), (batch, k, n))
    c = np.zeros((batch, m, n), np.int32 if ty in ("i8", "u8") else np.float32)
    batched_dot_kernel.interpret[(1,)](a, b, c, B=batch, M=m, N=n, K=k, PRECISION=precision, num_warps=num_warps)
    _check(ty, c, a, b, precision)
