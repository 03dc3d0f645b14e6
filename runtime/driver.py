"""A thin layer over the CUDA driver API of cuda-python (``cuda.bindings.driver``).

Nothing here runs at import: the bindings are imported, ``cuInit`` is called and a
context chosen at the first call that needs the GPU (``device()``). Without cuda-python,
without the driver (libcuda) or without a device, that call raises ``NoGPUError``; so
``import tlxc.runtime`` always works, and a launch says clearly why it cannot run.

Context: if a context is current in the calling thread when the runtime starts (PyTorch
makes the device's primary context current once it has initialized CUDA), that one is
used; otherwise the primary context of device 0 is retained and made current. Threads
that launch later get it made current on demand (``make_current``).

Launching is the one hot path: ``launch_code`` returns the Python statements that issue
the launch, for the launcher to compile into its per-kernel function.
"""

from __future__ import annotations

import functools
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable

from .errors import CudaError, LaunchError, NoGPUError
from .native_launch import native_launcher
from .native_launch import trusted_launcher as native_trusted

CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_NOT_FOUND = 500
DEFAULT_SHARED_LIMIT = 48 * 1024  # dynamic shared memory a block may use without opting in

_drv: Any = None
_device: "Device | None" = None
_no_gpu: NoGPUError | None = None
_init_lock = threading.Lock()

NO_GPU_HELP = "run on the CPU with kernel.interpret[grid](...) or TLXC_INTERPRET=1"


def bindings() -> Any:
    """The ``cuda.bindings.driver`` module (``cuda.cuda`` of cuda-python < 12.6)."""
    global _drv
    if _drv is None:
        try:
            from cuda.bindings import driver
        except ImportError:
            try:
                from cuda import cuda as driver  # type: ignore[no-redef]  # cuda-python < 12.6
            except ImportError:
                raise NoGPUError("cannot use the GPU: the CUDA driver bindings (cuda-python) are not installed; "
                                 "install them with pip install 'tlxc[cuda]' (or pip install cuda-python); "
                                 + NO_GPU_HELP) from None
        _drv = driver
    return _drv


def error_name(code: int) -> tuple[str, str]:
    """(``CUDA_ERROR_...`` name, the driver's description) of a ``CUresult``."""
    name, desc = f"CUresult {code}", ""
    drv = _drv
    if drv is None:
        return name, desc
    try:
        name = drv.CUresult(code).name
    except (ValueError, TypeError):
        pass
    try:
        err, text = drv.cuGetErrorString(drv.CUresult(code))
        if not int(err) and text:
            desc = text.decode() if isinstance(text, bytes) else str(text)
    except Exception:  # the driver itself may be missing; the name is enough then
        pass
    return name, desc


def cuda_error(call: str, code: int, detail: str = "") -> CudaError:
    name, desc = error_name(int(code))
    return CudaError(call, int(code), name, desc, detail)


def call(name: str, *args: Any, detail: str = "") -> Any:
    """Call ``name`` of the bindings; raise ``CudaError`` naming it if it fails; return
    its value (None, one value, or a tuple of several)."""
    out = getattr(bindings(), name)(*args)
    err = out[0]
    if int(err):
        raise cuda_error(name, int(err), detail)
    if len(out) == 1:
        return None
    return out[1] if len(out) == 2 else tuple(out[1:])


# -- device and context -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Device:
    """The GPU that the runtime launches on, and the context it uses."""

    ordinal: int
    handle: Any  # CUdevice
    context: Any  # CUcontext
    name: str
    capability: tuple[int, int]
    multiprocessors: int
    max_shared_per_block: int  # with opt-in (what cuFuncSetAttribute may raise a kernel's limit to)
    device_count: int = 1  # GPUs visible to the process

    @property
    def arch(self) -> str:
        """``sm_90a`` style name of the device (the ``a`` variant for 9.0 and 10.x)."""
        major, minor = self.capability
        return f"sm_{major}{minor}" + ("a" if major in (9, 10) else "")


def device() -> Device:
    """The runtime's device, starting the driver at the first call (``NoGPUError`` if
    there is no usable GPU)."""
    d = _device
    return d if d is not None else _start()


def _attr(name: str, dev: Any) -> int:
    drv = bindings()
    return int(call("cuDeviceGetAttribute", getattr(drv.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name), dev))


def _start() -> Device:
    global _device, _no_gpu
    with _init_lock:
        if _device is not None:
            return _device
        if _no_gpu is not None:
            raise NoGPUError(str(_no_gpu))
        try:
            drv = bindings()
            try:
                out = drv.cuInit(0)
            except RuntimeError as e:  # cuda-bindings raises this when libcuda cannot be opened
                raise NoGPUError(f"cannot use the GPU: no NVIDIA driver was found ({e}); launching a kernel needs "
                                 "an NVIDIA GPU and its driver; " + NO_GPU_HELP) from None
            if int(out[0]):
                name, desc = error_name(int(out[0]))
                what = "no NVIDIA GPU is visible" if int(out[0]) == CUDA_ERROR_NO_DEVICE else "the driver did not start"
                raise NoGPUError(f"cannot use the GPU: {what} (cuInit returned {name}"
                                 + (f": {desc}" if desc else "") + "); " + NO_GPU_HELP)
            count = int(call("cuDeviceGetCount"))
            if count == 0:
                raise NoGPUError("cannot use the GPU: the driver sees no device; " + NO_GPU_HELP)
        except NoGPUError as e:
            _no_gpu = e
            raise
        ctx = call("cuCtxGetCurrent")
        if ctx is not None and int(ctx):
            dev = call("cuCtxGetDevice")  # someone (PyTorch) made a context current: share it
        else:
            dev = call("cuDeviceGet", 0)
            ctx = call("cuDevicePrimaryCtxRetain", dev)
            call("cuCtxSetCurrent", ctx)
        raw = call("cuDeviceGetName", 256, dev)
        name = raw.split(b"\0", 1)[0].decode(errors="replace") if isinstance(raw, bytes) else str(raw)
        _device = Device(int(dev), dev, ctx, name,
                         (_attr("COMPUTE_CAPABILITY_MAJOR", dev), _attr("COMPUTE_CAPABILITY_MINOR", dev)),
                         _attr("MULTIPROCESSOR_COUNT", dev), _attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", dev), count)
        return _device


def gpu_available() -> bool:
    """Whether a GPU can be used (starts the driver; never raises)."""
    try:
        device()
        return True
    except (NoGPUError, CudaError):
        return False


def no_gpu_reason() -> str | None:
    """Why no GPU can be used, or None if one can."""
    try:
        device()
        return None
    except (NoGPUError, CudaError) as e:
        return str(e)


def make_current() -> Device:
    """Make the runtime's context current in the calling thread (a new thread has none)."""
    d = device()
    cur = call("cuCtxGetCurrent")
    if cur is None or int(cur) != int(d.context):
        call("cuCtxSetCurrent", d.context)
    return d


def synchronize() -> None:
    """Wait for all work on the runtime's device (and report errors of earlier launches)."""
    make_current()
    call("cuCtxSynchronize")


# -- modules and functions --------------------------------------------------------------------------

def is_cubin(image: bytes | bytearray | memoryview) -> bool:
    """An ELF object (cubin) or a fatbinary, as opposed to PTX text."""
    head = bytes(image[:4])
    return head == b"\x7fELF" or head == b"\x50\xed\x55\xba"


def load_module(image: bytes | bytearray | str) -> Any:
    """Load a cubin (bytes) or PTX (str, or bytes of PTX text, JIT-compiled by the driver)
    into the runtime's context; returns the ``CUmodule``."""
    make_current()
    if isinstance(image, str):
        data, ptx = image.encode() + b"\0", True
    else:
        data = bytes(image)
        ptx = not is_cubin(data)
        if ptx and not data.endswith(b"\0"):
            data += b"\0"
    out = bindings().cuModuleLoadData(data)
    if int(out[0]):
        detail = ""
        if ptx:
            detail = ("the driver could not JIT-compile the PTX; run ptxas on it for the compiler's message "
                      "(tlxc.runtime.assemble(ptx) does), and check that the driver is as new as the PTX .version")
        raise cuda_error("cuModuleLoadData", int(out[0]), detail)
    return out[1]


def unload_module(module: Any) -> None:
    call("cuModuleUnload", module)


def get_function(module: Any, name: str) -> Any:
    out = bindings().cuModuleGetFunction(module, name.encode())
    if int(out[0]):
        detail = f"the module has no kernel named '{name}'" if int(out[0]) == CUDA_ERROR_NOT_FOUND else ""
        raise cuda_error("cuModuleGetFunction", int(out[0]), detail)
    return out[1]


def function_attribute(func: Any, name: str) -> int:
    """``CU_FUNC_ATTRIBUTE_<name>`` of a function (``NUM_REGS``, ``SHARED_SIZE_BYTES``...)."""
    drv = bindings()
    return int(call("cuFuncGetAttribute", getattr(drv.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name), func))


def set_dynamic_shared(func: Any, nbytes: int, kernel: str) -> None:
    """Allow ``func`` ``nbytes`` of dynamic shared memory: above 48 KiB a kernel must opt in
    with ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``, and it then prefers shared
    memory to L1 (``CU_FUNC_CACHE_PREFER_SHARED``)."""
    d = device()
    static = function_attribute(func, "SHARED_SIZE_BYTES")
    if static + nbytes > d.max_shared_per_block:
        raise LaunchError(f"kernel '{kernel}' needs {nbytes} bytes of dynamic shared memory"
                          + (f" besides {static} static" if static else "")
                          + f", more than the {d.max_shared_per_block} bytes a block can have on {d.name}; "
                          "use smaller tiles or fewer pipeline stages")
    if nbytes > DEFAULT_SHARED_LIMIT:
        drv = bindings()
        call("cuFuncSetAttribute", func, drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
             nbytes)
        # the largest shared-memory carveout of the SM's L1, as Triton asks for such kernels
        # (the driver's default split gave a 147 KiB matmul a 168 KiB carveout; with this
        # it gets 228 KiB, as Triton's; no speed change was measured on the H200)
        call("cuFuncSetCacheConfig", func, drv.CUfunc_cache.CU_FUNC_CACHE_PREFER_SHARED)


# -- memory -----------------------------------------------------------------------------------------

def mem_alloc(nbytes: int) -> int:
    make_current()
    return int(call("cuMemAlloc", max(int(nbytes), 1), detail=f"allocating {nbytes} bytes"))


def mem_free(ptr: int) -> None:
    make_current()
    call("cuMemFree", ptr)


def memcpy_htod(dst: int, src_host: int, nbytes: int) -> None:
    make_current()
    call("cuMemcpyHtoD", dst, src_host, nbytes)


def memcpy_dtoh(dst_host: int, src: int, nbytes: int) -> None:
    make_current()
    call("cuMemcpyDtoH", dst_host, src, nbytes)


def memset_d8(dst: int, value: int, nbytes: int) -> None:
    make_current()
    call("cuMemsetD8", dst, value, nbytes)


# -- streams ----------------------------------------------------------------------------------------

def stream_create(non_blocking: bool = True) -> int:
    """A new stream (its handle as an int); destroy it with ``stream_destroy``."""
    make_current()
    drv = bindings()
    flags = drv.CUstream_flags.CU_STREAM_NON_BLOCKING if non_blocking else drv.CUstream_flags.CU_STREAM_DEFAULT
    return int(call("cuStreamCreate", flags))


def stream_destroy(stream: int) -> None:
    call("cuStreamDestroy", bindings().CUstream(stream))


def stream_synchronize(stream: int) -> None:
    call("cuStreamSynchronize", bindings().CUstream(stream))


_torch_stream: Any = None


def default_stream() -> int:
    """The stream of a launch given no stream: PyTorch's current stream when PyTorch has
    initialized CUDA (as Triton does), else the legacy default stream (0)."""
    global _torch_stream
    f = _torch_stream
    if f is not None:
        return f()
    torch = sys.modules.get("torch")
    if torch is None:
        return 0
    try:
        if not torch.cuda.is_initialized():
            return 0
        raw, dev = torch._C._cuda_getCurrentRawStream, torch._C._cuda_getDevice
        single = torch.cuda.device_count() == 1
    except AttributeError:
        return 0

    def f() -> int:
        return raw(dev())

    # with one GPU the current device is 0: asking for it costs as much as the stream
    _torch_stream = functools.partial(raw, 0) if single else f
    return _torch_stream()


def stream_resolver() -> Callable[[], int]:
    """The cheapest function that gives ``default_stream()``'s answer from now on: where
    PyTorch has initialized CUDA (which stays so), its current-stream function itself,
    with no Python frame; else ``default_stream``, which looks again at each call."""
    default_stream()  # makes _torch_stream where it can
    return _torch_stream or default_stream


def stream_handle(stream: Any) -> int:
    """The handle of a stream given as an int, a ``CUstream``, a ``torch.cuda.Stream``, a
    CuPy or numba stream, or anything with ``__cuda_stream__``; None is ``default_stream()``."""
    if stream is None:
        return default_stream()
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        return int(proto()[1] if callable(proto) else proto[1])
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    try:
        return int(stream)  # CUstream of cuda-python, numba streams
    except (TypeError, ValueError):
        raise LaunchError(f"cannot use a {type(stream).__name__} as a CUDA stream; pass an int handle, a "
                          "torch.cuda.Stream, a CuPy or numba stream, or an object with __cuda_stream__") from None


# -- events (timing) --------------------------------------------------------------------------------

def event_create() -> Any:
    """A CUDA event that records time (``CUevent``); destroy it with ``event_destroy``."""
    make_current()
    return call("cuEventCreate", bindings().CUevent_flags.CU_EVENT_DEFAULT)


def event_record(event: Any, stream: int = 0) -> None:
    call("cuEventRecord", event, bindings().CUstream(stream))


def event_elapsed_ms(start: Any, end: Any) -> float:
    """Milliseconds between two recorded events (waits for ``end``)."""
    call("cuEventSynchronize", end)
    return float(call("cuEventElapsedTime", start, end))


def event_destroy(event: Any) -> None:
    call("cuEventDestroy", event)


# -- launching --------------------------------------------------------------------------------------

CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


def stream_object(handle: int) -> Any:
    """What the launch call takes for stream ``handle``: the handle itself for the native
    launcher (``native_launch.py``); for cuda-python's, None for the legacy default stream
    (the bindings' fastest case), else a ``CUstream``."""
    if native_launcher() is not None:
        return handle
    return None if handle == 0 else bindings().CUstream(handle)


def trusted_launch(func: Any, block: tuple[int, int, int], shared: int, plan: Any,
                   **guarded: Any) -> Callable[..., Any] | None:
    """A native ``launch_trusted`` for a plain launch of ``func`` with argument plan
    ``plan`` (``native_launch.trusted_launcher``: grid, stream, conversion, packing and
    ``cuLaunchKernel`` in one builtin, 0.5 µs less per launch than the Python one on the
    H200's host), or None where it cannot be made: the launcher then generates one.
    ``guarded``: ``alive``, and for a guarded launch ``guards``, ``extras``, ``result``."""
    kinds = [p.kind if p.kind in ("ptr", "tensordesc") else p.dtype for p in plan.params]
    return native_trusted(int(func), block, shared, kinds, list(plan.offsets[: len(kinds)]), plan.size,
                          stream_resolver(), **guarded)


def launch_code(func: Any, block: tuple[int, int, int], shared: int, cluster: tuple[int, int, int] | None,
                cooperative: bool, ns: dict[str, Any]) -> tuple[list[str], Callable[[], Any] | None]:
    """(statements, config maker). The statements launch ``func`` on grid ``(gx, gy, gz)``,
    stream ``st`` (from ``stream_object``) and kernel parameters ``kp`` (the address of the
    pointer array, 0 for none), and set ``r`` to the ``CUresult`` (0 on success); the names
    they use are put in ``ns``.

    Plain launches use ``cuLaunchKernel`` and need no config (the maker is None).
    Clusters and cooperative launches use ``cuLaunchKernelEx`` with a ``CUlaunchConfig``
    made once by the maker, whose grid and stream the statements set from local ``cfg``:
    the launcher keeps one config per argument buffer, so threads never share one.
    Plain launches call the native ``cuLaunchKernel`` builtin of ``native_launch.py``
    where it could be made (3 µs less per launch on the H200's host than cuda-python's
    wrapper), else cuda-python's. (libcuda called through ctypes was measured 2.5 µs
    slower per launch than through cuda-python's Cython wrappers, so there is no ctypes
    path.)"""
    drv = bindings()
    bx, by, bz = block
    ns["_f"] = func
    if cluster is None and not cooperative:
        native = native_launcher()
        if native is not None:
            ns["_cu_launch"], ns["_f"] = native, int(func)
            return [f"r = _cu_launch(_f, gx, gy, gz, {bx}, {by}, {bz}, {shared}, st, kp)"], None
        ns["_cu_launch"] = drv.cuLaunchKernel
        return [f"r = _cu_launch(_f, gx, gy, gz, {bx}, {by}, {bz}, {shared}, st, kp, 0)[0]"], None

    def make_config() -> Any:
        attrs = []
        if cluster is not None:
            a = drv.CUlaunchAttribute()
            a.id = drv.CUlaunchAttributeID(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cluster
            attrs.append(a)
        if cooperative:
            a = drv.CUlaunchAttribute()
            a.id = drv.CUlaunchAttributeID(CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            a.value.cooperative = 1
            attrs.append(a)
        cfg = drv.CUlaunchConfig()
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ, cfg.sharedMemBytes = bx, by, bz, shared
        cfg.attrs = attrs
        cfg.numAttrs = len(attrs)
        ns.setdefault("_keep_attrs", []).append(attrs)  # whether or not the config copies them
        return cfg

    ns["_cu_launch_ex"] = drv.cuLaunchKernelEx
    return ["cfg.gridDimX = gx", "cfg.gridDimY = gy", "cfg.gridDimZ = gz", "cfg.hStream = st",
            "r = _cu_launch_ex(cfg, _f, kp, 0)[0]"], make_config


def __getattr__(name: str) -> Any:
    """``driver.active`` (runtime/active.py), made at first use: Triton programs reach the
    current target and device properties as ``triton.runtime.driver.active``."""
    if name == "active":
        from .active import ACTIVE

        return ACTIVE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
