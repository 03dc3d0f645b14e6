"""Resources of warp-specialized partitions on NVIDIA: the register budget that
``setmaxnreg`` sets per warpgroup, and the hardware barrier each partition synchronizes
on. Small pure functions over numbers, so that each rule can be checked against a table
worked by hand (``tests/codegen/test_partition_budget.py``).

Sources: PTX ISA "setmaxnreg" (the count is a multiple of 8 in 24..256, set per
warpgroup: every warp of the warpgroup executes it, ``.sync.aligned``); "bar.sync" (16
hardware barriers per CTA; a thread count, a multiple of 32, makes a barrier of a subset
of the warps); the register file of an SM (65536 32-bit registers).
"""

from __future__ import annotations

from dataclasses import dataclass

REGISTER_FILE = 65536      # 32-bit registers per SM (sm_90, sm_100)
MIN_REGS, MAX_REGS = 24, 256
WARPGROUP = 4              # warps per warpgroup: setmaxnreg's unit
NUM_BARRIERS = 16          # hardware named barriers per CTA
CTA_BARRIER = 0            # the compiler's own barrier (the default partition's, under warp specialization)


class BudgetError(ValueError):
    """A request the hardware cannot honour; the caller reports it at the user's line."""


@dataclass(frozen=True)
class Worker:
    """A non-default partition: its first warp, its warp count and its register request
    (None: the user asked for none)."""

    first_warp: int
    num_warps: int
    registers: int | None = None


@dataclass(frozen=True)
class RegisterBudget:
    """``setmaxnreg`` counts: ``default`` for the default partition's warpgroups and
    ``groups[g]`` for worker warpgroup ``g`` (warps ``4g .. 4g+3``); None everywhere when no
    partition asked for registers (no ``setmaxnreg`` at all). ``maxnreg`` is what every
    warp starts with (the kernel's ``.maxnreg``), ``total_warps`` the warps launched
    (padded to whole warpgroups)."""

    maxnreg: int
    total_warps: int
    default: int | None
    groups: dict[int, int]


def round_regs(n: int) -> int:
    """A request as ``setmaxnreg`` takes it: up to a multiple of 8, clamped to 24..256."""
    return min(MAX_REGS, max(MIN_REGS, -(-n // 8) * 8))


def padded_warps(default_warps: int, workers: list[Worker]) -> int:
    """Warps launched: every partition's, padded to whole warpgroups (empty padding
    partitions fill the last one), e.g. 4 default + 1 + 1 worker warps -> 8."""
    end = max([default_warps] + [w.first_warp + w.num_warps for w in workers])
    return -(-end // WARPGROUP) * WARPGROUP


def default_maxnreg(total_warps: int) -> int:
    """Registers per thread when every warp of one CTA shares the register file evenly,
    rounded down to 8 (and at most 256): 8 warps -> 256, 12 -> 168, 16 -> 128."""
    return min(MAX_REGS, REGISTER_FILE // (total_warps * 32) // 8 * 8)


def register_budget(default_warps: int, default_registers: int | None, workers: list[Worker],
                    maxnreg: int | None = None) -> RegisterBudget:
    """The ``setmaxnreg`` counts of a warp-specialized kernel.

    The CTA starts with ``maxnreg`` registers per thread for every warp, and setmaxnreg
    only moves registers within that pool (``setmaxnreg.inc`` waits until others
    released them). Each worker warpgroup gets the largest request of the partitions in
    it (rounded up to 8, clamped to 24..256; padding warps ask for nothing). The default
    partition gets its own request when it made one; otherwise it gets what the workers
    leave of the pool ("donation"), rounded down to 8. Worked example: a 4-warp default
    without a request and two 4-warp consumers asking for 232 -> 12 warps, ``maxnreg``
    168 (65536 / 384 = 170.6 -> 168), a pool of 168 x 384 = 64512; the consumers'
    warpgroups 1 and 2 get 232 each, which leaves 64512 - 2 x 128 x 232 = 5120 registers
    for the 128 default threads: 40.

    Refuses (``BudgetError``): a request that is not a multiple of 8 or outside 24..256,
    requests on some workers only, and budgets whose warpgroups together need more than
    the pool (``setmaxnreg.inc`` would wait forever).
    """
    requests = [w.registers for w in workers]
    for r in requests + [default_registers]:
        if r is not None and (r % 8 or not MIN_REGS <= r <= MAX_REGS):
            raise BudgetError(f"a register request must be a multiple of 8 from {MIN_REGS} to {MAX_REGS}, got {r}")
    if any(r is None for r in requests) and any(r is not None for r in requests):
        raise BudgetError("registers= is set on some worker tasks only: set it on every worker task or on none")
    total = padded_warps(default_warps, workers)
    start = maxnreg if maxnreg is not None else default_maxnreg(total)
    if default_registers is None and all(r is None for r in requests):
        return RegisterBudget(start, total, None, {})
    groups: dict[int, int] = {}
    for w in workers:
        want = w.registers if w.registers is not None else start
        for warp in range(w.first_warp, w.first_warp + w.num_warps):
            g = warp // WARPGROUP
            groups[g] = max(groups.get(g, 0), round_regs(want))
    default_groups = -(-default_warps // WARPGROUP)
    for g in range(default_groups, total // WARPGROUP):
        groups.setdefault(g, MIN_REGS)  # warpgroups of padding warps only
    worker_regs = sum(regs * WARPGROUP * 32 for regs in groups.values())
    pool = start * total * 32
    if default_registers is None:
        left = (pool - worker_regs) // (default_groups * WARPGROUP * 32)
        default = min(MAX_REGS, left // 8 * 8)
        if default < MIN_REGS:
            raise BudgetError(f"the worker tasks take {worker_regs} registers; the {default_warps} default warps "
                              f"would be left {left} per thread, under the minimum of {MIN_REGS}")
    else:
        default = default_registers
    need = worker_regs + default * default_groups * WARPGROUP * 32
    if need > pool:
        raise BudgetError(f"the tasks' register requests need {need} registers per CTA; its {total} warps start "
                          f"with {start} each, {pool} in all, and setmaxnreg only moves registers between them")
    return RegisterBudget(start, total, default, groups)


def barrier_ids(partition_warps: list[int], user_ids: set[int]) -> list[int | None]:
    """The hardware barrier of each worker partition (``partition_warps``: their warp
    counts, in order), around the ids the user's named barriers take: barrier 0 stays the
    compiler's own (the default partition's), a one-warp partition needs none
    (``bar.warp.sync``), the others take the lowest free ids from 1 up. Worked example:
    workers of 4, 1 and 4 warps with user barriers 1 and 9 -> [2, None, 3].

    Refuses (``BudgetError``): more partitions than free barriers.
    """
    free = [i for i in range(1, NUM_BARRIERS) if i not in user_ids]
    out: list[int | None] = []
    for n in partition_warps:
        if n == 1:
            out.append(None)
            continue
        if not free:
            used = ", ".join(str(i) for i in sorted(user_ids)) or "none"
            raise BudgetError(f"{len([n for n in partition_warps if n > 1])} partitions of several warps need a "
                              f"hardware barrier each; {NUM_BARRIERS} exist, barrier 0 is the compiler's and the "
                              f"kernel's named barriers take {used}")
        out.append(free.pop(0))
    return out
