"""The tables of interpreter rules, one rule per op class, and the launch state they see.

A rule turns one op into Python code *once*, before any program runs, so the hot loop
never dispatches on op classes. There are two kinds:

* ``@evaluates(OpClass)``: ``rule(op, state) -> fn``, where ``fn`` maps the operand values
  (numpy arrays, in ``op.operands`` order) to the result value (a tuple for several
  results, None for none). Most ops are this kind; the compiler wires ``fn`` to the
  operand and result slots.
* ``@executes(OpClass)``: ``rule(op, compiler) -> step``, where ``step(env)`` reads and
  writes the slot list itself. Ops with regions (``for``, ``while``, ``if``) are this
  kind: they compile their blocks through the compiler and run them.

Rules are found by the op's class, or the nearest registered base class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..ir.core import Operation
from .memory import Memory
from .onchip import OnChip

if TYPE_CHECKING:
    from .compiler import Compiler

Env = list[Any]
Step = Callable[[Env], None]
PureRule = Callable[[Operation, "LaunchState"], Callable[..., Any]]
ExecRule = Callable[[Operation, "Compiler"], Step]

PURE_RULES: dict[type[Operation], PureRule] = {}
EXEC_RULES: dict[type[Operation], ExecRule] = {}


@dataclass
class LaunchState:
    """What rules may read at run time besides operands: memory, the program id, the
    number of threads of a program and its on-chip state (shared-memory buffers,
    barriers, async copies).

    ``pid`` holds 0-d int32 arrays; it, ``onchip`` and ``cta`` (the program as a member
    of its cluster, ``tlxc.interpreter.cluster.Cta``) are replaced by the driver before
    each program, and by the scheduler when the CTAs of a cluster take turns.
    ``scheduler`` runs the CTAs of a cluster or the partitions of an ``async_tasks``
    region (``tlxc.interpreter.tasks``), None for a lone program outside a region;
    ``task`` is the running partition, None outside a region.
    """

    memory: Memory
    grid: tuple[int, int, int]
    pid: tuple[np.ndarray, ...] = field(default=())
    num_threads: int = 128
    onchip: OnChip = field(default_factory=OnChip)
    cluster: tuple[int, int, int] = (1, 1, 1)  # the cluster shape the kernel was compiled for
    scheduler: Any = None
    task: Any = None
    cta: Any = None

    @property
    def active_threads(self) -> int:
        """The threads running the current op: the partition's, or the whole program's."""
        return self.task.threads if self.task is not None else self.num_threads

    @property
    def num_programs(self) -> tuple[np.ndarray, ...]:
        return tuple(np.asarray(n, dtype=np.int32) for n in self.grid)


def evaluates(*classes: type[Operation]) -> Callable[[PureRule], PureRule]:
    """Register a rule that gives a function of the operand values."""

    def deco(rule: PureRule) -> PureRule:
        for cls in classes:
            PURE_RULES[cls] = rule
        return rule

    return deco


def executes(*classes: type[Operation]) -> Callable[[ExecRule], ExecRule]:
    """Register a rule that gives a step over the slot list (ops with regions)."""

    def deco(rule: ExecRule) -> ExecRule:
        for cls in classes:
            EXEC_RULES[cls] = rule
        return rule

    return deco


def lookup(cls: type[Operation]) -> tuple[str, Any] | None:
    """``("pure", rule)`` or ``("exec", rule)`` for ``cls``, or None without a rule."""
    for klass in cls.__mro__:
        if klass in EXEC_RULES:
            return "exec", EXEC_RULES[klass]
        if klass in PURE_RULES:
            return "pure", PURE_RULES[klass]
    return None
