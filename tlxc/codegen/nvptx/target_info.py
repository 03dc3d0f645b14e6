"""The ``TargetInfo`` of the NVIDIA targets: what the shared passes ask of sm_90a and
sm_100a, from the ISA table (``isa.py``), the capability table below and the lowering
rules (``emitter.RULES``: importing this module loads every lowering module, so the
rule table is whole)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.target import Capabilities, TargetInfo
from . import (  # noqa: F401  (importing a lowering module registers its rules)
    lower_arith,
    lower_atomics,
    lower_buffers,
    lower_cluster,
    lower_control,
    lower_convert,
    lower_dot,
    lower_indexing,
    lower_inline_asm,
    lower_memory,
    lower_print,
    lower_reduce,
    lower_reduce_combine,
    lower_scan,
    lower_shape,
    lower_sync,
    lower_tasks,
    lower_tensormap,
    lower_tma,
    lower_warp,
    lower_wgmma,
)
from .emitter import RULES
from .isa import TARGETS, NvidiaTarget

# What each target has. Sources: PTX ISA "Target ISA notes" -- wgmma.mma_async needs
# sm_90a (it is not in sm_100a's feature set: Blackwell's MMA is tcgen05), tcgen05.* and
# tensor memory need sm_100a; cp.async.bulk.tensor, mbarrier transactions, clusters,
# named barriers and vector atomics (atom.global.add.noftz.v8.f16: sm_90, PTX 8.1) exist on both.
CAPABILITIES: dict[str, Capabilities] = {
    "sm_90a": Capabilities(tma=True, wgmma=True, clusters=True, mbarriers=True, named_barriers=True,
                           vector_atomics=True),
    "sm_100a": Capabilities(tma=True, tcgen05=True, tensor_memory=True, clusters=True, mbarriers=True,
                            named_barriers=True, vector_atomics=True),
}


@dataclass(frozen=True)
class NvidiaTargetInfo(TargetInfo):
    isa: NvidiaTarget | None = None

    def dot_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        return lower_dot.dot_layout(op, num_warps)

    def async_dot_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        return lower_wgmma.async_dot_layout(op, num_warps)

    def async_dot_a_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        return lower_wgmma.async_dot_a_layout(op, num_warps)

    def wgmma_instr_k(self, element: str) -> int | None:
        return lower_wgmma.wgmma_instr_k(element) if self.has.wgmma else None


@lru_cache(maxsize=None)
def target_info(arch: str) -> NvidiaTargetInfo:
    t = TARGETS[arch]
    return NvidiaTargetInfo(name=arch, family="NVIDIA", warp_size=t.warp_size, shared_banks=t.shared_banks,
                            bank_bytes=t.bank_bytes, max_vector_bytes=t.max_vector_bytes,
                            max_shared_bytes=t.max_shared_bytes, max_threads=t.max_threads_per_cta,
                            has=CAPABILITIES[arch], lowered=frozenset(RULES), isa=t)
