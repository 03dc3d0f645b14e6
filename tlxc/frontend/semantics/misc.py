"""Program ids, assertions, hints, compile-time and device printing."""

from __future__ import annotations

import string
from typing import Any

from ...ir import ops
from ...ir.ops.misc import MAX_PRINT_VALUES, printable
from ...ir.types import PointerType, TileType, int32, int64
from ..values import Tensor, describe, is_constexpr, unwrap
from .arith import binary, logical_not, to_bool
from .base import Ctx, const_value, fail, rule, to_tensor
from .tlx_tasks import kernel_facts


def _axis(axis: Any, what: str) -> int:
    a = const_value(axis, f"{what}'s axis")
    if a not in (0, 1, 2):
        fail("TLXC-SHAPE-003", f"{what} axis must be 0, 1 or 2, got {a}")
    return a


@rule("program_id")
def program_id(ctx: Ctx, axis: Any) -> Tensor:
    return Tensor(ctx.b.value(ops.ProgramIdOp, [], int32, axis=_axis(axis, "tl.program_id")))


@rule("num_programs")
def num_programs(ctx: Ctx, axis: Any) -> Tensor:
    return Tensor(ctx.b.value(ops.NumProgramsOp, [], int32, axis=_axis(axis, "tl.num_programs")))


@rule("static_assert")
def static_assert(ctx: Ctx, cond: Any, msg: Any = "") -> None:
    c = unwrap(cond)
    if isinstance(c, Tensor):
        fail("TLXC-CONSTEXPR-001", "tl.static_assert needs a compile-time condition; use tl.device_assert for "
                                   "runtime values")
    if not c:
        text = unwrap(msg)
        fail("TLXC-ASSERT-001", "static assertion failed" + (f": {text}" if text else ""))


@rule("static_print")
def static_print(ctx: Ctx, *args: Any, **kwargs: Any) -> None:
    """Prints at compile time; a tensor as Triton spells it (``int32[constexpr[128]]``,
    ``fp32[]`` for a scalar), which tests of Triton's output compare."""
    def text(a: Any) -> Any:
        u = unwrap(a)
        if not isinstance(u, Tensor):
            return u
        shape = u.type.shape if isinstance(u.type, TileType) else ()
        return f"{u.dtype.name}[{', '.join(f'constexpr[{d}]' for d in shape)}]"
    print(*(text(a) for a in args))


@rule("cuda.smid")
def smid(ctx: Ctx) -> Tensor:
    return Tensor(ctx.b.value(ops.SpecialRegisterOp, [], int32, register="smid"))


@rule("cuda.globaltimer")
def globaltimer(ctx: Ctx) -> Tensor:
    return Tensor(ctx.b.value(ops.SpecialRegisterOp, [], int64, register="globaltimer"))


@rule("cuda.num_warps")
def num_warps(ctx: Ctx) -> int:
    return _kernel_warps()


@rule("cuda.num_threads")
def num_threads(ctx: Ctx) -> int:
    return _kernel_warps() * 32


def _kernel_warps() -> int:
    facts = kernel_facts()
    # inside a warp-specialized task: the task's own warps, as in Triton
    inner = next((f.num_warps for f in reversed(facts.frames) if f.num_warps is not None), None)
    return facts.num_warps if inner is None else inner


class WhileCondition:
    """What ``tl.condition(c, disable_licm)`` gives: the condition of the ``while`` it heads
    (``frontend/control.py`` unwraps it there and nowhere else). ``disable_licm`` is checked
    and dropped: tlxc moves no code out of while loops."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __bool__(self) -> bool:
        fail("TLXC-CALL-002", "tl.condition(...) is the condition of a while loop; it has no truth value elsewhere",
             "write the condition itself here, or use tl.condition as `while tl.condition(c):`")
        return False  # not reached


@rule("condition")
def condition(ctx: Ctx, arg1: Any, disable_licm: Any = False) -> WhileCondition:
    """``tl.condition(c, disable_licm=False)``: Triton's wrapper of a while loop's condition."""
    const_value(disable_licm, "tl.condition's disable_licm", (bool,))
    return WhileCondition(arg1)


@rule("device_print")
def device_print(ctx: Ctx, prefix: Any, *args: Any, hex: Any = False) -> None:
    """``tl.device_print(prefix, *args, hex=False)`` (and ``print(prefix, *args)``): each
    value is printed element by element at run time, in Triton's format (``ir/ops/misc.py``
    PrintOp)."""
    text = const_value(prefix, "tl.device_print's prefix", (str,))
    as_hex = const_value(hex, "tl.device_print's hex", (bool,))
    if any(ch not in string.printable for ch in text):
        fail("TLXC-CALL-002", f"tl.device_print's prefix {text!r} has characters other than printable ASCII",
             "printf on the GPU prints bytes; keep the prefix to printable ASCII")
    if len(args) > MAX_PRINT_VALUES:
        fail("TLXC-CALL-002", f"tl.device_print prints at most {MAX_PRINT_VALUES} values per call, got {len(args)}",
             "split the values over several tl.device_print calls")
    values = []
    for i, a in enumerate(args):
        u = unwrap(a)
        if not isinstance(u, Tensor) and not (isinstance(u, (bool, int, float))):
            fail("TLXC-TYPE-001", f"tl.device_print cannot print {describe(u)} (value {i + 1})",
                 "print tensors, scalars or numbers")
        t = to_tensor(ctx, u)
        if not isinstance(t.dtype, PointerType) and not printable(t.dtype):
            fail("TLXC-TYPE-001", f"tl.device_print cannot print tl.{t.dtype!r} values (value {i + 1}): printf has no "
                                  "conversion for them", "cast them first, e.g. x.to(tl.float32)")
        values.append(t.handle)
    # Triton's spelling of the prefix: with values, it ends in ": "; a longer one starts
    # with a space (it follows the index in the printed line)
    if values and not text.endswith(" "):
        text += " "
    if values and not text.endswith(": "):
        text = text[:-1] + ": "
    if len(text) > 2 and not text.startswith(" "):
        text = " " + text
    ctx.b.create(ops.PrintOp, values, [], {"prefix": text, "hex": as_hex})


# A thread count above any work-group's (1024 threads): the code generators read
# ``named_barrier_wait {bar_id = 0}`` over at least every thread as the CTA barrier
# (``bar.sync 0`` on NVIDIA, ``s_barrier`` on AMD), which is what the hazard pass inserts too.
ALL_THREADS = 2048


@rule("debug_barrier")
def debug_barrier(ctx: Ctx) -> None:
    """``tl.debug_barrier()``: every thread of the program waits here (``__syncthreads``)."""
    ctx.b.create(ops.NamedBarrierWaitOp, [], [], {"bar_id": 0, "threads": ALL_THREADS})


@rule("device_assert")
def device_assert(ctx: Ctx, cond: Any, msg: Any = "", mask: Any = None) -> None:
    text = str(const_value(msg, "message", (str,)))
    c = unwrap(cond)
    if is_constexpr(c) and bool(c) and mask is None:
        return
    t = to_bool(ctx, c)
    if unwrap(mask) is not None:
        t = binary(ctx, "or", t, logical_not(ctx, to_bool(ctx, mask)))
    ctx.b.create(ops.AssertOp, [t.handle], [], {"message": text})


def _hint(ctx: Ctx, cls: type, input: Any, values: Any, what: str) -> Tensor:
    t = unwrap(input)
    if not isinstance(t, Tensor):
        fail("TLXC-TYPE-001", f"{what} needs a tensor, got {describe(t)}")
    vals = unwrap(values)
    vals = list(vals) if isinstance(vals, (list, tuple)) else [vals]
    vals = [const_value(v, f"{what} value") for v in vals]
    want = max(1, len(t.shape))
    if len(vals) != want:
        if len(vals) == 1:
            vals = vals * want
        else:
            fail("TLXC-SHAPE-003", f"{what} needs {want} values for a tile of rank {len(t.shape)}, got {len(vals)}")
    if any(v < 1 for v in vals):
        fail("TLXC-TYPE-001", f"{what} values must be positive, got {vals}")
    hinted = ctx.b.value(cls, [t.handle], t.type, values=tuple(vals))
    # As in Triton, where a hint annotates the value itself: the tensor reads the hinted
    # value from here on, also when the call's result is dropped
    # (``tl.multiple_of(offs, 16)`` as a statement). Only where both are in one block: a
    # value from outside a loop or branch keeps its definition there.
    src = t.handle
    where = getattr(src, "block", None) or getattr(getattr(src, "owner", None), "parent", None)
    if where is ctx.b.block:
        t.handle = hinted
    return Tensor(hinted)


@rule("multiple_of")
def multiple_of(ctx: Ctx, input: Any, values: Any) -> Tensor:
    return _hint(ctx, ops.MultipleOfOp, input, values, "tl.multiple_of")


@rule("max_contiguous")
def max_contiguous(ctx: Ctx, input: Any, values: Any) -> Tensor:
    return _hint(ctx, ops.MaxContiguousOp, input, values, "tl.max_contiguous")


@rule("max_constancy")
def max_constancy(ctx: Ctx, input: Any, values: Any) -> Tensor:
    return _hint(ctx, ops.MaxConstancyOp, input, values, "tl.max_constancy")


@rule("assume")
def assume(ctx: Ctx, cond: Any) -> None:
    c = unwrap(cond)
    if is_constexpr(c):
        if not c:
            fail("TLXC-ASSERT-001", "tl.assume of a condition that is false at compile time")
        return
    ctx.b.create(ops.AssumeOp, [to_bool(ctx, c).handle], [])
