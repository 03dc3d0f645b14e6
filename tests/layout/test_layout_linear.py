"""LinearLayout itself: construction, evaluation against brute force, each operation on
hand-checked examples, and the text forms."""

from __future__ import annotations

import pytest
from layout_helpers import all_inputs, brute_apply, owners

from tlxc.ir.layout import LayoutError, LinearLayout

# The worked example of linear.py's docstring: 4x4 tile, 8 lanes, 2 registers each.
DOC = LinearLayout({"register": [(0, 1)], "lane": [(0, 2), (1, 0), (2, 0)]}, {"dim0": 4, "dim1": 4})


def test_docstring_example() -> None:
    assert DOC.apply(register=1, lane=5) == {"dim0": 2, "dim1": 3}
    assert DOC.table().splitlines() == [
        "dim0\\dim1  0      1      2      3",
        "0          t0:r0  t0:r1  t1:r0  t1:r1",
        "1          t2:r0  t2:r1  t3:r0  t3:r1",
        "2          t4:r0  t4:r1  t5:r0  t5:r1",
        "3          t6:r0  t6:r1  t7:r0  t7:r1",
    ]
    assert DOC.invert().apply(dim0=2, dim1=3) == {"register": 1, "lane": 5}
    transposed = LinearLayout({"register": [(0, 1)], "lane": [(1, 0), (2, 0), (0, 2)]}, {"dim0": 4, "dim1": 4})
    cvt = DOC.invert_and_compose(transposed)
    assert cvt.bases == {"register": ((1, 0),), "lane": ((0, 4), (0, 1), (0, 2))}


def test_apply_matches_explicit_enumeration() -> None:
    # Every (register, lane) of the example, written out by hand: lane t holds row t>>1,
    # columns 2*(t&1) and 2*(t&1)+1.
    for lane in range(8):
        for reg in range(2):
            assert DOC.apply(register=reg, lane=lane) == {"dim0": lane >> 1, "dim1": 2 * (lane & 1) + reg}
    for x in all_inputs(DOC):
        assert tuple(DOC.apply(x).values()) == brute_apply(DOC, x)


def test_out_sizes_inferred_from_names() -> None:
    lay = LinearLayout({"lane": [(0, 1), (2, 0)]}, ["dim0", "dim1"])
    assert lay.out_sizes == {"dim0": 4, "dim1": 2}


@pytest.mark.parametrize("bases, outs", [
    ({"r": [(4,)]}, {"d": 4}),            # basis outside the dim
    ({"r": [(1, 0)]}, {"d": 4}),          # wrong arity
    ({"r": [(1,)]}, {"d": 3}),            # size not a power of two
    ({"r": [(-1,)]}, {"d": 4}),           # negative
])
def test_invalid_layouts_are_refused(bases, outs) -> None:
    with pytest.raises(LayoutError):
        LinearLayout(bases, outs)


def test_input_out_of_range_is_refused() -> None:
    with pytest.raises(LayoutError):
        DOC.apply(lane=8)
    with pytest.raises(LayoutError):
        DOC.apply(warp=0)


def test_one_dim_constructors() -> None:
    assert LinearLayout.identity_1d(8, "r", "d").bases == {"r": ((1,), (2,), (4,))}
    assert LinearLayout.zeros_1d(4, "r", "d").bases == {"r": ((0,), (0,))}
    assert LinearLayout.zeros_1d(4, "r", "d").out_sizes == {"d": 1}
    s = LinearLayout.strided_1d(4, 2, "r", "d")
    assert [s.apply(r=i)["d"] for i in range(4)] == [0, 2, 4, 6]
    assert s.out_sizes == {"d": 8}
    assert LinearLayout.identity_1d(1, "r", "d").in_sizes == {"r": 1}


def test_product_concatenates_and_shifts() -> None:
    a = LinearLayout.identity_1d(4, "r", "d")
    b = LinearLayout.identity_1d(8, "r", "d")
    assert a * b == LinearLayout.identity_1d(32, "r", "d")
    # Different input dims, same output: the outer one lands above the inner one.
    p = LinearLayout.identity_1d(2, "register", "dim1") * LinearLayout.identity_1d(4, "lane", "dim1")
    assert p.bases == {"register": ((1,),), "lane": ((2,), (4,))}
    # Different output dims: side by side.
    q = LinearLayout.identity_1d(2, "lane", "dim1") * LinearLayout.identity_1d(4, "lane", "dim0")
    assert q.bases == {"lane": ((1, 0), (0, 1), (0, 2))}
    assert q.out_dims == ("dim1", "dim0")
    assert LinearLayout.empty() * q == q == q * LinearLayout.empty()


def test_product_refuses_crossed_dim_orders() -> None:
    a = LinearLayout({"r": [(1, 0)]}, {"x": 2, "y": 1})
    b = LinearLayout({"r": [(1, 0)]}, {"y": 2, "x": 1})
    with pytest.raises(LayoutError):
        a * b


def test_compose() -> None:
    # lanes -> (dim0, dim1), then transpose the tile: lanes -> (dim1, dim0)
    swap = LinearLayout({"dim0": [(0, 1), (0, 2)], "dim1": [(1, 0), (2, 0)]}, {"a": 4, "b": 4})
    c = DOC.compose(swap)
    for x in all_inputs(DOC):
        y = DOC.apply(x)
        assert c.apply(x) == {"a": y["dim1"], "b": y["dim0"]}


def test_invert_picks_smallest_input_on_broadcast() -> None:
    # lanes 0/1 both hold column 0 ... lane bit 0 is broadcast; lane bit 3 duplicates bit 1.
    lay = LinearLayout({"register": [(1,)], "lane": [(0,), (2,), (4,), (2,)]}, {"d": 8})
    inv = lay.invert()
    for d in range(8):
        preimages = [x for x in all_inputs(lay) if lay.apply(x)["d"] == d]
        smallest = min(preimages, key=lay.encode_in)
        assert inv.apply(d=d) == smallest
    assert lay.free_variable_masks() == {"register": 0, "lane": 0b1001}
    assert lay.zero_masks() == {"register": 0, "lane": 0b0001}


def test_invert_needs_surjective() -> None:
    with pytest.raises(LayoutError, match="surjective"):
        LinearLayout({"r": [(1,)]}, {"d": 4}).invert()


def test_invert_and_compose_refuses_unreachable() -> None:
    a = LinearLayout({"r": [(2,)]}, {"d": 4})
    b = LinearLayout({"r": [(1,)], "l": [(0,)]}, {"d": 4})
    with pytest.raises(LayoutError, match="not held"):
        a.invert_and_compose(b)


def test_reshape_and_flatten() -> None:
    flat = DOC.flatten_outs("x")
    assert flat.out_sizes == {"x": 16}
    # dim0 is least significant when flattening outputs
    assert flat.apply(lane=2)["x"] == DOC.apply(lane=2)["dim0"] + 4 * DOC.apply(lane=2)["dim1"]
    assert flat.reshape_outs([("dim0", 4), ("dim1", 4)]) == DOC
    ins = DOC.flatten_ins()
    assert ins.in_sizes == {"register": 16}
    assert ins.apply(register=0b1011) == DOC.apply(register=1, lane=0b101)
    assert ins.reshape_ins([("register", 2), ("lane", 8)]) == DOC


def test_transpose_and_sublayout() -> None:
    t = DOC.transpose_outs(["dim1", "dim0"])
    assert t.apply(register=1, lane=5) == {"dim1": 3, "dim0": 2}
    assert t.transpose_outs(["dim0", "dim1"]) == DOC
    assert DOC.transpose_ins(["lane", "register"]).apply(lane=5, register=1) == DOC.apply(lane=5, register=1)
    sub = DOC.sublayout(["lane"], ["dim0"])
    assert sub.bases == {"lane": ((0,), (1,), (2,))}


def test_surjective_injective() -> None:
    assert DOC.is_surjective() and DOC.is_injective() and DOC.is_bijective()
    broadcast = DOC.resize_in("warp", 4)
    assert broadcast.is_surjective() and not broadcast.is_injective()
    assert broadcast.free_variable_masks()["warp"] == 0b11
    partial = DOC.sublayout(["lane"], ["dim0", "dim1"])
    assert not partial.is_surjective() and partial.is_injective()


def test_equality_hash_and_text() -> None:
    same = LinearLayout({"register": [(0, 1)], "lane": [(0, 2), (1, 0), (2, 0)]}, {"dim0": 4, "dim1": 4})
    assert same == DOC and hash(same) == hash(DOC)
    assert DOC != DOC.transpose_ins(["lane", "register"])
    assert str(DOC) == "ll(register=[(0,1)], lane=[(0,2),(1,0),(2,0)]; dim0=4, dim1=4)"
    assert LinearLayout.parse(str(DOC)) == DOC
    assert eval(repr(DOC), {"LinearLayout": LinearLayout}) == DOC
    assert "lane=4 -> {'dim0': 2, 'dim1': 0}" in DOC.describe()
    # text contains no angle brackets, so it can sit inside ``tile<...>`` in the IR
    assert "<" not in str(DOC) and ">" not in str(DOC)


def test_table_marks_broadcast_and_holes() -> None:
    lay = LinearLayout({"register": [(1,)], "lane": [(0,)]}, {"d": 4})
    text = lay.table()
    assert text.splitlines()[1].split() == ["t0:r0", "t0:r1", ".", "."]
    assert "held by 2 inputs" in text


def test_layout_error_shows_tables() -> None:
    err = LayoutError("boom", DOC)
    assert "t5:r1" in str(err)


def test_owners_helper_agrees_with_invert() -> None:
    inv = DOC.invert()
    for elem, holders in owners(DOC).items():
        assert len(holders) == 1
        assert inv.apply(dict(zip(DOC.out_dims, elem))) == holders[0]
