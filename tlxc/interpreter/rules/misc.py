"""Rules for program ids, assertions, device printing, assumptions, compiler hints and inline
assembly (refused)."""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

import numpy as np

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops import inline_asm as A
from ...ir.ops import misc as X
from ...ir.ops import shape as S
from ...ir.types import Kind, PointerType, TileType
from ..numerics import storage_dtype
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


@evaluates(X.ProgramIdOp)
def _program_id(op: Operation, state: LaunchState) -> Fn:
    axis = op.axis
    return lambda: state.pid[axis]


@evaluates(X.NumProgramsOp)
def _num_programs(op: Operation, state: LaunchState) -> Fn:
    value = state.num_programs[op.axis]
    return lambda: value


@evaluates(X.AssertOp)
def _assert(op: Operation, state: LaunchState) -> Fn:
    message, loc = op.message, op.loc

    def check(cond: np.ndarray) -> None:
        if not np.all(cond):
            raise InterpreterError("TLXC-INTERP-002", f"device assertion failed: {message}", loc)

    return check


def index_widths(shape: tuple[int, ...]) -> list[int]:
    """The printed width of each index (Triton's ``%<w>u``: ceil(log10(dim)) digits)."""
    return [math.ceil(math.log10(d)) if d > 0 else 0 for d in shape]


def _formatter(t: Any, hex: bool) -> Callable[[Any], str]:
    """How printf writes one element of type ``t`` (``codegen/nvptx/lower_print.py`` builds
    the same conversions): %i/%u/%lli/%llu, %f of the value as a double, %p for pointers;
    under ``hex``, the element's own bits as 0x and bits/4 digits."""
    if isinstance(t, PointerType):
        return lambda v: f"0x{int(v) & (2 ** 64 - 1):x}"
    if hex:
        digits = max(1, t.bits // 4)
        store, bits = storage_dtype(t), np.dtype(f"uint{max(8, t.bits)}")
        if t.kind == Kind.BOOL:
            return lambda v: f"0x{int(bool(v)):0{digits}x}"
        return lambda v: f"0x{int(np.asarray(v).astype(store).view(bits)):0{digits}x}"
    if t.kind == Kind.FLOAT:
        return lambda v: f"{float(v):f}"
    return lambda v: str(int(v))


@evaluates(X.PrintOp)
def _print(op: Operation, state: LaunchState) -> Fn:
    # One line per element, in row-major order, operand after operand: the lines the GPU
    # prints, each once (a GPU thread prints the elements it holds, so elements that several
    # threads hold, and scalars, appear once per holder there).
    prefix, nargs = op.prefix, len(op.args)
    plans = []
    for v in op.args:
        shape = v.type.shape if isinstance(v.type, TileType) else ()
        plans.append((shape, index_widths(shape), _formatter(v.type.scalar, op.hex)))

    def run(*values: np.ndarray) -> None:
        pid = ", ".join(str(int(p)) for p in state.pid)
        head = f"pid ({pid})"
        lines = [] if nargs else [head + prefix]
        for k, (value, (shape, widths, fmt)) in enumerate(zip(values, plans)):
            arr = np.asarray(value)
            operand = f"(operand {k}) " if nargs > 1 else ""
            for idx in np.ndindex(*shape):
                where = ", ".join(str(i).rjust(w) for i, w in zip(idx, widths))
                lines.append(f"{head} idx ({where}){prefix}{operand}{fmt(arr[idx] if shape else arr)}")
        sys.stdout.write("".join(line + "\n" for line in lines))

    return run


@evaluates(X.AssumeOp)
def _assume(op: Operation, state: LaunchState) -> Fn:
    # The code generators may optimise on an assumption, so a false one is a bug in the
    # kernel that the GPU would not report: the interpreter does.
    loc = op.loc

    def check(cond: np.ndarray) -> None:
        if not np.all(cond):
            raise InterpreterError(
                "TLXC-INTERP-002",
                f"device assertion failed: tl.assume condition is false in program {state.memory.program}",
                loc)

    return check


@evaluates(A.InlineAsmOp)
def _inline_asm(op: Operation, state: LaunchState) -> Fn:
    loc, asm = op.loc, op.asm

    def run(*args: np.ndarray) -> None:
        raise InterpreterError("TLXC-INTERP-008", f"tl.inline_asm_elementwise reached: the interpreter cannot execute "
                               f"the PTX {asm!r}", loc)

    return run


@evaluates(X.MultipleOfOp, X.MaxContiguousOp, X.MaxConstancyOp, S.ConvertLayoutOp)
def _hint(op: Operation, state: LaunchState) -> Fn:
    # (a layout conversion moves no value: the lowered IR, after ``layouts``, runs too)
    return lambda x: x
