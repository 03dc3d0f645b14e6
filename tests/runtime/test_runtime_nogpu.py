"""Without a GPU: importing works and touches no driver; the first launch (or device
allocation) raises NoGPUError with a message that says why and what to do instead."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
from tlxc.runtime import DeviceArray, LoadedKernel, NoGPUError, driver, gpu_available


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_is_lazy() -> None:
    out = _run("""
        import sys
        import tlxc.runtime
        from tlxc.runtime import LoadedKernel, DeviceArray, ArgPlan
        LoadedKernel(b"\\x7fELF", "k", ["*fp32:16", "i32"])
        print(sorted(m for m in sys.modules if m.startswith("cuda")))
    """)
    assert out.strip() == "[]"


def test_runtime_does_not_import_the_compiler() -> None:
    out = _run("""
        import sys
        import tlxc.runtime
        print([m for m in sys.modules if m in ("tlxc.compiler", "tlxc.interpreter", "tlxc.codegen", "lark",
                                                "llvmlite")])
    """)
    assert out.strip() == "[]"


@pytest.mark.skipif(gpu_available(), reason="a GPU is available here")
def test_launch_without_gpu_raises_no_gpu_error() -> None:
    k = LoadedKernel(b"\x7fELF", "k", ["*fp32:16", "i32"])
    with pytest.raises(NoGPUError) as e:
        k((1,), (None, 1))
    msg = str(e.value)
    assert msg.startswith("cannot use the GPU: ")
    assert "kernel.interpret[grid]" in msg
    with pytest.raises(NoGPUError):
        DeviceArray(16)


def test_missing_cuda_python_is_a_clear_error() -> None:
    out = _run("""
        import sys
        sys.modules["cuda"] = None  # as if cuda-python were not installed
        sys.modules["cuda.bindings"] = None
        from tlxc.runtime import LoadedKernel, NoGPUError
        try:
            LoadedKernel(b"\\x7fELF", "k", [])((1,), ())
        except NoGPUError as e:
            print(e)
    """)
    assert "CUDA driver bindings (cuda-python) are not installed" in out and "pip install 'tlxc[cuda]'" in out


def _fake_bindings(init_result: int) -> SimpleNamespace:
    class CUresult(int):
        name = "CUDA_ERROR_NO_DEVICE"

    return SimpleNamespace(cuInit=lambda flags: (init_result,), CUresult=CUresult,
                           cuGetErrorString=lambda r: (0, b"no CUDA-capable device is detected"))


def test_no_device_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "_drv", _fake_bindings(driver.CUDA_ERROR_NO_DEVICE))
    monkeypatch.setattr(driver, "_device", None)
    monkeypatch.setattr(driver, "_no_gpu", None)
    with pytest.raises(NoGPUError, match=r"no NVIDIA GPU is visible \(cuInit returned CUDA_ERROR_NO_DEVICE: no "
                                         r"CUDA-capable device is detected\)"):
        LoadedKernel(b"\x7fELF", "k", [])((1,), ())
    assert not driver.gpu_available()
    assert "no NVIDIA GPU" in driver.no_gpu_reason()


def test_a_trapped_kernel_is_explained() -> None:
    """A kernel that executed ``trap`` (a failed device_assert, a negative ``%`` dividend
    the compiler assumed non-negative) shows up as a failed launch at the next driver call:
    its message says what makes tlxc kernels trap; other errors do not get that text."""
    from tlxc.runtime.errors import CudaError

    trapped = str(CudaError("cuCtxSynchronize", 719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"))
    assert trapped.startswith("cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)")
    assert "device_assert" in trapped and "'%'" in trapped
    assert "traps" not in str(CudaError("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY"))
