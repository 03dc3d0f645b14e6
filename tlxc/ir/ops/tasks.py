"""Warp specialization: ``async_tasks``, a region op whose regions run at the same time
on disjoint groups of warps of one CTA (TLX's ``with tlx.async_tasks():``).

Each region is one *partition*: one ``tlx.async_task`` block, or one replica of it
(``replicate=R`` gives R regions, each built with its own replica id folded in). What
each partition is (its warp count, register request, replica id, first warp, whether it
is the default task, and which ``async_task`` of the source it came from) is a record in
the ``partitions`` attribute, region ``i`` <-> record ``i``::

    async_tasks {partitions = [{task = 0, replica = 0, default = true, num_warps = 4,
                                registers = 0, warp_start = 0},
                               {task = 1, replica = 0, default = false, num_warps = 1,
                                registers = 24, warp_start = 4}]} {
    ^():
      ...                 // the default task, on warps [0, 4)
      yield
    } {
    ^():
      ...                 // the producer, on warp 4
      yield
    } loc(12:4)

Regions read values defined above the op directly (scalars, pointers, descriptors,
buffers and barriers; register tiles only in the default partition, which runs on the
warps that computed them: the frontend refuses them elsewhere), and carry no values out:
the op has no results and each region ends in an empty ``yield``.

Execution model (what passes may assume, and what a code generator must provide): every
warp of the CTA meets when the region starts (the workers are parked until the default
task reaches it) and again when it ends (the default task continues only once every
partition has finished), as Triton's lowering does with its dispatch barrier. Between
the two, partitions synchronize only through what the user wrote: mbarriers and named
barriers. A compiler barrier inside a partition spans that partition's warps only.

``registers`` is 0 where the task asked for none; ``exclusive``,
``no_ending_cluster_sync`` and ``mbarrier_try_wait_suspend_ns`` (-1: not given) are the
``async_tasks`` options, recorded for the code generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..accessors import Attr
from ..core import Block, Operation, Region, register
from ..effects import CTA_BARRIER
from ..types import TileType
from .base import fail

MIN_REGISTERS = 24
MAX_REGISTERS = 256
REGISTER_STEP = 8
_FIELDS = ("task", "replica", "default", "num_warps", "registers", "warp_start")


@dataclass(frozen=True)
class Partition:
    """One region of an ``async_tasks`` op, as its record says."""

    region: Region
    index: int
    task: int
    replica: int
    default: bool
    num_warps: int
    registers: int
    warp_start: int

    @property
    def block(self) -> Block:
        return self.region.block

    @property
    def warps(self) -> range:
        return range(self.warp_start, self.warp_start + self.num_warps)

    def describe(self) -> str:
        """How messages name it: ``the default task``, ``task 2, replica 1``."""
        if self.default:
            return "the default task" + (f", replica {self.replica}" if self.replica else "")
        return f"task {self.task}, replica {self.replica}"


def partition_record(task: int, replica: int, default: bool, num_warps: int, registers: int,
                     warp_start: int) -> dict[str, Any]:
    """The attribute record of one partition (the keys in their printed order)."""
    return {"task": task, "replica": replica, "default": default, "num_warps": num_warps, "registers": registers,
            "warp_start": warp_start}


class _Partitions(Attr[Any]):
    """The ``partitions`` attribute (one record per region), read as ``Partition`` views
    of the regions; assigning writes the records."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        out = []
        for i, (region, rec) in enumerate(zip(obj.regions, obj.attrs["partitions"])):
            out.append(Partition(region, i, int(rec["task"]), int(rec["replica"]), bool(rec["default"]),
                                 int(rec["num_warps"]), int(rec["registers"]), int(rec["warp_start"])))
        return out


@register
class AsyncTasksOp(Operation):
    """Partitions that run concurrently on disjoint warps (see the module doc)."""

    NAME = "async_tasks"
    ATTRS = {"partitions": Operation.REQUIRED, "exclusive": False, "no_ending_cluster_sync": False,
             "mbarrier_try_wait_suspend_ns": -1}
    NUM_RESULTS = 0
    NUM_REGIONS = 0  # one per partition: checked in verify()
    PURE = False
    # every warp of the CTA meets where the region starts and where it ends
    SYNC = (CTA_BARRIER,)

    partitions = _Partitions()
    exclusive = Attr[bool]()
    no_ending_cluster_sync = Attr[bool]()
    mbarrier_try_wait_suspend_ns = Attr[int]()

    @property
    def default_partition(self) -> Partition:
        return next(p for p in self.partitions if p.default)

    @property
    def total_warps(self) -> int:
        """Warps the CTA needs: the end of the highest partition."""
        return max((p.warp_start + p.num_warps for p in self.partitions), default=0)

    def verify(self) -> None:
        records = self.attrs["partitions"]
        if not isinstance(records, (list, tuple)) or not records:
            fail(self, "partitions must be a non-empty list of records")
        if len(self.regions) != len(records):
            fail(self, f"has {len(self.regions)} regions for {len(records)} partition records")
        for i, rec in enumerate(records):
            if not isinstance(rec, dict) or tuple(rec) != _FIELDS:
                fail(self, f"partition record {i} must have the fields {', '.join(_FIELDS)} in that order, got {rec!r}")
            for k in _FIELDS:
                v = rec[k]
                if k == "default" and not isinstance(v, bool) or k != "default" and (
                        not isinstance(v, int) or isinstance(v, bool) or v < 0):
                    fail(self, f"partition {i}: {k} = {v!r} is not valid")
        # NUM_REGIONS is per op here, so the base check is done by hand
        if self.results:
            fail(self, "has no results")
        if self.operands:
            fail(self, "takes no operands (regions read the values above them)")
        parts = self.partitions
        defaults = [p for p in parts if p.default]
        if len(defaults) != 1:
            fail(self, f"needs exactly one default partition, has {len(defaults)}")
        for p in parts:
            if p.num_warps < 1:
                fail(self, f"partition {p.index} has {p.num_warps} warps")
            if p.registers and (p.registers % REGISTER_STEP or not MIN_REGISTERS <= p.registers <= MAX_REGISTERS):
                fail(self, f"partition {p.index} requests {p.registers} registers: a multiple of {REGISTER_STEP} "
                           f"in [{MIN_REGISTERS}, {MAX_REGISTERS}] or 0 for none")
            term = p.block.ops[-1] if p.block.ops else None
            if term is None or term.NAME != "yield" or term.operands:
                fail(self, f"partition {p.index} must end in an empty 'yield'")
            if p.block.args:
                fail(self, f"partition {p.index} takes no block arguments")
        workers = [p for p in parts if not p.default]
        if len({bool(p.registers) for p in workers}) > 1:
            fail(self, "registers are requested by some non-default partitions only: all or none")
        d = defaults[0]
        if d.warp_start != 0:
            fail(self, f"the default partition runs on warps [0, {d.num_warps}), not from warp {d.warp_start}")
        ranges = sorted((p.warp_start, p.warp_start + p.num_warps, p.index) for p in parts)
        for (lo, hi, i), (lo2, hi2, j) in zip(ranges, ranges[1:]):
            if lo2 < hi:
                fail(self, f"partitions {i} and {j} overlap: warps [{lo}, {hi}) and [{lo2}, {hi2})")
        for p in workers:
            tile = _outside_tile(p.block)
            if tile is not None:
                fail(self, f"partition {p.index} uses a register tile ({tile}) defined outside it; only the "
                           "default partition runs on the warps that hold such values")
        s = self.attrs["mbarrier_try_wait_suspend_ns"]
        if not isinstance(s, int) or s < -1:
            fail(self, f"mbarrier_try_wait_suspend_ns must be -1 (not given) or a non-negative integer, got {s!r}")


def _outside_tile(block: Block) -> Any:
    """The type of a tile value that ``block`` uses but does not define, or None."""
    inside: set[int] = set()
    ops = [o for op in block.ops for o in op.walk()]
    for o in ops:
        inside.update(id(r) for r in o.results)
        inside.update(id(a) for r in o.regions for b in r.blocks for a in b.args)
    for o in ops:
        for v in o.operands:
            if id(v) not in inside and isinstance(v.type, TileType):
                return v.type
    return None


def enclosing_partition(op: Operation) -> tuple[AsyncTasksOp, Partition] | None:
    """The innermost ``async_tasks`` partition that ``op`` sits in, or None."""
    block = op.parent
    while block is not None:
        region = block.parent
        owner = region.parent if region is not None else None
        if owner is None:
            return None
        if isinstance(owner, AsyncTasksOp):
            index = next(i for i, r in enumerate(owner.regions) if r is region)
            return owner, owner.partitions[index]
        block = owner.parent
    return None


def warps_at(op: Operation, kernel_warps: int) -> int:
    """How many warps run ``op``: its partition's, or the kernel's outside any."""
    found = enclosing_partition(op)
    return found[1].num_warps if found is not None else kernel_warps


__all__ = ["AsyncTasksOp", "Partition", "partition_record", "enclosing_partition", "warps_at",
           "MIN_REGISTERS", "MAX_REGISTERS", "REGISTER_STEP"]
