"""Hardware facts of the NVIDIA targets, as data.

Sources: PTX ISA 8.x/9.0, "PTX ISA version" and "Target ISA notes" tables
(https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes), the CUDA C
Programming Guide's "Compute Capabilities" table for the per-SM limits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NvidiaTarget:
    arch: str                 # "sm_90a"
    ptx_version: tuple[int, int]
    compute_capability: int   # 90
    max_shared_bytes: int     # per CTA, opt-in maximum (cudaFuncAttributeMaxDynamicSharedMemorySize)
    static_shared_bytes: int  # what a kernel gets without opting in
    max_registers_per_thread: int
    max_threads_per_cta: int
    warp_size: int = 32
    shared_banks: int = 32
    bank_bytes: int = 4
    max_vector_bytes: int = 16  # ld.global.v4.b32 / v2.b64

    @property
    def ptx_version_text(self) -> str:
        return f"{self.ptx_version[0]}.{self.ptx_version[1]}"


TARGETS: dict[str, NvidiaTarget] = {
    # Hopper: PTX 8.0 introduced sm_90a; 8.4 for mma.sync on fp8 (e4m3/e5m2) operands.
    "sm_90a": NvidiaTarget("sm_90a", (8, 4), 90, 227 * 1024, 48 * 1024, 255, 1024),
    # Blackwell datacenter: sm_100a needs PTX 8.6.
    "sm_100a": NvidiaTarget("sm_100a", (8, 6), 100, 227 * 1024, 48 * 1024, 255, 1024),
}
