"""Settings of the IR passes.

Passes read their settings from a ``PassOptions`` and never from the environment: the
CLI and the kernel decorator build one from their flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PassOptions:
    """What the canonicalization passes may do.

    max_iterations -- how many rounds a fixed-point group of passes (``CANONICALIZE``)
                      runs at most before the pipeline moves on;
    fold_floats    -- fold floating-point arithmetic (exactly, in the value's own type);
                      off leaves every float op to the target;
    dce_region_ops -- let DCE remove unused ``if``/``for`` ops with side-effect-free
                      bodies and drop their unused results and loop-carried values.
    """

    max_iterations: int = 8
    # hardware facts for layout assignment (a tlxc.ir.layout.LayoutTarget), set by the code generator
    target: Any = None
    # the code generator's choice of accumulator layout for a dot: (op, num_warps) -> layout or None
    dot_layout: Any = None
    # and the layout a dot's operand ``i`` is read in by the matrix instruction: (op, i,
    # num_warps) -> layout or None; a ``local_load`` that only feeds that operand reads the
    # buffer straight into it (AMD: no second trip through LDS)
    dot_operand_layout: Any = None
    # the same for TLX's async_dot (wgmma): (op, num_warps) -> accumulator layout or None, and
    # the layout a register A operand needs
    async_dot_layout: Any = None
    async_dot_a_layout: Any = None
    # buffer layouts (``buffer_layouts``): the layout of a rank >= 2 shared-memory allocation
    # the user did not pin, (shape, element bits) -> LinearLayout (None: NVIDIA's NVMMA
    # swizzle, which TMA and wgmma read); and whether ``async_load`` destinations must stay
    # row-major (direct-to-LDS copies write lane i's vector right after lane i - 1's)
    buffer_layout: Any = None
    plain_async_copy_buffers: bool = False
    # AMD explicit MFMA scheduling (``layouts``): (amd_scheduled_mfma op, num_warps) ->
    # (accumulator, A, B) layouts
    scheduled_mfma_layouts: Any = None
    fold_floats: bool = True
    dce_region_ops: bool = True

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {self.max_iterations}")


DEFAULT_OPTIONS = PassOptions()
