"""Triton's types of kernel values: ``x.type`` of a constant is ``tl.constexpr_type(x)``,
of a tuple ``tl.tuple_type`` of its members' types, of a descriptor a
``tl.tensor_descriptor_type``; a name annotated ``x: tl.constexpr`` before it is assigned
keeps compile-time values (Triton's test_frontend / test_tuple cases, written anew)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def _pair(a):
    return a + 1, a - 1


@tlxc.jit
def types_of_values(o):
    y: tl.constexpr
    x, y = 0, 0
    tl.static_assert(x.dtype == tl.int32)  # a plain name: a runtime scalar
    tl.static_assert(y.type == tl.constexpr_type(0))
    tl.static_assert(isinstance(y.type, tl.constexpr_type))
    tl.static_assert(y.type != tl.constexpr_type(1))
    a: tl.constexpr
    a, b = (0, 1), 2
    kept: tl.constexpr = (0, 1)
    tl.static_assert(a == kept)
    tl.static_assert(a.type == ((0, 1)).type)
    tl.static_assert(a.type == tl.tuple_type([tl.constexpr_type(0), tl.constexpr_type(1)]))
    tl.static_assert(b.dtype == tl.int32)
    c = _pair(b)
    tl.static_assert(c.type == tl.tuple_type([tl.int32, tl.int32]))
    tl.static_assert(c[0].type == tl.int32)
    d = tl.make_tensor_descriptor(o, shape=[16, 16], strides=[16, 1], block_shape=[16, 16])
    tl.static_assert(isinstance(d.type, tl.tensor_descriptor_type))
    tl.static_assert(not isinstance(c.type, tl.tensor_descriptor_type))
    v = tl.arange(0, 16)
    tl.static_assert(v.type == tl.block_type(tl.int32, [16]) and isinstance(v.type, tl.block_type))
    tl.static_assert(not isinstance(b.type, tl.block_type))
    tl.store(o + v, (v + y + a[1] + b).to(tl.float32))


def test_types_compare_as_in_triton() -> None:
    o = np.zeros(256, np.float32)
    types_of_values.interpret[(1,)](o)
    np.testing.assert_array_equal(o[:16], np.arange(16) + 3)
    assert "cp.async.bulk" not in types_of_values.compile("*fp32:16", arch="sm_90a").asm["ptx"]


def test_host_objects() -> None:
    assert tl.constexpr_type(3) == tl.constexpr_type(tl.constexpr(3))
    assert tl.constexpr_type(1) != tl.constexpr_type(True)  # different Python types
    assert repr(tl.tuple_type([tl.int32, tl.float16])) == "tuple_type[int32, float16]"
    t = tl.tuple_type([tl.int32, tl.float16], ["m", "n"])
    assert list(t) == [tl.int32, tl.float16] and t[1] == tl.float16 and len(t) == 2
    assert t != tl.tuple_type([tl.int32, tl.float16])
    desc = tl.tensor_descriptor_type(tl.block_type(tl.bfloat16, [64, 32]))
    assert isinstance(desc, tl.tensor_descriptor_type)
    assert desc.block_shape == (64, 32) and desc.element == tl.bfloat16
    with pytest.raises(TypeError, match="block_type"):
        tl.tensor_descriptor_type(tl.float16)
    t16 = tl.block_type(tl.float32, [16, tl.constexpr(8)])  # Triton's order: the element first
    assert t16.shape == (16, 8) and t16.scalar == tl.float32 and t16.numel == 128
    with pytest.raises(TypeError, match="element_ty must be a dtype"):
        tl.block_type([16], tl.float32)
    with pytest.raises(ValueError, match="shape_type has 1 members for a block of rank 2"):
        tl.tensor_descriptor_type(tl.block_type(tl.bfloat16, [64, 32]), tl.tuple_type([tl.int32]))
    with pytest.raises(ValueError, match="2 types but 1 field names"):
        tl.tuple_type([tl.int32, tl.int32], ["a"])


def test_a_constexpr_name_refuses_a_runtime_value(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def k(x, n):
    y: tl.constexpr
    y = n
""")
    with pytest.raises(tlxc.CompilationError, match=r"'y' is annotated tl.constexpr, so it needs a compile-time "
                                                    r"value, got scalar int32") as info:
        m.k.compile("*fp32,i32")
    assert ":8:5" in str(info.value) and "give the runtime value another name" in str(info.value)
