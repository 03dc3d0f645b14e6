"""A tl.dot of operands staged through shared memory (``staged_dot`` of
tests/tlx/tlx_smem_kernels.py, the shape of the TLX tests' ``dot_kernel``) at 512x512x32 on
the GPU, against torch: its result tile's layout conversion (and, on sm_100a, the mma
operand staging) runs in rounds to fit in shared memory (``convert_plan.split_rounds``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_smem_kernels as K  # noqa: E402  (tests/tlx/tlx_smem_kernels.py)


def test_dot_kernel_512x512x32() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    kernel = K.staged_dot
    m = n = 512
    k = 32
    gen = torch.Generator().manual_seed(0)
    x = torch.randn((m, k), generator=gen).to(torch.float16).cuda()
    y = torch.randn((k, n), generator=gen).to(torch.float16).cuda()
    z = torch.zeros((m, n), dtype=torch.float16).cuda()
    kernel[(1, 1)](x, x.stride(0), x.stride(1), y, y.stride(0), y.stride(1), z, z.stride(0), z.stride(1),
                   BLOCK_M=m, BLOCK_N=n, BLOCK_K=k)
    torch.cuda.synchronize()
    ref = (x.float() @ y.float()).half()
    np.testing.assert_allclose(z.cpu().float().numpy(), ref.cpu().float().numpy(), rtol=1e-2, atol=1e-2)
