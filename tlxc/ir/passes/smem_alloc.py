"""Shared-memory allocation: a static byte offset for every ``local_alloc`` and
``barrier_alloc`` of a kernel, reusing bytes between allocations that are never live
at the same time.

Expects: buffer layouts assigned (``buffer_layouts``); shared-memory buffers only
(tensor memory is the code generator's to refuse or allocate).
Guarantees (``run`` writes the plan into the IR: ``smem_offset`` on every allocation,
``smem_total`` on the kernel; ``read_plan(func)`` gives it back as an ``SmemPlan`` to
the passes and emitters after it; ``plan(func)`` computes it without writing):

* each allocation takes ``num`` x buffer bytes (8 bytes per mbarrier) at an offset
  aligned for what reads it: a whole swizzle atom for NVMMA-swizzled buffers (1024 bytes
  for the 128-byte swizzle, 512 and 256 for 64 and 32: TMA and wgmma swizzle on address
  bits), 16 bytes for plain buffers (the widest vector access), 8 for mbarriers;
* ``local_alloc(reuse=a)`` shares ``a``'s offset (it may not be larger than ``a``);
* a ``storage_alias_spec`` takes its ``size`` bytes, aligned for the most demanding of
  its allocations; each allocation made with ``reuse=spec`` sits at the spec's offset
  plus its ``alias`` offset, buffer ``i`` ``i x step`` bytes further (``index_step``).
  Placements that break a buffer's alignment are refused at the allocation's line;
* liveness: an allocation is live from its definition to the last use of any view of it
  (a use inside a loop it was allocated outside of lasts to the loop's end; a buffer an
  asynchronous copy or MMA touches lasts until the last op that retires that kind of
  work -- the ops whose class says it ``RETIRES`` it: ``async_wait_group``,
  ``barrier_wait``, ``async_dot_wait``, ``tma_store_wait`` -- or to the kernel's end when
  none follows; a TMA load's work is retired only by a ``barrier_wait`` on its own
  mbarrier allocation; a use in an ``async_tasks`` partition of an allocation made outside it
  lasts to the region's end, since partitions run side by side; an allocation made in a
  partition has its own range in that partition, and is kept apart from every
  allocation made in another partition of the region (so the staging buffers of two
  ``desc.store`` one after the other in one partition share bytes, as in Triton, while
  those of two replicas do not); a wgmma or cp.async
  followed in its own block (or, inside a loop or ``if``, after it in the block around
  it) by a wait with no pendings is done at that wait, so the buffers of one loop are
  free for the next). Allocations whose
  live ranges are disjoint may share bytes (first fit, largest first). mbarriers are
  live for the whole kernel: reusing their bytes would need ``mbarrier.inval``;
* ``total`` is the end of the last allocation; the code generator's scratch area (layout
  conversions, reductions) starts at ``scratch_offset`` after it, so it never overlaps a
  live buffer.

Refuses: a ``storage_alias_spec`` placement that breaks a buffer's alignment, a
``reuse=`` larger than what it reuses (both at the allocation's line).

``check_limit`` raises ``TLXC-RESOURCE-001`` with a per-allocation table (source line,
shape, dtype, count, bytes, offset) when the total exceeds the target's limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import CompilationError
from .. import ops
from ..analysis.buffers import ProgramOrder, alias_roots, values_of
from ..core import OP_REGISTRY, Location, Operation, Value
from ..types import BarrierType, MemDescType, narrow
from .buffer_layouts import nvmma_swizzle_of
from .options import PassOptions

BARRIER_BYTES = 8
PLAIN_ALIGN = 16
SCRATCH_ALIGN = 16

#: The ops that take shared memory of their own.
AllocationOp = ops.LocalAllocOp | ops.BarrierAllocOp | ops.StorageAliasSpecOp


def _retired_names() -> frozenset[str]:
    """The asynchronous ops whose work some op retires (every op class's ``RETIRES``)."""
    return frozenset(name for cls in OP_REGISTRY.values() for name in cls.RETIRES)


_ASYNC = _retired_names()


def align_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def buffer_alignment(t: MemDescType) -> int:
    """Bytes an allocation of ``t`` must be aligned to (see the module doc)."""
    if t.layout is None:
        return PLAIN_ALIGN
    span = nvmma_swizzle_of(t)
    if span is None:
        return 1024  # a layout pinned by the user: align for the widest swizzle atom
    return max(PLAIN_ALIGN, 8 * span)


@dataclass
class Allocation:
    """One ``local_alloc`` / ``barrier_alloc`` and where it went."""

    op: AllocationOp
    size: int
    align: int
    start: int
    end: int
    offset: int = -1
    reuses: Operation | None = None  # the allocation whose bytes it shares (``reuse=``)
    rel: int = 0  # bytes after the start of what it reuses (a storage_alias_spec placement)
    # (the async_tasks op's position, its region's index) for an allocation made in a partition
    partition: tuple[int, int] | None = None

    @property
    def is_barrier(self) -> bool:
        return isinstance(self.op, ops.BarrierAllocOp)

    def describe(self) -> tuple[str, str, str, str]:
        """(source line, shape, dtype, count) for the table."""
        loc = self.op.loc
        where = f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}" if loc is not None and loc.line > 0 else "?"
        t = self.op.result.type
        if isinstance(self.op, ops.StorageAliasSpecOp):
            return where, "storage_alias_spec", "i8", "1"
        if isinstance(t, BarrierType):
            return where, "mbarrier", "b64", str(t.num)
        assert isinstance(t, MemDescType)
        return where, "x".join(map(str, t.buf_shape)), str(t.element), str(t.num)


@dataclass
class SmemPlan:
    """Offsets of one kernel's allocations; ``ranges(value)`` says which bytes a buffer
    or barrier value may touch (for hazard analysis)."""

    allocations: list[Allocation]
    total: int
    roots: dict[int, frozenset[Operation]] = field(default_factory=dict)
    _by_op: dict[int, Allocation] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_op = {id(a.op): a for a in self.allocations}

    def offset_of(self, op: Operation) -> int:
        """Byte offset of a ``local_alloc`` / ``barrier_alloc`` from ``global_smem``."""
        return self._by_op[id(op)].offset

    def allocation(self, op: Operation) -> Allocation:
        return self._by_op[id(op)]

    @property
    def scratch_offset(self) -> int:
        return align_up(self.total, SCRATCH_ALIGN) if self.total else 0

    def ranges(self, v: Value) -> list[tuple[int, int]]:
        """Byte intervals ``[lo, hi)`` that ``v`` may cover: one buffer of an array when
        ``v`` is ``local_view`` with a constant index of an allocation, else every
        allocation ``v`` may view, whole."""
        owner = getattr(v, "op", None)
        while isinstance(owner, (ops.LocalTransOp, ops.LocalReinterpretOp, ops.LocalSliceOp)):
            v = owner.buf
            owner = getattr(v, "op", None)
        if isinstance(owner, ops.LocalViewOp):
            src = owner.buf
            index = getattr(owner.index, "op", None)
            root = getattr(src, "op", None)
            if isinstance(index, ops.ConstantOp) and isinstance(root, ops.LocalAllocOp) \
                    and id(root) in self._by_op:
                lo = self.offset_of(root) + int(index.value) * alloc_step(root)
                return [(lo, lo + narrow(src.type, MemDescType).nbytes)]
        out = []
        for root in self.roots.get(id(v), ()):
            a = self._by_op.get(id(root))
            if a is not None:
                out.append((a.offset, a.offset + a.size))
        return out

    def index_step(self, v: Value, loc: Location | None) -> int:
        """Bytes between buffer ``i`` and ``i + 1`` of the array ``v`` (its buffer's bytes,
        or the step of a ``storage_alias_spec`` placement)."""
        steps = {alloc_step(r) for r in self.roots.get(id(v), ()) if isinstance(r, ops.LocalAllocOp)}
        if len(steps) > 1:
            raise CompilationError("TLXC-TLX-005", "indexing an array that may be one of several allocations placed "
                                   "differently in a storage_alias_spec is not supported by tlxc yet", loc)
        if steps:
            return steps.pop()
        return narrow(v.type, MemDescType).nbytes

    def table(self, scratch: int = 0) -> str:
        """One line per allocation (and the scratch area), for resource errors."""
        rows = [("source", "buffer", "dtype", "count", "bytes", "offset")]
        for a in sorted(self.allocations, key=lambda a: (a.offset, a.start)):
            where, shape, dtype, count = a.describe()
            note = f" (reuses {a.reuses.loc.line if a.reuses.loc else '?'})" if a.reuses is not None else ""
            rows.append((where, shape + note, dtype, count, str(a.size), str(a.offset)))
        if scratch:
            rows.append(("(compiler)", "scratch for layout conversions", "-", "1", str(scratch),
                         str(self.scratch_offset)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)

    def check_limit(self, limit: int, scratch: int, target: str, loc: Location | None) -> int:
        """The kernel's shared-memory bytes (buffers, then scratch); over ``limit`` it is
        a ``TLXC-RESOURCE-001`` error that lists every allocation."""
        total = self.scratch_offset + scratch if scratch else self.total
        if total > limit:
            msg = f"the kernel needs {total} bytes of shared memory; {target} allows {limit}"
            if self.allocations:
                msg += "\n" + self.table(scratch)
            raise CompilationError("TLXC-RESOURCE-001", msg, loc)
        return total


def alloc_step(op: ops.LocalAllocOp) -> int:
    """Bytes between consecutive buffers of a ``local_alloc``."""
    placed = op.alias_placement()
    return placed[1] if placed is not None else narrow(op.result.type, MemDescType).nbytes


def _size(op: AllocationOp) -> int:
    if isinstance(op, ops.StorageAliasSpecOp):
        return int(op.size)
    t = op.result.type
    placed = op.alias_placement() if isinstance(op, ops.LocalAllocOp) else None
    if placed is not None:
        t = narrow(t, MemDescType)
        return (t.num - 1) * placed[1] + t.nbytes
    if isinstance(t, BarrierType):
        return BARRIER_BYTES * max(1, t.num)
    assert isinstance(t, MemDescType)
    return t.nbytes * max(1, t.num)


def live_ranges(func: Operation, order: ProgramOrder, roots: dict[int, frozenset[Operation]],
                allocs: list[AllocationOp]) -> dict[int, tuple[int, int]]:
    """``[start, end]`` of every allocation (see the module doc), as positions in ``order``.
    The AMD emitter asks again after ``membar`` has added ops (``Emitter.dead_window``)."""
    retire: dict[str, list[Operation]] = {}  # async op name -> the ops that retire its work (``RETIRES``)
    for op in func.walk():
        for kind in op.RETIRES:
            retire.setdefault(kind, []).append(op)
    views: dict[int, list[Value]] = {}
    for v in values_of(func):
        for root in roots.get(id(v), ()):
            views.setdefault(id(root), []).append(v)
    out = {}
    for root in allocs:
        if isinstance(root, ops.BarrierAllocOp):
            out[id(root)] = (0, order.last)
            continue
        # An allocation made in a partition keeps its own range: ``plan`` keeps it apart
        # from every allocation of the other partitions (``ProgramOrder.partition_of``).
        start = end = order.of(root)
        for v in views.get(id(root), []):
            owner = getattr(v, "op", None)
            if owner is None:  # a block argument: live across its whole region op
                holder = v.block.parent_op  # type: ignore[attr-defined]
                start = min(start, order.of(holder))
                end = max(end, order.end[id(holder)])
            for user in v.uses:
                p = order.effective(user, root)
                async_kind = user.NAME if user.NAME in _ASYNC else None
                waited = _waited_in_block(user) if async_kind is not None else None
                if waited is not None:
                    p = order.effective(waited, root)
                elif async_kind is not None:
                    later = [order.effective(r, root) for r in _retirers(user, retire.get(async_kind, []), roots)]
                    last = max(later, default=-1)
                    p = last if last >= p else order.last
                end = max(end, p)
        out[id(root)] = (start, end)
    return out


def _retirers(user: Operation, candidates: list[Operation],
              roots: dict[int, frozenset[Operation]]) -> list[Operation]:
    """The ops among ``candidates`` that can retire ``user``'s work: for a TMA load, only
    the waits on its own mbarrier allocation (its bytes are observed through that barrier
    and no other: the rings of two pipelined loops are then free for each other); for
    other work, all of them."""
    if isinstance(user, ops.TmaLoadOp):
        mine = roots.get(id(user.bar), frozenset())
        if mine:
            return [r for r in candidates
                    if isinstance(r, ops.BarrierWaitOp) and roots.get(id(r.bar), frozenset()) & mine]
    return candidates


def _waited_in_block(user: Operation) -> Operation | None:
    """The first wait after ``user`` in its own block -- or, for a ``user`` inside a loop
    or an ``if``, after that op in the block around it -- that retires all of its kind of
    work (one that ``RETIRES`` it with ``RETIRES_ALL_AT_ZERO`` and ``pendings=0``):
    whenever ``user`` runs, that wait runs after it, so ``user``'s work is done there (the
    ``cp.async`` ring of a pipelined loop is free after the loop's final wait). None where
    there is no such wait (the kernel-wide rule applies)."""
    at: Operation | None = user
    while at is not None and at.parent is not None:
        block = at.parent
        after = False
        for op in block.ops:
            if op is at:
                after = True
            elif after and op.RETIRES_ALL_AT_ZERO and user.NAME in op.RETIRES and op.attrs["pendings"] == 0:
                # every class with RETIRES_ALL_AT_ZERO has ``pendings`` (effects.py)
                return op
        holder = block.parent_op
        at = holder if isinstance(holder, (ops.ForOp, ops.WhileOp, ops.IfOp)) else None
    return None


def _check_placement(op: ops.LocalAllocOp, a: Allocation) -> int:
    """The byte offset of ``op``'s placement in its ``storage_alias_spec``, refused unless
    it keeps the buffer's alignment."""
    placed = op.alias_placement()
    assert placed is not None  # the caller saw that op reuses a storage_alias_spec
    off, step = placed
    t = narrow(op.result.type, MemDescType)
    if off % a.align or (t.num > 1 and step % a.align):
        raise CompilationError(
            "TLXC-TLX-001", f"this buffer's place in its storage_alias_spec (byte {off}, {step} bytes between "
                            f"buffers) is not a multiple of the {a.align} bytes its shared layout needs (swizzling "
                            "works on address bits)", op.loc,
            "put the swizzled buffers first in distinct groups, or pin an unswizzled layout "
            "(tlx.nv_mma_shared_layout_encoding(..., swizzled=False))")
    return off


def plan(func: Operation) -> SmemPlan:
    """Place every shared-memory allocation of ``func`` (see the module doc)."""
    order = ProgramOrder(func)
    roots = alias_roots(func)
    allocs = _allocations(func)
    live = live_ranges(func, order, roots, allocs)
    records = {id(op): Allocation(op, _size(op), _alignment(op), *live[id(op)], partition=order.partition_of(op))
               for op in allocs}
    # reuse groups: an allocation with reuse= joins the group of what it reuses
    leader: dict[int, Allocation] = {}
    for op in allocs:
        a = records[id(op)]
        reuse = op.reuse if isinstance(op, ops.LocalAllocOp) else None
        if reuse is None:
            leader[id(op)] = a
            continue
        assert isinstance(op, ops.LocalAllocOp)
        spec = getattr(reuse, "op", None)
        if isinstance(spec, ops.StorageAliasSpecOp):
            a.reuses, a.rel = spec, _check_placement(op, a)
            records[id(spec)].align = max(records[id(spec)].align, a.align)
            leader[id(op)] = leader[id(spec)]
            continue
        targets = roots.get(id(reuse), frozenset())
        if len(targets) != 1:
            raise CompilationError("TLXC-TLX-001", "local_alloc(reuse=...) must name one allocation", op.loc)
        (target,) = targets
        base = records[id(target)]
        if a.size > base.size:
            raise CompilationError("TLXC-TLX-001", f"this allocation needs {a.size} bytes but the buffer it reuses "
                                   f"has {base.size}", op.loc, "allocate the larger buffer first and reuse it")
        a.reuses, a.rel = target, base.rel
        leader[id(op)] = leader[id(target)]
    groups: dict[int, list[Allocation]] = {}
    for op in allocs:
        groups.setdefault(id(leader[id(op)].op), []).append(records[id(op)])
    placed: list[tuple[int, int, int, int, frozenset]] = []  # (offset, size, start, end, partitions)
    ordered = sorted(groups.values(), key=lambda g: (-g[0].size, g[0].start))
    for members in ordered:
        size = max(m.rel + m.size for m in members)
        align = max(m.align for m in members)
        start, end = min(m.start for m in members), max(m.end for m in members)
        parts = frozenset(m.partition for m in members if m.partition is not None)
        conflicts = [p for p in placed if (p[2] <= end and start <= p[3]) or _side_by_side(parts, p[4])]
        for cand in sorted({0} | {o + s for o, s, *_ in conflicts}):
            off = align_up(cand, align)
            if all(off + size <= o or off >= o + s for o, s, *_ in conflicts):
                break
        for m in members:
            m.offset = off + m.rel
        placed.append((off, size, start, end, parts))
    total = max((o + s for o, s, *_ in placed), default=0)
    return SmemPlan([records[id(op)] for op in allocs], total, roots)


def _side_by_side(a: frozenset, b: frozenset) -> bool:
    """Whether allocations made in partitions ``a`` and ``b`` can be live at once whatever
    their ranges: some two of them are different partitions of one ``async_tasks``."""
    return any(x[0] == y[0] and x[1] != y[1] for x in a for y in b)


def _allocations(func: Operation) -> list[AllocationOp]:
    out: list[AllocationOp] = []
    for op in func.walk():
        if isinstance(op, ops.BarrierAllocOp) \
                or (isinstance(op, ops.StorageAliasSpecOp) and op.storage == "smem") \
                or (isinstance(op, ops.LocalAllocOp) and narrow(op.result.type, MemDescType).storage == "smem"):
            out.append(op)
    return out


def _alignment(op: AllocationOp) -> int:
    if isinstance(op, ops.BarrierAllocOp):
        return BARRIER_BYTES
    if isinstance(op, ops.StorageAliasSpecOp):
        return PLAIN_ALIGN
    return buffer_alignment(narrow(op.result.type, MemDescType))


def run(module: Operation, options: PassOptions) -> Operation:
    """Place every kernel's allocations and write the placement into the IR."""
    for func in module.funcs:
        p = plan(func)
        for a in p.allocations:
            a.op.smem_offset = a.offset
        func.smem_total = p.total
    return module


def read_plan(func: ops.FuncOp) -> SmemPlan:
    """The plan that ``run`` wrote into ``func`` (offsets from the IR, sizes, alignment
    and views computed again); live ranges are not kept (``live_ranges`` gives them)."""
    total = func.smem_total
    if total < 0:
        raise ValueError("the shared-memory plan is not in the IR: the smem-alloc pass has not run")
    roots = alias_roots(func)
    records = []
    for op in _allocations(func):
        offset = op.smem_offset
        if offset < 0:
            raise ValueError(f"'{op.NAME}' has no smem_offset although smem-alloc ran (made after it?)")
        a = Allocation(op, _size(op), _alignment(op), 0, 0, offset)
        reuse = op.reuse if isinstance(op, ops.LocalAllocOp) else None
        if reuse is not None:
            spec = getattr(reuse, "op", None)
            a.reuses = spec if isinstance(spec, ops.StorageAliasSpecOp) else next(iter(roots.get(id(reuse), ())), None)
        records.append(a)
    return SmemPlan(records, total, roots)
