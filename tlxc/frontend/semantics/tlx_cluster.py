"""Semantic rules of TLX's cluster operations: ``cluster_cta_rank``, ``cluster_size_1d``,
``cluster_barrier``, ``fence_mbarrier_init_cluster``, ``remote_view`` (an mbarrier of a
peer CTA, which only ``barrier_arrive`` takes: "arrive remote, wait local") and the stores
into a peer's shared memory (``remote_shmem_store``, ``async_remote_shmem_store``,
``async_remote_shmem_copy``). Whether the kernel is clustered is a launch option
(``ctas_per_cga``): the code generator refuses peers in a kernel that is not."""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import MemDescType, int32
from ..values import Handle, Tensor, describe, unwrap
from .base import Ctx, fail, rule
from .tlx_buffers import buffer
from .tlx_sync import RemoteBarrier, one_barrier, rank_value


@rule("tlx.cluster_cta_rank")
def cluster_cta_rank(ctx: Ctx) -> Tensor:
    return Tensor(ctx.b.value(ops.ClusterCtaRankOp, [], int32))


@rule("tlx.cluster_size_1d")
def cluster_size_1d(ctx: Ctx) -> Tensor:
    return Tensor(ctx.b.value(ops.ClusterSizeOp, [], int32))


@rule("tlx.cluster_barrier")
def cluster_barrier(ctx: Ctx) -> None:
    ctx.b.create(ops.ClusterBarrierOp, [], [])


@rule("tlx.fence_mbarrier_init_cluster")
def fence_mbarrier_init_cluster(ctx: Ctx) -> None:
    ctx.b.create(ops.FenceOp, [], [], {"scope": "mbarrier_init"})


@rule("tlx.remote_view")
def remote_view(ctx: Ctx, buf: Any, remote_cta_rank: Any) -> RemoteBarrier:
    v = unwrap(buf)
    if isinstance(v, Handle) and isinstance(v.type, MemDescType):
        fail("TLXC-TLX-005", "tlx.remote_view of a buffer: only mbarriers have remote views in tlxc; store into a "
                             "peer's buffer with tlx.remote_shmem_store / async_remote_shmem_store")
    b = one_barrier(v, "remote_view's barrier")
    return RemoteBarrier(b.handle, rank_value(ctx, remote_cta_rank))


def _store(ctx: Ctx, dst: Any, src: Any, what: str) -> tuple[Any, Tensor]:
    t = buffer(dst, f"{what}'s destination", array=False)
    if t.storage != "smem":
        fail("TLXC-TLX-005", f"{what} stores into shared memory; the destination is in {t.storage}")
    v = unwrap(src)
    if not isinstance(v, Tensor) or v.shape != t.buf_shape or v.dtype != t.element:
        fail("TLXC-TLX-001", f"{what} needs a {t.element!r} tile of shape {list(t.buf_shape)}, got {describe(v)}")
    return unwrap(dst).handle, v


@rule("tlx.remote_shmem_store")
def remote_shmem_store(ctx: Ctx, dst: Any, src: Any, remote_cta_rank: Any) -> None:
    d, v = _store(ctx, dst, src, "remote_shmem_store")
    ctx.b.create(ops.RemoteStoreOp, [d, v.handle, rank_value(ctx, remote_cta_rank).handle], [])


@rule("tlx.async_remote_shmem_store")
def async_remote_shmem_store(ctx: Ctx, dst: Any, src: Any, remote_cta_rank: Any, barrier: Any) -> None:
    d, v = _store(ctx, dst, src, "async_remote_shmem_store")
    bar = one_barrier(barrier, "async_remote_shmem_store's barrier")
    ctx.b.create(ops.AsyncRemoteStoreOp, [d, v.handle, rank_value(ctx, remote_cta_rank).handle, bar.handle], [])


@rule("tlx.async_remote_shmem_copy")
def async_remote_shmem_copy(ctx: Ctx, dst: Any, src: Any, remote_cta_rank: Any, barrier: Any) -> None:
    dt = buffer(dst, "async_remote_shmem_copy's destination", array=False)
    st = buffer(src, "async_remote_shmem_copy's source", array=False)
    if dt.nbytes != st.nbytes:
        fail("TLXC-TLX-001", f"async_remote_shmem_copy of {st.nbytes} bytes into a buffer of {dt.nbytes}")
    if dt.nbytes % 16:
        fail("TLXC-TLX-001", f"async_remote_shmem_copy copies multiples of 16 bytes, got {dt.nbytes}")
    bar = one_barrier(barrier, "async_remote_shmem_copy's barrier")
    ctx.b.create(ops.AsyncRemoteCopyOp, [unwrap(dst).handle, unwrap(src).handle,
                                         rank_value(ctx, remote_cta_rank).handle, bar.handle], [])


