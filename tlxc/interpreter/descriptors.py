"""Tensor descriptors in the interpreter: what a TMA copy reads and writes.

A descriptor value (``DescriptorValue``) is the tensor's base address in the
interpreter's virtual address space (memory.py), its shape and strides in elements
(innermost last), the block shape and the element dtype. It comes from a host
``TensorDescriptor`` over a numpy array (``run.bind_arguments``: the array becomes a
pointer argument, so a fault names it) or from ``make_tensor_descriptor`` on the device
(``make_descriptor``).

``read_block`` and ``write_block`` move the block whose first element is at element
coordinates ``coords`` (one per dimension, innermost last, as TLX writes them; they may be
negative or run past the end). Like the TMA unit they clip at the tensor's bounds --
the *descriptor's* shape, not the array's -- without an error: elements outside read as
zero (NaN with ``padding="nan"``) and writes to them are dropped. Elements inside the
bounds go through ``Memory`` with its checks, so a descriptor whose shape or strides
reach outside its array is reported as an out-of-bounds access of that argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import CompilationError, InterpreterError
from ..ir.core import Location
from ..ir.types import TensorDescType, numpy_dtype
from .memory import Memory


@dataclass(frozen=True)
class DescriptorValue:
    """A TMA descriptor as the interpreter's rules see it (see the module docstring)."""

    address: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # elements
    block_shape: tuple[int, ...]
    dtype: np.dtype
    padding: str = "zero"

    @property
    def rank(self) -> int:
        return len(self.shape)


class DescriptorSlots:
    """Global memory for descriptors (``tlx.allocate_tensor_descriptor``): ``num`` slots
    from ``start`` of a per-program list, holding what ``make_tensor_descriptor`` stored
    (None before). Indexing gives one slot; reading it back
    (``reinterpret_tensor_descriptor``) needs a descriptor of the same block and dtype,
    because the block is the box the descriptor was encoded with."""

    __slots__ = ("slots", "start", "num")

    def __init__(self, slots: list[Any], start: int, num: int) -> None:
        self.slots, self.start, self.num = slots, start, num

    @classmethod
    def allocate(cls, num: int) -> "DescriptorSlots":
        return cls([None] * num, 0, num)

    def index(self, i: int, loc: Location | None) -> "DescriptorSlots":
        if not 0 <= i < self.num:
            raise InterpreterError("TLXC-INTERP-001", f"descriptor index {i} is outside the {self.num} descriptors of "
                                   "this allocation (tlx.allocate_tensor_descriptor)", loc)
        return DescriptorSlots(self.slots, self.start + i, 1)

    def store(self, desc: DescriptorValue) -> None:
        self.slots[self.start] = desc

    def load(self, block_shape: Sequence[int], dtype: Any, loc: Location | None) -> DescriptorValue:
        desc = self.slots[self.start]
        if desc is None:
            raise InterpreterError("TLXC-INTERP-005", "reinterpret_tensor_descriptor reads a descriptor that no "
                                   "make_tensor_descriptor has written yet", loc)
        want = (tuple(int(b) for b in block_shape), np.dtype(dtype))
        if (desc.block_shape, desc.dtype) != want:
            raise InterpreterError("TLXC-TLX-003", f"this descriptor was made for blocks of {desc.dtype}"
                                   f"{list(desc.block_shape)} and is reinterpreted for blocks of {want[1]}"
                                   f"{list(want[0])}; TMA would copy the block it was made for", loc)
        return desc


def make_descriptor(address: int, shape: Sequence[int], strides: Sequence[int], block_shape: Sequence[int],
                    dtype: Any, padding: str = "zero", loc: Location | None = None) -> DescriptorValue:
    """A descriptor built on the device (``make_tensor_descriptor``), after the checks
    TMA applies to it (``_checked``). A violation is an ``InterpreterError`` at ``loc``: on
    the GPU the copy would fault."""
    try:
        return _checked(address, shape, strides, block_shape, np.dtype(dtype), padding)
    except ValueError as e:
        raise InterpreterError("TLXC-INTERP-001", f"invalid tensor descriptor: {e}", loc) from None


def host_descriptor(arg: Any, t: TensorDescType, address: int, label: str, kernel: str) -> DescriptorValue:
    """The value of a host ``TensorDescriptor`` argument (over a numpy array, which the
    caller makes pointer argument ``address``) for a parameter of type ``t``, after the
    checks the launcher makes on the GPU; ``CompilationError`` naming the argument if
    they fail."""
    what = f"argument '{label}' of kernel '{kernel}'"
    array = descriptor_array(arg, t, label, kernel)
    block = tuple(int(b) for b in arg.block_shape)
    if block != t.block_shape:
        raise CompilationError("TLXC-LAUNCH-003", f"{what}: the descriptor's block_shape is {list(block)} but the "
                               f"kernel was compiled for {list(t.block_shape)}")
    dt = numpy_dtype(t.element)
    if array.dtype != dt:
        raise CompilationError("TLXC-LAUNCH-003", f"{what}: the descriptor's array has dtype {array.dtype} but the "
                               f"kernel was compiled for descriptors of {t.element}")
    try:
        return _checked(address, arg.shape, arg.strides, block, dt, getattr(arg, "padding", "zero"))
    except ValueError as e:
        raise CompilationError("TLXC-LAUNCH-003", f"{what}: {e}") from None


def descriptor_array(arg: Any, t: TensorDescType, label: str, kernel: str) -> np.ndarray:
    """The numpy array a host descriptor argument describes (``CompilationError`` if it
    is not a descriptor over one)."""
    if not all(hasattr(arg, f) for f in ("base", "shape", "strides", "block_shape")):
        raise CompilationError("TLXC-LAUNCH-003", f"argument '{label}' of kernel '{kernel}' is a TMA descriptor "
                               f"({t}): pass a tlxc.TensorDescriptor over a numpy array, got {type(arg).__name__}")
    from .memory import host_view

    base = host_view(arg.base)
    if base is None:
        raise CompilationError("TLXC-LAUNCH-003", f"argument '{label}' of kernel '{kernel}': the interpreter needs "
                               f"a TensorDescriptor over a numpy array or a CPU tensor, got one over a "
                               f"{type(arg.base).__name__}")
    return base


def _checked(address: int, shape: Sequence[Any], strides: Sequence[Any], block_shape: Sequence[Any],
             dt: np.dtype, padding: str) -> DescriptorValue:
    """A DescriptorValue after the rules of the TMA unit (runtime/tma.py): rank 1 to 5,
    the last stride 1, the other strides multiples of 16 bytes, a 16-byte aligned base,
    block dimensions powers of two with an inner row of at least 16 bytes; ``ValueError``."""
    from ..runtime import tma
    from ..runtime.dtypes import sig_of_dtype

    shape_t, strides_t = tma.check_layout([int(n) for n in shape], [int(s) for s in strides], dt.itemsize)
    block = tma.check_block_shape([int(b) for b in block_shape], len(shape_t))
    tma.check_padding(padding, sig_of_dtype(dt))
    tma.check_base(int(address))
    if block[-1] * dt.itemsize % 16:
        raise ValueError(f"the inner block dimension is {block[-1]} elements ({block[-1] * dt.itemsize} bytes); "
                         "TMA needs a multiple of 16 bytes (at least 16)")
    return DescriptorValue(int(address), shape_t, strides_t, block, dt, padding)


def _block_addresses(desc: DescriptorValue, coords: Sequence[Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """The byte address of every element of the block at ``coords``, and the mask of the
    elements inside the tensor (None when all are)."""
    if len(coords) != desc.rank:
        raise ValueError(f"a rank-{desc.rank} descriptor needs {desc.rank} coordinates, got {len(coords)}")
    offset = np.zeros(desc.block_shape, np.int64)
    inside = None
    for d, (c, n, s, b) in enumerate(zip(coords, desc.shape, desc.strides, desc.block_shape)):
        c = int(c)
        idx = np.arange(c, c + b, dtype=np.int64)
        view = [1] * desc.rank
        view[d] = b
        idx = idx.reshape(view)
        offset = offset + idx * s
        if c < 0 or c + b > n:
            ok = ((idx >= 0) & (idx < n))
            inside = ok if inside is None else inside & ok
    if inside is not None:
        inside = np.broadcast_to(inside, desc.block_shape)
    return np.int64(desc.address) + offset * np.int64(desc.dtype.itemsize), inside


def read_block(memory: Memory, desc: DescriptorValue, coords: Sequence[Any], loc: Location | None) -> np.ndarray:
    """The block at element coordinates ``coords`` (innermost last); elements outside the
    tensor are zero, or NaN with ``padding="nan"``."""
    addr, inside = _block_addresses(desc, coords)
    if inside is None:
        return memory.load(addr, None, None, desc.dtype, loc)
    fill = np.full(desc.block_shape, np.nan if desc.padding == "nan" else 0, dtype=desc.dtype)
    if not inside.any():
        return fill
    return memory.load(addr, inside, fill, desc.dtype, loc)


_REDUCE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
           "xor": np.bitwise_xor}


def write_block(memory: Memory, desc: DescriptorValue, coords: Sequence[Any], value: np.ndarray,
                loc: Location | None, reduce: str = "") -> None:
    """Write ``value`` (a block of the descriptor's shape and dtype) at element coordinates
    ``coords``; elements outside the tensor are dropped. With ``reduce`` (``"add"``,
    ``"min"``, ``"max"``, ``"and"``, ``"or"``, ``"xor"``: a reducing TMA store) each
    element is combined with the one in memory instead, in the tensor's dtype."""
    value = np.asarray(value)
    if value.shape != desc.block_shape or value.dtype != desc.dtype:
        raise ValueError(f"a block of this descriptor is {desc.dtype}{list(desc.block_shape)}, got "
                         f"{value.dtype}{list(value.shape)}")
    addr, inside = _block_addresses(desc, coords)
    if inside is not None and not inside.any():
        return
    if reduce:
        old = memory.load(addr, inside, None, desc.dtype, loc)
        value = _REDUCE[reduce](old, value).astype(desc.dtype)
    memory.store(addr, value, inside, desc.dtype, loc)
