"""TLX's AMD register-layout classes and the builtins of explicit MFMA scheduling
(``tlx.amd_*``), register layouts (``zeros(layout=)``, ``require_layout``,
``extract_slice``, ``rematerialized_range``) and ``dot_scaled``.

The classes are plain frozen values that kernels build at compile time (every argument a
constant) and pass on, usually as ``mma: tl.constexpr = tlx.amd_mfma_layout(...)``. They
check their own fields when built, so a wrong field is reported at the constructor's
line. The frontend turns them into the plain dicts that the IR keeps as op attributes
(``layout_attr``), which the AMDGPU code generator reads back into LinearLayouts; the
builtins are names only, their rules live in ``tlxc.frontend.semantics.tlx_amd``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..language.core import Builtin, constexpr
from . import layout_encoding

# The M x N shapes of one MFMA instruction's output fragment (AMD CDNA3/CDNA4 ISA guides,
# "Matrix Fused Multiply Add" instruction tables); K varies with the operand type.
MFMA_MN = ((32, 32), (16, 16), (64, 4), (4, 64))


def _int(v: Any, what: str) -> int:
    v = v.value if isinstance(v, constexpr) else v
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{what} must be an integer, got {v!r}")
    return v


def _ints(v: Any, what: str) -> tuple[int, ...]:
    v = v.value if isinstance(v, constexpr) else v
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{what} must be a list of integers, got {v!r}")
    return tuple(_int(x, what) for x in v)


def _bases(v: Any, what: str) -> tuple[tuple[int, ...], ...]:
    v = v.value if isinstance(v, constexpr) else v
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{what} must be a list of [dim0, dim1] bases, got {v!r}")
    return tuple(_ints(b, what) for b in v)


def _bool(v: Any, what: str) -> bool:
    v = v.value if isinstance(v, constexpr) else v
    if not isinstance(v, (bool, int)):
        raise ValueError(f"{what} must be a bool, got {v!r}")
    return bool(v)


@dataclass(frozen=True)
class amd_mfma_layout(layout_encoding):  # noqa: N801  (TLX's spelling)
    """The register layout of MFMA results: ``version`` 3 for CDNA3, 4 for CDNA4;
    ``instr_shape`` [M, N, K] of one instruction; ``transposed`` gives each lane a row
    (consecutive N values) instead of a column; ``warps_per_cta`` how the waves tile
    M and N; ``tiles_per_warp`` how many instruction tiles one wave holds side by side
    before the next wave's (default 1 per dim); ``element_bitwidth`` 32 (f32/i32) or 64.

    ``cga_layout`` (multi-CTA splits) is accepted for TLX's signature and must be empty:
    tlxc lays out one CTA."""

    version: Any
    instr_shape: Any
    transposed: Any
    warps_per_cta: Any
    element_bitwidth: Any = 32
    tiles_per_warp: Any = None
    cga_layout: Any = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "version", _int(self.version, "version"))
        set_(self, "instr_shape", _ints(self.instr_shape, "instr_shape"))
        set_(self, "transposed", _bool(self.transposed, "transposed"))
        set_(self, "warps_per_cta", _ints(self.warps_per_cta, "warps_per_cta"))
        set_(self, "element_bitwidth", _int(self.element_bitwidth, "element_bitwidth"))
        rank = len(self.warps_per_cta)
        tiles = self.tiles_per_warp.value if isinstance(self.tiles_per_warp, constexpr) else self.tiles_per_warp
        set_(self, "tiles_per_warp", None if tiles is None else _ints(tiles, "tiles_per_warp"))
        cga = self.cga_layout.value if isinstance(self.cga_layout, constexpr) else self.cga_layout
        set_(self, "cga_layout", None if not cga else _bases(cga, "cga_layout"))
        if not 1 <= self.version <= 4:
            raise ValueError(f"amd_mfma_layout version must be 1..4 (4 is CDNA4's MFMA), got {self.version}")
        if len(self.instr_shape) != 3 or tuple(self.instr_shape[:2]) not in MFMA_MN:
            raise ValueError(f"amd_mfma_layout instr_shape must be [M, N, K] with [M, N] one of "
                             f"{[list(s) for s in MFMA_MN]}, got {list(self.instr_shape)}")
        if self.element_bitwidth not in (32, 64):
            raise ValueError(f"amd_mfma_layout element_bitwidth must be 32 or 64, got {self.element_bitwidth}")
        if rank not in (2, 3) or any(w < 1 or w & (w - 1) for w in self.warps_per_cta):
            raise ValueError(f"amd_mfma_layout warps_per_cta must be 2 or 3 powers of two, got "
                             f"{list(self.warps_per_cta)}")
        if self.tiles_per_warp is not None and (len(self.tiles_per_warp) != rank
                                                or any(t < 1 for t in self.tiles_per_warp)):
            raise ValueError(f"amd_mfma_layout tiles_per_warp needs {rank} positive entries (one per "
                             f"warps_per_cta dim), got {list(self.tiles_per_warp)}")
        if self.cga_layout is not None:
            raise ValueError("amd_mfma_layout cga_layout (a layout split over several CTAs) is not supported "
                             "by tlxc; it lays out one CTA")


@dataclass(frozen=True)
class dot_operand_layout(layout_encoding):  # noqa: N801  (TLX's spelling)
    """The register layout of operand ``operand_index`` (0: A, 1: B) of an MFMA whose
    result has layout ``parent``; each lane holds ``k_width`` consecutive K values."""

    operand_index: Any
    parent: Any
    k_width: Any = 8

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "operand_index", _int(self.operand_index, "operand_index"))
        parent = self.parent.value if isinstance(self.parent, constexpr) else self.parent
        set_(self, "parent", parent)
        set_(self, "k_width", _int(self.k_width, "k_width"))
        if self.operand_index not in (0, 1):
            raise ValueError(f"dot_operand_layout operand_index must be 0 (A) or 1 (B), got {self.operand_index}")
        if not isinstance(parent, (amd_mfma_layout, amd_wmma_layout)):
            raise ValueError(f"dot_operand_layout parent must be a tlx.amd_mfma_layout, got {parent!r}")
        if self.k_width < 1 or self.k_width & (self.k_width - 1):
            raise ValueError(f"dot_operand_layout k_width must be a power of two, got {self.k_width}")


@dataclass(frozen=True)
class amd_wmma_layout(layout_encoding):  # noqa: N801
    """An explicit WMMA register layout (the parameters of TLX's
    ``require_amd_wmma_layout``): ``reg_bases`` / ``warp_bases`` are the [dim0, dim1]
    images of each register / warp bit, in units of ``instr_shape``'s [M, N] tile."""

    version: Any = 3
    transposed: Any = True
    warp_bases: Any = ((0, 2), (2, 0))
    reg_bases: Any = ((0, 1), (1, 0))
    instr_shape: Any = (16, 16, 128)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "version", _int(self.version, "version"))
        set_(self, "transposed", _bool(self.transposed, "transposed"))
        set_(self, "warp_bases", _bases(self.warp_bases, "warp_bases"))
        set_(self, "reg_bases", _bases(self.reg_bases, "reg_bases"))
        set_(self, "instr_shape", _ints(self.instr_shape, "instr_shape"))
        if self.version not in (1, 2, 3):
            raise ValueError(f"amd_wmma_layout version must be 1, 2 or 3, got {self.version}")
        if len(self.instr_shape) != 3 or tuple(self.instr_shape[:2]) != (16, 16):
            raise ValueError(f"amd_wmma_layout instr_shape must be [16, 16, K], got {list(self.instr_shape)}")
        for what, bases in (("warp_bases", self.warp_bases), ("reg_bases", self.reg_bases)):
            if any(len(b) != 2 or any(x < 0 or x & (x - 1) for x in b) or sum(1 for x in b if x) > 1
                   for b in bases):
                raise ValueError(f"amd_wmma_layout {what} must be [dim0, dim1] pairs with one power of two "
                                 f"(or all zero), got {[list(b) for b in bases]}")


def _b(name: str, doc: str) -> Builtin:
    return Builtin(name, doc, namespace="tlx")


zeros = _b("zeros", "A tile of zeros, optionally in an explicit register layout: zeros(shape, dtype, layout=None).")
require_layout = _b("require_layout", "The value, pinned (pin=True) or steered (pin=False) to a register layout.")
release_layout = _b("release_layout", "The value, free of any layout requirement.")
require_amd_wmma_layout = _b("require_amd_wmma_layout", "The value, pinned to an explicit WMMA register layout.")
extract_slice = _b("extract_slice", "The static sub-tile extract_slice(x, shape, offsets), taken from the "
                                    "registers that hold it (no data moves between threads).")
rematerialized_range = _b("rematerialized_range", "tl.arange(start, end) that is computed again at each use "
                                                  "instead of being shared (identity tells copies apart).")
amd_sched_barrier = _b("amd_sched_barrier", "Keep the instruction classes of `mask` (0: all) from being "
                                            "scheduled across this point; not a memory or execution barrier.")
amd_register_resident = _b("amd_register_resident", "The value, with all its registers in the AGPR or VGPR "
                                                     "file at this point, in tuples of registers_per_group.")
amd_register_class_anchor = _b("amd_register_class_anchor", "The value, each 32-bit register passed through a "
                                                            "tied AGPR or VGPR constraint at this point.")
amd_register_handoff = _b("amd_register_handoff", "TLX's other name of amd_register_class_anchor.")
amd_scheduled_mfma = _b("amd_scheduled_mfma", "acc + a @ b (initialize=True: a @ b) as native MFMA fragment "
                                              "chains issued K-major, N-major, M-minor.")
amd_mfma_commit = _b("amd_mfma_commit", "The MFMA results (and `preserve`), unchanged, after the point where "
                                        "the results are ready.")
dot_scaled = _b("dot_scaled", "tl.dot_scaled with an optional per-warp WMMA tiling hint (tiles_per_warp).")

__all__ = [
    "amd_mfma_layout", "dot_operand_layout", "amd_wmma_layout", "zeros", "require_layout", "release_layout",
    "require_amd_wmma_layout", "extract_slice", "rematerialized_range", "amd_sched_barrier",
    "amd_register_resident", "amd_register_class_anchor", "amd_register_handoff", "amd_scheduled_mfma",
    "amd_mfma_commit", "dot_scaled",
]
