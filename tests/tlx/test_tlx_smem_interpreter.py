"""The kernels of tlx_smem_kernels.py in the interpreter: the reference the GPU tests
(tests/gpu/test_tlx_smem_gpu.py) compare the compiled PTX with."""

from __future__ import annotations

import numpy as np
import pytest
import tlx_smem_kernels as K  # tests/tlx/tlx_smem_kernels.py


@pytest.mark.parametrize("num,idx", [(1, 0), (3, 2)])
def test_store_load(num: int, idx: int) -> None:
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    y = np.zeros_like(x)
    K.store_load.interpret[(1,)](x, y, R=32, C=64, NUM=num, IDX=idx)
    np.testing.assert_array_equal(y, x)


def test_transpose_view() -> None:
    x = np.arange(64 * 32, dtype=np.float16).reshape(64, 32)
    y = np.zeros((32, 64), np.float16)
    K.transpose_view.interpret[(1,)](x, y, R=64, C=32)
    np.testing.assert_array_equal(y, x.T)


def test_ring() -> None:
    x = np.arange(7 * 32 * 64, dtype=np.float32).reshape(7, 32, 64)
    y = np.zeros((7, 64, 32), np.float32)
    K.ring.interpret[(1,)](x, y, 7, R=32, C=64, NUM=2)
    np.testing.assert_array_equal(y, 2 * x.transpose(0, 2, 1))


def test_slices_and_reinterpret() -> None:
    x = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    y = np.zeros_like(x)
    K.slices.interpret[(1,)](x, y, R=64, C=64)
    np.testing.assert_array_equal(y, np.concatenate([x[32:], x[:32]]))
    f = np.random.default_rng(0).random(1024).astype(np.float32)
    bits = np.zeros(1024, np.int32)
    K.reinterpret.interpret[(1,)](f, bits, N=1024)
    np.testing.assert_array_equal(bits, f.view(np.int32))


@pytest.mark.parametrize("keep", [0, 1])
def test_slices_at_runtime_offsets(keep: int) -> None:
    x = np.arange(64 * 128, dtype=np.float16).reshape(64, 128)
    y = np.zeros_like(x)
    K.slices_runtime.interpret[(1,)](x, y, keep, R=64, C=128)
    np.testing.assert_array_equal(y, x if keep else np.roll(np.roll(x, 32, 0), 64, 1))


@pytest.mark.parametrize("n", [1, 1000, 1024])
def test_cp_async_copy_zero_fills(n: int) -> None:
    x = np.arange(n, dtype=np.float32) + 1
    y = np.full(-(-n // 1024) * 1024, 7, np.float32)
    K.cp_async_copy.interpret[(1,)](x, y, n, R=32, C=32, NUM=3)
    np.testing.assert_array_equal(y[:n], x)
    np.testing.assert_array_equal(y[n:], 0)


def test_mbarrier_phases() -> None:
    x = np.random.default_rng(1).random(128).astype(np.float32)
    y = np.zeros_like(x)
    K.mbarrier_pingpong.interpret[(1,)](x, y, 5, N=128)
    np.testing.assert_allclose(y, x + 5, rtol=0, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
def test_cp_async_other_fills_masked_elements(dtype: type) -> None:
    x = (np.arange(256) % 100).astype(dtype)
    y = np.zeros_like(x)
    K.cp_async_other.interpret[(1,)](x, y, 100, FILL=3, N=256)
    np.testing.assert_array_equal(y[:100], x[:100])
    np.testing.assert_array_equal(y[100:], 3)


@pytest.mark.parametrize("n", [4, 64])
def test_element_views(n: int) -> None:
    x = np.arange(1, 65, dtype=np.float32)
    y = np.zeros(64, np.float32)
    K.element_views.interpret[(1,)](x, y, n, N=64)
    np.testing.assert_array_equal(y, np.full(64, x[:n].sum() + x[3], np.float32))
