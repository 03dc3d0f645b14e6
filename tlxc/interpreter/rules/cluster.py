"""Rules for the cluster ops. A CTA's rank and its cluster's size come from its place in
the cluster (``tlxc.interpreter.cluster``); a cluster barrier waits for every thread of
every CTA; stores into a peer land in the peer CTA's copy of the buffer (the same
allocation, the same bytes), the asynchronous ones completing on the peer's copy of the
mbarrier as its transaction bytes. Remote mbarrier arrives and TMA multicast are with
their ops in ``rules/tlx.py``."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.core import Operation
from ...ir.ops import cluster as K
from ..cluster import cluster_barrier
from ..onchip import PENDING, Barrier, PendingCopy, View, check_readable
from ..registry import LaunchState, evaluates

Fn = Callable[..., Any]


@evaluates(K.ClusterCtaRankOp)
def _rank(op: Operation, state: LaunchState) -> Fn:
    return lambda: np.asarray(state.cta.rank, np.int32)


@evaluates(K.ClusterSizeOp)
def _size(op: Operation, state: LaunchState) -> Fn:
    return lambda: np.asarray(int(np.prod(state.cluster)), np.int32)


@evaluates(K.ClusterBarrierOp)
def _cluster_barrier(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc
    what = f"the cluster_barrier at line {loc.line}" if loc is not None else "a cluster_barrier"
    return lambda: cluster_barrier(state, what, loc)


@evaluates(K.RemoteStoreOp)
def _remote_store(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def store(buf: View, value: np.ndarray, rank: np.ndarray) -> None:
        peer = state.cta.group.peer(rank, "remote_shmem_store", loc)
        peer.onchip.peer_view(buf).write(value, what="remote_shmem_store", loc=loc)

    return store


def _lands(state: LaunchState, rank: np.ndarray, dst: View, bar: Barrier, what: str, loc: Any,
           write: Callable[[View], np.ndarray]) -> None:
    """An asynchronous write into the peer ``rank``'s copy of ``dst``: its bytes stay
    pending there until a wait on the peer's copy of ``bar`` sees the phase they complete."""
    peer = state.cta.group.peer(rank, what, loc)
    view, peer_bar = peer.onchip.peer_view(dst), peer.onchip.peer_barrier(bar)
    idx = write(view)
    peer.onchip.tma.append(PendingCopy(view.arena, idx, loc, peer_bar, peer_bar.completed))
    peer_bar.complete_tx(int(idx.size))


@evaluates(K.AsyncRemoteStoreOp)
def _async_remote_store(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def store(buf: View, value: np.ndarray, rank: np.ndarray, bar: Barrier) -> None:
        _lands(state, rank, buf, bar, "async_remote_shmem_store", loc,
               lambda view: view.write(value, PENDING, "async_remote_shmem_store", loc))

    return store


@evaluates(K.AsyncRemoteCopyOp)
def _async_remote_copy(op: Operation, state: LaunchState) -> Fn:
    loc = op.loc

    def copy(dst: View, src: View, rank: np.ndarray, bar: Barrier) -> None:
        # the bulk copy reads the source at once here; the GPU reads it while the copy runs,
        # and the kernel learns it has only when the peer's barrier completes
        check_readable(src, "async_remote_copy", loc)
        raw = src.arena.data[src.byte_indices()]
        _lands(state, rank, dst, bar, "async_remote_copy", loc,
               lambda view: view.write_bytes(raw, PENDING, "async_remote_copy", loc))

    return copy
