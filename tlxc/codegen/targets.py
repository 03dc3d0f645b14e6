"""The code generators by target name: each target's pass pipeline, its ``TargetInfo``
and its emitter. The compile driver asks here; nothing else names the back ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..ir.passes.pipeline import TILE_PIPELINE, Entry
from ..ir.target import TargetInfo

NVIDIA_TARGETS = ("sm_90a", "sm_100a")
AMDGPU_TARGETS = ("gfx942", "gfx950", "gfx1250")
TARGETS = NVIDIA_TARGETS + AMDGPU_TARGETS


@dataclass(frozen=True)
class Backend:
    """One target: ``pipeline`` (the whole pass list, starting with ``TILE_PIPELINE``),
    ``info`` (what its passes ask), and ``emit(module, info, timings, **options)``, which
    turns what the last pass leaves into the target's code."""

    family: str  # "NVIDIA" | "AMDGPU"
    pipeline: list[Entry]
    info: TargetInfo
    emit: Callable[..., Any]

    @property
    def lowering(self) -> list[Entry]:
        """The passes after the shared tile stage."""
        assert self.pipeline[:len(TILE_PIPELINE)] == TILE_PIPELINE
        return self.pipeline[len(TILE_PIPELINE):]


def backend(arch: str) -> Backend:
    """The back end of ``arch`` (imported on first use: a compile for one family never
    loads the other)."""
    if arch in NVIDIA_TARGETS:
        from .nvptx import compile as nvptx
        from .nvptx.pipeline import PIPELINE as NV
        from .nvptx.target_info import target_info as nv_info

        return Backend("NVIDIA", NV, nv_info(arch), nvptx.emit)
    if arch in AMDGPU_TARGETS:
        from .amdgpu import compile as amdgpu
        from .amdgpu.pipeline import PIPELINE as AMD
        from .amdgpu.target_info import target_info as amd_info

        return Backend("AMDGPU", AMD, amd_info(arch), amdgpu.emit)
    raise KeyError(f"unknown target {arch!r}; targets are {', '.join(TARGETS)}")
