"""Shared memory of loops that run one after the other (``ir/passes/smem_alloc.py``): a
wgmma whose own block waits for it (``async_dot_wait`` with no pendings) is done there,
so the operand buffers of the first loop are free for the second -- the causal
attention's two stages fit in the space of one (Triton's fused-attention tutorial at
head dim 128 needed 295 KB before, over sm_90a's 227 KB)."""

from __future__ import annotations

import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def two_stages(a_ptr, b_ptr, c_ptr, n, STAGES: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    acc = tl.zeros([M, N], dtype=tl.float32)
    for i in range(0, n):
        b = tl.load(b_ptr + i * K * N + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    if STAGES == 2:
        for i in range(0, n):
            b = tl.load(b_ptr + i * K * N + rk[:, None] * N + rn[None, :] + 1)
            acc = tl.dot(a, b * 2, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _shared(stages: int) -> int:
    ck = two_stages.compile("*fp16:16,*fp16:16,*fp32:16,i32", {"STAGES": stages, "M": 128, "N": 128, "K": 64},
                            arch="sm_90a", num_warps=4)
    assert "wgmma.mma_async" in ck.asm["ptx"]
    return ck.metadata["shared"]


def test_sequential_loops_share_their_operand_buffers() -> None:
    one, two = _shared(1), _shared(2)
    assert one >= 128 * 64 * 2 + 64 * 128 * 2  # both operands of one loop's wgmma are staged
    assert two == one


@pytest.mark.gpu
def test_sequential_loops_compute() -> None:
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    a = torch.randn(128, 64, generator=g).half().cuda()
    b = torch.randn(3 * 64 * 128 + 1, generator=g).half().cuda()
    c = torch.empty(128, 128, device="cuda")
    two_stages[(1,)](a, b, c, 3, STAGES=2, M=128, N=128, K=64)
    want = torch.zeros(128, 128, device="cuda")
    for i in range(3):
        want += a.float() @ b[i * 64 * 128:(i + 1) * 64 * 128].view(64, 128).float()
        want += a.float() @ (b[i * 64 * 128 + 1:(i + 1) * 64 * 128 + 1].view(64, 128) * 2).float()
    torch.testing.assert_close(c, want, atol=1e-2, rtol=1e-3)
