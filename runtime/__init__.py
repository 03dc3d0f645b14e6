"""tlxc.runtime: load and launch compiled kernels on NVIDIA GPUs with cuda-python, and on
AMD GPUs with hip-python (``AmdLoadedKernel``, runtime/hip.py).

Usable without the compiler, for kernels compiled ahead of time::

    from tlxc.runtime import DeviceArray, LoadedKernel

    k = LoadedKernel.from_file("vadd.json")  # or LoadedKernel(cubin, "vadd", ["*fp32:16"] * 3 + ["i32"])
    x = DeviceArray.from_numpy(np.ones(1000, np.float32))
    k((4,), (x, x, out, 1000))                       # torch tensors, CuPy/numba arrays work too

Importing never touches the GPU (nor imports cuda-python or hip-python); the first launch
starts the driver and raises ``NoGPUError`` if there is no usable GPU. See runtime/README.md.
"""

from __future__ import annotations

from .args import ArgPlan, Param, parse_param
from .backend import gpu_arch, kernel_class
from .cache import CacheEntry, KernelCache, default_cache_dir
from .driver import Device, device, gpu_available, no_gpu_reason, synchronize
from .errors import CudaError, HipError, LaunchError, NoGPUError, PtxasError, TlxcRuntimeError
from .hip import HipDevice, KernargLayout, kernarg_layout
from .launcher import AmdLoadedKernel, LoadedKernel
from .memory import DeviceArray
from .ptxas import assemble, find_ptxas
from .scratch import get_allocator, set_allocator
from .spec import LaunchSpec

__all__ = [
    "AmdLoadedKernel", "ArgPlan", "CacheEntry", "CudaError", "Device", "DeviceArray", "HipDevice", "HipError",
    "KernargLayout", "KernelCache", "LaunchError", "LaunchSpec", "LoadedKernel", "NoGPUError", "Param", "PtxasError",
    "TlxcRuntimeError", "assemble", "default_cache_dir", "device", "find_ptxas", "get_allocator", "gpu_arch",
    "gpu_available", "kernarg_layout", "kernel_class", "no_gpu_reason", "parse_param", "set_allocator", "synchronize",
]
