"""``tl.<dtype>.name`` is Triton's spelling (``fp32``, ``uint32``, ``int1``, ``fp8e4nv``),
which kernels and Triton's own test helpers read (``getattr(np, dtype.name)``,
``dtype.name in ("fp16", "bf16")``); the IR keeps its own (``f32``, ``u32``, ``f8e4m3``) in
``ir_name`` and its text form. ``tl.dtype("fp32")`` names a dtype by Triton's spelling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl
from tlxc.ir.parser import parse_ir
from tlxc.ir.printer import print_ir
from tlxc.ir.types import ALL_DTYPES, BY_NAME

# Triton's python/triton/language/core.py: dtype.SINT_TYPES, UINT_TYPES and FP_TYPES
# (less fp8e4b15, which tlxc does not have), keyed by the tl attribute
TRITON_NAMES = {
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "int1": "int1", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float8e4nv": "fp8e4nv", "float8e4b8": "fp8e4b8", "float8e5": "fp8e5", "float8e5b16": "fp8e5b16",
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
}


@pytest.mark.parametrize("attr,want", sorted(TRITON_NAMES.items()))
def test_name_is_tritons_spelling(attr: str, want: str) -> None:
    assert getattr(tl, attr).name == want


def test_every_dtype_has_a_triton_name_and_the_aliases_agree() -> None:
    assert sorted(d.tl_name for d in ALL_DTYPES) == sorted(TRITON_NAMES)
    assert (tl.bool.name, tl.float8e4m3fn.name, tl.float8e5m2.name) == ("int1", "fp8e4nv", "fp8e5")


def test_ir_name_and_text_keep_the_ir_spelling() -> None:
    irs = {d.tl_name: d.ir_name for d in ALL_DTYPES}
    assert (irs["float32"], irs["uint32"], irs["int1"], irs["float8e4nv"], irs["bfloat16"]) == \
        ("f32", "u32", "i1", "f8e4m3", "bf16")
    assert all(str(d) == d.ir_name and BY_NAME[d.ir_name] is d for d in ALL_DTYPES)
    assert repr(tl.float32) == "float32"


@pytest.mark.parametrize("dtype", [tl.int8, tl.int16, tl.int32, tl.int64, tl.uint8, tl.uint16, tl.uint32,
                                   tl.uint64])
def test_triton_helpers_find_numpy_integer_types_by_name(dtype: Any) -> None:
    # Triton's tests build inputs with getattr(np, dtype.name) for integer dtypes
    assert np.dtype(getattr(np, dtype.name)).itemsize * 8 == dtype.primitive_bitwidth
    assert np.dtype(getattr(np, dtype.name)).kind == ("i" if dtype.is_int_signed() else "u")


def test_pointer_name_is_tritons_and_its_text_the_irs() -> None:
    p = tl.pointer_type(tl.float32)
    assert (p.name, str(p)) == ("pointer<fp32>", "ptr<f32>")
    assert tl.pointer_type(tl.pointer_type(tl.uint8)).name == "pointer<pointer<uint8>>"


def test_dtype_by_tritons_name_on_the_host() -> None:
    assert all(tl.dtype(d.name) is d for d in ALL_DTYPES)
    assert tl.dtype(tl.constexpr("bf16")) is tl.bfloat16
    assert isinstance(tl.float16, tl.dtype) and not isinstance("fp16", tl.dtype)
    with pytest.raises(ValueError, match=r"tl.dtype takes a dtype name \(int1, .*fp8e5b16\), got 'float32'; "
                                         r"tl.float32 is 'fp32'$"):
        tl.dtype("float32")
    with pytest.raises(ValueError, match=r"got 'fp8e9'$"):
        tl.dtype("fp8e9")


@tlxc.jit
def by_name(x, y, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    if v.dtype.name == "fp32":  # Triton's spelling, read at compile time
        w = v.to(tl.dtype("fp16")).to(tl.float32) + 1.0
    else:
        w = v.to(tl.float32) - 1.0
    tl.store(y + tl.arange(0, N), w)


def test_name_and_dtype_by_name_inside_a_kernel() -> None:
    x = np.array([1.0, 2.0, 1.0 + 2.0**-12, 3.5], np.float32)  # 1 + 2**-12 rounds to 1 in fp16
    y = np.zeros(4, np.float32)
    by_name.interpret[(1,)](x, y, N=4)
    np.testing.assert_array_equal(y, [2.0, 3.0, 2.0, 4.5])
    xi = np.array([5, 6, 7, 8], np.int32)
    by_name.interpret[(1,)](xi, y, N=4)
    np.testing.assert_array_equal(y, [4.0, 5.0, 6.0, 7.0])


def test_kernel_ir_prints_the_ir_spelling_and_parses_back() -> None:
    text = by_name.compile("*fp32,*fp32", {"N": 16}, arch="sm_90a").asm["ir"]
    assert "f32" in text and "f16" in text and "fp32" not in text and "fp16" not in text
    assert print_ir(parse_ir(text)) == text


BAD_NAME = """
@tlxc.jit
def k(x):
    v = tl.load(x).to(tl.dtype("float32"))
"""


def test_unknown_dtype_name_in_a_kernel(load_kernels: Any) -> None:
    m = load_kernels(BAD_NAME)
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp16")
    e = info.value
    assert (e.code, e.line, e.col) == ("TLXC-CALL-002", 7, 22)
    assert "tl.dtype takes a dtype name (int1, " in e.message and "got 'float32'; tl.float32 is 'fp32'" in e.message


def test_type_errors_name_dtypes_by_their_tl_attribute(load_kernels: Any) -> None:
    # messages print dtypes as kernels spell them (tl.float32's repr, "float32"), not by
    # Triton's .name ("fp32") nor by the IR's ("f32"); unchanged by the .name spelling
    m = load_kernels("""
@tlxc.jit
def k(x):
    tl.store(x, tl.load(x) << 1)
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    assert "float32" in info.value.message and "fp32" not in info.value.message


@pytest.mark.parametrize("dtype, mantissa, bias", [
    (tl.float16, 10, 15), (tl.bfloat16, 7, 127), (tl.float32, 23, 127), (tl.float64, 52, 1023),
    (tl.float8e4nv, 3, 7), (tl.float8e5, 2, 15), (tl.float8e4b8, 3, 8), (tl.float8e5b16, 2, 16)])
def test_float_format_queries(dtype: Any, mantissa: int, bias: int) -> None:
    """Triton's ``fp_mantissa_width`` and ``exponent_bias`` (its test_core decodes floats by
    them): the fnuz fp8 formats have one more bias than the IEEE-style ones."""
    assert (dtype.fp_mantissa_width, dtype.exponent_bias) == (mantissa, bias)
    exponent = dtype.primitive_bitwidth - 1 - mantissa
    assert bias == (1 << (exponent - 1)) - 1 + (dtype in (tl.float8e4b8, tl.float8e5b16))


def test_tritons_name_lists() -> None:
    # test parametrizations map tl.dtype over them
    assert [tl.dtype(n) for n in tl.dtype.SINT_TYPES] == [tl.int8, tl.int16, tl.int32, tl.int64]
    assert [tl.dtype(n) for n in tl.dtype.UINT_TYPES] == [tl.int1, tl.uint8, tl.uint16, tl.uint32, tl.uint64]
    assert [tl.dtype(n) for n in tl.dtype.STANDARD_FP_TYPES] == [tl.float16, tl.bfloat16, tl.float32, tl.float64]
    assert {n: tl.dtype(n).name for n in tl.dtype.FP_TYPES} == {n: n for n in tl.dtype.FP_TYPES}
    assert tl.dtype.OTHER_TYPES == ["void"]


def test_float8e4b15_is_named_on_the_host_and_refused_in_kernels(load_kernels: Any) -> None:
    # Triton's E4M3 with bias 15 (deprecated by Triton on Hopper): a test module may list it,
    # a kernel that uses it is told tlxc does not have it yet, at the line that uses it
    assert tl.dtype("fp8e4b15") is tl.float8e4b15 and isinstance(tl.float8e4b15, tl.dtype)
    assert repr(tl.float8e4b15) == "float8e4b15" and tl.float8e4b15.name == "fp8e4b15"
    m = load_kernels("""
@tlxc.jit
def by_attribute(x):
    tl.store(x, tl.load(x).to(tl.float8e4b15).to(tl.float32))

@tlxc.jit
def by_name(x):
    tl.store(x, tl.load(x).to(tl.dtype("fp8e4b15")).to(tl.float32))

@tlxc.jit
def by_constexpr(x, DT: tl.constexpr):
    tl.store(x, tl.load(x).to(DT).to(tl.float32))
""")
    for k, consts, line in ((m.by_attribute, {}, 7), (m.by_name, {}, 11), (m.by_constexpr, {"DT": tl.float8e4b15}, 15)):
        with pytest.raises(tlxc.CompilationError) as info:
            k.compile("*fp32", constants=consts)
        assert info.value.code == "TLXC-NAME-002" and "tl.float8e4b15 is not supported by tlxc yet" in str(info.value)
        assert f":{line}:" in str(info.value)
