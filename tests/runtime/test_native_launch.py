"""The native ``cuLaunchKernel`` builtin (runtime/native_launch.py), on the CPU: built over
a stand-in with the driver function's C signature that records what it is called with."""

from __future__ import annotations

import ctypes
import struct

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest
from tlxc.runtime.native_launch import make_launcher

PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_void_p)


@pytest.fixture(scope="module")
def launcher():
    calls: list[tuple] = []

    def stand_in(*args):
        calls.append(args)
        return 700 + len(calls)  # a CUresult the test can tell apart

    cb = PROTO(stand_in)
    return make_launcher(ctypes.cast(cb, ctypes.c_void_p).value, cb), calls


def test_arguments_reach_the_driver_call(launcher) -> None:
    launch, calls = launcher
    n = len(calls)
    r = launch(0x7F00_1234_5000, 3, 2, 1, 128, 1, 1, 49152, 0xABC0, 0x7F00_0000_8000)
    assert r == 700 + n + 1 and len(calls) == n + 1
    # cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra=NULL)
    assert calls[-1] == (0x7F00_1234_5000, 3, 2, 1, 128, 1, 1, 49152, 0xABC0, 0x7F00_0000_8000, None)


def test_zero_handles_are_null(launcher) -> None:
    launch, calls = launcher
    launch(1, 1, 1, 1, 32, 1, 1, 0, 0, 0)
    assert calls[-1][8:] == (None, None, None)  # default stream, no parameters, no extra


def test_index_types_are_taken(launcher) -> None:
    launch, calls = launcher
    launch(np.int64(5), np.int32(7), np.uint16(2), True, 64, 2, 1, 0, 0, 0)
    assert calls[-1][:7] == (5, 7, 2, 1, 64, 2, 1)


@pytest.mark.parametrize("bad", [-1, 1 << 32, 1 << 40])
@pytest.mark.parametrize("slot", range(1, 8))
def test_figures_outside_32_bits_are_invalid_value_without_a_call(launcher, slot: int, bad: int) -> None:
    launch, calls = launcher
    args = [1, 1, 1, 1, 32, 1, 1, 0, 0, 0]
    args[slot] = bad
    n = len(calls)
    assert launch(*args) == 1  # CUDA_ERROR_INVALID_VALUE
    assert len(calls) == n


def test_largest_figures_pass(launcher) -> None:
    launch, calls = launcher
    launch(1, 0xFFFF_FFFF, 65535, 65535, 1024, 1, 1, 0xFFFF_FFFF, 0, 0)
    assert calls[-1][1:8] == (0xFFFF_FFFF, 65535, 65535, 1024, 1, 1, 0xFFFF_FFFF)


def test_a_non_integer_raises_type_error(launcher) -> None:
    launch, calls = launcher
    n = len(calls)
    with pytest.raises(TypeError):
        launch(1, 1.5, 1, 1, 32, 1, 1, 0, 0, 0)
    with pytest.raises(TypeError):
        launch(1, 1, 1, 1, 32, 1, 1, 0, None, 0)
    assert len(calls) == n


def test_wrong_argument_count_is_invalid_value(launcher) -> None:
    launch, calls = launcher
    n = len(calls)
    assert launch(1, 2, 3) == 1 and launch() == 1
    assert len(calls) == n


def test_runtime_falls_back_without_a_driver(monkeypatch) -> None:
    from tlxc.runtime import native_launch

    monkeypatch.setattr(native_launch, "_state", {})
    monkeypatch.setenv("TLXC_NATIVE_LAUNCH", "0")
    assert native_launch.native_launcher() is None


# -- the native launch_trusted of one kernel ----------------------------------------------------------

def _slots(plan, data: bytes) -> list[bytes]:
    """The argument slots of a packed buffer (its padding is not written by the native one)."""
    return [data[o: o + p.size] for p, o in zip(plan.params, plan.offsets)]


def _trusted(signature: list[str], default_stream=lambda: 0xD5):
    """A native launch_trusted over a stand-in that records (grid, block, shared, stream,
    the packed argument bytes) per call."""
    from tlxc.runtime.args import ArgPlan
    from tlxc.runtime.native_launch import make_trusted_launcher

    plan = ArgPlan(signature)
    calls: list[tuple] = []

    def stand_in(f, gx, gy, gz, bx, by, bz, shared, st, kp, extra):
        data = b""
        if kp:
            data = ctypes.string_at(ctypes.c_void_p.from_address(kp).value, plan.size)
        calls.append((f, (gx, gy, gz), (bx, by, bz), shared, st or 0, _slots(plan, data), extra))
        return 0

    cb = PROTO(stand_in)
    kinds = ["ptr" if p.kind == "ptr" else p.dtype for p in plan.params]
    fn = make_trusted_launcher(ctypes.cast(cb, ctypes.c_void_p).value, 0xF00, (96, 2, 1), 1024, kinds,
                               list(plan.offsets), plan.size, default_stream, keep=cb)
    return fn, plan, calls


def test_trusted_packs_as_the_plan_does() -> None:
    fn, plan, calls = _trusted(["*fp16:16", "i32", "fp32", "*i8", "i64", "fp64", "u32", "u64"])
    values = (0x7F00_0000_1000, -5, 0.1, 0x7F00_0000_2001, -(2**40), 1e300, 2**32 - 1, 2**64 - 1)
    assert fn((7, 3, 2), 0x99, *values) == 0
    assert calls[-1] == (0xF00, (7, 3, 2), (96, 2, 1), 1024, 0x99, _slots(plan, plan.struct.pack(*values)), None)
    assert fn((11,), None, *values) == 0  # (n,) and the default stream
    assert calls[-1][1] == (11, 1, 1) and calls[-1][4] == 0xD5


@hypothesis.given(st.lists(st.sampled_from(["*fp32:16", "i32", "u32", "i64", "u64", "fp32", "fp64"]), max_size=6),
                  st.data())
@hypothesis.settings(max_examples=40)
def test_trusted_packs_what_struct_packs_or_refuses(signature: list[str], data) -> None:
    """Every value the Python launcher packs is packed to the same bytes; every value it
    cannot pack (out of range, wrong type) is -1 with no call and no pending error."""
    fn, plan, calls = _trusted(signature)
    values = []
    for p in plan.params:
        if p.kind == "ptr":
            values.append(data.draw(st.integers(0, 2**64 - 1)))
        elif p.kind == "int":
            values.append(data.draw(st.integers(-(2**65), 2**65)))
        else:
            values.append(data.draw(st.floats(allow_nan=False) | st.sampled_from([1e39, -1e39, 3.4028234e38])))
    try:
        expected = plan.struct.pack(*values)
    except (struct.error, OverflowError):
        expected = None
    n = len(calls)
    r = fn((1, 1, 1), 0, *values)
    if expected is None:
        assert r == -1 and len(calls) == n
    else:
        assert r == 0 and calls[-1][5] == _slots(plan, expected)


def test_trusted_refuses_what_launch_must_explain() -> None:
    fn, plan, calls = _trusted(["*fp32", "i32"])
    for args in [((1, 2), 0, 16, 1), ((2**32, 1, 1), 0, 16, 1), ((-1,), 0, 16, 1), ([1, 1, 1], 0, 16, 1),
                 ((1,), object(), 16, 1), ((1,), 0, "16", 1), ((1,), 0, 16, 1.5), ((1,), 0, 16),
                 ((1,), 0, 16, 1, 2)]:
        assert fn(*args) == -1, args
    assert calls == []


def test_trusted_default_stream_errors_are_refusals() -> None:
    def broken() -> int:
        raise RuntimeError("no stream")

    fn, plan, calls = _trusted(["i32"], default_stream=broken)
    assert fn((1,), None, 3) == -1 and calls == []
    assert fn((1,), 5, 3) == 0 and calls[-1][4] == 5


# -- the guarded launch of one variant ------------------------------------------------------------------

class FakeTensor:
    """What the guards read of a tensor: data_ptr(), is_cuda, dtype."""

    def __init__(self, ptr: int, dtype: object = "f32", is_cuda: object = True) -> None:
        self.ptr, self.dtype, self.is_cuda = ptr, dtype, is_cuda

    def data_ptr(self) -> int:
        return self.ptr


class OtherTensor(FakeTensor):
    pass


F32 = "f32"


def _guarded(guards, extras=(), signature=("*fp32:16", "*fp32", "i32", "fp32")):
    from tlxc.runtime.args import ArgPlan
    from tlxc.runtime.native_launch import make_trusted_launcher

    plan = ArgPlan(list(signature))
    calls: list[tuple] = []

    def stand_in(f, gx, gy, gz, bx, by, bz, shared, st, kp, extra):
        calls.append(((gx, gy, gz), st or 0, _slots(plan, ctypes.string_at(ctypes.c_void_p.from_address(kp).value,
                                                                            plan.size))))
        return 0 if gx != 99 else 719

    cb = PROTO(stand_in)
    kinds = ["ptr" if p.kind == "ptr" else p.dtype for p in plan.params]
    alive = ctypes.c_int32(1)
    result = object()
    fn = make_trusted_launcher(ctypes.cast(cb, ctypes.c_void_p).value, 0xF00, (128, 1, 1), 0, kinds,
                               list(plan.offsets), plan.size, lambda: 0, keep=(cb, alive),
                               alive=ctypes.addressof(alive), guards=guards, extras=extras, result=result)
    return fn, plan, calls, alive, result


GUARDS = [("tensor", FakeTensor, F32, True), ("tensor", FakeTensor, F32, False), ("int", True), ("float",)]


def test_guarded_launch_launches_what_passes_its_guards() -> None:
    fn, plan, calls, alive, result = _guarded(GUARDS, extras=(128, None))
    a, b = FakeTensor(0x1000), FakeTensor(0x2004)
    assert fn((4,), None, a, b, 32, 0.5, 128, None) is result
    assert calls[-1] == ((4, 1, 1), 0, _slots(plan, plan.struct.pack(0x1000, 0x2004, 32, 0.5)))
    assert fn((4,), None, a, b, 32, 0.5, 128.0, None) is result  # extras compare with ==, as the key does
    assert fn((99,), None, a, b, 32, 0.5, 128, None) == 719  # the launch failed: its CUresult
    alive.value = 0
    assert fn((4,), None, a, b, 32, 0.5, 128, None) is None  # unloaded: never launches
    assert len(calls) == 3


@pytest.mark.parametrize("change", [
    lambda args: args.__setitem__(0, FakeTensor(0x1004)),  # alignment
    lambda args: args.__setitem__(1, FakeTensor(0x2000)),  # the unaligned variant, given an aligned pointer
    lambda args: args.__setitem__(0, OtherTensor(0x1000)),  # another type
    lambda args: args.__setitem__(0, FakeTensor(0x1000, dtype="f16")),  # another dtype
    lambda args: args.__setitem__(0, FakeTensor(0x1000, is_cuda=False)),  # not on the GPU
    lambda args: args.__setitem__(0, FakeTensor(0x1000, is_cuda=1)),  # is_cuda must be True itself
    lambda args: args.__setitem__(2, 33),  # divisibility
    lambda args: args.__setitem__(2, 2**31 + 16),  # not i32
    lambda args: args.__setitem__(2, 2**70),  # overflow
    lambda args: args.__setitem__(2, True),  # bool is not int
    lambda args: args.__setitem__(3, 1),  # int is not float
    lambda args: args.__setitem__(4, 64),  # a constexpr
    lambda args: args.__setitem__(5, 8),  # an option
    lambda args: args.pop(),  # the count
])
def test_guarded_launch_refuses_anything_else(change) -> None:
    fn, plan, calls, alive, result = _guarded(GUARDS, extras=(128, None))
    args = [FakeTensor(0x1000), FakeTensor(0x2004), 32, 0.5, 128, None]
    change(args)
    assert fn((4,), None, *args) is None and calls == []


def test_guarded_int_specializations() -> None:
    sig = ("i32",)
    one, _, calls, _, res = _guarded([("int", "one")], signature=sig)
    assert one((1,), 0, 1) is res and one((1,), 0, 16) is None and one((1,), 0, 17) is None
    div, _, _, _, res = _guarded([("int", True)], signature=sig)
    assert div((1,), 0, 16) is res and div((1,), 0, -32) is res and div((1,), 0, 1) is None and div((1,), 0, 17) is None
    odd, _, _, _, res = _guarded([("int", False)], signature=sig)
    assert odd((1,), 0, 17) is res and odd((1,), 0, -3) is res and odd((1,), 0, 1) is None and odd((1,), 0, 16) is None
    anyi, _, _, _, res = _guarded([("int", None)], signature=sig)
    assert anyi((1,), 0, 1) is res and anyi((1,), 0, 16) is res and anyi((1,), 0, 2**31) is None


def test_guarded_attribute_errors_are_refusals() -> None:
    class Broken(FakeTensor):
        @property
        def dtype(self):
            raise RuntimeError("no dtype")

        @dtype.setter
        def dtype(self, v):
            pass

    fn, plan, calls, alive, result = _guarded([("tensor", Broken, F32, None)], signature=("*fp32",))
    assert fn((1,), 0, Broken(0x1000)) is None and calls == []
    assert fn((1,), 0, 5) is None  # still usable, no pending error
