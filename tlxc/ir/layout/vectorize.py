"""How wide a per-thread global access can be, read off the layout.

A thread can move ``2**k`` elements of dim ``d`` with one instruction when its registers
hold an aligned run of them: register bits whose bases are exactly ``1, 2, ..., 2**(k-1)``
along ``d`` and zero elsewhere. Then, whatever the lane / warp / other register bits add,
those bits range over all ``2**k`` values, so the thread owns the whole aligned run (the
run is aligned *in the tile*; alignment in memory is the caller's fact). The register
bits need not be the first ones or consecutive: the lowering gathers them.

The memory side caps the width: the pointer tile's contiguity along ``d`` (how many
consecutive elements are consecutive in memory), its divisibility (the address of each
run is a multiple of that many bytes), an optional mask constancy (a masked vector
needs one mask bit), and the target's widest access.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .common import REGISTER
from .linear import LayoutError, LinearLayout
from .target import LayoutTarget


@dataclass(frozen=True)
class Vectorization:
    """``width`` elements along tile dim ``dim`` per access; ``register_bits[i]`` is the
    register bit that steps ``2**i`` elements along ``dim`` (only the first
    ``log2(width)`` matter)."""

    dim: int
    width: int
    register_bits: tuple[int, ...]


def contiguous_register_bits(layout: LinearLayout, dim: int) -> tuple[int, ...]:
    """Register bits stepping 1, 2, 4, ... elements along output dim ``dim`` and nothing
    else, as long as the chain continues."""
    j = dim
    bases = layout.in_bases(REGISTER) if layout.has_in_dim(REGISTER) else ()
    out: list[int] = []
    while True:
        want = 1 << len(out)
        hit = [i for i, b in enumerate(bases)
               if b[j] == want and all(v == 0 for k, v in enumerate(b) if k != j)]
        if not hit:
            return tuple(out)
        out.append(hit[0])


def max_register_vector(layout: LinearLayout, dim: int) -> int:
    """Elements along ``dim`` that each thread holds as one aligned run (memory aside)."""
    return 1 << len(contiguous_register_bits(layout, dim))


def vectorize(layout: LinearLayout, *, elem_bits: int, target: LayoutTarget, contiguity: Sequence[int],
              divisibility_bytes: Sequence[int], mask_constancy: Sequence[int] | None = None,
              dim: int | None = None) -> Vectorization:
    """The widest vector for a global access of ``layout`` given what is known about the
    pointers (``contiguity`` in elements and ``divisibility_bytes`` per tile dim, as
    axis analysis reports them; pass 1 for unknown) -- along ``dim``, or along the dim
    that allows the widest vector (the last dim on ties)."""
    rank = layout.num_out_dims
    for name, v in (("contiguity", contiguity), ("divisibility_bytes", divisibility_bytes),
                    ("mask_constancy", mask_constancy)):
        if v is not None and len(v) != rank:
            raise LayoutError(f"vectorize: {name} has {len(v)} entries for a rank-{rank} tile", layout)
    dims = [dim] if dim is not None else list(range(rank))
    best: Vectorization | None = None
    for d in dims:
        bits = contiguous_register_bits(layout, d)
        cap = min(1 << len(bits), _pow2_floor(contiguity[d]),
                  max(1, _pow2_floor(divisibility_bytes[d]) * 8 // elem_bits),
                  max(1, target.max_vector_bytes * 8 // elem_bits))
        if mask_constancy is not None:
            cap = min(cap, _pow2_floor(mask_constancy[d]))
        cand = Vectorization(d, cap, bits)
        if best is None or cand.width >= best.width:
            best = cand
    assert best is not None
    return best


def vector_width(layout: LinearLayout, *, elem_bits: int, target: LayoutTarget, contiguity: Sequence[int],
                 divisibility_bytes: Sequence[int], mask_constancy: Sequence[int] | None = None,
                 dim: int | None = None) -> int:
    """``vectorize(...).width``, for callers that only need the number."""
    return vectorize(layout, elem_bits=elem_bits, target=target, contiguity=contiguity,
                     divisibility_bytes=divisibility_bytes, mask_constancy=mask_constancy, dim=dim).width


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, int(n)).bit_length() - 1)
