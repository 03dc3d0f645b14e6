"""PTX that ptxas rejects today, found by compiling small kernels over the element types.
Each case is marked ``xfail(strict=True)`` with what is wrong, so that it fails (XPASS)
once the code generator is fixed: then remove its mark and keep it as a test.

Kernels whose lowering is not written yet (TLXC-CODEGEN-001) do not belong here: these
all compile to PTX, which ptxas then refuses (an InternalCompilerError).
"""

from __future__ import annotations

from typing import Any

import pytest
from codegen_helpers import NVIDIA_ARCHS, ptxas_or_skip

import tlxc
import tlxc.language as tl
from tlxc.errors import InternalCompilerError


@tlxc.jit
def convert_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


@tlxc.jit
def max_nan_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))


def _bug(kernel: Any, signature: str, reason: str) -> Any:
    return pytest.param(kernel, signature, id=f"{kernel.__name__}-{signature}",
                        marks=pytest.mark.xfail(strict=True, raises=InternalCompilerError, reason=reason))


BF16_TO_INT8 = ("emits cvt.rzi.sat.s8.bf16 / .u8.bf16, which ptxas refuses ('Arguments mismatch for instruction "
                "cvt'); convert through f32 (or s16) first")
F64_TO_FP8 = ("the f64 -> f32 step is emitted as cvt.f32.f64, without the rounding modifier that a narrowing "
              "float conversion needs ('Rounding modifier required'): cvt.rn.f32.f64")
FP8_TO_F32 = ("the fp8 -> f32 step is emitted as cvt.f32.f8e4m3 / cvt.f32.f8e5m2, which is not PTX ('Unknown "
              "modifier'); fp8 widens with cvt.rn.f16x2.e4m3x2 / .e5m2x2, as the fp8 -> fp32 store path does")
MAX_NAN_F64 = "emits max.NaN.f64; .NaN exists for f32, f16 and bf16 only (setp.nan + selp for f64)"

CASES = [
    _bug(convert_kernel, "*bf16,*i8", BF16_TO_INT8),
    _bug(convert_kernel, "*bf16,*u8", BF16_TO_INT8),
    _bug(convert_kernel, "*fp64,*fp8e4nv", F64_TO_FP8),
    _bug(convert_kernel, "*fp64,*fp8e5", F64_TO_FP8),
    _bug(convert_kernel, "*fp8e4nv,*i1", FP8_TO_F32),
    _bug(convert_kernel, "*fp8e5,*i1", FP8_TO_F32),
    _bug(convert_kernel, "*fp8e4nv,*fp8e5", FP8_TO_F32),
    _bug(convert_kernel, "*fp8e5,*fp8e4nv", FP8_TO_F32),
    _bug(max_nan_kernel, "*fp64,*fp64,*fp64", MAX_NAN_F64),
]


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("kernel,signature", CASES)
def test_ptxas_accepts(kernel: Any, signature: str, arch: str) -> None:
    ptxas_or_skip()
    ck = kernel.compile(signature, {"N": 64}, arch=arch)
    assert ck.asm["cubin"][:4] == b"\x7fELF"
