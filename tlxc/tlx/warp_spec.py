"""Helpers of TLX's warp-specialization tutorials (``triton.language.extra.tlx.warp_spec``,
here ``tlxc.tlx.warp_spec`` and ``tlxc.language.extra.tlx.warp_spec``)."""

from __future__ import annotations

# absolute imports: the module also loads as tlxc.language.extra.tlx.warp_spec
import tlxc
from tlxc.language import core as tl


@tlxc.jit
def get_bufidx_phase(accum_cnt, NUM_BUFFERS: tl.constexpr):  # noqa: N803  (TLX's spelling)
    """The ring slot and mbarrier phase of the ``accum_cnt``-th use of an
    ``NUM_BUFFERS``-slot ring: ``(accum_cnt % NUM_BUFFERS, (accum_cnt // NUM_BUFFERS) & 1)``
    -- the phase flips each time the ring wraps around."""
    buf_idx = accum_cnt % NUM_BUFFERS
    phase = (accum_cnt // NUM_BUFFERS) & 1
    return buf_idx, phase
