"""``kernel[grid](...)`` of a kernel that builds TMA descriptors on the device, on the CPU
(the driver is ``fake_driver``, tests/conftest.py): the compiled variant asks for global
scratch, both launch paths (the slow first launch and the fast ones after it) allocate
``grid size x 128 x descriptors`` bytes through ``tlxc.set_allocator``'s function and pass
the address as the hidden last argument, and without an allocator the launch says to set
one. The interpreter needs no scratch."""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tlxc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_device_desc_kernels as D  # noqa: E402  (tests/tlx/tlx_device_desc_kernels.py)

# these tests drive launches through a fake driver: not meaningful with the real GPU harness
pytestmark = pytest.mark.interpreter_only


class FakeTensor:
    def __init__(self, ptr: int, dtype: Any = np.float32) -> None:
        self.ptr, self.dtype = ptr, np.dtype(dtype)

    def data_ptr(self) -> int:
        return self.ptr


class Scratch:
    def __init__(self, address: int) -> None:
        self.address = address

    def data_ptr(self) -> int:
        return self.address


def test_launches_get_scratch_from_the_allocator(fake_driver: Any) -> None:
    calls: list[tuple[int, int, Any]] = []

    def alloc(size: int, alignment: int, stream: Any) -> Scratch:
        calls.append((size, alignment, stream))
        return Scratch(0x100000 * len(calls))

    x, y = FakeTensor(0x1000), FakeTensor(0x2000)
    tlxc.set_allocator(alloc)
    try:
        for grid in ((3, 2), (3, 2), (5, 1)):  # the first launch takes the slow path, the others the fast one
            ck = D.desc_copy[grid](x, y, 40, 24, 24, 32, BM=16, BN=16)
    finally:
        tlxc.set_allocator(None)
    assert ck.metadata["global_scratch"] == {"size": 256, "align": 128}
    assert calls == [(6 * 256, 128, 0), (6 * 256, 128, 0), (5 * 256, 128, 0)]
    # x, y, M, N, stride_x, stride_y (stride_y = 32 was specialized as divisible by 16), then the scratch
    packed = [struct.unpack("<QQiiiiQ", data) for _, _, data in fake_driver.launches]
    assert [p[-1] for p in packed] == [0x100000, 0x200000, 0x300000]
    assert packed[0][:6] == (0x1000, 0x2000, 40, 24, 24, 32)


def test_without_an_allocator_the_launch_says_to_set_one(fake_driver: Any) -> None:
    x = FakeTensor(0x1000)
    with pytest.raises(RuntimeError, match=r"builds TMA descriptors on the device.*tlxc\.set_allocator"):
        D.desc_copy[(1, 1)](x, x, 16, 16, 16, 16, BM=16, BN=16)
    assert fake_driver.launches == []


def test_the_interpreter_needs_no_allocator() -> None:
    x = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
    y = np.zeros_like(x)
    D.desc_copy.interpret[(3, 2)](x, y, 40, 24, 24, 24, BM=16, BN=16)
    np.testing.assert_array_equal(y, 2 * x)
