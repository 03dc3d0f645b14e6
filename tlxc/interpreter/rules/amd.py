"""Rules for the register-layout, MFMA-scheduling and scaled-dot ops (``tlxc.ir.ops.amd``).

Layouts, register classes and scheduling change no values, so the interpreter (which
holds every tile whole, in no layout) runs ``require_layout``, ``release_layout``,
``amd_register_*``, ``amd_sched_barrier`` and ``amd_mfma_commit`` as the identity;
``amd_scheduled_mfma`` is ``acc + a @ b`` in fp32 (the MFMA products of bf16/f16 inputs
are exact in fp32; the order of the sums is the hardware's choice).

``dot_scaled`` follows Triton's definition: operands decoded to fp32 (e2m1 from nibbles,
low one first), each multiplied by its scale -- an e8m0 exponent 2**(s - 127) (s = 255 is
NaN, as in the OCP MX specification) or an e4m3 value (nvfp4) -- repeated over its group
of K values, then ``a @ b + acc``.
"""

from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np

from ...ir.core import Operation
from ...ir.ops import amd as A
from .. import numerics as N
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


def _identity(op: Operation, state: LaunchState) -> Fn:
    if len(op.results) == 1:
        return lambda x, *rest: x
    return lambda *xs: xs


evaluates(A.RequireLayoutOp, A.ReleaseLayoutOp, A.AmdRegisterResidentOp, A.AmdRegisterClassAnchorOp,
          A.AmdMfmaCommitOp)(_identity)


@evaluates(A.AmdSchedBarrierOp)
def _sched_barrier(op: Operation, state: LaunchState) -> Fn:
    return lambda: None


@evaluates(A.ZerosOp)
def _zeros(op: Operation, state: LaunchState) -> Fn:
    t = op.result.type
    dt = N.storage_dtype(t.scalar)
    return lambda: np.zeros(t.shape, dt)


@evaluates(A.ExtractSliceOp)
def _extract_slice(op: Operation, state: LaunchState) -> Fn:
    index = tuple(slice(o, o + n) for o, n in zip(op.offsets, op.result.type.shape))
    return lambda x: np.ascontiguousarray(x[index])


@evaluates(A.RematerializedRangeOp)
def _rematerialized_range(op: Operation, state: LaunchState) -> Fn:
    start, end = op.start, op.end
    return lambda *placement: np.arange(start, end, dtype=np.int32)


@evaluates(A.AmdScheduledMfmaOp)
def _scheduled_mfma(op: Operation, state: LaunchState) -> Fn:
    f32 = N.F32
    if op.initialize:
        return lambda a, b, acc: np.matmul(a.astype(f32), b.astype(f32))
    return lambda a, b, acc: np.matmul(a.astype(f32), b.astype(f32)) + acc


# -- dot_scaled --------------------------------------------------------------------------------
_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float32)
_FP8 = {"e4m3": np.dtype(ml_dtypes.float8_e4m3fn), "e5m2": np.dtype(ml_dtypes.float8_e5m2)}


def _e2m1(packed: np.ndarray, axis: int) -> np.ndarray:
    """Two e2m1 values per byte, the first in the low nibble, unpacked along ``axis``."""
    x = np.moveaxis(packed.astype(np.uint8), axis, -1)
    nibbles = np.stack([x & 0x0F, x >> 4], axis=-1).reshape(x.shape[:-1] + (2 * x.shape[-1],))
    vals = _E2M1[nibbles & 0x07]
    vals = np.where(nibbles & 0x08, -vals, vals)
    return np.moveaxis(vals, -1, axis)


def _decode(x: np.ndarray, fmt: str, pack_axis: int) -> np.ndarray:
    if fmt == "e2m1":
        return _e2m1(x, pack_axis)
    if fmt in _FP8 and x.dtype == np.uint8:
        x = x.view(_FP8[fmt])
    elif fmt in ("bf16", "fp16") and x.dtype == np.uint16:
        x = x.view(ml_dtypes.bfloat16 if fmt == "bf16" else np.float16)
    return x.astype(np.float32)


def scale_values(s: np.ndarray) -> np.ndarray:
    """A scale tile as fp32: e8m0 exponents (u8), or e4m3 values (nvfp4's scales) as they are."""
    return e8m0(s) if s.dtype.kind in "ui" else s.astype(np.float32)


def e8m0(s: np.ndarray) -> np.ndarray:
    """e8m0 exponents as fp32: 2**(s - 127), s = 255 is NaN (2**-127 is a subnormal)."""
    s = s.astype(np.uint8).astype(np.int32)
    out = np.ldexp(np.float32(1.0), s - 127).astype(np.float32)
    return np.where(s == 255, np.float32(np.nan), out)


@evaluates(A.DotScaledOp)
def _dot_scaled(op: Operation, state: LaunchState) -> Fn:
    fa, fb = op.a_format, op.b_format
    a_axis = -1 if op.lhs_k_pack else -2  # e2m1 packing: along K, or along M / N
    b_axis = -2 if op.rhs_k_pack else -1
    has_a, has_b = op.a_scale is not None, op.b_scale is not None

    def dot(a: np.ndarray, b: np.ndarray, acc: np.ndarray, *scales: np.ndarray) -> np.ndarray:
        x, y = _decode(a, fa, a_axis), _decode(b, fb, b_axis)
        rest = list(scales)
        if has_a:
            s = scale_values(rest.pop(0))
            x = x * np.repeat(s, x.shape[-1] // s.shape[-1], axis=-1)
        if has_b:
            s = scale_values(rest.pop(0))  # [.., N, K / f]: repeat over K, then put K first
            y = y * np.swapaxes(np.repeat(s, y.shape[-2] // s.shape[-1], axis=-1), -1, -2)
        with np.errstate(invalid="ignore", over="ignore"):
            return (np.matmul(x, y) + acc).astype(np.float32)

    return dot
