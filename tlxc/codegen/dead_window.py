"""Scratch over dead buffers: where an op outside loops may put its shared-memory (LDS)
scratch over the bytes of buffers that are dead at it, instead of in the scratch area
after every buffer -- a GEMM epilogue's layout conversion over the operand buffers (or
the ``cp.async`` ring) of the finished main loop. Both code generators ask it."""

from __future__ import annotations

from typing import Any

from ..ir import ops
from ..ir.core import Operation

WINDOW_ALIGN = 128  # a scratch window over dead buffers starts on a bank line


class DeadWindows:
    """The buffers' program order and live ranges of one kernel (``smem_alloc.live_ranges``),
    computed on the first question."""

    def __init__(self, plan: Any, scratch_offset: int) -> None:
        self.plan, self.scratch_offset = plan, scratch_offset
        self._live: Any = None

    def at(self, op: Operation) -> tuple[int, int]:
        """(offset, bytes) of the largest run below the scratch area that only buffers dead
        at ``op`` cover: every access to them comes earlier in the program, and ``op`` is in
        no loop. (0, 0): none. Only an op whose scratch use starts with a barrier of every
        thread that touched them may put its scratch there."""
        plan = self.plan
        if plan is None or not plan.allocations or ops.in_loop(op):
            return 0, 0
        if self._live is None:
            from ..ir.analysis.buffers import ProgramOrder
            from ..ir.passes.smem_alloc import live_ranges

            func = op
            while func.parent is not None and func.parent.parent_op is not None and func.NAME != "func":
                func = func.parent.parent_op
            order = ProgramOrder(func)
            self._live = (order, live_ranges(func, order, plan.roots, [a.op for a in plan.allocations]))
        order, live = self._live
        if id(op) not in order.pos:
            return 0, 0
        p = order.of(op)
        busy = sorted((a.offset, a.offset + a.size) for a in plan.allocations if live[id(a.op)][1] >= p)
        best, at = (0, 0), 0
        for lo, hi in busy + [(self.scratch_offset, self.scratch_offset)]:
            if lo - at > best[1]:
                best = (at, lo - at)
            at = max(at, -(-hi // WINDOW_ALIGN) * WINDOW_ALIGN)
        return best
