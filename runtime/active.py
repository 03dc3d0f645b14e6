"""``tlxc.runtime.driver.active``: the object that Triton programs reach as
``triton.runtime.driver.active`` -- the current target, PyTorch's device, and the
device's properties -- so that TLX and Triton files run after renaming ``triton`` to
``tlxc``. Only what those files call is here.

It answers from the GPU that launches run on (``backend.gpu_arch``'s rule: the NVIDIA GPU
where cuda-python finds one, else the AMD GPU). Importing it touches no GPU; asking a
GPU fact without one raises ``NoGPUError`` saying why -- except under ``TLXC_INTERPRET=1``
(the interpreter runs every launch): there a machine without a GPU is described as a
stand-in sm_90a device with an H200's numbers on the CPU (``torch.device("cpu")``), so
that scripts written for a GPU, Triton's tutorials among them, run in the interpreter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from . import driver, hip
from .errors import NoGPUError, TlxcRuntimeError


@dataclass(frozen=True)
class GPUTarget:
    """Triton's ``GPUTarget``: ``backend`` ``"cuda"`` or ``"hip"``, ``arch`` the compute
    capability as an int (90) or the AMD processor (``"gfx942"``), ``warp_size``."""

    backend: str
    arch: int | str
    warp_size: int

    def is_cuda_backend(self) -> bool:
        return self.backend == "cuda"

    @property
    def tlxc_arch(self) -> str:
        """The tlxc target name: ``sm_90a`` for 90, the processor for AMD."""
        if self.backend == "hip":
            return str(self.arch)
        return f"sm_{self.arch}" + ("a" if int(self.arch) // 10 in (9, 10) else "")


def _device() -> Any:
    """The device launches run on: ``driver.Device`` or ``hip.HipDevice`` (or, interpreting
    without a GPU, the stand-in ``_CPU``)."""
    try:
        return driver.device()
    except NoGPUError as cuda:
        try:
            return hip.device()
        except NoGPUError as amd:
            if os.environ.get("TLXC_INTERPRET", "0") not in ("", "0"):
                return _CPU
            raise NoGPUError(f"{cuda}\nno AMD GPU either: {amd}") from None


class _InterpreterDevice:
    """What ``driver.active`` describes when the interpreter runs every launch on a machine
    without a GPU: an sm_90a device with an H200's numbers, whose tensors live on the CPU."""

    ordinal = 0
    name = "interpreter (stand-in sm_90a)"
    capability = (9, 0)
    multiprocessors = 132
    max_shared_per_block = 232448
    properties = {"max_shared_mem": 232448, "max_num_regs": 65536, "multiprocessor_count": 132, "warpSize": 32,
                  "sm_clock_rate": 1980000, "mem_clock_rate": 3201000, "mem_bus_width": 6144}


_CPU = _InterpreterDevice()


class _Utils:
    def get_device_properties(self, device: Any = None) -> dict[str, int]:
        """The properties Triton's tutorials read: ``max_shared_mem`` (bytes a block may
        opt in to), ``multiprocessor_count``, ``max_num_regs`` (per block), ``warpSize``,
        ``sm_clock_rate`` and ``mem_clock_rate`` (kHz), ``mem_bus_width`` (bits). tlxc
        drives one GPU, so ``device`` must be it (its ordinal, or None)."""
        dev = _device()
        index = getattr(device, "index", device)
        if index is not None and int(index) != dev.ordinal:
            raise TlxcRuntimeError(f"tlxc launches on GPU {dev.ordinal} ({dev.name}); it cannot describe GPU "
                                   f"{index}")
        if dev is _CPU:
            return dict(_CPU.properties)
        if isinstance(dev, driver.Device):
            def attr(name: str) -> int:
                return driver._attr(name, dev.handle)

            return {"max_shared_mem": dev.max_shared_per_block, "max_num_regs": attr("MAX_REGISTERS_PER_BLOCK"),
                    "multiprocessor_count": dev.multiprocessors, "warpSize": attr("WARP_SIZE"),
                    "sm_clock_rate": attr("CLOCK_RATE"), "mem_clock_rate": attr("MEMORY_CLOCK_RATE"),
                    "mem_bus_width": attr("GLOBAL_MEMORY_BUS_WIDTH")}
        return {"max_shared_mem": dev.max_shared_per_block, "multiprocessor_count": dev.multiprocessors,
                "warpSize": dev.wave_size}


class ActiveDriver:
    """``driver.active``: see the module docstring."""

    utils = _Utils()

    def __repr__(self) -> str:
        return "<tlxc active driver>"

    def get_current_target(self) -> GPUTarget:
        dev = _device()
        if isinstance(dev, (driver.Device, _InterpreterDevice)):
            major, minor = dev.capability
            return GPUTarget("cuda", major * 10 + minor, 32)
        return GPUTarget("hip", dev.arch, dev.wave_size)

    def get_current_device(self) -> int:
        return _device().ordinal

    def get_device_interface(self) -> Any:
        """``torch.cuda`` (PyTorch's interface to the GPU, ROCm's too)."""
        return _torch().cuda

    def get_active_torch_device(self) -> Any:
        """PyTorch's device of the GPU launches run on (``torch.device("cuda", i)``; the CPU
        for the interpreter's stand-in)."""
        dev = _device()
        if dev is _CPU:
            return _torch().device("cpu")
        return _torch().device("cuda", dev.ordinal)

    def get_current_stream(self, device: Any = None) -> int:
        """The handle of the stream a launch uses by default (PyTorch's current one)."""
        dev = _device()
        if dev is _CPU:
            return 0
        return driver.default_stream() if isinstance(dev, driver.Device) else hip.default_stream()

    @staticmethod
    def is_active() -> bool:
        return driver.gpu_available() or hip.gpu_available()


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise TlxcRuntimeError("driver.active: this asks for PyTorch's device, and PyTorch is not installed") from None
    return torch


ACTIVE = ActiveDriver()
