"""On-chip state of one program in the interpreter: shared-memory buffers, mbarriers and
the bookkeeping of asynchronous copies.

A program runs as one unit (all its threads at once), so "the CTA arrives" is one
arrival, and a wait that cannot be satisfied by the time it is reached never will be:
it is reported as a deadlock. Asynchronous copies move their data at once but the bytes
they write stay *pending* until the matching completion (``async_load_wait_group`` for
cp.async, a ``barrier_wait`` on the phase a TMA load completed for TMA); reading pending
bytes, or bytes nothing has written yet, is an error that names the buffer's line.

The other direction matters too: a TMA store (``async_descriptor_store``) reads its
shared-memory source asynchronously, so the program may not write those bytes until
``async_descriptor_store_wait(pendings)`` has left at most ``pendings`` stores
outstanding (each store is one bulk group). The interpreter does the store at once, so
it would never see old and new data mixed as the GPU does; instead every outstanding
store marks the bytes it reads (``BulkRead``), and a write to any of them is an error
that names the line of the write and of the store.

Shared memory is byte arrays (``Arena``) with a state byte per data byte; a buffer value
is a ``View`` (arena, byte offset, shape, byte strides, dtype), so views, slices,
transposes, reinterpretation and ``reuse`` aliasing all read and write the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, TypeVar

import numpy as np

from ..errors import InterpreterError
from ..ir.core import Location

UNWRITTEN, VALID, PENDING = 0, 1, 2
NOT_READY = "TLXC-INTERP-005"
DEADLOCK = "TLXC-INTERP-004"
OVERWRITE = "TLXC-INTERP-007"
T = TypeVar("T")


class Arena:
    """The bytes of one allocation (``local_alloc``), what state each byte is in, and the
    outstanding TMA stores that still read some of them. ``origin`` is the op that
    allocated it: the same op's arena in a peer CTA is the peer's copy (``OnChip.peer``)."""

    def __init__(self, nbytes: int, loc: Location | None, origin: object = None) -> None:
        self.data = np.zeros(nbytes, np.uint8)
        self.state = np.zeros(nbytes, np.uint8)
        self.loc = loc
        self.origin = origin
        self.bulk_reads: list[BulkRead] = []


@dataclass(eq=False)  # removed from lists by identity (its indices are an array)
class BulkRead:
    """The source bytes of one TMA store that has not been waited for."""

    arena: Arena
    indices: np.ndarray
    loc: Location | None


@dataclass(frozen=True)
class View:
    """A buffer: ``shape`` elements of ``dtype`` at byte ``offset`` of ``arena`` with byte
    ``strides``. ``count`` > 0 for an array of buffers (``shape`` is then one buffer's and
    ``step`` the bytes between buffers)."""

    arena: Arena
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype
    count: int = 0
    step: int = 0

    @staticmethod
    def contiguous(arena: Arena, offset: int, shape: tuple[int, ...], dtype: np.dtype) -> "View":
        strides, s = [], dtype.itemsize
        for d in reversed(shape):
            strides.append(s)
            s *= d
        return View(arena, offset, shape, tuple(reversed(strides)), dtype)

    def element_offsets(self) -> np.ndarray:
        """Byte offset in the arena of every element, shaped like the buffer."""
        off = np.full(self.shape, self.offset, np.int64)
        for axis, (n, s) in enumerate(zip(self.shape, self.strides)):
            shape = [1] * len(self.shape)
            shape[axis] = n
            off += (np.arange(n, dtype=np.int64) * s).reshape(shape)
        return off

    def byte_indices(self) -> np.ndarray:
        """Every byte the buffer covers (flat, possibly repeated)."""
        return (self.element_offsets().reshape(-1, 1) + np.arange(self.dtype.itemsize)).reshape(-1)

    def read(self) -> np.ndarray:
        idx = self.element_offsets()
        raw = self.arena.data[(idx[..., None] + np.arange(self.dtype.itemsize)).reshape(-1)]
        return raw.view(self.dtype).reshape(self.shape).copy()

    def write(self, value: np.ndarray, state: int = VALID, what: str = "a write",
              loc: Location | None = None) -> np.ndarray:
        """Store ``value``; returns the byte indices written. ``what`` at ``loc`` names the
        write in the error for overwriting the source of an outstanding TMA store."""
        raw = np.ascontiguousarray(np.broadcast_to(value, self.shape).astype(self.dtype, copy=False))
        return self.write_bytes(raw.reshape(-1).view(np.uint8), state, what, loc)

    def write_bytes(self, raw: np.ndarray, state: int = VALID, what: str = "a write",
                    loc: Location | None = None) -> np.ndarray:
        """Store ``raw`` (uint8, the buffer's bytes in element order) as ``write`` does."""
        idx = self.byte_indices()
        for read in self.arena.bulk_reads:
            if np.isin(idx, read.indices, assume_unique=False).any():
                where = f"allocated at line {self.arena.loc.line}" if self.arena.loc is not None else "buffer"
                store = f"at line {read.loc.line}" if read.loc is not None else "earlier"
                raise InterpreterError(
                    OVERWRITE, f"{what} writes a buffer ({where}) that the TMA store {store} "
                               "(async_descriptor_store) may still be reading: a TMA store reads its shared-memory "
                               "source asynchronously, so on the GPU the store can send the new data, or a mix",
                    loc)
        self.arena.data[idx] = raw
        self.arena.state[idx] = state
        return idx


@dataclass
class Barrier:
    """One mbarrier: arrivals per phase, what the current phase still expects, and how
    many phases have completed (the current phase's parity is ``completed % 2``)."""

    count: int
    pending: int = 0
    tx: int = 0
    completed: int = 0
    loc: Location | None = None
    index: int = 0  # in the array allocated at ``loc``
    origin: object = None  # the op that allocated the array (see ``Arena.origin``)
    size: int = 1  # of that array

    def describe(self) -> str:
        where = f" allocated at line {self.loc.line}" if self.loc is not None else ""
        return f"mbarrier {self.index} of the array{where}"

    def __post_init__(self) -> None:
        self.pending = self.count

    def _settle(self) -> None:
        if self.pending <= 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count
            self.tx = 0

    def arrive(self, n: int, loc: Location | None) -> None:
        if n > self.pending:
            raise InterpreterError(
                DEADLOCK, f"{n} arrivals on an mbarrier that expects only {self.pending} more in this phase "
                          f"(initialized for {self.count}); the extra arrivals would complete the phase early", loc)
        self.pending -= n
        self._settle()

    def expect(self, nbytes: int) -> None:
        self.tx += nbytes

    def complete_tx(self, nbytes: int) -> None:
        self.tx -= nbytes
        self._settle()

    def phase_done(self, parity: int) -> bool:
        """Has the phase with this parity completed (what ``barrier_wait`` waits for)?"""
        return self.completed % 2 != parity % 2


def barrier_array(count: int, size: int, loc: Location | None, origin: object) -> list[Barrier]:
    """The mbarriers of one ``alloc_barriers``, each expecting ``count`` arrivals."""
    return [Barrier(count, loc=loc, index=i, origin=origin, size=size) for i in range(size)]


@dataclass
class PendingCopy:
    """Bytes written by an async copy that the program may not read yet."""

    arena: Arena
    indices: np.ndarray
    loc: Location | None
    barrier: Barrier | None = None
    phase: int = 0


@dataclass
class Issued:
    """The asynchronous work that a group of threads tracks for itself: its cp.async
    groups and its outstanding TMA stores (each thread's own in hardware; a program's,
    or one partition's under warp specialization, here)."""

    open_group: list[PendingCopy] = field(default_factory=list)
    groups: list[list[PendingCopy]] = field(default_factory=list)
    stores: list[BulkRead] = field(default_factory=list)  # outstanding TMA stores, oldest first


@dataclass
class NamedBarrier:
    """A hardware named barrier under warp specialization: threads arrived in the
    current round, and how many rounds have completed."""

    threads: int
    arrived: int = 0
    rounds: int = 0


@dataclass
class OnChip:
    """Everything on chip for one program; a new one per program. ``issued`` is the
    running partition's (the scheduler swaps it, ``tlxc.interpreter.tasks``)."""

    issued: Issued = field(default_factory=Issued)
    tma: list[PendingCopy] = field(default_factory=list)
    named: dict[int, NamedBarrier] = field(default_factory=dict)
    clock: int = 0
    # what each allocating op gave most recently, so that a peer CTA finds "the same
    # buffer" (its origin op) here; ``unclaimed`` holds those a peer reached first
    allocations: dict[object, object] = field(default_factory=dict)
    unclaimed: set[object] = field(default_factory=set)

    # -- allocations, and a peer's view of them ---------------------------------------------
    def allocate(self, origin: object, make: Callable[[], T]) -> T:
        """This CTA runs the allocating op ``origin``: a new allocation, or the one a peer
        already wrote into (shared memory is laid out when the CTA starts, so a peer may
        reach a buffer before the CTA's own code gets to its allocation)."""
        if origin in self.unclaimed:
            self.unclaimed.discard(origin)
            return self.allocations[origin]  # type: ignore[return-value]
        made = self.allocations[origin] = make()
        return made

    def peer(self, origin: object, make: Callable[[], T]) -> T:
        """This CTA's allocation of ``origin`` as a peer reaches it (made now if this CTA
        has not run the op yet)."""
        if origin not in self.allocations:
            self.allocations[origin] = make()
            self.unclaimed.add(origin)
        return self.allocations[origin]  # type: ignore[return-value]

    def peer_view(self, view: View) -> View:
        """``view`` (a buffer of another CTA) in this CTA: the same bytes of the same
        allocation."""
        src = view.arena
        arena = self.peer(src.origin, lambda: Arena(src.data.size, src.loc, src.origin))
        return replace(view, arena=arena)

    def peer_barrier(self, bar: Barrier) -> Barrier:
        """``bar`` (an mbarrier of another CTA) in this CTA."""
        bars: list[Barrier] = self.peer(bar.origin, lambda: barrier_array(bar.count, bar.size, bar.loc, bar.origin))
        return bars[bar.index]

    @property
    def open_group(self) -> list[PendingCopy]:
        return self.issued.open_group

    # -- cp.async ----------------------------------------------------------------------------
    def commit(self) -> None:
        self.issued.groups.append(self.issued.open_group)
        self.issued.open_group = []

    def wait_groups(self, pendings: int) -> None:
        groups = self.issued.groups
        keep = groups[len(groups) - pendings:] if pendings else []
        for group in groups[:len(groups) - len(keep)]:
            for copy in group:
                _settle(copy)
        self.issued.groups = keep

    # -- TMA -----------------------------------------------------------------------------------
    def barrier_passed(self, bar: Barrier) -> None:
        """A wait on ``bar`` returned: copies that completed its finished phases are visible."""
        still = []
        for copy in self.tma:
            if copy.barrier is bar and copy.phase < bar.completed:
                _settle(copy)
            else:
                still.append(copy)
        self.tma = still


    def store_started(self, view: View, loc: Location | None) -> None:
        """A TMA store (one bulk group) from ``view`` is now reading it."""
        read = BulkRead(view.arena, np.unique(view.byte_indices()), loc)
        self.issued.stores.append(read)
        view.arena.bulk_reads.append(read)

    def stores_waited(self, pendings: int) -> None:
        """``async_descriptor_store_wait(pendings)``: all but the newest ``pendings``
        stores have read their sources."""
        stores = self.issued.stores
        done = stores[:max(len(stores) - pendings, 0)]
        self.issued.stores = stores[len(done):]
        for read in done:
            read.arena.bulk_reads.remove(read)


def _settle(copy: PendingCopy) -> None:
    state = copy.arena.state
    sel = copy.indices[state[copy.indices] == PENDING]
    state[sel] = VALID


def check_readable(view: View, what: str, loc: Location | None) -> None:
    """Every byte of ``view`` holds data the program may read, or an error saying why not."""
    st = view.arena.state[view.byte_indices()]
    if (st == VALID).all():
        return
    where = f"allocated at line {view.arena.loc.line}" if view.arena.loc is not None else "buffer"
    if (st == PENDING).any():
        raise InterpreterError(
            NOT_READY, f"{what} reads a buffer ({where}) whose asynchronous copy has not completed: wait for it "
                       "first (barrier_wait on its mbarrier for TMA, async_load_wait_group for async_load)", loc)
    raise InterpreterError(
        NOT_READY, f"{what} reads a buffer ({where}) before anything was written to it", loc)
