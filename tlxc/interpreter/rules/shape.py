"""Rules for the ops that create tiles or move their elements.

Most are numpy views (no copy); that is safe because no rule ever writes into a value.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import shape as S
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


@evaluates(S.ArangeOp)
def _arange(op: Operation, state: LaunchState) -> Fn:
    value = np.arange(op.start, op.end, dtype=np.int32)
    value.flags.writeable = False
    return lambda: value


@evaluates(S.SplatOp, S.BroadcastOp)
def _broadcast(op: Operation, state: LaunchState) -> Fn:
    # A filled copy, not np.broadcast_to: its Python overhead costs more than copying a
    # tile, and the ops that follow run faster on contiguous operands.
    shape = op.result.type.shape
    empty = np.empty

    def broadcast(x: np.ndarray) -> np.ndarray:
        out = empty(shape, x.dtype)
        out[...] = x
        return out

    return broadcast


@evaluates(S.ExpandDimsOp)
def _expand_dims(op: Operation, state: LaunchState) -> Fn:
    shape = op.result.type.shape    # inserting a size-1 dimension never copies
    return lambda x: x.reshape(shape)


@evaluates(S.ReshapeOp)
def _reshape(op: Operation, state: LaunchState) -> Fn:
    # row-major even with can_reorder: the interpreter keeps the order a plain reshape has
    shape = op.result.type.shape
    return lambda x: np.reshape(x, shape)


@evaluates(S.TransOp)
def _trans(op: Operation, state: LaunchState) -> Fn:
    order = tuple(op.order)
    return lambda x: np.transpose(x, order)


@evaluates(S.JoinOp)
def _join(op: Operation, state: LaunchState) -> Fn:
    return lambda a, b: np.stack([a, b], axis=-1)


@evaluates(S.SplitOp)
def _split(op: Operation, state: LaunchState) -> Fn:
    return lambda x: (x[..., 0], x[..., 1])
