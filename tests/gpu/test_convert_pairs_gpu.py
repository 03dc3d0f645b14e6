"""f32 -> f16 / bf16 on the GPU, two elements per instruction (``cvt.rn.f16x2.f32``,
``cvt.rz.bf16x2.f32``...), against the interpreter's rounding, bit for bit: ties, values
that overflow, subnormals, signed zeros, infinities and NaN."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.gpu


@tlxc.jit
def narrow(x_ptr, y_ptr, n, OUT: tl.constexpr, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(OUT, fp_downcast_rounding=ROUNDING), mask=mask)


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.0, 65520.0, 1e-8, -1e-8, 6e-5, 1 + 2**-11,
                        1 + 3 * 2**-11, 1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -3.4e38, 1e-40], np.float32)
    bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([special, rng.standard_normal(4000).astype(np.float32) * 100, bits])


@pytest.mark.parametrize("out", ["fp16", "bf16"])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_pairs_round_like_the_interpreter(out: str, rounding: str) -> None:
    torch = pytest.importorskip("torch")
    x = _inputs()
    n = x.size
    dt = {"fp16": tl.float16, "bf16": tl.bfloat16}[out]
    grid = ((n + 511) // 512,)
    import ml_dtypes

    host_out = np.zeros(n, np.float16 if out == "fp16" else ml_dtypes.bfloat16)
    narrow.interpret[grid](x, host_out, n, OUT=dt, ROUNDING=rounding, BLOCK=512)
    want = host_out.view(np.uint16)
    xd = torch.from_numpy(x).cuda()
    yd = torch.empty(n, dtype=torch.float16 if out == "fp16" else torch.bfloat16, device="cuda")
    narrow[grid](xd, yd, n, OUT=dt, ROUNDING=rounding, BLOCK=512)
    got = yd.view(torch.int16).cpu().numpy().view(np.uint16)
    nan = np.isnan(x)
    assert np.array_equal(got[~nan], want[~nan])
    # NaN stays NaN (the payload is the hardware's)
    exp_mask, man_mask = (0x7C00, 0x03FF) if out == "fp16" else (0x7F80, 0x007F)
    assert np.all((got[nan] & exp_mask) == exp_mask) and np.all(got[nan] & man_mask)
