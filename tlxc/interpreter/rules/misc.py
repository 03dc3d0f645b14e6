"""Rules for program ids, assertions, assumptions, compiler hints and inline assembly (refused)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops import inline_asm as A
from ...ir.ops import misc as X
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


@evaluates(X.MultipleOfOp, X.MaxContiguousOp)
def _hint(op: Operation, state: LaunchState) -> Fn:
    return lambda x: x
