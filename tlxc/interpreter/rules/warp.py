"""Rules for the warp-level ops ``vote_ballot_sync`` and ``warp_redux``.

The interpreter runs a program as a whole, so it uses the ownership rule of
``ir/ops/warp.py`` -- lanes run along dim 0, 32 consecutive rows form one warp's lanes
-- which the code generator realizes by giving the operand that layout. A tile of shape
``(R, ...)`` is viewed as ``(R // 32, 32, rest)``: axis 1 is the lanes of one warp.

A scalar predicate is the same in every thread of a program (the interpreter refuses
per-thread values such as ``tlx.thread_id``), so its ballot is ``mask`` or 0.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import warp as W
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]
LANES = W.WARP_LANES
_LANE_BITS = (np.uint64(1) << np.arange(LANES, dtype=np.uint64)).reshape(1, LANES)


def _lanes(x: np.ndarray) -> np.ndarray:
    """``x`` as (warp row groups, lanes, the rest of a row)."""
    return x.reshape(x.shape[0] // LANES, LANES, -1)


@evaluates(W.VoteBallotOp)
def _vote_ballot(op: Operation, state: LaunchState) -> Fn:
    mask = np.uint64(op.mask)

    def ballot(pred: np.ndarray) -> np.ndarray:
        pred = np.asarray(pred)
        if pred.ndim == 0:
            return np.asarray(np.uint32(mask if pred else 0)).view(np.int32)
        votes = _lanes(pred).any(axis=2)                         # a lane votes for its whole row
        word = (np.where(votes, _LANE_BITS, np.uint64(0)).sum(axis=1, dtype=np.uint64) & mask)
        rows = np.repeat(word.astype(np.uint32), LANES)          # every row of the group
        out = np.broadcast_to(rows.reshape((-1,) + (1,) * (pred.ndim - 1)), pred.shape)
        return np.ascontiguousarray(out).view(np.int32)

    return ballot


def _reducer(kind: str, dtype: np.dtype) -> Callable[[np.ndarray], np.ndarray]:
    """Reduce axis 1 (the lanes) of a (groups, lanes, rest) array, keeping it."""
    if dtype.kind == "f":
        # redux.sync's float max/min without .NaN: a NaN lane is skipped (np.fmax/fmin)
        fn = np.fmax if kind.endswith("max") else np.fmin
        absolute = kind.startswith("abs_")
        return lambda g: fn.reduce(np.abs(g) if absolute else g, axis=1, keepdims=True)
    if kind == "add":  # wraps in 32 bits
        return lambda g: g.astype(np.int64).sum(axis=1, keepdims=True).astype(dtype)
    fn = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}[kind]
    return lambda g: fn.reduce(g, axis=1, keepdims=True)


@evaluates(W.WarpReduxOp)
def _warp_redux(op: Operation, state: LaunchState) -> Fn:
    kind = op.kind
    cache: dict[np.dtype, Callable[[np.ndarray], np.ndarray]] = {}

    def redux(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        fn = cache.get(x.dtype) or cache.setdefault(x.dtype, _reducer(kind, x.dtype))
        g = _lanes(x)
        return np.broadcast_to(fn(g), g.shape).reshape(x.shape).astype(x.dtype, copy=True)

    return redux
