"""Descriptors in storage of the kernel's own, in the interpreter:
``tlx.allocate_tensor_descriptor(num)``, ``tlx.make_tensor_descriptor(desc_ptr=ptrs[i], ...)``
and ``tlx.reinterpret_tensor_descriptor(ptrs[i], block_shape, dtype)`` (the TLX test
``test_make_tensor_descriptor`` among them), and their errors: an index past the
allocation, reading storage nothing wrote, reading it for another block, and the
frontend's checks. The GPU runs are in tests/gpu/test_tlx_device_desc_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest
from tlx_device_desc_kernels import desc_ptr_copy, desc_ptr_copy_1d  # tests/tlx/tlx_device_desc_kernels.py

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


def test_descriptors_through_their_storage() -> None:
    x = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
    y = np.zeros_like(x)
    desc_ptr_copy.interpret[(3, 2)](x, y, 40, 24, BM=16, BN=16)
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.not_on_gpu_yet("1-D TMA blocks")
def test_tlx_make_tensor_descriptor_1d_int16() -> None:
    x = np.arange(300, dtype=np.int16)
    y = np.zeros_like(x)
    desc_ptr_copy_1d.interpret[(5,)](x, y, 300, BLOCK_SIZE=64)
    np.testing.assert_array_equal(y, x)


@tlxc.jit
def _misuse(x_ptr, i, N, CASE: tl.constexpr):
    ptrs = tlx.allocate_tensor_descriptor(2)
    if CASE == 0:  # an index past the allocation
        tlx.make_tensor_descriptor(ptrs[i], x_ptr, [N], [1], [16])
    elif CASE == 1:  # read before anything was written
        d = tlx.reinterpret_tensor_descriptor(ptrs[1], [16], tl.float32)
        d.store([0], tl.zeros((16,), tl.float32))
    else:  # read for another block than it was made for
        tlx.make_tensor_descriptor(ptrs[0], x_ptr, [N], [1], [16])
        d = tlx.reinterpret_tensor_descriptor(ptrs[0], [32], tl.float32)
        d.store([0], tl.zeros((32,), tl.float32))


@pytest.mark.interpreter_only
@pytest.mark.parametrize("case, code, message", [
    (0, "TLXC-INTERP-001", "descriptor index 2 is outside the 2 descriptors"),
    (1, "TLXC-INTERP-005", "no make_tensor_descriptor has written"),
    (2, "TLXC-TLX-003", "made for blocks of float32[16] and is reinterpreted for blocks of float32[32]")])
def test_misuse_is_reported(case: int, code: str, message: str) -> None:
    x = np.zeros(64, np.float32)
    with pytest.raises(tlxc.InterpreterError) as info:
        _misuse.interpret[(1,)](x, 2, 64, CASE=case)
    assert info.value.code == code and message in info.value.message


@tlxc.jit
def _bad_calls(x_ptr, CASE: tl.constexpr):
    ptrs = tlx.allocate_tensor_descriptor(2)
    if CASE == 0:
        tlx.make_tensor_descriptor(x_ptr, x_ptr, [16], [1], [16])  # ERR0
    elif CASE == 1:
        tlx.reinterpret_tensor_descriptor(ptrs[2], [16], tl.float32)  # ERR1
    else:
        tlx.allocate_tensor_descriptor(0)  # ERR2


@pytest.mark.parametrize("case, code, message", [
    (0, "TLXC-TLX-003", "desc_ptr must be descriptor storage from tlx.allocate_tensor_descriptor"),
    (1, "TLXC-TLX-001", "descriptor index 2 is out of range for an array of 2"),
    (2, "TLXC-TLX-003", "the number of descriptors must be at least 1")])
def test_frontend_checks(case: int, code: str, message: str) -> None:
    import inspect

    with pytest.raises(tlxc.CompilationError) as info:
        _bad_calls.compile("*fp32:16", {"CASE": case})
    e = info.value
    lines, start = inspect.getsourcelines(_bad_calls)
    assert e.code == code and message in e.message
    assert e.loc.line == start + next(i for i, ln in enumerate(lines) if f"# ERR{case}" in ln)
