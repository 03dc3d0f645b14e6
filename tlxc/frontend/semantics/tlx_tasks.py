"""Semantic rules of warp specialization: the options of ``tlx.async_tasks`` and
``tlx.async_task``, where each partition's warps go, and ``tlx.async_task_replica_id``.

The visitor (``frontend/tasks.py``) reads the ``with`` statements; this module turns
their arguments into ``TaskSpec``s, checks them (tlx-semantics §5.4), expands replicas
into partitions and places them on warps:

* the default task runs on the kernel's warps ``[0, num_warps)``; ``replicate=R`` on it
  adds R-1 partitions of ``num_warps`` warps;
* without ``warp_group_start_id`` the other partitions follow the default task, largest
  first (a stable sort: equal sizes keep their order), as Triton's warp allocation does.
  With it, every non-default partition must have one: replica ``r`` of a task starts
  ``r * num_warps`` warps after the task's id, and no range may overlap another or the
  default's. On the default task itself the id only places its extra replicas (TLX
  accepts it there; the default always runs on warp 0 on);
* ``num_regs`` / ``registers``: a multiple of 8 in [24, 256] (``setmaxnreg``'s range), on
  every non-default partition or on none; the default's is its own.

Example: ``num_warps=4``, a default task, a producer ``num_warps=1`` and consumers
``num_warps=4, replicate=2`` give partitions (default, 4 warps at 0), (producer, 1 at
12), (consumer r0, 4 at 4), (consumer r1, 4 at 8): the consumers are larger, so they come
first after the default.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ...ir.ops.tasks import MAX_REGISTERS, MIN_REGISTERS, REGISTER_STEP, partition_record
from ..values import KeptConstant, unwrap
from .base import Ctx, fail, rule

STRUCTURE = "TLXC-WS-001"  # what may stand where
OPTIONS = "TLXC-WS-002"  # task and region options
PLACEMENT = "TLXC-WS-003"  # warp_group_start_id
CAPTURE = "TLXC-WS-004"  # a register tile used across the region boundary

_TASK_OPTIONS = ("num_warps", "num_regs", "registers", "replicate", "warp_group_start_id")
_REGION_OPTIONS = ("exclusive", "no_ending_cluster_sync", "mbarrier_try_wait_suspend_ns")


@dataclass
class TaskSpec:
    """One ``async_task(...)`` as written."""

    default: bool
    num_warps: int | None
    registers: int
    replicate: int
    start: int | None


@dataclass
class RegionOptions:
    exclusive: bool = False
    no_ending_cluster_sync: bool = False
    suspend_ns: int = -1


@dataclass
class Frame:
    """The async task being built: its replica id (``async_task_replica_id``)."""

    replica: int
    inline: bool = False
    num_warps: int | None = None  # the task's warps (None: the kernel's, for an inline task)


@dataclass
class KernelFacts:
    """What the frontend knows about the kernel being built that the IR does not say
    while its blocks are still detached: its warp count and target."""

    num_warps: int
    frames: list[Frame] = field(default_factory=list)
    arch: str = "sm_90a"  # the target being compiled for (tl.target_info answers from it)
    fp32_default: str | None = None  # knobs.language.fp32_default: tl.dot's default input_precision
    # the IR values that are read-only pointers: `tl.const` parameters and pointer
    # arithmetic on them (by id; the values live as long as the module being built)
    const_pointers: set[int] = field(default_factory=set)


KERNEL: ContextVar[KernelFacts | None] = ContextVar("tlxc_kernel_facts", default=None)


def kernel_facts() -> KernelFacts:
    facts = KERNEL.get()
    if facts is None:  # building IR outside build_module (a unit test of the visitor)
        facts = KernelFacts(4)
        KERNEL.set(facts)
    return facts


def _int(v: Any, what: str, low: int) -> int:
    v = unwrap(v)
    if not isinstance(v, int) or isinstance(v, bool):
        fail(OPTIONS, f"{what} must be a compile-time integer, got {v!r}")
    if v < low:
        fail(OPTIONS, f"{what} must be at least {low}, got {v}")
    return v


def _registers(v: Any) -> int:
    v = unwrap(v)
    if v is None:
        return 0
    n = _int(v, "num_regs", 0)
    if n % REGISTER_STEP or not MIN_REGISTERS <= n <= MAX_REGISTERS:
        fail(OPTIONS, f"num_regs={n}: a register request must be a multiple of {REGISTER_STEP} from "
                      f"{MIN_REGISTERS} to {MAX_REGISTERS} (setmaxnreg's range)",
             "round it to a multiple of 8, e.g. 24 for a producer, 232 or 240 for consumers")
    return n


def task_spec(args: list[Any], kwargs: dict[str, Any]) -> TaskSpec:
    """The ``TaskSpec`` of ``tlx.async_task(*args, **kwargs)``, or a ``SemanticError``."""
    for k in kwargs:
        if k not in _TASK_OPTIONS:
            fail(OPTIONS, f"tlx.async_task has no option '{k}' (it takes {', '.join(_TASK_OPTIONS)})")
    if "num_regs" in kwargs and "registers" in kwargs:
        fail(OPTIONS, "give num_regs or registers (two names of one option), not both")
    regs = _registers(kwargs.get("num_regs", kwargs.get("registers")))
    replicate = _int(kwargs.get("replicate", 1), "replicate", 1)
    start_v = unwrap(kwargs.get("warp_group_start_id"))
    start = None if start_v is None else _int(start_v, "warp_group_start_id", 0)
    if args:
        first = unwrap(args[0])
        if len(args) > 1 or first != "default":
            if isinstance(first, tuple):
                fail(OPTIONS, "the task-id list form async_task([ids]) is not supported (TLX refuses it too)",
                     "write async_task('default') or async_task(num_warps=N)")
            fail(OPTIONS, f"tlx.async_task takes 'default' as its only positional argument, got {first!r}")
        if "num_warps" in kwargs:
            fail(OPTIONS, "the default task runs on the kernel's num_warps warps; it takes no num_warps",
                 "set num_warps on the launch (or the Config) instead")
        return TaskSpec(True, None, regs, replicate, start)
    if "num_warps" not in kwargs:
        fail(OPTIONS, "a non-default async_task needs num_warps=N (or 'default' for the kernel's own warps)")
    nw = _int(kwargs["num_warps"], "num_warps", 1)
    if nw & (nw - 1) or nw > 32:
        fail(OPTIONS, f"num_warps={nw}: a task's warp count must be a power of two up to 32")
    return TaskSpec(False, nw, regs, replicate, start)


def region_options(args: list[Any], kwargs: dict[str, Any]) -> RegionOptions:
    if args:
        fail(OPTIONS, "tlx.async_tasks takes keyword options only")
    for k in kwargs:
        if k not in _REGION_OPTIONS:
            fail(OPTIONS, f"tlx.async_tasks has no option '{k}' (it takes {', '.join(_REGION_OPTIONS)})")
    out = RegionOptions()
    for k in ("exclusive", "no_ending_cluster_sync"):
        v = unwrap(kwargs.get(k, False))
        if not isinstance(v, bool):
            fail(OPTIONS, f"{k} must be a compile-time bool, got {v!r}")
        setattr(out, k, v)
    ns = unwrap(kwargs.get("mbarrier_try_wait_suspend_ns"))
    if ns is not None:
        out.suspend_ns = _int(ns, "mbarrier_try_wait_suspend_ns", 0)
    return out


@dataclass
class Placed:
    """One partition to build: which task (index into the specs), which replica, and
    its record for the ``async_tasks`` op."""

    spec_index: int
    replica: int
    record: dict[str, Any]


@dataclass
class Misplaced:
    """A mistake in the tasks' options as a whole, blamed on the task ``spec_index``
    (the visitor reports it at that task's line)."""

    spec_index: int
    code: str
    message: str


def place(specs: list[TaskSpec], kernel_warps: int) -> list[Placed] | Misplaced:
    """Expand replicas and place every partition on warps (see the module doc): the
    partitions, default first, then in source order; or the first mistake."""
    d = next(i for i, s in enumerate(specs) if s.default)
    parts: list[Placed] = [Placed(d, 0, {})]
    task_no = {d: 0}
    for i, s in enumerate(specs):
        if i != d:
            task_no[i] = len(task_no)
        for r in range(1 if s.default else 0, s.replicate):
            parts.append(Placed(i, r, {}))
    workers = parts[1:]
    widths = {id(p): kernel_warps if specs[p.spec_index].default else specs[p.spec_index].num_warps for p in parts}
    regs_given = [p for p in workers if specs[p.spec_index].registers]
    if regs_given and len(regs_given) != len(workers):
        bad = next(p for p in workers if not specs[p.spec_index].registers)
        return Misplaced(bad.spec_index, OPTIONS, "num_regs is set on some non-default tasks but not on this one: "
                                                  "give it on every non-default task or on none")
    starts: dict[int, int] = {id(parts[0]): 0}
    explicit = [p for p in workers if specs[p.spec_index].start is not None]
    if explicit and len(explicit) != len(workers):
        bad = next(p for p in workers if specs[p.spec_index].start is None)
        return Misplaced(bad.spec_index, PLACEMENT, "warp_group_start_id is set on some non-default tasks but not "
                                                    "on this one: give it on every non-default task or on none")
    if explicit:
        for p in workers:
            s = specs[p.spec_index]
            assert s.start is not None
            starts[id(p)] = s.start + (p.replica - (1 if s.default else 0)) * widths[id(p)]
        ranges = sorted((starts[id(p)], starts[id(p)] + widths[id(p)], p) for p in parts)
        for (lo, hi, a), (lo2, hi2, b) in zip(ranges, ranges[1:]):
            if lo2 < hi:
                later = b if b.spec_index != d or b.replica else a
                other = a if later is b else b
                what = "the default task" if specs[other.spec_index].default and not other.replica \
                    else f"another task's warps [{starts[id(other)]}, {starts[id(other)] + widths[id(other)]})"
                mine = f"[{starts[id(later)]}, {starts[id(later)] + widths[id(later)]})"
                if what == "the default task":
                    what += f" [0, {kernel_warps})"
                return Misplaced(later.spec_index, PLACEMENT, f"warps {mine} of this task overlap {what}")
    else:
        at = kernel_warps
        for p in sorted(workers, key=lambda p: -widths[id(p)]):
            starts[id(p)] = at
            at += widths[id(p)]
    for p in parts:
        s = specs[p.spec_index]
        p.record = partition_record(task_no[p.spec_index], p.replica, s.default and p.replica == 0, widths[id(p)],
                                    s.registers, starts[id(p)])
    return parts


@rule("tlx.async_task_replica_id")
def async_task_replica_id(ctx: Ctx) -> int:
    frames = kernel_facts().frames
    if not frames:
        fail(STRUCTURE, "tlx.async_task_replica_id() is only defined inside a `with tlx.async_task(...)` block")
    return KeptConstant(frames[-1].replica)  # `g = tlx.async_task_replica_id()` keeps g a constant


__all__ = ["TaskSpec", "RegionOptions", "Frame", "KernelFacts", "KERNEL", "kernel_facts", "task_spec",
           "region_options", "place", "Placed", "Misplaced", "STRUCTURE", "OPTIONS", "PLACEMENT", "CAPTURE"]
