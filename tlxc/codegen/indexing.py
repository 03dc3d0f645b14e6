"""What both code generators need for ``gather`` and ``histogram``
(``lower_indexing`` in each): the row-major strides of the shared-memory copy of a tile,
and the refusal of layouts that split a tile over the CTAs of a cluster.

Both ops go through the CTA's own scratch area: a ``gather`` stores its source there in
plain row-major order (element ``c`` at ``sum(c[d] * strides[d])``), and every thread then
reads the elements its index names; a ``histogram`` counts into ``num_bins`` 32-bit
words there with shared-memory atomics. A tile whose layout has a non-zero ``block``
basis lives partly in other CTAs, which a CTA's scratch area cannot see.
"""

from __future__ import annotations

from ..errors import CompilationError
from ..ir.core import Operation
from ..ir.layout.common import BLOCK
from ..ir.layout.linear import LinearLayout


def row_major_strides(shape: tuple[int, ...]) -> list[int]:
    """Element strides of a row-major tile: ``(4, 8)`` -> ``[8, 1]``."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def check_one_cta(op: Operation, layouts: list[LinearLayout], arch: str) -> None:
    """Refuse ``op`` when one of its tiles is split over several CTAs."""
    for layout in layouts:
        if layout.has_in_dim(BLOCK) and any(any(b) for b in layout.in_bases(BLOCK)):
            raise CompilationError(
                "TLXC-CODEGEN-001", f"'{op.NAME}' of a tile split over the CTAs of a cluster cannot be compiled for "
                                    f"{arch} yet (it goes through one CTA's shared memory)", op.loc)
