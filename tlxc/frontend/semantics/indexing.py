"""``tl.gather`` and ``tl.histogram``: results indexed by the values of another tile.

Triton's rules: ``gather(src, index, axis)`` takes an integer ``index`` of ``src``'s rank
whose sizes equal ``src``'s except along ``axis`` and gives ``index``'s shape with
``src``'s element type; ``histogram(input, num_bins, mask=None)`` counts the values
``0 .. num_bins-1`` of a 1-D integer tile (others, and masked-off elements, are not
counted) into an int32 tile of ``num_bins`` elements, so ``num_bins`` is a constant
power of two like every tile dimension.
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import DType, Kind, TileType
from ..values import Tensor, describe, unwrap
from .base import Ctx, axis_arg, const_value, fail, int1, int32, rule
from .shape import as_tile, broadcast_to_shape, fmt


@rule("gather")
def gather(ctx: Ctx, src: Any, index: Any, axis: Any) -> Tensor:
    s = as_tile(src, "tl.gather")
    i = as_tile(index, "tl.gather's index")
    if not s.shape:
        fail("TLXC-SHAPE-003", f"tl.gather needs a tile to gather from, got {describe(s)}")
    if not isinstance(s.dtype, DType):
        fail("TLXC-TYPE-001", f"tl.gather cannot gather pointers ({describe(s)})",
             "gather integer offsets and add them to the base pointer after")
    if not isinstance(i.dtype, DType) or i.dtype.kind not in (Kind.INT, Kind.UINT):
        fail("TLXC-TYPE-001", f"tl.gather's index must be an integer tile, got {describe(i)}",
             "convert the index with .to(tl.int32)")
    rank = len(s.shape)
    if len(i.shape) != rank:
        fail("TLXC-SHAPE-001", f"tl.gather's index has rank {len(i.shape)} (shape {fmt(i.shape)}) but the source "
                               f"has rank {rank} (shape {fmt(s.shape)})",
             "the index needs one dimension per source dimension")
    a = axis_arg(axis, rank)
    for d in range(rank):
        if d != a and i.shape[d] != s.shape[d]:
            fail("TLXC-SHAPE-001", f"tl.gather along axis {a}: the index has shape {fmt(i.shape)} and the source "
                                   f"{fmt(s.shape)}; they must agree in dimension {d}",
                 "only the gathered axis may differ in size")
    return Tensor(ctx.b.value(ops.GatherOp, [s.handle, i.handle], TileType(i.shape, s.dtype), axis=a))


@rule("histogram")
def histogram(ctx: Ctx, input: Any, num_bins: Any, mask: Any = None) -> Tensor:
    x = as_tile(input, "tl.histogram")
    if len(x.shape) != 1:
        fail("TLXC-SHAPE-003", f"tl.histogram needs a 1-D tile, got {describe(x)}",
             "flatten the tile first (x.reshape(N) or tl.ravel)")
    if not isinstance(x.dtype, DType) or x.dtype.kind == Kind.FLOAT:
        fail("TLXC-TYPE-001", f"tl.histogram needs integers, got {describe(x)}",
             "convert the values to bin numbers with .to(tl.int32)")
    n = const_value(num_bins, "tl.histogram's num_bins")
    if n <= 0 or n & (n - 1):
        fail("TLXC-SHAPE-003", f"tl.histogram's num_bins is {n}; it must be a power of two (the result is a tile "
                               f"of num_bins elements)",
             "round num_bins up to a power of two (triton.next_power_of_2) and ignore the extra bins")
    optional = {}
    m = unwrap(mask)
    if m is not None:
        if isinstance(m, bool):
            m = Tensor(ctx.b.value(ops.ConstantOp, [], int1, value=m))
        if not isinstance(m, Tensor) or m.dtype != int1:
            fail("TLXC-TYPE-001", f"tl.histogram's mask must be a boolean (int1) tensor, got {describe(m)}",
                 "compare to get a mask (offsets < n)")
        optional["mask"] = broadcast_to_shape(ctx, m, x.shape).handle
    return Tensor(ctx.b.value(ops.HistogramOp, [x.handle], TileType((n,), int32), optional=optional))
