"""``tl.make_block_ptr``, ``tl.advance``, and the pointer tile and mask of a load or store
through a block pointer (``frontend/block_ptr.py`` says what they mean)."""

from __future__ import annotations

from typing import Any

from ...ir.types import PointerType, int32, int64
from ..block_ptr import BlockPointer
from ..values import Tensor, describe, unwrap
from .arith import binary, cast, compare
from .base import Ctx, fail, rule, to_tensor
from .shape import arange, expand_dims

BLOCK = "TLXC-TYPE-001"


def _seq(v: Any, what: str) -> tuple:
    v = unwrap(v)
    if not isinstance(v, (tuple, list)):
        fail(BLOCK, f"tl.make_block_ptr: {what} must be a tuple, got {describe(v)}")
    return tuple(unwrap(x) for x in v)


@rule("make_block_ptr")
def make_block_ptr(ctx: Ctx, base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any,
                   order: Any) -> BlockPointer:
    base = unwrap(base)
    if not isinstance(base, Tensor) or base.shape or not isinstance(base.dtype, PointerType):
        fail(BLOCK, f"tl.make_block_ptr: base must be a scalar pointer, got {describe(base)}")
    shape_, strides_, offsets_ = _seq(shape, "shape"), _seq(strides, "strides"), _seq(offsets, "offsets")
    block, order_ = _seq(block_shape, "block_shape"), _seq(order, "order")
    rank = len(block)
    for name, seq in (("shape", shape_), ("strides", strides_), ("offsets", offsets_), ("order", order_)):
        if len(seq) != rank:
            fail("TLXC-SHAPE-003", f"tl.make_block_ptr: block_shape has rank {rank} but {name} has {len(seq)} "
                                   "entries; shape, strides, offsets, block_shape and order have one per dimension")
    if rank == 0:
        fail("TLXC-SHAPE-003", "tl.make_block_ptr: a block needs at least one dimension")
    for b in block:
        if not isinstance(b, int) or b <= 0 or b & (b - 1):
            fail("TLXC-SHAPE-003", f"tl.make_block_ptr: block_shape entries must be constant powers of two, got "
                                   f"{describe(b)}")
    if sorted(o for o in order_ if isinstance(o, int)) != list(range(rank)):
        fail(BLOCK, f"tl.make_block_ptr: order must be a permutation of 0..{rank - 1}, got {list(order_)}")
    return BlockPointer(base, tuple(_int(ctx, s, int64, "shape") for s in shape_),
                        tuple(_int(ctx, s, int64, "strides") for s in strides_),
                        tuple(_int(ctx, o, int32, "offsets") for o in offsets_), tuple(block), tuple(order_))


def _int(ctx: Ctx, v: Any, dtype: Any, what: str) -> Tensor:
    t = to_tensor(ctx, v, dtype)
    if t.shape or isinstance(t.dtype, PointerType) or not t.dtype.is_int():
        fail(BLOCK, f"tl.make_block_ptr: {what} entries must be integer scalars, got {describe(t)}")
    return cast(ctx, t, dtype)


@rule("advance")
def advance(ctx: Ctx, base: Any, offsets: Any) -> BlockPointer:
    bp = unwrap(base)
    if not isinstance(bp, BlockPointer):
        fail(BLOCK, f"tl.advance needs a block pointer (tl.make_block_ptr), got {describe(bp)}")
    deltas = _seq(offsets, "offsets")
    if len(deltas) != bp.rank:
        fail("TLXC-SHAPE-003", f"tl.advance: the block pointer has rank {bp.rank} but offsets has {len(deltas)} "
                               "entries")
    new = tuple(binary(ctx, "add", o, _int(ctx, d, int32, "offsets")) for o, d in zip(bp.offsets, deltas))
    return BlockPointer(bp.base, bp.shape, bp.strides, new, bp.block_shape, bp.order)


def pointers_and_mask(ctx: Ctx, bp: BlockPointer, boundary_check: Any, what: str) -> tuple[Tensor, Tensor | None]:
    """The pointer tile of ``bp``'s block and the mask of ``boundary_check``'s dims."""
    checks = unwrap(boundary_check)
    checks = () if checks is None else (checks,) if isinstance(checks, int) else tuple(unwrap(c) for c in checks)
    for c in checks:
        if not isinstance(c, int) or not 0 <= c < bp.rank:
            fail(BLOCK, f"{what}: boundary_check entries must be dimensions of the block (0..{bp.rank - 1}), got "
                        f"{describe(c)}")
    rank = bp.rank
    ptr: Tensor = bp.base  # type: ignore[assignment]
    mask: Tensor | None = None
    for d in range(rank):
        idx = _place(ctx, binary(ctx, "add", arange(ctx, 0, bp.block_shape[d]), bp.offsets[d]), d, rank)
        step = binary(ctx, "mul", cast(ctx, idx, int64), bp.strides[d])
        ptr = binary(ctx, "add", ptr, step)
        if d in checks:
            inside = binary(ctx, "and", compare(ctx, "ge", idx, 0),
                            compare(ctx, "lt", cast(ctx, idx, int64), bp.shape[d]))
            mask = inside if mask is None else binary(ctx, "and", mask, inside)
    return ptr, mask


def _place(ctx: Ctx, idx: Tensor, d: int, rank: int) -> Tensor:
    """A 1-D index of dim ``d`` as a rank-``rank`` tile of size 1 in the other dims."""
    for axis in range(rank):
        if axis != d:
            idx = expand_dims(ctx, idx, axis)
    return idx
