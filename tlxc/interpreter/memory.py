"""The interpreter's memory: kernel pointer arguments in a virtual 64-bit address space.

A pointer value is an int64 byte address. Argument ``i`` (a numpy array) gets the base
address ``(2 * i + 2) << 40``: the address of the array's first element (its data
pointer). The argument owns the window ``base ± 2**40``, so a pointer that strays a little
below or above its array is still reported against the right argument; address 0 and
anything outside every window belongs to no argument.

Addresses map to the caller's own memory, not to a copy: the argument's *span* is the
byte range its elements cover, following the array's strides (negative ones included),
seen as one flat ``uint8`` array. Loads and stores read and write there, so results land
in the caller's array in place, and a kernel that indexes a non-contiguous array with its
strides (``x.strides[0] // x.itemsize``, as Triton kernels do with ``x.stride(0)``) sees
exactly the elements numpy sees. Bytes in the span between a strided view's elements are
valid memory, as they are on the GPU.

An access is valid when its lane is unmasked, its address falls in an argument's span with
room for the whole element, and the address is a multiple of the element size (natural
alignment). Anything else raises ``InterpreterError("TLXC-INTERP-001")`` naming the
argument, the element and byte offset, the array's size, the lane and the program.

*Host addresses.* A kernel may also read a pointer from memory -- a table of
``x.ctypes.data`` / ``t.data_ptr()`` values, as Triton's grouped GEMM builds -- and use it,
as it would on a GPU. An address in no argument's window is looked up among the arrays the
program can reach (``host_arrays``: numpy arrays and CPU torch tensors held by the calling
frames' variables, by module globals, and by lists, tuples and dicts), by their real data
addresses; it is then checked against that array's span like an argument.
"""

from __future__ import annotations

import bisect
import gc
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import InterpreterError
from ..ir.core import Location

WINDOW_BITS = 40
_HALF = np.int64(1 << WINDOW_BITS)
_SHIFT = np.int64(WINDOW_BITS + 1)


def base_address(index: int) -> int:
    """Virtual address of the first element of pointer argument ``index``."""
    return (2 * index + 2) << WINDOW_BITS


def _span(array: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The caller's bytes covered by ``array`` as a flat uint8 view, and its byte bounds
    ``[lo, hi)`` relative to the array's data pointer (``lo <= 0`` with negative strides)."""
    if array.size == 0:
        return np.zeros(0, np.uint8), 0, 0
    lo = sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s > 0) + array.itemsize
    # a view of the element at the lowest address (one element is always contiguous, so
    # reshape and view below never copy)
    if array.ndim:
        first = array[tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for n, s in zip(array.shape, array.strides))]
    else:
        first = array
    raw = first.reshape(1).view(np.uint8)
    span = as_strided(raw, shape=(hi - lo,), strides=(1,), writeable=array.flags.writeable)
    return span, lo, hi


@dataclass
class Region:
    """One pointer argument: its name, the caller's array and that array's bytes."""

    index: int
    name: str
    array: np.ndarray
    base: int
    span: np.ndarray
    lo: int
    hi: int
    typed: dict[np.dtype, np.ndarray | None] = field(default_factory=dict)

    def describe(self) -> str:
        a = self.array
        what = self.name if self.index < 0 else f"argument '{self.name}'"  # a host array reached by address
        return f"{what} ({a.dtype} array of shape {a.shape}, {a.size} elements, {a.nbytes} bytes)"

    def view(self, dt: np.dtype) -> np.ndarray | None:
        """The span as a flat array of ``dt``, element 0 at byte ``lo``; None when the span
        does not start at a multiple of the element size (the byte path serves those)."""
        if dt not in self.typed:
            size = dt.itemsize
            if self.lo % size:
                self.typed[dt] = None
            else:
                n = (self.hi - self.lo) // size * size
                self.typed[dt] = self.span[:n].view(dt)
        return self.typed[dt]


class Memory:
    """The pointer arguments of one launch, and gather/scatter through addresses."""

    def __init__(self, arrays: list[tuple[int, str, np.ndarray]]) -> None:
        self.regions: dict[int, Region] = {}
        for index, name, array in arrays:
            span, lo, hi = _span(array)
            self.regions[index] = Region(index, name, array, base_address(index), span, lo, hi)
        # the program running now, for error messages; the driver updates it
        self.program: tuple[int, int, int] = (0, 0, 0)
        self._host: HostArrays | None = None  # made on the first address outside every argument

    # -- address checks -------------------------------------------------------------------
    def _groups(self, addr: np.ndarray, mask: np.ndarray | None, dt: np.dtype, loc: Location | None,
                access: str) -> list[tuple[Region, np.ndarray, np.ndarray | None]]:
        """Split the active lanes by argument and check them.

        Returns ``(region, byte offset from the start of the span, lane selector)`` per
        argument touched; the selector is None when every lane is in that group.
        """
        rid = ((addr + _HALF) >> _SHIFT) - 1
        active = rid if mask is None else rid[mask]
        if active.size == 0:
            return []
        first, last = int(active.min()), int(active.max())
        if first == last and first in self.regions:
            region = self.regions[first]
            return [self._checked(region, addr, mask, dt, loc, access)]
        groups = []
        outside = np.zeros(addr.shape, bool)
        for r in np.unique(active).tolist():
            sel = rid == r if mask is None else (rid == r) & mask
            if r not in self.regions:
                outside |= sel
                continue
            groups.append(self._checked(self.regions[r], addr, sel, dt, loc, access))
        if outside.any():
            groups += self._host_groups(addr, outside, dt, loc, access)
        return groups

    def _host_groups(self, addr: np.ndarray, sel: np.ndarray, dt: np.dtype, loc: Location | None,
                     access: str) -> list[tuple[Region, np.ndarray, np.ndarray | None]]:
        """The lanes ``sel`` whose addresses are in no argument: real host addresses of
        arrays the program can reach (the module doc), grouped by array."""
        if self._host is None:
            self._host = HostArrays()
        which = self._host.find(addr, sel)
        missing = sel & (which < 0)
        if missing.any():
            lane = tuple(int(i) for i in np.argwhere(missing)[0])
            near = self._host.below(int(addr[lane]))
            if near is not None:  # just past (or before) an array the other lanes use: name it
                region = self._host.region(near)
                self._raise(region, addr - np.int64(region.base), missing, dt, loc, access, "out of bounds")
            raise InterpreterError(
                "TLXC-INTERP-001",
                f"{access} through address {int(addr[lane]):#x}, which is in no pointer argument and in no numpy "
                f"array or CPU tensor the program can reach (lane {lane} of program {self.program})", loc)
        groups = []
        for k in np.unique(which[sel]).tolist():
            group = sel & (which == k)
            groups.append(self._checked(self._host.region(k), addr, group, dt, loc, access))
        return groups

    def _checked(self, region: Region, addr: np.ndarray, sel: np.ndarray | None, dt: np.dtype,
                 loc: Location | None, access: str) -> tuple[Region, np.ndarray, np.ndarray | None]:
        size = dt.itemsize
        off = addr - np.int64(region.base)
        bad = (off < region.lo) | (off > region.hi - size)
        misaligned = (off & np.int64(size - 1)) != 0
        if sel is not None:
            bad &= sel
            misaligned &= sel
        if bad.any():
            self._raise(region, off, bad, dt, loc, access, "out of bounds")
        if misaligned.any():
            self._raise(region, off, misaligned, dt, loc, access, "misaligned")
        return region, off - np.int64(region.lo), sel

    def _raise(self, region: Region, off: np.ndarray, bad: np.ndarray, dt: np.dtype, loc: Location | None,
               access: str, what: str) -> None:
        lane = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        byte = int(off[lane])
        size = dt.itemsize
        count = int(bad.sum())
        others = f" (and {count - 1} more lanes)" if count > 1 else ""
        if what == "misaligned":
            detail = f"byte offset {byte} is not a multiple of {size}, the size of {dt}"
        else:
            detail = f"element index {byte // size} (byte offset {byte}, {dt})"
        raise InterpreterError(
            "TLXC-INTERP-001",
            f"{what} {access} of {region.describe()}: {detail} at lane {lane} of program "
            f"{self.program}{others}", loc)

    # -- gather / scatter -------------------------------------------------------------------
    def load(self, addr: np.ndarray, mask: np.ndarray | None, other: np.ndarray | None, dt: np.dtype,
             loc: Location | None) -> np.ndarray:
        """Gather ``dt`` values; masked-off lanes give ``other`` (zeros without it)."""
        groups = self._groups(addr, mask, dt, loc, "load")
        if mask is None and len(groups) == 1:
            region, rel, _ = groups[0]
            return _gather(region, rel, dt)
        out = np.zeros(addr.shape, dt) if other is None else np.array(other, dtype=dt)
        for region, rel, sel in groups:
            if sel is None:
                out[...] = _gather(region, rel, dt)
            else:
                out[sel] = _gather(region, rel[sel], dt)
        return out

    def store(self, addr: np.ndarray, value: np.ndarray, mask: np.ndarray | None, dt: np.dtype,
              loc: Location | None) -> None:
        """Scatter ``value``; of several lanes writing one address the last one wins."""
        for region, rel, sel in self._groups(addr, mask, dt, loc, "store"):
            if not region.span.flags.writeable:
                raise InterpreterError(
                    "TLXC-INTERP-001", f"store to {region.describe()}, whose numpy array is read-only", loc)
            if sel is None:
                _scatter(region, rel, np.broadcast_to(value, rel.shape), dt)
            else:
                _scatter(region, rel[sel], np.broadcast_to(value, rel.shape)[sel], dt)


def host_view(arg: Any) -> np.ndarray | None:
    """``arg`` as a numpy array over the same memory: a numpy array, or a CPU torch tensor
    (bf16 and fp8 seen through ml_dtypes, as torch's numpy bridge lacks them); None for
    anything else."""
    if isinstance(arg, np.ndarray):
        return arg
    wrapped = getattr(arg, "base", None)
    if wrapped is not None and type(arg).__name__ == "TensorWrapper":  # (tlxc or Triton's) reinterpret: the same bytes
        from ..ir.types import as_tlxc_dtype, numpy_dtype

        base = host_view(wrapped)
        dt = as_tlxc_dtype(arg.dtype)
        if base is None or dt is None:
            return None
        return base.view(numpy_dtype(dt))
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(arg, torch.Tensor) or arg.device.type != "cpu":
        return None
    t = arg.detach()
    import ml_dtypes

    special = {torch.bfloat16: (torch.int16, ml_dtypes.bfloat16)}
    for name, ml in (("float8_e4m3fn", ml_dtypes.float8_e4m3fn), ("float8_e5m2", ml_dtypes.float8_e5m2)):
        if hasattr(torch, name):
            special[getattr(torch, name)] = (torch.uint8, ml)
    if t.dtype in special:
        carrier, ml_type = special[t.dtype]
        return t.view(carrier).numpy().view(ml_type)
    return t.numpy()


class HostArrays:
    """The arrays a kernel can reach by a host address (the module doc), by address range."""

    def __init__(self) -> None:
        spans = []
        seen: set[tuple[int, int]] = set()
        for a in host_arrays():
            if not a.size or a.dtype.hasobject:
                continue
            try:  # plain ndarray views (a masked or matrix subclass reshapes differently)
                a = a.view(np.ndarray)
                _, lo, hi = _span(a)
            except (ValueError, TypeError):
                continue
            data = a.__array_interface__["data"][0]
            if (data + lo, data + hi) not in seen:
                seen.add((data + lo, data + hi))
                spans.append((data + lo, data + hi, a))
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))  # the widest first where two start together
        self.starts = [s[0] for s in spans]
        self.spans = spans
        self.regions: dict[int, Region] = {}

    def find(self, addr: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Per lane, the index of the array whose bytes hold the address (-1: none)."""
        flat_addr, flat_sel = np.asarray(addr).reshape(-1), np.asarray(sel).reshape(-1)
        out = np.full(flat_addr.shape, -1, np.int64)
        for lane in np.flatnonzero(flat_sel).tolist():
            a = int(flat_addr[lane])
            k = bisect.bisect_right(self.starts, a) - 1
            while k >= 0 and self.spans[k][1] <= a:  # an earlier, longer span may still hold it
                k -= 1
                if k >= 0 and self.spans[k][0] <= a < self.spans[k][1]:
                    break
            if k >= 0 and self.spans[k][0] <= a < self.spans[k][1]:
                out[lane] = k
        return out.reshape(np.shape(addr))

    def below(self, a: int, reach: int = 1 << 16) -> int | None:
        """The array that ends at most ``reach`` bytes before address ``a`` (a stray index
        past its end), or None."""
        k = bisect.bisect_right(self.starts, a) - 1
        if k >= 0 and a - self.spans[k][1] < reach:
            return k
        return None

    def region(self, k: int) -> Region:
        if k not in self.regions:
            start, _, a = self.spans[k]
            span, lo, hi = _span(a)
            data = a.__array_interface__["data"][0]
            self.regions[k] = Region(-1 - k, f"host array at {data:#x}", a, data, span, lo, hi)
        return self.regions[k]


def host_arrays() -> list[np.ndarray]:
    """The numpy arrays (and CPU torch tensors, as numpy views of their memory) held by the
    calling frames' variables, module globals, and lists, tuples and dicts anywhere."""
    torch = sys.modules.get("torch")
    out: list[np.ndarray] = []

    # Types are tested with ``issubclass(type(v), ...)``: ``isinstance`` reads ``__class__``,
    # which some objects in the heap compute (lazy proxies, deprecated module aliases that
    # warn or raise), and walking the heap must not run their code.
    def add(v: Any) -> None:
        t = type(v)
        if issubclass(t, np.ndarray):
            out.append(v)
        elif torch is not None and issubclass(t, torch.Tensor) and v.device.type == "cpu":
            try:
                out.append(v.detach().numpy())
            except (RuntimeError, TypeError):  # a dtype numpy lacks: read its bytes
                out.append(v.detach().view(torch.uint8).numpy())

    frame = sys._getframe(1)
    while frame is not None:
        for v in list(frame.f_locals.values()):
            add(v)
        frame = frame.f_back
    for obj in gc.get_objects():
        if obj is out:  # (it grows while we walk)
            continue
        t = type(obj)
        if issubclass(t, dict):
            for v in list(obj.values()):
                add(v)
        elif issubclass(t, (list, tuple)):
            for v in obj:
                add(v)
    return out


def _gather(region: Region, rel: np.ndarray, dt: np.dtype) -> np.ndarray:
    typed = region.view(dt)
    if typed is not None:
        return typed[rel // dt.itemsize]
    idx = rel[..., None] + np.arange(dt.itemsize)
    return np.ascontiguousarray(region.span[idx]).view(dt).reshape(rel.shape)


def _scatter(region: Region, rel: np.ndarray, value: np.ndarray, dt: np.dtype) -> None:
    typed = region.view(dt)
    if typed is not None:
        typed[rel // dt.itemsize] = value
        return
    idx = rel[..., None] + np.arange(dt.itemsize)
    raw = np.ascontiguousarray(value, dtype=dt).reshape(-1).view(np.uint8)
    region.span[idx] = raw.reshape(idx.shape)
