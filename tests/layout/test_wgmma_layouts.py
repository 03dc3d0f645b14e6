"""Hopper wgmma layouts: register fragments against the PTX ISA's formulas, and the NVMMA
shared-layout queries (default swizzle, TMA swizzle). The descriptors and instruction
shapes are tested with the code generator (tests/codegen/test_wgmma_descriptors.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_helpers import all_inputs, owners

from tlxc.ir.layout import (
    LayoutError,
    LinearLayout,
    blocked,
    choose_nvmma_swizzle,
    instruction_operands,
    nvmma_default,
    nvmma_shared,
    swizzled_shared,
    tma_swizzle_of,
    wgmma_accumulator,
    wgmma_accumulator_slots,
    wgmma_operand_a,
    wgmma_operand_a_slots,
)

FAST = settings(max_examples=40, deadline=None)


def coords(layout: LinearLayout, **ins: int) -> tuple[int, int]:
    c = layout.apply(ins)
    return c["dim0"], c["dim1"]


# ---------------------------------------------------------------- accumulator
def ptx_d(warp: int, lane: int, i: int) -> tuple[int, int]:
    """PTX ISA, "WGMMA .m64nNk16 register fragment layout for accumulator matrix D"."""
    g, t = lane >> 2, lane % 4
    return 16 * (warp % 4) + g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)


def test_accumulator_m64n16_table() -> None:
    lay = wgmma_accumulator((64, 16), (4, 1), 16)
    assert lay.in_dims == ("register", "lane", "warp", "block")
    # lane 0 / lane 5 of warp 0, lane 31 of warp 3: d0..d7
    assert [coords(lay, register=i, lane=0) for i in range(8)] == [
        (0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    assert [coords(lay, register=i, lane=5) for i in range(8)] == [
        (1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]
    assert [coords(lay, register=i, lane=31, warp=3) for i in range(8)] == [
        (55, 6), (55, 7), (63, 6), (63, 7), (55, 14), (55, 15), (63, 14), (63, 15)]
    for x in all_inputs(lay):
        assert coords(lay, **x) == ptx_d(x["warp"], x["lane"], x["register"])
    assert lay.is_bijective()


@pytest.mark.parametrize("shape,warps,instr_n", [((128, 64), (4, 1), 64), ((256, 128), (8, 1), 128),
                                                  ((128, 256), (4, 2), 64), ((64, 32), (4, 1), 8)])
def test_accumulator_repeats_follow_the_documented_order(shape, warps, instr_n) -> None:
    lay = wgmma_accumulator(shape, warps, instr_n)
    wg_m, wn = warps[0] // 4, warps[1]
    half = instr_n // 2
    n_chunks = shape[1] // (instr_n * wn)
    for x in all_inputs(lay):
        w, r = x["warp"], x["register"]
        i, rest = r % half, r // half
        n_chunk, m_rep = rest % n_chunks, rest // n_chunks
        gm, gn = (w // 4) % wg_m, w // warps[0]
        row, col = ptx_d(w, x["lane"], i)
        want = (64 * (m_rep * wg_m + gm) + row, instr_n * (n_chunk * wn + gn) + col)
        assert coords(lay, **x) == want
    assert lay.is_bijective()


def test_accumulator_slots_and_operands() -> None:
    slots = wgmma_accumulator_slots((128, 64), (4, 1), 32)
    assert len(slots) == 64
    for r, s in enumerate(slots):
        assert (s.m_rep, s.rep, s.slot, s.part) == (r // 32, (r // 16) % 2, r % 16, 0)
    ops = instruction_operands(slots)
    assert sorted(ops) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert ops[(1, 1)] == tuple((48 + j,) for j in range(16))
    # f16 accumulators: d_{2j} (low half) and d_{2j+1} share .f16x2 register j
    ops16 = instruction_operands(wgmma_accumulator_slots((64, 16), (4, 1), 16, acc_bits=16))
    assert ops16 == {(0, 0): ((0, 1), (2, 3), (4, 5), (6, 7))}


@given(st.integers(0, 2), st.integers(0, 1), st.integers(0, 2), st.integers(3, 6), st.integers(0, 2))
@FAST
def test_accumulator_properties(log_wgm: int, log_wn: int, log_mrep: int, log_n: int, log_chunks: int) -> None:
    wg_m, wn, instr_n = 1 << log_wgm, 1 << log_wn, 1 << log_n
    shape = (64 * wg_m << log_mrep, instr_n * wn << log_chunks)
    lay = wgmma_accumulator(shape, (4 * wg_m, wn), instr_n)
    assert lay.is_bijective()  # every element exactly once
    # warpgroup split: each warpgroup owns whole 64-row slices, and its 4 warps 16 rows each
    for w in range(4 * wg_m * wn):
        rows = {coords(lay, register=r, lane=t, warp=w)[0] for r in (0, 2) for t in range(0, 32, 4)}
        base = 64 * ((w // 4) % wg_m) + 16 * (w % 4)
        assert rows == set(range(base, base + 16))
    slots = wgmma_accumulator_slots(shape, (4 * wg_m, wn), instr_n)
    ops = instruction_operands(slots)
    assert len(ops) == (1 << log_mrep) * (1 << log_chunks)
    assert all(len(v) == instr_n // 2 for v in ops.values())


# ---------------------------------------------------------------- A in registers
def ptx_a(warp: int, lane: int, e: int, p: int) -> tuple[int, int]:
    """PTX ISA, "WGMMA .m64nNk{8,16,32} register fragment layout for matrix A"
    (``p`` elements per 32-bit register: 1 tf32, 2 f16/bf16, 4 8-bit)."""
    g, t = lane >> 2, lane % 4
    return 16 * (warp % 4) + g + 8 * ((e // p) & 1), p * t + e % p + 4 * p * (e // (2 * p))


@pytest.mark.parametrize("bits", [16, 8, 32])
def test_operand_a_matches_ptx(bits: int) -> None:
    p = 32 // bits
    k = 8 * p
    lay = wgmma_operand_a((64, k), (4, 1), bits)
    for x in all_inputs(lay):
        assert coords(lay, **x) == ptx_a(x["warp"], x["lane"], x["register"], p)
    assert lay.is_bijective()


def test_operand_a_f16_table() -> None:
    lay = wgmma_operand_a((64, 16), (4, 1), 16)
    # a0..a7 of lane 6 (g=1, t=2), warp 2: {a0,a1} {a2,a3} {a4,a5} {a6,a7} as .f16x2
    assert [coords(lay, register=e, lane=6, warp=2) for e in range(8)] == [
        (33, 4), (33, 5), (41, 4), (41, 5), (33, 12), (33, 13), (41, 12), (41, 13)]
    ops = instruction_operands(wgmma_operand_a_slots((64, 16), (4, 1), 16))
    assert ops == {(0, 0): ((0, 1), (2, 3), (4, 5), (6, 7))}


def test_operand_a_repeats_and_broadcast_warps() -> None:
    lay = wgmma_operand_a((128, 64), (4, 2), 16)  # 2 M-repeats, 4 K-steps, 2 N-warpgroups
    assert lay.bases["warp"] == ((16, 0), (32, 0), (0, 0))
    for x in all_inputs(lay):
        r = x["register"]
        e, k_step, m_rep = r % 8, (r // 8) % 4, r // 32
        row, col = ptx_a(x["warp"], x["lane"], e, 2)
        assert coords(lay, **x) == (64 * m_rep + row, 16 * k_step + col)
    for holders in owners(lay).values():
        assert len(holders) == 2  # both N-warpgroups
    slots = wgmma_operand_a_slots((128, 64), (4, 2), 16)
    assert slots[8 * 5 + 3] == slots[43]
    assert (slots[43].m_rep, slots[43].rep, slots[43].slot, slots[43].part) == (1, 1, 1, 1)
    ops8 = instruction_operands(wgmma_operand_a_slots((64, 64), (4, 1), 8))
    assert ops8[(0, 1)] == ((16, 17, 18, 19), (20, 21, 22, 23), (24, 25, 26, 27), (28, 29, 30, 31))


def test_register_layout_errors() -> None:
    with pytest.raises(LayoutError, match="whole warpgroups"):
        wgmma_accumulator((64, 64), (2, 2), 64)
    with pytest.raises(LayoutError, match="multiple of 64"):
        wgmma_accumulator((64, 64), (8, 1), 64)
    with pytest.raises(LayoutError, match="instr_n"):
        wgmma_accumulator((64, 16), (4, 1), 4)
    with pytest.raises(LayoutError, match="not 4-bit ones"):
        wgmma_operand_a((64, 16), (4, 1), 4)


# ---------------------------------------------------------------- NVMMA choice and TMA
def test_choose_nvmma_swizzle() -> None:
    assert choose_nvmma_swizzle((128, 64), 16) == 128
    assert choose_nvmma_swizzle((128, 32), 16) == 64
    assert choose_nvmma_swizzle((128, 16), 16) == 32
    assert choose_nvmma_swizzle((128, 8), 16) == 0
    assert choose_nvmma_swizzle((64, 128), 8) == 128
    assert choose_nvmma_swizzle((32, 8), 32) == 32
    assert choose_nvmma_swizzle((4, 64), 16) == 0  # fewer than 8 rows
    assert choose_nvmma_swizzle((16, 128), 16, transposed=True) == 32  # dim 0 (16 x 2 bytes) is contiguous
    assert nvmma_default((128, 64), 16) == nvmma_shared((128, 64), 16, 128)
    assert nvmma_default((64, 32), 16, transposed=True) == nvmma_shared((64, 32), 16, 128, transposed=True)


@pytest.mark.parametrize("bits", [8, 16, 32])
@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
@pytest.mark.parametrize("transposed", [False, True])
def test_tma_swizzle_of(bits: int, swizzle: int, transposed: bool) -> None:
    lay = nvmma_shared((128, 128), bits, swizzle, transposed)
    assert tma_swizzle_of(lay, bits) == swizzle
    assert tma_swizzle_of(lay) == swizzle  # the width is read off the pattern


def test_tma_swizzle_of_refuses_other_layouts() -> None:
    assert tma_swizzle_of(swizzled_shared((64, 64), 8, 2, 4, (1, 0))) is None
    assert tma_swizzle_of(swizzled_shared((64, 64), 8, 1, 8, (1, 0))) == 128  # the same bytes as 128B, fp16
    assert tma_swizzle_of(blocked((64, 64), (1, 8), (8, 4), (4, 1), (1, 0))) is None
    assert tma_swizzle_of(nvmma_shared((64, 4), 16, 0), 16) is None  # 8-byte rows: below the 16-byte granule
