"""Tiles and their shapes: ``arange``, ``splat``, ``program_id``..., and the ops that
only re-index registers -- ``broadcast``, ``expand_dims``, ``reshape``, ``trans``,
``join``, ``split`` -- because layout assignment gave their results layouts that keep
every element in the thread that already holds it. ``convert_layout``, the one that
moves data, is in ``lower_convert``."""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType
from ..remap import last_dim_in_registers, remap, reshape_projection
from .emitter import Emitter, lowers, register_coords
from .lower_convert import _smem_pass  # noqa: F401 (registers convert_layout; lower_dot imports it from here)
from .ptx import Reg


@lowers(ops.ProgramIdOp, ops.NumProgramsOp)
def program_id(e: Emitter, op: Operation) -> None:
    axis = "xyz"[op.attrs["axis"]]
    name = f"ctaid.{axis}" if op.NAME == "program_id" else f"nctaid.{axis}"
    e.set(op.result, [e.special(name)])


@lowers(ops.ArangeOp)
def arange(e: Emitter, op: Operation) -> None:
    layout = op.result.type.layout
    t = e.thread_coords(layout, 0)
    start = op.attrs["start"]
    # the coordinate bits that lanes and warps set: a register constant with none of them
    # is *added* (XOR of disjoint bits), which ptxas folds into the addresses it feeds
    thread_bits = 0
    for src in ("lane", "warp"):
        if layout.has_in_dim(src):
            for basis in layout.in_bases(src):
                thread_bits |= basis[0]
    out: list[Reg] = []
    cache: dict[int, Reg] = {}
    for r in range(layout.in_dim_size("register")):
        c = register_coords(layout, r)[0]
        if c in cache:
            out.append(cache[c])
            continue
        d = e.fn.reg("b32")
        if isinstance(t, int):
            e.fn.emit(f"mov.u32 {d}, {(c ^ t) + start}")
        elif not c & thread_bits:
            e.fn.emit(f"add.s32 {d}, {t}, {c + start}")
        else:
            e.fn.emit(f"xor.b32 {d}, {t}, {c}")
            if start:
                e.fn.emit(f"add.s32 {d}, {d}, {start}")
        cache[c] = d
        out.append(d)
    e.set(op.result, out)


@lowers(ops.SplatOp)
def splat(e: Emitter, op: Operation) -> None:
    (x,) = e.get(op.operands[0]).regs
    e.set(op.result, [x] * op.result.type.layout.in_dim_size("register"))


@lowers(ops.MultipleOfOp, ops.MaxContiguousOp)
def hint(e: Emitter, op: Operation) -> None:
    src = e.get(op.operands[0])
    e.set(op.result, src.regs, src.layout)


@lowers(ops.AssumeOp)
def assume(e: Emitter, op: Operation) -> None:
    return None


@lowers(ops.AssertOp)
def device_assert(e: Emitter, op: Operation) -> None:
    # Asserts compile to a trap when any element is false; Triton does this under debug only,
    # tlxc keeps them (they are rare and cheap next to a silent wrong result).
    for p in set(e.get(op.operands[0]).regs):
        e.fn.emit("trap", p, negate=True)


def _reindex(e: Emitter, op: Operation, project: callable) -> None:
    src = e.get(op.operands[0])
    dst_layout = op.result.type.layout
    idx = remap("nvptx", op, src.layout, dst_layout, project)
    e.set(op.result, [src.regs[i] for i in idx])


@lowers(ops.BroadcastOp)
def broadcast(e: Emitter, op: Operation) -> None:
    src_shape = op.operands[0].type.shape
    _reindex(e, op, lambda c: tuple(0 if src_shape[i] == 1 else x for i, x in enumerate(c)))


@lowers(ops.ExpandDimsOp)
def expand_dims(e: Emitter, op: Operation) -> None:
    axis = op.attrs["axis"]
    _reindex(e, op, lambda c: tuple(x for i, x in enumerate(c) if i != axis))


@lowers(ops.TransOp)
def trans(e: Emitter, op: Operation) -> None:
    order = op.attrs["order"]
    inv = [order.index(i) for i in range(len(order))]
    _reindex(e, op, lambda c: tuple(c[inv[i]] for i in range(len(c))))


@lowers(ops.ReshapeOp)
def reshape(e: Emitter, op: Operation) -> None:
    _reindex(e, op, reshape_projection(op.operands[0].type.shape, op.result.type.shape))


@lowers(ops.JoinOp)
def join(e: Emitter, op: Operation) -> None:
    a, b = (e.get(v) for v in op.operands)
    dst = op.result.type.layout
    last_dim_in_registers("nvptx", op, dst)
    idx = remap("nvptx", op, a.layout, dst, lambda c: c[:-1])
    regs = [(a if register_coords(dst, r)[-1] == 0 else b).regs[i] for r, i in enumerate(idx)]
    e.set(op.result, regs)


@lowers(ops.SplitOp)
def split(e: Emitter, op: Operation) -> None:
    src = e.get(op.operands[0])
    last_dim_in_registers("nvptx", op, src.layout)
    for half, res in enumerate(op.results):
        idx = remap("nvptx", op, src.layout, res.type.layout, lambda c, h=half: c + (h,), lambda b: b + (0,))
        e.set(res, [src.regs[i] for i in idx])


__all__ = ["DType"]
