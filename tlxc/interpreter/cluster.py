"""The CTAs of a thread-block cluster in the interpreter: who they are, how one reaches
a peer, and the cluster-wide barrier.

A clustered launch (``cluster_dims`` of more than one CTA) runs one cluster at a time;
the CTAs of a cluster run together as cooperative tasks (``tlxc.interpreter.tasks``),
each with its own value slots and its own on-chip state (``OnChip``), switching where one
waits: an mbarrier wait, a named barrier, a cluster barrier. A CTA's partitions
(``async_tasks``) join the same tasks, so a producer in one CTA and a consumer in its
peer take turns as they would on the GPU.

*Distributed shared memory.* A buffer value is a ``View`` of this CTA's ``Arena``; the
peer's copy is the arena that the same allocating op (``Arena.origin``) gave in the peer
CTA, at the same byte offset (``OnChip.peer_view``), as ``mapa`` maps an address into the
peer. An mbarrier is found the same way (``OnChip.peer_barrier``). Shared memory is laid
out when a CTA starts, so a peer may write a buffer before the CTA's own code reaches
its allocation; the interpreter then makes the arena at the write and the CTA's
allocation takes it over.

*Cluster barriers* count threads: a round completes when every thread of every CTA has
arrived (a CTA in an ``async_tasks`` region has the threads of all its partitions). The
compiler's own cluster sync after ``alloc_barriers`` (so that peers find the barriers
initialized) is one such round too. The one the code generator adds before a CTA exits
(a peer may still write into its shared memory) is not modelled: the writes of a peer
into a CTA that has finished change nothing the kernel can observe, and a CTA that ends
without a cluster barrier its peers wait at is reported as a deadlock at their line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import InterpreterError
from ..ir.core import Location
from .onchip import DEADLOCK, OnChip
from .tasks import TaskInfo, Wait

Program = tuple[int, int, int]


@dataclass
class Cta:
    """One program of the grid, as a member of its cluster. ``threads`` is how many
    threads it runs now: the program's, or inside an ``async_tasks`` region the sum of its
    partitions'."""

    program: Program
    rank: int
    onchip: OnChip
    group: "ClusterGroup"
    threads: int
    pid: tuple[np.ndarray, ...] = ()

    def __post_init__(self) -> None:
        self.pid = tuple(np.asarray(p, np.int32) for p in self.program)

    @property
    def name(self) -> str:
        return f"CTA {self.rank} (program {self.program})"


@dataclass
class ClusterGroup:
    """The CTAs of one cluster, by rank, and its barrier's count per CTA."""

    shape: tuple[int, int, int]
    first: Program  # the program of rank 0
    ctas: list[Cta] = field(default_factory=list)
    arrived: list[int] = field(default_factory=list)
    rounds: int = 0

    @property
    def clustered(self) -> bool:
        return len(self.ctas) > 1

    def describe(self) -> str:
        last = self.ctas[-1].program
        return f"the cluster of programs {self.first} to {last}"

    def peer(self, rank: np.ndarray | int, what: str, loc: Location | None) -> Cta:
        """The CTA of rank ``rank``, or an error naming ``what`` reaches outside."""
        r = int(rank)
        if not 0 <= r < len(self.ctas):
            raise InterpreterError("TLXC-INTERP-001", f"{what} names CTA rank {r}, outside the cluster of "
                                                      f"{len(self.ctas)} CTAs", loc)
        return self.ctas[r]


def make_cluster(first: Program, shape: tuple[int, int, int], threads: int) -> ClusterGroup:
    """The CTAs of the cluster whose rank-0 program is ``first``; rank ``x + cx (y + cy z)``
    for the CTA at ``(x, y, z)`` within the cluster, as ``%cluster_ctarank`` counts."""
    group = ClusterGroup(shape, first)
    cx, cy, cz = shape
    for z in range(cz):
        for y in range(cy):
            for x in range(cx):
                program = (first[0] + x, first[1] + y, first[2] + z)
                group.ctas.append(Cta(program, len(group.ctas), OnChip(), group, threads))
    group.arrived = [0] * len(group.ctas)
    return group


def cluster_barrier(state: Any, what: str, loc: Location | None) -> None:
    """The running threads (a CTA's, or one partition's) arrive at the cluster barrier and
    wait until every thread of every CTA of the cluster has."""
    cta: Cta = state.cta
    group = cta.group
    if state.scheduler is None:  # one CTA, not warp specialized: its threads are in step
        return
    group.arrived[cta.rank] += state.active_threads
    if group.arrived[cta.rank] > cta.threads:
        raise InterpreterError(DEADLOCK, f"{group.arrived[cta.rank]} threads of {cta.name} reached {what}, which "
                                         f"has {cta.threads}: some threads arrived twice in one round", loc)
    round_ = group.rounds
    if all(n == c.threads for n, c in zip(group.arrived, group.ctas)):
        group.arrived = [0] * len(group.ctas)
        group.rounds += 1
        return
    state.scheduler.block(Wait(lambda: group.rounds > round_, lambda: _barrier_state(group, what), loc))


def _barrier_state(group: ClusterGroup, what: str) -> str:
    parts = []
    for n, c in zip(group.arrived, group.ctas):
        parts.append(f"CTA {c.rank} {n} of {c.threads} threads")
    return f"{what}, which every thread of every CTA must reach ({', '.join(parts)} have reached it)"


def switcher(state: Any) -> Callable[[TaskInfo], None]:
    """What the scheduler calls before it runs a task: the launch state shows the task's
    CTA (its on-chip state, program id) and partition."""

    def switch(info: TaskInfo) -> None:
        cta: Cta | None = info.cta
        if cta is not None and state.cta is not cta:
            state.cta, state.onchip, state.pid = cta, cta.onchip, cta.pid
            state.memory.program = cta.program
        state.task = info if info.partition else None
        state.onchip.issued = info.issued

    return switch


__all__ = ["Cta", "ClusterGroup", "make_cluster", "cluster_barrier", "switcher"]
