"""Analyses of the tile IR: they read a function and report facts about its values; they
never rewrite IR (that is what ``tlxc.ir.passes`` does).

``axis_info`` -- per-dimension contiguity, divisibility and constancy of integer and
pointer values and each op's rule for them; ``axis_analysis`` runs the rules over a
kernel (``analyze``), which the code generators use to vectorize global memory accesses.
"""

from .axis_analysis import AxisInfoMap, analyze  # noqa: F401
from .axis_info import MAX_DIVISIBILITY, AxisInfo  # noqa: F401
