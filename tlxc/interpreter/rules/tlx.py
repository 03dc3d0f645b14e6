"""Rules for the TLX ops: buffers (``View``), mbarriers (``Barrier``), cp.async, TMA and
wgmma. The semantics (and the errors for reading data an async copy has not delivered,
or waiting on a phase that cannot complete) live in ``tlxc.interpreter.onchip``; the
tensor-descriptor block reads and writes in ``tlxc.interpreter.descriptors``."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops import async_copy as C
from ...ir.ops import barriers as B
from ...ir.ops import buffers as M
from ...ir.ops import wgmma as W
from ...ir.types import BarrierType, DType, MemDescType, TensorDescType
from .. import numerics as N
from ..cluster import cluster_barrier
from ..onchip import (
    DEADLOCK,
    PENDING,
    Arena,
    Barrier,
    NamedBarrier,
    OnChip,
    PendingCopy,
    View,
    barrier_array,
    check_readable,
)
from ..registry import LaunchState, evaluates
from ..tasks import Wait

Fn = Callable[..., Any]


def _descriptors() -> Any:
    from .. import descriptors  # the block reads and writes of tensor descriptors

    return descriptors


def _np(t: DType) -> np.dtype:
    return N.storage_dtype(t)


# -- buffers ---------------------------------------------------------------------------------
@evaluates(M.LocalAllocOp)
def _local_alloc(op: Operation, state: LaunchState) -> Fn:
    t: MemDescType = op.result.type  # type: ignore[assignment]
    dt, loc = _np(t.element), op.loc
    nbytes = t.nbytes * t.num

    if op.alias_placement() is not None:  # type: ignore[attr-defined]
        off, step = op.alias_placement()  # type: ignore[attr-defined]

        def overlay(spec: Arena) -> View:  # storage_alias_spec: the frontend placed it
            one = View.contiguous(spec, off, t.buf_shape, dt)
            return View(spec, off, one.shape, one.strides, dt, t.num, step)

        return overlay

    def alloc(reuse: View | None = None) -> View:
        if reuse is None:
            arena, offset = state.onchip.allocate(op, lambda: Arena(nbytes, loc, op)), 0
        else:
            arena, offset = reuse.arena, reuse.offset
            if offset + nbytes > arena.data.size:
                raise InterpreterError("TLXC-INTERP-001", f"this allocation needs {nbytes} bytes but the buffer it "
                                                          f"reuses has {arena.data.size - offset}", loc)
        one = View.contiguous(arena, offset, t.buf_shape, dt)
        return View(arena, offset, one.shape, one.strides, dt, t.num, t.nbytes)

    return alloc


@evaluates(M.StorageAliasSpecOp)
def _storage_alias_spec(op: Operation, state: LaunchState) -> Fn:
    size, loc = op.size, op.loc
    return lambda: state.onchip.allocate(op, lambda: Arena(size, loc, op))


@evaluates(M.LocalViewOp)
def _local_view(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def view(buf: View, index: np.ndarray) -> View:
        i = int(index)
        if not 0 <= i < buf.count:
            raise InterpreterError("TLXC-INTERP-001", f"buffer index {i} is out of range for an array of "
                                                      f"{buf.count} buffers", loc)
        return View(buf.arena, buf.offset + i * buf.step, buf.shape, buf.strides, buf.dtype)

    return view


@evaluates(M.LocalSliceOp)
def _local_slice(op: Operation, state: LaunchState) -> Fn:
    shape = op.result.type.buf_shape
    loc = op.loc

    def slice_(buf: View, *offsets: np.ndarray) -> View:
        offs = [int(o) for o in offsets]
        for d, (o, n, full) in enumerate(zip(offs, shape, buf.shape)):
            if o < 0 or o + n > full:
                raise InterpreterError("TLXC-INTERP-001", f"slice [{o}, {o + n}) of dimension {d} is outside the "
                                                          f"buffer's {full}", loc)
        start = buf.offset + sum(o * s for o, s in zip(offs, buf.strides))
        return View(buf.arena, start, shape, buf.strides, buf.dtype)

    return slice_


@evaluates(M.LocalTransOp)
def _local_trans(op: Operation, state: LaunchState) -> Fn:
    perm = tuple(op.perm)
    return lambda buf: View(buf.arena, buf.offset, tuple(buf.shape[p] for p in perm),
                            tuple(buf.strides[p] for p in perm), buf.dtype)


@evaluates(M.LocalReinterpretOp)
def _local_reinterpret(op: Operation, state: LaunchState) -> Fn:
    t: MemDescType = op.result.type  # type: ignore[assignment]
    dt = _np(t.element)
    return lambda buf: View.contiguous(buf.arena, buf.offset, t.buf_shape, dt)


@evaluates(M.LocalLoadOp)
def _local_load(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def load(buf: View, token: Any = None) -> np.ndarray:
        check_readable(buf, "local_load", loc)
        return buf.read()

    return load


@evaluates(M.LocalStoreOp)
def _local_store(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def store(buf: View, value: np.ndarray) -> None:
        buf.write(value, what="local_store", loc=loc)

    return store


@evaluates(M.ThreadIdOp)
def _thread_id(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def tid() -> np.ndarray:
        raise InterpreterError("TLXC-INTERP-006", "tlx.thread_id has a different value in every thread; the "
                                                  "interpreter runs a program as a whole, so it has no single value",
                               loc)

    return tid


@evaluates(M.SpecialRegisterOp)
def _special_register(op: Operation, state: LaunchState) -> Fn:
    if op.register == "smid":  # the CPU is one "SM"
        return lambda: np.asarray(0, np.int32)
    import time

    return lambda: np.asarray(time.perf_counter_ns(), np.int64)


@evaluates(M.Clock64Op)
def _clock64(op: Operation, state: LaunchState) -> Fn:
    def clock() -> np.ndarray:
        state.onchip.clock += 1
        return np.asarray(state.onchip.clock, np.int64)

    return clock


# -- barriers --------------------------------------------------------------------------------
@evaluates(B.BarrierAllocOp)
def _barrier_alloc(op: Operation, state: LaunchState) -> Fn:
    n, count, loc = op.result.type.num, op.attrs["count"], op.loc
    line = loc.line if loc is not None else "?"
    what = (f"the cluster barrier after alloc_barriers at line {line} (the compiler's: peers may arrive on the "
            "barriers once they are initialized)")

    def alloc() -> list[Barrier]:
        bars = state.onchip.allocate(op, lambda: barrier_array(count, n, loc, op))
        if state.cta.group.clustered:
            cluster_barrier(state, what, loc)
        return bars

    return alloc


@evaluates(B.BarrierViewOp)
def _barrier_view(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def view(bars: list[Barrier], index: np.ndarray) -> Barrier:
        i = int(index)
        if not 0 <= i < len(bars):
            raise InterpreterError("TLXC-INTERP-001", f"barrier index {i} is out of range for an array of "
                                                      f"{len(bars)} mbarriers", loc)
        return bars[i]

    return view


def _predicated(op: Operation, fn: Callable[..., None]) -> Fn:
    """``fn`` run only where the op's optional ``pred`` (its last operand) is true."""
    if op.pred is None:
        return fn

    def guarded(*args: Any) -> None:
        if bool(args[-1]):
            fn(*args[:-1])

    return guarded


@evaluates(B.BarrierExpectOp)
def _barrier_expect(op: Operation, state: LaunchState) -> Fn:
    nbytes, loc = op.bytes, op.loc

    def expect(bar: Barrier) -> None:
        bar.expect(nbytes)
        bar.arrive(1, loc)

    return _predicated(op, expect)


@evaluates(B.BarrierArriveOp)
def _barrier_arrive(op: Operation, state: LaunchState) -> Fn:
    t: BarrierType = op.operands[0].type  # type: ignore[assignment]
    count, loc = op.attrs["count"], op.loc
    has_pred = op.pred is not None

    def arrivals() -> int:
        # a warp barrier: every thread of the partition (or of the program) arrives;
        # otherwise the partition (or the program) arrives once, by its leader thread
        return count * state.active_threads if t.warp else count

    if op.remote_rank is None:
        return _predicated(op, lambda bar: bar.arrive(arrivals(), loc))

    def remote(bar: Barrier, *rest: np.ndarray) -> None:  # (pred,) rank: on the peer's copy of ``bar``
        if has_pred and not bool(rest[0]):
            return
        peer = state.cta.group.peer(rest[-1], "a remote barrier_arrive", loc)
        peer.onchip.peer_barrier(bar).arrive(arrivals(), loc)

    return remote


@evaluates(B.BarrierWaitOp)
def _barrier_wait(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def wait(bar: Barrier, phase: np.ndarray) -> None:
        p = int(phase) & 1
        if not bar.phase_done(p) and state.scheduler is not None:  # other partitions may arrive
            state.scheduler.block(Wait(lambda: bar.phase_done(p), lambda: _waiting_for(bar, p), loc))
        if not bar.phase_done(p):
            where = f" (allocated at line {bar.loc.line})" if bar.loc is not None else ""
            raise InterpreterError(
                DEADLOCK, f"deadlock: barrier_wait for phase {p} of an mbarrier{where} can never return; the phase "
                          f"still expects {bar.pending} arrival(s) and {bar.tx} transaction byte(s), and nothing else "
                          f"runs while this program waits (its current phase parity is {bar.completed % 2})", loc)
        state.onchip.barrier_passed(bar)

    return _predicated(op, wait)


def _waiting_for(bar: Barrier, parity: int) -> str:
    return (f"phase {parity} of {bar.describe()}: its current phase has parity {bar.completed % 2} and still "
            f"expects {bar.pending} arrival(s) of {bar.count} and {bar.tx} transaction byte(s)")


@evaluates(B.FenceOp)
def _nothing(op: Operation, state: LaunchState) -> Fn:
    # one program (or partition) runs as a whole: its threads are always in step
    return lambda *args: None


@evaluates(B.NamedBarrierWaitOp, B.NamedBarrierArriveOp)
def _named_barrier(op: Operation, state: LaunchState) -> Fn:
    """Outside warp specialization a program's threads are always in step, so a named
    barrier does nothing; between partitions it counts the threads that reached it (a
    partition's all at once) and a wait returns when ``threads`` have."""
    bar_id, threads, loc = op.attrs["bar_id"], op.attrs["threads"], op.loc
    waits = isinstance(op, B.NamedBarrierWaitOp)

    def named() -> None:
        if state.task is None:  # no partitions: the CTA's threads are in step
            return
        nb = state.onchip.named.setdefault(bar_id, NamedBarrier(threads))
        nb.arrived += state.active_threads
        if nb.arrived > threads:
            raise InterpreterError(DEADLOCK, f"{nb.arrived} threads reached named barrier {bar_id}, which counts "
                                             f"{threads} per round: more warps take part than its thread count "
                                             "says", loc)
        round_ = nb.rounds
        if nb.arrived == threads:
            nb.arrived, nb.rounds = 0, nb.rounds + 1
        elif waits:
            state.scheduler.block(Wait(lambda: nb.rounds > round_,
                                       lambda: f"named barrier {bar_id}: {nb.arrived} of its {threads} threads "
                                               "have reached it", loc))

    return named


# -- cp.async --------------------------------------------------------------------------------
@evaluates(C.AsyncLoadOp)
def _async_load(op: Operation, state: LaunchState) -> Fn:
    t: MemDescType = op.buf.type  # type: ignore[assignment]
    dt, loc = _np(t.element), op.loc
    load = state.memory.load
    has_mask, has_other = op.mask is not None, op.other is not None

    def copy(ptr: np.ndarray, buf: View, mask: np.ndarray | None = None, other: np.ndarray | None = None) -> None:
        if mask is not None and other is None:
            other = np.zeros(ptr.shape, dt)
        value = load(ptr, mask, other, dt, loc)
        idx = buf.write(value, PENDING, "async_load", loc)
        state.onchip.open_group.append(PendingCopy(buf.arena, idx, loc))

    if has_mask and has_other:
        return lambda p, b, m, o: copy(p, b, m, o)
    if has_mask:
        return lambda p, b, m: copy(p, b, m)
    return lambda p, b, *_: copy(p, b)


@evaluates(C.AsyncCommitGroupOp)
def _commit(op: Operation, state: LaunchState) -> Fn:
    def commit(*tokens: Any) -> None:
        state.onchip.commit()

    return commit


@evaluates(C.AsyncWaitGroupOp)
def _wait_group(op: Operation, state: LaunchState) -> Fn:
    n = op.pendings

    def wait(*tokens: Any) -> None:
        state.onchip.wait_groups(n)

    return wait


# -- TMA -------------------------------------------------------------------------------------
@evaluates(C.MakeTensorDescOp)
def _make_desc(op: Operation, state: LaunchState) -> Fn:
    t: TensorDescType = op.result.type  # type: ignore[assignment]
    rank, dt, padding = len(t.block_shape), _np(t.element), op.padding
    at = op.desc_ptr is not None  # the last operand: where to store it (tlx.make_tensor_descriptor)

    def make(base: np.ndarray, *rest: Any) -> Any:
        vals = [int(d) for d in (rest[:-1] if at else rest)]
        desc = _descriptors().make_descriptor(int(base), tuple(vals[:rank]), tuple(vals[rank:]), t.block_shape, dt,
                                              padding)
        if at:
            rest[-1].store(desc)
        return desc

    return make


@evaluates(C.UnpackTensorDescOp)
def _unpack_desc(op: Operation, state: LaunchState) -> Fn:
    """A descriptor's fields (``host-descriptors``): base address, sizes, strides."""
    def unpack(desc: Any) -> tuple[Any, ...]:
        return (N.scalar(desc.address, op.results[0].type),
                *(N.scalar(v, op.results[1].type) for v in (*desc.shape, *desc.strides)))

    return unpack


@evaluates(C.AllocTensorDescOp)
def _alloc_desc(op: Operation, state: LaunchState) -> Fn:
    num = op.result.type.num  # type: ignore[attr-defined]
    return lambda: _descriptors().DescriptorSlots.allocate(num)


@evaluates(C.TensorDescPtrIndexOp)
def _desc_ptr_index(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc
    return lambda ptr, i: ptr.index(int(i), loc)


@evaluates(C.ReinterpretTensorDescOp)
def _reinterpret_desc(op: Operation, state: LaunchState) -> Fn:
    t: TensorDescType = op.result.type  # type: ignore[assignment]
    loc, dt = op.loc, _np(t.element)
    return lambda ptr: ptr.load(t.block_shape, dt, loc)


@evaluates(C.TmaLoadOp)
def _tma_load(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc
    memory = state.memory
    multicast = tuple(op.multicast)
    has_pred, has_mask = op.pred is not None, op.cta_mask is not None

    def land(onchip: OnChip, view: View, bar: Barrier, block: np.ndarray) -> None:
        idx = view.write(block.reshape(view.shape), PENDING, "async_descriptor_load", loc)
        onchip.tma.append(PendingCopy(view.arena, idx, loc, bar, bar.completed))
        bar.complete_tx(int(idx.size))

    def load(desc: Any, buf: View, bar: Barrier, coords: list[Any], targets: tuple[int, ...]) -> None:
        block = _descriptors().read_block(memory, desc, tuple(int(c) for c in coords), loc)
        if not targets:
            land(state.onchip, buf, bar, block)
            return
        # multicast: the block lands at the same offset of every target CTA's buffer and
        # completes on that CTA's copy of the barrier (the issuing CTA only if it is a target)
        for rank in targets:
            peer = state.cta.group.peer(rank, "async_descriptor_load's multicast", loc)
            onchip = peer.onchip
            land(onchip, onchip.peer_view(buf), onchip.peer_barrier(bar), block)

    def run(desc: Any, buf: View, bar: Barrier, *rest: Any) -> None:
        # the optional operands come last, in OPERANDS order: pred, then cta_mask
        coords, targets = list(rest), multicast
        if has_mask:
            mask = int(coords.pop())
            targets = tuple(r for r in range(16) if mask >> r & 1)  # .multicast::cluster's 16-bit mask
        if has_pred and not bool(coords.pop()):
            return
        load(desc, buf, bar, coords, targets)

    return run


@evaluates(C.TmaStoreOp)
def _tma_store(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc
    memory = state.memory
    reduce = op.attrs.get("reduce", "")

    def store(desc: Any, buf: View, *coords: np.ndarray) -> None:
        check_readable(buf, "async_descriptor_store", loc)
        block = buf.read().reshape(desc.block_shape)
        _descriptors().write_block(memory, desc, tuple(int(c) for c in coords), block, loc, reduce)
        state.onchip.store_started(buf, loc)

    return store


@evaluates(C.TmaStoreWaitOp)
def _tma_store_wait(op: Operation, state: LaunchState) -> Fn:
    n = op.pendings
    return lambda *args: state.onchip.stores_waited(n)


@evaluates(C.DescriptorLoadOp)
def _desc_load(op: Operation, state: LaunchState) -> Fn:
    loc, memory = op.loc, state.memory
    return lambda desc, *coords: _descriptors().read_block(memory, desc, tuple(int(c) for c in coords), loc)


@evaluates(C.DescriptorStoreOp)
def _desc_store(op: Operation, state: LaunchState) -> Fn:
    loc, memory = op.loc, state.memory
    def store(desc: Any, value: np.ndarray, *coords: np.ndarray) -> None:
        _descriptors().write_block(memory, desc, tuple(int(c) for c in coords), value, loc)

    return store


# -- wgmma -----------------------------------------------------------------------------------
@evaluates(W.AsyncDotOp)
def _async_dot(op: Operation, state: LaunchState) -> Fn:
    a_t: DType = op.a.type.scalar  # type: ignore[assignment]
    out_t: DType = op.result.type.scalar  # type: ignore[assignment]
    out_dt = _np(out_t)
    loc = op.loc
    has_acc, has_use = op.acc is not None, op.use_acc is not None
    tf32 = a_t.ir_name == "f32"

    def operand(v: Any, what: str) -> np.ndarray:
        if isinstance(v, View):
            check_readable(v, f"async_dot's {what}", loc)
            return v.read()
        return v

    def dot(a: Any, b: Any, *rest: np.ndarray) -> np.ndarray:
        acc = rest[0] if has_acc else None
        use = bool(rest[-1]) if has_use else True
        x, y = operand(a, "A"), operand(b, "B")
        if a_t.is_int():
            out = np.matmul(x.astype(np.int64), y.astype(np.int64))
            if acc is not None and use:
                out = out + acc.astype(np.int64)
            return out.astype(out_dt)
        x32, y32 = x.astype(N.F32), y.astype(N.F32)
        if tf32:
            x32, y32 = N.round_to_tf32(x32), N.round_to_tf32(y32)
        out = np.matmul(x32, y32)
        if acc is not None and use:
            out = out + acc.astype(N.F32)
        return out if out_t.ir_name == "f32" else N.round_result(out, out_t)

    return dot


@evaluates(W.AsyncDotWaitOp)
def _async_dot_wait(op: Operation, state: LaunchState) -> Fn:
    if len(op.results) == 1:
        return lambda v: v
    return lambda *vs: vs
