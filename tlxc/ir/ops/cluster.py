"""Thread-block clusters: a CTA's rank in its cluster, cluster-wide barriers and stores
into a peer CTA's shared memory (distributed shared memory).

A kernel is clustered when it is compiled for clusters of more than one CTA (the
``func``'s ``cluster_dims``); these ops name a peer by its linear rank in the cluster.
Remote mbarrier arrives are ``barrier_arrive`` with its ``remote_rank`` operand; TMA
multicast is ``tma_load``'s ``multicast`` attribute. In a kernel that is not clustered the
code generator refuses every op that names a peer (``remote_rank``, ``remote_store``...).
"""

from __future__ import annotations

from ..accessors import Operand
from ..core import Operation, register
from ..effects import Sync, read
from ..types import DType, MemDescType
from .barriers import barrier
from .base import fail
from .buffers import i32_scalar, memdesc


def _i32_result(op: Operation, what: str) -> None:
    t = op.result.type
    if not isinstance(t, DType) or str(t) != "i32":
        fail(op, f"{what} gives an i32, got {t}")


@register
class ClusterCtaRankOp(Operation):
    """This CTA's linear rank in its cluster (0 without clusters)."""

    NAME = "cluster_cta_rank"
    PURE = True

    def verify(self) -> None:
        super().verify()
        _i32_result(self, "cluster_cta_rank")


@register
class ClusterSizeOp(Operation):
    """How many CTAs the cluster has (1 without clusters)."""

    NAME = "cluster_size"
    PURE = True

    def verify(self) -> None:
        super().verify()
        _i32_result(self, "cluster_size")


@register
class ClusterBarrierOp(Operation):
    """Every thread of every CTA of the cluster meets (and the CTA's own threads with
    them)."""

    NAME = "cluster_barrier"
    NUM_RESULTS = 0
    SYNC = (Sync("cta_barrier", scope="cluster"),)


@register
class RemoteStoreOp(Operation):
    """Store the tile ``value`` into the buffer ``buf`` of the peer CTA ``rank`` (the same
    offset in the peer's shared memory), synchronously."""

    NAME = "remote_store"
    OPERANDS = ("buf", "value", "rank")
    NUM_RESULTS = 0

    buf = Operand()
    value = Operand()
    rank = Operand()

    def verify(self) -> None:
        super().verify()
        _check_store(self)


@register
class AsyncRemoteStoreOp(Operation):
    """Store the tile ``value`` into the buffer ``buf`` of the peer CTA ``rank``; the bytes
    complete on the peer's copy of the mbarrier ``bar`` (its transaction count)."""

    NAME = "async_remote_store"
    OPERANDS = ("buf", "value", "rank", "bar")
    NUM_RESULTS = 0

    buf = Operand()
    value = Operand()
    rank = Operand()
    bar = Operand()

    def verify(self) -> None:
        super().verify()
        _check_store(self)
        barrier(self, self.operands[3].type)


@register
class AsyncRemoteCopyOp(Operation):
    """Copy this CTA's buffer ``src`` to the same bytes of ``dst`` in the peer CTA ``rank``
    (a bulk copy of the async proxy); the bytes complete on the peer's copy of ``bar``."""

    NAME = "async_remote_copy"
    OPERANDS = ("dst", "src", "rank", "bar")
    NUM_RESULTS = 0
    MEMORY = (read("src", "async"),)

    dst = Operand()
    src = Operand()
    rank = Operand()
    bar = Operand()

    def verify(self) -> None:
        super().verify()
        dst = memdesc(self, self.operands[0].type, "the destination", array=False)
        src = memdesc(self, self.operands[1].type, "the source", array=False)
        if dst.nbytes != src.nbytes:
            fail(self, f"source {src} and destination {dst} differ in size")
        i32_scalar(self, self.operands[2], "the peer's rank")
        barrier(self, self.operands[3].type)


def _check_store(op: Operation) -> None:
    buf: MemDescType = memdesc(op, op.operands[0].type, "the destination", array=False)
    v = op.operands[1].type
    if getattr(v, "shape", None) != tuple(buf.buf_shape) or v.scalar != buf.element:
        fail(op, f"a {v} tile does not fill the buffer {buf}")
    i32_scalar(op, op.operands[2], "the peer's rank")


__all__ = ["ClusterCtaRankOp", "ClusterSizeOp", "ClusterBarrierOp", "RemoteStoreOp", "AsyncRemoteStoreOp",
           "AsyncRemoteCopyOp"]
