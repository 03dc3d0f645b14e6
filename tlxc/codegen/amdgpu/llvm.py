"""LLVM types and small helpers of the AMDGPU code generator, over ``llvmlite.ir``.

Address spaces (LLVM's AMDGPUUsage, "Address Spaces"): 1 global, 3 LDS (local data
share, TLX's "shared memory"), 4 constant, 5 private. Every pointer is opaque
(``ptr addrspace(N)``); the element type goes on each ``getelementptr`` / ``load`` /
``store``.

How tile IR element types are held in registers: integers as ``iN``; ``i1`` as ``i1``
(and as ``i8`` in memory, like Triton); fp16 / fp32 / fp64 as ``half`` / ``float`` /
``double``; bf16 as LLVM's ``bfloat`` (``BFLOAT`` below: llvmlite has no bfloat type, so
it is defined here); the 8-bit floats as ``i8`` (their bits) -- their arithmetic goes
through conversions.
"""

from __future__ import annotations

from typing import Any

import llvmlite.ir as ir

from ...ir.types import DType, Kind, PointerType, Type

GLOBAL_AS = 1
LDS_AS = 3
CONSTANT_AS = 4
PRIVATE_AS = 5

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
VOID = ir.VoidType()
GLOBAL_PTR = ir.PointerType(addrspace=GLOBAL_AS)
LDS_PTR = ir.PointerType(addrspace=LDS_AS)
CONSTANT_PTR = ir.PointerType(addrspace=CONSTANT_AS)


class BFloatType(ir.Type):
    """LLVM's ``bfloat`` (the 16-bit brain float), which llvmlite.ir does not define."""

    null = "0xR0000"
    intrinsic_name = "bf16"

    def _to_string(self) -> str:
        return "bfloat"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BFloatType)

    def __hash__(self) -> int:
        return hash("bfloat")

    def format_constant(self, value: Any) -> str:
        """A bfloat constant as LLVM writes it: ``0xR`` and the 16 bits."""
        import numpy as np

        bits = int(np.asarray(value, np.float32).view(np.uint32)) >> 16
        # round to nearest even, as the conversion of the constant would
        f = int(np.asarray(value, np.float32).view(np.uint32))
        if (f & 0x7F800000) != 0x7F800000:
            bits = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
        return f"0xR{bits & 0xFFFF:04X}"


BFLOAT = BFloatType()

_FLOAT_TYPES = {"f16": F16, "bf16": BFLOAT, "f32": F32, "f64": F64}


def value_type(t: DType | PointerType) -> ir.Type:
    """The LLVM type one element of ``t`` is held in, in registers."""
    if isinstance(t, PointerType):
        return GLOBAL_PTR
    if t.kind == Kind.FLOAT:
        return _FLOAT_TYPES.get(t.ir_name, I8)  # the fp8 formats: their bits
    return ir.IntType(t.bits)


def memory_type(t: DType | PointerType) -> ir.Type:
    """The LLVM type of one element of ``t`` in memory (``i1`` is a byte)."""
    if isinstance(t, DType) and t.kind == Kind.BOOL:
        return I8
    return value_type(t)


def scalar_of(t: Type) -> DType | PointerType:
    return t.scalar  # type: ignore[attr-defined]


def constant(ty: ir.Type, value: Any) -> ir.Constant:
    """An LLVM constant of type ``ty`` (bfloat spelled as LLVM wants it)."""
    if isinstance(ty, BFloatType):
        return ir.FormattedConstant(ty, ty.format_constant(value))
    if isinstance(ty, ir.IntType):
        return ir.Constant(ty, int(value) & ((1 << ty.width) - 1))
    return ir.Constant(ty, float(value))


def bytes_of(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    if isinstance(ty, (ir.HalfType, BFloatType)):
        return 2
    if isinstance(ty, ir.FloatType):
        return 4
    if isinstance(ty, ir.DoubleType):
        return 8
    if isinstance(ty, ir.PointerType):
        return 8
    if isinstance(ty, ir.VectorType):
        return ty.count * bytes_of(ty.element)
    raise TypeError(f"no size for {ty}")


def mangle(ty: ir.Type) -> str:
    """The suffix of an overloaded intrinsic's name for ``ty`` (``f32``, ``v4f16``, ``i64``,
    ``p1``...)."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{mangle(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, BFloatType):
        return "bf16"
    if isinstance(ty, ir.FloatType):
        return "f32"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.PointerType):
        return f"p{ty.addrspace}"
    raise TypeError(f"cannot mangle {ty}")
