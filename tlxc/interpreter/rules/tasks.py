"""The rule of ``async_tasks``: its partitions run as cooperative tasks
(``tlxc.interpreter.tasks``), each with its own warps and its own cp.async groups and
TMA stores; they share the program's shared memory, barriers and registers of values
defined before the region. The default partition goes on with the asynchronous work the
program issued before the region (the same warps). In a cluster, where the CTAs
already run as tasks, the CTA spawns its partitions into the cluster's scheduler and
waits for them (``Scheduler.spawn``)."""

from __future__ import annotations

from typing import Any, Callable

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops.tasks import AsyncTasksOp
from ..cluster import switcher
from ..compiler import Compiler
from ..registry import Env, Step, executes
from ..tasks import Scheduler, TaskInfo


@executes(AsyncTasksOp)
def _async_tasks(op: Operation, compiler: Compiler) -> Step:
    assert isinstance(op, AsyncTasksOp)
    state = compiler.state
    parts = op.partitions
    blocks = [compiler.block(p.block) for p in parts]
    loc = op.loc

    def run(env: Env) -> None:
        if state.task is not None:
            raise InterpreterError("TLXC-INTERP-004", "an async_tasks region inside another one", loc)
        cta = state.cta
        outer = state.onchip.issued
        clustered = cta is not None and cta.group.clustered
        infos = [TaskInfo(f"{cta.name}: {p.describe()}" if clustered else p.describe(), p.warp_start, p.num_warps,
                          cta=cta) for p in parts]
        for p, info in zip(parts, infos):
            if p.default:
                info.issued = outer
        tasks = [(info, _body(b, env)) for info, b in zip(infos, blocks)]
        threads = cta.threads if cta is not None else 0
        if cta is not None:
            cta.threads = sum(info.threads for info in infos)
        try:
            if state.scheduler is not None:  # the CTAs of a cluster run as tasks: this CTA's partitions join them
                state.scheduler.spawn(tasks, loc)
                return
            state.scheduler = Scheduler(switcher(state))
            try:
                state.scheduler.run(tasks, loc)
            finally:
                state.scheduler, state.task = None, None
                state.onchip.issued = outer
        finally:
            if cta is not None:
                cta.threads = threads

    return run


def _body(block: Any, env: Env) -> Callable[[], None]:
    return lambda: block.run(env)
