"""What both code generators need to lower ``scan``: the shape of the layout the layout
pass gives it (``ir/passes/layouts.py:scan_layout``), read back from the layout."""

from __future__ import annotations

from ..ir.layout.linear import LinearLayout


def scan_geometry(layout: LinearLayout, ax: int) -> tuple[int, int] | None:
    """``(r, l)``: positions per thread and lanes along axis ``ax``, when ``layout`` is
    the scan layout's shape (registers the low position bits, the low lane bits the next,
    no warp along the axis); None otherwise."""
    pos = 1
    for b in layout.in_bases("register"):
        if b[ax]:
            if b[ax] != pos or any(x for i, x in enumerate(b) if i != ax):
                return None
            pos *= 2
    r = pos
    lanes = 1
    for k, b in enumerate(layout.in_bases("lane")):
        if b[ax]:
            if k != lanes.bit_length() - 1 or b[ax] != pos or any(x for i, x in enumerate(b) if i != ax):
                return None
            pos *= 2
            lanes *= 2
    if any(b[ax] for b in layout.in_bases("warp")):
        return None
    return r, lanes
