"""What an op does to memory and to synchronization, declared on its class.

Passes that reason about buffers and barriers -- hazard barriers (``membar``),
shared-memory liveness (``smem_alloc``), the emitters' scheduling -- read these
declarations instead of keeping lists of op classes of their own, so that a new op is one
class (with its effects) plus its lowering rules.

An op class declares:

* ``MEMORY``: a tuple of ``Memory`` effects on its buffer operands, by operand name.
  Only operands that are buffers (``memdesc``) count: ``async_dot`` reads ``a`` from shared
  memory only when ``a`` is a buffer, not when it is a register tile.
* ``SYNC``: a tuple of ``Sync`` effects -- an arrive on an mbarrier, bytes it expects, a
  wait, a barrier of the threads of the CTA (or of a subset), a fence.
* ``RETIRES``: the names of the asynchronous ops whose work this op waits for
  (``async_wait_group`` retires ``async_load``), and ``RETIRES_ALL_AT_ZERO``: whether it
  retires all of that work when its ``pendings`` attribute is 0.

Ops whose effects depend on their operands or attributes override the methods
``memory_effects()`` and ``sync_effects()`` of ``tlxc.ir.core.Operation`` (which return
the class declarations); ``barrier_arrive`` on a warp barrier, for instance, is no CTA
barrier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Access = Literal["read", "write"]
MemorySpace = Literal["smem", "tmem"]
Proxy = Literal["generic", "async", "cp_async"]
SyncKind = Literal["arrive", "expect_bytes", "wait", "cta_barrier", "named_barrier", "fence"]


@dataclass(frozen=True)
class Memory:
    """The op reads or writes the buffer in operand ``operand`` (its name in OPERANDS).

    space -- shared memory or tensor memory;
    proxy -- "generic" for ordinary loads and stores by the threads, "async" for the
             asynchronous proxy (TMA, wgmma): mixing the two on the same bytes needs a
             proxy fence; "cp_async" for the threads' asynchronous copies (``cp.async``),
             done at the issuing thread's wait and then ordered by a CTA barrier like a
             generic write, which the async proxy (wgmma) reads without a proxy fence --
             as every cp.async + wgmma pipeline (CUTLASS's ``MainloopSm90CpAsyncGmma``,
             Triton's) does; a fence there would be a ``MEMBAR.ALL.CTA`` per iteration,
             which also waits for the copies still in flight;
    ordered_by_barrier -- whether the access is done when the issuing threads move on, so
             a CTA barrier orders it for the others; False for an asynchronous write that
             completes through an mbarrier (a TMA load), which a CTA barrier does not order.
    """

    access: Access
    operand: str
    space: MemorySpace = "smem"
    proxy: Proxy = "generic"
    ordered_by_barrier: bool = True


@dataclass(frozen=True)
class Sync:
    """A synchronization the op performs when it is lowered.

    kind    -- "arrive" on an mbarrier or a named barrier, "expect_bytes" (a transaction
               count), "wait" (for an mbarrier phase or for outstanding async work),
               "cta_barrier" (every thread of the CTA meets: the lowering has a
               ``bar.sync 0`` / ``s_barrier``), "named_barrier" (the ``threads`` threads
               that take part meet), "fence" (orders memory);
    scope   -- what it orders with: "cta", "cluster", "gpu", "sys", or for a fence
               "async_shared" (the generic and async proxies on shared memory);
    threads -- for "named_barrier" and a named-barrier "arrive", how many threads take part.
    """

    kind: SyncKind
    scope: str = "cta"
    threads: int | None = None


def read(operand: str, proxy: Proxy = "generic", space: MemorySpace = "smem") -> Memory:
    return Memory("read", operand, space, proxy)


def write(operand: str, proxy: Proxy = "generic", space: MemorySpace = "smem") -> Memory:
    # an asynchronous-proxy write lands later, through its mbarrier
    return Memory("write", operand, space, proxy, ordered_by_barrier=proxy != "async")


CTA_BARRIER = Sync("cta_barrier")
