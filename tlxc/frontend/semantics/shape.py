"""Rules that create tiles or change their shape: broadcasting, arange, zeros/full,
reshape, trans/permute, expand_dims, broadcast_to, join, split, cat."""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import TileType
from ..values import Tensor, describe, unwrap
from .base import (
    Ctx,
    axis_arg,
    check_shape,
    const_shape,
    const_value,
    constant,
    dtype_arg,
    fail,
    float32,
    int32,
    rule,
    shaped,
    to_tensor,
)


def fmt(shape: tuple[int, ...]) -> str:
    return str(list(shape))


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy-style broadcast of two shapes (dimensions align from the right)."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            fail("TLXC-SHAPE-001", f"cannot broadcast shapes {fmt(a)} and {fmt(b)}: dimension {i} is {x} in one "
                                   f"and {y} in the other")
        out.append(max(x, y))
    return tuple(out)


def broadcast_to_shape(ctx: Ctx, t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``t`` broadcast to ``shape`` (a scalar is splatted)."""
    if t.shape == tuple(shape):
        return t
    if not shape:
        fail("TLXC-SHAPE-001", f"cannot turn a tile of shape {fmt(t.shape)} into a scalar")
    if not t.shape:
        return Tensor(ctx.b.value(ops.SplatOp, [t.handle], TileType(tuple(shape), t.dtype)))
    if len(t.shape) > len(shape):
        fail("TLXC-SHAPE-001", f"cannot broadcast shape {fmt(t.shape)} to {fmt(shape)}")
    h = t.handle
    cur = t.shape
    while len(cur) < len(shape):
        cur = (1,) + cur
        h = ctx.b.value(ops.ExpandDimsOp, [h], TileType(cur, t.dtype), axis=0)
    broadcast_shapes(cur, tuple(shape))
    for x, y in zip(cur, shape):
        if x != y and x != 1:
            fail("TLXC-SHAPE-001", f"cannot broadcast shape {fmt(t.shape)} to {fmt(shape)}")
    if cur != tuple(shape):
        h = ctx.b.value(ops.BroadcastOp, [h], TileType(tuple(shape), t.dtype))
    return Tensor(h)


def broadcast_all(ctx: Ctx, *values: Tensor) -> list[Tensor]:
    shape: tuple[int, ...] = ()
    for v in values:
        shape = broadcast_shapes(shape, v.shape)
    return [broadcast_to_shape(ctx, v, shape) for v in values]


def as_tile(v: Any, what: str) -> Tensor:
    v = unwrap(v)
    if not isinstance(v, Tensor):
        fail("TLXC-TYPE-001", f"{what} needs a tensor, got {describe(v)}")
    return v


@rule("arange")
def arange(ctx: Ctx, start: Any, end: Any) -> Tensor:
    s = const_value(start, "tl.arange's start")
    e = const_value(end, "tl.arange's end")
    n = e - s
    if n <= 0:
        fail("TLXC-SHAPE-003", f"tl.arange({s}, {e}) is empty; end must be greater than start")
    if n & (n - 1):
        fail("TLXC-SHAPE-002", f"tl.arange({s}, {e}) has length {n}, which is not a power of two")
    if not (-(2 ** 31) <= s and e <= 2 ** 31):
        fail("TLXC-SHAPE-003", f"tl.arange({s}, {e}) does not fit in int32")
    check_shape((n,))
    return Tensor(ctx.b.value(ops.ArangeOp, [], TileType((n,), int32), start=s, end=e))


@rule("full")
def full(ctx: Ctx, shape: Any, value: Any, dtype: Any) -> Tensor:
    shp = const_shape(shape)
    dt = dtype_arg(dtype)
    value = unwrap(value)
    if isinstance(value, Tensor):
        from .arith import cast

        if value.shape:
            fail("TLXC-SHAPE-003", f"tl.full needs a scalar value, got {describe(value)}")
        return broadcast_to_shape(ctx, cast(ctx, value, dt), shp)
    return constant(ctx, value, dt, shp)


@rule("zeros")
def zeros(ctx: Ctx, shape: Any, dtype: Any = float32) -> Tensor:
    return full(ctx, shape, 0, dtype)


@rule("zeros_like")
def zeros_like(ctx: Ctx, input: Any, dtype: Any = None) -> Tensor:
    t = as_tile(input, "tl.zeros_like")
    return full(ctx, t.shape, 0, unwrap(dtype) or t.dtype)


def _dims(args: tuple[Any, ...], what: str) -> tuple[int, ...]:
    """Dimensions given either as varargs (``reshape(x, 2, 4)``) or as one sequence."""
    if len(args) == 1 and isinstance(unwrap(args[0]), (list, tuple)):
        args = tuple(unwrap(args[0]))
    return tuple(const_value(d, what) for d in args)


@rule("reshape")
def reshape(ctx: Ctx, input: Any, *shape: Any, can_reorder: Any = False) -> Tensor:
    t = to_tensor(ctx, input)
    new = _dims(shape, "reshape dimension")
    check_shape(new)
    n = 1
    for d in new:
        n *= d
    if n != t.numel:
        fail("TLXC-SHAPE-003", f"cannot reshape a tile of shape {fmt(t.shape)} ({t.numel} elements) to "
                               f"{fmt(new)} ({n} elements)")
    if not t.shape:
        return broadcast_to_shape(ctx, t, new)
    if new == t.shape:
        return t
    reorder = bool(const_value(can_reorder, "can_reorder", (bool, int)))
    return Tensor(ctx.b.value(ops.ReshapeOp, [t.handle], TileType(new, t.dtype), can_reorder=reorder))


@rule("item")
def item(ctx: Ctx, input: Any) -> Tensor:
    """``x.item()``: the one element of a tile of one element (any rank), as a scalar."""
    t = to_tensor(ctx, input)
    if not t.shape:
        return t
    if t.numel != 1:
        fail("TLXC-SHAPE-003", f"item() needs a tile of one element, got shape {fmt(t.shape)} ({t.numel} elements)")
    return Tensor(ctx.b.value(ops.ReshapeOp, [t.handle], t.dtype))


@rule("squeeze")
def squeeze(ctx: Ctx, input: Any, dim: Any) -> Tensor:
    """``x.squeeze(dim)``: the tile without its size-1 dimension ``dim``."""
    t = to_tensor(ctx, input)
    d = axis_arg(dim, len(t.shape))
    if t.shape[d] != 1:
        fail("TLXC-SHAPE-003", f"squeeze({d}): dimension {d} of a tile of shape {fmt(t.shape)} has size "
                               f"{t.shape[d]}, not 1")
    return reshape(ctx, t, *(t.shape[:d] + t.shape[d + 1:]))


@rule("view")
def view(ctx: Ctx, input: Any, *shape: Any) -> Tensor:
    return reshape(ctx, input, *shape, can_reorder=True)


@rule("ravel")
def ravel(ctx: Ctx, x: Any, can_reorder: Any = False) -> Tensor:
    t = as_tile(x, "tl.ravel")
    return reshape(ctx, t, t.numel, can_reorder=can_reorder)


@rule("permute")
def permute(ctx: Ctx, input: Any, *dims: Any) -> Tensor:
    t = as_tile(input, "tl.permute")
    order = _dims(dims, "permutation")
    if sorted(order) != list(range(len(t.shape))):
        fail("TLXC-SHAPE-003", f"{list(order)} is not a permutation of the {len(t.shape)} dimensions of a tile "
                               f"of shape {fmt(t.shape)}")
    if order == tuple(range(len(order))):
        return t
    shape = tuple(t.shape[i] for i in order)
    return Tensor(ctx.b.value(ops.TransOp, [t.handle], TileType(shape, t.dtype), order=order))


@rule("trans")
def trans(ctx: Ctx, input: Any, *dims: Any) -> Tensor:
    t = as_tile(input, "tl.trans")
    if not dims or (len(dims) == 1 and unwrap(dims[0]) in ((), [], None)):
        # as Triton: the last two axes swap (a batched 2-D transpose)
        if len(t.shape) < 2:
            fail("TLXC-SHAPE-003", f"tl.trans without dims needs a tile of 2 or more dimensions, got shape "
                                   f"{fmt(t.shape)}")
        r = len(t.shape)
        dims = tuple(range(r - 2)) + (r - 1, r - 2)
    return permute(ctx, t, *dims)


@rule("unsqueeze")
def unsqueeze(ctx: Ctx, input: Any, dim: Any) -> Tensor:
    """``tl.unsqueeze(x, dim)``: Triton's name for ``expand_dims`` with one axis."""
    return expand_dims(ctx, input, dim)


@rule("expand_dims")
def expand_dims(ctx: Ctx, input: Any, axis: Any) -> Tensor:
    t = to_tensor(ctx, input)
    axes = unwrap(axis)
    axes = list(axes) if isinstance(axes, (list, tuple)) else [axes]
    rank = len(t.shape) + len(axes)
    norm = []
    for a in axes:
        a = const_value(a, "axis")
        if not -rank <= a < rank:
            fail("TLXC-SHAPE-003", f"axis {a} is out of range for the result's rank {rank}")
        norm.append(a % rank)
    if len(set(norm)) != len(norm):
        fail("TLXC-SHAPE-003", f"repeated axis in {axes}")
    h = t.handle
    shape = list(t.shape)
    for a in sorted(norm):
        shape.insert(a, 1)
        if len(shape) == 1:
            h = ctx.b.value(ops.SplatOp, [h], TileType((1,), t.dtype))
        else:
            h = ctx.b.value(ops.ExpandDimsOp, [h], TileType(tuple(shape), t.dtype), axis=a)
    return Tensor(h)


@rule("broadcast_to")
def broadcast_to(ctx: Ctx, input: Any, *shape: Any) -> Tensor:
    t = to_tensor(ctx, input)
    new = _dims(shape, "shape")
    check_shape(new)
    return broadcast_to_shape(ctx, t, new)


@rule("broadcast")
def broadcast(ctx: Ctx, input: Any, other: Any) -> tuple[Tensor, Tensor]:
    a, b = to_tensor(ctx, input), to_tensor(ctx, other)
    a, b = broadcast_all(ctx, a, b)
    return a, b


@rule("interleave")
def interleave(ctx: Ctx, a: Any, b: Any) -> Tensor:
    """``a0 b0 a1 b1 ...`` along the last dimension: ``join`` (a new last dim of 2), then
    that dim folded into the one before it."""
    c = join(ctx, a, b)
    if len(c.shape) == 1:  # two scalars: [a, b]
        return c
    return reshape(ctx, c, *(c.shape[:-2] + (2 * c.shape[-2],)))


@rule("join")
def join(ctx: Ctx, a: Any, b: Any) -> Tensor:
    from .arith import promote_pair

    x, y = promote_pair(ctx, a, b, "tl.join")
    x, y = broadcast_all(ctx, x, y)
    if not x.shape:  # Triton: two scalars join into a tile of 2, built as a [1, 2] join
        x, y = broadcast_to_shape(ctx, x, (1,)), broadcast_to_shape(ctx, y, (1,))
        return reshape(ctx, join(ctx, x, y), 2)
    check_shape(x.shape + (2,))
    return Tensor(ctx.b.value(ops.JoinOp, [x.handle, y.handle], TileType(x.shape + (2,), x.dtype)))


@rule("split")
def split(ctx: Ctx, a: Any) -> tuple[Tensor, Tensor]:
    t = as_tile(a, "tl.split")
    if not t.shape or t.shape[-1] != 2:
        fail("TLXC-SHAPE-003", f"tl.split needs a tile whose last dimension is 2, got shape {fmt(t.shape)}")
    rt = shaped(t.dtype, t.shape[:-1])
    op = ctx.b.create(ops.SplitOp, [t.handle], [rt, rt])
    return Tensor(op.results[0]), Tensor(op.results[1])




@rule("cat")
def cat(ctx: Ctx, input: Any, other: Any, can_reorder: Any = False, dim: Any = 0) -> Tensor:
    """Triton's ``tl.cat``: ``input`` then ``other`` along ``dim`` (the other dims equal),
    built as join, permute and reshape. ``can_reorder`` allows any order of the elements;
    keeping them in order is one such order."""
    a, b = as_tile(input, "tl.cat"), as_tile(other, "tl.cat")
    const_value(can_reorder, "can_reorder", (bool,))
    rank = len(a.shape)
    d = axis_arg(dim, rank)
    if len(b.shape) != rank or any(x != y for i, (x, y) in enumerate(zip(a.shape, b.shape)) if i != d):
        fail("TLXC-SHAPE-001", f"tl.cat needs tiles whose shapes differ only in dimension {d}, got {fmt(a.shape)} "
                               f"and {fmt(b.shape)}")
    if a.shape[d] != b.shape[d]:
        fail("TLXC-SHAPE-003", f"tl.cat of {fmt(a.shape)} and {fmt(b.shape)}: the result's dimension {d} would "
                               f"be {a.shape[d] + b.shape[d]}, not a power of two")
    joined = join(ctx, a, b)
    order = list(range(rank))
    order.insert(d, rank)
    new = list(a.shape)
    new[d] *= 2
    return reshape(ctx, permute(ctx, joined, *order), *new)
