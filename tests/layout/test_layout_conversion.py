"""Conversion planning and bank-conflict counting, and vector widths."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_helpers import NV, all_inputs

from tlxc.ir.layout import (
    ConversionKind,
    CTALayout,
    LayoutError,
    LayoutTarget,
    LinearLayout,
    MmaV2,
    bank_conflicts,
    bank_cost,
    bank_wavefronts,
    blocked,
    classify_conversion,
    conversion_map,
    dot_operand,
    mma_v2_accumulator,
    nvmma_shared,
    plan_conversion,
    plan_shared_conversion,
    slice_layout,
    swizzled_shared,
    vectorize,
)
from tlxc.ir.layout.vectorize import contiguous_register_bits, max_register_vector

ROW_MAJOR_64 = blocked((64, 64), (1, 8), (4, 8), (4, 1), (1, 0))  # Triton's usual fp16 load layout


# ---------------------------------------------------------------- classification
def test_identical_layouts_need_nothing() -> None:
    plan = plan_conversion(ROW_MAJOR_64, ROW_MAJOR_64, elem_bits=16, target=NV)
    assert plan.kind is ConversionKind.NONE
    assert plan.map == LinearLayout({n: [tuple(1 << i if m == n else 0 for m in ROW_MAJOR_64.in_dims)
                                         for i in range(ROW_MAJOR_64.in_dim_bits(n))]
                                     for n in ROW_MAJOR_64.in_dims}, list(ROW_MAJOR_64.in_sizes.items()))


def test_register_reorder_is_free() -> None:
    regs = ROW_MAJOR_64.bases["register"]
    shuffled = ROW_MAJOR_64.with_in_bases("register", [regs[3], regs[0], regs[4], regs[1], regs[2]])
    assert classify_conversion(ROW_MAJOR_64, shuffled) is ConversionKind.REGISTERS
    # dropping a duplicated register is free too
    dup = ROW_MAJOR_64.resize_in("register", 64)
    assert classify_conversion(dup, ROW_MAJOR_64) is ConversionKind.REGISTERS


def test_lane_exchange_is_a_shuffle() -> None:
    a = blocked((8, 32), (1, 1), (8, 4), (1, 1), (1, 0))
    b = blocked((8, 32), (1, 1), (4, 8), (1, 1), (1, 0))
    assert classify_conversion(a, b) is ConversionKind.WARP_SHUFFLE
    plan = plan_conversion(a, b, elem_bits=32, target=NV)
    for x in all_inputs(b):
        y = plan.map.apply(x)
        assert a.apply(y) == b.apply(x) and y["warp"] == x["warp"]


def test_crossing_warps_needs_shared_memory() -> None:
    a = blocked((64, 64), (1, 8), (4, 8), (4, 1), (1, 0))
    b = blocked((64, 64), (1, 8), (4, 8), (1, 4), (1, 0))
    assert classify_conversion(a, b) is ConversionKind.SHARED_MEMORY


def test_accumulator_to_operand_a_is_free_and_to_operand_b_is_not() -> None:
    mma = MmaV2((4, 1))
    acc = mma.accumulator((64, 64))
    assert classify_conversion(acc, dot_operand((64, 64), mma, 0, 2)) is ConversionKind.NONE
    assert classify_conversion(acc, dot_operand((64, 64), mma, 1, 2)) is ConversionKind.SHARED_MEMORY


def test_broadcast_layouts_stay_in_place() -> None:
    # A row vector spread over 8 warps, warp bit 2 broadcast (warps w and w+4 hold the
    # same rows), converted to the same rows with the lanes rearranged. Every warp
    # already has its data: a shuffle. invert_and_compose's smallest-source choice would
    # fetch warp 4's data from warp 0; conversion_map keeps each warp on its own data.
    rows = slice_layout(blocked((16, 8), (1, 1), (4, 8), (4, 1), (1, 0)), 1).resize_in("warp", 8)
    lanes = rows.bases["lane"]
    other = rows.with_in_bases("lane", [lanes[3], lanes[4], lanes[0], lanes[1], lanes[2]])
    assert rows.zero_masks() == {"register": 0, "lane": 0b00111, "warp": 0b100, "block": 0}
    assert other.invert_and_compose(rows).bases["warp"][2] == (0, 0, 0, 0)
    assert classify_conversion(rows, other) is ConversionKind.WARP_SHUFFLE
    cmap = conversion_map(rows, other, ("warp", "block"))
    assert cmap.bases["warp"][2] == (0, 0, 4, 0)
    assert classify_conversion(rows, rows) is ConversionKind.NONE


def test_cross_cta_is_reported() -> None:
    a = blocked((64, 64), (1, 8), (4, 8), (4, 1), (1, 0), cta=CTALayout((2, 1), (2, 1), (1, 0)))
    b = blocked((64, 64), (1, 8), (4, 8), (4, 1), (1, 0), cta=CTALayout((1, 2), (1, 2), (1, 0)))
    assert classify_conversion(a, b) is ConversionKind.CROSS_CTA
    with pytest.raises(LayoutError, match="cross CTAs"):
        plan_shared_conversion(a, b, elem_bits=16, target=NV)


def test_conversion_of_different_tiles_is_refused() -> None:
    with pytest.raises(LayoutError, match="different tiles"):
        classify_conversion(ROW_MAJOR_64, blocked((32, 64), (1, 8), (4, 8), (4, 1), (1, 0)))


# ---------------------------------------------------------------- bank conflicts
def test_column_walk_of_a_row_major_fp32_tile_conflicts_32_ways() -> None:
    lanes_down = blocked((32, 32), (1, 1), (32, 1), (1, 1), (1, 0))
    lanes_across = blocked((32, 32), (1, 1), (1, 32), (1, 1), (1, 0))
    plain = swizzled_shared((32, 32), 1, 1, 1, (1, 0))
    assert bank_conflicts(lanes_down, plain, elem_bits=32, vec=1, target=NV) == 32
    assert bank_conflicts(lanes_across, plain, elem_bits=32, vec=1, target=NV) == 1
    # XOR-ing the column with the row spreads a column over all banks
    swizzled = swizzled_shared((32, 32), 1, 1, 32, (1, 0))
    assert bank_conflicts(lanes_down, swizzled, elem_bits=32, vec=1, target=NV) == 1
    assert bank_conflicts(lanes_across, swizzled, elem_bits=32, vec=1, target=NV) == 1


def test_vector_accesses_are_counted_per_phase() -> None:
    # 16-byte stores of a row-major fp16 tile: 8 lanes per phase cover one 128-byte row
    assert bank_cost(ROW_MAJOR_64, nvmma_shared((64, 64), 16, 128), elem_bits=16, vec=8, target=NV).wavefronts == 4
    # 4 lanes of a phase write the same 64-byte-wide row pair without swizzle: fine, the
    # 64-wide rows are 128 bytes, so every phase touches exactly one line
    assert bank_wavefronts(ROW_MAJOR_64, nvmma_shared((64, 64), 16, 0), elem_bits=16, vec=8, target=NV) == 4


def test_128b_swizzle_makes_mma_operand_loads_conflict_free() -> None:
    mma = MmaV2((4, 1))
    a = dot_operand((64, 64), mma, 0, 2)
    swz = nvmma_shared((64, 64), 16, 128)
    plain = nvmma_shared((64, 64), 16, 0)
    assert bank_conflicts(ROW_MAJOR_64, swz, elem_bits=16, vec=8, target=NV) == 1
    assert bank_conflicts(a, swz, elem_bits=16, vec=2, target=NV) == 1
    assert bank_conflicts(a, plain, elem_bits=16, vec=2, target=NV) == 8


def test_bank_cost_refuses_vectors_no_thread_holds() -> None:
    a = dot_operand((64, 64), MmaV2((4, 1)), 0, 2)
    with pytest.raises(LayoutError, match="not held by one thread"):
        bank_cost(a, nvmma_shared((64, 64), 16, 128), elem_bits=16, vec=8, target=NV)


# ---------------------------------------------------------------- shared-memory planning
def check_plan(src: LinearLayout, dst: LinearLayout, elem_bits: int, target: LayoutTarget = NV):
    plan = plan_shared_conversion(src, dst, elem_bits=elem_bits, target=target)
    sh = plan.shared
    assert sh.sublayout(["offset"], sh.out_dims).is_bijective() or sh.in_dim_bits("block")
    assert plan.store.conflicts == 1, plan
    assert plan.load.conflicts == 1, plan
    # the counts come from the plain function, recomputed here
    assert bank_conflicts(src, sh, elem_bits=elem_bits, vec=plan.store_vec, target=target) == 1
    assert bank_conflicts(dst, sh, elem_bits=elem_bits, vec=plan.load_vec, target=target) == 1
    assert plan.store_vec * elem_bits <= target.max_vector_bytes * 8
    assert plan.load_vec * elem_bits <= target.max_vector_bytes * 8
    return plan


def test_blocked_to_operand_a_fp16_64x64() -> None:
    mma = MmaV2((4, 1))
    plan = check_plan(ROW_MAJOR_64, dot_operand((64, 64), mma, 0, 2), 16)
    assert (plan.store_vec, plan.load_vec) == (8, 2)  # 16-byte stores, one 32-bit register loads
    # what the algebra found is the classic 128-byte swizzle
    assert plan.shared == nvmma_shared((64, 64), 16, 128)


@pytest.mark.parametrize("elem_bits, k_width", [(16, 2), (8, 4), (32, 1)])
@pytest.mark.parametrize("op_idx", [0, 1])
@pytest.mark.parametrize("warps", [(4, 1), (2, 2), (1, 4)])
def test_blocked_to_operands(elem_bits: int, k_width: int, op_idx: int, warps) -> None:
    per_thread = 128 // elem_bits  # 16-byte global loads
    lanes_across = min(32, 64 // per_thread)
    src = blocked((64, 64), (1, per_thread), (32 // lanes_across, lanes_across), (4, 1), (1, 0))
    check_plan(src, dot_operand((64, 64), MmaV2(warps), op_idx, k_width), elem_bits)


@pytest.mark.parametrize("elem_bits", [16, 32])
def test_accumulator_to_store_layout(elem_bits: int) -> None:
    acc = mma_v2_accumulator((128, 128), (4, 2))
    dst = blocked((128, 128), (1, 128 // elem_bits), (4, 8), (8, 1), (1, 0))
    check_plan(acc, dst, elem_bits)


def test_transpose_through_shared_memory() -> None:
    a = blocked((64, 64), (1, 4), (4, 8), (4, 1), (1, 0))
    b = blocked((64, 64), (4, 1), (8, 4), (1, 4), (0, 1))
    plan = check_plan(a, b, 32)
    # Both threads happen to hold elements (r, c), (r, c+32), (r+32, c), (r+32, c+32) in
    # registers (the wrap-around repeats), so the algebra stores and loads those four as
    # one 16-byte vector on both sides -- no transpose-specific code found that.
    assert (plan.store_vec, plan.load_vec) == (4, 4)
    assert {plan.shared.apply(offset=i)["dim0"] for i in range(4)} == {0, 32}


def test_sub_word_elements_and_64_lanes() -> None:
    # single fp16 per thread on both sides (two lanes share a 4-byte word), and a
    # 64-lane wave with 64 banks, as an AMD-like target would describe itself
    a = blocked((32, 32), (1, 1), (4, 8), (4, 1), (1, 0))
    b = blocked((32, 32), (1, 1), (8, 4), (1, 4), (0, 1))
    check_plan(a, b, 16)
    wide = LayoutTarget(warp_size=64, num_banks=64, bank_bytes=4, max_vector_bytes=16)
    a64 = blocked((64, 64), (1, 8), (8, 8), (4, 1), (1, 0))
    b64 = blocked((64, 64), (1, 1), (64, 1), (1, 4), (0, 1))
    check_plan(a64, b64, 16, wide)


def test_plan_across_ctas_is_per_cta() -> None:
    cta = CTALayout((2, 1), (2, 1), (1, 0))
    a = blocked((128, 64), (1, 8), (4, 8), (4, 1), (1, 0), cta=cta)
    b = blocked((128, 64), (1, 1), (32, 1), (1, 4), (0, 1), cta=cta)
    plan = check_plan(a, b, 16)
    assert plan.shared.bases["block"] == ((64, 0),)
    assert plan.shared.in_dim_size("offset") == 64 * 64


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_blocked_pairs_plan_conflict_free(data) -> None:
    elem_bits = data.draw(st.sampled_from([8, 16, 32, 64]))
    shape = (1 << data.draw(st.integers(3, 6)), 1 << data.draw(st.integers(3, 6)))

    def random_blocked():
        lanes0 = 1 << data.draw(st.integers(0, 5))
        warps0 = 1 << data.draw(st.integers(0, 2))
        spt = (1 << data.draw(st.integers(0, 2)), 1 << data.draw(st.integers(0, 3)))
        order = data.draw(st.sampled_from([(1, 0), (0, 1)]))
        return blocked(shape, spt, (lanes0, 32 // lanes0), (warps0, 4 // warps0), order)

    src, dst = random_blocked(), random_blocked()
    if classify_conversion(src, dst) is not ConversionKind.SHARED_MEMORY:
        return
    check_plan(src, dst, elem_bits)


# ---------------------------------------------------------------- vectorization
def test_vector_width_from_layout_and_pointer_facts() -> None:
    lay = blocked((1024,), (4,), (32,), (4,), (0,))
    facts = dict(target=NV, contiguity=(1024,), divisibility_bytes=(16,))
    assert vectorize(lay, elem_bits=32, **facts).width == 4
    assert vectorize(lay, elem_bits=32, target=NV, contiguity=(1024,), divisibility_bytes=(8,)).width == 2
    assert vectorize(lay, elem_bits=32, target=NV, contiguity=(2,), divisibility_bytes=(16,)).width == 2
    assert vectorize(lay, elem_bits=32, target=NV, contiguity=(1024,), divisibility_bytes=(16,),
                     mask_constancy=(1,)).width == 1
    wide = blocked((1024,), (16,), (32,), (2,), (0,))
    assert vectorize(wide, elem_bits=16, **facts).width == 8  # capped at 16 bytes
    assert vectorize(wide, elem_bits=8, **facts).width == 16


def test_vector_runs_along_the_contiguous_dim() -> None:
    facts = dict(elem_bits=16, target=NV, contiguity=(1, 64), divisibility_bytes=(2, 16))
    v = vectorize(ROW_MAJOR_64, **facts)
    assert (v.dim, v.width, v.register_bits) == (1, 8, (0, 1, 2))
    col = blocked((64, 64), (8, 1), (8, 4), (1, 4), (0, 1))
    assert vectorize(col, elem_bits=16, target=NV, contiguity=(64, 1), divisibility_bytes=(16, 2)).dim == 0
    # mma accumulator: pairs of columns
    acc = mma_v2_accumulator((64, 64), (4, 1))
    assert max_register_vector(acc, 1) == 2 and max_register_vector(acc, 0) == 1


def test_vector_register_bits_need_not_come_first() -> None:
    lay = LinearLayout({"register": [(8, 0), (0, 1), (0, 2)], "lane": [(0, 4), (1, 0)]}, {"dim0": 16, "dim1": 8})
    assert contiguous_register_bits(lay, 1) == (1, 2)
    assert max_register_vector(lay, 1) == 4
