"""``tlx.async_dot`` variants on the CPU interpreter against numpy (the kernels and their
launches: tests/tlx/tlx_wgmma_kernels.py): every operand type (fp16, bf16, tf32, fp8
e4m3/e5m2, int8), fp16 accumulators, A in registers, K-major B through ``local_trans``,
tile shapes and warpgroup splits, ``use_acc`` at run time, ``acc=None``, core ops on the
accumulator, and TMA (``desc.load`` / ``desc.store``, a reducing store). The same cases
run on the GPU in tests/gpu/test_tlx_wgmma_gpu.py (and here under TLXC_TEST_ON_GPU=1)."""

from __future__ import annotations

import numpy as np
import pytest
import tlx_wgmma_kernels as W  # tests/tlx/tlx_wgmma_kernels.py

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@pytest.mark.parametrize("name", sorted(W.CASES))
def test_async_dot_case(name: str) -> None:
    W.check_case(name)


def test_constant_use_acc_false_ignores_the_accumulator() -> None:
    a = np.ones((64, 32), np.float16)
    b = np.ones((32, 64), np.float16)
    c = np.zeros((64, 64), np.float32)
    _use_acc_false.interpret[(1,)](a, b, c)
    np.testing.assert_array_equal(c, np.full((64, 64), 32.0, np.float32))


@tlxc.jit
def _use_acc_false(a_ptr, b_ptr, c_ptr):
    r64 = tl.arange(0, 64)
    r32 = tl.arange(0, 32)
    a_buf = tlx.local_alloc((64, 32), tl.float16, 1)
    b_buf = tlx.local_alloc((32, 64), tl.float16, 1)
    tlx.local_store(a_buf[0], tl.load(a_ptr + r64[:, None] * 32 + r32[None, :]))
    tlx.local_store(b_buf[0], tl.load(b_ptr + r32[:, None] * 64 + r64[None, :]))
    acc = tlx.async_dot(a_buf[0], b_buf[0], tl.full((64, 64), 100.0, tl.float32), use_acc=False)
    tl.store(c_ptr + r64[:, None] * 64 + r64[None, :], tlx.async_dot_wait(0, acc))
