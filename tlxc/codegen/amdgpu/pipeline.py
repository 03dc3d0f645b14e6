"""The pass pipeline of the AMDGPU targets (gfx942, gfx950, gfx1250), top to bottom.

Each entry is ``(name, run)``, ``run(module, options) -> module``; the names are what
``--print-before``/``--print-after``/``--time-passes`` take. The first stage,
``TILE_PIPELINE``, is shared by every target: it makes the tile IR that ``asm["ir"]``
shows and the interpreter runs. The passes after it lower that IR for this chip;
``options.target`` is its ``TargetInfo`` (``target_info.py``). The emitter
(``compile.emit``) then builds LLVM IR from the IR the last pass leaves.
"""

from __future__ import annotations

from ...ir.passes import (
                          buffer_layouts,
                          dce,
                          descriptor_pointers,
                          host_descriptors,
                          layouts,
                          membar,
                          smem_alloc,
                          software_pipeline,
)
from ...ir.passes.pipeline import TILE_PIPELINE, Entry
from . import check_target

PIPELINE: list[Entry] = [
    *TILE_PIPELINE,                                     # fold, CSE, DCE to a fixed point
    ("host-descriptors", host_descriptors.run),         # TensorDescriptor arguments -> descriptors made at entry
    ("descriptor-pointers", descriptor_pointers.run),   # descriptors made in the kernel -> masked pointer accesses
    ("check-target", check_target.run),                 # what this chip lacks, refused at the user's line
    ("software-pipeline", software_pipeline.run),       # tl.dot loops: next loads into registers, LDS double buffer
    ("buffer-layouts", buffer_layouts.run),             # LDS layouts (XOR-swizzled chunks)
    ("layouts", layouts.run),                           # a distributed layout for every tile (MFMA/WMMA for dots)
    ("dce", dce.run),                                   # what layout assignment computed again elsewhere
    ("smem-alloc", smem_alloc.run),                     # LDS offsets of buffers, written into the IR
    ("membar", membar.run),                             # hazard barriers
]
