"""Tiles and their shapes: ``arange``, ``splat``, ``constant``, ``program_id``..., and the
ops that only re-index registers -- ``broadcast``, ``expand_dims``, ``reshape``,
``trans``, ``join``, ``split`` -- because layout assignment gave their results layouts
that keep every element in the lane that already holds it (``codegen/remap.py``)."""

from __future__ import annotations

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import thread_terms
from ...ir.types import TileType
from ..remap import join_sources, reindex, split_registers
from .emitter import Emitter, lowers, num_regs, register_coords
from .llvm import I32, constant, value_type

WHERE = "amdgpu"


@lowers(ops.ProgramIdOp)
def program_id(e: Emitter, op: Operation) -> None:
    e.set(op.result, [e.special(f"pid{op.axis}")])


@lowers(ops.NumProgramsOp)
def num_programs(e: Emitter, op: Operation) -> None:
    """Work-groups along ``axis``: the grid size (in work-items, from the HSA dispatch
    packet: ``grid_size_x`` at byte 12, ``workgroup_size_x`` as a u16 at byte 4) divided by
    the work-group size."""
    axis = op.axis

    def make(b: ir.IRBuilder) -> ir.Value:
        from .llvm import CONSTANT_PTR, I16

        packet = b.call(e.intrinsic("llvm.amdgcn.dispatch.ptr", CONSTANT_PTR, []), [])
        grid = b.load(b.gep(packet, [ir.Constant(I32, 12 + 4 * axis)], source_etype=ir.IntType(8)), typ=I32)
        wg = b.load(b.gep(packet, [ir.Constant(I32, 4 + 2 * axis)], source_etype=ir.IntType(8)), typ=I16)
        return b.udiv(grid, b.zext(wg, I32))

    e.set(op.result, [e.in_entry(f"nprog{axis}", make)])


@lowers(ops.ConstantOp)
def constant_op(e: Emitter, op: Operation) -> None:
    t = op.result.type
    c = constant(value_type(t.scalar), op.value)
    e.set(op.result, [c] * num_regs(t))


@lowers(ops.ArangeOp)
def arange(e: Emitter, op: Operation) -> None:
    layout = op.result.type.layout
    t = e.thread_coords(layout, 0)
    start = op.start
    thread_bits = 0  # coordinate bits lanes and waves set: a register constant without them is added
    for _, _, c in thread_terms(layout, 0):
        thread_bits |= c
    out: list[ir.Value] = []
    cache: dict[int, ir.Value] = {}
    for r in range(layout.in_dim_size("register")):
        c = register_coords(layout, r)[0]
        if c not in cache:
            if isinstance(t, int):
                cache[c] = ir.Constant(I32, (c ^ t) + start)
            elif not c & thread_bits:
                cache[c] = e.b.add(t, ir.Constant(I32, c + start)) if c + start else t
            else:
                x = e.b.xor(t, ir.Constant(I32, c))
                cache[c] = e.b.add(x, ir.Constant(I32, start)) if start else x
        out.append(cache[c])
    e.set(op.result, out)


@lowers(ops.SplatOp)
def splat(e: Emitter, op: Operation) -> None:
    (x,) = e.get(op.x).vals
    e.set(op.result, [x] * num_regs(op.result.type))


@lowers(ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)
def hint(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    e.set(op.result, src.vals, src.layout)


@lowers(ops.AssumeOp)
def assume(e: Emitter, op: Operation) -> None:
    return None


@lowers(ops.BroadcastOp)
def broadcast(e: Emitter, op: Operation) -> None:
    src_shape = op.x.type.shape
    if not src_shape:  # a scalar operand: every register is it
        (x,) = e.get(op.x).vals
        e.set(op.result, [x] * num_regs(op.result.type))
        return
    reindexed(e, op)


@lowers(ops.ExpandDimsOp, ops.TransOp, ops.ReshapeOp)
def reindexed(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    if not isinstance(op.result.type, TileType):  # x.item(): every thread holds a 1-element tile's element
        e.set(op.result, src.vals[:1])
        return
    e.set(op.result, [src.vals[i] for i in reindex(WHERE, op, src.layout)])


@lowers(ops.JoinOp)
def join(e: Emitter, op: Operation) -> None:
    ab = [e.get(v) for v in op.operands]
    e.set(op.result, [ab[k].vals[i] for k, i in join_sources(WHERE, op, ab[0].layout)])


@lowers(ops.SplitOp)
def split(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    for res, idx in zip(op.results, split_registers(WHERE, op, src.layout)):
        e.set(res, [src.vals[i] for i in idx])
