"""TMA descriptors built on the device (``tl.make_tensor_descriptor``) on the GPU
(``pytest -m gpu``): the launch gives each program global scratch through
``tlxc.set_allocator`` (a torch allocator here, as the TLX tutorials use), the kernel
writes its CUtensorMaps there, and TMA copies through them. A copy with clipped edges and
strided rows, NaN padding, descriptors in storage of the kernel's own
(``tlx.allocate_tensor_descriptor`` / ``reinterpret_tensor_descriptor``), and the TMA GEMM of
examples/hopper_gemm_tma.py with its descriptors made in the kernel, against torch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import tlxc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_device_desc_kernels as D  # noqa: E402  (tests/tlx/tlx_device_desc_kernels.py)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch() -> Any:
    t = pytest.importorskip("torch")
    if t.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA needs sm_90")
    return t


@pytest.fixture
def allocator(torch: Any) -> Iterator[list[tuple[int, int, Any]]]:
    """A torch allocator for the launches' scratch; yields the (size, alignment, stream) of each call."""
    calls: list[tuple[int, int, Any]] = []

    def alloc(size: int, alignment: int, stream: Any) -> Any:
        calls.append((size, alignment, stream))
        return torch.empty(size, device="cuda", dtype=torch.int8)

    tlxc.set_allocator(alloc)
    try:
        yield calls
    finally:
        tlxc.set_allocator(None)


@pytest.mark.parametrize("M,N,row,dtype,BM,BN", [(40, 24, 24, "float32", 16, 16), (200, 72, 128, "float16", 64, 64),
                                                 (33, 100, 112, "bfloat16", 32, 128), (7, 40, 48, "float32", 8, 32)])
def test_copy_through_device_descriptors(torch: Any, allocator: list, M: int, N: int, row: int, dtype: str, BM: int,
                                         BN: int) -> None:
    # rows of `row` elements of which the descriptors see N: the strides reach the TMA unit
    dt = getattr(torch, dtype)
    x = torch.randn(M, row, device="cuda").to(dt)[:, :N]
    y_full = torch.full((M, row + 8), -1.0, device="cuda", dtype=dt)
    y = y_full[:, :N]
    grid = (tlxc.cdiv(M, BM), tlxc.cdiv(N, BN))
    D.desc_copy[grid](x, y, M, N, x.stride(0), y.stride(0), BM=BM, BN=BN)
    torch.testing.assert_close(y, 2 * x, rtol=0, atol=0)
    # the clipped edges wrote nothing past N, up to the 16-byte granule that holds column N - 1:
    # TMA stores whole 16-byte granules of the inner dimension (host descriptors alike)
    granule = 16 // x.element_size()
    assert (y_full[:, tlxc.cdiv(N, granule) * granule:] == -1).all()
    assert allocator == [(grid[0] * grid[1] * 256, 128, allocator[0][2])]


def test_launch_again_and_nan_padding(torch: Any, allocator: list) -> None:
    x = torch.ones(10, 12, device="cuda")
    for padding, fill in (("nan", float("nan")), ("zero", 0.0)):
        out = torch.empty(16, 16, device="cuda")
        D.desc_load_block[(1,)](x, out, 10, 12, BM=16, BN=16, PADDING=padding)
        ref = torch.full((16, 16), fill, device="cuda")
        ref[:10, :12] = 1
        torch.testing.assert_close(out, ref, equal_nan=True)


@pytest.mark.parametrize("M,N,K", [(128, 128, 64), (256, 384, 512), (1000, 520, 328)])
@pytest.mark.parametrize("num_warps,BM", [(4, 64), (8, 128)])
def test_tma_gemm_with_device_descriptors(torch: Any, allocator: list, M: int, N: int, K: int, num_warps: int,
                                          BM: int) -> None:
    g = torch.Generator(device="cuda").manual_seed(M * N + K)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16, generator=g)
    c = torch.zeros(M, N, device="cuda", dtype=torch.float16)
    BN, BK = 128, 64
    D.matmul_device_desc[(tlxc.cdiv(M, BM), tlxc.cdiv(N, BN))](
        a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, NUM_STAGES=3,
        num_warps=num_warps)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_descriptors_in_storage_of_the_kernels_own(torch: Any, allocator: list, dtype: str) -> None:
    # tlx.allocate_tensor_descriptor + make_tensor_descriptor(desc_ptr=...) + reinterpret_tensor_descriptor
    x = torch.randn(70, 96, device="cuda").to(getattr(torch, dtype))
    y = torch.zeros_like(x)
    D.desc_ptr_copy[(tlxc.cdiv(70, 16), tlxc.cdiv(96, 32))](x, y, 70, 96, BM=16, BN=32)
    torch.testing.assert_close(y, x + 1, rtol=0, atol=0)


def test_without_an_allocator_the_launch_says_so(torch: Any) -> None:
    tlxc.set_allocator(None)
    x = torch.ones(16, 16, device="cuda")
    with pytest.raises(RuntimeError, match=r"tlxc\.set_allocator"):
        D.desc_copy[(1, 1)](x, x, 16, 16, 16, 16, BM=16, BN=16)


def test_one_dimensional_blocks(torch: Any, allocator: list) -> None:
    # TLX's test_make_tensor_descriptor: 1-D int16 blocks through descriptors in the kernel's storage
    x = torch.arange(300, device="cuda", dtype=torch.int16)
    y = torch.zeros_like(x)
    D.desc_ptr_copy_1d[(5,)](x, y, 300, BLOCK_SIZE=64)
    torch.testing.assert_close(y, x, rtol=0, atol=0)
