"""Running the partitions of an ``async_tasks`` region together: a cooperative scheduler.

The interpreter runs a program as a whole, so one partition (one replica of one
``async_task``) is one *task*: it runs all its warps at once. Tasks run one at a time and
switch only where one cannot go on -- a ``barrier_wait`` on a phase that has not
completed, a named-barrier wait that not all its threads have reached. The waiting task
hands the baton back to the scheduler with a ``Wait`` (a test of whether it may go on,
and how to describe what it waits for); the scheduler resumes the next task, in round
robin order, whose wait is over. When every task that has not finished is waiting, no
task can ever go on: that is a deadlock, reported with every waiting task, what it waits
for and where.

Each task runs on a Python thread of its own, because the interpreter's steps are plain
nested calls (a wait deep inside loops must suspend them all); the baton makes the
threads take turns, so the program's state is never touched by two at once and a run is
deterministic. The engine knows nothing about partitions: it runs any list of named
tasks. The CTAs of a cluster are such tasks too (``tlxc.interpreter.cluster``); a CTA
that reaches an ``async_tasks`` region *spawns* its partitions into the same engine and
waits for them to end, so the partitions of every CTA of the cluster take turns.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import InterpreterError
from ..ir.core import Location
from .onchip import DEADLOCK, Issued


@dataclass
class TaskInfo:
    """What a running task is: its name for messages, the warps it runs on, and the CTA
    it belongs to (``cluster.Cta``; None for a partition of a lone program). A
    ``partition`` runs some warps of its CTA; a CTA's own task runs all of them."""

    name: str
    warp_start: int
    num_warps: int
    issued: Issued = field(default_factory=Issued)
    cta: Any = None
    partition: bool = True

    @property
    def threads(self) -> int:
        return 32 * self.num_warps

    def warps_text(self) -> str:
        last = self.warp_start + self.num_warps - 1
        return f"warp {last}" if last == self.warp_start else f"warps {self.warp_start}-{last}"


@dataclass
class Wait:
    """Why a task stopped: ``ready()`` says whether it may go on; ``describe()`` says what
    it waits for (called when the report is written, so it shows the state then)."""

    ready: Callable[[], bool]
    describe: Callable[[], str]
    loc: Location | None


class _Abort(BaseException):
    """Unwinds a task's thread when the scheduler gives up (deadlock, or another task
    failed); a BaseException so that no rule catches it on the way."""


class _Task:
    def __init__(self, info: TaskInfo, body: Callable[[], None], engine: "Scheduler",
                 parent: "_Task | None" = None) -> None:
        self.info = info
        self.body = body
        self.engine = engine
        self.parent = parent
        self.joining = False  # waits for the tasks it spawned (they are reported instead)
        self.wait: Wait | None = None
        self.done = False
        self.aborted = False
        self.error: BaseException | None = None
        self.resume = threading.Event()
        self.thread = threading.Thread(target=self.main, name=f"tlxc task {info.name}", daemon=True)

    def main(self) -> None:
        self.resume.wait()
        self.resume.clear()
        try:
            if not self.aborted:
                with np.errstate(all="ignore"):  # as in the launch: wraparound and NaN are results
                    self.body()
        except _Abort:
            pass
        except BaseException as e:  # reported by the scheduler's thread
            self.error = e
        finally:
            self.done = True
            self.engine.back.set()


class Scheduler:
    """Runs tasks one at a time (see the module doc). ``on_switch(info)`` is called
    before a task runs, so that the launch state shows the running task; ``scope`` names
    what the tasks are in a deadlock report ("the async_tasks region", a cluster)."""

    def __init__(self, on_switch: Callable[[TaskInfo], None], scope: str = "the async_tasks region") -> None:
        self.on_switch = on_switch
        self.scope = scope
        self.back = threading.Event()
        self.tasks: list[_Task] = []
        self.current: _Task | None = None

    def run(self, tasks: list[tuple[TaskInfo, Callable[[], None]]], loc: Location | None) -> None:
        """Run every task to its end, or raise the first task's error or a deadlock."""
        self.tasks = [_Task(info, body, self) for info, body in tasks]
        for t in self.tasks:
            t.thread.start()
        try:
            i = 0
            while True:
                live = [t for t in self.tasks if not t.done]
                if not live:
                    return
                n = len(self.tasks)
                pick = None
                for k in range(n):
                    t = self.tasks[(i + k) % n]
                    if not t.done and (t.wait is None or t.wait.ready()):
                        pick, i = t, (i + k) % n
                        break
                if pick is None:
                    raise self.deadlock(live, loc)
                self._resume(pick)
                if pick.error is not None:
                    raise pick.error
                i += 1  # it finished or waits again: the others get their turn first
        finally:
            self._stop()

    def _resume(self, task: _Task) -> None:
        self.current = task
        self.on_switch(task.info)
        self.back.clear()
        task.resume.set()
        self.back.wait()
        self.current = None

    def spawn(self, tasks: list[tuple[TaskInfo, Callable[[], None]]], loc: Location | None) -> None:
        """Called by the running task: run ``tasks`` beside the others, and return when
        they have all ended."""
        parent = self.current
        assert parent is not None, "spawn outside the scheduler's tasks"
        children = [_Task(info, body, self, parent) for info, body in tasks]
        self.tasks.extend(children)
        for t in children:
            t.thread.start()
        parent.joining = True
        try:
            self.block(Wait(lambda: all(t.done for t in children), lambda: "its partitions", loc))
        finally:
            parent.joining = False

    def block(self, wait: Wait) -> None:
        """Called by the running task: stop until ``wait.ready()`` (at once if it is)."""
        if wait.ready():
            return
        task = self.current
        assert task is not None, "a wait outside the scheduler's tasks"
        task.wait = wait
        self.back.set()
        task.resume.wait()
        task.resume.clear()
        if task.aborted:
            raise _Abort()
        task.wait = None

    def deadlock(self, live: list[_Task], loc: Location | None) -> InterpreterError:
        """Every waiting task, what it waits for and where; then the tasks that have
        ended (a peer that never arrives is often one of them)."""
        waiting = [t for t in live if not t.joining]
        lines = [f"deadlock: every task of {self.scope} is waiting and none can go on ({len(waiting)} waiting):"]
        first = None
        for t in waiting:
            assert t.wait is not None
            at = f"line {t.wait.loc.line}" if t.wait.loc is not None else "an unknown line"
            lines.append(f"  {t.info.name} ({t.info.warps_text()}) waits at {at} for {t.wait.describe()}")
            first = first or t.wait.loc
        for t in self.tasks:
            if t.done and (t.parent is None or not t.parent.done):
                lines.append(f"  {t.info.name} ({t.info.warps_text()}) has finished")
        return InterpreterError(DEADLOCK, "\n".join(lines), first or loc)

    def _stop(self) -> None:
        """Unwind the threads of tasks that did not finish."""
        for t in self.tasks:
            if not t.done:
                t.aborted = True
                self.back.clear()
                t.resume.set()
                self.back.wait(timeout=10)
        for t in self.tasks:
            t.thread.join(timeout=10)


__all__ = ["Scheduler", "TaskInfo", "Wait"]
