"""Global scratch memory that a kernel gets at each launch, from the user's allocator.

A kernel that builds TMA descriptors on the device (``tl.make_tensor_descriptor``) writes
them to global memory of its own: its metadata ``global_scratch`` gives the bytes one
program needs (``size``, 128 per descriptor) and their alignment, and the launcher passes
a pointer to ``grid size x size`` bytes as a hidden last parameter. The memory comes from
the function given to ``set_allocator`` -- Triton's ``triton.set_allocator`` contract, so
the same function serves both::

    def alloc_fn(size: int, alignment: int, stream: int | None):
        return torch.empty(size, device="cuda", dtype=torch.int8)

    tlxc.set_allocator(alloc_fn)

It returns an object with ``data_ptr()`` (or an int address). The launcher keeps the
object until the launch call returns, as Triton does: a stream-ordered allocator such as
PyTorch's caching allocator then reuses the bytes only after the kernel. Kernels without
device descriptors never call it.

The allocator is one process-wide setting (not per thread): a worker thread launches
with the allocator the main thread set.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from .errors import LaunchError

Allocator = Callable[[int, int, "int | None"], Any]
_allocator: Allocator | None = None


def set_allocator(allocator: Allocator | None) -> None:
    """Use ``allocator(size, alignment, stream)`` for the global scratch of launches (None:
    no allocator; kernels that need scratch then refuse to launch)."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError(f"the allocator must be a function (size, alignment, stream) -> tensor, got "
                        f"{type(allocator).__name__}")
    _allocator = allocator


def get_allocator() -> Allocator | None:
    return _allocator


def allocate(nbytes: int, alignment: int, stream: int, kernel: str) -> tuple[Any, int]:
    """(the object to keep alive during the launch, its address): ``nbytes`` of global
    scratch for one launch of ``kernel`` on ``stream``; ``LaunchError`` without an
    allocator, or if it returns something unusable."""
    fn = _allocator
    if fn is None:
        raise LaunchError(f"kernel '{kernel}' builds TMA descriptors on the device (tl.make_tensor_descriptor) and "
                          f"needs {nbytes} bytes of global scratch memory for this launch, but no allocator is set; "
                          "call tlxc.set_allocator(fn) first, e.g. tlxc.set_allocator(lambda size, align, stream: "
                          "torch.empty(size, device='cuda', dtype=torch.int8)) (as triton.set_allocator)")
    buf = fn(nbytes, alignment, stream)
    try:
        address = operator.index(buf) if not hasattr(buf, "data_ptr") else int(buf.data_ptr())
    except TypeError:
        raise LaunchError(f"the allocator set with tlxc.set_allocator returned a {type(buf).__name__}; it must "
                          "return a GPU tensor (an object with data_ptr()) or an int address") from None
    if not address or address % alignment:
        raise LaunchError(f"the allocator set with tlxc.set_allocator returned address 0x{address:x} for "
                          f"{nbytes} bytes of scratch of kernel '{kernel}'; it must be a non-null address aligned "
                          f"to {alignment} bytes")
    return buf, address
