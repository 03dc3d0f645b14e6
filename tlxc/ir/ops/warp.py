"""Warp-level collectives: ``vote_ballot_sync`` and ``warp_redux`` (TLX's ``warp_ops``).

Both combine values across the 32 lanes of a warp, so for a tile their meaning depends on
which lanes hold which elements. tlxc fixes that ownership, whatever the surrounding
layouts (the interpreter runs the IR before layouts exist, and must agree with the GPU):

    the lanes of a warp run along dim 0 -- the element at dim-0 index ``i`` belongs to
    lane ``i % 32`` of *warp row group* ``i // 32``; elements that differ in the other
    dims belong to other registers of the same lane.

So a warp row group is 32 consecutive dim-0 indices, and ``shape[0]`` must be a multiple
of 32. Layout assignment gives the operand the layout that realizes this rule
(``layouts.warp_rows_layout``: one lane per dim-0 index, a lane's row in its registers,
warps over further groups), converting the operand when it comes in another one. It is
what TLX's tensor-memory loads give per-row statistics (one lane per row), the case
TLX's tutorials use these ops for.

* ``vote_ballot_sync(mask, pred)``: a lane votes true when any element of its row is
  true (TLX ORs a thread's elements); every element of the group's rows gets the 32-bit
  ballot, bit ``l`` for lane ``l``, lanes outside ``mask`` read as 0. A scalar ``pred``
  is each thread's own vote (``vote.sync.ballot.b32``).
* ``warp_redux(x, kind)``: each element becomes the reduction of its column over the 32
  rows of its group. TLX's kinds on f32: ``max``, ``min``, ``abs_max``, ``abs_min`` (a
  float max/min ignores NaN unless every input is NaN, as ``redux.sync`` without
  ``.NaN``); on i32/u32 tlxc adds the integer ``redux.sync`` kinds: ``add`` (wrapping),
  ``min``, ``max``, ``and``, ``or``, ``xor``.
"""

from __future__ import annotations

from ..accessors import Attr, Operand
from ..core import Operation, register
from ..types import TileType
from .base import fail, is_i1

WARP_LANES = 32  # NVIDIA's warp: the ops are NVIDIA-only (codegen/target_ops refuses them elsewhere)
FLOAT_REDUX = ("max", "min", "abs_max", "abs_min")
INT_REDUX = ("add", "min", "max", "and", "or", "xor")


def check_warp_rows(op: Operation, shape: tuple[int, ...]) -> None:
    if shape and shape[0] % WARP_LANES:
        fail(op, f"dim 0 of a warp-level operand must be a multiple of {WARP_LANES} (the lanes of a warp), "
                 f"got shape {shape}")


@register
class VoteBallotOp(Operation):
    """The warp's 32-bit ballot of ``pred`` over the lanes in ``mask`` (see the module)."""

    NAME = "vote_ballot_sync"
    PURE = True
    OPERANDS = ("pred",)
    ATTRS = {"mask": 0xFFFFFFFF}

    pred = Operand()
    mask = Attr[int]()

    def verify(self) -> None:
        super().verify()
        t, r = self.pred.type, self.result.type
        if not is_i1(t):
            fail(self, f"vote_ballot_sync needs an i1 predicate, got {t}")
        if r.shape != t.shape or r.scalar.ir_name != "i32":
            fail(self, f"the ballot is an i32 of the predicate's shape {t.shape}, got {r}")
        mask = self.mask
        if isinstance(mask, bool) or not isinstance(mask, int) or not 0 <= mask < 1 << 32:
            fail(self, f"mask must be a 32-bit lane mask, got {mask!r}")
        check_warp_rows(self, t.shape)


@register
class WarpReduxOp(Operation):
    """Each element reduced with ``kind`` over its warp row group (see the module)."""

    NAME = "warp_redux"
    PURE = True
    OPERANDS = ("x",)
    ATTRS = {"kind": Operation.REQUIRED}

    x = Operand()
    kind = Attr[str]()

    def verify(self) -> None:
        super().verify()
        t = self.x.type
        if not isinstance(t, TileType):
            fail(self, f"warp_redux needs a tile, got {t}")
        name = t.scalar.ir_name
        kinds = FLOAT_REDUX if name == "f32" else INT_REDUX if name in ("i32", "u32") else ()
        if not kinds:
            fail(self, f"warp_redux takes f32, i32 or u32 elements, got {t.scalar}")
        if self.kind not in kinds:
            fail(self, f"warp_redux on {name} is one of {', '.join(kinds)}, got {self.kind!r}")
        if self.result.type != t:
            fail(self, f"result type {self.result.type} differs from operand type {t}")
        check_warp_rows(self, t.shape)
