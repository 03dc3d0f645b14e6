"""Every example kernel's IR prints, parses back and prints identically, and verifies,
for each target; the variants are the ones a user would compile ahead of time."""

from __future__ import annotations

from typing import Any

import pytest
from example_modules import EXAMPLES, load_example  # tests/example_modules.py

from tlxc.compiler import TARGETS
from tlxc.ir.parser import parse_ir
from tlxc.ir.printer import print_ir
from tlxc.ir.verifier import verify

CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("vector_add", "add_kernel", "*fp32:16,*fp32:16,*fp32:16,i32", {"BLOCK": 1024}),
    ("vector_add", "add_kernel", "*fp16,*fp16,*fp16,i32:16", {"BLOCK": 256}),
    ("fused_softmax", "softmax_kernel", "*fp16:16,*fp16:16,i32,i32,i32,i32", {"BLOCK": 256}),
    ("layer_norm", "layer_norm_fwd", "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32,i32,fp32", {"BLOCK": 512}),
    ("matmul", "matmul_kernel", "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32:16,i32,i32:16,i32,i32:16",
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_SIZE_M": 8, "ACTIVATION": "leaky_relu"}),
    ("matmul", "matmul_kernel", "*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_SIZE_M": 4, "INPUT_PRECISION": "ieee"}),
    ("attention", "attn_fwd", "*fp16,*fp16,*fp16,*fp16,*fp32,fp32" + ",i32" * 14,
     {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32, "CAUSAL": True}),
    ("attention", "attn_fwd", "*fp16,*fp16,*fp16,*fp16,*fp32,fp32" + ",i32" * 14,
     {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64, "CAUSAL": False}),
    ("hopper_gemm_cp_async", "matmul_cp_async",
     "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1",
     {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "NUM_STAGES": 3}),
    ("hopper_gemm_tma", "matmul_tma",
     "tensordesc<fp16[128,64]>,tensordesc<fp16[64,128]>,tensordesc<fp16[128,128]>,i32",
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_STAGES": 3}),
    ("hopper_gemm_ws", "matmul_ws",
     "tensordesc<fp16[64,64]>,tensordesc<fp16[64,256]>,tensordesc<fp16[64,256]>,i32,i32,i32",
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "NUM_STAGES": 3, "NUM_CONSUMERS": 2, "NUM_SMS": 132}),
    ("hopper_gemm_cluster", "matmul_cluster",
     "tensordesc<fp16[128,64]>,tensordesc<fp16[64,64]>,tensordesc<fp16[128,128]>,i32",
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_STAGES": 3}),
    ("hopper_fa_ws", "attn_fwd_ws",
     "tensordesc<fp16[64,64]>,tensordesc<fp16[64,64]>,tensordesc<fp16[64,64]>,tensordesc<fp16[64,64]>,fp32,i32,i32",
     {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "NUM_STAGES": 2, "NUM_CONSUMERS": 2, "CAUSAL": True}),
    ("tma_transpose", "transpose_kernel", "tensordesc<fp32[32,32]>,tensordesc<fp32[32,32]>", {"BLOCK": 32}),
    ("persistent_matmul", "persistent_matmul_kernel",
     "tensordesc<fp16[64,32]>,tensordesc<fp16[32,64]>,tensordesc<fp16[64,64]>,i32,i32,i32",
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_SIZE_M": 4, "NUM_SMS": 8}),
    ("amd_gemm_pipelined", "gemm_lds_pipelined",
     "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1",
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 4, "NUM_STAGES": 2}),
    ("amd_scheduled_mfma_gemm", "scheduled_mfma_gemm",
     "*bf16:16,*bf16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1",
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "MFMA_VERSION": 4, "INSTR_K": 16}),
]
# Examples built on Hopper's wgmma (tlx.async_dot with a register accumulator): on sm_100a
# they are a clear "not supported" error (Blackwell's tcgen05 form is another issue), which
# tests/codegen/test_ptxas_examples.py checks.
HOPPER_ONLY = {"hopper_fa_ws", "hopper_gemm_cluster", "hopper_gemm_cp_async", "hopper_gemm_tma", "hopper_gemm_ws"}
# Launch options an example is compiled with on NVIDIA targets (a cluster shape).
OPTIONS: dict[str, dict[str, Any]] = {"hopper_gemm_cluster": {"ctas_per_cga": (2, 1, 1)}}
# Examples written for AMD chips: the NVIDIA golden and ptxas lists leave them out, and
# tests/codegen/test_amd_examples.py compiles them for gfx942 / gfx950 / gfx1250.
# amd_gemm_pipelined uses only portable operations (it would compile for sm_90a, but it is
# tuned for LDS staging, not for Hopper); amd_scheduled_mfma_gemm issues MFMA instructions.
AMD_ONLY = {"amd_gemm_pipelined", "amd_scheduled_mfma_gemm"}
# Examples built on NVIDIA-only TLX operations (TMA descriptors, wgmma): refused on the AMD
# targets with TLXC-TLX-006 at the user's line, which tests/codegen/test_amd_examples.py checks.
NVIDIA_ONLY = HOPPER_ONLY | {"tma_transpose"}




def test_every_example_has_a_case() -> None:
    assert {p.stem for p in EXAMPLES.glob("*.py") if p.stem != "conftest"} <= {c[0] for c in CASES}


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.parametrize("example,kernel,signature,constants", CASES)
def test_example_ir_roundtrips(example: str, kernel: str, signature: str, constants: dict[str, Any],
                               arch: str) -> None:
    k = getattr(load_example(example), kernel)
    options = OPTIONS.get(example, {}) if arch.startswith("sm_") else {}
    compiled = k.compile(signature, constants, arch=arch, **options)
    text = compiled.asm["ir"]
    module = parse_ir(text)
    verify(module)
    assert print_ir(module) == text
    assert 'sym_name = "' + kernel + '"' in text
