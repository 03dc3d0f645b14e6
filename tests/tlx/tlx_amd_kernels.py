"""Small kernels for TLX's AMD operations (register layouts, explicit MFMA scheduling,
register classes) and for ``tl.dot_scaled`` / ``tlx.dot_scaled``, run on the CPU
interpreter by tests/tlx/test_tlx_amd_interpreter.py (and compiled for the AMD targets by
the AMD code generator's tests).

The first two kernels are the seed's examples ("Independent output subtiles on gfx950"
and "Transient-chain example") with loads and stores around them; the others take one
feature each. Operand layouts are pinned the way TLX kernels pin them:
``tlx.require_layout(x, tlx.dot_operand_layout(i, mma, k_width=8), pin=False)``.
"""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def independent_subtiles(a_ptr, b_ptr, c_ptr):
    """C [64, 128] = A [64, 16] @ B [16, 128] as two [64, 64] accumulators carried
    separately, committed together and joined."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[32, 32, 16], transposed=True,
                                            warps_per_cta=[2, 2])
    dot0: tl.constexpr = tlx.dot_operand_layout(0, mma, k_width=8)
    dot1: tl.constexpr = tlx.dot_operand_layout(1, mma, k_width=8)
    rm = tl.arange(0, 64)
    rk = tl.arange(0, 16)
    rn = tl.arange(0, 128)
    a = tlx.require_layout(tl.load(a_ptr + rm[:, None] * 16 + rk[None, :]), dot0, pin=False)
    b = tlx.require_layout(tl.load(b_ptr + rk[:, None] * 128 + rn[None, :]), dot1, pin=False)

    b_left = tlx.extract_slice(b, [16, 64], [0, 0])
    b_right = tlx.extract_slice(b, [16, 64], [0, 64])
    acc_left = tlx.zeros((64, 64), tl.float32, layout=mma)
    acc_right = tlx.zeros((64, 64), tl.float32, layout=mma)

    acc_left = tlx.amd_scheduled_mfma(
        a, b_left, acc_left, accumulator_role="persistent", initialize=True,
    )
    tlx.amd_sched_barrier(0)
    # Independent loads or other work may be placed here.
    tlx.amd_sched_barrier(0)
    acc_right = tlx.amd_scheduled_mfma(
        a, b_right, acc_right, accumulator_role="persistent", initialize=True,
    )
    acc_left, acc_right = tlx.amd_mfma_commit((acc_left, acc_right))
    acc = tlx.require_layout(tl.cat(acc_left, acc_right, dim=1), mma, pin=False)
    tl.store(c_ptr + rm[:, None] * 128 + rn[None, :], acc)


@tlxc.jit
def transient_chain(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B with B resident in AGPRs and threaded through the commit."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True,
                                            warps_per_cta=[1, 4])
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    rn = tl.arange(0, BN)
    a = tlx.require_layout(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tlx.dot_operand_layout(0, mma, 8))
    b = tlx.require_layout(tl.load(b_ptr + rk[:, None] * BN + rn[None, :]), tlx.dot_operand_layout(1, mma, 8))
    acc = tlx.zeros((BM, BN), tl.float32, layout=mma)
    output_ptrs = c_ptr + rm[:, None] * BN + rn[None, :]

    b_live = tlx.amd_register_resident(
        b,
        register_class="agpr",
        registers_per_group=4,
    )
    acc = tlx.amd_scheduled_mfma(
        a,
        b_live,
        acc,
        accumulator_role="transient",
        initialize=True,
    )
    acc, _ = tlx.amd_mfma_commit(acc, b_live)
    tl.store(output_ptrs, acc)


@tlxc.jit
def banded_chain(a_ptr, b_ptr, c_ptr, BANDS: tl.constexpr, K_WIDTH: tl.constexpr):
    """C [16, 64] = A [16, 32*BANDS] @ B: one scheduled MFMA per 32-wide K band of
    register-resident operands (extract_slice), the first band initializing."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True,
                                            warps_per_cta=[1, 4])
    dot0: tl.constexpr = tlx.dot_operand_layout(0, mma, k_width=K_WIDTH)
    dot1: tl.constexpr = tlx.dot_operand_layout(1, mma, k_width=K_WIDTH)
    K: tl.constexpr = 32 * BANDS
    rows = tl.arange(0, 16)
    red = tl.arange(0, K)
    cols = tl.arange(0, 64)
    a = tlx.require_layout(tl.load(a_ptr + rows[:, None] * K + red[None, :]), dot0, pin=False)
    b = tlx.require_layout(tl.load(b_ptr + red[:, None] * 64 + cols[None, :]), dot1, pin=False)
    b = tlx.amd_register_resident(b, register_class="agpr", registers_per_group=32)
    acc = tl.full((16, 64), 5.0, tl.float32)  # discarded by the first band's initialize=True
    acc = tlx.require_layout(acc, mma, pin=False)
    for band in tl.static_range(BANDS):
        a_band = tlx.extract_slice(a, [16, 32], [0, band * 32])
        b_band = tlx.extract_slice(b, [32, 64], [band * 32, 0])
        acc = tlx.amd_scheduled_mfma(a_band, b_band, acc, resident_operand=1, accumulator_role="transient",
                                     initialize=band == 0)
    acc, _ = tlx.amd_mfma_commit(acc, b_band)
    tl.store(c_ptr + rows[:, None] * 64 + cols[None, :], acc)


@tlxc.jit
def accumulate(a_ptr, b_ptr, c_ptr, INIT: tl.constexpr, ROLE: tl.constexpr, ACC_CLASS: tl.constexpr):
    """C = 7 + A @ B (INIT false) or A @ B (INIT true), A [32, 32] and B [32, 64] fp16."""
    mma: tl.constexpr = tlx.amd_mfma_layout(3, [32, 32, 8], True, [1, 2])
    rm = tl.arange(0, 32)
    rn = tl.arange(0, 64)
    a = tl.load(a_ptr + rm[:, None] * 32 + rm[None, :])
    b = tl.load(b_ptr + rm[:, None] * 64 + rn[None, :])
    acc = tlx.require_layout(tl.full((32, 64), 7.0, tl.float32), mma)
    acc = tlx.amd_scheduled_mfma(a, b, acc, accumulator_role=ROLE, accumulator_register_class=ACC_CLASS,
                                 initialize=INIT)
    tl.store(c_ptr + rm[:, None] * 64 + rn[None, :], tlx.amd_mfma_commit(acc))


@tlxc.jit
def k_loop(a_ptr, b_ptr, c_ptr, K, BK: tl.constexpr):
    """C [32, 32] = A [32, K] @ B [K, 32], a runtime loop over K carrying a persistent
    VGPR accumulator (the CDNA3 spelling), committed after the loop."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=3, instr_shape=[16, 16, 16], transposed=False,
                                            warps_per_cta=[2, 2])
    rm = tl.arange(0, 32)
    rk = tl.arange(0, BK)
    acc = tlx.zeros((32, 32), tl.float32, layout=mma)
    for k in range(0, K, BK):
        a = tlx.require_layout(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                               tlx.dot_operand_layout(0, mma, k_width=4))
        b = tlx.require_layout(tl.load(b_ptr + (k + rk)[:, None] * 32 + rm[None, :]),
                               tlx.dot_operand_layout(1, mma, k_width=4))
        acc = tlx.amd_scheduled_mfma(a, b, acc, accumulator_role="persistent", accumulator_register_class="vgpr")
    acc = tlx.amd_mfma_commit(acc)
    tl.store(c_ptr + rm[:, None] * 32 + rm[None, :], acc)


@tlxc.jit
def batched(a_ptr, b_ptr, c_ptr):
    """Rank 3: C[i] = A[i] @ B[i] for i < 2, A [2, 32, 16], B [2, 16, 32]."""
    i = tl.arange(0, 2)[:, None, None]
    r32 = tl.arange(0, 32)
    r16 = tl.arange(0, 16)
    a = tl.load(a_ptr + i * 512 + r32[None, :, None] * 16 + r16[None, None, :])
    b = tl.load(b_ptr + i * 512 + r16[None, :, None] * 32 + r32[None, None, :])
    acc = tl.zeros((2, 32, 32), tl.float32)
    acc = tlx.amd_scheduled_mfma(a, b, acc, accumulator_role="transient")
    tl.store(c_ptr + i * 1024 + r32[None, :, None] * 32 + r32[None, None, :], tlx.amd_mfma_commit(acc))


@tlxc.jit
def register_ops(x_ptr, y_ptr, h_ptr, g_ptr):
    """The register-class and scheduling ops return their input: y = x (fp32), g = h (fp16)."""
    offs = tl.arange(0, 1024)
    x = tl.load(x_ptr + offs)
    x = tlx.amd_register_resident(x, register_class="vgpr", registers_per_group=8)
    tlx.amd_sched_barrier(mask=0x006)
    x = tlx.amd_register_class_anchor(x, register_class="agpr")
    x = tlx.amd_register_handoff(x)
    tl.store(y_ptr + offs, tlx.release_layout(x))
    h = tl.load(h_ptr + offs)
    h = tlx.amd_register_resident(h, registers_per_group=2)
    h = tlx.amd_register_class_anchor(h)
    tl.store(g_ptr + offs, h)


@tlxc.jit
def remat_copy(x_ptr, y_ptr, n):
    """y = x for a [64, 64] tile, addressed through rematerialized ranges (one with a
    placement dependency)."""
    load_rows = tlx.rematerialized_range(0, 64, identity=0)
    load_cols = tlx.rematerialized_range(0, 64, identity=1)
    values = tl.load(x_ptr + load_rows[:, None] * 64 + load_cols[None, :])
    store_rows = tlx.rematerialized_range(0, 64, identity=2, placement=n)
    store_cols = tlx.rematerialized_range(64, 128, identity=3) - 64
    tl.store(y_ptr + store_rows[:, None] * 64 + store_cols[None, :], values)


@tlxc.jit
def slice_of(x_ptr, y_ptr, ROW: tl.constexpr, COL: tl.constexpr):
    """y [32, 64] = x[ROW:ROW+32, COL:COL+64] of a [256, 128] bf16 tile."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True,
                                            warps_per_cta=[1, 4])
    rows = tl.arange(0, 256)
    cols = tl.arange(0, 128)
    values = tlx.require_layout(tl.load(x_ptr + rows[:, None] * 128 + cols[None, :]),
                                tlx.dot_operand_layout(1, mma, k_width=8), pin=False)
    band = tlx.extract_slice(values, [32, 64], [ROW, COL])
    r32 = tl.arange(0, 32)
    r64 = tl.arange(0, 64)
    tl.store(y_ptr + r32[:, None] * 64 + r64[None, :], band)


@tlxc.jit
def zeros_kernel(y_ptr, z_ptr, LAYOUT: tl.constexpr):
    """y = 1 + zeros in a (kernel-argument) MFMA layout; z = zeros without a layout."""
    rm = tl.arange(0, 32)
    z = tlx.zeros((32, 32), tl.float32, layout=LAYOUT) + 1.0
    tl.store(y_ptr + rm[:, None] * 32 + rm[None, :], z)
    tl.store(z_ptr + rm, tlx.zeros((32,), tl.int32))


@tlxc.jit
def cat_kernel(x_ptr, y_ptr, out_ptr, DIM: tl.constexpr):
    """out = concatenate(x, y, axis=DIM) of two [16, 32] tiles."""
    r16 = tl.arange(0, 16)
    r32 = tl.arange(0, 32)
    x = tl.load(x_ptr + r16[:, None] * 32 + r32[None, :])
    y = tl.load(y_ptr + r16[:, None] * 32 + r32[None, :])
    c = tl.cat(x, y, dim=DIM)
    if DIM == 0:
        r = tl.arange(0, 32)
        tl.store(out_ptr + r[:, None] * 32 + r32[None, :], c)
    else:
        r = tl.arange(0, 64)
        tl.store(out_ptr + r16[:, None] * 64 + r[None, :], c)


@tlxc.jit
def scaled(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, AM: tl.constexpr, AK: tl.constexpr, BK: tl.constexpr,
           BN: tl.constexpr, M: tl.constexpr, N: tl.constexpr, SK: tl.constexpr, FA: tl.constexpr,
           FB: tl.constexpr, A_PACK: tl.constexpr, B_PACK: tl.constexpr, A_SCALE: tl.constexpr,
           B_SCALE: tl.constexpr, ACC: tl.constexpr, TLX: tl.constexpr, TPW: tl.constexpr):
    """C [M, N] = dot_scaled(A [AM, AK] in FA, B [BK, BN] in FB) (+ C when ACC); scales
    [M, SK] and [N, SK] when A_SCALE / B_SCALE; through tlx.dot_scaled when TLX."""
    ram, rak = tl.arange(0, AM), tl.arange(0, AK)
    rbk, rbn = tl.arange(0, BK), tl.arange(0, BN)
    rm, rn, rs = tl.arange(0, M), tl.arange(0, N), tl.arange(0, SK)
    a = tl.load(a_ptr + ram[:, None] * AK + rak[None, :])
    b = tl.load(b_ptr + rbk[:, None] * BN + rbn[None, :])
    a_scale = tl.load(as_ptr + rm[:, None] * SK + rs[None, :]) if A_SCALE else None
    b_scale = tl.load(bs_ptr + rn[:, None] * SK + rs[None, :]) if B_SCALE else None
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    acc = tl.load(c_ptrs) if ACC else None
    if TLX:
        c = tlx.dot_scaled(a, a_scale, FA, b, b_scale, FB, acc, lhs_k_pack=A_PACK, rhs_k_pack=B_PACK,
                           tiles_per_warp=TPW)
    else:
        c = tl.dot_scaled(a, a_scale, FA, b, b_scale, FB, acc, lhs_k_pack=A_PACK, rhs_k_pack=B_PACK)
    tl.store(c_ptrs, c)
