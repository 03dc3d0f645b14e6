"""The rule of ``async_tasks``: its partitions run as cooperative tasks
(``tlxc.interpreter.tasks``), each with its own warps and its own cp.async groups and
TMA stores; they share the program's shared memory, barriers and registers of values
defined before the region. The default partition goes on with the asynchronous work the
program issued before the region (the same warps)."""

from __future__ import annotations

from typing import Any, Callable

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops.tasks import AsyncTasksOp
from ..compiler import Compiler
from ..registry import Env, LaunchState, Step, executes
from ..tasks import Scheduler, TaskInfo


@executes(AsyncTasksOp)
def _async_tasks(op: Operation, compiler: Compiler) -> Step:
    assert isinstance(op, AsyncTasksOp)
    state = compiler.state
    parts = op.partitions
    blocks = [compiler.block(p.block) for p in parts]
    loc = op.loc

    def run(env: Env) -> None:
        if state.scheduler is not None:
            raise InterpreterError("TLXC-INTERP-004", "an async_tasks region inside another one", loc)
        outer = state.onchip.issued
        infos = [TaskInfo(p.describe(), p.warp_start, p.num_warps) for p in parts]
        for p, info in zip(parts, infos):
            if p.default:
                info.issued = outer
        scheduler = Scheduler(_switcher(state))
        state.scheduler = scheduler
        try:
            scheduler.run([(info, _body(b, env)) for info, b in zip(infos, blocks)], loc)
        finally:
            state.scheduler, state.task = None, None
            state.onchip.issued = outer

    return run


def _switcher(state: LaunchState) -> Callable[[TaskInfo], None]:
    def switch(info: TaskInfo) -> None:
        state.task = info
        state.onchip.issued = info.issued

    return switch


def _body(block: Any, env: Env) -> Callable[[], None]:
    return lambda: block.run(env)
