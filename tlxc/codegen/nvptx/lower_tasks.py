"""Warp specialization on NVIDIA: ``async_tasks`` (one region per partition) as warps of
one CTA dispatched to their partition's code.

The kernel is launched with every partition's warps (padded to whole warpgroups when a
partition asks for registers, as ``setmaxnreg`` works per warpgroup). The code outside the
region runs on the default partition's warps only, so the kernel's base scope is the
default warps: its compiler barriers are ``bar.sync 0, <default threads>``.

    entry:   (prologue: parameters, thread ids -- every warp)
             @worker bra $ws_workers            // warps past the default's
             ... the default path, up to the region ...
    region:  captures -> shared memory (thread 0), bar.sync 1, <all threads>
             [setmaxnreg for the default's warpgroups]
             ... the default partition ...
             bar.sync 1, <all threads>          // every worker is done
             ... the default path after the region ... ret
    $ws_workers:
             [the cluster syncs the default path makes before the region]
             bar.sync 1, <all threads>          // the default reached the region
             captures <- shared memory; setmaxnreg for warpgroups shared by partitions
             one branch per worker partition, each under its own scope (first warp, warp
             count, hardware barrier: ``partition_budget.barrier_ids``), a partition with
             whole warpgroups setting its registers at the top of its own code (ptxas sizes
             the allocation of the code a setmaxnreg dominates), then
             bar.arrive 1, <all threads>
             [barrier.cluster.arrive / wait: the kernel's ending cluster sync]
             ret

Barrier 1 above is the region's barrier (``WS_BARRIER``) unless the kernel's own named
barriers use 1: then it is the lowest id they leave free (``region_barrier``), and the
partitions' barriers are chosen around both.

A clustered kernel that reaches into its peers ends with a cluster sync, so that no CTA
exits while a peer may still write into its shared memory or arrive on its barriers
(``compile.reaches_peers``). Every thread of every CTA takes part, so the worker warps
(padding warps included) arrive and wait before their ``ret`` as the default's do at the
kernel's end; ``barrier.cluster.arrive`` also releases the workers' own remote writes.
``async_tasks(no_ending_cluster_sync=True)`` leaves it out: the user guarantees that the
cluster's shared-memory traffic is over.

Values a worker partition reads from the default path (scalars, pointers, buffer and
barrier addresses) travel through a small area of shared memory after the scratch areas;
the kernel's parameters and the prologue's values are there in every warp already. Each
partition gets its own scratch area (``Emitter.partition_scratch``): partitions run at
the same time, so they cannot share one.

Refused (``TLXC-CODEGEN-001`` at the region's line): more than one ``async_tasks`` in a
kernel, a region inside control flow (the workers wait for the default to reach it), a
default partition that is not whole warpgroups when registers are requested, register
budgets the CTA's register pool cannot hold (``partition_budget``); in a clustered
kernel, mbarrier allocations or cluster barriers before the region inside control flow,
and mbarriers allocated inside a partition (their cluster syncs could not be matched by
every warp).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation, Value
from . import instructions as insn
from . import lower_arith
from .emitter import Emitter, Scope, TileRegs, lowers
from .partition_budget import NUM_BARRIERS, BudgetError, RegisterBudget, Worker, barrier_ids, register_budget
from .ptx import Reg

WS_BARRIER = 1  # every warp of the CTA: the region's start and end (unless the kernel's barriers use 1)
_WIDTH = {"b16": 16, "b32": 32, "f32": 32, "b64": 64, "f64": 64}  # bits of a register class (captures)
CAPTURE = "@WSCAPTURE@"  # the capture area's offset in global_smem, known once the scratch areas are


@dataclass
class WsPlan:
    op: Operation
    total_warps: int
    default_warps: int
    budget: RegisterBudget
    bars: dict[int, int | None]  # partition index -> its hardware barrier (None: one warp)
    barrier: int = WS_BARRIER  # the region's start and end barrier, of every warp
    end_cluster_sync: bool = False  # the workers join the kernel's ending cluster sync
    syncs_before: int = 0  # cluster syncs the default path makes before the region (the workers make them too)
    workers_label: str = ""
    capture_bytes: int = 0
    captured: list[Value] = field(default_factory=list)

    @property
    def threads(self) -> int:
        return self.total_warps * 32


def _fail(op: Operation, message: str) -> CompilationError:
    return CompilationError("TLXC-CODEGEN-001", message, op.loc)


def region_barrier(user_ids: set[int]) -> int:
    """The hardware barrier of the region's start and end: ``WS_BARRIER`` (1), or the
    lowest id from 1 up that the kernel's named barriers leave free. Worked example: user
    barriers {9, 10} -> 1; {1} -> 2; {1, 2, 3} -> 4.

    Refuses (``BudgetError``): no id free (barrier 0 is the compiler's CTA barrier)."""
    free = [i for i in range(WS_BARRIER, NUM_BARRIERS) if i not in user_ids]
    if not free:
        raise BudgetError(f"the kernel's named barriers take every id from 1 to {NUM_BARRIERS - 1}; warp "
                          "specialization needs one for the start and end of the region")
    return free[0]


def plan(e: Emitter, func: Operation, maxnreg: int | None, ending_cluster_sync: bool = False) -> WsPlan | None:
    """The dispatch of the kernel's ``async_tasks`` region (None when it has none), with
    the emitter rebased on the default warps and the entry's branch to the workers.
    ``ending_cluster_sync``: the kernel would end with a cluster sync; the plan says
    whether it does (``end_cluster_sync``: not under ``no_ending_cluster_sync``)."""
    regions = [op for op in func.walk() if isinstance(op, ops.AsyncTasksOp)]
    if not regions:
        return None
    op = regions[0]
    if len(regions) > 1:
        raise _fail(regions[1], "a second tlx.async_tasks region in one kernel: the NVIDIA code generator "
                                "dispatches the warps of one region")
    if op.parent is not func.body:  # type: ignore[attr-defined]
        raise _fail(op, "tlx.async_tasks inside a loop or a branch: its worker warps wait at the kernel's start for "
                        "the region, so it must be at the top level of the kernel")
    parts = op.partitions  # type: ignore[attr-defined]
    default = next(p for p in parts if p.default)
    workers = [p for p in parts if not p.default]
    wanted = default.registers or any(p.registers for p in workers)
    try:
        budget = register_budget(default.num_warps, default.registers or None,
                                 [Worker(p.warp_start, p.num_warps, p.registers or None) for p in workers], maxnreg)
        user_bars = {o.attrs["bar_id"] for o in func.walk()
                     if isinstance(o, (ops.NamedBarrierWaitOp, ops.NamedBarrierArriveOp)) and o.attrs["bar_id"]}
        region_bar = region_barrier(user_bars)
        ids = barrier_ids([p.num_warps for p in workers], user_bars | {region_bar})
    except BudgetError as err:
        raise _fail(op, f"tlx.async_tasks: {err}") from None
    if wanted and default.num_warps % 4:
        raise _fail(op, f"the default task's {default.num_warps} warps are not whole warpgroups, which setmaxnreg "
                        "(registers=) needs")
    total = budget.total_warps if wanted else op.total_warps  # type: ignore[attr-defined]
    ws = WsPlan(op, total, default.num_warps, budget, {p.index: b for p, b in zip(workers, ids)}, region_bar,
                ending_cluster_sync and not op.no_ending_cluster_sync)  # type: ignore[attr-defined]
    if e.clustered:
        ws.syncs_before = _cluster_syncs_before(func, op)
    e.rebase(Scope(0, default.num_warps, 0, whole_cta=False))
    e.partitions = len(workers)
    ws.workers_label = e.fn.label("ws_workers")
    worker = e.fn.reg("pred")
    e.fn.emit(f"setp.ge.u32 {worker}, {e.special('tid')}, {default.num_warps * 32}")
    e.fn.emit(f"bra {ws.workers_label}", worker)
    e.ws = ws
    return ws


def _cluster_syncs_before(func: Operation, op: Operation) -> int:
    """How many cluster-wide syncs the default path makes before the region: one per
    mbarrier allocation (the compiler's sync after the inits, ``lower_sync``) and per
    ``cluster_barrier``. Every thread of the cluster must meet there, and the worker warps
    have branched away at the kernel's start, so they make as many before they wait for
    the region; one inside control flow, or inside a partition, cannot be matched so."""
    syncs = (ops.BarrierAllocOp, ops.ClusterBarrierOp)
    body = func.body.ops  # type: ignore[attr-defined]
    before = body[:body.index(op)]
    for o in before:
        nested = next((x for x in o.walk() if x is not o and isinstance(x, syncs)), None)
        if nested is not None:
            raise _fail(nested, "in a clustered kernel with warp specialization, mbarrier allocations and cluster "
                                "barriers before the region must be at the kernel's top level (every warp of the "
                                "cluster meets there, and the worker warps cannot follow control flow they skip)")
    for p in op.partitions:  # type: ignore[attr-defined]
        alloc = next((x for x in p.block.ops for x in x.walk() if isinstance(x, ops.BarrierAllocOp)), None)
        if alloc is not None:
            raise _fail(alloc, "in a clustered kernel, mbarriers are allocated before tlx.async_tasks: their "
                               "initialization is a sync of every thread of the cluster, which a partition is not")
    return sum(isinstance(o, syncs) for o in before)


def _captures(op: Operation, func_args: set[int]) -> list[Value]:
    """Values the worker partitions read that the default path computed before the region
    (in order of first use)."""
    inside: set[int] = set()
    for o in op.walk():
        inside.update(id(r) for r in o.results)
        inside.update(id(a) for r in o.regions for b in r.blocks for a in b.args)
    out: dict[int, Value] = {}
    for p in op.partitions:  # type: ignore[attr-defined]
        if p.default:
            continue
        for o in p.block.ops:
            for x in o.walk():
                for v in x.operands:
                    if id(v) not in inside and id(v) not in func_args:
                        out.setdefault(id(v), v)
    return list(out.values())


def _store_captures(e: Emitter, ws: WsPlan, values: list[Value]) -> list[tuple[Value, list[tuple[Reg | str, int]]]]:
    """The default's thread 0 writes each captured register at its slot (8 bytes each)."""
    from .lower_sync import thread0

    if not values:
        return []
    base = e.special_value("ws.capture", f"mov.u32 {{r}}, global_smem+{CAPTURE};")
    p = thread0(e)
    layout = []
    slot = 0
    for v in values:
        regs = []
        for r in e.get(v, packed_ok=True).regs:
            if not isinstance(r, Reg):  # an immediate is the same in every warp
                regs.append((r, -1))
                continue
            if r.cls == "pred":
                t = e.fn.reg("b32")
                e.fn.emit(f"selp.u32 {t}, 1, 0, {r}")
                e.fn.emit(f"st.shared.u32 [{base}+{slot}], {t}", p)
            else:
                e.fn.emit(f"st.shared.b{_WIDTH[r.cls]} [{base}+{slot}], {r}", p)
            regs.append((r, slot))
            slot += 8
        layout.append((v, regs))
    ws.capture_bytes = slot
    return layout


def _load_captures(e: Emitter, layout: list[tuple[Value, list[tuple[Reg | str, int]]]]) -> dict[int, TileRegs]:
    if not layout:
        return {}
    base = e.special_value("ws.capture", f"mov.u32 {{r}}, global_smem+{CAPTURE};")
    out: dict[int, TileRegs] = {}
    for v, regs in layout:
        got = e.values[id(v)]
        new: list = []
        for r, slot in regs:
            if slot < 0:
                new.append(r)
                continue
            assert isinstance(r, Reg)
            n = e.fn.reg(r.cls)
            if r.cls == "pred":
                t = e.fn.reg("b32")
                e.fn.emit(f"ld.shared.u32 {t}, [{base}+{slot}]")
                e.fn.emit(f"setp.ne.u32 {n}, {t}, 0")
            else:
                e.fn.emit(f"ld.shared.b{_WIDTH[r.cls]} {n}, "
                          f"[{base}+{slot}]")
            new.append(n)
        out[id(v)] = TileRegs(new, got.layout, got.packed)
    return out


def _group_owners(op: Operation) -> dict[int, int]:
    """Warpgroup -> the worker partition that has all of it (whole, aligned warpgroups).
    Such a partition sets its registers at the top of its own code: ptxas sizes the
    register allocation of the code a ``setmaxnreg`` dominates by it, which a budget set
    before the branch to the partitions does not."""
    out: dict[int, int] = {}
    for p in op.partitions:  # type: ignore[attr-defined]
        if not p.default and p.warp_start % 4 == 0 and p.num_warps % 4 == 0:
            for g in range(p.warp_start // 4, (p.warp_start + p.num_warps) // 4):
                out[g] = p.index
    return out


def _setmaxnreg(e: Emitter, count: int, start: int) -> None:
    if count > start:
        e.fn.emit(insn.setmaxnreg("inc", count))
    elif count < start:
        e.fn.emit(insn.setmaxnreg("dec", count))


@lowers(ops.AsyncTasksOp)
def async_tasks(e: Emitter, op: Operation) -> None:
    ws: WsPlan = e.ws
    if ws is None or ws.op is not op:  # pragma: no cover - plan() saw every region
        raise _fail(op, "internal: an async_tasks region the dispatch was not planned for")
    func_args = {id(a) for a in op.parent.parent.parent.body.args}  # type: ignore[union-attr]
    layout = _store_captures(e, ws, _captures(op, func_args))
    e.fn.emit(insn.bar_sync(ws.barrier, ws.threads))
    budget = ws.budget
    if budget.default is not None:
        _setmaxnreg(e, budget.default, budget.maxnreg)
    default = next(p for p in op.partitions if p.default)  # type: ignore[attr-defined]
    e.block(default.block)
    e.fn.emit(insn.bar_sync(ws.barrier, ws.threads))
    # the worker warps' code, after the default path's
    main, e.fn.body = e.fn.body, e.worker_code
    try:
        e.fn.place(ws.workers_label)
        # the default path's cluster syncs before the region; the worker warps have not
        # touched memory yet, so their arrives release nothing (a released arrive costs a
        # MEMBAR.ALL.GPU)
        for _ in range(ws.syncs_before):
            e.fn.emit(insn.barrier_cluster_arrive(relaxed=True))
            e.fn.emit(insn.barrier_cluster_wait())
        e.fn.emit(insn.bar_sync(ws.barrier, ws.threads))
        loaded = _load_captures(e, layout)
        warp = e.fn.reg("b32")
        e.fn.emit(f"mov.u32 {warp}, %tid.x")
        e.fn.emit(f"shr.u32 {warp}, {warp}, 5")
        done = e.fn.label("ws_done")
        owners = _group_owners(op)
        shared = {g: n for g, n in budget.groups.items() if g not in owners}
        if shared:  # warpgroups of several partitions (or padding): every warp sets the budget here
            grp = e.fn.reg("b32")
            e.fn.emit(f"shr.u32 {grp}, {warp}, 2")
            for g, count in sorted(shared.items()):
                skip = e.fn.label("ws_group")
                p = e.fn.reg("pred")
                e.fn.emit(f"setp.ne.u32 {p}, {grp}, {g}")
                e.fn.emit(f"bra {skip}", p)
                _setmaxnreg(e, count, budget.maxnreg)
                e.fn.place(skip)
        for part in op.partitions:  # type: ignore[attr-defined]
            if part.default:
                continue
            skip = e.fn.label("ws_task")
            p = e.fn.reg("pred")
            e.fn.emit(f"setp.lt.u32 {p}, {warp}, {part.warp_start}")
            e.fn.emit(f"bra {skip}", p)
            e.fn.emit(f"setp.ge.u32 {p}, {warp}, {part.warp_start + part.num_warps}")
            e.fn.emit(f"bra {skip}", p)
            mine = [g for g, owner in owners.items() if owner is part.index and g in budget.groups]
            if mine:  # inside the partition's own branch, so that ptxas allocates its code with the new budget
                _setmaxnreg(e, budget.groups[mine[0]], budget.maxnreg)
            scope = Scope(part.warp_start, part.num_warps, ws.bars[part.index], whole_cta=False)
            saved = {k: e.values[k] for k in loaded}
            e.values.update(loaded)
            with e.enter(scope):
                e.block(part.block)
            e.values.update(saved)
            e.fn.emit(f"bra {done}")
            e.fn.place(skip)
        e.fn.place(done)
        e.fn.emit(insn.bar_arrive(ws.barrier, ws.threads))
        if ws.end_cluster_sync:
            from .lower_cluster import cluster_sync

            cluster_sync(e)
        e.fn.body.append(lower_arith.EXIT_MARK)
        e.fn.emit("ret")
    finally:
        e.worker_code, e.fn.body = e.fn.body, main
