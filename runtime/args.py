"""The argument plan of a compiled kernel: how a launch's Python values become the
``kernelParams`` array of ``cuLaunchKernel``.

A plan is made once per compiled kernel from its runtime parameters, given in Triton's
signature form (``"*fp32:16"``, ``"i32"``, ``"i64:16"``, ``"fp16"``) -- ``str()`` of a
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
"""

from __future__ import annotations

import ctypes
import numbers
import operator
import struct
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

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
    """One runtime parameter. ``kind`` is ``ptr``, ``int`` or ``float``; ``dtype`` the
    signature name of the value (of the pointee for pointers); ``align`` the byte
    alignment a pointer was specialized on and ``divisibility`` the divisor an integer
    was specialized on (1 when nothing is assumed)."""

    name: str
    kind: str
    dtype: str
    align: int = 1
    divisibility: int = 1

    @property
    def format(self) -> str:
        return "Q" if self.kind == "ptr" else SCALAR_FORMATS[self.dtype][0]  # type: ignore[return-value]

    @property
    def size(self) -> int:
        return 8 if self.kind == "ptr" else SCALAR_FORMATS[self.dtype][1]

    def __str__(self) -> str:
        if self.kind == "ptr":
            return f"*{self.dtype}" + (f":{self.align}" if self.align > 1 else "")
        return self.dtype + (f":{self.divisibility}" if self.divisibility > 1 else "")

    def describe(self, index: int) -> str:
        return f"argument {index} '{self.name}' ({self})"


def parse_param(entry: Any, name: str) -> Param:
    """``"*fp32:16"`` / ``"i32"`` / ``"i64:16"`` / ``"fp16"`` (or a compiler ``ArgSpec``,
    whose ``str()`` is that) to a Param."""
    if isinstance(entry, Param):
        return entry
    text = str(entry).strip()
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
    if s.startswith(("tensordesc", "nvTmaDesc")):
        raise ValueError(f"parameter '{name}': host TMA descriptors ({s}) are not supported by the runtime yet")
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
    """

    def __init__(self, params: Sequence[Any] | Mapping[str, Any] | str, names: Sequence[str] | None = None) -> None:
        if isinstance(params, Mapping):
            names, params = list(params.keys()), list(params.values())
        elif isinstance(params, str):
            params = [p for p in (x.strip() for x in params.split(",")) if p]
        params = list(params)
        if names is None:
            names = [p.name if isinstance(p, Param) else f"arg{i}" for i, p in enumerate(params)]
        if len(names) != len(params):
            raise ValueError(f"{len(names)} names for {len(params)} parameters")
        self.params: tuple[Param, ...] = tuple(parse_param(p, n) for p, n in zip(params, names))
        offsets, off, fmt = [], 0, "<"
        for p in self.params:
            pad = -off % p.size
            fmt += "x" * pad
            off += pad
            offsets.append(off)
            fmt += p.format
            off += p.size
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
        if not self.params:
            return None, 0
        buf = (ctypes.c_char * max(self.size, 8))()
        base = ctypes.addressof(buf)
        ptrs = (ctypes.c_void_p * len(self.params))(*[base + o for o in self.offsets])
        self._slots.append((buf, ptrs))
        return buf, ctypes.addressof(ptrs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def signature(self) -> list[str]:
        return [str(p) for p in self.params]

    def __len__(self) -> int:
        return len(self.params)

    def __repr__(self) -> str:
        return "ArgPlan(" + ", ".join(f"{p.name}: {p}" for p in self.params) + ")"

    # -- the slow path: full checks with messages --------------------------------------------------
    def pointer_value(self, i: int, a: Any, device: int, ns: dict[str, Any] | None = None) -> int:
        """The address that argument ``i`` passes, after checking that it is in GPU memory,
        of the signature's dtype and aligned as the variant assumes; ``LaunchError`` if not.
        Seeing a ``torch.Tensor`` arms the inline fast path of ``ns``."""
        p = self.params[i]
        what = p.describe(i)
        if a is None:
            return 0  # a null pointer, as Triton allows
        if isinstance(a, bool):
            raise LaunchError(f"{what} is a bool; a pointer parameter takes a GPU tensor or array", i, p.name)
        if isinstance(a, numbers.Integral):
            return self._aligned(i, operator.index(a))  # a raw device address: nothing else to check
        from .memory import DeviceArray

        if isinstance(a, DeviceArray):
            if not a.ptr:
                raise LaunchError(f"{what} is a DeviceArray that was freed", i, p.name)
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
            if sig is not None or not typestr.lstrip("<>|=").startswith("V"):
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
            if dt is not None:
                self._dtype_ok(i, sig_of_dtype(dt), dt)
            return self._aligned(i, int(a.data_ptr()))
        raise LaunchError(f"{what}: cannot pass a {type(a).__name__} for a pointer; pass a tensor or array in GPU "
                          "memory (PyTorch, CuPy, numba, tlxc.runtime.DeviceArray), an int address or None", i, p.name)

    def _dtype_ok(self, i: int, sig: str | None, shown: Any) -> None:
        p = self.params[i]
        if sig != p.dtype:
            raise LaunchError(f"{p.describe(i)}: the array has dtype {shown}"
                              + (f" ({sig})" if sig and sig != str(shown) else "")
                              + f" but this kernel was compiled for pointers to {p.dtype}; pass a {p.dtype} array "
                              "or compile a variant for this dtype", i, p.name)

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
            else:
                self.check_scalar(i, a)

    # -- the fast path: generated code ---------------------------------------------------------------
    def emit(self, ns: dict[str, Any], device: int, single_device: bool = False) -> tuple[list[str], list[str]]:
        """(statements that unpack ``args`` and check and convert them, the expressions to
        pack in order): the launcher compiles them into its launch function, followed by
        ``_pack_into(buffer, 0, *values)``. Names they use are put in ``ns``. A bad pointer
        argument raises ``LaunchError``; anything else wrong raises one of ``ARG_ERRORS``
        (a wrong count or type, an int out of range), after which ``diagnose`` explains.
        With ``single_device`` (one GPU visible), a tensor's ``is_cuda`` is enough to know
        that it is on the kernel's device, which is cheaper to ask than ``get_device()``."""
        from .memory import DeviceArray

        ns.update(_T=_NoTorch, _DA=DeviceArray, _dev=device, _pack_into=self.struct.pack_into, _bf16=bf16_bits)
        ns["_ptr"] = lambda i, a: self.pointer_value(i, a, device, ns)
        n = len(self.params)
        unpack = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
        lines = [f"{unpack} = args" if n else "[] = args"]  # a wrong count raises ValueError
        values = []
        torch = sys.modules.get("torch")
        for i, p in enumerate(self.params):
            a = f"a{i}"
            if p.kind == "ptr":
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
        body = lines + ([f"_pack_into(_buf, 0, {', '.join(values)})"] if values else [])
        src = "def pack(args):\n    try:\n" + "".join(f"        {ln}\n" for ln in body)
        src += "    except _ARG_ERRORS:\n        _diagnose(args)\n        raise\n"
        exec(compile(src, f"<tlxc argument packer {self.signature}>", "exec"), ns)
        return ns["pack"]

    def pack(self, args: Sequence[Any], device: int = 0) -> bytes:
        """Pack ``args`` and return a copy of the bytes (slow: builds a packer each call)."""
        self.packer(device)(args)
        return bytes(self.buffer)[: self.size] if self.params else b""
