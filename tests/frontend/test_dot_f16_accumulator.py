"""``tl.dot(a, b, acc, out_dtype=tl.float16)``: an f16 accumulator, as Triton takes it.

On sm_90a the dot runs on wgmma with ``.f16`` accumulators (``.f16.f16.f16``, Triton's
form; pipelined in a loop like an f32 one); where wgmma does not fit (sm_100a for now) on
``mma.sync``'s ``.f16`` form; fp8 operands accumulate in f32 and each dot rounds its result
to f16. Before, an f16
accumulator fell to the per-thread FMA loop, a hundred times slower. The interpreter
rounds each dot's sum to f16 (the result type), which the GPU forms match within f16's
precision. Under ``TLXC_INTERPRET_LOWERED`` (tests/test_lowered_ir.py) these run the IR
of sm_90a's passes, wgmma included."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def dot_loop(a_ptr, b_ptr, c_ptr, KT, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.zeros((M, N), tl.float16)
    for kk in range(KT):
        a = tl.load(a_ptr + rm[:, None] * (K * KT) + kk * K + rk[None, :])
        b = tl.load(b_ptr + (kk * K + rk[:, None]) * N + rn[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _inputs(m: int, n: int, k: int, dtype: type = np.float16) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(m + n + k)
    return ((rng.standard_normal((m, k)) / 4).astype(dtype), (rng.standard_normal((k, n)) / 4).astype(dtype))


@pytest.mark.parametrize("m, n, k, kt", [(64, 64, 32, 3), (128, 128, 64, 2)])
def test_an_f16_accumulator_sums_in_f16(m: int, n: int, k: int, kt: int) -> None:
    a, b = _inputs(m, n, k * kt)
    c = np.zeros((m, n), np.float16)
    dot_loop.interpret[(1,)](a, b, c, kt, M=m, N=n, K=k)
    want = np.zeros((m, n), np.float16)  # each dot's sum rounded to f16, as the result type says
    for i in range(kt):
        part = a[:, i * k:(i + 1) * k].astype(np.float32) @ b[i * k:(i + 1) * k].astype(np.float32)
        want = (want.astype(np.float32) + part).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)


def _mma(ptx: str) -> list[str]:
    return sorted(set(re.findall(r"(?:wgmma\.mma_async|mma)\.sync\.aligned\.\S+", ptx)))


def test_sm90a_runs_wgmma_with_f16_accumulators() -> None:
    ck = dot_loop.compile("*fp16:16,*fp16:16,*fp16:16,i32", {"M": 128, "N": 128, "K": 64}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert _mma(ptx) == ["wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16"]
    assert "wgmma.wait_group.sync.aligned 1" in ptx  # pipelined as an f32 accumulator is
    assert "fma.rn.f32" not in ptx


@pytest.mark.parametrize("arch, m", [("sm_100a", 128), ("sm_90a", 32)])
def test_mma_sync_takes_f16_accumulators(arch: str, m: int) -> None:
    """Where wgmma does not fit (sm_100a for now; M of 32 on sm_90a): the ``.f16`` form of
    mma.sync, its accumulator pairs packed in ``.f16x2`` registers, as Triton's."""
    ck = dot_loop.compile("*fp16:16,*fp16:16,*fp16:16,i32", {"M": m, "N": 128, "K": 64}, arch=arch)
    ptx = ck.asm["ptx"]
    assert _mma(ptx) == ["mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"]
    assert "fma.rn.f32" not in ptx
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_fp8_operands_with_an_f16_result_accumulate_in_f32() -> None:
    """fp8 operands with an f16 result: the f32 form of mma.sync (wgmma reads fp8 K-major
    only), each dot's sum rounded to f16."""
    ptx = dot_loop.compile("*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32", {"M": 64, "N": 64, "K": 32},
                           arch="sm_90a").asm["ptx"]
    assert _mma(ptx) and all(".f32.e4m3.e4m3.f32" in x for x in _mma(ptx))
    assert "cvt.rn.f16.f32" in ptx and "fma.rn.f32" not in ptx
