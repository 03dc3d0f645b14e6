"""Element types as the runtime sees them: Triton's signature names (``fp32``, ``i64``,
``bf16``...), the bytes a scalar argument takes, and the mapping from numpy, PyTorch and
``__cuda_array_interface__`` dtypes to those names.

These are the names of ``tlxc.ir.types`` (``DType.sig_name``); they are repeated here
so that the runtime needs nothing from the compiler.
"""

from __future__ import annotations

from typing import Any

# signature name -> (struct format of a scalar argument, or None when it cannot be one; bytes)
SCALAR_FORMATS: dict[str, tuple[str | None, int]] = {
    "i1": ("?", 1),
    "i8": ("b", 1), "i16": ("h", 2), "i32": ("i", 4), "i64": ("q", 8),
    "u8": ("B", 1), "u16": ("H", 2), "u32": ("I", 4), "u64": ("Q", 8),
    "fp16": ("e", 2), "bf16": ("H", 2),  # bf16 is converted to its bit pattern first
    "fp32": ("f", 4), "fp64": ("d", 8),
    # fp8 values exist only in memory: a kernel cannot take an fp8 scalar
    "fp8e4nv": (None, 1), "fp8e5": (None, 1), "fp8e4b8": (None, 1), "fp8e5b16": (None, 1),
}

# spellings accepted beside Triton's own (the same as tlxc.ir.types.BY_SIG_NAME)
ALIASES = {"u1": "i1", "fp8e4m3": "fp8e4nv", "fp8e5m2": "fp8e5", "f16": "fp16", "f32": "fp32", "f64": "fp64"}

# the dtype names that numpy (with ml_dtypes) and PyTorch use, to signature names
_ARRAY_NAMES = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
    "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16",
}
# signature name -> the attribute of the ``torch`` module with that dtype
TORCH_NAMES = {sig: name for name, sig in _ARRAY_NAMES.items()}


def canonical(name: str) -> str:
    """The canonical signature name of ``name`` (``f32`` -> ``fp32``); KeyError if unknown."""
    name = ALIASES.get(name, name)
    if name not in SCALAR_FORMATS:
        raise KeyError(name)
    return name


def sig_of_dtype(dtype: Any) -> str | None:
    """The signature name of a numpy / ml_dtypes / PyTorch dtype, or None."""
    if dtype is None:
        return None
    name = str(dtype)
    if name.startswith("torch."):
        name = name[6:]
    else:
        name = getattr(dtype, "name", name)
    return _ARRAY_NAMES.get(name)


def sig_of_typestr(typestr: str) -> str | None:
    """The signature name of an ``__array_interface__`` type string (``"<f4"``)."""
    try:
        import numpy as np

        dt = np.dtype(typestr)
    except (TypeError, ValueError):
        return None
    if dt.kind == "V":  # bfloat16 and fp8 have no standard type string: only the width is known
        return None
    return _ARRAY_NAMES.get(dt.name)


def describe_dtype(dtype: Any) -> str:
    sig = sig_of_dtype(dtype)
    return f"{dtype} ({sig})" if sig else str(dtype)
