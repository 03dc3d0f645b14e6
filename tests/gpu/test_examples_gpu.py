"""The example kernels on the GPU (``pytest -m gpu``): the same launches as the
interpreter tests, on torch tensors, compared with numpy references."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from example_modules import load_example  # tests/example_modules.py

import tlxc

pytestmark = pytest.mark.gpu




@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 1000, 4096, 100003])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_vector_add(torch: Any, n: int, dtype: str) -> None:
    ex = load_example("vector_add")
    dt = getattr(torch, dtype)
    x = torch.randn(n, device="cuda", dtype=dt)
    y = torch.randn(n, device="cuda", dtype=dt)
    out = torch.empty_like(x)
    ex.add_kernel[(tlxc.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(1, 7), (37, 100), (256, 1024), (64, 781)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax(torch: Any, shape: tuple[int, int], dtype: str) -> None:
    ex = load_example("fused_softmax")
    x = torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype))
    out = torch.empty_like(x)
    block = tlxc.next_power_of_2(shape[1])
    ex.softmax_kernel[(min(shape[0], 64),)](out, x, x.stride(0), out.stride(0), shape[0], shape[1], BLOCK=block)
    ref = torch.softmax(x.float(), dim=1).to(x.dtype)
    tol = 1e-5 if dtype == "float32" else 2e-3
    torch.testing.assert_close(out, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape,block", [((8, 64), 64), ((37, 1000), 256), ((128, 4096), 1024)])
def test_layer_norm(torch: Any, shape: tuple[int, int], block: int) -> None:
    ex = load_example("layer_norm")
    M, N = shape
    x = torch.randn(M, N, device="cuda")
    w, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    y = torch.empty_like(x)
    mean, rstd = torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
    ex.layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5, BLOCK=block)
    ref = torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5)
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, x.mean(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,N,K", [(64, 64, 64), (100, 70, 90), (256, 512, 128)])
@pytest.mark.parametrize("block", [(64, 64, 32), (32, 32, 16)])
def test_matmul_fp16(torch: Any, M: int, N: int, K: int, block: tuple[int, int, int]) -> None:
    ex = load_example("matmul")
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    bm, bn, bk = block
    grid = (tlxc.cdiv(M, bm) * tlxc.cdiv(N, bn),)
    ex.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                           c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=4)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=2e-2)


def test_matmul_fp32_ieee(torch: Any) -> None:
    ex = load_example("matmul")
    M, N, K = 48, 40, 56
    a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
    c = torch.empty(M, N, device="cuda")
    grid = (tlxc.cdiv(M, 32) * tlxc.cdiv(N, 32),)
    ex.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                           c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=4,
                           INPUT_PRECISION="ieee")
    ref = (a.double() @ b.double()).float()
    torch.testing.assert_close(c, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("M, N, K, sms", [(1000, 520, 304, 7), (2048, 1024, 512, 132), (64, 64, 64, 3)])
@pytest.mark.parametrize("cfg", [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (64, 64, 32, 4, 2)])
def test_persistent_matmul(torch: Any, M: int, N: int, K: int, sms: int, cfg: tuple[int, ...]) -> None:
    ex = load_example("persistent_matmul")
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.full((M, N), 7.0, device="cuda", dtype=torch.float16)
    bm, bn, bk, w, s = cfg
    grid = (min(sms, tlxc.cdiv(M, bm) * tlxc.cdiv(N, bn)),)
    ex.persistent_matmul_kernel[grid](*ex.descriptors(a, b, c, (bm, bn, bk)), M, N, K, BLOCK_M=bm, BLOCK_N=bn,
                                      BLOCK_K=bk, GROUP_SIZE_M=8, NUM_SMS=grid[0], num_warps=w, num_stages=s)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_ctx", [64, 200])
def test_attention(torch: Any, causal: bool, n_ctx: int) -> None:
    ex = load_example("attention")
    Z, H, D = 2, 3, 64
    q, k, v = (torch.randn(Z, H, n_ctx, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    m = torch.empty(Z * H, n_ctx, device="cuda")
    sm_scale = 0.5
    BM, BN = 64, 32
    grid = (tlxc.cdiv(n_ctx, BM), Z * H)
    ex.attn_fwd[grid](q, k, v, o, m, sm_scale, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                      H, n_ctx, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, CAUSAL=causal)
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                                           scale=sm_scale)
    torch.testing.assert_close(o.float(), ref, rtol=2e-2, atol=2e-2)


def test_reference_is_numpy_consistent() -> None:
    assert np.float32(1) == 1
