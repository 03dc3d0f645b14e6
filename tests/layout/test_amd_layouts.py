"""AMD MFMA / WMMA layouts and LDS layouts: hardware tables, the algebra, and bank cost.

The instruction formulas are those of AMD's matrix instruction calculator
(``--register-layout``) and of Triton's ``LinearLayoutConversions.cpp``; every check
below evaluates them element by element against the constructed ``LinearLayout``.
"""

from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_helpers import all_inputs, brute_apply

from tlxc.ir.layout import LayoutError, LayoutTarget, bank_cost, swizzled_shared
from tlxc.ir.layout.amd import (
    check_tiles_per_warp,
    mfma_dot_operand_layout,
    mfma_layout,
    mfma_store_layout,
    wmma_dot_operand_layout,
    wmma_layout,
)
from tlxc.ir.layout.amd_lds import (
    lds_bank_conflicts,
    mfma_lds_swizzle,
    mfma_operand_shared,
    padded_shared,
    wmma_operand_shared,
)

CDNA3 = LayoutTarget(warp_size=64, num_banks=32, bank_bytes=4, max_vector_bytes=16)
CDNA4 = LayoutTarget(warp_size=64, num_banks=64, bank_bytes=4, max_vector_bytes=16)
WAVE32 = LayoutTarget(warp_size=32, num_banks=32, bank_bytes=4, max_vector_bytes=16)


def at(layout, **kw) -> tuple[int, ...]:
    c = layout.apply({"register": 0, "lane": 0, "warp": 0, "block": 0, **kw})
    return tuple(c[d] for d in layout.out_dims)


# ---------------------------------------------------------------- one instruction, hardware formulas
def test_mfma_32x32_accumulator_formula() -> None:
    # v_mfma_f32_32x32x8f16: lane l, register r holds C[(r//4)*8 + (l//32)*4 + r%4][l%32].
    lay = mfma_layout((32, 32), 3, (32, 32, 8), False, (1, 1))
    assert lay.in_dim_size("register") == 16 and lay.in_dim_size("lane") == 64
    for lane, r in product(range(64), range(16)):
        assert at(lay, lane=lane, register=r) == ((r // 4) * 8 + (lane // 32) * 4 + r % 4, lane % 32)
    assert lay.is_bijective()


def test_mfma_16x16_accumulator_formula() -> None:
    # v_mfma_f32_16x16x16f16: 4 f32 per lane, C[4*(l//16) + r][l%16].
    lay = mfma_layout((16, 16), 4, (16, 16), False, (1, 1))
    assert lay.in_dim_size("register") == 4
    for lane, r in product(range(64), range(4)):
        assert at(lay, lane=lane, register=r) == (4 * (lane // 16) + r, lane % 16)


@pytest.mark.parametrize("mn", [32, 16])
def test_mfma_transposed_is_the_transpose(mn: int) -> None:
    plain = mfma_layout((mn, mn), 3, (mn, mn), False, (1, 1))
    trans = mfma_layout((mn, mn), 3, (mn, mn), True, (1, 1))
    assert trans == plain.transpose_outs(["dim1", "dim0"]).rename(outs={"dim0": "dim1", "dim1": "dim0"}) \
        .transpose_outs(["dim0", "dim1"])
    # each lane of the transposed layout holds 4 consecutive columns
    assert trans.num_consecutive("register", "dim1") == 4


def test_mfma_64bit_elements_hold_one_row_per_group() -> None:
    lay = mfma_layout((16, 16), 3, (16, 16), False, (1, 1), element_bitwidth=64)
    assert lay.in_dim_size("register") == 4 and lay.is_bijective()
    assert at(lay, register=1) == (4, 0) and at(lay, lane=16) == (1, 0)


def test_mfma_4x64_and_64x4() -> None:
    a = mfma_layout((4, 64), 3, (4, 64), False, (1, 1))
    assert a.is_bijective() and at(a, register=1) == (1, 0) and at(a, lane=63) == (0, 63)
    b = mfma_layout((64, 4), 3, (64, 4), True, (1, 1))
    assert b.is_bijective() and at(b, register=1) == (0, 1) and at(b, lane=63) == (63, 0)
    with pytest.raises(LayoutError, match="must be transposed"):
        mfma_layout((64, 4), 3, (64, 4), False, (1, 1))
    with pytest.raises(LayoutError, match="4x64"):
        mfma_layout((4, 4), 3, (4, 4), False, (1, 1))
    with pytest.raises(LayoutError, match="version"):
        mfma_layout((32, 32), 2, (32, 32), False, (1, 1))


def test_wmma_v3_accumulator_formula() -> None:
    # 16x16 f32 result, wave32: lane l register r holds C[r + 8*(l//16)][l%16].
    lay = wmma_layout((16, 16), 3, False, (1, 1))
    assert lay.in_dim_size("register") == 8 and lay.in_dim_size("lane") == 32
    for lane, r in product(range(32), range(8)):
        assert at(lay, lane=lane, register=r) == (r + 8 * (lane // 16), lane % 16)
    trans = wmma_layout((16, 16), 3, True, (1, 1))
    for lane, r in product(range(32), range(8)):
        assert at(trans, lane=lane, register=r) == (lane % 16, r + 8 * (lane // 16))


def test_wmma_v3_operand_formula() -> None:
    # v_wmma_f32_16x16x32_f16 A: lane l holds row l%16, K 16*(l//16) .. +15 (k_width 16).
    a = wmma_dot_operand_layout((16, 32), 0, 16, 3, False, (1, 1), (16, 16, 32))
    for lane, r in product(range(32), range(16)):
        assert at(a, lane=lane, register=r) == (lane % 16, 16 * (lane // 16) + r)
    b = wmma_dot_operand_layout((32, 16), 1, 16, 3, False, (1, 1), (16, 16, 32))
    for lane, r in product(range(32), range(16)):
        assert at(b, lane=lane, register=r) == (16 * (lane // 16) + r, lane % 16)


def test_mfma_operand_formula() -> None:
    # v_mfma_f32_32x32x8f16 A (k_width 4): lane l holds A[l%32][4*(l//32) + r].
    a = mfma_dot_operand_layout((32, 8), 0, 3, (32, 32), False, (1, 1), 4)
    for lane, r in product(range(64), range(4)):
        assert at(a, lane=lane, register=r) == (lane % 32, 4 * (lane // 32) + r)
    # 16x16x32 (CDNA4) B with k_width 8: B[8*(l//16) + r][l%16]
    b = mfma_dot_operand_layout((32, 16), 1, 4, (16, 16), False, (1, 1), 8)
    for lane, r in product(range(64), range(8)):
        assert at(b, lane=lane, register=r) == (8 * (lane // 16) + r, lane % 16)


# ---------------------------------------------------------------- whole tiles: repetition order
def test_mfma_register_order_is_n_contiguous_across_the_tile() -> None:
    lay = mfma_layout((64, 128), 3, (32, 32), False, (1, 2))
    regs = lay.bases["register"]
    # 16 registers of the instruction, then the N repetition, then the M repetition
    assert regs[4:] == ((0, 64), (32, 0))
    assert lay.bases["warp"] == ((0, 32),)


def test_mfma_tiles_per_warp_order() -> None:
    lay = mfma_layout((128, 128), 4, (16, 16), True, (2, 2), tiles_per_warp=(2, 2))
    regs = lay.bases["register"]
    # instruction (4 regs), tiles_per_warp N, remaining N, tiles_per_warp M, remaining M
    assert regs[2:] == ((0, 16), (0, 64), (16, 0), (64, 0))
    assert lay.bases["warp"] == ((0, 32), (32, 0))


def test_wmma_tiles_per_warp_period() -> None:
    # period = instr * warps * tiles_per_warp; a 256x256 result repeats it 4x4 times with [2, 2]
    one = wmma_layout((256, 256), 3, False, (2, 2), tiles_per_warp=(1, 1))
    two = wmma_layout((256, 256), 3, False, (2, 2), tiles_per_warp=(2, 2))
    assert one.in_dim_size("register") == 8 * 8 * 8 and two.in_dim_size("register") == 8 * 4 * 4 * 4
    # with [2, 2] a warp's first four tiles form a 2x2 block of instruction tiles
    assert two.bases["register"][3:5] == ((0, 16), (16, 0))
    assert two.bases["warp"] == ((0, 32), (32, 0))
    check_tiles_per_warp((256, 256), (16, 16, 128), (2, 2), (2, 2))
    with pytest.raises(LayoutError, match="period"):
        check_tiles_per_warp((32, 256), (16, 16, 128), (2, 2), (2, 2))


MFMA_CASES = [(v, mn, t, w, tpw) for v in (3, 4) for mn in ((32, 32), (16, 16)) for t in (False, True)
              for w in ((1, 1), (2, 2), (4, 1), (1, 4)) for tpw in ((1, 1), (2, 1), (1, 2))]


@pytest.mark.parametrize("version, mn, transposed, warps, tpw", MFMA_CASES)
def test_mfma_layout_is_a_bijection_per_cta(version, mn, transposed, warps, tpw) -> None:
    shape = (mn[0] * warps[0] * tpw[0] * 2, mn[1] * warps[1] * tpw[1] * 2)
    lay = mfma_layout(shape, version, mn, transposed, warps, tiles_per_warp=tpw)
    assert lay.is_bijective()
    assert lay.in_dim_size("register") * 64 * warps[0] * warps[1] == shape[0] * shape[1]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(32, 32), (16, 16)]), st.sampled_from([3, 4]), st.booleans(),
       st.tuples(st.sampled_from([1, 2, 4]), st.sampled_from([1, 2, 4])),
       st.tuples(st.integers(4, 7), st.integers(4, 7)), st.sampled_from([4, 8, 16]))
def test_operands_line_up_with_the_accumulator(mn, version, transposed, warps, log_mn, k_width) -> None:
    """Lane l / warp w of the accumulator owns row m and column n exactly when, in the
    operands, that lane and warp own row m of A and column n of B (for some register)."""
    M, N = 1 << log_mn[0], 1 << log_mn[1]
    K = 32
    acc = mfma_layout((M, N), version, mn, transposed, warps)
    a = mfma_dot_operand_layout((M, K), 0, version, mn, transposed, warps, k_width)
    b = mfma_dot_operand_layout((K, N), 1, version, mn, transposed, warps, k_width)
    _check_lined_up(acc, a, b, transposed)


@pytest.mark.parametrize("warps, tpw, shape", [((1, 1), (1, 1), (16, 16)), ((2, 2), (1, 1), (64, 64)),
                                               ((2, 2), (2, 2), (128, 64)), ((4, 1), (1, 2), (128, 64))])
def test_wmma_operands_line_up_with_the_accumulator(warps, tpw, shape) -> None:
    acc = wmma_layout(shape, 3, False, warps, (16, 16, 32), tpw)
    a = wmma_dot_operand_layout((shape[0], 64), 0, 16, 3, False, warps, (16, 16, 32), tpw)
    b = wmma_dot_operand_layout((64, shape[1]), 1, 16, 3, False, warps, (16, 16, 32), tpw)
    _check_lined_up(acc, a, b, False)
    assert acc.is_bijective()


def _check_lined_up(acc, a, b, transposed: bool) -> None:
    rows_a = {(x["lane"], x["warp"], brute_apply(a, x)[0]) for x in all_inputs(a) if not x["block"]}
    cols_b = {(x["lane"], x["warp"], brute_apply(b, x)[1]) for x in all_inputs(b) if not x["block"]}
    lanes, warps = acc.in_dim_size("lane"), acc.in_dim_size("warp")
    for lane, warp in product(range(lanes), range(warps)):
        owned = {brute_apply(acc, {"register": r, "lane": lane, "warp": warp})
                 for r in range(acc.in_dim_size("register"))}
        for m, n in owned:
            # every accumulator element's row is in the same warp's A; the lane group
            # that owns (m, n) also holds some K slice of row m of A and column n of B
            assert any((ln, warp, m) in rows_a for ln in range(lanes)), (lane, warp, m)
            assert any((ln, warp, n) in cols_b for ln in range(lanes)), (lane, warp, n)
        if not transposed:  # the lane's column of C is its column of B
            assert all((lane, warp, n) in cols_b for _, n in owned)


def test_operand_warps_broadcast_along_k() -> None:
    a = mfma_dot_operand_layout((64, 64), 0, 3, (32, 32), False, (2, 2), 8)
    assert a.bases["warp"] == ((0, 0), (32, 0))
    b = mfma_dot_operand_layout((64, 64), 1, 3, (32, 32), False, (2, 2), 8)
    assert b.bases["warp"] == ((0, 32), (0, 0))
    assert a.is_surjective() and b.is_surjective()


def test_batched_layouts() -> None:
    lay = mfma_layout((2, 64, 64), 3, (32, 32), False, (2, 1, 2))
    assert lay.is_bijective() and lay.bases["warp"][-1] == (1, 0, 0)
    a = mfma_dot_operand_layout((2, 64, 32), 0, 3, (32, 32), False, (2, 1, 2), 4)
    assert a.is_surjective() and (1, 0, 0) in a.bases["warp"]
    w = wmma_layout((2, 32, 32), 3, False, (2, 1, 2))
    assert w.is_bijective()


def test_small_tiles_broadcast() -> None:
    lay = mfma_layout((32, 32), 3, (32, 32), False, (2, 2))
    assert lay.is_surjective() and not lay.is_injective()
    assert lay.bases["warp"] == ((0, 0), (0, 0))


def test_store_layout_pairs_columns() -> None:
    st_ = mfma_store_layout((64, 64), 4, (32, 32), (2, 2))
    assert st_ is not None and st_.num_consecutive("register", "dim1") == 8 and st_.is_bijective()
    assert mfma_store_layout((64, 64), 3, (32, 32), (2, 2)) is None
    assert mfma_store_layout((64, 64), 4, (16, 16), (2, 2)) is None
    s16 = mfma_store_layout((64, 64), 4, (16, 16), (4, 1))
    assert s16 is not None and s16.num_consecutive("register", "dim1") == 8


# ---------------------------------------------------------------- LDS
@pytest.mark.parametrize("target, version, instr, k_width", [
    (CDNA3, 3, (32, 32), 4), (CDNA3, 3, (16, 16), 4), (CDNA3, 3, (32, 32), 8),
    (CDNA4, 4, (32, 32), 8), (CDNA4, 4, (16, 16), 8), (CDNA4, 4, (16, 16), 16),
])
@pytest.mark.parametrize("op_idx", [0, 1])
def test_mfma_operand_swizzle_is_conflict_free(target, version, instr, k_width, op_idx) -> None:
    """ds_read_b64 (k_width 4 x f16) / ds_read_b128 (8 x f16) of A and B from a K-contiguous
    buffer with Triton's swizzle: one wavefront per line of banks."""
    elem_bits = 16 if k_width <= 8 else 8
    shape, order = ((128, 64), (1, 0)) if op_idx == 0 else ((64, 128), (0, 1))
    dist = mfma_dot_operand_layout(shape, op_idx, version, instr, False, (1, 1), k_width)
    shared = mfma_operand_shared(shape, op_idx, order, k_width, elem_bits, version, target.num_banks, instr[0])
    cost = lds_bank_conflicts(dist, shared, elem_bits=elem_bits, vec=k_width, target=target)
    assert cost.conflicts == 1, cost
    assert cost == bank_cost(dist, shared, elem_bits=elem_bits, vec=k_width, target=target)
    plain = swizzled_shared(shape, 1, 1, 1, order)
    assert lds_bank_conflicts(dist, plain, elem_bits=elem_bits, vec=k_width, target=target).conflicts > 1


def test_mfma_swizzle_parameters() -> None:
    # CDNA4, f16, K = 64: vec 8, two rows per 256-byte bank line, 8 phases
    s = mfma_lds_swizzle(0, (128, 64), (1, 0), 8, 16, 4, 64)
    assert (s.vec, s.per_phase, s.max_phase) == (8, 2, 8)
    # MN-contiguous: no swizzle on CDNA3, swizzled on CDNA4 for 16-bit (LDS transpose reads)
    assert mfma_lds_swizzle(0, (128, 64), (0, 1), 8, 16, 3, 32).max_phase == 1
    assert mfma_lds_swizzle(0, (128, 64), (0, 1), 8, 16, 4, 64).max_phase > 1


def test_wmma_operand_swizzle_is_conflict_free() -> None:
    dist = wmma_dot_operand_layout((64, 64), 0, 8, 3, False, (1, 1), (16, 16, 32))
    shared = wmma_operand_shared((64, 64), 0, (1, 0), 8, 16)
    assert lds_bank_conflicts(dist, shared, elem_bits=16, vec=8, target=WAVE32).conflicts == 1


@pytest.mark.parametrize("target, version, k_width", [(CDNA3, 3, 4), (CDNA3, 3, 8), (CDNA4, 4, 8)])
def test_padding_one_vector_per_row_is_conflict_free(target, version, k_width) -> None:
    shape = (128, 64)
    dist = mfma_dot_operand_layout(shape, 0, version, (32, 32), False, (1, 1), k_width)
    padded = padded_shared(shape, [(64, k_width)])
    assert lds_bank_conflicts(dist, padded, elem_bits=16, vec=k_width, target=target).conflicts == 1
    unpadded = padded_shared(shape, [(4096, 1)])  # pad only past the end: plain row-major
    assert lds_bank_conflicts(dist, unpadded, elem_bits=16, vec=k_width, target=target).conflicts > 1


def test_padded_offsets_follow_triton_examples() -> None:
    # [2:+1, 4:+2]: e0 e1 p e2 e3 p p p e4 e5 p e6 e7 ...
    p = padded_shared((16,), [(2, 1), (4, 2)])
    assert [p.padded_offset(i) for i in range(8)] == [0, 1, 3, 4, 8, 9, 11, 12]
    # 1-D with strided elements: offsets [[2], [1]] and [2:+2] -> x0 x2 p p x1 x3
    from tlxc.ir.layout import LinearLayout
    q = padded_shared((4,), [(2, 2)], linear=LinearLayout({"offset": [(2,), (1,)]}, {"dim0": 4}))
    assert [q.offset_of((x,)) for x in range(4)] == [0, 4, 1, 5]
    assert q.padded_size == 6
    with pytest.raises(LayoutError, match="powers of two"):
        padded_shared((16,), [(3, 1)])
