"""``tl.dot`` of small tiles, as Triton takes them: M and N of any size, K at least 16 for
8- and 16-bit operands, 8 for 32-bit and 4 for 64-bit ones (Triton asks 32 for 8-bit).
Such dots run on the FMA path (or padded MMAs) on every target; a smaller K is
``TLXC-DOT-001`` at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def small_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision="ieee"))


CASES = [(np.float64, "fp64", 8, 8, 4), (np.float64, "fp64", 16, 8, 4), (np.float16, "fp16", 2, 4, 32),
         (np.float16, "fp16", 1, 2, 16), (np.float32, "fp32", 4, 8, 8)]


def inputs(dt: type, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    out = np.float64 if dt == np.float64 else np.float32
    return rng.random((m, k)).astype(dt), rng.random((k, n)).astype(dt), np.zeros((m, n), out)


@pytest.mark.parametrize("dt, sig, m, n, k", CASES)
def test_small_dots_compute(dt: type, sig: str, m: int, n: int, k: int) -> None:
    a, b, c = inputs(dt, m, n, k)
    small_dot.interpret[(1,)](a, b, c, M=m, N=n, K=k)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942", "gfx950", "gfx1250"])
@pytest.mark.parametrize("dt, sig, m, n, k", CASES)
def test_small_dots_compile_for_every_target(arch: str, dt: type, sig: str, m: int, n: int, k: int) -> None:
    out = "fp64" if sig == "fp64" else "fp32"
    ck = small_dot.compile(f"*{sig}:16,*{sig}:16,*{out}:16", {"M": m, "N": n, "K": k}, arch=arch, num_warps=1)
    assert ck.asm["ptx" if arch.startswith("sm") else "amdgcn"]
    if arch.startswith("sm") and "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


@tlxc.jit
def short_k(x, K: tl.constexpr):
    a = tl.zeros([16, K], dtype=tl.float16)
    b = tl.zeros([K, 16], dtype=tl.float16)
    tl.store(x + tl.arange(0, 16), tl.sum(tl.dot(a, b), 1))


def test_a_k_below_one_mma_step_is_an_error_at_the_users_line() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        short_k.compile("*fp32", {"K": 8})
    err = info.value
    assert err.code == "TLXC-DOT-001" and "K of at least 16" in err.message
    assert "tl.dot(a, b)" in str(err)
