"""``tile_over``: a sub-tile's layout repeated over the whole tile by registers, so that
every aligned sub-tile is a choice of registers of the same threads
(``extract_slice_layout``), with the right elements in each register."""

from __future__ import annotations

import itertools

import pytest

from tlxc.ir.layout.linear import LinearLayout
from tlxc.ir.layout.slices import extract_slice_layout, tile_over

# a 32x8 sub-tile over 4 warps: warps along dim 0, and warps along dim 1
ROWS = LinearLayout({"register": [(0, 1)], "lane": [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)],
                     "warp": [(8, 0), (16, 0)]}, [("dim0", 32), ("dim1", 8)])
COLS = LinearLayout({"register": [(1, 0), (2, 0)], "lane": [(4, 0), (8, 0), (16, 0), (0, 1), (0, 2)],
                     "warp": [(0, 4), (0, 8)]}, [("dim0", 32), ("dim1", 16)])


@pytest.mark.parametrize("sub,full", [(ROWS, (128, 32)), (ROWS, (32, 8)), (COLS, (64, 64)), (COLS, (32, 128))])
def test_every_aligned_slice_is_registers_of_the_same_threads(sub: LinearLayout, full: tuple[int, int]) -> None:
    tiled = tile_over(sub, full)
    shape = sub.out_shape
    assert tiled.out_shape == full
    for offsets in itertools.product(*(range(0, f, s) for f, s in zip(full, shape))):
        out, regs = extract_slice_layout(tiled, offsets, shape)
        assert out == sub
        for r, lane, warp in itertools.product(range(sub.in_dim_size("register")), range(32), range(4)):
            want = sub.apply(register=r, lane=lane, warp=warp)
            got = tiled.apply(register=regs[r], lane=lane, warp=warp)
            assert [got[d] - o for d, o in zip(("dim0", "dim1"), offsets)] == [want["dim0"], want["dim1"]]
