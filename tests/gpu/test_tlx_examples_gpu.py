"""The TLX Hopper examples on the GPU (``pytest -m gpu``): the cp.async + wgmma GEMM, the
TMA + mbarrier GEMM with a TMA-store epilogue and the TMA transpose, on torch tensors,
against torch."""

from __future__ import annotations

from typing import Any

import pytest
from example_modules import load_example  # tests/example_modules.py

import tlxc

pytestmark = pytest.mark.gpu

GEMM_SHAPES = [(128, 128, 64), (256, 384, 512), (1000, 520, 328), (64, 136, 72)]


@pytest.fixture(scope="module")
def torch() -> Any:
    t = pytest.importorskip("torch")
    if t.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma and TMA need sm_90")
    return t


def _ab(torch: Any, M: int, N: int, K: int, dtype: str) -> tuple[Any, Any]:
    g = torch.Generator(device="cuda").manual_seed(M * N + K)
    dt = getattr(torch, dtype)
    a = torch.randn(M, K, device="cuda", dtype=dt, generator=g)
    b = torch.randn(K, N, device="cuda", dtype=dt, generator=g)
    return a, b


@pytest.mark.parametrize("M,N,K", GEMM_SHAPES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("num_warps,BM", [(4, 64), (8, 128)])
def test_tma_gemm(torch: Any, M: int, N: int, K: int, dtype: str, num_warps: int, BM: int) -> None:
    ex = load_example("hopper_gemm_tma")
    a, b = _ab(torch, M, N, K, dtype)
    c = torch.zeros(M, N, device="cuda", dtype=a.dtype)
    BN, BK = 128, 64
    ad = tlxc.TensorDescriptor.from_tensor(a, [BM, BK])
    bd = tlxc.TensorDescriptor.from_tensor(b, [BK, BN])
    cd = tlxc.TensorDescriptor.from_tensor(c, [BM, BN])
    ex.matmul_tma[(tlxc.cdiv(M, BM), tlxc.cdiv(N, BN))](ad, bd, cd, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK,
                                                        NUM_STAGES=3, num_warps=num_warps)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("M,N,K", GEMM_SHAPES)
@pytest.mark.parametrize("num_warps,BM", [(4, 64), (8, 128)])
def test_cp_async_gemm(torch: Any, M: int, N: int, K: int, num_warps: int, BM: int) -> None:
    ex = load_example("hopper_gemm_cp_async")
    a, b = _ab(torch, M, N, K, "float16")
    c = torch.empty(M, N, device="cuda", dtype=a.dtype)
    BN, BK = 128, 64
    ex.matmul_cp_async[(tlxc.cdiv(M, BM), tlxc.cdiv(N, BN))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, NUM_STAGES=3, num_warps=num_warps)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("M,N,dtype,block", [(64, 64, "float32", 32), (200, 72, "float16", 64),
                                            (36, 20, "float32", 8)])
def test_tma_transpose(torch: Any, M: int, N: int, dtype: str, block: int) -> None:
    ex = load_example("tma_transpose")
    x = torch.arange(M * N, device="cuda").reshape(M, N).to(getattr(torch, dtype))
    y = torch.zeros(N, M, device="cuda", dtype=x.dtype)
    xd = tlxc.TensorDescriptor.from_tensor(x, [block, block])
    yd = tlxc.TensorDescriptor.from_tensor(y, [block, block])
    ex.transpose_kernel[(tlxc.cdiv(M, block), tlxc.cdiv(N, block))](xd, yd, BLOCK=block)
    torch.testing.assert_close(y, x.t().contiguous(), rtol=0, atol=0)
