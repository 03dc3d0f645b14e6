"""Which GPU runtime a launch goes through: CUDA (runtime/driver.py, cuda-python) for
kernels compiled for ``sm_*``, HIP (runtime/hip.py, hip-python) for ``gfx*``.

A JIT launch (``kernel[grid](...)``) compiles for the GPU of this machine: ``gpu_arch``
asks the CUDA driver first, so that a machine with an NVIDIA GPU behaves as it always
has, and asks HIP only when no NVIDIA GPU can be used. Neither is imported before that
first launch.
"""

from __future__ import annotations

from typing import Any

from . import driver, hip
from .errors import NoGPUError


def gpu_arch() -> str:
    """The architecture of the GPU that launches run on: ``sm_90a`` style for an NVIDIA
    GPU, ``gfx942`` style (``gcnArchName`` without its target features) for an AMD GPU
    when there is no usable NVIDIA one. ``NoGPUError`` saying why neither can be used."""
    try:
        return driver.device().arch
    except NoGPUError as cuda:
        try:
            return hip.device().arch
        except NoGPUError as amd:
            raise NoGPUError(f"{cuda}\nno AMD GPU either: {amd}") from None


def kernel_class(arch: str) -> Any:
    """The runtime kernel class of code compiled for ``arch``: ``LoadedKernel`` for
    ``sm_*``, ``AmdLoadedKernel`` for ``gfx*``."""
    from .launcher import AmdLoadedKernel, LoadedKernel

    if arch.startswith("gfx"):
        return AmdLoadedKernel
    if arch.startswith("sm_"):
        return LoadedKernel
    raise ValueError(f"unknown GPU architecture {arch!r}: NVIDIA ones are sm_*, AMD ones gfx*")
