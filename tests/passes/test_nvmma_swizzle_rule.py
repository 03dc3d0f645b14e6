"""One swizzle rule: every place that picks the NVMMA swizzle of a buffer -- buffer layout
assignment (``buffer_layouts.default_layout``), the TLX layout encoding
(``nv_mma_shared_layout_encoding``), the layout library's ``nvmma_default`` -- and the
swizzle a TMA descriptor is then encoded with (read back from the buffer's layout by
``tma_swizzle_of`` / ``nvmma_swizzle_of``) agree, over a grid of shapes and dtypes.

Regression: the layout library used to count only the dim next to the contiguous one as
rows, so a ``(2, 4, 64)`` fp16 buffer got no swizzle there and 128 bytes from the pass.
Triton's ``NVMMASharedEncodingAttr`` builder multiplies all the outer dims: 8 rows of
128 bytes, so 128.
"""

from __future__ import annotations

import itertools

import pytest

import tlxc.language as tl
from tlxc.frontend.semantics.tlx_layouts import shared_layout
from tlxc.ir.layout import CTALayout, choose_nvmma_swizzle, nvmma_default, nvmma_shared, tma_swizzle_of
from tlxc.ir.passes.buffer_layouts import default_layout, nvmma_swizzle_of
from tlxc.ir.types import MemDescType, float16, float32, int8
from tlxc.tlx import nv_mma_shared_layout_encoding

DTYPES = {8: (int8, tl.int8), 16: (float16, tl.float16), 32: (float32, tl.float32)}
SIZES = (1, 2, 4, 8, 16, 64, 128)
GRID = [s for s in itertools.product(SIZES, repeat=2) if s[1] > 1] + \
       [s for s in itertools.product((1, 2, 4, 8), (1, 2, 4, 8), (8, 16, 32, 64, 128))]


@pytest.mark.parametrize("shape,bits,want", [
    ((2, 4, 64), 16, 128),   # the regression: 2 x 4 = 8 rows of 128 bytes
    ((4, 64), 16, 0),        # 4 rows: less than a swizzle atom
    ((2, 2, 64), 16, 0),
    ((8, 1, 64), 16, 128),
    ((1, 8, 32), 16, 64),
    ((2, 4, 16), 16, 32),
    ((2, 4, 8), 16, 0),      # 16-byte rows
    ((4, 2, 128), 8, 128),
    ((64,), 16, 0),          # 1-D buffers are plain
])
def test_hand_table(shape: tuple[int, ...], bits: int, want: int) -> None:
    assert choose_nvmma_swizzle(shape, bits) == want


def test_transposed_and_per_cta() -> None:
    # column-major (64, 16) fp16: dim 0 is contiguous, 128 bytes, 16 rows
    assert choose_nvmma_swizzle((64, 16), 16, transposed=True) == 128
    assert choose_nvmma_swizzle((64, 4), 16, transposed=True) == 0
    # Triton decides on the piece one CTA holds
    split = CTALayout((2, 1), (2, 1), (1, 0))
    assert choose_nvmma_swizzle((16, 64), 16) == 128
    assert choose_nvmma_swizzle((8, 64), 16, cta=split) == 0
    assert choose_nvmma_swizzle((128, 128), 16, cta=CTALayout((1, 2), (1, 2), (1, 0))) == 128


@pytest.mark.parametrize("bits", sorted(DTYPES))
def test_every_path_agrees(bits: int) -> None:
    ir_type, tl_type = DTYPES[bits]
    swizzled = 0
    for shape in GRID:
        want = choose_nvmma_swizzle(shape, bits)
        swizzled += want != 0
        layout = default_layout(shape, bits)
        assert layout == nvmma_shared(shape, bits, want), shape
        assert nvmma_default(shape, bits) == layout, shape
        enc = nv_mma_shared_layout_encoding.make_default(list(shape), tl_type)
        assert shared_layout(enc, shape, ir_type) == layout, shape
        assert nvmma_swizzle_of(MemDescType(shape, ir_type, 1, "smem", layout)) == want, shape
        # what a TMA descriptor for the buffer is encoded with (None: no TMA box fits)
        row_bytes = shape[-1] * bits // 8
        assert tma_swizzle_of(layout, bits) == (want if want or row_bytes % 16 == 0 else None), shape
        if len(shape) == 2:
            t_enc = nv_mma_shared_layout_encoding(list(shape), [0, 1], tl_type, [1, 1], [1, 1], [0, 1])
            t_want = choose_nvmma_swizzle(shape, bits, transposed=True)
            assert shared_layout(t_enc, shape, ir_type) == nvmma_shared(shape, bits, t_want, True), shape
            assert nvmma_default(shape, bits, transposed=True) == nvmma_shared(shape, bits, t_want, True), shape
    assert swizzled > 20  # the grid is not all plain layouts
