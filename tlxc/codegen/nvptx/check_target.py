"""The ``check-target`` pass of the NVIDIA pipeline: operations the target does not have
are refused at the user's line before any other pass touches the kernel.

Expects: the canonicalized tile IR.
Guarantees: no AMD operation or layout remains; the layout-only ops NVIDIA lowers as
plain ones are rewritten (``target_ops.check_nvidia``).
Refuses: AMD operations (``TLXC-TLX-006``), tensor memory on a target without it and
tensor-memory buffers, which the code generator does not allocate yet (``TLXC-TLX-005``);
an op that names a peer CTA (a remote arrive or store, a TMA multicast) in a kernel that
is not compiled for clusters (``TLXC-TLX-008``).
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.passes.options import PassOptions
from .. import target_ops


def peer_access(op: Operation) -> str | None:
    """What ``op`` does to a peer CTA, in the user's words (None: nothing)."""
    if isinstance(op, ops.BarrierArriveOp) and op.operand("remote_rank") is not None:
        return "tlx.barrier_arrive on a remote barrier (remote_cta_rank / remote_view)"
    if isinstance(op, ops.TmaLoadOp) and op.multicasts():
        return "tlx.async_descriptor_load with multicast_targets"
    names = {"remote_store": "tlx.remote_shmem_store", "async_remote_store": "tlx.async_remote_shmem_store",
             "async_remote_copy": "tlx.async_remote_shmem_copy"}
    return names.get(op.NAME)


def check_clusters(func: Operation) -> None:
    """Peers exist only in a clustered kernel ("arrive remote, wait local" needs a cluster):
    remote barrier arrives and multicasts are refused in a kernel launched without one, as
    TLX refuses its remote views there. A remote store is not: every CTA is the rank 0 of
    a cluster of one, and TLX's tests keep ``if rank != 0: async_remote_shmem_store(...)``
    paths that a one-CTA launch never takes (the interpreter reports a rank outside the
    cluster if one is taken)."""
    size = 1
    for d in func.attrs["cluster_dims"]:
        size *= d
    for op in func.walk():
        what = peer_access(op)
        if func.num_ctas > 1 and (what is not None or op.NAME in ("cluster_cta_rank", "cluster_size",
                                                                  "cluster_barrier")):
            raise CompilationError("TLXC-TLX-008", f"{what or 'tlx.' + op.NAME} in a kernel launched with "
                                   f"num_ctas={func.num_ctas}: there a cluster runs one program, so TLX's cluster "
                                   "operations have no peers to name", op.loc,
                                   f"launch with ctas_per_cga=({func.num_ctas}, 1, 1) instead of num_ctas (the grid "
                                   "then counts CTAs)")
        if what is not None and size <= 1 and op.NAME not in ("remote_store", "async_remote_store",
                                                             "async_remote_copy"):
            raise CompilationError("TLXC-TLX-008", f"{what} reaches another CTA of the cluster, but this kernel is "
                                   "launched without clusters (Unexpected buffer remote view in 1cta mode)", op.loc,
                                   "launch with ctas_per_cga=(2, 1, 1) (or larger), or guard the cluster path with a "
                                   "tl.constexpr flag")
        if isinstance(op, ops.TmaLoadOp) and any(r >= size for r in op.attrs["multicast"]):
            raise CompilationError("TLXC-TLX-008", f"multicast target {max(op.attrs['multicast'])} is outside the "
                                   f"cluster of {size} CTAs", op.loc)


def run(module: Operation, options: PassOptions) -> Operation:
    info = options.target
    for func in module.funcs:  # type: ignore[attr-defined]
        target_ops.check_nvidia(func, info.name)
        check_clusters(func)
        for op in func.walk():
            if isinstance(op, ops.LocalAllocOp) and op.result.type.storage == "tmem":
                if not info.has.tensor_memory:
                    raise CompilationError("TLXC-TLX-005", f"tensor memory needs sm_100a (Blackwell); {info.name} "
                                           "has none", op.loc, "allocate the buffer in shared memory (storage=smem)")
                raise CompilationError("TLXC-TLX-005", "tensor-memory buffers (storage=tmem) are not supported by "
                                       "the code generator yet", op.loc, "run the kernel in the interpreter for now")
    return module
