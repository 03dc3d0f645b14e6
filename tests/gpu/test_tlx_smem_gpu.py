"""Shared-memory buffers, mbarriers, named barriers and cp.async on the GPU (``pytest -m
gpu``): the kernels of tests/tlx/tlx_smem_kernels.py (and ``roundtrip_smem``) against
numpy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_smem_kernels as K  # noqa: E402  (tests/tlx/tlx_smem_kernels.py)
from tlx_kernels import roundtrip_smem  # noqa: E402  (tests/tlx/tlx_kernels.py)

pytestmark = pytest.mark.gpu

DTYPES = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "int32": np.int32}


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


def _data(torch: Any, shape: tuple[int, ...], dtype: str, seed: int = 0) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    if dtype == "int8":
        host = rng.integers(-128, 127, size=shape).astype(np.int8)
    else:
        host = rng.standard_normal(shape).astype(DTYPES[dtype])
    return torch.from_numpy(host).cuda(), host


@pytest.mark.parametrize("block", [16, 32, 64])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_roundtrip_smem_transposes(torch: Any, block: int, dtype: str) -> None:
    x, host = _data(torch, (block, block), dtype)
    y = torch.empty_like(x)
    roundtrip_smem[(1,)](x, y, BLOCK=block)
    np.testing.assert_array_equal(y.cpu().numpy(), host.T)


@pytest.mark.parametrize("shape,num,idx", [((32, 64), 3, 2), ((64, 64), 2, 1), ((8, 16), 1, 0), ((16, 128), 2, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_store_load(torch: Any, shape: tuple[int, int], num: int, idx: int, dtype: str) -> None:
    x, host = _data(torch, shape, dtype)
    y = torch.empty_like(x)
    K.store_load[(1,)](x, y, R=shape[0], C=shape[1], NUM=num, IDX=idx)
    np.testing.assert_array_equal(y.cpu().numpy(), host)


@pytest.mark.parametrize("shape", [(64, 32), (32, 128), (128, 64), (16, 16)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("warps", [4, 8])
def test_transpose_view(torch: Any, shape: tuple[int, int], dtype: str, warps: int) -> None:
    x, host = _data(torch, shape, dtype)
    y = torch.empty((shape[1], shape[0]), dtype=x.dtype, device="cuda")
    K.transpose_view[(1,)](x, y, R=shape[0], C=shape[1], num_warps=warps)
    np.testing.assert_array_equal(y.cpu().numpy(), host.T)


@pytest.mark.parametrize("num,warps", [(1, 4), (2, 4), (3, 4), (2, 8), (2, 1)])
def test_ring_of_buffers(torch: Any, num: int, warps: int) -> None:
    tiles, R, C = 7, 32, 64
    x, host = _data(torch, (tiles, R, C), "float32")
    y = torch.empty((tiles, C, R), dtype=x.dtype, device="cuda")
    K.ring[(1,)](x, y, tiles, R=R, C=C, NUM=num, num_warps=warps)
    np.testing.assert_array_equal(y.cpu().numpy(), 2 * host.transpose(0, 2, 1))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_slices(torch: Any, dtype: str) -> None:
    x, host = _data(torch, (64, 64), dtype)
    y = torch.empty_like(x)
    K.slices[(1,)](x, y, R=64, C=64)
    np.testing.assert_array_equal(y.cpu().numpy(), np.concatenate([host[32:], host[:32]]))


@pytest.mark.parametrize("keep", [0, 1])
@pytest.mark.parametrize("dtype,shape", [("float16", (64, 128)), ("float32", (32, 64)), ("float16", (16, 256))])
def test_slices_at_runtime_offsets(torch: Any, keep: int, dtype: str, shape: tuple[int, int]) -> None:
    x, host = _data(torch, shape, dtype)
    y = torch.empty_like(x)
    K.slices_runtime[(1,)](x, y, keep, R=shape[0], C=shape[1])
    want = host if keep else np.roll(np.roll(host, shape[0] // 2, 0), shape[1] // 2, 1)
    np.testing.assert_array_equal(y.cpu().numpy(), want)


def test_reinterpret(torch: Any) -> None:
    x, host = _data(torch, (1024,), "float32")
    y = torch.empty(1024, dtype=torch.int32, device="cuda")
    K.reinterpret[(1,)](x, y, N=1024)
    np.testing.assert_array_equal(y.cpu().numpy(), host.view(np.int32))


@pytest.mark.parametrize("n", [1, 1000, 1024, 5000])
@pytest.mark.parametrize("dtype,R,C,num", [("float32", 32, 32, 3), ("float16", 16, 64, 2), ("float16", 64, 64, 4),
                                           ("int8", 32, 64, 2)])
@pytest.mark.parametrize("warps", [4, 8])
def test_cp_async_copy(torch: Any, n: int, dtype: str, R: int, C: int, num: int, warps: int) -> None:
    x, host = _data(torch, (n,), dtype)
    y = torch.zeros(((n + R * C - 1) // (R * C)) * R * C, dtype=x.dtype, device="cuda")
    K.cp_async_copy[(1,)](x, y, n, R=R, C=C, NUM=num, num_warps=warps)
    out = y.cpu().numpy()
    np.testing.assert_array_equal(out[:n], host)
    np.testing.assert_array_equal(out[n:], 0)


@pytest.mark.parametrize("iters", [0, 1, 5, 64])
def test_mbarrier_phases(torch: Any, iters: int) -> None:
    x, host = _data(torch, (128,), "float32")
    y = torch.empty_like(x)
    K.mbarrier_pingpong[(2,)](x, y, iters, N=128)
    np.testing.assert_allclose(y.cpu().numpy(), host + iters, rtol=0, atol=1e-4)


def test_thread_id(torch: Any) -> None:
    y = torch.full((2,), -1, dtype=torch.int32, device="cuda")
    K.thread_ids[(1,)](y)
    np.testing.assert_array_equal(y.cpu().numpy(), [0, 1])


def test_branches_on_thread_id(torch: Any) -> None:
    """Only the threads a branch on tlx.thread_id selects run its body: thread 0's part of
    a tile store (element 0 at least, nothing past its own few), thread 5's scalar store,
    and per-thread loop trip counts."""
    y = torch.zeros((128,), dtype=torch.int32, device="cuda")
    z = torch.full((16,), -1, dtype=torch.int32, device="cuda")
    K.thread_branches[(1,)](y, z, 100, BLOCK=128)
    got = y.cpu().numpy()
    assert got[0] == 42 and not got[4:].any(), got
    zz = z.cpu().numpy()
    assert zz[1] == 5 and zz[0] == -1
    np.testing.assert_array_equal(zz[2:10], [t % 3 for t in range(8)])


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("n", [0, 100, 256])
def test_cp_async_other(torch: Any, dtype: str, n: int) -> None:
    x, host = _data(torch, (256,), dtype)
    y = torch.zeros_like(x)
    K.cp_async_other[(1,)](x, y, n, FILL=3, N=256)
    out = y.cpu().numpy()
    np.testing.assert_array_equal(out[:n], host[:n])
    np.testing.assert_array_equal(out[n:], 3)


@pytest.mark.parametrize("n", [4, 64])
def test_element_views(torch: Any, n: int) -> None:
    host = np.arange(1, 65, dtype=np.float32)
    y = torch.zeros(64, device="cuda")
    K.element_views[(1,)](torch.from_numpy(host).cuda(), y, n, N=64)
    np.testing.assert_array_equal(y.cpu().numpy(), np.full(64, host[:n].sum() + host[3], np.float32))
