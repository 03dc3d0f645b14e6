"""Semantic rules of ``tlx.async_dot`` (wgmma on Hopper) and ``tlx.async_dot_wait``.

The shape rules are the hardware's, checked here so that the error points at the call:
M a multiple of 64 (one warpgroup computes 64 rows per instruction), N a multiple of 8
from 8 to 256, K a multiple of the instruction's K step (16 for 16-bit inputs, 8 for
tf32, 32 for 8-bit inputs).
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import DType, MemDescType, TileType, float16, float32, int1, int32
from ..values import Handle, Tensor, describe, flatten, unwrap
from .arith import cast
from .base import Ctx, const_value, dtype_arg, fail, rule
from .tlx_buffers import buffer

MMA = "TLXC-TLX-004"
K_STEP = {"f16": 16, "bf16": 16, "f32": 8, "f8e4m3": 32, "f8e5m2": 32, "i8": 32, "u8": 32}
LEGAL = ("M a multiple of 64; N a multiple of 8 in [8, 256]; K a multiple of 16 for fp16/bf16, 8 for tf32 "
         "(fp32 inputs), 32 for fp8/int8")


def _operand(v: Any, what: str, allow_registers: bool) -> tuple[tuple[int, ...], DType, Any]:
    v = unwrap(v)
    if isinstance(v, Handle) and isinstance(v.type, MemDescType):
        t = buffer(v, what, array=False)
        if t.storage != "smem":
            fail("TLXC-TLX-005", "async_dot operands in tensor memory are not supported by tlxc yet")
        return t.buf_shape, t.element, v.handle
    if allow_registers and isinstance(v, Tensor) and isinstance(v.type, TileType):
        return v.shape, v.dtype, v.handle  # type: ignore[return-value]
    where = "a buffer or a register tile" if allow_registers else "a buffer in shared memory"
    fail(MMA, f"{what} must be {where}, got {describe(v)}")
    raise AssertionError


def check_shape(m: int, n: int, k: int, element: DType) -> None:
    step = K_STEP.get(element.ir_name)
    if step is None:
        fail(MMA, f"async_dot does not take {element!r} operands", "use fp16, bf16, fp32 (tf32), fp8 or int8")
    if m % 64 or n % 8 or not 8 <= n <= 256 or k % step:
        fail(MMA, f"async_dot of [{m}, {k}] x [{k}, {n}] {element!r} is not a shape the tensor cores can do",
             f"legal shapes: {LEGAL}")


@rule("tlx.async_dot")
def async_dot(ctx: Ctx, A: Any, B: Any, acc: Any = None, use_acc: Any = None, pred: Any = None,
              mBarriers: Any = (), two_ctas: Any = False, force_async: Any = False, input_precision: Any = None,
              out_dtype: Any = float32) -> Tensor:
    sa, ea, ha = _operand(A, "async_dot's A", allow_registers=True)
    sb, eb, hb = _operand(B, "async_dot's B", allow_registers=False)
    if len(sa) != 2 or len(sb) != 2:
        fail(MMA, f"async_dot multiplies 2-D operands, got shapes {list(sa)} and {list(sb)}")
    if sa[1] != sb[0]:
        fail(MMA, f"async_dot inner dimensions differ: A is {list(sa)}, B is {list(sb)}", f"legal shapes: {LEGAL}")
    if ea != eb:
        fail(MMA, f"async_dot operand dtypes differ: {ea!r} and {eb!r}")
    check_shape(sa[0], sb[1], sa[1], ea)
    if unwrap(mBarriers) not in ((), [], None) or unwrap(two_ctas) or unwrap(pred) is not None:
        fail("TLXC-TLX-005", "async_dot with mBarriers, two_ctas or pred is Blackwell's tcgen05 form, which tlxc "
                             "does not support yet")
    acc_v = unwrap(acc)
    out = dtype_arg(out_dtype)
    if ea.is_int():
        out = int32
    if acc_v is not None:
        if not isinstance(acc_v, Tensor) or acc_v.shape != (sa[0], sb[1]):
            fail(MMA, f"async_dot's acc must be a [{sa[0]}, {sb[1]}] register tile, got {describe(acc_v)}")
        out = acc_v.dtype
    allowed = (int32,) if ea.is_int() else (float32, float16) if ea == float16 else (float32,)
    if out not in allowed:
        fail(MMA, f"async_dot of {ea!r} inputs accumulates in {' or '.join(repr(d) for d in allowed)}, not {out!r}")
    use = unwrap(use_acc)
    use_handle = None
    if isinstance(use, Tensor):
        if use.shape:
            fail("TLXC-TYPE-001", f"use_acc must be a scalar, got {describe(use)}")
        use_handle = (cast(ctx, use, int1) if use.dtype != int1 else use).handle
    elif use is not None and not const_value(use, "use_acc", (bool, int)):
        acc_v = None  # a constant use_acc=False ignores the accumulator
    precision = unwrap(input_precision)
    if precision is None:
        precision = "tf32"
    if precision not in ops.INPUT_PRECISIONS:
        fail("TLXC-TYPE-001", f"input_precision must be one of {ops.INPUT_PRECISIONS}, got {precision!r}")
    if ea == float32 and precision != "tf32":
        fail(MMA, f"async_dot of fp32 inputs runs in tf32; input_precision={precision!r} is not available")
    rt = TileType((sa[0], sb[1]), out)
    acc_handle = acc_v.handle if isinstance(acc_v, Tensor) else None
    return Tensor(ctx.b.value(ops.AsyncDotOp, [ha, hb], rt, optional={"acc": acc_handle, "use_acc": use_handle},
                              input_precision=precision))


@rule("tlx.async_dot_wait")
def async_dot_wait(ctx: Ctx, pendings: Any, inp: Any) -> Any:
    n = const_value(pendings, "pendings")
    if n < 0:
        fail("TLXC-TYPE-001", f"pendings must be >= 0, got {n}")
    values, rebuild = flatten(unwrap(inp))
    op = ctx.b.create(ops.AsyncDotWaitOp, values, [v.type for v in values], {"pendings": n})
    return rebuild(list(op.results))
