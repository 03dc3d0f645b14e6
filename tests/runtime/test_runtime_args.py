"""The argument plan: parsing, layout, byte-exact packing, and the launch errors for
wrong arguments (CPU only: pointers are fake objects that are never dereferenced)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from tlxc.runtime import ArgPlan, LaunchError, Param, parse_param
from tlxc.runtime.args import bf16_bits


class FakeCudaArray:
    """Something in GPU memory as CuPy and numba describe it."""

    def __init__(self, ptr: int, typestr: str = "<f4", shape: tuple[int, ...] = (4,)) -> None:
        self.__cuda_array_interface__ = {"data": (ptr, False), "typestr": typestr, "shape": shape, "version": 3}


class FakeTensor:
    """A torch-like object: data_ptr(), is_cuda, dtype, device."""

    def __init__(self, ptr: int, dtype: Any = np.float32, is_cuda: bool = True) -> None:
        self._ptr, self.dtype, self.is_cuda = ptr, np.dtype(dtype), is_cuda
        self.device = "cuda:0" if is_cuda else "cpu"

    def data_ptr(self) -> int:
        return self._ptr


def test_parse_params() -> None:
    assert parse_param("*fp32:16", "x") == Param("x", "ptr", "fp32", align=16)
    assert parse_param("*f16", "x") == Param("x", "ptr", "fp16")
    assert parse_param("*kfp16", "x") == Param("x", "ptr", "fp16")
    assert parse_param("i32:16", "n") == Param("n", "int", "i32", divisibility=16)
    assert parse_param("u1", "b") == Param("b", "int", "i1")
    assert parse_param("bf16", "s") == Param("s", "float", "bf16")
    assert [str(parse_param(s, "a")) for s in ("*fp32:16", "i64:16", "fp16", "*bf16")] == \
        ["*fp32:16", "i64:16", "fp16", "*bf16"]
    for bad, msg in [("float", "unknown type"), ("fp32:16", "divisibility"), ("constexpr", "constexpr"),
                     ("fp8e4nv", "cannot take a scalar"), ("nvTmaDesc", "TMA"), ("i32:x", "bad")]:
        with pytest.raises(ValueError, match=msg):
            parse_param(bad, "a")


def test_plan_layout_and_forms() -> None:
    plan = ArgPlan(["*fp32:16", "i32", "i64", "i8", "fp16", "fp64"], ["x", "n", "m", "c", "h", "d"])
    assert plan.format == "<Qixxxxqbxexxxxd"  # each slot aligned to its size, padding explicit
    assert plan.offsets == (0, 8, 16, 24, 26, 32)
    assert plan.size == 40 == struct.calcsize(plan.format)
    assert plan.names == ("x", "n", "m", "c", "h", "d")
    assert ArgPlan("*fp32:16, i32").signature == ["*fp32:16", "i32"]
    assert ArgPlan({"x": "*fp16", "n": "i32"}).names == ("x", "n")
    assert ArgPlan([]).size == 0 and ArgPlan([]).params_address == 0


def test_packing_is_byte_exact() -> None:
    sig = ["*fp32:16", "*fp16", "i1", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "fp16", "bf16", "fp32",
           "fp64", "i32:16"]
    plan = ArgPlan(sig)
    args = (FakeCudaArray(0x7F0000001000), None, True, -128, 255, -32768, 65535, -(2**31), 2**32 - 1, -(2**63),
            2**64 - 1, 1.5, -2.75, 3.25, -1e300, 48)
    expected = [0x7F0000001000, 0, True, -128, 255, -32768, 65535, -(2**31), 2**32 - 1, -(2**63), 2**64 - 1, 1.5,
                bf16_bits(-2.75), 3.25, -1e300, 48]
    assert plan.pack(args) == struct.pack(plan.format, *expected)
    # slot by slot against struct.pack of each value alone
    data = plan.pack(args)
    fmts = ["<Q", "<Q", "<?", "<b", "<B", "<h", "<H", "<i", "<I", "<q", "<Q", "<e", "<H", "<f", "<d", "<i"]
    for off, fmt, v in zip(plan.offsets, fmts, expected):
        assert data[off:off + struct.calcsize(fmt)] == struct.pack(fmt, v)


def test_numpy_scalars_and_int_pointers() -> None:
    plan = ArgPlan(["*i32", "i64", "fp32", "u16"])
    data = plan.pack((np.int64(0x2000), np.int32(-3), np.float32(0.5), np.uint16(7)))
    assert data == struct.pack(plan.format, 0x2000, -3, 0.5, 7)


def test_bf16_rounding() -> None:
    assert bf16_bits(1.0) == 0x3F80
    assert bf16_bits(-2.75) == 0xC030
    assert bf16_bits(1.0 + 2**-8) == 0x3F80  # a tie rounds to even
    assert bf16_bits(1.0 + 3 * 2**-8) == 0x3F82
    assert bf16_bits(float("inf")) == 0x7F80
    assert bf16_bits(float("nan")) & 0x7FC0 == 0x7FC0


def test_packer_reuses_one_buffer() -> None:
    plan = ArgPlan(["i32", "i32"])
    pack = plan.packer()
    pack((1, 2))
    first = bytes(plan.buffer)[: plan.size]
    pack((3, 4))
    assert first == struct.pack("<ii", 1, 2)
    assert bytes(plan.buffer)[: plan.size] == struct.pack("<ii", 3, 4)


def _error(plan: ArgPlan, args: tuple[Any, ...]) -> LaunchError:
    with pytest.raises(LaunchError) as e:
        plan.packer()(args)
    return e.value


def test_host_arrays_are_refused() -> None:
    plan = ArgPlan(["*fp32", "i32"], ["x", "n"])
    e = _error(plan, (np.zeros(4, np.float32), 4))
    assert "argument 0 'x' (*fp32)" in str(e) and "host memory, not on the GPU" in str(e)
    assert e.index == 0 and e.name == "x"
    e = _error(plan, (FakeTensor(0x1000, is_cuda=False), 4))
    assert "not on the GPU" in str(e) and "cpu" in str(e)
    e = _error(plan, ([1.0, 2.0], 4))
    assert "cannot pass a list for a pointer" in str(e)


def test_dtype_mismatch() -> None:
    plan = ArgPlan(["*fp32:16"], ["x"])
    e = _error(plan, (FakeCudaArray(0x1000, "<f2"),))
    assert "dtype <f2 (fp16)" in str(e) and "compiled for pointers to fp32" in str(e)
    e = _error(plan, (FakeTensor(0x1000, np.int32),))
    assert "int32" in str(e) and "fp32" in str(e)
    # bfloat16 has no standard type string: a void type of any width is taken on trust
    ArgPlan(["*bf16"]).pack((FakeCudaArray(0x1000, "<V2"),))


def test_misaligned_pointer() -> None:
    plan = ArgPlan(["*fp32:16", "*fp32"], ["x", "y"])
    e = _error(plan, (FakeCudaArray(0x1004), FakeCudaArray(0x1004)))
    assert "argument 0 'x' (*fp32:16)" in str(e) and "0x1004 is not 16-byte aligned" in str(e)
    assert "specialized on 16-byte alignment" in str(e)
    plan.pack((FakeCudaArray(0x1010), FakeCudaArray(0x1004)))  # no specialization, no check
    e = _error(plan, (0x1008, None))
    assert "not 16-byte aligned" in str(e)


@pytest.mark.parametrize("sig,value,msg", [
    ("i32", 2**31, "2147483648 is out of range for i32 ([-2147483648, 2147483647])"),
    ("i32", -(2**31) - 1, "out of range for i32"),
    ("u32", -1, "-1 is out of range for u32"),
    ("i64", 2**63, "out of range for i64"),
    ("u8", 256, "out of range for u8"),
    ("i32", 3.0, "must be an integer, got float 3.0"),
    ("i32", "7", "must be an integer, got str"),
    ("i32:16", 40, "40 is not a multiple of 16"),
    ("fp32", "x", "must be a number"),
    ("fp16", 1e6, "does not fit in fp16"),
    ("fp32", 1e39, "does not fit in fp32"),
])
def test_scalar_errors(sig: str, value: Any, msg: str) -> None:
    plan = ArgPlan(["*fp32", sig], ["x", "v"])
    e = _error(plan, (None, value))
    assert f"argument 1 'v' ({sig})" in str(e) and msg in str(e)
    assert e.index == 1


def test_wrong_number_of_arguments() -> None:
    plan = ArgPlan(["*fp32", "i32"], ["x", "n"])
    assert "takes 2 arguments (x, n) but 1 was given" in str(_error(plan, (None,)))
    assert "but 3 were given" in str(_error(plan, (None, 1, 2)))


def test_bool_and_inf() -> None:
    plan = ArgPlan(["i1", "fp32", "fp16"])
    assert plan.pack((0, float("inf"), float("-inf"))) == struct.pack(plan.format, False, float("inf"), float("-inf"))
    assert plan.pack((5, 0, 0)) == struct.pack(plan.format, True, 0.0, 0.0)


class _OnDevice:
    """An int32 array in "GPU memory" as CUDA's array interface describes one."""

    def __init__(self, address: int, n: int) -> None:
        self.shape, self.itemsize = (n,), 4
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<i4", "version": 3, "data": (address, False)}


def test_a_reinterpreted_tensor_passes_its_base_address_with_the_wrappers_dtype() -> None:
    """Regression: tlxc.reinterpret(int32 array, tl.uint32) for a *u32 parameter was refused
    on the GPU path ("the array has dtype u32 but this kernel was compiled for pointers to
    u32"): the packer compared the wrapper's tl dtype as if it were an array dtype."""
    import tlxc
    import tlxc.language as tl

    plan = ArgPlan(["*u32:16"], ["x"])
    base = _OnDevice(0x7F0000001000, 16)
    assert plan.pointer_value(0, tlxc.reinterpret(base, tl.uint32), 0) == 0x7F0000001000
    e = _error_of(lambda: plan.pointer_value(0, base, 0))  # the base itself is int32
    assert "the array has dtype <i4 (i32)" in str(e) and "pointers to u32" in str(e)
    e = _error_of(lambda: plan.pointer_value(0, tlxc.reinterpret(base, tl.float32), 0))
    assert "the array has dtype f32 (fp32)" in str(e) and "pointers to u32" in str(e)
    host = np.zeros(16, np.int32)  # the base's memory is still checked: host memory is refused
    e = _error_of(lambda: plan.pointer_value(0, tlxc.reinterpret(host, tl.uint32), 0))
    assert "in host memory, not on the GPU" in str(e)
    e = _error_of(lambda: plan.pointer_value(0, tlxc.reinterpret(_OnDevice(0x7F0000001004, 16), tl.uint32), 0))
    assert "16" in str(e)  # misaligned for the :16 the variant assumes


def _error_of(call: Any) -> LaunchError:
    with pytest.raises(LaunchError) as e:
        call()
    return e.value
