"""Errors of the runtime.

They derive from Python's ``RuntimeError`` only: the runtime is usable without the
compiler, so it does not import ``tlxc.errors``. Every message names what failed in the
user's terms (the driver call, the kernel, the argument) and how to fix it.
"""

from __future__ import annotations


class TlxcRuntimeError(RuntimeError):
    """Base of the runtime's errors."""


class NoGPUError(TlxcRuntimeError):
    """No usable GPU: for NVIDIA kernels no cuda-python, no driver (libcuda) or no device;
    for AMD kernels no hip-python, no ROCm runtime (libamdhip64) or no device.

    Raised at the first launch or device allocation, never at import."""


#: What a kernel that executed ``trap`` leaves behind (the next driver call reports it).
TRAP_ERRORS = frozenset({"CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION"})
TRAP_HINT = ("a tlxc kernel traps when a tl.device_assert fails, and when the dividend of a '%' in index "
             "arithmetic is negative where the compiler assumed it was not to vectorize a memory access "
             "(as Triton assumes it without checking); kernel.interpret[grid](...) reports a failing "
             "device_assert with its line")


class ApiCallError(TlxcRuntimeError):
    """A GPU runtime call failed: ``call`` is the function, ``result`` its error code and
    ``name`` that code's name; ``hint`` adds what the name suggests to the message."""

    def __init__(self, call: str, result: int, name: str, description: str = "", detail: str = "") -> None:
        self.call = call
        self.result = int(result)
        self.name = name
        self.description = description
        self.detail = detail
        text = f"{call} failed: {name}"
        if description:
            text += f" ({description})"
        if detail:
            text += f"\n{detail}"
        hint = self.hint(name)
        if hint:
            text += "\n" + hint
        super().__init__(text)

    @staticmethod
    def hint(name: str) -> str:
        return ""

    def __reduce__(self):  # noqa: ANN204 - pickling across processes keeps the fields
        return (type(self), (self.call, self.result, self.name, self.description, self.detail))


class CudaError(ApiCallError):
    """A CUDA driver call failed. ``call`` is the driver function, ``result`` the
    ``CUresult`` value and ``name`` its name (``CUDA_ERROR_INVALID_VALUE``)."""

    @staticmethod
    def hint(name: str) -> str:
        return TRAP_HINT if name in TRAP_ERRORS else ""


class HipError(ApiCallError):
    """A HIP runtime call failed (AMD GPUs, runtime/hip.py). ``call`` is the HIP function,
    ``result`` the ``hipError_t`` value and ``name`` its name (``hipErrorInvalidValue``)."""


class LaunchError(TlxcRuntimeError):
    """A launch was refused before reaching the driver: an argument that is not on the
    GPU, has the wrong dtype for the compiled signature, is misaligned, out of range...
    ``index`` and ``name`` identify the argument (None for launch-wide problems)."""

    def __init__(self, message: str, index: int | None = None, name: str | None = None) -> None:
        self.index = index
        self.name = name
        super().__init__(message)

    def __reduce__(self):  # noqa: ANN204
        return (type(self), (str(self), self.index, self.name))


class PtxasError(TlxcRuntimeError):
    """ptxas rejected a PTX module (the message carries its output), or no ptxas was found."""


def __getattr__(name: str) -> type:
    # Triton's spelling `triton.runtime.errors.InterpreterError` (tlxc's lives in tlxc.errors),
    # resolved on use so that importing the runtime does not load the compiler's modules
    if name == "InterpreterError":
        from tlxc.errors import InterpreterError

        return InterpreterError
    raise AttributeError(f"module 'tlxc.runtime.errors' has no attribute {name!r}")
