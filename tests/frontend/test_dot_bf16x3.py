"""``tl.dot`` of fp32 tiles at ``input_precision="bf16x3"`` / ``"bf16x6"``: bf16 tensor-core
dots on split operands on NVIDIA (``ir/passes/split_f32_dot.py``), as Triton's F32DotTC.

The interpreter computes these precisions in f32 (what they approximate). The lowered IR
of sm_90a and sm_100a (``TLXC_INTERPRET_LOWERED``, set here per test) runs the split
itself: within 2**-16 (bf16x3) or 2**-23 (bf16x6) of each product's size, and an infinite
operand gives infinities, not the NaN that splitting it makes in the small parts."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def dot_f32(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, P: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, c, input_precision=P))


def _run(a: np.ndarray, b: np.ndarray, c: np.ndarray, precision: str) -> np.ndarray:
    out = c.copy()
    m, k = a.shape
    dot_f32.interpret[(1,)](a, b, out, M=m, N=b.shape[1], K=k, P=precision)
    return out


@pytest.mark.parametrize("lowered", ["", "sm_90a", "sm_100a"])
@pytest.mark.parametrize("precision, bits", [("bf16x3", 16), ("bf16x6", 23)])
def test_split_dot_is_as_accurate_as_its_parts(precision: str, bits: int, lowered: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    if lowered:
        monkeypatch.setenv("TLXC_INTERPRET_LOWERED", lowered)
    rng = np.random.default_rng(bits)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal((64, 64)).astype(np.float32)
    c = rng.standard_normal((64, 64)).astype(np.float32)
    got = _run(a, b, c, precision)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    scale = np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(c)  # the size of the summed products
    assert np.all(np.abs(got - want) <= scale * 2.0 ** -bits * 4 + 1e-6)


@pytest.mark.parametrize("lowered", ["", "sm_90a"])
def test_an_infinite_operand_gives_infinities(lowered: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if lowered:
        monkeypatch.setenv("TLXC_INTERPRET_LOWERED", lowered)
    a = np.full((64, 64), 0.5, np.float32)
    a[3, 7] = np.inf
    b = np.full((64, 64), 0.25, np.float32)
    got = _run(a, b, np.zeros((64, 64), np.float32), "bf16x3")
    assert np.all(np.isposinf(got[3])) and np.all(np.isfinite(np.delete(got, 3, axis=0)))


@pytest.mark.parametrize("arch, form", [("sm_90a", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"),
                                        ("sm_100a", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")])
@pytest.mark.parametrize("precision", ["bf16x3", "bf16x6"])
def test_split_dots_run_on_bf16_tensor_cores(arch: str, form: str, precision: str) -> None:
    ck = dot_f32.compile("*fp32:16,*fp32:16,*fp32:16", {"M": 64, "N": 64, "K": 64, "P": precision}, arch=arch)
    ptx = ck.asm["ptx"]
    assert sorted(set(re.findall(r"(?:wgmma\.mma_async|mma)\.sync\.aligned\.\S+", ptx))) == [form]
    assert "fma.rn.f32" not in ptx  # not the per-thread FMA loop
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]
