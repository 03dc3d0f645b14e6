"""What kernels see as ``tlx`` (``import tlxc.tlx as tlx``, also importable as
``tlxc.language.extra.tlx`` so TLX kernels run after renaming ``triton`` to ``tlxc``).

Like ``tl``, the functions here are names only: inside a ``@tlxc.kernel`` function the
frontend applies the semantic rule registered as ``tlx.<name>`` in
``tlxc.frontend.semantics`` (``tlx_buffers``, ``tlx_sync``, ``tlx_mma``, ``tlx_amd``,
``tlx_tasks``). The classes
(``storage_kind`` ...) are plain host-side values that kernels pass as arguments.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from ..language.core import Builtin


class storage_kind(enum.Enum):  # noqa: N801  (TLX's spelling)
    """Where a buffer lives: shared memory, Blackwell tensor memory, or a cluster peer's
    shared memory."""

    smem = "smem"
    tmem = "tmem"
    smemCluster = "smemCluster"  # noqa: N815


class reuse_group_type(enum.Enum):  # noqa: N801  (TLX's spelling)
    """How the children of a ``reuse_group`` share a ``storage_alias_spec``: ``shared``
    children overlay the same bytes of each buffer slot, ``distinct`` ones sit side by
    side in it."""

    shared = "shared"
    distinct = "distinct"


# -- layout classes -------------------------------------------------------------------------
# Plain values with TLX's constructor signatures; kernels may build them (their arguments
# must be compile-time constants) and pass them to local_alloc(layout=...). The frontend
# turns them into LinearLayouts (``tlxc.frontend.semantics.tlx_layouts``).
class layout_encoding:  # noqa: N801
    """Base of TLX's layout classes."""

    _tlxc_host = True  # kernels may construct these at compile time

    def __post_init__(self) -> None:
        # lists become tuples, so that a layout is hashable and can be a tl.constexpr argument
        for name, value in vars(self).items():
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))


class shared_layout_encoding(layout_encoding):  # noqa: N801
    """Base of the shared-memory layouts."""


@dataclass(frozen=True)
class swizzled_shared_layout_encoding(shared_layout_encoding):  # noqa: N801
    """Triton's XOR-swizzled shared layout: ``vectorSize``-element chunks of a row move
    to chunk ``c ^ ((row // perPhase) % maxPhase)``; ``order[0]`` is the contiguous dim."""

    vectorSize: int  # noqa: N815
    perPhase: int  # noqa: N815
    maxPhase: int  # noqa: N815
    order: Any
    numCTAs: Any = None  # noqa: N815
    numCTAsPerCGA: Any = None  # noqa: N815
    numCTASplit: Any = None  # noqa: N815
    numCTAOrder: Any = None  # noqa: N815

    @classmethod
    def make_default(cls, rank: int) -> "swizzled_shared_layout_encoding":
        """Unswizzled row-major."""
        ones = [1] * rank
        order = list(reversed(range(rank)))
        return cls(1, 1, 1, order, ones, ones, ones, order)


@dataclass(frozen=True)
class nv_mma_shared_layout_encoding(shared_layout_encoding):  # noqa: N801
    """The NVMMA shared layout that TMA and wgmma read (swizzle span chosen from the
    contiguous dim's bytes, as for the default layout); ``swizzled=False`` is the plain
    layout, ``order=[0, 1]`` the transposed (column-major) one."""

    shape: Any
    order: Any
    elemType: Any  # noqa: N815
    numCTAsPerCGA: Any = None  # noqa: N815
    numCTASplit: Any = None  # noqa: N815
    numCTAOrder: Any = None  # noqa: N815
    fp4Padded: bool = False  # noqa: N815
    swizzled: bool = True

    @classmethod
    def make_default(cls, shape: Any, elemType: Any) -> "nv_mma_shared_layout_encoding":  # noqa: N803
        rank = len(shape)
        ones = [1] * rank
        order = list(reversed(range(rank)))
        return cls(list(shape), order, elemType, ones, ones, order, False, True)


def _b(name: str, doc: str) -> Builtin:
    return Builtin(name, doc, namespace="tlx")


# -- buffers ------------------------------------------------------------------------------
local_alloc = _b("local_alloc", "Allocate `num` buffers of `shape` in shared (or tensor) memory.")
local_view = _b("local_view", "One buffer of an array of buffers or barriers (also `buf[i]`).")
local_slice = _b("local_slice", "A sub-buffer at `offset` with `shape` (a view, no copy).")
subslice = _b("subslice", "Columns [offset, offset+size) of a tensor-memory buffer.")
local_load = _b("local_load", "Read a buffer into registers.")
local_store = _b("local_store", "Write a register tile into a buffer: local_store(dst, src).")
local_trans = _b("local_trans", "The buffer with its dimensions permuted (a view, no copy).")
local_reinterpret = _b("local_reinterpret", "The buffer's bytes seen as another dtype / shape.")
storage_alias_spec = _b("storage_alias_spec", "A shared backing store that several allocations overlay.")
reuse_group = _b("reuse_group", "A node of a set_buffer_overlap tree: buffers or groups, shared or distinct.")
dtype_of = _b("dtype_of", "The element dtype of a tensor, pointer, buffer or descriptor (compile time).")
size_of = _b("size_of", "The size of a dtype in bytes (compile time).")
get_fp8_format_name = _b("get_fp8_format_name", "'e4m3' or 'e5m2' for an fp8 dtype (compile time).")
thread_id = _b("thread_id", "The hardware thread index along an axis.")
clock64 = _b("clock64", "A 64-bit cycle counter.")
# -- warp-level ops (lanes run along dim 0 of a tile: 32 rows per warp) ----------------------
vote_ballot_sync = _b("vote_ballot_sync", "The warp's 32-bit ballot of `pred` over the lanes in `mask`.")
warp_redux = _b("warp_redux", "Each element reduced over the 32 rows of its warp ('max', 'min', 'abs_max', ...).")
# -- barriers and fences ------------------------------------------------------------------
alloc_barriers = _b("alloc_barriers", "`num_barriers` mbarriers expecting `arrive_count` arrivals per phase.")
alloc_warp_barrier = _b("alloc_warp_barrier", "mbarriers on which every thread arrives.")
barrier_expect_bytes = _b("barrier_expect_bytes", "Arrive once and expect `size` transaction bytes.")
barrier_wait = _b("barrier_wait", "Wait until the phase with parity `phase` has completed.")
barrier_arrive = _b("barrier_arrive", "Arrive on an mbarrier.")
named_barrier_wait = _b("named_barrier_wait", "Wait at a hardware named barrier (0..15).")
named_barrier_arrive = _b("named_barrier_arrive", "Arrive at a hardware named barrier without waiting.")
fence = _b("fence", "A memory fence: 'async_shared', 'gpu' or 'sys'.")
fence_async_shared = _b("fence_async_shared", "fence('async_shared').")
# -- clusters -------------------------------------------------------------------------------
cluster_cta_rank = _b("cluster_cta_rank", "This CTA's linear rank in its cluster (0 without clusters).")
cluster_size_1d = _b("cluster_size_1d", "How many CTAs the cluster has.")
cluster_barrier = _b("cluster_barrier", "Every thread of every CTA of the cluster meets.")
fence_mbarrier_init_cluster = _b("fence_mbarrier_init_cluster", "Make mbarrier inits visible to the cluster.")
remote_view = _b("remote_view", "The same mbarrier in the peer CTA `remote_cta_rank` (for barrier_arrive).")
remote_shmem_store = _b("remote_shmem_store", "Store a tile into a peer CTA's copy of a buffer.")
async_remote_shmem_store = _b("async_remote_shmem_store", "Store a tile into a peer's buffer, completing on "
                                                          "its barrier.")
async_remote_shmem_copy = _b("async_remote_shmem_copy", "Bulk-copy a buffer into a peer's, completing on its "
                                                        "barrier.")
# -- asynchronous copies and TMA ----------------------------------------------------------
async_load = _b("async_load", "Start copying a tile of pointers into a buffer (cp.async).")
async_load_commit_group = _b("async_load_commit_group", "Close the current group of async loads.")
async_load_wait_group = _b("async_load_wait_group", "Wait until at most `pendings` groups are in flight.")
async_descriptor_load = _b("async_descriptor_load", "TMA load of a block into a buffer, completing on a barrier.")
async_descriptor_store = _b("async_descriptor_store", "TMA store of a buffer to a block.")
async_descriptor_store_wait = _b("async_descriptor_store_wait", "Wait until at most `pendings` TMA stores "
                                                                "still read shared memory.")
make_tensor_descriptor = _b("make_tensor_descriptor", "Build a TMA descriptor on the device.")
allocate_tensor_descriptor = _b("allocate_tensor_descriptor", "Global scratch for `num` device descriptors.")
reinterpret_tensor_descriptor = _b("reinterpret_tensor_descriptor", "A descriptor stored at a pointer.")
# -- tensor cores -------------------------------------------------------------------------
async_dot = _b("async_dot", "Start `A @ B (+ acc)` on the tensor cores (wgmma on Hopper).")
async_dot_wait = _b("async_dot_wait", "Wait until at most `pendings` async_dot groups are in flight.")
# -- AMD: register layouts, explicit MFMA scheduling, scaled dot (tlxc/tlx/amd.py) ------------
from .amd import *  # noqa: E402,F401,F403

# -- warp specialization: ``with tlx.async_tasks():`` / ``with tlx.async_task(...):`` (tasks.py) ----
from .tasks import async_task, async_task_replica_id, async_tasks  # noqa: E402,F401

BUILTINS: dict[str, Builtin] = {
    name: obj for name, obj in list(globals().items()) if isinstance(obj, Builtin)
}
