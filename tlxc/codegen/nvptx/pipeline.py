"""The pass pipeline of the NVIDIA targets (sm_90a, sm_100a), top to bottom.

Each entry is ``(name, run)``, ``run(module, options) -> module``; the names are what
``--print-before``/``--print-after``/``--time-passes`` take. The first stage,
``TILE_PIPELINE``, is shared by every target: it makes the tile IR that ``asm["ir"]``
shows and the interpreter runs. The passes after it lower that IR for this target;
``options.target`` is this target's ``TargetInfo`` (``target_info.py``). The emitter
(``compile.emit``) then writes PTX from the IR the last pass leaves.
"""

from __future__ import annotations

from ...ir.passes import (
    buffer_layouts,
    dce,
    decompose_scaled_dot,
    dot_to_wgmma,
    layouts,
    membar,
    smem_alloc,
    software_pipeline,
    split_f32_dot,
    tma_staging,
)
from ...ir.passes.pipeline import TILE_PIPELINE, Entry
from . import check_target

PIPELINE: list[Entry] = [
    *TILE_PIPELINE,                           # fold, CSE, DCE to a fixed point
    ("check-target", check_target.run),       # AMD ops and tensor memory refused at the user's line
    ("decompose-scaled-dot", decompose_scaled_dot.run),  # tl.dot_scaled -> decode, scale, bf16 dot
    ("software-pipeline", software_pipeline.run),  # loads feeding tl.dot in loops: cp.async num_stages ahead
    ("tma-staging", tma_staging.run),         # descriptor load/store -> TMA through a staging buffer
    ("split-f32-dot", split_f32_dot.run),     # fp32 dots at bf16x3 / bf16x6 -> bf16 dots on split operands
    ("dot-to-wgmma", dot_to_wgmma.run),       # tl.dot -> async_dot (wgmma) where the target has it
    ("buffer-layouts", buffer_layouts.run),   # NVMMA swizzles for shared-memory buffers
    ("layouts", layouts.run),                 # a distributed layout for every tile, conversions
    ("dce", dce.run),                         # what layout assignment computed again elsewhere
    ("smem-alloc", smem_alloc.run),           # offsets of buffers and barriers, written into the IR
    ("membar", membar.run),                   # hazard barriers and async-proxy fences
]
