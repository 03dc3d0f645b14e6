"""The ``TargetInfo`` of the AMDGPU targets: what the shared passes ask of gfx942, gfx950
and gfx1250, from the ISA table (``isa.py``) and the lowering rules (``emitter.RULES``:
importing this module loads every lowering module, so the rule table is whole)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.target import Capabilities, TargetInfo
from . import (  # noqa: F401  (importing a lowering module registers its rules)
    lower_amd_tlx,
    lower_arith,
    lower_atomics,
    lower_buffers,
    lower_cast,
    lower_control,
    lower_convert,
    lower_dot,
    lower_dot_scaled,
    lower_indexing,
    lower_math,
    lower_memory,
    lower_print,
    lower_reduce,
    lower_reduce_combine,
    lower_scan,
    lower_shape,
    lower_sync,
)
from .emitter import RULES
from .isa import TARGETS, AmdTarget

# LDS accesses are at most 16 bytes per lane (ds_read_b128 / ds_write_b128), as global ones
MAX_VECTOR_BYTES = 16


@dataclass(frozen=True)
class AmdTargetInfo(TargetInfo):
    isa: AmdTarget | None = None

    @property
    def chip(self) -> AmdTarget:
        assert self.isa is not None
        return self.isa

    def dot_layout(self, op: Operation, num_warps: int) -> LinearLayout | None:
        return lower_dot.dot_layout(op, self.chip, num_warps)

    def dot_operand_layout(self, op: Operation, index: int, num_warps: int) -> LinearLayout | None:
        return lower_dot.dot_operand_layout(op, self.chip, index, num_warps)

    def buffer_layout(self, shape: tuple[int, ...], bits: int) -> LinearLayout | None:
        return lower_buffers.lds_buffer_layout(self.chip, shape, bits)

    def scheduled_mfma_layouts(self, op: Operation, num_warps: int) -> Any:
        return lower_amd_tlx.scheduled_plan(op, self.chip.arch, num_warps).layouts


@lru_cache(maxsize=None)
def target_info(arch: str) -> AmdTargetInfo:
    t = TARGETS[arch]
    has = Capabilities(mfma=t.has_mfma, wmma=t.has_wmma, scaled_mma=t.has_scaled_mma)
    return AmdTargetInfo(name=arch, family="AMDGPU", warp_size=t.wave_size, shared_banks=t.lds_banks,
                         bank_bytes=t.lds_bank_bytes, max_vector_bytes=MAX_VECTOR_BYTES,
                         max_shared_bytes=t.lds_bytes, max_threads=t.max_threads_per_block, has=has,
                         plain_async_copy_buffers=True, pipelined_loads="registers", lowered=frozenset(RULES),
                         isa=t)
