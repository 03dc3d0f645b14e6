"""Tiles and their shapes: ``arange``, ``splat``, ``program_id``..., and the ops that
only re-index registers -- ``broadcast``, ``expand_dims``, ``reshape``, ``trans``,
``join``, ``split`` -- because layout assignment gave their results layouts that keep
every element in the thread that already holds it. ``convert_layout``, the one that
moves data, is in ``lower_convert``."""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import thread_terms
from ...ir.types import DType, TileType
from ..remap import join_sources, reindex, split_registers
from .emitter import Emitter, lowers, register_coords
from .lower_convert import _smem_pass  # noqa: F401 (registers convert_layout; lower_dot imports it from here)
from .ptx import Reg


@lowers(ops.ProgramIdOp, ops.NumProgramsOp)
def program_id(e: Emitter, op: Operation) -> None:
    axis = "xyz"[op.axis]
    # num_ctas > 1: a program is a cluster (only its first CTA runs it: compile.emit)
    unit = "cluster" if e.num_ctas > 1 else "cta"
    name = f"{unit}id.{axis}" if op.NAME == "program_id" else f"n{unit}id.{axis}"
    e.set(op.result, [e.special(name)])


@lowers(ops.ArangeOp)
def arange(e: Emitter, op: Operation) -> None:
    layout = op.result.type.layout
    t = e.thread_coords(layout, 0)
    start = op.start
    # the coordinate bits that lanes and warps set: a register constant with none of them
    # is *added* (XOR of disjoint bits), which ptxas folds into the addresses it feeds
    thread_bits = 0
    for _, _, c in thread_terms(layout, 0):
        thread_bits |= c
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
            # t + c + start lies in [start, end): no overflow, so it is base t plus a constant
            e.fn.emit(f"add.s32 {d}, {t}, {c + start}")
            e.offset_of[d.name] = (t, c + start)
        else:
            e.fn.emit(f"xor.b32 {d}, {t}, {c}")
            if start:
                e.fn.emit(f"add.s32 {d}, {d}, {start}")
        cache[c] = d
        out.append(d)
    e.set(op.result, out)


@lowers(ops.SplatOp)
def splat(e: Emitter, op: Operation) -> None:
    (x,) = e.get(op.x).regs
    e.set(op.result, [x] * op.result.type.layout.in_dim_size("register"))


@lowers(ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)
def hint(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    e.set(op.result, src.regs, src.layout)


@lowers(ops.AssumeOp)
def assume(e: Emitter, op: Operation) -> None:
    return None


@lowers(ops.AssertOp)
def device_assert(e: Emitter, op: Operation) -> None:
    # Asserts compile to a trap when any element is false; Triton does this under debug only,
    # tlxc keeps them (they are rare and cheap next to a silent wrong result).
    for p in set(e.get(op.cond).regs):
        e.fn.emit("trap", p, negate=True)


@lowers(ops.BroadcastOp, ops.ExpandDimsOp, ops.TransOp, ops.ReshapeOp)
def reindexed(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    if not isinstance(op.result.type, TileType):  # x.item(): every thread holds a 1-element tile's element
        e.set(op.result, src.regs[:1])
        return
    e.set(op.result, [src.regs[i] for i in reindex("nvptx", op, src.layout)])


@lowers(ops.JoinOp)
def join(e: Emitter, op: Operation) -> None:
    ab = [e.get(v) for v in op.operands]
    e.set(op.result, [ab[k].regs[i] for k, i in join_sources("nvptx", op, ab[0].layout)])


@lowers(ops.SplitOp)
def split(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    for res, idx in zip(op.results, split_registers("nvptx", op, src.layout)):
        e.set(res, [src.regs[i] for i in idx])


__all__ = ["DType"]
