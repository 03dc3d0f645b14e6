"""tlxc.runtime: load and launch compiled kernels on NVIDIA GPUs with cuda-python.

Usable without the compiler, for kernels compiled ahead of time::

    from tlxc.runtime import DeviceArray, LoadedKernel

    k = LoadedKernel.from_file("vadd.json")  # or LoadedKernel(cubin, "vadd", ["*fp32:16"] * 3 + ["i32"])
    x = DeviceArray.from_numpy(np.ones(1000, np.float32))
    k((4,), (x, x, out, 1000))                       # torch tensors, CuPy/numba arrays work too

Importing never touches the GPU; the first launch starts the driver and raises
``NoGPUError`` if there is no usable GPU. See runtime/README.md.
"""

from __future__ import annotations

from .args import ArgPlan, Param, parse_param
from .cache import CacheEntry, KernelCache, default_cache_dir
from .driver import Device, device, gpu_available, no_gpu_reason, synchronize
from .errors import CudaError, LaunchError, NoGPUError, PtxasError, TlxcRuntimeError
from .launcher import LoadedKernel
from .memory import DeviceArray
from .ptxas import assemble, find_ptxas
from .scratch import get_allocator, set_allocator

__all__ = [
    "ArgPlan", "CacheEntry", "CudaError", "Device", "DeviceArray", "KernelCache", "LaunchError", "LoadedKernel",
    "NoGPUError", "Param", "PtxasError", "TlxcRuntimeError", "assemble", "default_cache_dir", "device",
    "find_ptxas", "get_allocator", "gpu_available", "no_gpu_reason", "parse_param", "set_allocator", "synchronize",
]
