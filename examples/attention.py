"""Attention forward pass with an online softmax (FlashAttention).

For each batch element and head, ``O = softmax(Q K^T * sm_scale) V`` where ``Q``, ``K``,
``V`` and ``O`` are ``N_CTX x HEAD_DIM``; with ``causal=True`` query ``i`` attends to
keys ``j <= i`` only. The ``N_CTX x N_CTX`` score matrix is never stored: each program
owns ``BLOCK_M`` queries and streams over the keys in blocks of ``BLOCK_N``.

**Online softmax.** A softmax needs the row maximum before it can exponentiate, but the
program sees the keys block by block. It keeps, per query row, the running maximum
``m_i`` of the scores seen so far, the running sum ``l_i`` of ``exp(score - m_i)`` and the
running output ``acc = sum_j exp(score_j - m_i) v_j``. When a new block raises the
maximum to ``m_ij``, everything accumulated so far was scaled by ``exp(-m_i)`` instead
of ``exp(-m_ij)``; multiplying ``l_i`` and ``acc`` by ``alpha = exp(m_i - m_ij)`` fixes
that, and the new block is added on top. At the end ``O = acc / l_i``. The result is
exactly the softmax -- the order of blocks only changes rounding.

**exp2.** ``exp(x) = 2 ** (x * log2(e))`` and ``exp2`` is the cheaper instruction on a
GPU, so the scores are scaled once by ``qk_scale = sm_scale * 1.44269504`` (``log2(e)``)
and everything after works in base 2. The kernel also stores ``M = m_i + log2(l_i)``,
the log-sum-exp of each row (in base 2), which the backward pass uses to recompute the
probabilities.

**Causal masking in two stages.** Key blocks entirely left of the diagonal need no mask;
only the block(s) on the diagonal do. So the causal kernel runs the inner loop twice:
stage 1 over the unmasked blocks, stage 2 over the diagonal with ``tl.where``. Masked
scores get ``-1.0e6`` rather than ``-inf``: a row whose block is *all* masked then gives
``m_ij`` finite and ``exp2(m_i - m_ij)`` a clean 0 later, where ``-inf - -inf`` would be
NaN. The non-causal kernel (stage 3) walks all keys and masks only the tail past
``N_CTX``, which need not be a multiple of the blocks.

The idioms this example shows:

* a 2-D grid ``(cdiv(N_CTX, BLOCK_M), Z * H)``: axis 0 picks the query block, axis 1 the
  (batch, head) pair, split with ``//`` and ``%``;
* a ``@tlxc.jit`` helper that returns a tuple of loop-carried values
  (``acc, l_i, m_i = _attn_fwd_inner(...)``), called twice with different constexpr
  ``STAGE``s and folded per call (``if STAGE == 1: lo, hi = ...``);
* ``tl.range`` over a runtime range, ``tl.multiple_of`` hints, ``tl.trans(k)``;
* broadcasting rows with ``m_ij[:, None]``, ``tl.max(qk, 1)`` / ``tl.sum(p, 1)``;
* two ``tl.dot``s per block: ``q @ k^T`` in fp32, then ``p.to(fp16) @ v`` accumulated
  into ``acc``.
"""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.optional_pytest import pytest


@tlxc.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale, N_CTX,
                    offs_m, offs_n, offs_d, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 1:  # causal, left of the diagonal: no mask needed
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:  # causal, the diagonal block(s)
        lo, hi = start_m * BLOCK_M, min((start_m + 1) * BLOCK_M, N_CTX)
        lo = tl.multiple_of(lo, BLOCK_M)
    else:  # non-causal: every key
        lo, hi = 0, N_CTX
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        keys = start_n + offs_n
        kv_mask = keys[:, None] < N_CTX
        k = tl.load(k_base + keys[:, None] * stride_kn + offs_d[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k))
        if STAGE == 2:
            mask = offs_m[:, None] >= keys[None, :]
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            if STAGE == 3:
                qk = tl.where(keys[None, :] < N_CTX, qk, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_base + keys[:, None] * stride_vn + offs_d[None, :], mask=kv_mask, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@tlxc.jit
def attn_fwd(Q, K, V, Out, M, sm_scale,
             stride_qz, stride_qh, stride_qm, stride_kz, stride_kh, stride_kn,
             stride_vz, stride_vh, stride_vn, stride_oz, stride_oh, stride_om,
             H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             CAUSAL: tl.constexpr):
    tl.static_assert(BLOCK_M % BLOCK_N == 0, "a query block must cover whole key blocks")
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_base = Q + off_z * stride_qz + off_h * stride_qh
    k_base = K + off_z * stride_kz + off_h * stride_kh
    v_base = V + off_z * stride_vz + off_h * stride_vh
    o_base = Out + off_z * stride_oz + off_h * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/ln(2): work in base 2
    q_mask = offs_m[:, None] < N_CTX
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=q_mask, other=0.0)

    if CAUSAL:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m,
                                        qk_scale, N_CTX, offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 1)
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m,
                                        qk_scale, N_CTX, offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 2)
    else:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m,
                                        qk_scale, N_CTX, offs_m, offs_n, offs_d, BLOCK_M, BLOCK_N, 3)

    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i, mask=offs_m < N_CTX)
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(Out.dtype.element_ty), mask=q_mask)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, sm_scale: float,
              block_m: int = 16, block_n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(O, M) for ``q, k, v`` of shape (Z, H, N_CTX, HEAD_DIM); ``M`` is the base-2
    log-sum-exp of each row of scores, shape (Z, H, N_CTX), fp32."""
    Z, H, N_CTX, HEAD_DIM = q.shape
    for t in (q, k, v):
        assert t.shape == q.shape and t.dtype == q.dtype and t.strides[3] == t.itemsize
    o = np.empty_like(q)
    m = np.empty((Z, H, N_CTX), dtype=np.float32)

    def st(t: np.ndarray) -> list[int]:
        return [s // t.itemsize for s in t.strides[:3]]

    grid = (tlxc.cdiv(N_CTX, block_m), Z * H)
    attn_fwd.interpret[grid](q, k, v, o, m, sm_scale, *st(q), *st(k), *st(v), *st(o), H, N_CTX,
                             HEAD_DIM=HEAD_DIM, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal)
    return o, m


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
              sm_scale: float) -> tuple[np.ndarray, np.ndarray]:
    q64, k64, v64 = (t.astype(np.float64) for t in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) * sm_scale
    if causal:
        n = q.shape[2]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    smax = s.max(axis=-1, keepdims=True)
    p = np.exp(s - smax)
    lse = np.log(p.sum(axis=-1)) + smax[..., 0]
    return (p / p.sum(axis=-1, keepdims=True)) @ v64, lse / np.log(2)


def _inputs(shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(shape).astype(np.float16) for _ in range(3))


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("Z, H, N_CTX, HEAD_DIM", [(1, 2, 64, 16), (2, 1, 50, 32), (1, 1, 17, 16)])
def test_attention(Z: int, H: int, N_CTX: int, HEAD_DIM: int, causal: bool) -> None:
    q, k, v = _inputs((Z, H, N_CTX, HEAD_DIM), N_CTX)
    sm_scale = 1.0 / HEAD_DIM**0.5
    o, m = attention(q, k, v, causal, sm_scale)
    o_ref, m_ref = reference(q, k, v, causal, sm_scale)
    # p is rounded to fp16 before the second dot, and O is stored in fp16
    np.testing.assert_allclose(o.astype(np.float64), o_ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(m, m_ref, rtol=1e-4, atol=1e-4)


def test_attention_block_m_larger_than_block_n() -> None:
    """Two key blocks per query block: the diagonal stage loops twice, and its first key
    block is fully masked for half of the rows -- the case the -1e6 trick is for."""
    q, k, v = _inputs((1, 1, 48, 16), 7)
    for causal in (False, True):
        o, m = attention(q, k, v, causal, 0.3, block_m=32, block_n=16)
        o_ref, m_ref = reference(q, k, v, causal, 0.3)
        np.testing.assert_allclose(o.astype(np.float64), o_ref, rtol=1e-2, atol=1e-2)
        np.testing.assert_allclose(m, m_ref, rtol=1e-4, atol=1e-4)


def test_first_query_attends_only_to_first_key() -> None:
    q, k, v = _inputs((1, 1, 32, 16), 9)
    o, _ = attention(q, k, v, True, 0.25)
    np.testing.assert_allclose(o[0, 0, 0], v[0, 0, 0], rtol=1e-3)


if __name__ == "__main__":
    q, k, v = _inputs((2, 2, 40, 16), 0)
    for causal in (False, True):
        o, m = attention(q, k, v, causal, 0.25)
        o_ref, _ = reference(q, k, v, causal, 0.25)
        print(f"attention (2 batches, 2 heads, 40 tokens, head dim 16, causal={causal}): "
              f"max |error| vs numpy = {np.max(np.abs(o - o_ref)):.3g}")
