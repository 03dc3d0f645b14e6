"""Rules for ``gather`` and ``histogram``.

An index outside the gathered axis is undefined on the GPU (Triton does not check it);
the interpreter reports it at the kernel's line instead of reading anything.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops import indexing as X
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


@evaluates(X.GatherOp)
def _gather(op: Operation, state: LaunchState) -> Fn:
    axis, size, loc = op.axis, op.src.type.shape[op.axis], op.loc

    def gather(src: np.ndarray, index: np.ndarray) -> np.ndarray:
        wide = index.astype(np.int64)
        bad = (wide < 0) | (wide >= size)
        if bad.any():
            where = tuple(int(c) for c in np.argwhere(bad)[0])
            raise InterpreterError("TLXC-INTERP-001", f"tl.gather: index {int(wide[where])} at {list(where)} is "
                                                      f"outside [0, {size}) along axis {axis}", loc)
        return np.take_along_axis(src, wide, axis)

    return gather


@evaluates(X.HistogramOp)
def _histogram(op: Operation, state: LaunchState) -> Fn:
    bins = op.result.type.shape[0]

    def histogram(x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        v = x.astype(np.int64)
        keep = (v >= 0) & (v < bins)
        if mask is not None:
            keep &= mask
        return np.bincount(v[keep], minlength=bins).astype(np.int32)

    return histogram
