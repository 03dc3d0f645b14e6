"""Stage the register forms of TMA through shared memory (tlx-semantics §5.9, duty 7).

``desc.load(coords)`` (``descriptor_load``) becomes: a one-buffer ``local_alloc`` and a
one-barrier ``barrier_alloc``, ``barrier_expect`` of the block's bytes, ``tma_load``,
``barrier_wait`` on phase 0 and ``local_load``. ``desc.store(coords, value)``
(``descriptor_store``) becomes: ``local_alloc``, ``local_store``, ``tma_store`` and
``tma_store_wait(0)`` (the hazard pass adds the barrier and proxy fence between the
store to shared memory and the TMA read). A store inside a loop keeps its staging buffer
for the whole loop and waits only before it writes the buffer again and after the loop:
the TMA engine reads one tile's result while the next tile is computed, as Triton does in
its persistent matmul. In a warp-specialized kernel the loop is the outermost one inside
the storing partition (a persistent consumer's loop over tiles). The barrier is
initialized at the point of use, so every use starts at phase 0, also inside loops.

Descriptor loads that feed ``tl.dot`` in a pipelined loop never get here: the
``software-pipeline`` pass before this one turns them into a TMA ring (``tma_ring``).

The interpreter runs the original ops; code generators that have TMA run this pass
before buffer layouts are assigned.

Expects: the canonicalized tile IR of a target with TMA (``options.target.has.tma``); a
target without it leaves the module as it is.
Guarantees: no ``descriptor_load`` / ``descriptor_store`` remains; what replaces them
reads and writes the same elements.
Refuses: nothing.
"""

from __future__ import annotations

from ..builder import Builder
from ..core import Operation, Value
from ..ops import (
    BarrierAllocOp,
    BarrierExpectOp,
    BarrierViewOp,
    BarrierWaitOp,
    ConstantOp,
    DescriptorLoadOp,
    DescriptorStoreOp,
    ForOp,
    LocalAllocOp,
    LocalLoadOp,
    LocalStoreOp,
    LocalViewOp,
    TmaLoadOp,
    TmaStoreOp,
    TmaStoreWaitOp,
    WhileOp,
)
from ..ops.tasks import enclosing_partition
from ..types import BarrierType, MemDescType, TensorDescType, int32, narrow
from .options import PassOptions


def _staging_buffer(b: Builder, desc: TensorDescType) -> tuple[Value, Value]:
    buf = b.value(LocalAllocOp, [], MemDescType(desc.block_shape, desc.element, 1))
    zero = b.value(ConstantOp, [], int32, value=0)
    return b.value(LocalViewOp, [buf, zero], MemDescType(desc.block_shape, desc.element, 0)), zero


def _stage_load(op: DescriptorLoadOp) -> None:
    desc = op.desc
    dt = narrow(desc.type, TensorDescType)
    b = Builder.at(op)
    view, zero = _staging_buffer(b, dt)
    bars = b.value(BarrierAllocOp, [], BarrierType(1), count=1)
    bar = b.value(BarrierViewOp, [bars, zero], BarrierType(0))
    b.create(BarrierExpectOp, [bar], [], {"bytes": dt.block_bytes})
    b.create(TmaLoadOp, [desc, view, bar, *op.coords], [])
    b.create(BarrierWaitOp, [bar, zero], [])
    value = b.value(LocalLoadOp, [view], op.result.type)
    op.result.replace_all_uses_with(value)
    op.erase()


def _outermost_loop(op: Operation) -> Operation | None:
    """The outermost ``for``/``while`` around ``op`` inside ``op``'s own partition (the
    staging buffer and its waits stay with the warps that store: a consumer partition
    of a persistent warp-specialized kernel, each replica with its own buffer)."""
    inside = enclosing_partition(op)
    tasks = inside[0] if inside is not None else None
    found, cur = None, op.parent.parent_op if op.parent is not None else None
    while cur is not None and cur is not tasks:
        if isinstance(cur, (ForOp, WhileOp)):
            found = cur
        cur = cur.parent.parent_op if cur.parent is not None else None
    return found


def _stage_store(op: DescriptorStoreOp) -> None:
    desc, value = op.desc, op.value
    dt = narrow(desc.type, TensorDescType)
    # in a loop (a persistent kernel's epilogue) the TMA engine reads the buffer while the
    # loop goes on: the buffer lives across the loop, and the wait comes before the buffer
    # is written again and after the loop
    loop = _outermost_loop(op)
    view, _ = _staging_buffer(Builder.at(op if loop is None else loop), dt)
    b = Builder.at(op)
    if loop is not None:
        b.create(TmaStoreWaitOp, [], [], {"pendings": 0})
    b.create(LocalStoreOp, [view, value], [])
    b.create(TmaStoreOp, [desc, view, *op.coords], [], {"reduce": "", "eviction": ""})
    (b if loop is None else Builder.at(loop, after=True)).create(TmaStoreWaitOp, [], [], {"pendings": 0})
    op.erase()


def run(module: Operation, options: PassOptions) -> Operation:
    if not options.target.has.tma:
        return module
    for op in list(module.walk()):
        if isinstance(op, DescriptorLoadOp):
            _stage_load(op)
        elif isinstance(op, DescriptorStoreOp):
            _stage_store(op)
    return module
