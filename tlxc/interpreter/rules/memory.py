"""Rules for pointers and global memory: addptr, ptrtoint, inttoptr, load and store.

Pointers are int64 byte addresses (see ``tlxc.interpreter.memory``); the pointee type,
and so the element size and the dtype a load reinterprets the bytes as, comes from the
IR type of the pointer operand, which is why a pointer bitcast needs no work at run time.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import arith as A
from ...ir.ops import memory as M
from ...ir.types import PointerType
from .. import numerics as N
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


def _pointee(op: Operation) -> np.dtype:
    ptr: PointerType = op.ptr.type.scalar  # type: ignore[assignment]
    return N.storage_dtype(ptr.pointee)


@evaluates(A.AddPtrOp)
def _addptr(op: Operation, state: LaunchState) -> Fn:
    size = np.int64(_pointee(op).itemsize)
    i64 = N.I64
    # offsets are sign- or zero-extended by their type, then scaled (a GEP)
    return lambda p, off: p + off.astype(i64) * size


@evaluates(A.PtrToIntOp)
def _ptrtoint(op: Operation, state: LaunchState) -> Fn:
    dt = N.storage_dtype(op.result.type.scalar)
    return lambda p: p.astype(dt)


@evaluates(A.IntToPtrOp)
def _inttoptr(op: Operation, state: LaunchState) -> Fn:
    i64 = N.I64
    return lambda x: x.astype(i64)


@evaluates(M.LoadOp)
def _load(op: Operation, state: LaunchState) -> Fn:
    dt = _pointee(op)
    loc = op.loc
    load = state.memory.load
    has_mask, has_other = op.mask is not None, op.other is not None
    if has_mask and has_other:
        return lambda p, mask, other: load(p, mask, other, dt, loc)
    if has_mask:
        return lambda p, mask: load(p, mask, None, dt, loc)
    if has_other:  # without a mask every lane loads: other is never used
        return lambda p, other: load(p, None, None, dt, loc)
    return lambda p: load(p, None, None, dt, loc)


@evaluates(M.StoreOp)
def _store(op: Operation, state: LaunchState) -> Fn:
    dt = _pointee(op)
    loc = op.loc
    store = state.memory.store
    if op.mask is not None:
        return lambda p, value, mask: store(p, value, mask, dt, loc)
    return lambda p, value: store(p, value, None, dt, loc)
