"""Shared pieces of the layout tests: a brute-force evaluator that does not use the
code under test, hypothesis strategies for random layouts, and the test target."""

from __future__ import annotations

from itertools import product

from hypothesis import strategies as st

from tlxc.ir.layout import LayoutTarget, LinearLayout, gf2

# 32 banks of 4 bytes, 32 lanes, 16-byte vectors: the memory system the mma.sync tables
# of the PTX ISA assume. Built here, as a code generator would build it from its tables.
NV = LayoutTarget(warp_size=32, num_banks=32, bank_bytes=4, max_vector_bytes=16)


def brute_apply(layout: LinearLayout, coords: dict[str, int]) -> tuple[int, ...]:
    """XOR the bases of the set bits, dim by dim, straight from ``layout.bases``."""
    out = [0] * layout.num_out_dims
    for name, bs in layout.bases.items():
        v = coords.get(name, 0)
        for i, b in enumerate(bs):
            if (v >> i) & 1:
                out = [o ^ x for o, x in zip(out, b)]
    return tuple(out)


def all_inputs(layout: LinearLayout):
    names = list(layout.in_dims)
    for vals in product(*[range(layout.in_dim_size(n)) for n in names]):
        yield dict(zip(names, vals))


def all_outputs(layout: LinearLayout):
    names = list(layout.out_dims)
    for vals in product(*[range(layout.out_dim_size(n)) for n in names]):
        yield dict(zip(names, vals))


def owners(layout: LinearLayout) -> dict[tuple[int, ...], list[dict[str, int]]]:
    """Every element -> every input holding it (brute force)."""
    out: dict[tuple[int, ...], list[dict[str, int]]] = {}
    for x in all_inputs(layout):
        out.setdefault(brute_apply(layout, x), []).append(x)
    return out


@st.composite
def layouts(draw, in_dims=("register", "lane", "warp"), out_dims=("dim0", "dim1"),
            max_in_bits: int = 3, max_out_bits: int = 3, out_bits: dict[str, int] | None = None,
            in_bits: dict[str, int] | None = None) -> LinearLayout:
    """A random layout; dims are drawn as ordered subsets of the given names."""
    outs = []
    for name in out_dims:
        k = out_bits[name] if out_bits and name in out_bits else draw(st.integers(0, max_out_bits))
        outs.append((name, 1 << k))
    bases = {}
    for name in in_dims:
        k = in_bits[name] if in_bits and name in in_bits else draw(st.integers(0, max_in_bits))
        bases[name] = [tuple(draw(st.integers(0, s - 1)) for _, s in outs) for _ in range(k)]
    return LinearLayout(bases, outs)


def make_surjective(layout: LinearLayout) -> LinearLayout:
    """Replace free (dependent) bases by missing unit directions until the layout covers
    its outputs; if bits run out, grow the first input dim."""
    flat = list(layout.flat_bases())
    ech = gf2.Echelon()
    free = [i for i, v in enumerate(flat) if not ech.add(v)]
    missing = [u for u in gf2.unit_vectors(layout.total_out_bits) if ech.add(u)]
    for i in free:
        if not missing:
            break
        flat[i] = missing.pop(0)
    probe = LinearLayout({}, list(layout.out_sizes.items()))
    new, k = {}, 0
    for name in layout.in_dims:
        n = layout.in_dim_bits(name)
        new[name] = [tuple(probe.decode_out(v).values()) for v in flat[k:k + n]]
        k += n
    first = layout.in_dims[0]
    new[first] = list(new[first]) + [tuple(probe.decode_out(v).values()) for v in missing]
    out = LinearLayout(new, list(layout.out_sizes.items()))
    assert out.is_surjective()
    return out


@st.composite
def surjective_layouts(draw, **kw) -> LinearLayout:
    return make_surjective(draw(layouts(**kw)))
