"""``tl.dot`` on Hopper's warpgroup MMA: rewrite a ``dot`` that wgmma can run into the
TLX ops that the code generator already lowers to ``wgmma.mma_async``.

A qualifying ``%c = dot %a, %b, %acc`` becomes::

    %A = local_alloc : memdesc<MxKxT, smem, num=1>     // hoisted to the kernel's body,
    %B = local_alloc : memdesc<KxNxT, smem, num=1>     // before the loop nest of the dot
    ...
    local_store %a_buf, %a
    local_store %b_buf, %b
    %x = async_dot %a_buf, %b_buf, acc=%acc
    %c = async_dot_wait %x {pendings = 0}

so that everything else comes from the passes that follow: NVMMA buffer layouts, the
wgmma accumulator layout (``options.target.async_dot_layout``), shared-memory allocation, and
the hazard barriers and async-proxy fences of ``membar`` (the barrier between one
iteration's ``async_dot`` reading the buffers and the next one's ``local_store`` into
them included).

Expects: a canonicalized kernel before buffer and tile layouts are assigned; a target
without wgmma (``options.target.has.wgmma``) leaves the module as it is.
Guarantees: a rewritten dot's result is the ``async_dot_wait`` result, of the same type;
dots that are left alone are unchanged.
Leaves to the ``mma.sync`` path (``dot`` stays): batched (rank-3) dots; M not a multiple
of 64 or dims that are not powers of two (buffers need them); ``num_warps`` not a
multiple of 4; fp8 and int8 operands (wgmma reads them K-major only, so B needs a
transposed ``[N, K]`` buffer read through ``local_trans``: not done yet); fp32 operands
(tf32 -- wgmma truncates the low mantissa bits where ``tl.dot`` rounds them, so it needs
a rounding step before the store first -- and ``ieee``/``tf32x3``); bf16 operands with an
f16 accumulator; shapes the accumulator layout cannot take.
Refuses: nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from ..builder import Builder
from ..core import Block, Operation, Value
from ..layout.wgmma import WARPGROUP_ROWS
from ..ops import (
    AsyncCommitGroupOp,
    AsyncDotOp,
    AsyncDotWaitOp,
    ConstantOp,
    DotOp,
    ForOp,
    IfOp,
    LoadOp,
    LocalAllocOp,
    LocalLoadOp,
    LocalStoreOp,
    LocalTransOp,
    LocalViewOp,
    SelectOp,
    SplatOp,
    TransOp,
    WhileOp,
    XorOp,
    carried_slot,
)
from ..ops.tasks import warps_at
from ..types import DType, MemDescType, int1, int32
from .dot_loop_plan import pure_if
from .options import PassOptions
from .rewrite import replace_uses_in, top_level

# operand type -> the accumulator types wgmma takes here: f32, and for f16 operands also
# f16 (``out_dtype=tl.float16``: ``.f16`` accumulators in ``.f16x2`` registers, as Triton's
# ``wgmma ... .f16.f16.f16``). Only 16-bit operands: wgmma reads only them MN-major (PTX
# ISA, "wgmma.mma_async"), which a row-major [K, N] B buffer is.
_ACC = {"f16": ("f32", "f16"), "bf16": ("f32",)}


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def eligible(op: DotOp, num_warps: int, instr_k: Callable[[str], int | None]) -> bool:
    """Whether ``op`` (a ``dot``) has shapes and types wgmma runs (before the layout check).
    ``instr_k``: the K of one wgmma instruction for an operand type name, None when wgmma
    does not take it -- a fact of the target (``TargetInfo.wgmma_instr_k``)."""
    a, b, c = op.a.type, op.b.type, op.acc.type
    if len(a.shape) != 2 or num_warps % 4:
        return False
    elem = a.scalar
    if not isinstance(elem, DType) or c.scalar.ir_name not in _ACC.get(elem.ir_name, ()) or b.scalar != elem:
        return False
    (m, k), n = a.shape, b.shape[1]
    if not all(_pow2(d) for d in (m, n, k)) or m % WARPGROUP_ROWS:
        return False
    step = instr_k(elem.ir_name)
    return step is not None and k % step == 0


def _buffer(hoist: Builder, shape: tuple[int, ...], elem: DType, created: list[Operation]) -> Value:
    """Buffer 0 of a one-buffer allocation (made before the loop nest)."""
    alloc = hoist.create(LocalAllocOp, [], [MemDescType(shape, elem, 1)])
    zero = hoist.create(ConstantOp, [], [int32], {"value": 0})
    view = hoist.create(LocalViewOp, [alloc.result, zero.result], [MemDescType(shape, elem, 0)])
    created += [alloc, zero, view]
    return view.result


def _loaded_from(v: Value, shape: tuple[int, ...], elem: DType) -> Value | None:
    src = v.owner
    if isinstance(src, LocalLoadOp) and src.token is None:
        t = src.buf.type
        if isinstance(t, MemDescType) and t.buf_shape == shape and t.element == elem and not t.num:
            return src.buf
    return None


def _smem_operand(v: Value, shape: tuple[int, ...], elem: DType, here: Builder) -> Value | None:
    """The buffer ``v`` was just read from (``local_load`` of a whole buffer of this shape,
    as ``software-pipeline`` leaves a pipelined operand, possibly transposed by ``trans``),
    which wgmma reads in place; a transpose becomes a ``local_trans`` view (made by
    ``here``)."""
    buf = _loaded_from(v, shape, elem)
    if buf is not None:
        return buf
    src = v.owner
    if isinstance(src, TransOp) and tuple(src.order) == (1, 0):
        buf = _loaded_from(src.x, shape[::-1], elem)
        if buf is not None:
            return here.value(LocalTransOp, [buf], MemDescType(shape, elem, 0), perm=(1, 0))
    return None


def _reset(op: DotOp) -> tuple[Value, Value | None]:
    """``(acc, cond)``: a dot whose accumulator is ``select(cond, 0, x)`` -- a flattened
    loop starting a tile's sum (``flatten_loops``) -- accumulates into ``x`` unless
    ``cond``, which wgmma's ``scale-d`` operand says without touching the registers:
    ``(x, cond)``. Any other dot: ``(op.acc, None)``."""
    sel = op.acc.owner
    if isinstance(sel, SelectOp) and op.acc.uses == [op] and isinstance(sel.cond.owner, SplatOp) \
            and isinstance(sel.true_value.owner, ConstantOp) and sel.true_value.owner.value == 0:
        return sel.false_value, sel.cond.owner.x
    return op.acc, None


def _in_flight_ok(op: DotOp, acc: Value) -> tuple[int, list[IfOp]] | None:
    """``(slot, ifs)``: the slot of the enclosing ``for`` that carries ``op``'s result to
    its own accumulator ``acc`` -- then the wgmma may stay in flight into the next
    iteration (``pendings = 1``) -- and the ``if`` ops after it that also read the result
    (a flattened loop's epilogue, which waits for it inside); None otherwise."""
    body = op.parent
    if body is None or not isinstance(body.parent_op, ForOp):
        return None
    term = body.ops[-1]
    slots = [j for j, x in enumerate(term.operands) if x is op.result]
    later = body.ops[body.ops.index(op) + 1:]
    ifs: list[IfOp] = []
    for u in op.result.uses:
        top = top_level(u, body)
        if u is term:
            continue
        if top is u or not isinstance(top, IfOp) or top not in later:
            return None
        ifs.append(top)
    if len(slots) != 1 or acc is not body.args[1 + slots[0]] or len(acc.uses) != 1:
        return None
    return slots[0], ifs


def _deferred_wait_point(op: DotOp, a_regs: bool) -> tuple[int, Operation] | None:
    """(slot, op): where the next iteration waits for ``op``'s wgmma when the loop carries
    its result on to something other than its own accumulator (attention's ``acc``,
    rescaled before the next ``P @ V``): the first top-level op of the body that reads the
    carried value, writes shared memory (the pipelined copy that refills the slot this
    wgmma reads) or, for a register A, defines A again. Until then the wgmma stays in
    flight -- over the loop's back edge and the next iteration's first ``dot``, whose own
    wait retires it, as Triton schedules attention. None when the result goes elsewhere."""
    slot = carried_slot(op.result)
    body = op.parent
    if slot is None or body is None:
        return None
    arg = body.args[1 + slot]
    a_def = top_level(op.a.owner, body) if a_regs and isinstance(op.a.owner, Operation) else None
    for x in body.ops:
        if x is op:  # nothing to overlap before the dot itself: wait right after it
            return None
        if x is a_def or any(arg in y.operands for y in x.walk()) or _writes_smem(x):
            return slot, x
    return None  # pragma: no cover - op itself is in the body


def _writes_smem(x: Operation) -> bool:
    return any(e.access == "write" for y in x.walk() for e, _ in y.memory_effects())


def _store_point(v: Value, op: Operation) -> Operation:
    """Where to store operand ``v`` of ``op`` into its buffer: before the outermost loop
    around ``op`` that ``v`` is invariant in (Q of attention, loaded once), else right
    before ``op``."""
    block = v.owner.parent if isinstance(v.owner, Operation) else v.owner
    around_v = set()  # the region ops that enclose v's definition
    while block is not None and block.parent_op is not None:
        around_v.add(id(block.parent_op))
        block = block.parent_op.parent
    point, cur = op, _parent_op(op)
    while isinstance(cur, (ForOp, WhileOp)) and id(cur) not in around_v:
        point, cur = cur, _parent_op(cur)
    return point


def _parent_op(op: Operation) -> Operation | None:
    return op.parent.parent_op if op.parent is not None else None


def _ring_slot(buf: Value, op: Operation) -> bool:
    """Whether ``buf`` is a slot of a multi-buffered ring chosen by a value the loop around
    ``op`` carries (``software-pipeline``'s ring: the next iteration writes another slot)."""
    while isinstance(buf.owner, LocalTransOp):
        buf = buf.owner.buf
    view = buf.owner
    if not isinstance(view, LocalViewOp):
        return False
    t = view.buf.type
    body = op.parent
    return isinstance(t, MemDescType) and t.num >= 2 and body is not None and view.index in body.args[1:]


def _stays_put(buf: Value | None, v: Value, op: Operation) -> bool:
    """Whether the next iteration leaves the smem operand that ``op`` reads alone: a ring
    slot, or a buffer stored before the loop (a staging buffer a TMA load refills every
    iteration, or a store in the loop, does not)."""
    if buf is not None:
        return _ring_slot(buf, op)
    return _store_point(v, op) is not op


def _rewrite(op: DotOp, body: Block, options: PassOptions, num_warps: int) -> None:
    a, b, acc = op.a, op.b, op.acc
    elem = a.type.scalar
    assert isinstance(elem, DType)  # eligible() checked it
    (m, k), n = a.type.shape, b.type.shape[1]
    top = top_level(op, body)
    assert top is not None, "a dot outside the kernel's body"
    created: list[Operation] = []  # in order, to undo
    acc, reset = _reset(op)
    flight = _in_flight_ok(op, acc)
    slot = flight[0] if flight is not None else None
    with Builder(None, op.loc).before(op) as here, here.journal_of() as views:
        a_in, b_in = _smem_operand(a, (m, k), elem, here), _smem_operand(b, (k, n), elem, here)
    created += views
    # A stays in registers where registers produce it (attention's P): wgmma reads it there
    a_regs = a_in is None and not isinstance(a.owner, LoadOp)
    # one wgmma may stay in flight into the next iteration only if that iteration writes
    # nothing it reads: operands from a pipelined ring (software-pipeline rotates it) or
    # stored before the loop -- not registers, not a buffer stored every iteration
    stays = _stays_put(a_in, a, op) and _stays_put(b_in, b, op)
    if a_regs or not stays:
        slot = None
    deferred = _deferred_wait_point(op, a_regs) if slot is None and (a_regs or stays) else None
    with Builder(None, op.loc).before(top) as hoist:
        a_buf = a_in if a_in is not None else (a if a_regs else _buffer(hoist, (m, k), elem, created))
        b_buf = b_in if b_in is not None else _buffer(hoist, (k, n), elem, created)
    if a_in is None and not a_regs:
        with Builder(None, op.loc).before(_store_point(a, op)) as here:
            created.append(here.create(LocalStoreOp, [a_buf, a], []))
    if b_in is None:
        with Builder(None, op.loc).before(_store_point(b, op)) as here:
            created.append(here.create(LocalStoreOp, [b_buf, b], []))
    with Builder(None, op.loc).before(op) as here, here.journal_of() as made:
        use_acc = None
        if reset is not None:  # accumulate unless this iteration starts the sum
            use_acc = here.value(XorOp, [reset, here.value(ConstantOp, [], int1, value=True)], int1)
        dot = here.create(AsyncDotOp, [a_buf, b_buf], [acc.type], {"input_precision": "tf32"},
                          optional={"acc": acc, "use_acc": use_acc})
        if options.target.async_dot_layout(dot, num_warps) is None:
            for x in [*reversed(made), *reversed(created)]:
                x.erase()
            return
        done = None
        if deferred is None:
            done = here.create(AsyncDotWaitOp, [dot.result], [acc.type], {"pendings": 0 if slot is None else 1})
    op.result.replace_all_uses_with(done.results[0] if done is not None else dot.result)
    sel = op.acc.owner
    op.erase()
    if reset is not None and not sel.results[0].uses:  # type: ignore[union-attr]
        sel.erase()  # type: ignore[union-attr]
    for v in (a, b):  # a read wgmma now does from the buffer itself
        src = v.owner
        if isinstance(src, TransOp) and not v.uses:
            v = src.x
            src.erase()
        src = v.owner
        if isinstance(src, LocalLoadOp) and not v.uses and src.parent is not None:
            src.erase()
    if deferred is not None:  # the next iteration waits before it touches what the wgmma does
        slot, point = deferred
        _wait_before(dot.parent.args[1 + slot], point, op)  # type: ignore[union-attr]
    if flight is not None and slot is not None:  # an epilogue in the loop waits for the result first
        for x in flight[1]:
            _wait_in(x, done.results[0], op)  # type: ignore[union-attr]
    if slot is not None:  # the last wgmma of the loop completes before its result is read
        if done is not None:  # pendings = 1
            _sink(done, dot)
        loop = dot.parent.parent_op  # type: ignore[union-attr]
        assert isinstance(loop, ForOp) and loop.parent is not None
        _wait_before(loop.results[slot], loop.parent.ops[loop.parent.ops.index(loop) + 1], op)


def _sink(wait: Operation, dot: Operation) -> None:
    """Move the pure ops between a ``pendings = 1`` wait and the last copy the iteration
    issues after it (the look-ahead copies' addresses and masks, a flattened loop's
    once-per-tile index ``if``) up before the wgmma ``dot``, where they run while the
    previous wgmma does, as Triton places them: after ``wgmma.wait_group`` they would delay
    the refill of the ring, and ptxas does not move them back over it. An op moves when
    it does not read the wait's result or anything that stays behind."""
    block = wait.parent
    assert block is not None and dot.parent is block
    ops = block.ops
    later = ops[ops.index(wait) + 1:]
    ends = [i for i, x in enumerate(later) if isinstance(x, AsyncCommitGroupOp)]
    if not ends:
        return
    stays: set[int] = {id(wait)}
    run = []
    for x in later[:ends[-1]]:
        movable = (x.PURE and not x.regions and not isinstance(x, DotOp)) or (isinstance(x, IfOp) and pure_if(x))
        if movable and not any(isinstance(v.owner, Operation) and id(v.owner) in stays
                               for y in x.walk() for v in y.operands):
            run.append(x)
        else:
            stays.add(id(x))
    for x in run:
        block.remove(x)
        block.insert(ops.index(dot), x)


def _wait_before(v: Value, point: Operation, dot: Operation) -> None:
    """An ``async_dot_wait {pendings = 0}`` of ``v`` right before ``point``, read by every
    other user of ``v`` instead; at the line of ``dot``, whose wgmma it retires."""
    with Builder(None, dot.loc).before(point) as b:
        wait = b.create(AsyncDotWaitOp, [v], [v.type], {"pendings": 0})
    replace_uses_in([u for u in v.uses if u is not wait], v, wait.results[0])


def _wait_in(x: IfOp, v: Value, dot: Operation) -> None:
    """In each region of ``x`` that reads ``v``: an ``async_dot_wait {pendings = 0}`` of
    ``v`` at the region's start, read there instead of ``v``."""
    for region in x.regions:
        block = region.block
        users = [u for u in v.uses if top_level(u, block) is not None]
        if not users:
            continue
        with Builder(None, dot.loc).before(block.ops[0]) as b:
            wait = b.create(AsyncDotWaitOp, [v], [v.type], {"pendings": 0})
        replace_uses_in(users, v, wait.results[0])


def run(module: Operation, options: PassOptions) -> Operation:
    if not options.target.has.wgmma:
        return module
    for func in module.funcs:
        for op in list(func.walk()):
            if not isinstance(op, DotOp):
                continue
            num_warps = warps_at(op, func.attrs["num_warps"])  # a warp-specialized partition's own
            if eligible(op, num_warps, options.target.wgmma_instr_k):
                _rewrite(op, func.body, options, num_warps)
    return module
