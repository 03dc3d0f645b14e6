"""A thin layer over the HIP runtime of hip-python (``from hip import hip``): the AMD
counterpart of runtime/driver.py, with the same functions (``device``, ``load_module``,
``get_function``, ``launch_code``...), so that the launcher drives either.

Nothing here runs at import, and ``hip`` is imported at the first call that needs the
GPU (``device()``): ``import tlxc`` and ``import tlxc.runtime`` never import hip-python.
Without hip-python, without the ROCm runtime (libamdhip64) or without an AMD GPU, that
call raises ``NoGPUError`` naming what is missing and how to install it.

Device: the HIP runtime's current device of the thread that starts the runtime (device 0
unless the program chose another, as PyTorch on ROCm does); its architecture is the base
of ``gcnArchName`` (``"gfx942:sramecc+:xnack-"`` -> ``"gfx942"``).

Launching: ``hipModuleLaunchKernel`` with the arguments in the ``extra`` form, one
kernarg buffer::

    extra = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
             HIP_LAUNCH_PARAM_END}                        # (void*) 1, 2 and 3 in ROCm

The buffer is exactly the explicit part of the kernel's kernarg segment: each argument
at its natural alignment (its size: 8 for pointers, i64 and f64, 4 for i32 and f32, 2
for f16 and bf16, 1 for i8 and bools) in declaration order, as the AMDGPU ABI lays out
explicit kernel arguments (LLVM AMDGPUUsage, "Kernel Argument Layout"; the code object's
``.args`` give each one's ``.offset`` and ``.size``). That is the layout the argument
plan (runtime/args.py) already packs, so one ``struct.pack_into`` fills it; the launcher
checks it against the ``.args`` of the compiled kernel where it has them
(``kernarg_layout`` / ``check_kernarg_layout``). The HIP runtime reads each explicit
argument at its ``.offset`` from the buffer and writes the hidden arguments (if the code
object has any) itself. The ``extra`` form was chosen over ``kernelParams`` (an array of
pointers, one per argument, as for CUDA) because its buffer is the ABI's layout, which
the tests check byte for byte against the code object; both cost one pointer at launch.
hip-python takes the address of the 5-pointer array as an int, so a launch converts no
Python objects beyond the grid.

LDS: a tlxc kernel's LDS is static (in the code object's ``group_segment_fixed_size``),
so launches pass 0 bytes of dynamic LDS.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .driver import NO_GPU_HELP, default_stream, stream_handle  # noqa: F401 - the launcher's stream helpers
from .errors import HipError, LaunchError, NoGPUError

HIP_LAUNCH_PARAM_BUFFER_POINTER = 1
HIP_LAUNCH_PARAM_BUFFER_SIZE = 2
HIP_LAUNCH_PARAM_END = 3

hipErrorInvalidValue = 1
hipErrorInvalidImage = 200
hipErrorInvalidContext = 201
hipErrorNoBinaryForGpu = 209
hipErrorNoDevice = 100
hipErrorInvalidDevice = 101
hipErrorNotFound = 500

_hip: Any = None
_device: "HipDevice | None" = None
_no_gpu: NoGPUError | None = None
_init_lock = threading.Lock()


# -- the bindings -----------------------------------------------------------------------------------

def rocm_version() -> str | None:
    """``major.minor`` of the ROCm installation (``$ROCM_PATH`` or /opt/rocm), if one is found."""
    for root in (os.environ.get("ROCM_PATH"), os.environ.get("HIP_PATH"), "/opt/rocm"):
        if not root:
            continue
        try:
            text = (Path(root) / ".info" / "version").read_text()
        except OSError:
            continue
        m = re.match(r"\s*(\d+)\.(\d+)", text)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


def install_hint() -> str:
    """How to install hip-python for this machine's ROCm."""
    v = rocm_version()
    if v is not None:
        return (f"install the bindings that match ROCm {v} (found here) with pip install 'hip-python~={v}.0' "
                "(pip install 'tlxc[amd]' installs the latest)")
    return ("install the bindings that match your ROCm version with pip install 'hip-python~=X.Y.0' for ROCm X.Y "
            "(pip install 'tlxc[amd]' installs the latest)")


def bindings() -> Any:
    """hip-python's ``hip.hip`` module; ``NoGPUError`` if it cannot be imported."""
    global _hip
    if _hip is None:
        try:
            from hip import hip as mod
        except ImportError as e:
            missing = getattr(e, "name", None) in ("hip", "hip.hip", None) and "hip" in str(e)
            if missing:
                raise NoGPUError("cannot use an AMD GPU: the HIP bindings (hip-python) are not installed; "
                                 + install_hint() + "; " + NO_GPU_HELP) from None
            raise NoGPUError(f"cannot use an AMD GPU: hip-python is installed but does not import ({e}); it must "
                             "match the ROCm runtime: " + install_hint() + "; " + NO_GPU_HELP) from None
        except Exception as e:  # hip-python raises when libamdhip64 cannot be opened
            raise NoGPUError(f"cannot use an AMD GPU: the ROCm runtime (libamdhip64.so) could not be loaded "
                             f"({type(e).__name__}: {e}); install ROCm, or put its lib/ on LD_LIBRARY_PATH; "
                             + NO_GPU_HELP) from None
        _hip = mod
    return _hip


def error_name(code: int) -> tuple[str, str]:
    """(``hipError...`` name, the runtime's description) of a ``hipError_t``."""
    name, desc = f"hipError_t {code}", ""
    hip = _hip
    if hip is None:
        return name, desc
    try:
        name = hip.hipError_t(code).name
    except (ValueError, TypeError, AttributeError):
        pass
    try:
        out = hip.hipGetErrorString(hip.hipError_t(code))
        text = out[-1] if isinstance(out, tuple) else out
        if text:
            desc = text.decode() if isinstance(text, bytes) else str(text)
    except Exception:  # only the name then
        pass
    return name, desc


def hip_error(call: str, code: int, detail: str = "") -> HipError:
    name, desc = error_name(int(code))
    return HipError(call, int(code), name, desc, detail)


def call(name: str, *args: Any, detail: str = "") -> Any:
    """Call ``name`` of the bindings; raise ``HipError`` naming it if it fails; return its
    value (None, one value, or a tuple of several)."""
    out = getattr(bindings(), name)(*args)
    if not isinstance(out, tuple):
        out = (out,)
    err = out[0]
    if int(err):
        raise hip_error(name, int(err), detail)
    if len(out) == 1:
        return None
    return out[1] if len(out) == 2 else tuple(out[1:])


# -- the device -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HipDevice:
    """The AMD GPU that the runtime launches on."""

    ordinal: int
    name: str
    gcn_arch_name: str  # "gfx942:sramecc+:xnack-": the processor and its target features
    multiprocessors: int
    max_shared_per_block: int  # LDS bytes a work-group may use
    wave_size: int
    device_count: int = 1

    @property
    def arch(self) -> str:
        """The processor, ``gfx942`` (the target features after ':' dropped)."""
        return self.gcn_arch_name.split(":", 1)[0].strip()


def device() -> HipDevice:
    """The runtime's AMD device, starting HIP at the first call (``NoGPUError`` without one)."""
    d = _device
    return d if d is not None else _start()


def _text(v: Any) -> str:
    if isinstance(v, (bytes, bytearray)):
        v = bytes(v).split(b"\0", 1)[0].decode(errors="replace")
    return str(v).split("\0", 1)[0]


def _start() -> HipDevice:
    global _device, _no_gpu
    with _init_lock:
        if _device is not None:
            return _device
        if _no_gpu is not None:
            raise NoGPUError(str(_no_gpu))
        try:
            hip = bindings()
            try:
                out = hip.hipInit(0)
            except Exception as e:  # the bindings open libamdhip64 at the first call
                raise NoGPUError(f"cannot use an AMD GPU: the ROCm runtime (libamdhip64.so) could not be loaded "
                                 f"({type(e).__name__}: {e}); install ROCm, or put its lib/ on LD_LIBRARY_PATH; "
                                 + NO_GPU_HELP) from None
            err = out[0] if isinstance(out, tuple) else out
            if int(err):
                name, desc = error_name(int(err))
                what = "no AMD GPU is visible" if int(err) == hipErrorNoDevice else "the ROCm runtime did not start"
                raise NoGPUError(f"cannot use an AMD GPU: {what} (hipInit returned {name}"
                                 + (f": {desc}" if desc else "") + "); " + NO_GPU_HELP)
            try:
                count = int(call("hipGetDeviceCount"))
            except HipError as e:
                raise NoGPUError(f"cannot use an AMD GPU: {e}; " + NO_GPU_HELP) from None
            if count == 0:
                raise NoGPUError("cannot use an AMD GPU: the ROCm runtime sees no device; " + NO_GPU_HELP)
        except NoGPUError as e:
            _no_gpu = e
            raise
        ordinal = int(call("hipGetDevice"))
        props = hip.hipDeviceProp_t()
        call("hipGetDeviceProperties", props, ordinal)
        _device = HipDevice(ordinal, _text(props.name), _text(props.gcnArchName), int(props.multiProcessorCount),
                            int(props.sharedMemPerBlock), int(props.warpSize), count)
        return _device


def gpu_available() -> bool:
    """Whether an AMD GPU can be used (starts HIP; never raises)."""
    return no_gpu_reason() is None


def no_gpu_reason() -> str | None:
    """Why no AMD GPU can be used, or None if one can."""
    try:
        device()
        return None
    except (NoGPUError, HipError) as e:
        return str(e)


def make_current() -> HipDevice:
    """Make the runtime's device current in the calling thread (HIP's current device is per thread)."""
    d = device()
    if int(call("hipGetDevice")) != d.ordinal:
        call("hipSetDevice", d.ordinal)
    return d


def synchronize() -> None:
    make_current()
    call("hipDeviceSynchronize")


# -- modules and functions --------------------------------------------------------------------------

def is_code_object(image: bytes | bytearray | memoryview) -> bool:
    """An ELF file (an AMDGPU code object) or a clang offload bundle."""
    head = bytes(image[:24])
    return head[:4] == b"\x7fELF" or head.startswith(b"__CLANG_OFFLOAD_BUNDLE__")


def load_module(image: bytes | bytearray) -> Any:
    """Load an AMDGPU code object (hsaco) on the runtime's device; returns the ``hipModule_t``."""
    d = make_current()
    data = bytes(image)
    out = bindings().hipModuleLoadData(data)
    err = out[0] if isinstance(out, tuple) else out
    if int(err):
        detail = ""
        if int(err) in (hipErrorNoBinaryForGpu, hipErrorInvalidImage):
            detail = (f"the code object is not for this GPU ({d.name}, {d.gcn_arch_name}); compile the kernel for "
                      f"arch='{d.arch}'")
        elif not is_code_object(data):
            detail = "the image is not an AMDGPU code object (an ELF file linked by ld.lld: asm['hsaco'])"
        raise hip_error("hipModuleLoadData", int(err), detail)
    return out[1]


def unload_module(module: Any) -> None:
    call("hipModuleUnload", module)


def get_function(module: Any, name: str) -> Any:
    out = bindings().hipModuleGetFunction(module, name.encode())
    if int(out[0]):
        detail = f"the code object has no kernel named '{name}'" if int(out[0]) == hipErrorNotFound else ""
        raise hip_error("hipModuleGetFunction", int(out[0]), detail)
    return out[1]


def function_attribute(func: Any, name: str) -> int:
    """``HIP_FUNC_ATTRIBUTE_<name>`` of a function (``NUM_REGS``, ``SHARED_SIZE_BYTES``...)."""
    hip = bindings()
    return int(call("hipFuncGetAttribute", getattr(hip.hipFunction_attribute, "HIP_FUNC_ATTRIBUTE_" + name), func))


# -- streams ----------------------------------------------------------------------------------------

def stream_object(handle: int) -> Any:
    """What the launch call takes for stream ``handle``: None for the null stream, else the
    address (hip-python turns an int into a ``hipStream_t``)."""
    return None if handle == 0 else handle


# -- device memory (the device_print buffer: runtime/device_print.py) ------------------------------

def malloc(nbytes: int) -> int:
    """The address of ``nbytes`` of new device memory (``hipMalloc``)."""
    make_current()
    return int(call("hipMalloc", nbytes, detail=f"allocating {nbytes} bytes"))


def free(address: int) -> None:
    call("hipFree", address)


def copy_to_device(address: int, data: bytes) -> None:
    """Write ``data`` at device ``address`` (``hipMemcpyHtoD``, synchronous)."""
    src = ctypes.create_string_buffer(data, len(data))
    call("hipMemcpyHtoD", address, src, len(data))


def copy_from_device(address: int, nbytes: int) -> bytes:
    """``nbytes`` read from device ``address`` (``hipMemcpyDtoH``, synchronous)."""
    dst = ctypes.create_string_buffer(nbytes)
    call("hipMemcpyDtoH", dst, address, nbytes)
    return dst.raw


def stream_synchronize(stream: Any) -> None:
    """Wait for the work queued on ``stream`` (a launch's ``st``: None is the null stream)."""
    call("hipStreamSynchronize", stream)


# -- the kernarg buffer and launching ---------------------------------------------------------------

class KernargSlot:
    """One launch's kernarg buffer (an argument plan's buffer) and the ``extra`` array that
    points at it; kept alive by the kernel that launches with it."""

    __slots__ = ("buffer", "size", "extra")

    def __init__(self, buffer: Any, size: int) -> None:
        self.buffer = buffer
        self.size = ctypes.c_size_t(size)
        self.extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buffer),
                                           HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                           HIP_LAUNCH_PARAM_END)

    @property
    def address(self) -> int:
        """The ``extra`` argument of ``hipModuleLaunchKernel``."""
        return ctypes.addressof(self.extra)


def new_slot(plan: Any, keep: list[Any]) -> tuple[Any, int]:
    """(buffer, ``extra`` address) for one launch of a kernel with argument plan ``plan``;
    (None, 0) when it takes no arguments. ``keep`` keeps what the address points to alive."""
    buf, _ = plan.new_slot()
    if buf is None:
        return None, 0
    slot = KernargSlot(buf, plan.size)
    keep.append(slot)
    return buf, slot.address


def launch_code(func: Any, block: tuple[int, int, int], shared: int, cluster: tuple[int, int, int] | None,
                cooperative: bool, ns: dict[str, Any]) -> tuple[list[str], Callable[[], Any] | None]:
    """As ``driver.launch_code``: the statements launch ``func`` on grid ``(gx, gy, gz)``,
    stream ``st`` (from ``stream_object``), with ``kp`` the address of the ``extra`` array
    (0 for none), and set ``r`` to the ``hipError_t`` (0 on success)."""
    if cluster is not None:
        raise LaunchError(f"thread-block clusters ({cluster}) are an NVIDIA feature; AMD GPUs launch without them")
    if cooperative:
        raise LaunchError("cooperative launches are not supported on AMD GPUs by tlxc yet")
    bx, by, bz = block
    ns["_f"] = func
    ns["_hip_launch"] = bindings().hipModuleLaunchKernel
    return [f"r = _hip_launch(_f, gx, gy, gz, {bx}, {by}, {bz}, {shared}, st, None, kp)[0]"], None


# -- the kernel's argument layout in its code object --------------------------------------------------

@dataclass(frozen=True)
class KernargLayout:
    """The kernarg segment of one kernel, from its code object metadata (``.args``)."""

    offsets: tuple[int, ...]  # of the explicit arguments, in order
    sizes: tuple[int, ...]
    kinds: tuple[str, ...]  # .value_kind: by_value, global_buffer...
    segment_size: int  # .kernarg_segment_size (hidden arguments included)
    segment_align: int

    def to_json(self) -> dict[str, Any]:
        return {"offsets": list(self.offsets), "sizes": list(self.sizes), "kinds": list(self.kinds),
                "segment_size": self.segment_size, "segment_align": self.segment_align}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "KernargLayout":
        return cls(tuple(int(x) for x in d["offsets"]), tuple(int(x) for x in d["sizes"]),
                   tuple(str(x) for x in d.get("kinds", ())), int(d.get("segment_size", 0)),
                   int(d.get("segment_align", 8)))


_KEY = re.compile(r"^([ \t]*)(-[ \t]+)?(\.\w+):[ \t]*(.*?)[ \t]*$")


def _scalar(text: str) -> str:
    """A YAML scalar of the metadata note: ``!str '.1'`` -> ``.1``."""
    text = text.removeprefix("!str").strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def kernarg_layout(amdgcn: str, kernel: str) -> KernargLayout:
    """The explicit kernel arguments of ``kernel`` as the ``.amdgpu_metadata`` note of its
    assembly (``compiled.asm["amdgcn"]``) lays them out: ``.args`` entries with ``.offset``
    and ``.size``. ``ValueError`` if the assembly has no metadata for that kernel. Hidden
    arguments (``.value_kind: hidden_*``), which the HIP runtime fills, are left out.

    The note is YAML of a fixed shape (LLVM's AMDGPU code object V5 metadata): a list of
    kernels whose keys sit one column in; ``.args`` is a list nested deeper. Reading it by
    the column of each key needs no YAML library."""
    start = amdgcn.find(".amdgpu_metadata")
    end = amdgcn.find(".end_amdgpu_metadata", start)
    if start < 0 or end < 0:
        raise ValueError("the assembly has no .amdgpu_metadata note")
    kernels: list[dict[str, Any]] = []
    arg: dict[str, str] | None = None
    kernel_col = -1
    for line in amdgcn[start:end].splitlines():
        m = _KEY.match(line)
        if m is None:
            continue
        col = len(m.group(1)) + len(m.group(2) or "")
        item, key, value = m.group(2) is not None, m.group(3)[1:], _scalar(m.group(4))
        if item and (kernel_col < 0 or col == kernel_col):  # a kernel
            kernel_col = col
            kernels.append({"args": []})
            arg = None
        elif item and col > kernel_col and kernels:  # an entry of the kernel's .args
            arg = {}
            kernels[-1]["args"].append(arg)
        elif col == kernel_col:
            arg = None
        elif col < kernel_col or not kernels:
            continue
        if value:  # an empty value opens a nested list (.args)
            (arg if arg is not None else kernels[-1])[key] = value
    for k in kernels:
        if k.get("name") == kernel:
            args = [a for a in k["args"] if not a.get("value_kind", "").startswith("hidden")]
            return KernargLayout(tuple(int(a["offset"]) for a in args), tuple(int(a["size"]) for a in args),
                                 tuple(a.get("value_kind", "") for a in args),
                                 int(k.get("kernarg_segment_size", 0)), int(k.get("kernarg_segment_align", 8)))
    names = [k.get("name") for k in kernels]
    raise ValueError(f"the code object metadata has no kernel '{kernel}' (kernels: {names})")


def check_kernarg_layout(plan: Any, layout: KernargLayout, kernel: str) -> None:
    """``ValueError`` unless argument plan ``plan`` packs every explicit argument at the
    offset and with the size that the code object says (the kernel would read garbage)."""
    sizes = tuple(p.size for p in plan.params)
    offsets = tuple(plan.offsets[: len(plan.params)])
    if plan.global_scratch:
        raise ValueError(f"kernel '{kernel}': AMD kernels take no hidden global scratch pointer")
    if plan.print_buffer:  # an explicit parameter of the code object, after the user's
        sizes, offsets = sizes + (8,), tuple(plan.offsets)
    if offsets != layout.offsets or sizes != layout.sizes:
        rows = "\n".join(f"  {p.name} ({p}): packed at {o} ({s} bytes), code object {lo} ({ls} bytes)"
                         for p, o, s, lo, ls in zip(plan.params, offsets, sizes, layout.offsets, layout.sizes))
        raise ValueError(f"kernel '{kernel}': the argument plan ({len(sizes)} arguments) does not match the "
                         f"kernarg layout of the code object ({len(layout.sizes)} arguments):\n{rows}\n"
                         "the signature given to the runtime must be the one the kernel was compiled for")
