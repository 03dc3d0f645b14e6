"""Clusters on NVIDIA (PTX ISA "Cluster of Cooperative Thread Arrays", "mapa",
"barrier.cluster", "st.async", "cp.async.bulk"):

* ``cluster_cta_rank`` / ``cluster_size``: ``%cluster_ctarank`` / ``%cluster_nctarank``;
* ``cluster_barrier``: ``barrier.cluster.arrive.aligned`` + ``barrier.cluster.wait.aligned``
  (every thread of every CTA of the cluster);
* ``remote_store``: the buffer's address mapped into the peer (``mapa``), then the tile's
  stores with ``st.shared::cluster``;
* ``async_remote_store``: the same with ``st.async ... mbarrier::complete_tx::bytes`` on the
  peer's copy of the barrier;
* ``async_remote_copy``: one thread issues ``cp.async.bulk.shared::cluster.shared::cta``
  of the whole buffer, completing on the peer's barrier.

Remote mbarrier arrives (``barrier_arrive`` with ``remote_rank``) and TMA multicast live
with their ops in ``lower_sync`` and ``lower_tma``; the compiler's own cluster syncs (after
the mbarrier inits, before the kernel exits) in ``lower_sync.barrier_alloc`` and
``compile.emit``. ``check_target`` refuses every op that names a peer in a kernel that is
not clustered.
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import MemDescType
from . import instructions as insn
from .emitter import Emitter, lowers
from .lower_buffers import store_tile
from .lower_sync import thread0
from .ptx import Reg


def peer_address(e: Emitter, addr: Reg, rank: Reg) -> Reg:
    """``addr`` (this CTA's shared memory) in the cluster's CTA ``rank``."""
    r = e.fn.reg("b32")
    e.fn.emit(insn.mapa(r, addr, rank))
    return r


def cluster_sync(e: Emitter, relaxed: bool = False) -> None:
    """Every thread of every CTA of the cluster meets."""
    e.fn.emit(insn.barrier_cluster_arrive(relaxed=relaxed))
    e.fn.emit(insn.barrier_cluster_wait())


@lowers(ops.ClusterCtaRankOp)
def cluster_cta_rank(e: Emitter, op: Operation) -> None:
    e.set(op.result, [e.special("cluster_ctarank")])


@lowers(ops.ClusterSizeOp)
def cluster_size(e: Emitter, op: Operation) -> None:
    e.set(op.result, [e.special("cluster_nctarank")])


@lowers(ops.ClusterBarrierOp)
def cluster_barrier(e: Emitter, op: Operation) -> None:
    cluster_sync(e)


@lowers(ops.RemoteStoreOp, ops.AsyncRemoteStoreOp)
def remote_store(e: Emitter, op: Operation) -> None:
    buf_v, value_v, rank_v = op.operands[:3]
    buf: MemDescType = buf_v.type  # type: ignore[assignment]
    rank = e.get(rank_v).regs[0]
    base = peer_address(e, e.get(buf_v).regs[0], rank)
    value = e.get(value_v)
    bar = None
    if isinstance(op, ops.AsyncRemoteStoreOp):
        if buf.element.bits < 32 and buf.element.bits != 16:
            raise CompilationError("TLXC-CODEGEN-001", f"async_remote_shmem_store of {buf.element} elements: "
                                   "st.async stores 32- and 64-bit units (16-bit elements in pairs)", op.loc)
        bar = peer_address(e, e.get(op.operands[3]).regs[0], rank)
    try:
        store_tile(e, base, buf, value.layout, value.regs, remote=True, complete_tx=bar)
    except insn.PtxOperandError as err:
        raise CompilationError("TLXC-CODEGEN-001", f"{op.NAME}: {err} (each thread's elements of the tile are not "
                                                   "in whole 32-bit units of the buffer)", op.loc) from None


@lowers(ops.AsyncRemoteCopyOp)
def async_remote_copy(e: Emitter, op: Operation) -> None:
    dst_v, src_v, rank_v, bar_v = op.operands
    src: MemDescType = src_v.type  # type: ignore[assignment]
    rank = e.get(rank_v).regs[0]
    p = thread0(e)
    dst = peer_address(e, e.get(dst_v).regs[0], rank)
    bar = peer_address(e, e.get(bar_v).regs[0], rank)
    e.fn.emit(insn.cp_async_bulk_shared_cluster(dst, e.get(src_v).regs[0], src.nbytes, bar), p)
