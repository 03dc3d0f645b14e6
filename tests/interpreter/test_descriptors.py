"""Tensor descriptors in the interpreter: blocks read and written through a
``DescriptorValue`` clip at the descriptor's bounds as TMA does (zero or NaN fill, dropped
writes), faults inside the bounds name the array, and host ``TensorDescriptor``
arguments bind to descriptor values."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tlxc
from tlxc.errors import CompilationError, InterpreterError
from tlxc.interpreter.descriptors import DescriptorValue, make_descriptor, read_block, write_block
from tlxc.interpreter.memory import Memory, base_address
from tlxc.interpreter.run import bind_arguments


def _memory(array: np.ndarray) -> Memory:
    return Memory([(0, "a", array)])


def _desc(array: np.ndarray, block: tuple[int, ...], shape: tuple[int, ...] | None = None,
          strides: tuple[int, ...] | None = None, padding: str = "zero") -> DescriptorValue:
    shape = array.shape if shape is None else shape
    strides = tuple(s // array.itemsize for s in array.strides) if strides is None else strides
    return make_descriptor(base_address(0), shape, strides, block, array.dtype, padding)


def test_in_bounds_blocks() -> None:
    a = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    mem, d = _memory(a), _desc(a, (16, 8))
    for r, c in [(0, 0), (16, 8), (48, 40), (5, 3)]:  # any element coordinates, not only block multiples
        np.testing.assert_array_equal(read_block(mem, d, (r, c), None), a[r:r + 16, c:c + 8])
    assert read_block(mem, d, (np.int32(16), np.int32(8)), None).dtype == np.float32


@pytest.mark.parametrize("coords", [(56, 0), (0, 44), (-5, 0), (0, -3), (-10, 45), (60, -7)])
def test_read_clips_with_zeros(coords: tuple[int, int]) -> None:
    a = np.arange(1, 64 * 48 + 1, dtype=np.float16).reshape(64, 48)
    block = read_block(_memory(a), _desc(a, (16, 8)), coords, None)
    expected = np.zeros((16, 8), np.float16)
    for i in range(16):
        for j in range(8):
            r, c = coords[0] + i, coords[1] + j
            if 0 <= r < 64 and 0 <= c < 48:
                expected[i, j] = a[r, c]
    np.testing.assert_array_equal(block, expected)


def test_read_fully_outside_and_nan_padding() -> None:
    a = np.ones((32, 32), ml_dtypes.bfloat16)
    mem = _memory(a)
    assert not read_block(mem, _desc(a, (16, 16)), (32, 0), None).any()
    assert not read_block(mem, _desc(a, (16, 16)), (-16, -16), None).any()
    nan = read_block(mem, _desc(a, (16, 16), padding="nan"), (24, -8), None)
    assert nan.dtype == a.dtype
    assert np.isnan(nan[8:].astype(np.float32)).all() and np.isnan(nan[:, :8].astype(np.float32)).all()
    assert (nan[:8, 8:].astype(np.float32) == 1).all()


def test_bounds_are_the_descriptors() -> None:
    # a descriptor of the top-left 20x24 of a 64x64 array, rows 64 apart: TMA clips at 20x24
    a = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
    mem, d = _memory(a), _desc(a, (16, 16), shape=(20, 24), strides=(64, 1))
    block = read_block(mem, d, (16, 16), None)
    np.testing.assert_array_equal(block[:4, :8], a[16:20, 16:24])
    assert not block[4:].any() and not block[:, 8:].any()
    write_block(mem, d, (8, 16), np.full((16, 16), -1, np.int32), None)
    assert (a[8:20, 16:24] == -1).all()
    assert (a[20:, :] >= 0).all() and (a[:, 24:] >= 0).all() and (a[:8] >= 0).all()


def test_write_drops_out_of_bounds() -> None:
    a = np.zeros((32, 16), np.float32)
    mem, d = _memory(a), _desc(a, (8, 8))
    value = np.arange(64, dtype=np.float32).reshape(8, 8) + 1
    write_block(mem, d, (-3, 12), value, None)
    np.testing.assert_array_equal(a[0:5, 12:16], value[3:, :4])
    assert a.sum() == value[3:, :4].sum()
    write_block(mem, d, (40, 0), value, None)  # entirely outside: nothing happens
    write_block(mem, d, (8, 0), value, None)
    np.testing.assert_array_equal(a[8:16, 0:8], value)
    with pytest.raises(ValueError, match=r"float32\[8, 8\], got float64\[8, 8\]"):
        write_block(mem, d, (0, 0), value.astype(np.float64), None)


def test_three_dimensions() -> None:
    a = np.arange(4 * 8 * 16, dtype=np.float16).reshape(4, 8, 16)
    mem, d = _memory(a), _desc(a, (2, 4, 8))
    np.testing.assert_array_equal(read_block(mem, d, (1, 4, 8), None), a[1:3, 4:8, 8:16])
    block = read_block(mem, d, (3, -2, 12), None)
    np.testing.assert_array_equal(block[0, 2:, :4], a[3, 0:2, 12:16])
    assert not block[1].any() and not block[:, :2].any() and not block[:, :, 4:].any()


def test_faults_inside_the_bounds_name_the_array() -> None:
    a = np.zeros((16, 16), np.float32)
    d = _desc(a, (8, 8), shape=(32, 16))  # claims more rows than the array has
    read_block(_memory(a), d, (8, 0), None)
    with pytest.raises(InterpreterError, match="out of bounds load of argument 'a'") as info:
        read_block(_memory(a), d, (12, 0), None)
    assert info.value.code == "TLXC-INTERP-001"
    with pytest.raises(InterpreterError, match="out of bounds store of argument 'a'"):
        write_block(_memory(a), d, (16, 0), np.zeros((8, 8), np.float32), None)


@pytest.mark.parametrize("args,message", [
    (((64, 60), (60, 1), (16, 16), np.float16), r"strides\[0\] is 60 elements \(120 bytes\)"),
    (((64, 64), (1, 64), (16, 16), np.float16), "last stride"),
    (((64, 64), (64, 1), (16, 4), np.float16), r"inner block dimension is 4 elements \(8 bytes\)"),
    (((64, 64), (64, 1), (16, 12), np.float32), "powers of two"),
    (((64, 64), (64, 1), (16, 16), np.int32, "nan"), "floating-point"),
])
def test_make_descriptor_checks(args: tuple, message: str) -> None:
    with pytest.raises(InterpreterError, match=message) as info:
        make_descriptor(base_address(0), *args)
    assert info.value.code == "TLXC-INTERP-001"
    with pytest.raises(InterpreterError, match="not 16-byte aligned"):
        make_descriptor(base_address(0) + 8, (64, 64), (64, 1), (16, 16), np.float16)


_KERNEL = """
@tlxc.kernel
def k(d, x, n):
    tl.store(x + tl.arange(0, 16), tl.arange(0, 16) + n)
"""


@pytest.mark.interpreter_only
def test_host_descriptor_arguments(load_kernels: Any) -> None:
    k = load_kernels(_KERNEL).k
    a = np.arange(64 * 32, dtype=np.float16).reshape(64, 32)
    x = np.zeros(16, np.int32)
    desc = tlxc.TensorDescriptor.from_tensor(a, [16, 16])
    ck = k.interpret[(1,)](desc, x, 3)
    np.testing.assert_array_equal(x, np.arange(16) + 3)
    assert str(ck.signature["d"]) == "tensordesc<fp16[16,16]>"  # sm_90a (TMA): sizes not specialized
    memory, values = bind_arguments(ck.func, [desc, x, 3])
    d = values[0]
    assert d == DescriptorValue(base_address(0), (64, 32), (32, 1), (16, 16), np.dtype(np.float16), "zero")
    np.testing.assert_array_equal(read_block(memory, d, (16, 16), None), a[16:32, 16:32])
    write_block(memory, d, (56, 24), np.ones((16, 16), np.float16), None)
    assert (a[56:, 24:] == 1).all() and a[55, 24] != 1


@pytest.mark.interpreter_only
def test_host_descriptor_argument_errors(load_kernels: Any) -> None:
    k = load_kernels(_KERNEL).k
    a = np.zeros((64, 32), np.float16)
    x = np.zeros(16, np.int32)
    ck = k.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(a, [16, 16]), x, 3)
    wrong_block = tlxc.TensorDescriptor.from_tensor(a, [32, 16])
    with pytest.raises(CompilationError, match=r"argument 'd' of kernel 'k': the descriptor's block_shape is \[32, "
                                               r"16\] but the kernel was compiled for \[16, 16\]"):
        bind_arguments(ck.func, [wrong_block, x, 3])
    with pytest.raises(CompilationError, match="has dtype float32 but the kernel was compiled for descriptors of f16"):
        bind_arguments(ck.func, [tlxc.TensorDescriptor.from_tensor(a.astype(np.float32), [16, 16]), x, 3])
    with pytest.raises(CompilationError, match="pass a tlxc.TensorDescriptor over a numpy array, got ndarray"):
        bind_arguments(ck.func, [a, x, 3])
    narrow = tlxc.TensorDescriptor.from_tensor(np.zeros((64, 8), np.float16), [16, 8])
    narrow.block_shape = [16, 16]  # changed after construction: checked again when bound
    narrow.strides = [4, 1]
    with pytest.raises(CompilationError, match=r"strides\[0\] is 4 elements \(8 bytes\)"):
        bind_arguments(ck.func, [narrow, x, 3])
    bad = tlxc.TensorDescriptor(a, [64, 32], [32, 1], [16, 16])
    bad.block_shape = [16, 12]
    with pytest.raises(CompilationError, match=r"argument 'd': the descriptor's block_shape \[16, 12\] must have"):
        k.interpret[(1,)](bad, x, 3)  # a launch specializes on the block shape


@pytest.mark.interpreter_only
def test_descriptor_sizes_do_not_split_nvidia_variants(load_kernels: Any) -> None:
    """Sizes that are multiples of 16 specialize AMD variants (their bounds checks hold for
    whole vectors); TMA checks bounds itself, so on NVIDIA (and in the interpreter, which
    compiles for sm_90a) both kinds of size share one variant."""
    k = load_kernels(_KERNEL).k
    x = np.zeros(16, np.int32)
    for rows in (64, 40):
        a = np.zeros((rows, 32), np.float16)
        k.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(a, [16, 16]), x, 3)
    assert len(k.cache) == 1
