"""Conversions and NaN-propagating min/max over the element types that ptxas once
refused (each case says what was wrong); kept as regression tests.

Kernels whose lowering is not written yet (TLXC-CODEGEN-001) do not belong here: these
all compile to PTX, which ptxas then refuses (an InternalCompilerError).
"""

from __future__ import annotations

from typing import Any

import pytest
from codegen_helpers import NVIDIA_ARCHS, ptxas_or_skip

import tlxc
import tlxc.language as tl


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
    return pytest.param(kernel, signature, id=f"{kernel.__name__}-{signature}")


# cvt.rzi.sat.s8.bf16 / .u8.bf16: ptxas says "Arguments mismatch for instruction 'cvt'"
# (f16 -> s8 with the same form is accepted); going through f32 or s16 would do
BF16_TO_INT8 = "bf16 -> i8/u8: cvt.rzi.sat.s8.bf16 is refused"
# the f64 -> f32 step is emitted as cvt.f32.f64; a narrowing float conversion needs a
# rounding modifier ("Rounding modifier required"): cvt.rn.f32.f64
F64_TO_FP8 = "f64 -> fp8: cvt.f32.f64 lacks .rn"
# the fp8 -> f32 step of fp8 -> i1 / other fp8 is emitted as cvt.f32.f8e4m3 (or .f8e5m2):
# not PTX ("Unknown modifier"). fp8 -> fp32 goes through cvt.rn.f16x2.e4m3x2 and is fine
FP8_TO_F32 = "fp8 -> i1/fp8: cvt.f32.f8e4m3 is not PTX"
# max.NaN exists for f32, f16 and bf16 only; f64 needs setp.nan + selp
MAX_NAN_F64 = "fp64 maximum(propagate_nan=ALL): max.NaN.f64 is not PTX"

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
