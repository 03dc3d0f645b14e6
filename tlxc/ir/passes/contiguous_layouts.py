"""Blocked layouts in a given dim order, and the pointer tiles that want one because
their memory runs along a dim other than the last (a helper of ``layouts``).

The layout pass gives each tile shape one canonical layout, fastest along the last dim.
A ``[K, N]`` tile of a K-contiguous matrix (tutorial 09 passes ``b.T``, whose
``stride_bk`` is 1) is contiguous along dim 0 only; in the canonical layout each thread
then reads 2-byte elements scattered ``K`` apart, and a ``cp.async`` cannot copy 16 bytes
at a time. As Triton's coalescing pass does, such a load, store or ``async_load`` gets a
blocked layout whose per-thread vector and fastest order run along the contiguous dim
(``blocked_in_order``), and the pointer arithmetic that feeds it -- back through
elementwise ops, splats, constants, broadcasts (their result) and the pointers a loop
carries -- is laid out the same way from the start (``pointer_preferences``), so that
nothing converts a pointer tile each iteration. Float data is not followed: a stored
value converts to the pointers' layout, a loaded one is converted where its users want
another layout, as before.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ops
from ..analysis.axis_analysis import AxisInfoMap
from ..core import BlockArgument, Operation, OpResult, Value
from ..layout.common import blocked
from ..layout.linear import LinearLayout
from ..types import DType, Kind, PointerType, TileType


def blocked_in_order(shape: tuple[int, ...], vec: int, order: list[int], warp_size: int,
                     num_warps: int) -> LinearLayout:
    """A blocked layout whose threads hold ``vec`` consecutive elements of ``order[0]``
    (the fastest dim), lanes then warps filled fastest dim first: lanes go to each dim
    up to its size (the slowest takes what is left), warps to the slowest dims first
    (the fastest takes what is left). ``order = [rank-1, ..., 0]`` is the canonical
    layout of ``layouts``; for ``[64, 128]``, ``vec=8``, ``order=[0, 1]``, 32 lanes and 4
    warps: 8 elements of dim 0 per thread, lanes 8 x 4, warps 1 x 4."""
    rank = len(shape)
    spt = [1] * rank
    spt[order[0]] = vec
    lanes, tpw = warp_size, [1] * rank
    for d in order:
        take = min(lanes, max(1, shape[d] // spt[d])) if d != order[-1] else lanes
        tpw[d], lanes = take, lanes // take
    warps, wpc = num_warps, [1] * rank
    for d in reversed(order):
        take = min(warps, max(1, shape[d] // (spt[d] * tpw[d]))) if d != order[0] else warps
        wpc[d], warps = take, warps // take
    return blocked(shape, spt, tpw, wpc, order)


def dim_first(rank: int, dim: int) -> list[int]:
    """The order with ``dim`` fastest, the others as in the canonical order."""
    return [dim] + [d for d in range(rank - 1, -1, -1) if d != dim]


def _index_tile(v: Value) -> bool:
    """Pointer, integer and boolean tiles: what address arithmetic is made of."""
    t = v.type
    if not isinstance(t, TileType):
        return False
    e = t.element
    return isinstance(e, PointerType) or (isinstance(e, DType) and e.kind != Kind.FLOAT)


def _producers(v: Value) -> list[Value] | None:
    """The values that must share ``v``'s layout for ``v`` to be made in it without a
    conversion: the tile operands of the elementwise op that makes it, or what flows
    into a loop-carried value (the loop's init and its yield). None for a value carried
    by a ``while`` loop or merged by an ``if``: not followed, and a pointer tile made from
    it would convert every iteration, so its access keeps the canonical layout."""
    if isinstance(v, OpResult):
        src = v.op
        if isinstance(src, (ops.AddPtrOp, ops.AddOp, ops.SubOp, ops.MulOp, ops.AndOp, ops.OrOp, ops.XorOp,
                            ops.ShlOp, ops.ShrOp, ops.IDivOp, ops.RemOp, ops.SelectOp, ops.CmpOp,
                            ops.MinimumOp, ops.MaximumOp, ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)):
            return [u for u in src.operands if isinstance(u.type, TileType)]
        if isinstance(src, ops.ForOp):
            return [src.inits[v.index], src.body.ops[-1].operands[v.index]]
        if isinstance(src, (ops.WhileOp, ops.IfOp)):
            return None
        return []
    if isinstance(v, BlockArgument):
        loop = v.block.parent_op
        if isinstance(loop, ops.ForOp) and v.block is loop.body and v.index >= 1:
            return [loop.inits[v.index - 1], loop.body.ops[-1].operands[v.index - 1]]
        return None
    return []


def pointer_preferences(func: Operation, axis: AxisInfoMap, max_vector_bytes: int,
                        layout_for: Callable[[tuple[int, ...], int, int], LinearLayout]) -> dict[Value, LinearLayout]:
    """The layout each pointer / index tile should be made in (see the module doc):
    for every ``load``, ``store`` and ``async_load`` whose pointers vectorize along a dim
    other than the last only (``AxisInfoMap.vector_dim``), ``layout_for(shape, dim,
    elements)`` for its pointer tile and, backwards, the index tiles it is computed from.
    A value two such accesses want in different layouts is left out (the layout pass
    converts where they meet, as anywhere else)."""
    prefer: dict[Value, LinearLayout | None] = {}
    for op in func.walk():
        if not isinstance(op, (ops.LoadOp, ops.StoreOp, ops.AsyncLoadOp)) or not op.ptr.type.shape:
            continue
        pointer = op.ptr.type.scalar
        assert isinstance(pointer, PointerType)  # the op's verify() checked it
        pointee = pointer.pointee
        nbytes = 8 if isinstance(pointee, PointerType) else max(1, pointee.bits // 8)
        found = axis.vector_dim(op.ptr, nbytes, max_vector_bytes, op.mask)
        if found is None:
            continue
        chain = _chain(op.ptr)
        if chain is None:
            continue
        layout = layout_for(op.ptr.type.shape, *found)
        for v in chain:
            if v not in prefer:
                prefer[v] = layout
            elif prefer[v] is not None and prefer[v] != layout:
                prefer[v] = None
    return {v: lay for v, lay in prefer.items() if lay is not None}


def _chain(ptr: Value) -> list[Value] | None:
    """``ptr`` and the index tiles of its shape it is computed from (see ``_producers``);
    None when one of them is carried by a loop or branch that is not followed."""
    seen: dict[Value, None] = {}
    stack = [ptr]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen[v] = None
        more = _producers(v)
        if more is None:
            return None
        stack += [u for u in more if _index_tile(u) and u.type.shape == v.type.shape]
    return list(seen)
