"""Named layouts against tables worked out by hand or from the PTX ISA's formulas."""

from __future__ import annotations

import pytest
from layout_helpers import all_inputs, owners

from tlxc.ir.layout import (
    CTALayout,
    LayoutError,
    LinearLayout,
    MmaV2,
    blocked,
    dot_operand,
    expand_dims,
    join,
    mma_v2_accumulator,
    nvmma_shared,
    permute,
    reshape,
    slice_layout,
    split,
    swizzled_shared,
)


def grid(layout: LinearLayout) -> list[list[str]]:
    return [line.split()[1:] for line in layout.table().splitlines()[1:] if not line.startswith("(")]


# ---------------------------------------------------------------- blocked
def test_blocked_wraps_rows_through_registers() -> None:
    # toy warp of 8 lanes: 2 cols/thread, 4 lanes across, 2 lanes down -> 2x8 per CTA,
    # so a 4x8 tile repeats the pattern once more in registers 2..3.
    lay = blocked((4, 8), (1, 2), (2, 4), (1, 1), (1, 0))
    assert grid(lay) == [
        "t0:r0 t0:r1 t1:r0 t1:r1 t2:r0 t2:r1 t3:r0 t3:r1".split(),
        "t4:r0 t4:r1 t5:r0 t5:r1 t6:r0 t6:r1 t7:r0 t7:r1".split(),
        "t0:r2 t0:r3 t1:r2 t1:r3 t2:r2 t2:r3 t3:r2 t3:r3".split(),
        "t4:r2 t4:r3 t5:r2 t5:r3 t6:r2 t6:r3 t7:r2 t7:r3".split(),
    ]
    assert lay.in_dims == ("register", "lane", "warp", "block")


def test_blocked_column_major_order_and_warps() -> None:
    lay = blocked((4, 4), (1, 1), (4, 2), (1, 2), (0, 1))
    assert grid(lay) == [
        "w0:t0 w0:t4 w1:t0 w1:t4".split(),
        "w0:t1 w0:t5 w1:t1 w1:t5".split(),
        "w0:t2 w0:t6 w1:t2 w1:t6".split(),
        "w0:t3 w0:t7 w1:t3 w1:t7".split(),
    ]


def test_blocked_smaller_tile_broadcasts() -> None:
    # 2 warps stacked over 4 rows, but the tile has 2 rows: warp 1 holds warp 0's data.
    lay = blocked((2, 4), (1, 1), (2, 4), (2, 1), (1, 0))
    assert lay.bases["warp"] == ((0, 0),)
    assert grid(lay) == ["w0:t0 w0:t1 w0:t2 w0:t3".split(), "w0:t4 w0:t5 w0:t6 w0:t7".split()]
    for elem, holders in owners(lay).items():
        assert sorted(h["warp"] for h in holders) == [0, 1]
    # too narrow: the largest lane basis along dim1 goes first
    narrow = blocked((2, 2), (1, 1), (2, 4), (1, 1), (1, 0))
    assert narrow.bases["lane"] == ((0, 1), (0, 0), (1, 0))


def blocked_owner(r: int, c: int, spt, tpw, wpc, shape) -> dict[str, int]:
    """Ownership of a row-major (order [1, 0]) blocked layout, written from its definition."""
    tile_r, tile_c = spt[0] * tpw[0] * wpc[0], spt[1] * tpw[1] * wpc[1]
    within = (c % spt[1]) + spt[1] * (r % spt[0])
    rep = (c // tile_c) + (shape[1] // tile_c) * (r // tile_r)
    lane = (c // spt[1]) % tpw[1] + tpw[1] * ((r // spt[0]) % tpw[0])
    warp = (c // (spt[1] * tpw[1])) % wpc[1] + wpc[1] * ((r // (spt[0] * tpw[0])) % wpc[0])
    return {"register": within + spt[0] * spt[1] * rep, "lane": lane, "warp": warp, "block": 0}


@pytest.mark.parametrize("shape, spt, tpw, wpc", [
    ((64, 64), (1, 8), (4, 8), (4, 1)),
    ((32, 128), (2, 4), (2, 16), (2, 2)),
    ((128, 16), (4, 1), (8, 4), (1, 4)),
    ((16, 16), (1, 1), (4, 8), (4, 1)),
])
def test_blocked_matches_definition(shape, spt, tpw, wpc) -> None:
    lay = blocked(shape, spt, tpw, wpc, (1, 0))
    inv = lay.invert()
    for r in range(shape[0]):
        for c in range(shape[1]):
            assert inv.apply(dim0=r, dim1=c) == blocked_owner(r, c, spt, tpw, wpc, shape)


def test_blocked_across_ctas() -> None:
    split_rows = CTALayout((2, 1), (2, 1), (1, 0))
    lay = blocked((64, 32), (1, 1), (8, 4), (4, 1), (1, 0), cta=split_rows)
    assert lay.bases["block"] == ((32, 0),)
    assert lay.bases["register"] == ((0, 4), (0, 8), (0, 16))
    copies = blocked((32, 32), (1, 1), (8, 4), (4, 1), (1, 0), cta=CTALayout((2, 1), (1, 1), (1, 0)))
    assert copies.bases["block"] == ((0, 0),)


def test_blocked_rejects_bad_parameters() -> None:
    with pytest.raises(LayoutError):
        blocked((4, 4), (1,), (4, 8), (1, 1), (1, 0))
    with pytest.raises(LayoutError):
        blocked((4, 4), (1, 1), (4, 8), (1, 1), (0, 0))
    with pytest.raises(LayoutError):
        blocked((6, 4), (1, 1), (4, 8), (1, 1), (1, 0))


# ---------------------------------------------------------------- slice
def test_slice_drops_a_dim() -> None:
    parent = blocked((4, 8), (1, 2), (2, 4), (1, 1), (1, 0))
    rows = slice_layout(parent, 1)  # a row reduction's result: one value per row
    assert rows == LinearLayout({"register": [(2,)], "lane": [(0,), (0,), (1,)], "warp": [], "block": []},
                                {"dim0": 4})
    assert rows.table().splitlines()[1].split() == ["t0:r0", "t4:r0", "t0:r1", "t4:r1"]
    cols = slice_layout(parent, 0)
    assert cols == LinearLayout({"register": [(1,)], "lane": [(2,), (4,), (0,)], "warp": [], "block": []},
                                {"dim0": 8})


# ---------------------------------------------------------------- mma.sync (PTX ISA)
def isa_accumulator(lane: int, i: int) -> tuple[int, int]:
    group, tid = lane >> 2, lane % 4
    return group + 8 * (i >= 2), tid * 2 + (i & 1)


def test_mma_accumulator_is_the_isa_fragment() -> None:
    acc = mma_v2_accumulator((16, 8), (1, 1))
    for lane in range(32):
        for i in range(4):
            assert tuple(acc.apply(register=i, lane=lane).values()) == isa_accumulator(lane, i)
    # the ISA figure, read for lane 5: row 1 cols 2-3 and row 9 cols 2-3
    held = {tuple(acc.apply(register=i, lane=5).values()) for i in range(4)}
    assert held == {(1, 2), (1, 3), (9, 2), (9, 3)}
    assert acc.is_bijective()


def test_mma_accumulator_over_warps_and_repetitions() -> None:
    # 2x2 warps (warp 1 to the right of warp 0) over a 64x64 tile: each warp covers a
    # 16x8 tile of a 32x16 block; repetitions walk N first, then M.
    acc = mma_v2_accumulator((64, 64), (2, 2))
    for x in all_inputs(acc):
        reg, lane, warp = x["register"], x["lane"], x["warp"]
        rep = reg >> 2
        row = 32 * (rep // 4) + 16 * (warp // 2) + isa_accumulator(lane, reg & 3)[0]
        col = 16 * (rep % 4) + 8 * (warp % 2) + isa_accumulator(lane, reg & 3)[1]
        assert acc.apply(x) == {"dim0": row, "dim1": col}


def isa_a(lane: int, i: int, k_width: int) -> tuple[int, int]:
    """PTX: A of m16n8k16 (16-bit, k_width 2) and m16n8k32 (8-bit, k_width 4)."""
    group, tid = lane >> 2, lane % 4
    per = k_width  # elements per 32-bit register
    row = group + 8 * ((i // per) % 2)
    col = tid * per + (i % per) + 4 * per * (i // (2 * per))
    return row, col


def isa_b(lane: int, i: int, k_width: int) -> tuple[int, int]:
    group, tid = lane >> 2, lane % 4
    per = k_width
    return tid * per + (i % per) + 4 * per * (i // per), group


@pytest.mark.parametrize("k_width", [2, 4])
def test_dot_operands_are_the_isa_fragments(k_width: int) -> None:
    mma = MmaV2((1, 1))
    k = 8 * k_width  # 16 for 16-bit types, 32 for 8-bit types
    a = dot_operand((16, k), mma, 0, k_width)
    b = dot_operand((k, 8), mma, 1, k_width)
    for lane in range(32):
        for i in range(4 * k_width):
            assert tuple(a.apply(register=i, lane=lane).values()) == isa_a(lane, i, k_width)
        for i in range(2 * k_width):
            assert tuple(b.apply(register=i, lane=lane).values()) == isa_b(lane, i, k_width)


def test_fp16_fragments_spelled_out() -> None:
    # m16n8k16 A, lane 5 (groupID 1, threadID_in_group 1): a0..a7
    a = dot_operand((16, 16), MmaV2((1, 1)), 0, 2)
    assert [tuple(a.apply(register=i, lane=5).values()) for i in range(8)] == [
        (1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]
    b = dot_operand((16, 8), MmaV2((1, 1)), 1, 2)
    assert [tuple(b.apply(register=i, lane=5).values()) for i in range(4)] == [(2, 1), (3, 1), (10, 1), (11, 1)]


def test_dot_operand_warps_broadcast_along_k() -> None:
    mma = MmaV2((2, 2))
    a = dot_operand((64, 64), mma, 0, 2)
    b = dot_operand((64, 64), mma, 1, 2)
    # warp = 2 * warp_m + warp_n; A is split over warp_m only, B over warp_n only
    assert a.bases["warp"] == ((0, 0), (16, 0))
    assert b.bases["warp"] == ((0, 8), (0, 0))
    # registers of A walk K first: after the 16x16 tile come K repeats, then M
    assert a.bases["register"][3:] == ((0, 16), (0, 32), (32, 0))


def test_accumulator_equals_operand_a_for_chained_dots() -> None:
    # The flash-attention identity: with k_width 2 the accumulator of one mma is already
    # the A operand of the next, register for register.
    mma = MmaV2((4, 1))
    assert mma.accumulator((64, 64)) == dot_operand((64, 64), mma, 0, 2)


# ---------------------------------------------------------------- shared memory
def swizzle(addr: int, span: int) -> int:
    """PTX tensor swizzling: byte bits [4, 4+m) ^= bits [7, 7+m), m = log2(span / 16)."""
    mask = span // 16 - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def test_128b_swizzle_pattern() -> None:
    lay = nvmma_shared((8, 64), 16, 128)
    inv = lay.invert()
    for r in range(8):
        for c in range(64):
            assert inv.apply(dim0=r, dim1=c)["offset"] == r * 64 + (((c // 8) ^ r) * 8) + c % 8
    # row 1 starts with chunk 1's elements (columns 8..15)
    assert [lay.apply(offset=64 + i)["dim1"] for i in range(8)] == list(range(8, 16))


@pytest.mark.parametrize("span", [32, 64, 128])
@pytest.mark.parametrize("elem_bits", [8, 16, 32])
@pytest.mark.parametrize("shape", [(8, 256), (32, 128), (64, 64)])
def test_swizzle_spans_follow_the_byte_rule(span: int, elem_bits: int, shape) -> None:
    rows, cols = shape
    e = elem_bits // 8
    width = span // e  # elements per swizzle row
    if cols < width:
        with pytest.raises(LayoutError):
            nvmma_shared(shape, elem_bits, span)
        return
    inv = nvmma_shared(shape, elem_bits, span).invert()
    for r in range(rows):
        for c in range(cols):
            block = (c // width) * rows * span
            expect = block + swizzle(r * span + (c % width) * e, span)
            assert inv.apply(dim0=r, dim1=c)["offset"] * e == expect


def test_no_swizzle_is_row_major_and_transposed_swaps_roles() -> None:
    inv = nvmma_shared((16, 32), 16, 0).invert()
    assert all(inv.apply(dim0=r, dim1=c)["offset"] == r * 32 + c for r in range(16) for c in range(32))
    t = nvmma_shared((64, 16), 16, 128, transposed=True).invert()
    for r in range(64):
        for c in range(16):
            assert t.apply(dim0=r, dim1=c)["offset"] == c * 64 + (((r // 8) ^ (c % 8)) * 8) + r % 8


def test_nvmma_refuses_tiles_smaller_than_an_atom() -> None:
    with pytest.raises(LayoutError, match="span"):
        nvmma_shared((8, 32), 16, 128)
    with pytest.raises(LayoutError, match="rows"):
        nvmma_shared((4, 64), 16, 128)
    with pytest.raises(LayoutError):
        nvmma_shared((8, 64), 16, 96)


def test_swizzled_shared_generalizes_nvmma() -> None:
    assert swizzled_shared((64, 64), 8, 1, 8, (1, 0)) == nvmma_shared((64, 64), 16, 128)
    assert swizzled_shared((64, 32), 8, 2, 4, (1, 0)) == nvmma_shared((64, 32), 16, 64)
    plain = swizzled_shared((4, 8), 1, 1, 1, (1, 0))
    assert plain.invert().apply(dim0=3, dim1=5)["offset"] == 29
    col_major = swizzled_shared((4, 8), 1, 1, 1, (0, 1))
    assert col_major.invert().apply(dim0=3, dim1=5)["offset"] == 23


def test_shared_layout_across_ctas() -> None:
    lay = nvmma_shared((128, 64), 16, 128, cta=CTALayout((2, 1), (2, 1), (1, 0)))
    one = nvmma_shared((64, 64), 16, 128)
    assert lay.bases["block"] == ((64, 0),)
    assert lay.bases["offset"] == one.bases["offset"]
    assert lay.out_sizes == {"dim0": 128, "dim1": 64}


# ---------------------------------------------------------------- shape ops
def test_permute_of_blocked_is_the_transposed_blocked() -> None:
    lay = blocked((16, 64), (1, 4), (4, 8), (2, 2), (1, 0))
    assert permute(lay, (1, 0)) == blocked((64, 16), (4, 1), (8, 4), (2, 2), (0, 1))


def test_reshape_is_row_major() -> None:
    lay = blocked((8, 16), (1, 2), (4, 8), (2, 1), (1, 0))
    flat = reshape(lay, (128,))
    back = reshape(flat, (8, 16))
    assert back == lay
    three = reshape(lay, (2, 4, 16))
    for x in all_inputs(lay):
        y = lay.apply(x)
        k = y["dim0"] * 16 + y["dim1"]
        assert flat.apply(x) == {"dim0": k}
        assert three.apply(x) == {"dim0": k // 64, "dim1": (k // 16) % 4, "dim2": k % 16}


def test_join_split_and_expand_dims() -> None:
    lay = blocked((8, 8), (1, 1), (8, 4), (1, 1), (1, 0))
    j = join(lay)
    assert j.out_sizes == {"dim0": 8, "dim1": 8, "dim2": 2}
    assert j.apply(register=1) == {"dim0": 0, "dim1": 0, "dim2": 1}
    assert split(j) == lay
    held_by_lanes = LinearLayout({"register": [], "lane": [(0, 1)]}, {"dim0": 1, "dim1": 2})
    with pytest.raises(LayoutError, match="convert"):
        split(held_by_lanes)
    e = expand_dims(lay, 1)
    assert e.out_sizes == {"dim0": 8, "dim1": 1, "dim2": 8}
    assert slice_layout(e, 1) == lay


def test_batched_mma_layouts() -> None:
    acc = mma_v2_accumulator((2, 16, 8), (2, 1, 1))
    assert acc.bases["warp"] == ((1, 0, 0),)
    assert acc.sublayout(["register", "lane"], ["dim1", "dim2"]) == mma_v2_accumulator((16, 8), (1, 1)).sublayout(
        ["register", "lane"], ["dim0", "dim1"]).rename(outs={"dim0": "dim1", "dim1": "dim2"})
    a = dot_operand((2, 16, 16), MmaV2((2, 1, 1)), 0, 2)
    assert a.bases["warp"] == ((1, 0, 0),)
    assert a.is_bijective()
