"""Repository-wide pytest setup: tests marked ``gpu`` are skipped, with the reason, when no
CUDA GPU can be used (no cuda-python, no driver, or no device)."""

from __future__ import annotations

import functools

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # the verifier runs after every pass of every compile the tests make
    from tlxc.compiler import set_verify_each_pass

    set_verify_each_pass(True)


@functools.lru_cache(maxsize=None)
def _no_gpu_reason() -> str | None:
    from tlxc.runtime import no_gpu_reason

    return no_gpu_reason()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        reason = _no_gpu_reason()
        if reason is not None:
            pytest.skip(f"no usable GPU: {reason.splitlines()[0]}")


# -- TLXC_TEST_ON_GPU=1: run the interpreter tests on the GPU -----------------------------------
# Every `kernel.interpret[grid](...)` launch then compiles for the GPU, copies the numpy
# arrays to the device (whole base arrays, so strided views keep their strides), launches,
# and copies them back: the interpreter's test suite becomes a code generator test suite.
# Tests that check interpreter-only diagnostics are marked `interpreter_only` and skipped.


class _DeviceView:
    """A device copy of a numpy array's memory, seen with the array's own offset/strides."""

    def __init__(self, array, buffer, offset: int) -> None:
        self.array, self.buffer, self.offset = array, buffer, offset
        self.dtype = array.dtype
        self.shape, self.strides = array.shape, array.strides
        typestr = array.dtype.str
        if type(array.dtype).__module__.startswith("ml_dtypes") or array.dtype.type.__module__.startswith("ml_dtypes"):
            typestr = f"|V{array.dtype.itemsize}"  # bf16/fp8 have no array-interface code
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": typestr, "version": 3,
            "strides": array.strides, "data": (buffer.data_ptr() + offset, False),
        }

    def data_ptr(self) -> int:
        return self.buffer.data_ptr() + self.offset


def _to_device(a):
    """(device view of ``a``, host bytes of its base array, device copy of those bytes)."""
    import numpy as np
    from tlxc.runtime import DeviceArray

    base = a
    while isinstance(base.base, np.ndarray):
        base = base.base
    if not base.flags.c_contiguous:
        raise RuntimeError("TLXC_TEST_ON_GPU: arrays must view a C-contiguous base array")
    raw = base.reshape(-1).view(np.uint8)
    buf = DeviceArray.from_numpy(raw)
    return _DeviceView(a, buf, a.ctypes.data - base.ctypes.data), raw, buf


def pytest_configure(config: pytest.Config) -> None:
    import os

    config.addinivalue_line("markers", "interpreter_only: checks the interpreter itself (skipped on the GPU)")
    config.addinivalue_line("markers", "not_on_gpu_yet(reason): uses what the NVIDIA code generator cannot compile "
                                       "yet (skipped on the GPU, with the reason)")
    if os.environ.get("TLXC_TEST_ON_GPU") not in (None, "", "0"):
        import numpy as np

        import tlxc
        from tlxc.kernels import launch as kmod

        original = kmod.Launcher.__call__

        def on_gpu(self, *args, **kwargs):
            if not self.interpret:
                return original(self, *args, **kwargs)
            staged: list = []

            def device(a):
                if isinstance(a, np.ndarray):
                    view, base, buf = _to_device(a)
                    staged.append((base, buf))
                    return view
                if isinstance(a, tlxc.TensorWrapper) and isinstance(a.base, np.ndarray):
                    return tlxc.TensorWrapper(device(a.base), a.dtype)  # tlxc.reinterpret over a numpy array
                if isinstance(a, tlxc.TensorDescriptor) and isinstance(a.base, np.ndarray):
                    # a descriptor over a numpy array: the same descriptor over its device copy
                    return tlxc.TensorDescriptor(device(a.base), list(a.shape), list(a.strides),
                                                 list(a.block_shape), a.padding)
                return a

            new_args = [device(a) for a in args]
            new_kwargs = {k: device(a) for k, a in kwargs.items()}
            from tlxc.runtime import DeviceArray, scratch, synchronize

            scratch_buffers: list = []  # device descriptors' global scratch, kept until the kernel is done
            own_allocator = scratch.get_allocator() is None
            if own_allocator:
                scratch.set_allocator(lambda size, align, stream: scratch_buffers.append(DeviceArray(size, np.int8))
                                      or scratch_buffers[-1])
            try:
                result = original(kmod.Launcher(self.kernel, self.grid, interpret=False), *new_args, **new_kwargs)
                synchronize()
            finally:
                if own_allocator:
                    scratch.set_allocator(None)
            for raw, buf in staged:
                raw[...] = buf.numpy()
            return result

        kmod.Launcher.__call__ = on_gpu


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    import os

    if os.environ.get("TLXC_TEST_ON_GPU") in (None, "", "0"):
        return
    skip = pytest.mark.skip(reason="checks the interpreter itself")
    for item in items:
        if item.get_closest_marker("interpreter_only"):
            item.add_marker(skip)
        later = item.get_closest_marker("not_on_gpu_yet")
        if later:
            item.add_marker(pytest.mark.skip(reason=f"not compiled for NVIDIA yet: {later.args[0]}"))
