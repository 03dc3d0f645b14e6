"""Layouts of shape-changing tile ops, computed from the operand's layout with no data
movement: each result element stays in the register that held it.

``permute`` (``tl.trans`` / ``tl.permute``), ``reshape`` (row-major, as ``tl.reshape``),
``expand_dims``, ``join`` (new minor dim of size 2) and ``split`` (its inverse). A
reduction's result layout is ``common.slice_layout``. When an op cannot keep data in
place (``split`` of a dim held by two lanes), the function raises ``LayoutError`` and the
layout-assignment pass inserts a conversion first.
"""

from __future__ import annotations

from collections.abc import Sequence

from .common import REGISTER, dim_names
from .linear import LayoutError, LinearLayout, log2


def _standard(layout: LinearLayout) -> tuple[str, ...]:
    names = dim_names(layout.num_out_dims)
    if layout.out_dims != names:
        raise LayoutError(f"expected output dims {names}, got {layout.out_dims}", layout)
    return names


def permute(layout: LinearLayout, order: Sequence[int]) -> LinearLayout:
    """Result dim ``i`` is operand dim ``order[i]``."""
    names = _standard(layout)
    if sorted(order) != list(range(len(names))):
        raise LayoutError(f"permute: {list(order)} is not a permutation", layout)
    tmp = {names[d]: f"_p{i}" for i, d in enumerate(order)}
    out = layout.rename(outs=tmp).transpose_outs([f"_p{i}" for i in range(len(names))])
    return out.rename(outs={f"_p{i}": n for i, n in enumerate(names)})


def reshape(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Row-major reshape: element ``k`` of the flattened tile keeps its owner."""
    names = _standard(layout)
    for s in shape:
        log2(s)
    rev = list(reversed(names))
    flat = layout.transpose_outs(rev)  # last dim least significant = row-major flattening
    new_names = dim_names(len(shape))
    tmp = [(f"_r{i}", s) for i, s in reversed(list(enumerate(shape)))]
    out = flat.reshape_outs(tmp).transpose_outs([f"_r{i}" for i in range(len(shape))])
    return out.rename(outs={f"_r{i}": n for i, n in enumerate(new_names)})


def expand_dims(layout: LinearLayout, dim: int) -> LinearLayout:
    """Insert a size-1 dim at position ``dim``."""
    names = _standard(layout)
    rank = len(names) + 1
    if not 0 <= dim < rank:
        raise LayoutError(f"expand_dims: dim {dim} out of range for rank {rank}", layout)
    new = dim_names(rank)
    mapping = {old: new[i + (i >= dim)] for i, old in enumerate(names)}
    bases = {name: [b[:dim] + (0,) + b[dim:] for b in bs] for name, bs in layout.bases.items()}
    outs = [(mapping[n], s) for n, s in zip(names, layout.out_shape)]
    outs.insert(dim, (new[dim], 1))
    return LinearLayout(bases, outs)


def join(layout: LinearLayout) -> LinearLayout:
    """``tl.join(a, b)``: a new last dim of size 2; each thread keeps ``a``'s and ``b``'s
    elements side by side (a new lowest register bit selects between them)."""
    out = expand_dims(layout, layout.num_out_dims)
    last = out.num_out_dims - 1
    bases = {name: list(bs) for name, bs in out.bases.items()}
    if REGISTER not in bases:
        raise LayoutError("join: layout has no register dim", layout)
    bases[REGISTER] = [tuple(1 if k == last else 0 for k in range(last + 1))] + bases[REGISTER]
    outs = list(out.out_sizes.items())
    outs[last] = (outs[last][0], 2)
    return LinearLayout(bases, outs)


def split(layout: LinearLayout) -> LinearLayout:
    """``tl.split``: drop the last dim (size 2), which one register bit must select."""
    names = _standard(layout)
    last = len(names) - 1
    if layout.out_shape[-1] != 2:
        raise LayoutError("split: the last dim must have size 2", layout)
    hits = [(n, i) for n in layout.in_dims for i, b in enumerate(layout.in_bases(n)) if b[last]]
    ok = (len(hits) == 1 and hits[0][0] == REGISTER
          and not any(layout.basis(REGISTER, hits[0][1])[:last]))
    if not ok:
        raise LayoutError("split: the last dim is not held by a single register bit; convert first", layout)
    reg = [b for i, b in enumerate(layout.in_bases(REGISTER)) if i != hits[0][1]]
    return layout.with_in_bases(REGISTER, reg).sublayout(layout.in_dims, names[:last])
