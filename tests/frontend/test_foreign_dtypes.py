"""Tensors that Triton's own helpers wrap: ``triton.reinterpret(t, tl.uint64)`` (which
Triton's test_core passes for unsigned dtypes) gives an object named ``TensorWrapper``
with the tensor as ``base`` and a dtype of Triton's; tlxc reads that dtype by its name,
at the launch and in the interpreter, without importing Triton."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl
from tlxc.ir.types import as_tlxc_dtype


class _TritonDtype:
    """Stands for a dtype of Triton's (its class lives in ``triton.language.core``)."""

    __module__ = "triton.language.core"

    def __init__(self, name: str) -> None:
        self.name = name


class TensorWrapper:
    """Stands for what ``triton.reinterpret`` returns: the same bytes, another dtype."""

    def __init__(self, base: np.ndarray, dtype: _TritonDtype) -> None:
        self.base, self.dtype = base, dtype

    def data_ptr(self) -> int:
        return int(self.base.ctypes.data)


@tlxc.jit
def big_ones(x):
    offs = tl.arange(0, 4)
    tl.store(x + offs, tl.where(tl.load(x + offs) > 5, 1, 0))


def test_a_tensor_reinterpreted_by_tritons_helper_is_read_as_its_dtype() -> None:
    # -1 in int64 storage is 2**64 - 1 as uint64: greater than 5
    a = np.array([-1, 0, 7, 3], np.int64)
    big_ones.interpret[(1,)](TensorWrapper(a, _TritonDtype("uint64")))
    np.testing.assert_array_equal(a, [1, 0, 1, 0])
    b = np.array([-1, 0, 7, 3], np.int64)
    big_ones.interpret[(1,)](b)  # as int64: -1 is not
    np.testing.assert_array_equal(b, [0, 0, 1, 0])


def test_only_tritons_dtypes_are_read_by_name() -> None:
    assert as_tlxc_dtype(_TritonDtype("fp8e4nv")) is tl.float8e4nv
    assert as_tlxc_dtype(_TritonDtype("fp8e4b15")) is None  # a dtype tlxc does not have
    other = type("dtype", (), {"name": "uint64"})()
    assert as_tlxc_dtype(other) is None and as_tlxc_dtype(tl.bfloat16) is tl.bfloat16


@tlxc.jit
def cast_to(x, y, DT: tl.constexpr):
    offs = tl.arange(0, 4)
    tl.store(y + offs, tl.load(x + offs).to(DT).to(tl.float32))


def test_a_tritons_dtype_given_as_a_constexpr_is_ours() -> None:
    # Triton's test helpers hand out their own dtypes; a kernel constant of one is tlxc's
    x, y = np.array([1.7, -2.6, 100.0, 0.5], np.float32), np.zeros(4, np.float32)
    ck = cast_to.interpret[(1,)](x, y, DT=_TritonDtype("int8"))
    np.testing.assert_array_equal(y, x.astype(np.int8))
    assert ck.constants["DT"] is tl.int8


def test_operand_errors_in_tritons_words(load_kernels: Any) -> None:
    # checks of Triton's messages (its test_core matches these phrases) still match
    m = load_kernels("""
@tlxc.jit
def bits(x, y):
    tl.store(x, tl.load(x) & tl.load(y))

@tlxc.jit
def div(x, y):
    tl.store(x, tl.load(x) / tl.load(y))
""")
    with pytest.raises(tlxc.CompilationError, match="invalid operands of type float16 and int32: operator & needs "
                                                    "integer operands"):
        m.bits.compile("*fp16,*i32")
    with pytest.raises(tlxc.CompilationError, match="Cannot use operator / with int8 and uint8 because they have "
                                                    "different signedness"):
        m.div.compile("*i8,*u8")
