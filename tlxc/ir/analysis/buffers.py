"""Which allocation a buffer value views, and where ops sit in program order: the facts
that buffer layout assignment, shared-memory allocation and hazard-barrier insertion
share.

* ``alias_roots(func)`` -- for every buffer or mbarrier value (by ``id``), the
  allocations (``local_alloc`` / ``barrier_alloc`` ops) it may be a view of, following
  views (``local_view``, ``local_slice``, ``local_trans``, ``local_reinterpret``,
  ``barrier_view``), loop-carried values and region results.
* ``ProgramOrder(func)`` -- a number for every op in a pre-order walk, and the number
  after the last op nested in each region-holding op, so "live from here to there"
  is an interval; ``effective(op, root)`` stretches an op inside a loop to the loop's
  end when the allocation lives outside it (the next iteration comes back to it), and an
  op inside an ``async_tasks`` partition to the region's end (partitions run together).
"""

from __future__ import annotations

from .. import ops
from ..core import Block, Operation, Value
from ..types import BarrierType, MemDescType

VIEW_OPS = (ops.LocalViewOp, ops.LocalSliceOp, ops.LocalTransOp, ops.LocalReinterpretOp, ops.BarrierViewOp)
ROOT_OPS = (ops.LocalAllocOp, ops.BarrierAllocOp)
LOOP_OPS = (ops.ForOp, ops.WhileOp)
# the partitions of async_tasks run at the same time: a use in one lasts as long as the region
CONCURRENT_OPS = (ops.AsyncTasksOp,)


def is_buffer(v: Value) -> bool:
    return isinstance(v.type, (MemDescType, BarrierType))


def alias_roots(func: Operation) -> dict[int, frozenset[Operation]]:
    """See the module doc; values that view nothing are absent."""
    roots: dict[int, set[Operation]] = {}
    edges: list[tuple[Value, Value]] = []
    for op in func.walk():
        if isinstance(op, ROOT_OPS):
            roots[id(op.result)] = {op}
        elif isinstance(op, VIEW_OPS):
            edges.append((op.operands[0], op.result))  # what a view op views is its first operand (buf / bars)
        edges += [(a, b) for a, b in op.value_flow() if is_buffer(a)]  # loops' and ifs' own declarations
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            src = roots.get(id(a))
            if src:
                dst = roots.setdefault(id(b), set())
                if not src <= dst:
                    dst |= src
                    changed = True
    return {k: frozenset(v) for k, v in roots.items()}


def values_of(func: Operation) -> list[Value]:
    """Every value defined in ``func`` (block arguments and op results), in program order."""
    out: list[Value] = []

    def block(b: Block) -> None:
        out.extend(b.args)
        for op in b.ops:
            for r in op.regions:
                for inner in r.blocks:
                    block(inner)
            out.extend(op.results)

    block(func.regions[0].block)
    return out


class ProgramOrder:
    """Positions of ops in a pre-order walk; ``end[op]`` follows everything nested in it."""

    def __init__(self, func: Operation) -> None:
        self.pos: dict[int, int] = {}
        self.end: dict[int, int] = {}
        self._n = 0
        self._number(func.regions[0].block)
        self.last = self._n

    def _number(self, block: Block) -> None:
        for op in block.ops:
            self.pos[id(op)] = self._n
            self._n += 1
            for r in op.regions:
                for b in r.blocks:
                    self._number(b)
            self.end[id(op)] = self._n
            self._n += 1

    def of(self, op: Operation) -> int:
        return self.pos[id(op)]

    def encloses(self, outer: Operation, op: Operation) -> bool:
        return self.pos[id(outer)] < self.pos[id(op)] < self.end[id(outer)]

    def partition_of(self, op: Operation) -> tuple[int, int] | None:
        """Which partition of the outermost ``async_tasks`` region ``op`` sits in: (that
        op's position, the region's index); None outside any. Two allocations made in
        different partitions of one region are live at the same time whatever their
        positions say, since the partitions run side by side."""
        found = None
        child = op
        parent = op.parent.parent_op if op.parent is not None else None
        while parent is not None:
            if isinstance(parent, CONCURRENT_OPS):
                index = next(i for i, r in enumerate(parent.regions) if any(b is child.parent for b in r.blocks))
                found = (self.pos[id(parent)], index)
            child = parent
            parent = parent.parent.parent_op if parent.parent is not None else None
        return found

    def effective(self, op: Operation, root: Operation | None) -> int:
        """``op``'s position, moved to the end of every loop that contains ``op`` but not
        ``root`` (a use inside a loop recurs until the loop ends), and of every
        ``async_tasks`` region (its partitions run side by side, not one after another)."""
        p = self.pos[id(op)]
        parent = op.parent.parent_op if op.parent is not None else None
        while parent is not None and parent.NAME != "func":
            if isinstance(parent, LOOP_OPS + CONCURRENT_OPS) and (root is None or not self.encloses(parent, root)):
                p = max(p, self.end[id(parent)])
            parent = parent.parent.parent_op if parent.parent is not None else None
        return p
