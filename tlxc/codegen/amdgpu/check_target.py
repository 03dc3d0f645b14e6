"""The ``check-target`` pass of the AMDGPU pipeline: operations, dots, copies and launch
shapes the chip does not have are refused at the user's line before any other pass
touches the kernel.

Expects: the tile IR, with the tensor descriptors made in the kernel already rewritten
as pointer accesses (``descriptor-pointers``).
Guarantees: what remains is something this chip can run.
Refuses (``TLXC-TLX-006`` unless said): NVIDIA-only operations (TMA, wgmma, mbarrier
transactions) and tensor memory; AMD operations the chip lacks (``target_ops.check_amd``);
dots on a dtype the chip's matrix cores lack (``lower_dot.check``); ``async_load`` on a
chip without direct-to-LDS copies; more work-items than a work-group may have
(``TLXC-LAUNCH-003``).
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir.core import Operation
from ...ir.passes.options import PassOptions
from .. import target_ops
from . import lower_buffers, lower_dot
from .target_info import AmdTargetInfo


def run(module: Operation, options: PassOptions) -> Operation:
    info = options.target
    assert isinstance(info, AmdTargetInfo)
    chip = info.chip
    for func in module.funcs:  # type: ignore[attr-defined]
        target_ops.check_amd(func, chip.arch)
        lower_dot.check(func, chip)
        lower_buffers.check_async_copies(func, chip)
        num_warps = func.num_warps
        threads = num_warps * info.warp_size
        if threads > info.max_threads:
            raise CompilationError("TLXC-LAUNCH-003", f"num_warps={num_warps} makes {threads} work-items of "
                                   f"{info.warp_size}-lane waves; {chip.arch} allows {info.max_threads} per "
                                   "work-group", func.loc, f"use num_warps <= {info.max_threads // info.warp_size}")
    return module
