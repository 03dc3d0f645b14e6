"""tlxc: a standalone compiler for TLX-style GPU kernels written in Python.

    import tlxc
    import tlxc.language as tl

    @tlxc.kernel
    def add(x, y, out, n, BLOCK: tl.constexpr): ...

    add.interpret[(4,)](x, y, out, n, BLOCK=1024)     # run on the CPU with numpy
    print(add.compile("*fp32,*fp32,*fp32,i32", {"BLOCK": 1024}).asm["ir"])
"""

from __future__ import annotations

from typing import Any

from . import language  # noqa: F401
from .errors import CompilationError, InternalCompilerError, InterpreterError, TlxcError  # noqa: F401
from .frontend.kernel import KernelFunction, kernel  # noqa: F401

__version__ = "0.1.0"
jit = kernel
JITFunction = KernelFunction


def cdiv(x: Any, y: Any) -> Any:
    """Ceiling division of integers (host side, and inside kernels via tl.cdiv)."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()
