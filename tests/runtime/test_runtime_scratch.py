"""Global scratch for kernels that build TMA descriptors on the device, on the CPU with the
``fake_driver`` fixture: the argument plan's hidden pointer slot, the allocator's call
(``grid size x size`` bytes, the alignment, the stream), the address packed last, the
clear error without an allocator, and kernels without scratch untouched."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any
from typing import Any as FakeDriver  # the fixture's class lives in tests/conftest.py

import pytest
from test_runtime_args import FakeCudaArray
from tlxc.runtime import ArgPlan, LaunchError, LoadedKernel, get_allocator, scratch, set_allocator

import tlxc

SIG = ["*fp32:16", "i32"]
SCRATCH = {"size": 256, "align": 128}


class Buffer:
    """What a torch allocator returns, as far as the launcher looks."""

    def __init__(self, address: int) -> None:
        self.address = address

    def data_ptr(self) -> int:
        return self.address


@pytest.fixture
def allocations() -> Any:
    calls: list[tuple[int, int, Any]] = []

    def alloc(size: int, alignment: int, stream: Any) -> Buffer:
        calls.append((size, alignment, stream))
        return Buffer(0x7000 * 0x100 * len(calls))

    set_allocator(alloc)
    yield calls
    set_allocator(None)


def kernel(metadata: dict[str, Any] | None = None) -> LoadedKernel:
    return LoadedKernel(b"\x7fELF fake cubin", "k", SIG, arg_names=["x", "n"],
                        metadata={"global_scratch": SCRATCH} if metadata is None else metadata)


def test_plan_has_a_hidden_pointer_after_the_arguments() -> None:
    plan = ArgPlan(SIG, global_scratch=True)
    assert plan.offsets == (0, 8, 16) and plan.size == 24 and plan.format == "<QixxxxQ"
    assert plan.signature == SIG and len(plan) == 2  # the arguments are still the kernel's own
    assert plan.pack((FakeCudaArray(0x1000), 5)) == struct.pack("<Qi4xQ", 0x1000, 5, 0)
    assert ArgPlan([], global_scratch=True).size == 8


def test_launch_allocates_grid_times_size(fake_driver: FakeDriver, allocations: list) -> None:
    k = kernel()
    x = FakeCudaArray(0x10000)
    k((3, 2), (x, 7))
    k((5,), (x, 8), stream=0x55)
    assert allocations == [(6 * 256, 128, 0), (5 * 256, 128, 0x55)]
    assert fake_driver.launches[0][2] == struct.pack("<Qi4xQ", 0x10000, 7, 0x700000)
    assert fake_driver.launches[1][2] == struct.pack("<Qi4xQ", 0x10000, 8, 0xE00000)


def test_without_an_allocator_the_launch_says_to_set_one(fake_driver: FakeDriver) -> None:
    assert get_allocator() is None
    with pytest.raises(LaunchError, match=r"1536 bytes of global scratch.*call tlxc\.set_allocator") as info:
        kernel()((3, 2), (FakeCudaArray(0x10000), 7))
    assert isinstance(info.value, RuntimeError) and "'k'" in str(info.value)  # as Triton: a RuntimeError
    assert fake_driver.launches == []


@pytest.mark.parametrize("returned, message", [(Buffer(0x1040), "aligned to 128"), (Buffer(0), "non-null"),
                                               ("memory", "must return a GPU tensor")])
def test_a_bad_allocation_is_refused(fake_driver: FakeDriver, returned: Any, message: str) -> None:
    set_allocator(lambda size, align, stream: returned)
    try:
        with pytest.raises(LaunchError, match=message):
            kernel()((1,), (FakeCudaArray(0x10000), 7))
    finally:
        set_allocator(None)
    assert fake_driver.launches == []


def test_kernels_without_scratch_never_call_the_allocator(fake_driver: FakeDriver, allocations: list) -> None:
    k = kernel({})
    k((4,), (FakeCudaArray(0x10000), 1))
    assert allocations == [] and fake_driver.launches[0][2] == struct.pack("<Qi", 0x10000, 1)
    assert "_scratch" not in k.launch_source


def test_scratch_survives_save_and_load(tmp_path: Path, fake_driver: FakeDriver, allocations: list) -> None:
    path = kernel().save(tmp_path / "k")
    k = LoadedKernel.from_file(path)
    assert k.scratch_bytes == 256 and k.plan.global_scratch
    k((2,), (FakeCudaArray(0x10000), 3))
    assert allocations == [(512, 128, 0)]


def test_plan_and_metadata_must_agree() -> None:
    with pytest.raises(ValueError, match="hidden scratch pointer"):
        LoadedKernel(b"cubin", "k", ArgPlan(SIG), metadata={"global_scratch": SCRATCH})


def test_set_allocator_checks_its_argument() -> None:
    with pytest.raises(TypeError, match="must be a function"):
        tlxc.set_allocator(42)
    fn = lambda size, align, stream: None  # noqa: E731
    tlxc.set_allocator(fn)
    assert scratch.get_allocator() is fn
    tlxc.set_allocator(None)
    assert get_allocator() is None
