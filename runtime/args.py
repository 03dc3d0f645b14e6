"""The argument plan of a compiled kernel: how a launch's Python values become the
``kernelParams`` array of ``cuLaunchKernel``.

A plan is made once per compiled kernel from its runtime parameters, given in Triton's
signature form (``"*fp32:16"``, ``"i32"``, ``"i64:16"``, ``"fp16"``,
``"tensordesc<fp16[64,64]>"``) -- ``str()`` of a
compiler ``ArgSpec`` is exactly that. It lays the values out in one ctypes buffer
(each slot aligned to its size) behind a fixed array of pointers to the slots, so a
launch writes the buffer with one ``struct.pack_into`` and hands the driver a pointer
array made beforehand: no per-launch allocation.

``emit`` writes the Python statements that check and convert the arguments, which the
launcher compiles into one function per kernel (as Triton generates its launcher). The
common cases are inline: a ``torch.Tensor`` (dtype and device checked by identity) and a
``DeviceArray``; every other value goes through ``pointer_value``, which accepts
anything with ``data_ptr()`` or ``__cuda_array_interface__`` (CuPy, numba), an int
address or None, and explains what is wrong otherwise. Integer range and float
conversion are left to ``struct`` in the hot path; when it fails, ``diagnose`` finds
the argument and says why.

A host TMA descriptor parameter (``tensordesc<fp16[64,64]>``) takes a 128-byte slot,
64-byte aligned: the launch encodes the ``TensorDescriptor`` argument with the swizzle
the compiler chose (``tma_params``; runtime/tma.py), keeping the bytes by the
descriptor's values. Plans without descriptors do no extra work. On AMD GPUs
(``descriptor_fields``) the slot holds the descriptor's fields instead: its base address,
sizes and strides (``8 + 8 * rank`` bytes, 8-byte aligned), which the kernel reads
through pointers (tlxc/ir/passes/host_descriptors.py).

A kernel that needs global scratch (``global_scratch=True``: it builds TMA descriptors on
the device) has one more slot after its parameters, a hidden ``u64`` pointer that no
argument fills: the launcher packs the address it got from the allocator
(runtime/scratch.py) as the last value.
"""

from __future__ import annotations

import ctypes
import numbers
import operator
import re
import struct
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from . import tma
from .dtypes import SCALAR_FORMATS, TORCH_NAMES, canonical, sig_of_dtype, sig_of_typestr
from .errors import LaunchError

# What struct, the fast-path checks or a wrong argument object can raise before
# ``diagnose`` turns it into a LaunchError.
ARG_ERRORS = (struct.error, TypeError, ValueError, OverflowError, AttributeError, IndexError)

_INT_RANGES = {"i1": (0, 1), "i8": (-(1 << 7), (1 << 7) - 1), "i16": (-(1 << 15), (1 << 15) - 1),
               "i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1),
               "u8": (0, (1 << 8) - 1), "u16": (0, (1 << 16) - 1), "u32": (0, (1 << 32) - 1),
               "u64": (0, (1 << 64) - 1)}
_FLOAT_MAX = {"fp16": 65504.0, "bf16": 3.3895313892515355e38, "fp32": 3.4028234663852886e38}


@dataclass(frozen=True)
class Param:
    """One runtime parameter. ``kind`` is ``ptr``, ``int``, ``float`` or ``tensordesc``
    (a host TMA descriptor, runtime/tma.py); ``dtype`` the signature name of the value (of
    the pointee for pointers, of the elements for descriptors); ``align`` the byte
    alignment a pointer was specialized on and ``divisibility`` the divisor an integer
    was specialized on (1 when nothing is assumed). A descriptor has the ``block`` shape it
    was compiled for and the ``swizzle`` (bytes) the compiler chose, from the kernel's
    metadata ``tma_params`` (None until given), and optionally the ``box`` of one TMA
    message (``tma.tma_box`` of the block when None). ``fields``: the descriptor is
    passed as its fields instead of a CUtensorMap (AMD: the base address, then the sizes
    and the strides as i32, which the kernel's ``unpack_tensor_descriptor`` reads)."""

    name: str
    kind: str
    dtype: str
    align: int = 1
    divisibility: int = 1
    block: tuple[int, ...] = ()
    swizzle: int | None = None
    box: tuple[int, ...] | None = None
    fields: bool = False

    @property
    def format(self) -> str:
        if self.kind == "tensordesc":
            return f"{self.size}s"
        return "Q" if self.kind == "ptr" else SCALAR_FORMATS[self.dtype][0]  # type: ignore[return-value]

    @property
    def size(self) -> int:
        if self.kind == "tensordesc":
            return 8 + 8 * len(self.block) if self.fields else tma.DESCRIPTOR_BYTES
        return 8 if self.kind == "ptr" else SCALAR_FORMATS[self.dtype][1]

    @property
    def alignment(self) -> int:
        """The byte alignment of the parameter's slot (a CUtensorMap is 64-byte aligned,
        the fields form as its base pointer)."""
        if self.kind == "tensordesc":
            return 8 if self.fields else tma.DESCRIPTOR_ALIGN
        return self.size

    def __str__(self) -> str:
        if self.kind == "ptr":
            return f"*{self.dtype}" + (f":{self.align}" if self.align > 1 else "")
        if self.kind == "tensordesc":
            return (f"tensordesc<{self.dtype}[{','.join(str(b) for b in self.block)}]>"
                    + (f":{self.divisibility}" if self.divisibility > 1 else ""))
        return self.dtype + (f":{self.divisibility}" if self.divisibility > 1 else "")

    def describe(self, index: int) -> str:
        return f"argument {index} '{self.name}' ({self})"


# a host TMA descriptor parameter, Triton's spelling: tensordesc<fp16[64, 64]> (the compiler's
# signatures read it with this too)
TENSORDESC = re.compile(r"tensordesc\s*<\s*(\w+)\s*\[([\d,\s]*)\]\s*>(?::(\d+))?")


def parse_param(entry: Any, name: str) -> Param:
    """``"*fp32:16"`` / ``"i32"`` / ``"i64:16"`` / ``"fp16"`` / ``"tensordesc<fp16[64,64]>"``
    (or a compiler ``ArgSpec``, whose ``str()`` is that) to a Param."""
    if isinstance(entry, Param):
        return entry
    text = str(entry).strip()
    if text.startswith("tensordesc"):
        return _parse_tensordesc(text, name)
    s, spec = text, 1
    if ":" in s:
        s, d = s.rsplit(":", 1)
        try:
            spec = int(d)
        except ValueError:
            raise ValueError(f"bad specialization ':{d}' in parameter '{name}': {text!r}") from None
    s = s.strip()
    if s == "constexpr":
        raise ValueError(f"parameter '{name}' is a constexpr: it is compiled into the kernel, not passed at launch; "
                         "leave it out of the argument plan")
    if s.startswith("nvTmaDesc"):
        raise ValueError(f"parameter '{name}': {s} (a pointer to a TMA descriptor in GPU memory) is not supported; "
                         "pass host TMA descriptors by value as tensordesc<dtype[block]> parameters")
    ptr = s.startswith("*")
    base = s[1:].strip() if ptr else s
    if ptr and base.startswith("k"):  # Triton's "*k" spelling for pointers to constant memory
        base = base[1:]
    try:
        dtype = canonical(base)
    except KeyError:
        raise ValueError(f"unknown type {base!r} for parameter '{name}' in {text!r}; types are i1, i8..i64, "
                         "u8..u64, fp16, bf16, fp32, fp64, fp8e4nv, fp8e5, fp8e4b8, fp8e5b16, and pointers start "
                         "with *") from None
    if ptr:
        return Param(name, "ptr", dtype, align=max(spec, 1))
    if SCALAR_FORMATS[dtype][0] is None:
        raise ValueError(f"parameter '{name}': a kernel cannot take a scalar of type {dtype}")
    if dtype.startswith("fp") or dtype == "bf16":
        if spec > 1:
            raise ValueError(f"parameter '{name}': floats cannot be specialized on divisibility ({text!r})")
        return Param(name, "float", dtype)
    return Param(name, "int", dtype, divisibility=max(spec, 1))


def _parse_tensordesc(text: str, name: str) -> Param:
    """``tensordesc<fp16[64,64]>`` (Triton's spelling, spaces allowed) to a Param."""
    m = TENSORDESC.fullmatch(text)
    if m is None:
        raise ValueError(f"parameter '{name}': cannot read the TMA descriptor type {text!r}; write it as "
                         "tensordesc<fp16[64,64]> (element type, then the block shape)")
    try:
        dtype = tma.element_name(m.group(1))
        block = tuple(int(b) for b in m.group(2).split(",") if b.strip())
        tma.check_block_shape(block)
    except ValueError as e:
        raise ValueError(f"parameter '{name}' ({text}): {e}") from None
    return Param(name, "tensordesc", dtype, block=block, divisibility=int(m.group(3) or 1))


def split_signature(text: str) -> list[str]:
    """A signature string split at its top-level commas (``tensordesc<fp16[64,64]>`` holds
    commas of its own); empty entries dropped."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<[(":
            depth += 1
        elif c in ">])":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (x.strip() for x in parts) if p]


def apply_tma_params(params: Sequence[Param], tma_params: Sequence[Mapping[str, Any]] | None) -> tuple[Param, ...]:
    """``params`` with the swizzle (and box) of each host descriptor parameter taken from
    the kernel's metadata ``tma_params``: a list of ``{"index": i, "block_shape": [...],
    "element": "f16", "swizzle": 0|32|64|128}`` (optionally ``"box": [...]``), ``index``
    counting runtime parameters. ``ValueError`` where an entry does not match the signature."""
    out = list(params)
    for entry in tma_params or ():
        try:
            i = int(entry["index"])
            p = out[i]
            block = tuple(int(b) for b in entry["block_shape"])
            elem = tma.element_name(str(entry["element"]))
            swizzle = int(entry["swizzle"])
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise ValueError(f"bad tma_params entry {entry!r} for a kernel with {len(out)} parameters: "
                             f"{type(e).__name__}: {e}") from None
        if p.kind != "tensordesc":
            raise ValueError(f"tma_params names parameter {i} '{p.name}', which is {p}, not a tensordesc")
        if block != p.block or elem != p.dtype:
            raise ValueError(f"tma_params gives parameter {i} '{p.name}' blocks of {elem}{list(block)}, but its "
                             f"signature is {p}")
        if swizzle not in tma.SWIZZLES:
            raise ValueError(f"tma_params gives parameter {i} '{p.name}' swizzle {swizzle}; it must be one of "
                             f"{tma.SWIZZLES}")
        box = entry.get("box")
        out[i] = replace(p, swizzle=swizzle, box=None if box is None else tuple(int(b) for b in box))
    return tuple(out)


def bf16_bits(x: Any) -> int:
    """The bits of ``x`` rounded to bfloat16 (round to nearest even; NaN stays NaN)."""
    (b,) = struct.unpack("<I", struct.pack("<f", x))
    if (b & 0x7F800000) == 0x7F800000 and b & 0x7FFFFF:
        return (b >> 16) | 0x40
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16


class _NoTorch:
    """Stands for ``torch.Tensor`` in the fast path until a tensor has been seen."""


class ArgPlan:
    """How the runtime parameters of one compiled kernel are packed.

    ``params`` is a sequence of signature entries (``["*fp32:16", "*fp32:16", "i32"]``),
    one string of them separated by commas, a mapping from names to entries, or Params.
    ``names`` names the parameters in messages (``arg0``... if not given).
    ``tma_params`` is the kernel's metadata of that name, which gives each host TMA
    descriptor parameter its swizzle (``apply_tma_params``). ``global_scratch`` adds the
    hidden trailing pointer to the launch's global scratch (packed after the arguments).
    ``descriptor_fields`` passes descriptors as their fields (``Param.fields``: AMD).
    ``print_buffer`` adds the hidden trailing pointer to the buffer of ``tl.device_print``
    records of an AMD kernel (runtime/device_print.py).
    """

    def __init__(self, params: Sequence[Any] | Mapping[str, Any] | str, names: Sequence[str] | None = None,
                 tma_params: Sequence[Mapping[str, Any]] | None = None, global_scratch: bool = False,
                 descriptor_fields: bool = False, print_buffer: bool = False) -> None:
        if isinstance(params, Mapping):
            names, params = list(params.keys()), list(params.values())
        elif isinstance(params, str):
            params = split_signature(params)
        params = list(params)
        if names is None:
            names = [p.name if isinstance(p, Param) else f"arg{i}" for i, p in enumerate(params)]
        if len(names) != len(params):
            raise ValueError(f"{len(names)} names for {len(params)} parameters")
        parsed = [parse_param(p, n) for p, n in zip(params, names)]
        if descriptor_fields:
            self.params: tuple[Param, ...] = tuple(replace(p, fields=True) if p.kind == "tensordesc" else p
                                                   for p in parsed)
        else:
            self.params = apply_tma_params(parsed, tma_params)
        # a CUtensorMap slot is 64-byte aligned in the buffer, and the buffer then too (new_slot)
        self.alignment = max([8] + [p.alignment for p in self.params])
        offsets, off, fmt = [], 0, "<"
        for p in self.params:
            pad = -off % p.alignment
            fmt += "x" * pad
            off += pad
            offsets.append(off)
            fmt += p.format
            off += p.size
        self.global_scratch = bool(global_scratch)
        self.print_buffer = bool(print_buffer)
        if self.global_scratch and self.print_buffer:
            raise ValueError("a kernel takes one hidden pointer: global scratch (NVIDIA) or a print buffer (AMD)")
        if self.hidden_pointer:  # a u64 slot after the arguments
            pad = -off % 8
            fmt += "x" * pad + "Q"
            offsets.append(off + pad)
            off += pad + 8
        self.offsets: tuple[int, ...] = tuple(offsets)
        self.size = off
        self.format = fmt  # little-endian, explicit padding: struct.pack(format, *values) is the buffer
        self.struct = struct.Struct(fmt)
        assert self.struct.size == off
        self._slots: list[Any] = []  # every buffer and pointer array handed out, kept alive with the plan
        self.buffer, self.params_address = self.new_slot()

    def new_slot(self) -> tuple[Any, int]:
        """A buffer for one launch's values and the address of the array of pointers to its
        slots (the ``kernelParams`` of ``cuLaunchKernel``; 0 when there are no parameters).
        The launcher keeps a pool of these, so that threads launching one kernel at once
        never share a buffer."""
        if not self.offsets:
            return None, 0
        buf = (ctypes.c_char * max(self.size, 8))()
        if self.alignment > 8:  # a view of a larger buffer that starts at an aligned address
            raw = (ctypes.c_char * (max(self.size, 8) + self.alignment))()
            buf = type(buf).from_buffer(raw, -ctypes.addressof(raw) % self.alignment)
        base = ctypes.addressof(buf)
        ptrs = (ctypes.c_void_p * len(self.offsets))(*[base + o for o in self.offsets])
        self._slots.append((buf, ptrs))
        return buf, ctypes.addressof(ptrs)

    @property
    def hidden_pointer(self) -> bool:
        """Whether a launch packs a pointer after the arguments (global scratch or the
        device_print buffer)."""
        return self.global_scratch or self.print_buffer

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def signature(self) -> list[str]:
        return [str(p) for p in self.params]

    def __len__(self) -> int:
        return len(self.params)

    def __repr__(self) -> str:
        hidden = ", (global scratch)" if self.global_scratch else ", (print buffer)" if self.print_buffer else ""
        return "ArgPlan(" + ", ".join(f"{p.name}: {p}" for p in self.params) + hidden + ")"

    # -- the slow path: full checks with messages --------------------------------------------------
    def pointer_value(self, i: int, a: Any, device: int, ns: dict[str, Any] | None = None,
                      what: str | None = None, check_dtype: bool = True) -> int:
        """The address that argument ``i`` passes, after checking that it is in GPU memory,
        of the signature's dtype and aligned as the variant assumes; ``LaunchError`` if not.
        Seeing a ``torch.Tensor`` arms the inline fast path of ``ns``. ``what`` names the
        value in messages (the argument by default); ``check_dtype`` False leaves the
        dtype to the caller (a ``TensorWrapper``'s base)."""
        p = self.params[i]
        what = what or p.describe(i)
        if a is None:
            return 0  # a null pointer, as Triton allows
        if type(a).__name__ == "TensorWrapper":
            # tlxc.reinterpret: the base's memory (checked as any argument's) with the
            # wrapper's element type, a tl dtype, in place of the base's own
            self._dtype_ok(i, getattr(a.dtype, "sig_name", None), a.dtype)
            return self.pointer_value(i, a.base, device, None, what, check_dtype=False)
        if isinstance(a, bool):
            raise LaunchError(f"{what} is a bool; a pointer parameter takes a GPU tensor or array", i, p.name)
        if isinstance(a, numbers.Integral):
            return self._aligned(i, operator.index(a))  # a raw device address: nothing else to check
        from .memory import DeviceArray

        if isinstance(a, DeviceArray):
            if not a.ptr:
                raise LaunchError(f"{what} is a DeviceArray that was freed", i, p.name)
            if check_dtype:
                self._dtype_ok(i, a.sig, a.dtype)
            return self._aligned(i, a.ptr)
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(a, torch.Tensor):
            dev = a.device
            if dev.type != "cuda":
                raise LaunchError(f"{what} is a torch tensor on {dev}, not on the GPU; move it with .cuda() or "
                                  ".to('cuda') before launching", i, p.name)
            if dev.index != device:
                raise LaunchError(f"{what} is a torch tensor on {dev} but the kernel runs on cuda:{device}; move the "
                                  f"tensor there (or make cuda:{dev.index} current before the first launch)", i, p.name)
            if check_dtype:
                self._dtype_ok(i, sig_of_dtype(a.dtype), a.dtype)
            ptr = self._aligned(i, int(a.data_ptr()))
            if type(a) is torch.Tensor and ns is not None:
                ns["_T"] = torch.Tensor
                for j, q in enumerate(self.params):
                    if q.kind == "ptr":
                        ns[f"_td{j}"] = getattr(torch, TORCH_NAMES.get(q.dtype, ""), None)
            return ptr
        cai = getattr(a, "__cuda_array_interface__", None)
        if cai is not None:
            ptr = int(cai["data"][0]) if cai.get("data") else 0
            typestr = cai.get("typestr", "")
            sig = sig_of_typestr(typestr)
            if check_dtype and (sig is not None or not typestr.lstrip("<>|=").startswith("V")):
                self._dtype_ok(i, sig, typestr)
            return self._aligned(i, ptr)
        if hasattr(a, "__array_interface__") or hasattr(a, "__array__") and not hasattr(a, "data_ptr"):
            raise LaunchError(f"{what} is a {type(a).__module__}.{type(a).__name__} in host memory, not on the GPU; "
                              "copy it to the device first (tlxc.runtime.DeviceArray.from_numpy(x), "
                              "torch.from_numpy(x).cuda() or cupy.asarray(x))", i, p.name)
        if hasattr(a, "data_ptr"):
            if getattr(a, "is_cuda", True) is False:
                raise LaunchError(f"{what} is a {type(a).__name__} on {getattr(a, 'device', 'the host')}, not on the "
                                  "GPU; move it to the GPU before launching", i, p.name)
            dt = getattr(a, "dtype", None)
            if dt is not None and check_dtype:
                self._dtype_ok(i, sig_of_dtype(dt), dt)
            return self._aligned(i, int(a.data_ptr()))
        raise LaunchError(f"{what}: cannot pass a {type(a).__name__} for a pointer; pass a tensor or array in GPU "
                          "memory (PyTorch, CuPy, numba, tlxc.runtime.DeviceArray), an int address or None", i, p.name)

    def _dtype_ok(self, i: int, sig: str | None, shown: Any) -> None:
        p = self.params[i]
        if sig != p.dtype:
            what = "descriptors of" if p.kind == "tensordesc" else "pointers to"
            raise LaunchError(f"{p.describe(i)}: the array has dtype {shown}"
                              + (f" ({sig})" if sig and sig != str(shown) else "")
                              + f" but this kernel was compiled for {what} {p.dtype}; pass a {p.dtype} array "
                              "or compile a variant for this dtype", i, p.name)

    def descriptor_value(self, i: int, d: Any, device: int) -> bytes:
        """The encoded CUtensorMap (128 bytes) that descriptor argument ``i`` passes, after
        checking it against the compiled kernel: a tensor descriptor whose block shape and
        dtype are the kernel's, over GPU memory, with a layout TMA accepts; ``LaunchError``
        naming the argument if not."""
        p = self.params[i]
        what = p.describe(i)
        if p.swizzle is None and not p.fields:
            raise LaunchError(f"{what}: the kernel's metadata gives no swizzle for this TMA descriptor (tma_params); "
                              "pass the compiled kernel's metadata to LoadedKernel", i, p.name)
        if not all(hasattr(d, f) for f in ("base", "shape", "strides", "block_shape")):
            raise LaunchError(f"{what} takes a tensor descriptor (tlxc.TensorDescriptor(base, shape, strides, "
                              f"block_shape) or TensorDescriptor.from_tensor(t, block_shape)), got "
                              f"{type(d).__name__}", i, p.name)
        try:
            block = tuple(operator.index(b) for b in d.block_shape)
        except TypeError:
            block = None
        if block != p.block:
            raise LaunchError(f"{what}: the descriptor's block_shape is {list(d.block_shape)} but this kernel was "
                              f"compiled for {list(p.block)}; set desc.block_shape (e.g. in the autotuner's "
                              "pre_hook) before launching, or compile a variant for that block shape", i, p.name)
        if d.base is None:
            raise LaunchError(f"{what}: the descriptor's base is None; it must be a tensor in GPU memory", i, p.name)
        address = self.pointer_value(i, d.base, device, what=f"the base of {what}")
        if p.fields:
            return self._fields(i, d, address)
        try:
            return tma.encode(address, p.dtype, d.shape, d.strides, p.block, p.swizzle, getattr(d, "padding", "zero"),
                              p.box)
        except ValueError as e:
            raise LaunchError(f"{what}: {e}", i, p.name) from None

    def _fields(self, i: int, d: Any, address: int) -> bytes:
        """Descriptor argument ``i`` as its fields: the base address, the sizes, the strides
        (elements), as the kernel unpacks them. The rules are TMA's (a 16-byte aligned base,
        the last stride 1, the others multiples of 16 bytes), which the kernel's accesses
        rely on as a TMA descriptor's would, and the values must fit in 31 bits."""
        p = self.params[i]
        what = p.describe(i)
        try:
            tma.check_base(address)
            shape, strides = tma.check_layout(d.shape, d.strides, tma.element_bytes(p.dtype))
            tma.check_padding(getattr(d, "padding", "zero"), p.dtype)
        except ValueError as e:
            raise LaunchError(f"{what}: {e}", i, p.name) from None
        rank = len(p.block)
        if len(shape) != rank:
            raise LaunchError(f"{what}: the kernel was compiled for a rank-{rank} descriptor, got shape "
                              f"{list(shape)}", i, p.name)
        if any(x >= 1 << 31 for x in shape + strides):
            raise LaunchError(f"{what}: sizes and strides must fit in 31 bits on this target, got shape {list(shape)} "
                              f"and strides {list(strides)}", i, p.name)
        if getattr(d, "padding", "zero") != "zero":
            raise LaunchError(f"{what}: padding={d.padding!r}: on AMD GPUs descriptors are read through pointers "
                              "and pad with zeros only", i, p.name)
        if p.divisibility > 1 and any(x % p.divisibility for x in shape):
            raise LaunchError(f"{what}: shape {list(shape)} is not all multiples of {p.divisibility}, but this variant "
                              f"was specialized on sizes divisible by {p.divisibility}; compile a variant without "
                              f"':{p.divisibility}'", i, p.name)
        return struct.pack(f"<Q{2 * rank}i", address, *shape, *strides)

    def descriptor_encoder(self, i: int, device: int) -> Callable[[Any], bytes]:
        """``descriptor_value`` of argument ``i`` for the launch function: the bytes kept by
        what decides them (a torch-like base's address and dtype, shape, strides, block
        shape, padding), so that launching with the same descriptor again is one lookup."""
        cache: dict[tuple, bytes] = {}
        slow = self.descriptor_value

        def encode(d: Any) -> bytes:
            try:
                b = d.base
                key = (b.data_ptr(), b.dtype, tuple(d.shape), tuple(d.strides), tuple(d.block_shape), d.padding)
                data = cache.get(key)
            except Exception:  # no data_ptr() (DeviceArray, CuPy...) or not a descriptor: the checks say
                return slow(i, d, device)
            if data is None:
                data = slow(i, d, device)
                if len(cache) >= 64:
                    cache.clear()
                cache[key] = data
            return data

        return encode

    def _aligned(self, i: int, ptr: int) -> int:
        p = self.params[i]
        if p.align > 1 and ptr % p.align:
            raise LaunchError(f"{p.describe(i)}: the pointer 0x{ptr:x} is not {p.align}-byte aligned, but this variant "
                              f"was specialized on {p.align}-byte alignment; pass an aligned tensor (e.g. a fresh "
                              "allocation or .clone()) or compile without the ':16' specialization", i, p.name)
        return ptr

    def check_scalar(self, i: int, a: Any) -> None:
        """``LaunchError`` if scalar argument ``i`` cannot be passed as its parameter's type."""
        p = self.params[i]
        what = p.describe(i)
        if p.kind == "int":
            if p.dtype == "i1":
                return  # any value passes by its truth, as a Python condition would
            try:
                v = operator.index(a)
            except TypeError:
                raise LaunchError(f"{what} must be an integer, got {type(a).__name__} {a!r}", i, p.name) from None
            lo, hi = _INT_RANGES[p.dtype]
            if not lo <= v <= hi:
                raise LaunchError(f"{what}: {v} is out of range for {p.dtype} ([{lo}, {hi}]); compile a variant for "
                                  "a wider integer type", i, p.name)
            if p.divisibility > 1 and v % p.divisibility:
                raise LaunchError(f"{what}: {v} is not a multiple of {p.divisibility}, but this variant was "
                                  f"specialized on divisibility by {p.divisibility}; compile a variant without "
                                  f"':{p.divisibility}'", i, p.name)
        elif p.kind == "float":
            try:
                v = float(a)
            except (TypeError, ValueError):
                raise LaunchError(f"{what} must be a number, got {type(a).__name__} {a!r}", i, p.name) from None
            m = _FLOAT_MAX.get(p.dtype)
            if m is not None and abs(v) > m and abs(v) != float("inf"):
                raise LaunchError(f"{what}: {v!r} does not fit in {p.dtype} (largest finite value {m:g})", i, p.name)

    def diagnose(self, args: Any, device: int = 0) -> None:
        """Raise the ``LaunchError`` that explains why ``args`` cannot be packed (does
        nothing if every argument is fine)."""
        try:
            n = len(args)
        except TypeError:
            raise LaunchError(f"the arguments must be a tuple or list, got {type(args).__name__}") from None
        if n != len(self.params):
            k = len(self.params)
            raise LaunchError(f"the kernel takes {k} argument{'' if k == 1 else 's'} ({', '.join(self.names)}) but "
                              f"{n} {'was' if n == 1 else 'were'} given")
        for i, (p, a) in enumerate(zip(self.params, args)):
            if p.kind == "ptr":
                self.pointer_value(i, a, device)
            elif p.kind == "tensordesc":
                self.descriptor_value(i, a, device)
            else:
                self.check_scalar(i, a)

    # -- the fast path: generated code ---------------------------------------------------------------
    def emit(self, ns: dict[str, Any], device: int, single_device: bool = False,
             trusted: bool = False) -> tuple[list[str], list[str]]:
        """(statements that unpack ``args`` and check and convert them, the expressions to
        pack in order): the launcher compiles them into its launch function, followed by
        ``_pack_into(buffer, 0, *values)``. Names they use are put in ``ns``. A bad pointer
        argument raises ``LaunchError``; anything else wrong raises one of ``ARG_ERRORS``
        (a wrong count or type, an int out of range), after which ``diagnose`` explains.
        With ``single_device`` (one GPU visible), a tensor's ``is_cuda`` is enough to know
        that it is on the kernel's device, which is cheaper to ask than ``get_device()``.

        ``trusted``: for ``LoadedKernel.launch_trusted``, whose caller has checked what the
        checks here check (the fast path of ``kernel[grid]``, by its key): a pointer
        argument is already its address (an int) and an int's divisibility is known."""
        from .memory import DeviceArray

        ns.update(_T=_NoTorch, _DA=DeviceArray, _dev=device, _pack_into=self.struct.pack_into, _bf16=bf16_bits)
        ns["_ptr"] = lambda i, a: self.pointer_value(i, a, device, ns)
        n = len(self.params)
        unpack = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
        # a wrong count raises ValueError (trusted: the arguments are the function's parameters)
        lines = [] if trusted else [f"{unpack} = args" if n else "[] = args"]
        values = []
        torch = sys.modules.get("torch")
        for i, p in enumerate(self.params):
            a = f"a{i}"
            if trusted and (p.kind == "ptr" or p.kind == "int"):
                values.append(a)
            elif p.kind == "ptr":
                # torch.Tensor and DeviceArray inline, checked by identity; the rest through _ptr
                ns[f"_td{i}"] = getattr(torch, TORCH_NAMES.get(p.dtype, ""), None) if torch is not None else None
                lines += [f"t = type({a})",
                          "if t is _T:",
                          f"    if {a}.dtype is not _td{i} or " + (f"not {a}.is_cuda:" if single_device
                                                                         else f"{a}.get_device() != _dev:"),
                          f"        _ptr({i}, {a})",
                          f"    p{i} = {a}.data_ptr()"]
                if p.align > 1:
                    lines += [f"    if p{i} & {p.align - 1}:", f"        _ptr({i}, {a})"]
                lines += ["elif t is _DA:",  # cuMemAlloc'ed, so 256-byte aligned
                          f"    if {a}.sig != {p.dtype!r}:",
                          f"        _ptr({i}, {a})",
                          f"    p{i} = {a}.ptr",
                          "else:",
                          f"    p{i} = _ptr({i}, {a})"]
                values.append(f"p{i}")
            elif p.kind == "tensordesc":
                ns[f"_tma{i}"] = self.descriptor_encoder(i, device)
                values.append(f"_tma{i}({a})")
            elif p.kind == "int" and p.divisibility > 1:
                lines += [f"if {a} % {p.divisibility}:", f"    raise ValueError({a})"]
                values.append(a)
            elif p.dtype == "bf16":
                values.append(f"_bf16({a})")
            else:
                values.append(a)
        return lines, values

    def packer(self, device: int = 0) -> Callable[[Any], None]:
        """A function ``pack(args)`` that checks ``args`` and writes them into
        ``self.buffer`` as a launch does; for tests and other launchers."""
        ns: dict[str, Any] = {"_ARG_ERRORS": ARG_ERRORS, "_diagnose": lambda args: self.diagnose(args, device),
                              "_buf": self.buffer}
        lines, values = self.emit(ns, device)
        values += ["0"] if self.hidden_pointer else []  # no scratch or print buffer here: a null pointer
        body = lines + ([f"_pack_into(_buf, 0, {', '.join(values)})"] if values else [])
        src = "def pack(args):\n    try:\n" + "".join(f"        {ln}\n" for ln in body)
        src += "    except _ARG_ERRORS:\n        _diagnose(args)\n        raise\n"
        exec(compile(src, f"<tlxc argument packer {self.signature}>", "exec"), ns)
        return ns["pack"]

    def pack(self, args: Sequence[Any], device: int = 0) -> bytes:
        """Pack ``args`` and return a copy of the bytes (slow: builds a packer each call)."""
        self.packer(device)(args)
        return bytes(self.buffer)[: self.size] if self.offsets else b""
