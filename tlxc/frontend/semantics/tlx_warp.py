"""Semantic rules of TLX's warp-level ops: ``vote_ballot_sync(mask, pred)`` and
``warp_redux(x, op)``. Which lanes form a warp for a tile is fixed by the IR
(``ir/ops/warp.py``: lanes run along dim 0, 32 rows per warp row group), so the rules
check that a tile's dim 0 holds whole warps."""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.ops.warp import FLOAT_REDUX, INT_REDUX, WARP_LANES
from ...ir.types import TileType, int32
from ..values import Tensor, describe, unwrap
from .arith import to_bool
from .base import Ctx, const_value, fail, rule, to_tensor


def _warp_rows(t: Tensor, what: str) -> None:
    if t.shape and t.shape[0] % WARP_LANES:
        fail("TLXC-SHAPE-003", f"{what}: dim 0 of the tile is {t.shape[0]}, not a multiple of {WARP_LANES}; tlxc "
                               f"gives a warp's {WARP_LANES} lanes {WARP_LANES} consecutive rows (dim 0) of the tile",
             f"reshape the tile so that dim 0 runs over whole warps (e.g. [{WARP_LANES}, n] or [{WARP_LANES}*k])")


@rule("tlx.vote_ballot_sync")
def vote_ballot_sync(ctx: Ctx, mask: Any, pred: Any) -> Tensor:
    m = const_value(mask, "vote_ballot_sync's mask")
    if not -(1 << 31) <= m < 1 << 32:
        fail("TLXC-CALL-002", f"vote_ballot_sync's mask is a 32-bit lane mask, got {m:#x}")
    p = to_bool(ctx, pred)
    _warp_rows(p, "vote_ballot_sync")
    t = TileType(p.shape, int32) if p.shape else int32
    return Tensor(ctx.b.value(ops.VoteBallotOp, [p.handle], t, mask=m & 0xFFFFFFFF))


@rule("tlx.warp_redux")
def warp_redux(ctx: Ctx, x: Any, op: Any) -> Tensor:
    kind = const_value(op, "warp_redux's op", (str,))
    t = to_tensor(ctx, x)
    if not t.shape:
        fail("TLXC-SHAPE-003", f"warp_redux needs a tile, got {describe(unwrap(x))}")
    name = getattr(t.dtype, "ir_name", "")
    kinds = FLOAT_REDUX if name == "f32" else INT_REDUX if name in ("i32", "u32") else ()
    if not kinds:
        fail("TLXC-TYPE-001", f"warp_redux takes float32, int32 or uint32 tiles, got {describe(t)}")
    if kind not in kinds:
        fail("TLXC-CALL-002", f"warp_redux on {t.dtype!r} takes op {', '.join(map(repr, kinds))}, got {kind!r}")
    _warp_rows(t, "warp_redux")
    return Tensor(ctx.b.value(ops.WarpReduxOp, [t.handle], TileType(t.shape, t.dtype), kind=kind))
