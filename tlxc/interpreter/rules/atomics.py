"""Rules for atomic read-modify-write and compare-and-swap.

A program runs as one sequential thread here, so an atomic is a load and a store per
lane, lane after lane in row-major order: lanes of one tile that name one address see
each other's updates in that order, and masked-off lanes touch nothing (their result is
0). ``sem`` and ``scope`` order memory between threads, which a sequential run already
does.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import atomics as A
from ...ir.types import DType, Kind
from .. import numerics as N
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


def _combine(kind: str, elem: DType) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if kind == "add":
        if N.is_narrow_float(elem):
            return lambda old, v: N.round_result(old.astype(N.F32) + v.astype(N.F32), elem)
        return lambda old, v: old + v
    table: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
        "xor": np.bitwise_xor, "xchg": lambda old, v: v,
    }
    return table[kind]


def _lanes(op: Operation, state: LaunchState,
           update: Callable[[np.ndarray, int], np.ndarray | None]) -> Callable[[Any, Any], np.ndarray]:
    """Run ``update(old, lane)`` (the new value, or None to leave memory alone) at every
    address in lane order, collecting the old values."""
    elem: DType = op.ptr.type.scalar.pointee
    dt = N.storage_dtype(elem)
    shape = op.result.type.shape
    loc = op.loc
    memory = state.memory

    def run(p: Any, mask: Any) -> np.ndarray:
        addrs = np.broadcast_to(np.asarray(p), shape).reshape(-1)
        live = None if mask is None else np.broadcast_to(np.asarray(mask), shape).reshape(-1)
        out = np.zeros(addrs.shape, dt)
        for i in range(addrs.size):
            if live is not None and not live[i]:
                continue
            at = addrs[i:i + 1]
            old = memory.load(at, None, None, dt, loc)
            new = update(old, i)
            if new is not None:
                memory.store(at, np.asarray(new, dtype=dt), None, dt, loc)
            out[i] = old[0]
        return out.reshape(shape)

    return run


def _flat(x: Any, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=dt), shape).reshape(-1)


@evaluates(A.AtomicRMWOp)
def _atomic_rmw(op: Operation, state: LaunchState) -> Fn:
    elem: DType = op.ptr.type.scalar.pointee
    dt = N.storage_dtype(elem)
    shape = op.result.type.shape
    combine = _combine(op.kind, elem)
    vals: list[np.ndarray] = []

    def update(old: np.ndarray, i: int) -> np.ndarray:
        return combine(old, vals[0][i:i + 1])

    run = _lanes(op, state, update)

    def go(p: Any, v: Any, mask: Any = None) -> np.ndarray:
        vals[:] = [_flat(v, shape, dt)]
        return run(p, mask)

    return go


@evaluates(A.AtomicCASOp)
def _atomic_cas(op: Operation, state: LaunchState) -> Fn:
    elem: DType = op.ptr.type.scalar.pointee
    dt = N.storage_dtype(elem)
    bits = np.dtype(f"uint{dt.itemsize * 8}")
    shape = op.result.type.shape
    args: list[np.ndarray] = []

    def update(old: np.ndarray, i: int) -> np.ndarray | None:
        cmp, val = args[0][i:i + 1], args[1][i:i + 1]
        # the hardware compares bits: a float NaN can match, and -0.0 does not match 0.0
        same = old.view(bits) == cmp.view(bits) if elem.kind == Kind.FLOAT else old == cmp
        return val if bool(same[0]) else None

    run = _lanes(op, state, update)

    def go(p: Any, cmp: Any, val: Any) -> np.ndarray:
        args[:] = [np.ascontiguousarray(_flat(cmp, shape, dt)), np.ascontiguousarray(_flat(val, shape, dt))]
        return run(p, None)

    return go
