"""Hypothesis properties of the layout algebra: every operation agrees
with brute force on random small layouts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from layout_helpers import all_inputs, all_outputs, brute_apply, layouts, make_surjective, surjective_layouts

from tlxc.ir.layout import LinearLayout, conversion_map

FAST = settings(max_examples=60, deadline=None)


@FAST
@given(layouts())
def test_apply_is_xor_of_bases(lay: LinearLayout) -> None:
    for x in all_inputs(lay):
        assert tuple(lay.apply(x).values()) == brute_apply(lay, x)


@FAST
@given(layouts(), st.data())
def test_apply_is_linear(lay: LinearLayout, data) -> None:
    n = lay.total_in_size
    a, b = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
    assert lay.apply_flat(a ^ b) == lay.apply_flat(a) ^ lay.apply_flat(b)


@st.composite
def ordered_subset(draw, names):
    return tuple(n for n in names if draw(st.booleans()))


@FAST
@given(st.data())
def test_product_places_outer_above_inner(data) -> None:
    ins_a = data.draw(ordered_subset(("register", "lane", "warp")))
    ins_b = data.draw(ordered_subset(("register", "lane", "warp")))
    outs_a = data.draw(ordered_subset(("dim0", "dim1")))
    outs_b = data.draw(ordered_subset(("dim0", "dim1")))
    a = data.draw(layouts(in_dims=ins_a, out_dims=outs_a, max_in_bits=2, max_out_bits=2))
    b = data.draw(layouts(in_dims=ins_b, out_dims=outs_b, max_in_bits=2, max_out_bits=2))
    p = a * b
    for out in p.out_dims:
        assert p.out_dim_size(out) == a.out_sizes.get(out, 1) * b.out_sizes.get(out, 1)
    for xa in all_inputs(a):
        for xb in all_inputs(b):
            x = {}
            for name in p.in_dims:
                low = xa.get(name, 0)
                x[name] = low | (xb.get(name, 0) << (a.in_dim_bits(name) if a.has_in_dim(name) else 0))
            ya, yb = a.apply(xa), b.apply(xb)
            expect = {o: ya.get(o, 0) ^ (yb.get(o, 0) << (a.out_dim_bits(o) if a.has_out_dim(o) else 0))
                      for o in p.out_dims}
            assert p.apply(x) == expect


@FAST
@given(st.data())
def test_product_is_associative(data) -> None:
    kw = dict(in_dims=("register", "lane"), out_dims=("dim0", "dim1"), max_in_bits=2, max_out_bits=2)
    a, b, c = data.draw(layouts(**kw)), data.draw(layouts(**kw)), data.draw(layouts(**kw))
    assert (a * b) * c == a * (b * c)


@FAST
@given(st.integers(0, 4), st.integers(0, 4))
def test_identity_product(i: int, j: int) -> None:
    assert (LinearLayout.identity_1d(1 << i, "r", "d") * LinearLayout.identity_1d(1 << j, "r", "d")
            == LinearLayout.identity_1d(1 << (i + j), "r", "d"))


@FAST
@given(st.data())
def test_compose_is_function_composition_and_associative(data) -> None:
    mid = {"x": data.draw(st.integers(0, 2)), "y": data.draw(st.integers(0, 2))}
    mid2 = {"u": data.draw(st.integers(0, 3))}
    a = data.draw(layouts(in_dims=("register", "lane"), out_dims=("x", "y"), out_bits=mid, max_in_bits=2))
    b = data.draw(layouts(in_dims=("x", "y"), in_bits=mid, out_dims=("u",), out_bits=mid2))
    c = data.draw(layouts(in_dims=("u",), in_bits=mid2, out_dims=("dim0", "dim1"), max_out_bits=2))
    ab = a.compose(b)
    for x in all_inputs(a):
        assert ab.apply(x) == b.apply(a.apply(x))
    assert ab.compose(c) == a.compose(b.compose(c))


@FAST
@given(surjective_layouts(max_in_bits=3, max_out_bits=2))
def test_invert_is_a_right_inverse_choosing_smallest(lay: LinearLayout) -> None:
    inv = lay.invert()
    preimages: dict[tuple[int, ...], list[int]] = {}
    for x in all_inputs(lay):
        preimages.setdefault(tuple(lay.apply(x).values()), []).append(lay.encode_in(x))
    for y in all_outputs(lay):
        x = inv.apply(y)
        assert lay.apply(x) == y
        assert lay.encode_in(x) == min(preimages[tuple(y.values())])


@FAST
@given(st.data())
def test_invert_of_bijection_is_involutive(data) -> None:
    bits = data.draw(st.integers(1, 5))
    lay = make_surjective(data.draw(layouts(in_dims=("register",), in_bits={"register": 0},
                                            out_dims=("dim0", "dim1"),
                                            out_bits={"dim0": bits // 2, "dim1": bits - bits // 2})))
    assert lay.is_bijective()
    assert lay.invert().invert() == lay
    assert lay.compose(lay.invert()) == LinearLayout.identity_1d(lay.total_in_size, "register", "register")


@FAST
@given(st.data())
def test_invert_and_compose_maps_to_same_element(data) -> None:
    tile = {"dim0": data.draw(st.integers(0, 2)), "dim1": data.draw(st.integers(0, 2))}
    src = data.draw(surjective_layouts(out_bits=tile, max_in_bits=2))
    dst = data.draw(surjective_layouts(out_bits=tile, max_in_bits=2))
    cvt = src.invert_and_compose(dst)
    assert cvt.in_dims == src.in_dims and cvt.out_dims == dst.in_dims
    for x in all_inputs(src):
        assert dst.apply(cvt.apply(x)) == src.apply(x)


@FAST
@given(st.data())
def test_conversion_map_keeps_requested_dims(data) -> None:
    tile = {"dim0": data.draw(st.integers(0, 2)), "dim1": data.draw(st.integers(0, 2))}
    shape = {"register": 2, "lane": 2, "warp": 1}
    src = data.draw(surjective_layouts(out_bits=tile, in_bits=shape))
    dst = data.draw(surjective_layouts(out_bits=tile, in_bits=shape))
    keep = data.draw(ordered_subset(("lane", "warp")))
    cmap = conversion_map(src, dst, keep)
    if cmap is None:
        return
    for x in all_inputs(dst):
        y = cmap.apply(x)
        assert src.apply(y) == dst.apply(x)
        for d in keep:
            assert y[d] == x[d]


@FAST
@given(layouts())
def test_reshape_and_transpose_round_trip(lay: LinearLayout) -> None:
    flat = lay.flatten_outs("flat").flatten_ins("in")
    back = flat.reshape_ins(list(lay.in_sizes.items())).reshape_outs(list(lay.out_sizes.items()))
    assert back == lay
    perm = list(reversed(lay.out_dims))
    t = lay.transpose_outs(perm)
    for x in all_inputs(lay):
        assert t.apply(x) == {k: lay.apply(x)[k] for k in perm}
    assert t.transpose_outs(list(lay.out_dims)) == lay


@FAST
@given(layouts())
def test_free_variables_count_the_kernel(lay: LinearLayout) -> None:
    free = sum(bin(m).count("1") for m in lay.free_variable_masks().values())
    assert free == lay.total_in_bits - lay.rank()
    assert lay.is_injective() == (free == 0)
    for name, mask in lay.zero_masks().items():
        assert mask & ~lay.free_variable_masks()[name] == 0
    images = {tuple(lay.apply(x).values()) for x in all_inputs(lay)}
    assert len(images) == 1 << lay.rank()
    assert lay.is_surjective() == (len(images) == lay.total_out_size)


@FAST
@given(layouts())
def test_text_round_trip(lay: LinearLayout) -> None:
    assert LinearLayout.parse(str(lay)) == lay
    assert hash(LinearLayout.parse(str(lay))) == hash(lay)
