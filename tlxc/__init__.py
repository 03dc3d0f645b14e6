"""tlxc: a standalone compiler for TLX-style GPU kernels written in Python.

    import tlxc
    import tlxc.language as tl

    @tlxc.kernel
    def add(x, y, out, n, BLOCK: tl.constexpr): ...

    add.interpret[(4,)](x, y, out, n, BLOCK=1024)     # run on the CPU with numpy
    print(add.compile("*fp32,*fp32,*fp32,i32", {"BLOCK": 1024}).asm["ir"])
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import Any

from . import knobs, language, testing  # noqa: F401
from .errors import CompilationError, InternalCompilerError, InterpreterError, TlxcError  # noqa: F401
from .kernels.autotune import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401
from .kernels.function import KernelFunction, kernel  # noqa: F401
from .language.constexpr_function import ConstexprFunction, constexpr_function  # noqa: F401
from .tensor_descriptor import TensorDescriptor  # noqa: F401
from .tensor_wrapper import TensorWrapper, reinterpret  # noqa: F401


class _SourceTreeRuntime(importlib.abc.MetaPathFinder):
    """In a source checkout (the package imported from the repository, e.g. with
    ``PYTHONPATH=.``) the runtime lives in the top-level ``runtime/`` folder;
    installed, it is ``tlxc/runtime``. This finder makes ``tlxc.runtime`` resolve in both."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "tlxc.runtime":
            return None
        return importlib.util.spec_from_file_location(
            name, os.path.join(self.folder, "__init__.py"), submodule_search_locations=[self.folder])


_here = os.path.dirname(os.path.abspath(__file__))
_runtime_src = os.path.join(os.path.dirname(_here), "runtime")
if not os.path.isdir(os.path.join(_here, "runtime")) and os.path.isfile(os.path.join(_runtime_src, "__init__.py")):
    # first: an editable install of another checkout must not lend this tree its runtime
    sys.meta_path.insert(0, _SourceTreeRuntime(_runtime_src))


__version__ = "0.1.0"
jit = kernel
JITFunction = KernelFunction
TritonError = TlxcError  # Triton's base of its compile and runtime errors, as its tests catch it


def set_allocator(allocator: Any) -> None:
    """Set the function ``allocator(size, alignment, stream)`` that gives launches their
    global scratch memory (kernels that build TMA descriptors on the device need it), as
    ``triton.set_allocator`` does; it returns a GPU tensor, e.g.
    ``lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8)``.
    None removes it."""
    from .runtime.scratch import set_allocator as set_runtime_allocator

    set_runtime_allocator(allocator)


@constexpr_function
def cdiv(x: Any, y: Any) -> Any:
    """Ceiling division of integers: on the host, and inside kernels on compile-time
    values (a ``constexpr_function``, as in Triton); ``tl.cdiv`` divides runtime values."""
    return (x + y - 1) // y


@constexpr_function
def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def __getattr__(name: str) -> Any:
    # `tlxc.runtime.driver.active...` after a plain `import tlxc`, as Triton users write it;
    # loaded on first use so that importing the frontend does not load the runtime
    if name == "runtime":
        import importlib

        return importlib.import_module("tlxc.runtime")
    raise AttributeError(f"module 'tlxc' has no attribute {name!r}")
