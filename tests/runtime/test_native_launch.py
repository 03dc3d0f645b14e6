"""The native ``cuLaunchKernel`` builtin (runtime/native_launch.py), on the CPU: built over
a stand-in with the driver function's C signature that records what it is called with."""

from __future__ import annotations

import ctypes

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
