"""Signatures and specialization.

A compiled variant of a kernel is keyed by the types of its runtime arguments, what is
known about them (a pointer's 16-byte alignment, an integer's divisibility by 16) and
the values of its constexprs. ``Signature`` holds that; it is built from runtime
arguments at launch, or from Triton's AOT string form (``"*fp16:16,i32,fp32"``) or a
dict when compiling ahead of time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..errors import SemanticError
from ..ir.types import (
    BY_SIG_NAME,
    DType,
    PointerType,
    TensorDescType,
    Type,
    as_tlxc_dtype,
    from_numpy_dtype,
    int1,
    int32,
    int64,
    uint64,
)
from ..ir.types import float32 as f32

ALIGN = 16


@dataclass(frozen=True)
class ArgSpec:
    """One runtime argument: its IR type and the specialization (byte alignment of a
    pointer or divisibility of an integer; 1 when nothing is promised)."""

    type: Type
    divisibility: int = 1
    # a Python int equal to 1: the kernel sees the constant 1 (Triton specializes these, so
    # unit strides make accesses contiguous); the argument is still passed, and unused
    equals_one: bool = False

    def __str__(self) -> str:
        t = self.type
        if isinstance(t, TensorDescType):  # Triton's spelling, without its spaces
            return (f"tensordesc<{t.element.sig_name}[{','.join(str(d) for d in t.block_shape)}]>"
                    + (f":{self.divisibility}" if self.divisibility > 1 else ""))
        base = f"*{t.pointee.sig_name}" if isinstance(t, PointerType) else t.sig_name  # type: ignore[union-attr]
        return base + (f":{self.divisibility}" if self.divisibility > 1 else "")


def _parse_tensordesc(text: str) -> ArgSpec:
    """``tensordesc<fp16[64,64]>`` (a host TMA descriptor of 64x64 blocks of fp16; Triton
    writes ``tensordesc<fp16[64, 64]>``) to an ArgSpec."""
    from ..runtime.args import TENSORDESC  # the runtime's own reading of the spelling

    m = TENSORDESC.fullmatch(text.strip())
    if m is None:
        raise SemanticError("TLXC-SIG-001", f"cannot read the descriptor type {text!r}",
                            "write a host TMA descriptor as tensordesc<fp16[64,64]>: the element type, then the "
                            "block shape")
    elem = BY_SIG_NAME.get(m.group(1))
    if elem is None:
        raise SemanticError("TLXC-SIG-001", f"unknown element type {m.group(1)!r} in {text!r}")
    try:
        block = tuple(int(d) for d in m.group(2).split(","))
    except ValueError:
        raise SemanticError("TLXC-SIG-001", f"the block shape of {text!r} must be integers") from None
    if not 1 <= len(block) <= 5 or any(d < 1 or d & (d - 1) for d in block):
        raise SemanticError("TLXC-SIG-001", f"the block shape of {text!r} must have 1 to 5 dimensions, each a "
                            "positive power of two")
    return ArgSpec(TensorDescType(block, elem), int(m.group(3) or 1))


def parse_type(text: str) -> ArgSpec:
    """``*fp16:16`` / ``i32`` / ``i32:16`` / ``fp32`` / ``tensordesc<fp16[64,64]>`` to an ArgSpec;
    ``1`` is an i32 argument specialized as equal to 1 (what a launch does for a unit stride),
    and so is ``i32:1`` (any integer type): in Triton's AOT compiler the hint ``:1`` makes
    the argument the constant 1, as ``:16`` promises divisibility by 16."""
    s = text.strip()
    if s == "1":
        return ArgSpec(int32, 1, equals_one=True)
    if s.startswith("tensordesc"):
        return _parse_tensordesc(s)
    div = 1
    one = False
    if ":" in s:
        s, d = s.rsplit(":", 1)
        try:
            div = int(d)
        except ValueError:
            raise SemanticError("TLXC-SIG-001", f"bad specialization ':{d}' in {text!r}; use ':16'") from None
        if div not in (1, 16):
            raise SemanticError("TLXC-SIG-001", f"specialization ':{div}' in {text!r}: only ':16' (divisible by 16) "
                                "and ':1' (equal to 1, integers only) are supported")
        one, div = div == 1, (div if div == 16 else 1)
    s = s.strip()
    if one and (s.startswith("*") or s not in BY_SIG_NAME or BY_SIG_NAME[s].is_floating()):
        raise SemanticError("TLXC-SIG-001", f"{text!r}: the specialization ':1' means the argument equals 1, which "
                            "only an integer argument can be", "write ':16' for a pointer aligned to 16 bytes, or "
                            "leave the hint out")
    if one:
        return ArgSpec(BY_SIG_NAME[s], 1, equals_one=True)
    if s.startswith("*"):
        name = s[1:].strip()
        if name.startswith("k"):  # Triton's "*k" spelling for pointers to constant memory
            name = name[1:]
        elem = BY_SIG_NAME.get(name)
        if elem is None:
            raise SemanticError("TLXC-SIG-001", f"unknown pointee type {name!r} in {text!r}")
        return ArgSpec(PointerType(elem), div)
    t = BY_SIG_NAME.get(s)
    if t is None:
        raise SemanticError("TLXC-SIG-001", f"unknown type {s!r} in signature entry {text!r}",
                            "types are i1, i8..i64, u8..u64, fp16, bf16, fp32, fp64, fp8e4nv, fp8e5; "
                            "pointers start with *")
    if t.is_floating() and div > 1:
        raise SemanticError("TLXC-SIG-001", f"{text!r}: floats cannot be specialized on divisibility")
    return ArgSpec(t, div)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def parse_signature(sig: Any, runtime_params: list[str], constexpr_params: list[str],
                    all_params: list[str], none_params: frozenset[str] = frozenset(),
                    ) -> tuple[dict[str, ArgSpec], dict[str, Any]]:
    """A signature string or dict to (runtime arg specs, constexpr values found in it).

    A string lists either the runtime parameters only, or every parameter, giving
    constexprs inline as values (Triton's AOT form: ``"*fp32:16, i32, 1024"``).

    A runtime parameter may be the constant None, as a None argument is at launch: its
    entry is ``None``, or ``constexpr`` (Triton's spelling of a specialized argument)
    with the value None in the constants (``none_params``: the runtime parameters the
    constants give None), or a string of the typed parameters only leaves it out.
    """
    consts: dict[str, Any] = {}
    specs: dict[str, ArgSpec] = {}

    def runtime_entry(name: str, entry: Any) -> None:
        text = entry if isinstance(entry, str) else None
        if text is not None and text.strip() in ("None", "constexpr"):
            if text.strip() == "constexpr" and name not in none_params:
                raise SemanticError("TLXC-SIG-001", f"the signature makes the runtime parameter '{name}' a constexpr, "
                                    "but the constants give it no value", f"give constants={{'{name}': None}} (tlxc "
                                    "specializes a runtime parameter as the constant None only)")
            consts[name] = None
            return
        if name in none_params:
            raise SemanticError("TLXC-SIG-001", f"'{name}' has the type {entry} in the signature and the value None "
                                "in the constants", f"write '{name}' as constexpr (or None) in the signature, or "
                                "leave None out of the constants")
        specs[name] = entry if isinstance(entry, ArgSpec) else parse_type(str(entry))

    typed = [p for p in runtime_params if p not in none_params]
    if isinstance(sig, dict):
        for k, v in sig.items():
            if k in constexpr_params:
                if v != "constexpr":
                    consts[k] = v
                continue
            if k not in runtime_params:
                raise SemanticError("TLXC-SIG-001", f"signature names '{k}', which is not a runtime parameter")
            runtime_entry(k, v)
    else:
        from ..runtime.args import split_signature  # the runtime splits signatures the same way

        parts = split_signature(str(sig))
        if len(parts) == len(all_params) and len(all_params) != len(runtime_params):
            for name, p in zip(all_params, parts):
                if name in constexpr_params:
                    if p != "constexpr":
                        consts[name] = _literal(p)
                else:
                    runtime_entry(name, p)
        elif len(parts) == len(runtime_params):
            for name, p in zip(runtime_params, parts):
                runtime_entry(name, p)
        elif len(parts) == len(typed):  # the parameters the constants give None are left out
            for name, p in zip(typed, parts):
                runtime_entry(name, p)
        else:
            raise SemanticError("TLXC-SIG-001", f"signature has {len(parts)} entries; the kernel has "
                                f"{len(runtime_params)} runtime parameters ({', '.join(runtime_params)})"
                                + (f" and {len(all_params)} in all" if constexpr_params else ""))
    for name in none_params:
        consts[name] = None
    missing = [p for p in runtime_params if p not in specs and p not in consts]
    if missing:
        raise SemanticError("TLXC-SIG-001", f"signature gives no type for {', '.join(missing)}")
    return specs, consts


def _data_pointer(arg: Any) -> int | None:
    if hasattr(arg, "data_ptr"):
        return int(arg.data_ptr())
    cai = getattr(arg, "__cuda_array_interface__", None) or getattr(arg, "__array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    return None


def _element_dtype(arg: Any) -> DType:
    dt = getattr(arg, "dtype", None)
    if isinstance(dt, DType):  # tlxc.reinterpret(tensor, tl.uint32): the kernel sees that type
        return dt
    if dt is not None and type(dt).__module__.startswith("torch"):
        from ..ir import types as T

        name = str(dt).replace("torch.", "")
        m = {"float16": T.float16, "bfloat16": T.bfloat16, "float32": T.float32, "float64": T.float64,
             "int8": T.int8, "int16": T.int16, "int32": T.int32, "int64": T.int64, "uint8": T.uint8,
             "uint16": T.uint16, "uint32": T.uint32, "uint64": T.uint64, "bool": T.int1,
             "float8_e4m3fn": T.float8e4nv, "float8_e5m2": T.float8e5, "float8_e4m3fnuz": T.float8e4b8,
             "float8_e5m2fnuz": T.float8e5b16}
        if name in m:
            return m[name]
    if dt is None:
        raise SemanticError("TLXC-LAUNCH-003", f"argument of type {type(arg).__name__} has no dtype")
    found = as_tlxc_dtype(dt)  # Triton's reinterpret(tensor, tl.uint64): a dtype of Triton's, by name
    if found is not None:
        return found
    try:
        return from_numpy_dtype(dt)
    except (KeyError, TypeError):
        raise SemanticError("TLXC-LAUNCH-003", f"arrays of dtype {dt} are not supported") from None


def spec_of(arg: Any, specialize: bool) -> ArgSpec:
    """The ArgSpec of one runtime argument given at launch."""
    import numpy as np

    if isinstance(arg, (bool, np.bool_)):
        return ArgSpec(int1)
    if isinstance(arg, (int, np.integer)):
        v = int(arg)
        if isinstance(arg, np.integer):
            t = from_numpy_dtype(arg.dtype)
        else:
            t = int32 if -(2 ** 31) <= v < 2 ** 31 else int64 if -(2 ** 63) <= v < 2 ** 63 else uint64
            if v >= 2 ** 64 or v < -(2 ** 63):
                raise SemanticError("TLXC-LAUNCH-003", f"integer argument {v} does not fit in 64 bits")
        if specialize and v == 1 and type(arg) is int:
            return ArgSpec(t, 1, equals_one=True)
        return ArgSpec(t, ALIGN if specialize and v % ALIGN == 0 else 1)
    if isinstance(arg, float):  # Python floats (np.float64 included) pass as fp32, as in Triton
        return ArgSpec(f32)
    if isinstance(arg, np.floating):
        return ArgSpec(from_numpy_dtype(arg.dtype))
    if _is_descriptor(arg):
        return descriptor_spec(arg, specialize)
    ptr = _data_pointer(arg)
    if ptr is not None:
        elem = _element_dtype(arg)
        return ArgSpec(PointerType(elem), ALIGN if specialize and ptr % ALIGN == 0 else 1)
    raise SemanticError("TLXC-LAUNCH-003", f"cannot pass an argument of type {type(arg).__name__} to a kernel",
                        "pass arrays/tensors for pointers and Python or numpy scalars for numbers")


def _is_descriptor(arg: Any) -> bool:
    """A host tensor descriptor: ``tlxc.TensorDescriptor`` or anything shaped like it
    (Triton's own included)."""
    return hasattr(arg, "block_shape") and hasattr(arg, "base") and hasattr(arg, "strides")


def descriptor_spec(arg: Any, specialize: bool = True) -> ArgSpec:
    """The ArgSpec of a host tensor descriptor: its block shape and element type (the
    layout of the tensor it describes is encoded at launch, not compiled in), and, as for
    an integer, divisibility 16 when every size is a multiple of 16 (``tensordesc<...>:16``:
    on AMD, where the kernel reads the descriptor's fields, its bounds checks then hold for
    whole vectors; NVIDIA's TMA ignores it)."""
    try:
        block = tuple(int(d) for d in arg.block_shape)
    except (TypeError, ValueError):
        raise SemanticError("TLXC-LAUNCH-003", f"the descriptor's block_shape {arg.block_shape!r} is not a list "
                            "of integers") from None
    if len(block) != len(arg.shape) or any(d < 1 or d & (d - 1) for d in block):
        raise SemanticError("TLXC-LAUNCH-003", f"the descriptor's block_shape {list(block)} must have one positive "
                            f"power of two per dimension of its shape {list(arg.shape)}")
    try:
        sizes = [int(d) for d in arg.shape]
    except (TypeError, ValueError):
        sizes = [1]
    divisible = specialize and all(d % ALIGN == 0 for d in sizes)
    return ArgSpec(TensorDescType(block, _element_dtype(arg.base)), ALIGN if divisible else 1)
