"""Shared test fixtures: ``load_kernels`` writes kernel source to a real file (so that
error messages can show its lines) and imports it as a module."""

from __future__ import annotations

import atexit
import ctypes
import enum
import importlib.util
import itertools
import operator
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import settings

# CI machines are small and shared: time limits per example only make tests flaky.
settings.register_profile("tlxc", deadline=None)
settings.load_profile("tlxc")

_counter = itertools.count()

# Launches store their variants in the on-disk cache (tlxc/kernels/disk.py): tests keep
# theirs in a folder of their own, never in the user's ~/.cache/tlxc.
os.environ["TLXC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tlxc-test-cache-")
atexit.register(shutil.rmtree, os.environ["TLXC_CACHE_DIR"], True)


@pytest.fixture
def load_kernels(tmp_path: Path) -> Callable[[str], Any]:
    def load(source: str) -> Any:
        name = f"_tlxc_test_mod_{next(_counter)}"
        path = tmp_path / f"{name}.py"
        header = "import numpy as np\nimport tlxc\nimport tlxc.language as tl\n"
        path.write_text(header + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        module.__path_str__ = str(path)
        return module

    return load


# -- a fake CUDA driver: launches run on the CPU and are recorded -------------------------------


class FakeDriver:
    """Records launches instead of making them: ``launches`` holds (grid, stream, packed bytes)."""

    def __init__(self) -> None:
        self.launches: list[tuple[tuple[int, int, int], int, bytes]] = []
        self.results: list[int] = []  # CUresults to return, first to last (then 0)
        self.contexts_made_current = 0


@pytest.fixture
def fake_driver(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    from tlxc.runtime import driver

    fake = FakeDriver()
    dev = driver.Device(0, 0, 0, "Fake GPU", (9, 0), 132, 232448)
    monkeypatch.setattr(driver, "device", lambda: dev)
    monkeypatch.setattr(driver, "load_module", lambda binary: "module")
    monkeypatch.setattr(driver, "get_function", lambda module, name: 0x1234)
    monkeypatch.setattr(driver, "set_dynamic_shared", lambda func, n, name: None)
    monkeypatch.setattr(driver, "function_attribute", lambda func, name: 255)
    monkeypatch.setattr(driver, "stream_object", lambda handle: handle)

    def make_current() -> Any:
        fake.contexts_made_current += 1
        return dev

    monkeypatch.setattr(driver, "make_current", make_current)

    def record(gx: int, gy: int, gz: int, st: int, kp: int, size: int) -> int:
        for g in (gx, gy, gz):  # as cuda-python converts to unsigned int
            if not 0 <= operator.index(g) < 2**32:
                raise OverflowError("can't convert negative value to unsigned int")
        if not (gx and gy and gz):
            return driver.CUDA_ERROR_INVALID_VALUE  # as the driver does: nothing launched
        data = b""
        if kp:
            first = ctypes.c_void_p.from_address(kp).value  # the pointer to the first slot
            data = ctypes.string_at(first, size)
        fake.launches.append(((gx, gy, gz), st, data))
        return fake.results.pop(0) if fake.results else 0

    def launch_code(func: Any, block: Any, shared: int, cluster: Any, cooperative: bool,
                    ns: dict[str, Any]) -> tuple[list[str], Any]:
        size = ns["_pack_into"].__self__.size  # the plan's struct.Struct: its size is the buffer's
        ns["_record"] = lambda gx, gy, gz, st, kp: record(gx, gy, gz, st, kp, size)
        if cluster is None and not cooperative:
            return ["r = _record(gx, gy, gz, st, kp)"], None
        # a config per buffer, as for cuLaunchKernelEx: record the grid the config was given
        return ["cfg[:] = [gx, gy, gz]", "r = _record(*cfg, st, kp)"], lambda: [0, 0, 0]

    monkeypatch.setattr(driver, "launch_code", launch_code)

    def native_trusted(func: int, block: Any, shared: int, kinds: list[str], offsets: list[int], size: int,
                       default_stream: Any, **guarded: Any) -> Any:
        """The real native ``launch_trusted``, over a stand-in for ``cuLaunchKernel`` that records."""
        from tlxc.runtime import native_launch

        if not native_launch.trusted_kinds(kinds):
            return None

        def stand_in(f: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, sh: int, st: Any, kp: Any,
                     extra: Any) -> int:
            return record(gx, gy, gz, st or 0, kp or 0, size)

        cb = CU_LAUNCH_KERNEL(stand_in)
        return native_launch.make_trusted_launcher(ctypes.cast(cb, ctypes.c_void_p).value, func, block, shared,
                                                   kinds, offsets, size, default_stream, keep=cb, **guarded)

    monkeypatch.setattr(driver, "native_trusted", native_trusted)
    return fake


# cuLaunchKernel's C signature, for stand-ins
CU_LAUNCH_KERNEL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p)


# -- a fake hip-python: AMD launches run on the CPU and are recorded -----------------------------


class FakeHip:
    """hip-python's ``hip.hip`` module as runtime/hip.py uses it. Records the code objects
    loaded (``loaded``), the functions looked up (``functions``) and each launch
    (``launches``: dicts of function, grid, block, shared, stream and the kernarg bytes read
    through the ``extra`` array as the HIP runtime reads them). ``results`` are hipError_t
    values for the next launches (then 0); ``init_result`` is what hipInit returns."""

    class hipError_t(enum.IntEnum):
        hipSuccess = 0
        hipErrorInvalidValue = 1
        hipErrorInvalidDeviceFunction = 98
        hipErrorNoDevice = 100
        hipErrorInvalidImage = 200
        hipErrorNoBinaryForGpu = 209
        hipErrorNotFound = 500
        hipErrorLaunchFailure = 719

    def __init__(self, gcn_arch_name: str = "gfx942:sramecc+:xnack-", wave_size: int = 64) -> None:
        self.gcn_arch_name = gcn_arch_name
        self.wave_size = wave_size
        self.init_result = 0
        self.current_device = 0
        self.loaded: list[bytes] = []
        self.functions: list[str] = []
        self.launches: list[dict[str, Any]] = []
        self.results: list[int] = []
        # device memory (hipMalloc): base address -> bytes; ``on_launch(fake, launch)``
        # plays the kernel's part (writes what it would write, e.g. device_print records)
        self.memory: dict[int, bytearray] = {}
        self.on_launch: Any = None

    def _ok(self, *values: Any) -> tuple:
        return (self.hipError_t.hipSuccess, *values)

    def hipInit(self, flags: int) -> tuple:
        return (self.hipError_t(self.init_result),)

    def hipGetErrorString(self, err: Any) -> bytes:
        return {100: b"no ROCm-capable device is detected", 719: b"unspecified launch failure"}.get(int(err), b"")

    def hipGetDeviceCount(self) -> tuple:
        return self._ok(1)

    def hipGetDevice(self) -> tuple:
        return self._ok(self.current_device)

    def hipSetDevice(self, ordinal: int) -> tuple:
        self.current_device = ordinal
        return self._ok()

    def hipDeviceProp_t(self) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace()

    def hipGetDeviceProperties(self, props: Any, ordinal: int) -> tuple:
        props.name = b"Fake AMD Instinct\0\0"
        props.gcnArchName = self.gcn_arch_name.encode() + b"\0\0\0"
        props.multiProcessorCount, props.sharedMemPerBlock, props.warpSize = 304, 65536, self.wave_size
        return self._ok()

    def hipModuleLoadData(self, image: bytes) -> tuple:
        self.loaded.append(bytes(image))
        return self._ok(f"module{len(self.loaded)}")

    def hipModuleGetFunction(self, module: Any, name: bytes) -> tuple:
        self.functions.append(name.decode())
        return self._ok(("function", module, name.decode()))

    def hipModuleUnload(self, module: Any) -> tuple:
        return self._ok()

    def hipMalloc(self, size: int) -> tuple:
        address = 0x7F00_0000_0000 + 0x1000_0000 * len(self.memory)
        self.memory[address] = bytearray(size)
        return self._ok(address)

    def hipFree(self, address: int) -> tuple:
        del self.memory[address]
        return self._ok()

    def at(self, address: int, size: int) -> tuple[bytearray, int]:
        """The allocation holding ``size`` bytes at ``address``, and the offset in it."""
        for base, buf in self.memory.items():
            if base <= address and address + size <= base + len(buf):
                return buf, address - base
        raise AssertionError(f"no device memory at 0x{address:x} ({size} bytes)")

    def hipMemcpyHtoD(self, dst: int, src: Any, size: int) -> tuple:
        import ctypes

        buf, off = self.at(dst, size)
        buf[off:off + size] = ctypes.string_at(ctypes.addressof(src), size)
        return self._ok()

    def hipMemcpyDtoH(self, dst: Any, src: int, size: int) -> tuple:
        import ctypes

        buf, off = self.at(src, size)
        ctypes.memmove(dst, bytes(buf[off:off + size]), size)
        return self._ok()

    def hipStreamSynchronize(self, stream: Any) -> tuple:
        return self._ok()

    def hipModuleLaunchKernel(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                              stream: Any, kernel_params: Any, extra: Any) -> tuple:
        import ctypes

        for v in (gx, gy, gz, bx, by, bz, shared):  # as hip-python converts to unsigned int
            if not 0 <= operator.index(v) < 2**32:
                raise OverflowError("can't convert negative value to unsigned int")
        assert kernel_params is None, "tlxc passes the arguments in the extra form"
        data = b""
        if extra:
            words = (ctypes.c_void_p * 5).from_address(extra)
            assert (words[0], words[2], words[4]) == (1, 2, 3), "HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END"
            size = ctypes.c_size_t.from_address(words[3]).value
            data = ctypes.string_at(words[1], size)
        if not (gx and gy and gz):
            return (self.hipError_t.hipErrorInvalidValue,)
        self.launches.append({"function": f, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                              "stream": stream, "kernargs": data})
        if self.on_launch is not None:
            self.on_launch(self, self.launches[-1])
        return (self.hipError_t(self.results.pop(0) if self.results else 0),)


@pytest.fixture
def fake_hip(monkeypatch: pytest.MonkeyPatch) -> FakeHip:
    """hip-python replaced by ``FakeHip`` (importable as ``from hip import hip``) and no
    usable NVIDIA GPU, so that kernels compiled for gfx942 load and launch on the CPU."""
    import types

    from tlxc.runtime import NoGPUError, driver
    from tlxc.runtime import hip as hip_runtime

    fake = FakeHip()
    package = types.ModuleType("hip")
    package.hip = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hip", package)
    for name in ("_hip", "_device", "_no_gpu"):
        monkeypatch.setattr(hip_runtime, name, None)

    def no_cuda() -> Any:
        raise NoGPUError("cannot use the GPU: no NVIDIA driver was found (fake)")

    monkeypatch.setattr(driver, "device", no_cuda)
    return fake
