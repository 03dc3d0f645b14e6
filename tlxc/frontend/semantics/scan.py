"""Scans: ``tl.cumsum`` and ``tl.cumprod`` (and what ``tl.associative_scan`` builds, in
``frontend/scan.py``): a ``scan`` op whose region combines two positions."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...ir import ops
from ...ir.core import Block, Region
from ...ir.types import DType, float32
from ..values import Tensor, describe, unwrap
from .arith import binary, cast
from .base import Ctx, axis_arg, const_value, fail, rule
from .reduce import sum_dtype
from .shape import as_tile

Combine = Callable[[list[Tensor], list[Tensor]], Sequence[Tensor]]


def scan_inputs(values: Sequence[Any], what: str) -> list[Tensor]:
    """The tiles a scan runs over: numbers' tiles of one shape, at least rank 1."""
    tiles = []
    for v in values:
        t = unwrap(v)
        if not isinstance(t, Tensor) or not t.shape:
            fail("TLXC-TYPE-001", f"{what} scans tiles, got {describe(t)}")
        if not isinstance(t.dtype, DType):
            fail("TLXC-TYPE-001", f"{what} cannot scan pointers ({describe(t)})")
        tiles.append(t)
    shape = tiles[0].shape
    for t in tiles[1:]:
        if t.shape != shape:
            fail("TLXC-SHAPE-001", f"{what}: the scanned tiles must have one shape, got {list(shape)} and "
                 f"{list(t.shape)}")
    return tiles


def scan_axis(axis: Any, rank: int) -> int:
    return axis_arg(axis, rank)


def scan_reverse(reverse: Any) -> bool:
    return bool(const_value(reverse, "reverse", (bool, int)))


def build_scan(ctx: Ctx, tiles: list[Tensor], axis: int, reverse: bool, combine: Combine) -> list[Tensor]:
    """A ``scan`` of ``tiles`` along ``axis``; ``combine(earlier, later)`` builds the region's
    ops on scalars (the builder is inside the region) and returns one scalar per tile, of
    its element type."""
    elements = [t.dtype for t in tiles]
    body = Block(elements * 2)
    n = len(tiles)
    with ctx.b.at_end(body):
        args = [Tensor(a) for a in body.args]
        out = list(combine(args[:n], args[n:]))
        ctx.b.create(ops.YieldOp, [t.handle for t in out], [])
    op = ctx.b.create(ops.ScanOp, [t.handle for t in tiles], [t.type for t in tiles],
                      {"axis": axis, "reverse": reverse}, [Region(body)])
    return [Tensor(r) for r in op.results]


def _simple(ctx: Ctx, input: Any, axis: Any, reverse: Any, kind: str, what: str) -> Tensor:
    t = as_tile(input, what)
    (t,) = scan_inputs([t], what)
    if t.dtype.is_bf16():  # Triton scans bf16 in float32
        t = cast(ctx, t, float32)
    a, rev = scan_axis(axis, len(t.shape)), scan_reverse(reverse)

    def combine(lhs: list[Tensor], rhs: list[Tensor]) -> list[Tensor]:
        return [binary(ctx, kind, lhs[0], rhs[0])]

    return build_scan(ctx, [t], a, rev, combine)[0]


@rule("cumsum")
def cumsum(ctx: Ctx, input: Any, axis: Any = 0, reverse: Any = False, dtype: Any = None) -> Tensor:
    t = as_tile(input, "tl.cumsum")
    if isinstance(t.dtype, DType):
        acc = sum_dtype(t.dtype, dtype)  # tl.sum's rule, as Triton's cumsum (_pick_sum_dtype)
        if acc != t.dtype:
            t = cast(ctx, t, acc)
    return _simple(ctx, t, axis, reverse, "add", "tl.cumsum")


@rule("cumprod")
def cumprod(ctx: Ctx, input: Any, axis: Any = 0, reverse: Any = False) -> Tensor:
    return _simple(ctx, input, axis, reverse, "mul", "tl.cumprod")
