"""NVIDIA tensor-core and TMA layouts as ``LinearLayout`` constructors.

* ``mma_v2_accumulator`` -- the accumulator fragment of ``mma.sync.m16n8kK``: PTX ISA,
  "Warp-level matrix fragment mma.m16n8k16", figure "MMA .m16n8k16 fragment layout for
  accumulator matrix C/D". With ``groupID = laneid >> 2`` and
  ``threadID_in_group = laneid % 4``, register ``c_i`` holds
  ``row = groupID + 8 * (i >= 2)``, ``col = 2 * threadID_in_group + (i & 1)``.
* ``dot_operand`` -- the A and B fragments of the same instruction; ``k_width`` is the
  number of consecutive K elements a thread keeps together (one 32-bit register: 2 for
  16-bit types, 4 for 8-bit types, as in the m16n8k16 / m16n8k32 figures).
* ``nvmma_shared`` -- the shared-memory layouts that TMA writes and wgmma / tcgen05 read:
  PTX ISA, "Tensor swizzling modes". Byte address bits ``[4, 4+m)`` (the 16-byte chunk
  within a row of the swizzle span) are XORed with bits ``[7, 7+m)``, ``m = log2(span/16)``
  for a span of 32, 64 or 128 bytes.

All three are built the way the hardware documents them -- an instruction tile, then
warps, then repetition over the tile -- with the products of ``LinearLayout``; nothing
here is a lookup table.

Extension points (later issues)
-------------------------------
* **wgmma accumulators** (m64nNk16): each of the 4 warps of a warpgroup owns 16 rows of
  the m16n8 pattern, repeated ``N/8`` times along N in registers. Build it with
  ``_mma_tile`` over a ``16 x N`` tile, times ``identity_1d(4, "warp", "dim0")`` for the
  warpgroup's warps, then the warpgroups of ``warps_per_cta`` -- as ``MmaV2`` does for
  single warps.
* **tcgen05 tensor memory**: a TMEM buffer is a layout with input dims ``("row", "col")``
  (lanes x 32-bit columns of TMEM) onto the tile; the ``tcgen05.ld/st`` shapes
  (``32x32b``, ``16x64b``, ``16x256b``...) are distributed layouts of the
  ``register/lane/warp`` kind whose warps are fixed to TMEM lane quarters. Both belong in
  this module; conversions to them then go through ``conversion.py`` unchanged.
* **AMD MFMA / WMMA**: a sibling ``amd.py`` with 64-lane (6 lane bits) wave patterns
  (``mfma_accumulator``, ``mfma_operand``, ``wmma_*`` with ``tiles_per_warp``) built from
  the same products; nothing in ``linear.py`` or ``conversion.py`` assumes 32 lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .common import (
    BLOCK,
    LANE,
    OFFSET,
    REGISTER,
    WARP,
    CTALayout,
    dim_names,
    fit_to_shape,
    shape_per_cta,
    with_standard_ins,
)
from .linear import LayoutError, LinearLayout, log2

SWIZZLE_SPANS = (0, 32, 64, 128)


def _mma_tile(rank: int, tile: Sequence[int], k_width: int, inner: int, outer: int,
              rep_order: Sequence[int]) -> LinearLayout:
    """One warp's fragment of an m16n8-family instruction, over a ``tile`` of
    ``outer x inner`` (rows x fast dim): ``k_width`` registers and 4 lanes along
    ``inner``, 8 lanes along ``outer``, then registers repeating along ``outer`` and
    ``inner``. The output dims are listed in ``rep_order`` so that, when the tile is
    later grown to the whole tensor, extra registers walk ``rep_order[0]`` first.
    """
    names = dim_names(rank)
    m, n = tile[outer], tile[inner]
    if m % 8 or n % (4 * k_width):
        raise LayoutError(f"mma tile {tuple(tile)} does not fit 8 rows x {4 * k_width} columns of lanes")
    out = LinearLayout({REGISTER: []}, [(names[d], 1) for d in rep_order])
    for size, in_dim, d in ((k_width, REGISTER, inner), (4, LANE, inner), (8, LANE, outer),
                            (m // 8, REGISTER, outer), (n // (4 * k_width), REGISTER, inner)):
        out = out * LinearLayout.identity_1d(size, in_dim, names[d])
    return out


@dataclass(frozen=True)
class MmaV2:
    """Parameters of an ``mma.sync`` accumulator layout (Triton's NvidiaMma version 2).

    ``warps_per_cta`` tiles the output with instruction tiles; ``warp_order`` lists dims
    fastest first (default: last dim fastest, as Triton does for this version).
    """

    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, int] = (16, 8)
    warp_order: tuple[int, ...] | None = None
    cta: CTALayout | None = None

    def __post_init__(self) -> None:
        # Lists are accepted for convenience; tuples keep the parameters hashable.
        object.__setattr__(self, "warps_per_cta", tuple(self.warps_per_cta))
        object.__setattr__(self, "instr_shape", tuple(self.instr_shape))
        if self.warp_order is not None:
            object.__setattr__(self, "warp_order", tuple(self.warp_order))

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    def _warp_order(self) -> tuple[int, ...]:
        return self.warp_order or tuple(reversed(range(self.rank)))

    def accumulator(self, shape: Sequence[int]) -> LinearLayout:
        """The accumulator (C/D) layout of a ``shape`` tile: instruction tiles over warps,
        repeated in registers along N first, then M."""
        return _accumulator(self, tuple(shape))

    def operand(self, shape: Sequence[int], op_idx: int, k_width: int) -> LinearLayout:
        """Operand A (``op_idx`` 0, ``[M, K]``) or B (``op_idx`` 1, ``[K, N]``)."""
        return _operand(self, tuple(shape), op_idx, k_width)

    def _accumulator(self, shape: tuple[int, ...]) -> LinearLayout:
        rank = self.rank
        _check_rank(shape, rank)
        tile = [1] * (rank - 2) + list(self.instr_shape)
        rep_order = tuple(reversed(range(rank)))
        pattern = _mma_tile(rank, tile, 2, rank - 1, rank - 2, rep_order)
        pattern = pattern * _warps(self.warps_per_cta, self._warp_order(), broadcast_dim=None, outs=pattern.out_dims)
        return with_standard_ins(fit_to_shape(pattern, shape, self.cta))

    def _operand(self, shape: tuple[int, ...], op_idx: int, k_width: int) -> LinearLayout:
        rank = self.rank
        _check_rank(shape, rank)
        log2(k_width)
        k_dim = rank - 1 if op_idx == 0 else rank - 2
        if op_idx == 0:
            tile = [1] * (rank - 2) + [16, 8 * k_width]
            inner, outer = rank - 1, rank - 2
        elif op_idx == 1:
            tile = [1] * (rank - 2) + [8 * k_width, 8]
            inner, outer = rank - 2, rank - 1
        else:
            raise LayoutError(f"dot operand index must be 0 or 1, not {op_idx}")
        # Repetitions walk K first (consecutive registers feed consecutive k-steps), then
        # the operand's other matrix dim, then batch dims.
        non_k = rank - 2 if k_dim == rank - 1 else rank - 1
        rep_order = (k_dim, non_k) + tuple(reversed(range(rank - 2)))
        pattern = _mma_tile(rank, tile, k_width, inner, outer, rep_order)
        # Warps that split the accumulator along the other operand's dim hold the same
        # operand data: along K they broadcast.
        pattern = pattern * _warps(self.warps_per_cta, self._warp_order(), broadcast_dim=k_dim,
                                   outs=pattern.out_dims)
        return with_standard_ins(fit_to_shape(pattern, shape, self.cta))


@lru_cache(maxsize=1024)
def _accumulator(mma: MmaV2, shape: tuple[int, ...]) -> LinearLayout:
    return mma._accumulator(shape)


@lru_cache(maxsize=1024)
def _operand(mma: MmaV2, shape: tuple[int, ...], op_idx: int, k_width: int) -> LinearLayout:
    return mma._operand(shape, op_idx, k_width)


def _warps(warps: Sequence[int], order: Sequence[int], broadcast_dim: int | None,
           outs: Sequence[str]) -> LinearLayout:
    names = dim_names(len(warps))
    out = LinearLayout({WARP: []}, [(n, 1) for n in outs])
    for d in order:
        if d == broadcast_dim:
            out = out * LinearLayout.zeros_1d(warps[d], WARP, names[d])
        else:
            out = out * LinearLayout.identity_1d(warps[d], WARP, names[d])
    return out


def _check_rank(shape: Sequence[int], rank: int) -> None:
    if len(shape) != rank or rank < 2:
        raise LayoutError(f"tile shape {tuple(shape)} does not match warps_per_cta of rank {rank} (rank >= 2)")


def mma_v2_accumulator(shape: Sequence[int], warps_per_cta: Sequence[int], instr_shape: Sequence[int] = (16, 8),
                       warp_order: Sequence[int] | None = None, cta: CTALayout | None = None) -> LinearLayout:
    """The ``mma.sync`` m16n8 accumulator layout of a whole tile (see the module doc)."""
    return MmaV2(tuple(warps_per_cta), tuple(instr_shape), tuple(warp_order) if warp_order else None,
                 cta).accumulator(shape)


def dot_operand(shape: Sequence[int], parent: MmaV2, op_idx: int, k_width: int) -> LinearLayout:
    """The A (``op_idx=0``) or B (``op_idx=1``) register fragments feeding ``parent``.

    ``k_width`` = 32 // element bits for plain ``mma.sync`` (2 for fp16/bf16, 4 for
    8-bit types); larger values keep more K elements per thread (Triton's kWidth).
    """
    return parent.operand(shape, op_idx, k_width)


def nvmma_shared(shape: Sequence[int], elem_bits: int, swizzle_bytes: int, transposed: bool = False,
                 cta: CTALayout | None = None) -> LinearLayout:
    """The TMA / wgmma shared-memory layout (Triton's ``NVMMASharedEncodingAttr``).

    The contiguous dim is the last one (the one before it when ``transposed``); the other
    dims, collapsed row-major, are *rows*. The buffer is a sequence of column blocks, each
    ``swizzle_bytes`` wide and holding every row; within a block, row ``r`` keeps its
    16-byte chunk ``c`` at chunk ``c ^ ((r // per_phase) % max_phase)`` with
    ``per_phase = 128 // swizzle_bytes`` and ``max_phase = swizzle_bytes // 16`` -- the
    byte-address rule of the module docstring, written per row. ``swizzle_bytes=0`` is
    plain row-major. Swizzled tiles need at least one full span per row and 8 rows,
    the unit that TMA and wgmma work in.

    Unlike Triton, a transposed tile of rank 3 keeps its batch dim outermost.
    """
    return _nvmma_shared(tuple(shape), elem_bits, swizzle_bytes, transposed, cta)


@lru_cache(maxsize=1024)
def _nvmma_shared(shape: tuple[int, ...], elem_bits: int, swizzle_bytes: int, transposed: bool,
                  cta: CTALayout | None) -> LinearLayout:
    rank = len(shape)
    if rank < 2:
        raise LayoutError("nvmma_shared needs a tile of rank >= 2")
    if swizzle_bytes not in SWIZZLE_SPANS:
        raise LayoutError(f"swizzle_bytes must be one of {SWIZZLE_SPANS}, not {swizzle_bytes}")
    if elem_bits not in (4, 8, 16, 32, 64):
        raise LayoutError(f"unsupported element width {elem_bits} bits")
    for s in shape:
        log2(s)
    names = dim_names(rank)
    full_shape, shape = tuple(shape), shape_per_cta(shape, cta)
    contig = rank - 2 if transposed else rank - 1
    other = rank - 1 if transposed else rank - 2
    row_dims = [other] + list(reversed(range(rank - 2)))  # fastest first
    ncols = shape[contig]
    nrows = 1
    for d in row_dims:
        nrows *= shape[d]

    def row_coords(r: int) -> list[int]:
        coords = [0] * rank
        for d in row_dims:
            coords[d] = r % shape[d]
            r //= shape[d]
        return coords

    span = ncols if swizzle_bytes == 0 else swizzle_bytes * 8 // elem_bits
    if swizzle_bytes:
        if ncols < span:
            raise LayoutError(f"nvmma_shared: the contiguous dim has {ncols} elements, fewer than one "
                              f"{swizzle_bytes}-byte swizzle span ({span}); use a smaller swizzle")
        if nrows < 8:
            raise LayoutError(f"nvmma_shared: {nrows} rows, fewer than the 8 of a swizzle atom")
    vec = 128 // elem_bits  # elements per 16-byte chunk
    per_phase = 128 // swizzle_bytes if swizzle_bytes else 1
    max_phase = swizzle_bytes // 16 if swizzle_bytes else 1
    bases: list[tuple[int, ...]] = []
    for i in range(log2(span)):
        c = [0] * rank
        c[contig] = 1 << i
        bases.append(tuple(c))
    for i in range(log2(nrows)):
        r = 1 << i
        c = row_coords(r)
        c[contig] = (vec * ((r // per_phase) % max_phase)) % span
        bases.append(tuple(c))
    for i in range(log2(ncols // span)):
        c = [0] * rank
        c[contig] = span << i
        bases.append(tuple(c))
    pattern = LinearLayout({OFFSET: bases}, list(zip(names, shape)))
    return with_standard_ins(fit_to_shape(pattern, full_shape, cta), (OFFSET, BLOCK))
