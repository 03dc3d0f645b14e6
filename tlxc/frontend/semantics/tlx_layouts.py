"""TLX's shared-memory layout classes (``tlx.nv_mma_shared_layout_encoding``,
``tlx.swizzled_shared_layout_encoding``) as ``LinearLayout``s, for
``local_alloc(layout=...)``.

A pinned layout changes only where the GPU keeps each element's bytes; what
``local_load`` / ``local_store`` read and write is the same whatever the layout (the
interpreter keeps buffers row-major and ignores layouts). The buffer-layout pass keeps a
pin as it is; consumers that need another layout (TMA, wgmma) refuse a pin that does
not fit at the user's line.

Refused (``TLXC-TLX-001``): multi-CTA splits (``numCTAs``, ``numCTASplit`` other than
1: tlxc lays out one CTA's buffers), ``fp4Padded`` (no fp4 buffers yet), layouts whose
rank, order or element type differ from the buffer's, and swizzles that do not fit the
shape.
"""

from __future__ import annotations

from typing import Any

from ...ir.layout.common import swizzled_shared
from ...ir.layout.linear import LayoutError, LinearLayout
from ...ir.layout.nvidia import choose_nvmma_swizzle, nvmma_shared
from ...ir.types import DType
from ...tlx import nv_mma_shared_layout_encoding, swizzled_shared_layout_encoding
from ..values import describe, unwrap
from .base import dtype_arg, fail

BUF = "TLXC-TLX-001"


def _ints(v: Any, what: str) -> tuple[int, ...]:
    v = unwrap(v)
    if isinstance(v, int):
        return (v,)
    if not isinstance(v, (list, tuple)) or not all(isinstance(unwrap(x), int) for x in v):
        fail(BUF, f"{what} must be a list of integers, got {describe(v)}")
    return tuple(int(unwrap(x)) for x in v)


def _one_cta(*fields: Any) -> None:
    for f in fields:
        if f is not None and any(x != 1 for x in _ints(f, "a CTA field")):
            fail(BUF, "layouts split across several CTAs are not supported by tlxc; it lays out one CTA's buffers",
                 "leave the numCTAs / numCTASplit fields at 1")


def shared_layout(enc: Any, dims: tuple[int, ...], element: DType) -> LinearLayout:
    """The LinearLayout a ``local_alloc(dims, element, layout=enc)`` pins."""
    rank = len(dims)
    try:
        if isinstance(enc, nv_mma_shared_layout_encoding):
            return _nvmma(enc, dims, element)
        if isinstance(enc, swizzled_shared_layout_encoding):
            _one_cta(enc.numCTAs, enc.numCTAsPerCGA, enc.numCTASplit)
            order = _ints(enc.order, "order")
            if sorted(order) != list(range(rank)):
                fail(BUF, f"order {list(order)} is not a permutation of the buffer's {rank} dimensions")
            return swizzled_shared(dims, int(enc.vectorSize), int(enc.perPhase), int(enc.maxPhase), order)
    except LayoutError as e:
        fail(BUF, f"this layout does not fit a {list(dims)} buffer of {element!r}: {str(e).splitlines()[0]}")
    fail(BUF, f"local_alloc(layout=...) takes tlx.nv_mma_shared_layout_encoding or "
              f"tlx.swizzled_shared_layout_encoding, got {describe(enc)}")
    raise AssertionError


def _nvmma(enc: nv_mma_shared_layout_encoding, dims: tuple[int, ...], element: DType) -> LinearLayout:
    rank = len(dims)
    _one_cta(enc.numCTAsPerCGA, enc.numCTASplit)
    if enc.fp4Padded:
        fail(BUF, "fp4Padded shared layouts are not supported by tlxc yet")
    if rank < 2:
        fail(BUF, "nv_mma_shared_layout_encoding needs a buffer of rank >= 2")
    order = _ints(enc.order, "order")
    row_major = tuple(reversed(range(rank)))
    transposed = rank == 2 and order == (0, 1)
    if order != row_major and not transposed:
        fail(BUF, f"nv_mma_shared_layout_encoding order {list(order)} is not supported: use {list(row_major)} "
                  "(row-major) or, for rank 2, [0, 1] (column-major)")
    elem = dtype_arg(enc.elemType)
    if not isinstance(elem, DType) or elem.bits != element.bits:
        fail(BUF, f"the layout is for {describe(enc.elemType)} elements but the buffer holds {element!r}")
    shape = _ints(enc.shape, "shape")
    if len(shape) != rank:
        fail(BUF, f"the layout's shape {list(shape)} and the buffer's {list(dims)} differ in rank")
    swz = choose_nvmma_swizzle(shape, element.bits, transposed) if enc.swizzled else 0
    return nvmma_shared(dims, element.bits, swz, transposed)
