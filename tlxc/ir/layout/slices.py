"""Sub-tiles of a distributed tile that need no data movement: ``tile_over`` repeats a
sub-tile's layout over a whole tile by registers, and ``extract_slice_layout`` finds the
registers of each thread that hold an aligned sub-tile (AMD ``extract_slice``, the layout
pass's choice for its operand)."""

from __future__ import annotations

from .common import LANE, REGISTER, WARP
from .linear import LayoutError, LinearLayout


def tile_over(layout: LinearLayout, shape: tuple[int, ...]) -> LinearLayout:
    """``layout`` (of a sub-tile) repeated over a tile of ``shape`` by registers: the
    threads hold the same elements of every sub-tile, so each sub-tile of ``shape`` is a
    whole set of registers (``extract_slice_layout`` takes it without moving data)."""
    names = layout.out_dims
    sizes = [layout.out_dim_size(n) for n in names]
    regs = [tuple(b) for b in layout.in_bases(REGISTER)] if layout.has_in_dim(REGISTER) else []
    for d, (size, full) in enumerate(zip(sizes, shape)):
        step = size
        while step < full:
            regs.append(tuple(step if j == d else 0 for j in range(len(names))))
            step *= 2
    bases = [(REGISTER, regs)] + [(n, layout.in_bases(n)) for n in layout.in_dims if n != REGISTER]
    return LinearLayout(bases, list(zip(names, shape)))


def extract_slice_layout(layout: LinearLayout, offsets: tuple[int, ...],
                         shape: tuple[int, ...]) -> tuple[LinearLayout, list[int]]:
    """The layout of the ``shape`` sub-tile at ``offsets`` of a tile in ``layout`` that
    holds it in the same lanes and waves, and for each of its registers the source
    register holding the element. Raises ``LayoutError`` (why) unless the sub-tile is
    aligned to the layout: every lane and wave basis stays inside one sub-tile, every
    register basis either stays inside or steps whole sub-tiles, and the offsets are
    multiples of the shape."""
    names = layout.out_dims
    for d, (o, s) in enumerate(zip(offsets, shape)):
        if o % s:
            raise LayoutError(f"offset {o} of dim {d} is not a multiple of the slice size {s}")

    def inside(b: tuple[int, ...]) -> bool:
        return all(v < s for v, s in zip(b, shape))

    def whole(b: tuple[int, ...]) -> bool:
        return all(v % s == 0 for v, s in zip(b, shape))

    for dim in (LANE, WARP, "block"):
        if layout.has_in_dim(dim):
            for b in layout.in_bases(dim):
                if not inside(b):
                    raise LayoutError(f"{dim} bit steps {list(b)}: the slice's elements are spread over other "
                                      f"{dim}s than the rest of the tile (it is not aligned to the layout's "
                                      f"{'wave' if dim == WARP else dim} tile)", layout)
    low: list[int] = []
    sel = 0
    target = tuple(offsets)
    high: list[tuple[int, tuple[int, ...]]] = []
    for i, b in enumerate(layout.in_bases(REGISTER)):
        if inside(b):
            low.append(i)
        elif whole(b):
            high.append((i, b))
        else:
            raise LayoutError(f"register bit {i} steps {list(b)}, across the slice's edge", layout)
    # the registers whose high bases XOR to the offsets hold the slice (GF(2) elimination)
    widths = [layout.out_dim_size(n).bit_length() for n in names]

    def flat(v: tuple[int, ...]) -> int:
        x, shift = 0, 0
        for c, w in zip(v, widths):
            x |= c << shift
            shift += w
        return x

    pivots: dict[int, tuple[int, int]] = {}  # leading bit -> (vector, register bits used)
    for i, b in high:
        x, used = flat(b), 1 << i
        while x:
            top = x.bit_length() - 1
            if top not in pivots:
                pivots[top] = (x, used)
                break
            px, pu = pivots[top]
            x, used = x ^ px, used ^ pu
    x = flat(target)
    while x:
        top = x.bit_length() - 1
        if top not in pivots:
            raise LayoutError(f"no register of this thread holds the slice at {list(offsets)}", layout)
        px, pu = pivots[top]
        x, sel = x ^ px, sel ^ pu
    bases = {d: [layout.in_bases(d)[i] for i in low] if d == REGISTER else list(layout.in_bases(d))
             for d in layout.in_dims}
    out = LinearLayout(bases, list(zip(names, shape)))
    regs = []
    for r in range(1 << len(low)):
        src = sel
        for j, i in enumerate(low):
            if (r >> j) & 1:
                src |= 1 << i
        regs.append(src)
    return out, regs
