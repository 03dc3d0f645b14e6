"""The "registers" form of ``software-pipeline``: loads of a ``tl.dot`` loop prefetched one
iteration ahead into registers and staged through a double-buffered LDS ring (the AMD
chips, whose loads into LDS go through registers; Triton's AMD stream pipeliner does this
for its default ``num_stages=2``)::

    %A = local_alloc : memdesc<2 x BMxBK>                   // one ring per pipelined load
    %r0 = load %ptr(lb), mask(lb) & (lb < ub)              // prologue: iteration 0's registers
    for %iv ... iter_args(..., %ahead..., %r = %r0, %slot = 0) {
      local_store %A[%slot], %r                            // this iteration's operand
      %r1 = load %ptr(ahead), mask(ahead) & (iv + step < ub)   // the next one's, in flight ...
      // <- membar's one barrier: the stores above before the reads below
      %a = local_load %A[%slot]                            // ... while this dot runs
      ... the body, the dot ...
      yield ..., %ahead', %r1, next_slot(%slot)
    }

The global loads of iteration k + 1 are issued before the dot of iteration k, so their
latency hides behind its MFMAs / WMMAs; they are consumed at the top of iteration k + 1.
The store into slot k mod 2 cannot overwrite what iteration k - 1 still reads (slot
k - 1 mod 2), and iteration k - 2's reads of slot k mod 2 finished before iteration k - 1's
barrier: so one barrier per iteration suffices, which ``membar`` sees because the slot is
a ring counter (``ring_slots``). One LDS buffer would need a second barrier, between the
dot's reads and the next iteration's store.

Prefetch distance: one iteration, whatever ``num_stages >= 2`` asks. Each further
iteration ahead would hold another full set of operand registers (a 128x64 fp16 tile over
256 threads is 16 VGPRs per operand per iteration) across the dot, which the large
tutorial tiles cannot afford without spilling; with LDS staging the load latency one dot
hides is what the register form can use. Deeper pipelines on AMD want the direct
global->LDS copies (the newer CDNA chips') in the ``async_copy`` form.

The double buffer must fit: where two slots of every operand, with the kernel's other
buffers, exceed the target's LDS (``max_shared_bytes``: 256x128x64 fp16 needs 96 KB, the
MI300's LDS has 64), the ring has one slot and the loop two barriers (the store waits for
the previous iteration's reads), as Triton's one-buffer AMD schedule; where one slot does
not fit either, the loop is left as it is.

The prefetch of the iteration past the end is masked off (it reads nothing, and its
registers are never stored); a loop of 0 iterations issues only the masked-off prologue
load.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation, Value
from ..types import MemDescType, TileType, int1, narrow, tile
from .dot_loop_plan import Cloner, Plan, buffer_type, carry_more, const, rings, slot_view, yield_more
from .ring_slots import next_slot

SLOTS = 2  # the double buffer; one where two do not fit


def slots(p: Plan[ops.LoadOp], max_bytes: int) -> int:
    """How many LDS slots the rings of ``p`` get: 2, 1, or 0 (no room: not pipelined).

    128x128x64 fp16 (a 128x64 and a 64x128 operand, 16 KB each): 2 slots are 64 KB, which
    fits an LDS of 65536 bytes; 256x128x64: 2 slots are 96 KB, 1 slot 48 KB. A loop that
    also stores a tile (the epilogue of a flattened persistent kernel) keeps that tile's
    bytes free for its layout conversion: 128x128x64 then gets 1 slot in 64 KB of LDS, as
    Triton's AMD pipeliner gives ``num_stages=2`` (one LDS buffer, the next loads in
    registers)."""
    func: Operation = p.loop
    while not isinstance(func, ops.FuncOp):
        assert func.parent is not None and func.parent.parent_op is not None
        func = func.parent.parent_op
    others = sum(narrow(op.result.type, MemDescType).nbytes * max(1, narrow(op.result.type, MemDescType).num)
                 for op in func.walk() if isinstance(op, ops.LocalAllocOp))
    ring = sum(buffer_type(ld.result.type, 0).nbytes for ld in p.loads)
    # a tile stored inside the loop (a flattened persistent kernel's epilogue) is converted
    # to its store layout through LDS scratch while the ring is live: leave room for it
    scratch = max([op.value.type.numel * op.value.type.scalar.itemsize for op in p.loop.walk()
                   if isinstance(op, ops.StoreOp) and isinstance(op.value.type, TileType)
                   and len(op.value.type.shape) >= 2], default=0)
    for n in (SLOTS, 1):
        if others + n * ring + scratch <= max_bytes:
            return n
    return 0


def _prefetch(b: Builder, p: Plan[ops.LoadOp], m: dict[int, Value], valid: Value) -> list[Value]:
    """The loads of one iteration (addresses ``m``) into registers, masked by ``valid``."""
    out: list[Value] = []
    for ld in p.loads:
        t = ld.result.type
        mask = b.value(ops.SplatOp, [valid], tile(t.shape, int1))
        if ld.mask is not None:
            mask = b.value(ops.AndOp, [m.get(id(ld.mask), ld.mask), mask], mask.type)
        other = m.get(id(ld.other), ld.other) if ld.other is not None else None
        new = b.create(ops.LoadOp, [m.get(id(ld.ptr), ld.ptr)], [t], dict(ld.attrs),
                       optional={"mask": mask, "other": other}, loc=ld.loc)
        out.append(new.results[0])
    return out


def rewrite(p: Plan[ops.LoadOp], n: int) -> None:
    """Pipeline ``p.loop`` in the register form (the module doc's picture) with ``n``
    slots (``slots``)."""
    loop = p.loop
    cl = Cloner(p)
    loc = loop.loc
    lb, ub = loop.lb, loop.ub
    with Builder(None, loc).before(loop) as b:
        ring_bufs = rings(b, p, n)
        m = cl.run(b, lb, [loop.inits[j] for j in p.carried])
        first = _prefetch(b, p, m, b.value(ops.CmpOp, [lb, ub], int1, predicate="lt"))
        counter = [const(b, 0)] if n > 1 else []
        new, extra = carry_more(p, cl, b, cl.next_state(m) + first + counter)
    nb = new.body
    ahead, regs = extra[:len(p.carried)], extra[len(p.carried):len(p.carried) + len(p.loads)]
    with Builder(None, loc).before(nb.ops[0]) as b:
        slot = extra[-1] if n > 1 else const(b, 0)
        views = []
        for ld, ring, r in zip(p.loads, ring_bufs, regs):
            t = ld.result.type
            views.append(slot_view(b, ring, slot, t))
            b.create(ops.LocalStoreOp, [views[-1], r], [])
        iv = nb.args[0]
        iv_next = b.value(ops.AddOp, [iv, const(b, p.step, iv.type)], iv.type)
        m = cl.run(b, iv_next, ahead)
        nxt = _prefetch(b, p, m, b.value(ops.CmpOp, [iv_next, ub], int1, predicate="lt"))
        for ld, view in zip(p.loads, views):
            ld.result.replace_all_uses_with(b.value(ops.LocalLoadOp, [view], ld.result.type))
    with Builder(None, loc).before(nb.ops[-1]) as b:
        carried_out = cl.next_state(m) + nxt + ([next_slot(b, slot, n)] if n > 1 else [])
    yield_more(new, carried_out)
    for ld in p.loads:
        ld.erase()
