"""The few hardware facts that layout planning needs, as plain data.

Shared code never asks "which GPU is this?"; it asks this object. A code
generator builds one from its ISA tables (``codegen/<target>/isa.py``) and passes it to
the planning functions of ``conversion.py`` and ``vectorize.py``. Tests build their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from .linear import LayoutError, is_pow2


@dataclass(frozen=True)
class LayoutTarget:
    """Memory-system facts for layout planning.

    ``warp_size``: lanes per warp (wave). ``num_banks`` x ``bank_bytes``: the shared
    memory (LDS) banks; one *wavefront* serves at most one word per bank.
    ``max_vector_bytes``: the widest per-thread load/store, global or shared.
    """

    warp_size: int
    num_banks: int
    bank_bytes: int
    max_vector_bytes: int

    def __post_init__(self) -> None:
        for name in ("warp_size", "num_banks", "bank_bytes", "max_vector_bytes"):
            if not is_pow2(getattr(self, name)):
                raise LayoutError(f"LayoutTarget.{name}={getattr(self, name)} must be a power of two")

    @property
    def line_bytes(self) -> int:
        """Bytes one conflict-free wavefront can serve: every bank once."""
        return self.num_banks * self.bank_bytes
