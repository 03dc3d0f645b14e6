"""``tlxc.TensorDescriptor``: a host-side TMA tensor descriptor, as Triton's
``triton.tools.tensor_descriptor.TensorDescriptor`` (also importable as
``tlxc.tools.tensor_descriptor.TensorDescriptor``).

It names a tensor in memory -- ``base`` (a GPU tensor: anything with ``data_ptr()`` or
``__cuda_array_interface__``; a numpy array for the interpreter), its ``shape`` and
``strides`` in elements, innermost last -- and the ``block_shape`` a kernel moves at a
time. A kernel parameter that receives one is typed ``tensordesc<fp16[64,64]>`` (the
block shape and the element type are part of the compiled variant); the launcher encodes
the ``CUtensorMap`` from it with the swizzle the compiler chose (runtime/tma.py), and the
interpreter reads and writes blocks through it (interpreter/descriptors.py)::

    a_desc = tlxc.TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])
    b_desc = tlxc.TensorDescriptor(b, [K, N], [N, 1], [1, 1])  # block fixed later, e.g. in a pre_hook
    b_desc.block_shape = [BLOCK_K, BLOCK_N]

Construction checks what Triton asserts (``ValueError``, naming the value): rank 1 to
5, one stride and one block dimension per dimension, the last stride 1, every other
stride a multiple of 16 bytes, block dimensions powers of two, a 16-byte aligned base
(for GPU tensors), padding ``"zero"`` or ``"nan"`` (floats only). The limits of one TMA
message (box dimensions, the inner row of at least 16 bytes) depend on the block shape,
which tutorials set after construction, so they are checked when the descriptor is
encoded at launch.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any


@dataclass(repr=False)
class TensorDescriptor:
    """A host TMA descriptor of ``base`` (see the module docstring). Fields as Triton's:
    ``base``, ``shape``, ``strides`` (elements), ``block_shape``, ``padding``."""

    base: Any
    shape: list[int]
    strides: list[int]
    block_shape: list[int]
    padding: str = "zero"

    def __post_init__(self) -> None:
        from .runtime import tma  # the rules are the runtime's, which encodes the descriptor

        sig, elem = _element(self.base)
        try:
            shape, strides = tma.check_layout(self.shape, self.strides, elem)
            block = tma.check_block_shape(self.block_shape, len(shape))
            tma.check_padding(self.padding, sig)
            address = _device_address(self.base)
            if address is not None:
                tma.check_base(address)
        except ValueError as e:
            raise ValueError(f"TensorDescriptor: {e}") from None
        self.shape, self.strides, self.block_shape = list(shape), list(strides), list(block)

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list[int], padding: str = "zero") -> "TensorDescriptor":
        """The descriptor of the whole of ``tensor`` (its shape and strides) in blocks of
        ``block_shape``: a torch tensor, anything with ``__cuda_array_interface__``, or a
        numpy array (for the interpreter; its byte strides become element strides)."""
        shape = tensor.shape if hasattr(tensor, "shape") else tensor.__cuda_array_interface__["shape"]
        return TensorDescriptor(tensor, [int(n) for n in shape], _strides(tensor), list(block_shape), padding)

    def __repr__(self) -> str:
        b = self.base
        base = f"<{type(b).__name__} of {getattr(b, 'dtype', '?')}, shape {list(getattr(b, 'shape', ()))}>"
        return (f"TensorDescriptor(base={base}, shape={self.shape}, strides={self.strides}, "
                f"block_shape={self.block_shape}, padding={self.padding!r})")

    @property
    def dtype(self) -> Any:
        """The dtype of the base tensor."""
        return self.base.dtype


def _element(base: Any) -> tuple[str | None, int]:
    """(signature name of the base's elements or None, bytes per element)."""
    from .runtime.dtypes import sig_of_dtype, sig_of_typestr

    dt = getattr(base, "dtype", None)
    if dt is not None:
        size = getattr(dt, "itemsize", None)
        if size is None and hasattr(base, "element_size"):  # torch < 2.1
            size = base.element_size()
        if size is None:
            import numpy as np

            size = np.dtype(dt).itemsize
        return sig_of_dtype(dt), int(size)
    cai = getattr(base, "__cuda_array_interface__", None)
    if cai is not None:
        import numpy as np

        return sig_of_typestr(cai["typestr"]), np.dtype(cai["typestr"]).itemsize
    raise ValueError(f"TensorDescriptor: the base must be a tensor or array with a dtype (a GPU tensor, or a numpy "
                     f"array for the interpreter), got {type(base).__name__}")


def _device_address(base: Any) -> int | None:
    """The GPU address of ``base``, None for a host (numpy) array, whose address the
    interpreter does not use."""
    t = type(base)
    if t.__module__.startswith("torch") and t.__name__ in ("FakeTensor", "FunctionalTensor"):  # tracing (as Triton)
        return None
    if hasattr(base, "data_ptr"):
        if getattr(base, "device", None) is not None and str(getattr(base.device, "type", base.device)) == "cpu":
            return None  # a CPU torch tensor: refused at launch, with the argument's name
        return int(base.data_ptr())
    cai = getattr(base, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0]) if cai.get("data") else 0
    return None


def _strides(tensor: Any) -> list[int]:
    """``tensor``'s strides in elements."""
    if callable(getattr(tensor, "stride", None)):
        return [int(s) for s in tensor.stride()]
    cai = getattr(tensor, "__cuda_array_interface__", None)
    if cai is not None:
        import numpy as np

        itemsize = np.dtype(cai["typestr"]).itemsize
        byte_strides = cai.get("strides")
        if byte_strides is None:  # C-contiguous
            out, step = [], 1
            for n in reversed(cai["shape"]):
                out.append(step)
                step *= int(n)
            return out[::-1]
    else:
        byte_strides = getattr(tensor, "strides", None)
        if byte_strides is None:
            raise ValueError(f"TensorDescriptor.from_tensor: cannot tell the strides of a {type(tensor).__name__}")
        itemsize = tensor.itemsize if hasattr(tensor, "itemsize") else tensor.dtype.itemsize
    out = []
    for i, s in enumerate(byte_strides):
        if operator.index(s) % itemsize:
            raise ValueError(f"TensorDescriptor.from_tensor: stride {i} of the array is {s} bytes, not a whole number "
                             f"of {itemsize}-byte elements")
        out.append(int(s) // itemsize)
    return out
