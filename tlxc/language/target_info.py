"""``tl.target_info`` (Triton's ``triton.language.target_info``): compile-time questions
about the target, for kernels that choose code by GPU (inline PTX that needs sm_90, an AMD
path)::

    from tlxc.language.target_info import cuda_capability_geq

    @tlxc.jit
    def k(x):
        if cuda_capability_geq(9, 0):
            ...

Inside a kernel the answers are about the target the kernel is being compiled for (its
``arch``; the interpreter compiles for sm_90a). Triton answers from the GPU of the active
driver, which is the same target when a kernel is compiled for the GPU it runs on; tlxc's
answer is also right when it compiles for another (``kernel.compile(..., arch="gfx950")``).
On the host they answer for the GPU launches run on (``tlxc.runtime.driver.active``).
"""

from __future__ import annotations

from typing import Any

from .constexpr_function import constexpr_function

__all__ = ["current_target", "is_cuda", "cuda_capability_geq", "is_hip", "is_hip_cdna2", "is_hip_cdna3",
           "is_hip_cdna4", "is_hip_rdna3"]


def current_target() -> Any:
    """The target as Triton's ``GPUTarget`` (``backend``, ``arch``: 90 or ``"gfx942"``,
    ``warp_size``)."""
    from ..frontend.semantics.tlx_tasks import KERNEL
    from ..runtime.active import GPUTarget

    facts = KERNEL.get()
    if facts is None:  # on the host
        from ..runtime import driver

        return driver.active.get_current_target()
    from ..codegen.targets import backend

    arch = facts.arch
    warp = backend(arch).info.warp_size
    if arch.startswith("gfx"):
        return GPUTarget("hip", arch, warp)
    return GPUTarget("cuda", int(arch[3:].rstrip("a")), warp)


@constexpr_function
def is_cuda() -> bool:
    return current_target().backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the target is an NVIDIA GPU of compute capability at least ``major.minor``."""
    t = current_target()
    return t.backend == "cuda" and int(t.arch) >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    return current_target().backend == "hip"


def _gfx(*names: str) -> bool:
    t = current_target()
    return t.backend == "hip" and str(t.arch) in names


@constexpr_function
def is_hip_cdna2() -> bool:
    return _gfx("gfx90a")


@constexpr_function
def is_hip_cdna3() -> bool:
    return _gfx("gfx940", "gfx941", "gfx942")


@constexpr_function
def is_hip_cdna4() -> bool:
    return _gfx("gfx950")


@constexpr_function
def is_hip_rdna3() -> bool:
    return _gfx("gfx1100", "gfx1101", "gfx1102")
