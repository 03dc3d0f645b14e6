"""Rules for the cluster ops. The interpreter runs the programs of a grid one after the
other, so a CTA's rank and its cluster's size come from its program id and the cluster
shape the kernel was compiled for (``func``'s ``cluster_dims``), and a cluster barrier
has nothing to wait for; what reaches into a peer CTA (its shared memory, its barriers)
needs the CTAs of a cluster to run together, which the interpreter does not do yet: it
is refused at the op's line (``TLXC-INTERP-008``) rather than run wrongly."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops import cluster as K
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


@evaluates(K.ClusterCtaRankOp)
def _rank(op: Operation, state: LaunchState) -> Fn:
    def rank() -> np.ndarray:
        (cx, cy, cz), (x, y, z) = state.cluster, (int(p) for p in state.pid)
        return np.asarray(x % cx + cx * (y % cy + cy * (z % cz)), np.int32)

    return rank


@evaluates(K.ClusterSizeOp)
def _size(op: Operation, state: LaunchState) -> Fn:
    return lambda: np.asarray(int(np.prod(state.cluster)), np.int32)


@evaluates(K.ClusterBarrierOp)
def _cluster_barrier(op: Operation, state: LaunchState) -> Fn:
    # nothing a peer did can be seen here (peers are refused), and one program is always in step
    return lambda: None


def no_peers(op: Operation, what: str) -> Fn:
    loc = op.loc

    def refuse(*args: Any) -> None:
        raise InterpreterError("TLXC-INTERP-008", f"{what} reaches into a peer CTA of the cluster; the interpreter "
                                                  "runs the CTAs one after the other and cannot do that yet", loc)

    return refuse


@evaluates(K.RemoteStoreOp, K.AsyncRemoteStoreOp, K.AsyncRemoteCopyOp)
def _remote(op: Operation, state: LaunchState) -> Fn:
    return no_peers(op, f"'{op.NAME}'")
