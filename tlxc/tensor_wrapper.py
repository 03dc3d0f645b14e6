"""``tlxc.reinterpret(tensor, dtype)``: a tensor's memory passed to a kernel as another
element type of the same width (Triton's ``triton.reinterpret`` and ``TensorWrapper``).

PyTorch has no unsigned 16/32/64-bit tensors (and older versions no fp8), so Triton
programs hand such data to kernels as, e.g., ``reinterpret(int32_tensor, tl.uint32)``: the
kernel's pointer argument becomes ``*u32`` over the same bytes. The wrapper answers what
a launch asks of a tensor (``data_ptr``, ``dtype``, shape and strides); the interpreter
views the base's memory with the new element type.
"""

from __future__ import annotations

from typing import Any


class TensorWrapper:
    """``base``'s memory seen as ``dtype`` (a ``tl`` dtype of the same element size)."""

    def __init__(self, base: Any, dtype: Any) -> None:
        self.base = base
        self.dtype = dtype
        self.shape = tuple(base.shape)

    def data_ptr(self) -> int:
        if hasattr(self.base, "data_ptr"):
            return int(self.base.data_ptr())
        return int(self.base.__array_interface__["data"][0])

    def stride(self, dim: int | None = None) -> Any:
        if hasattr(self.base, "stride") and callable(self.base.stride):
            return self.base.stride() if dim is None else self.base.stride(dim)
        s = tuple(x // self.base.itemsize for x in self.base.strides)
        return s if dim is None else s[dim]

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    def element_size(self) -> int:
        return int(self.dtype.bits) // 8

    @property
    def device(self) -> Any:
        return getattr(self.base, "device", "cpu")

    def cpu(self) -> "TensorWrapper":
        return TensorWrapper(self.base.cpu(), self.dtype) if hasattr(self.base, "cpu") else self

    def __repr__(self) -> str:
        return f"TensorWrapper[{self.dtype!r}]({self.base!r})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """``tensor``'s memory as ``dtype`` (a ``tl`` dtype) for kernel launches: a
    ``TensorWrapper``, or the base tensor itself when ``dtype`` is its own."""
    from .ir.types import DType

    if not isinstance(dtype, DType):
        raise TypeError(f"reinterpret needs a tl dtype, got {dtype!r}")
    base = tensor.base if isinstance(tensor, TensorWrapper) else tensor
    size = getattr(base, "itemsize", None)
    if size is None and hasattr(base, "element_size"):
        size = base.element_size()
    if size is not None and int(size) * 8 != dtype.bits:
        raise ValueError(f"reinterpret keeps the element size: {size}-byte elements cannot be seen as {dtype!r}")
    return TensorWrapper(base, dtype)
