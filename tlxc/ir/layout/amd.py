"""AMD matrix-core layouts: MFMA (wave64, CDNA3 = version 3, CDNA4 = version 4) and
WMMA (wave32, version 3 of the GFX12.5 chips) accumulators and dot operands, as
``LinearLayout`` constructors. LDS layouts for their operands live in ``amd_lds.py``.

The semantics are those of Triton's ``AMDMfmaEncodingAttr`` / ``AMDWmmaEncodingAttr``
and their dot-operand encodings (``LinearLayoutConversions.cpp``: the MFMA and WMMA
``toLinearLayout``, ``mfmaDotToLinearLayout``, ``wmmaDotOperandToLinearLayout``,
``chooseMfmaLikeStoreLayout``), so tiles built against Triton's register order line up
with ours. The per-instruction patterns agree with AMD's matrix instruction calculator
(``amd_matrix_instruction_calculator``, ``--register-layout``).

Worked example: the accumulator of a 32x32 MFMA (``v_mfma_f32_32x32x8_f16``)
--------------------------------------------------------------------------
Each of the 64 lanes holds 16 f32 of the 32x32 result C. Lane ``l``, register ``r``::

    row = (r % 4) + 4 * (l // 32) + 8 * (r // 4)      col = l % 32

so register bits 0, 1 step rows 1, 2; lane bits 0..4 step columns 1..16; lane bit 5
steps row 4; register bits 2, 3 step rows 8, 16 -- one basis per bit, read straight off
the formula. ``transposed=True`` swaps the roles of rows and columns inside the tile
(each lane then holds 4 consecutive elements of a *row*, which global stores like).
A 16x16 MFMA is the same with 16 lanes per row group: ``row = r + 4 * (l // 16)``,
``col = l % 16``, 4 registers. The WMMA v3 accumulator (16x16, wave32, 8 f32 per lane):
``row = r + 8 * (l // 16)``, ``col = l % 16``.

Register order over a whole tile (what lowering relies on)
----------------------------------------------------------
MFMA (as Triton): after the instruction's registers come ``tiles_per_warp[N]`` tiles
along N, the warps along N, then *every remaining N repetition*, then
``tiles_per_warp[M]`` tiles along M, the warps along M, then the remaining M
repetitions, then batch. Instruction tiles are therefore N-contiguous across the whole
tensor. WMMA (as Triton): ``tiles_per_warp[N]``, warps N, ``tiles_per_warp[M]``, warps M,
then repetitions N first, then M. Warps are always numbered N-fastest.

Dot operands (``op_idx`` 0 = A ``[M, K]``, 1 = B ``[K, N]``): lane ``l`` holds ``k_width``
K-consecutive elements of row ``l % nonK`` (A) / column (B), the lane groups
``l // nonK`` stepping K by ``k_width``; registers then repeat along K to cover the
tile, then ``tiles_per_warp`` along the non-K dim; warps that split the *other*
operand's dim hold copies. Because A and B use the same K order, any K permutation
inside an instruction cancels in the product, so ``k_width`` need not be the
instruction's native elements-per-lane (see ``codegen/amdgpu/mma_table.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .common import LANE, REGISTER, WARP, CTALayout, dim_names, fit_to_shape, with_standard_ins
from .linear import LayoutError, LinearLayout, is_pow2, log2

MFMA_WAVE = 64
WMMA_WAVE = 32
# (m, n) of the MFMA result tiles Triton accepts. The 4x4 instructions compute 16
# independent 4x4 blocks; Triton (and tlxc) use them only as one 4x64 (or, transposed,
# 64x4) tile, so a plain 4x4 tile is refused.
MFMA_TILES = ((32, 32), (16, 16), (4, 64), (64, 4))
MFMA_VERSIONS = (3, 4)
WMMA_VERSIONS = (1, 2, 3)


def _norm(seq: Sequence[int] | None, rank: int, default: int, what: str) -> tuple[int, ...]:
    if seq is None:
        return (default,) * rank
    out = tuple(int(v) for v in seq)
    if len(out) != rank:
        raise LayoutError(f"{what} {list(out)} has {len(out)} entries for a rank-{rank} tile")
    for v in out:
        if not is_pow2(v):
            raise LayoutError(f"{what} {list(out)}: every entry must be a power of two")
    return out


def _check_shape(shape: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if len(shape) != rank or rank not in (2, 3):
        raise LayoutError(f"{what}: tile shape {shape} must be 2-D or 3-D (batch first) and match "
                          f"warps_per_cta of rank {rank}")
    for s in shape:
        log2(s)
    return shape


# ----------------------------------------------------------------------------- MFMA
@dataclass(frozen=True)
class AmdMfma:
    """Parameters of an MFMA accumulator layout (Triton's ``#ttg.amd_mfma``).

    ``instr_shape`` is ``(m, n)`` or ``(m, n, k)`` (k is not part of the layout);
    ``element_bitwidth`` 64 for the f64 instructions (one element per lane per row
    group instead of four); ``tiles_per_warp`` repeats each warp's instruction tile.
    """

    version: int
    instr_shape: tuple[int, ...]
    transposed: bool
    warps_per_cta: tuple[int, ...]
    element_bitwidth: int = 32
    tiles_per_warp: tuple[int, ...] | None = None
    cta: CTALayout | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "instr_shape", tuple(int(v) for v in self.instr_shape))
        object.__setattr__(self, "warps_per_cta", tuple(int(v) for v in self.warps_per_cta))
        rank = len(self.warps_per_cta)
        object.__setattr__(self, "tiles_per_warp", _norm(self.tiles_per_warp, rank, 1, "tiles_per_warp"))
        _norm(self.warps_per_cta, rank, 1, "warps_per_cta")
        if self.version not in MFMA_VERSIONS:
            raise LayoutError(f"MFMA version {self.version} is not supported; tlxc knows versions "
                              f"{MFMA_VERSIONS} (CDNA3, CDNA4)")
        if len(self.instr_shape) not in (2, 3) or tuple(self.instr_shape[:2]) not in MFMA_TILES:
            raise LayoutError(f"MFMA instr_shape {list(self.instr_shape)}: (m, n) must be one of "
                              f"{[list(t) for t in MFMA_TILES]} (4x4 instructions are used as 4x64 / 64x4)")
        if self.instr_shape[:2] == (64, 4) and not self.transposed:
            raise LayoutError("a 64x4 MFMA layout must be transposed (it is the 4x64 instruction with A and B "
                              "swapped)")
        if self.element_bitwidth not in (32, 64):
            raise LayoutError(f"MFMA element_bitwidth must be 32 or 64, not {self.element_bitwidth}")
        if rank not in (2, 3):
            raise LayoutError(f"MFMA warps_per_cta {list(self.warps_per_cta)} must have rank 2 or 3")

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def warp_tiles(self) -> tuple[int, ...]:
        """``tiles_per_warp`` as ``__post_init__`` completed it (1 per dim by default)."""
        assert self.tiles_per_warp is not None
        return self.tiles_per_warp

    @property
    def m(self) -> int:
        return self.instr_shape[0]

    @property
    def n(self) -> int:
        return self.instr_shape[1]

    def accumulator(self, shape: Sequence[int]) -> LinearLayout:
        return _mfma_accumulator(self, _check_shape(shape, self.rank, "mfma_layout"))

    def operand(self, shape: Sequence[int], op_idx: int, k_width: int) -> LinearLayout:
        return _mfma_operand(self, _check_shape(shape, self.rank, "mfma_dot_operand_layout"), op_idx, k_width)


def _mfma_tile(m: int, n: int, transposed: bool, height: int, dm: str, dn: str) -> LinearLayout:
    """One wave's share of one instruction tile, outputs ``(dn, dm)``.

    Not transposed: a lane holds ``height`` consecutive rows of one column; the lanes
    cover a row group's ``n`` columns, then further row groups; the registers repeat
    the row groups (``tiles``) down the tile. Transposed: rows and columns swap roles.
    """
    tiles = m * n // (MFMA_WAVE * height)
    if tiles < 1:
        raise LayoutError(f"MFMA tile {m}x{n} is smaller than one element per lane")
    along, across, a_size, c_size = (dm, dn, m, n) if not transposed else (dn, dm, n, m)
    tile = (LinearLayout({REGISTER: [], LANE: []}, [(dn, 1), (dm, 1)])
            * LinearLayout.identity_1d(height, REGISTER, along)
            * LinearLayout.identity_1d(c_size, LANE, across)
            * LinearLayout.identity_1d(MFMA_WAVE // c_size, LANE, along)
            * LinearLayout.identity_1d(tiles, REGISTER, along))
    if tile.out_dim_size(along) != a_size:
        raise LayoutError(f"internal: MFMA tile {m}x{n} covers {tile.out_sizes}", tile)
    return tile


@lru_cache(maxsize=1024)
def _mfma_accumulator(p: AmdMfma, shape: tuple[int, ...]) -> LinearLayout:
    rank = p.rank
    names = dim_names(rank)
    mi, ni = rank - 2, rank - 1
    dm, dn = names[mi], names[ni]
    height = 1 if p.element_bitwidth == 64 else 4
    tpw, warps = p.warp_tiles, p.warps_per_cta
    out = _mfma_tile(p.m, p.n, p.transposed, height, dm, dn)
    n_rest = max(1, shape[ni] // (p.n * warps[ni] * tpw[ni]))
    for size, in_dim, d in ((tpw[ni], REGISTER, dn), (warps[ni], WARP, dn), (n_rest, REGISTER, dn),
                            (tpw[mi], REGISTER, dm), (warps[mi], WARP, dm)):
        out = out * LinearLayout.identity_1d(size, in_dim, d)
    if rank == 3:
        out = out * LinearLayout({REGISTER: [], LANE: []}, [(names[0], 1)])
        # As in Triton, batch tiles are not repeated per warp: tiles_per_warp[0] is unused.
        out = out * LinearLayout.identity_1d(warps[0], WARP, names[0])
    return with_standard_ins(fit_to_shape(out, shape, p.cta))


@lru_cache(maxsize=1024)
def _mfma_operand(p: AmdMfma, shape: tuple[int, ...], op_idx: int, k_width: int) -> LinearLayout:
    rank = p.rank
    names = dim_names(rank)
    if op_idx not in (0, 1):
        raise LayoutError(f"dot operand index must be 0 (A) or 1 (B), not {op_idx}")
    if not is_pow2(k_width):
        raise LayoutError(f"k_width {k_width} must be a power of two")
    k_i, nk_i = (rank - 1, rank - 2) if op_idx == 0 else (rank - 2, rank - 1)
    dk, dnk = names[k_i], names[nk_i]
    non_k = p.m if op_idx == 0 else p.n
    groups = MFMA_WAVE // non_k
    out = (LinearLayout({REGISTER: [], LANE: []}, [(dk, 1), (dnk, 1)])
           * LinearLayout.identity_1d(k_width, REGISTER, dk)
           * LinearLayout.identity_1d(non_k, LANE, dnk)
           * LinearLayout.identity_1d(groups, LANE, dk))
    k_tile = groups * k_width
    # The 64-wide operand of a 4x64 (64x4) tile feeds 16 blocks along K at once.
    if (p.m, p.n, op_idx) in ((64, 4, 0), (4, 64, 1)):
        out = out * LinearLayout.identity_1d(16, REGISTER, dk)
        k_tile *= 16
    if shape[k_i] > k_tile:
        out = out * LinearLayout.identity_1d(shape[k_i] // k_tile, REGISTER, dk)
    out = out * LinearLayout.identity_1d(p.warp_tiles[nk_i], REGISTER, dnk)
    if rank == 3:
        out = out * LinearLayout({REGISTER: [], LANE: []}, [(names[0], 1)])
    # Warps are numbered as in the accumulator (N fastest). The warps that split the
    # other operand's dim land beyond the K extent and are clipped to copies by fitting.
    for d in reversed(range(rank)):
        out = out * LinearLayout.identity_1d(p.warps_per_cta[d], WARP, names[d])
    return with_standard_ins(fit_to_shape(out, shape, p.cta))


def mfma_layout(shape: Sequence[int], version: int, instr_shape: Sequence[int], transposed: bool,
                warps_per_cta: Sequence[int], element_bitwidth: int = 32,
                tiles_per_warp: Sequence[int] | None = None, cta: CTALayout | None = None) -> LinearLayout:
    """The MFMA accumulator (result) layout of a 2-D or 3-D (batch first) tile."""
    return AmdMfma(version, tuple(instr_shape), transposed, tuple(warps_per_cta), element_bitwidth,
                   tuple(tiles_per_warp) if tiles_per_warp is not None else None, cta).accumulator(shape)


def mfma_dot_operand_layout(shape: Sequence[int], op_idx: int, version: int, instr_shape: Sequence[int],
                            transposed: bool, warps_per_cta: Sequence[int], k_width: int,
                            element_bitwidth: int = 32, tiles_per_warp: Sequence[int] | None = None,
                            cta: CTALayout | None = None) -> LinearLayout:
    """Operand A (``op_idx`` 0, ``[M, K]``) or B (1, ``[K, N]``) of the MFMA with the given
    parent parameters; each lane holds ``k_width`` K-consecutive elements."""
    parent = AmdMfma(version, tuple(instr_shape), transposed, tuple(warps_per_cta), element_bitwidth,
                     tuple(tiles_per_warp) if tiles_per_warp is not None else None, cta)
    return parent.operand(shape, op_idx, k_width)


def mfma_store_layout(shape: Sequence[int], version: int, instr_shape: Sequence[int],
                      warps_per_cta: Sequence[int], tiles_per_warp: Sequence[int] | None = None) -> LinearLayout | None:
    """The layout Triton converts a transposed 16-bit MFMA result to before a global store
    (``chooseMfmaLikeStoreLayout``), or None where it does not apply.

    A transposed 32x32 tile gives each lane 4 consecutive columns; swapping N bits 2 and
    3 (4 and 8) of the element coordinates pairs them into 8 consecutive columns -- one
    16-byte store of f16/bf16 -- at the price of a lane exchange (``v_permlane32_swap``).
    For 16x16 tiles bits 2 and 4 swap, which needs at least 32 columns and one warp along
    N. Only version 4 (CDNA4) has the lane-swap instructions; rank 2 only.
    """
    p = AmdMfma(version, tuple(instr_shape), True, tuple(warps_per_cta), 32,
                tuple(tiles_per_warp) if tiles_per_warp is not None else None)
    shape = _check_shape(shape, p.rank, "mfma_store_layout")
    if p.rank != 2 or version != 4:
        return None
    if (p.m, p.n) == (32, 32):
        dest = 3
    elif (p.m, p.n) == (16, 16) and shape[1] >= 32 and p.warps_per_cta[1] == 1:
        dest = 4
    else:
        return None
    acc = p.accumulator(shape)
    n_bits = log2(shape[1])
    if n_bits <= dest:
        return None
    perm = [1 << i for i in range(n_bits)]
    perm[2], perm[dest] = perm[dest], perm[2]
    swap = (LinearLayout.identity_1d(shape[0], "dim0", "dim0")
            * LinearLayout({"dim1": [(v,) for v in perm]}, [("dim1", shape[1])]))
    return acc.compose(swap)


# ----------------------------------------------------------------------------- WMMA
@dataclass(frozen=True)
class AmdWmma:
    """Parameters of a WMMA accumulator layout (Triton's ``#ttg.amd_wmma``), wave32.

    Version 3 is the GFX12.5 WMMA; versions 1 and 2 (RDNA3, RDNA4) have the same
    shapes with other lane patterns and are accepted for completeness. ``instr_shape``
    is ``(16, 16, k)``; k only matters to dot operands (the smallest K they cover).
    """

    version: int
    transposed: bool
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...] = (16, 16, 32)
    tiles_per_warp: tuple[int, ...] | None = None
    cta: CTALayout | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "instr_shape", tuple(int(v) for v in self.instr_shape))
        object.__setattr__(self, "warps_per_cta", tuple(int(v) for v in self.warps_per_cta))
        rank = len(self.warps_per_cta)
        object.__setattr__(self, "tiles_per_warp", _norm(self.tiles_per_warp, rank, 1, "tiles_per_warp"))
        _norm(self.warps_per_cta, rank, 1, "warps_per_cta")
        if self.version not in WMMA_VERSIONS:
            raise LayoutError(f"WMMA version {self.version} is not one of {WMMA_VERSIONS}")
        if len(self.instr_shape) != 3 or self.instr_shape[:2] != (16, 16) or not is_pow2(self.instr_shape[2]):
            raise LayoutError(f"WMMA instr_shape {list(self.instr_shape)} must be [16, 16, K] (K a power of two); "
                              "the 32x16 fp4 WMMA has no tlxc layout yet")
        if rank not in (2, 3):
            raise LayoutError(f"WMMA warps_per_cta {list(self.warps_per_cta)} must have rank 2 or 3")

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def warp_tiles(self) -> tuple[int, ...]:
        """``tiles_per_warp`` as ``__post_init__`` completed it (1 per dim by default)."""
        assert self.tiles_per_warp is not None
        return self.tiles_per_warp

    def _tile(self, dm: str, dn: str) -> LinearLayout:
        """One wave's 16x16 result, outputs ``(dn, dm)``: 8 registers and 16 lanes."""
        along, across = (dm, dn) if not self.transposed else (dn, dm)
        out = LinearLayout({REGISTER: [], LANE: []}, [(dn, 1), (dm, 1)])
        if self.version == 1:
            # RDNA3: the two lane halves interleave rows; each lane owns every other row.
            return (out * LinearLayout.identity_1d(16, LANE, across) * LinearLayout.identity_1d(2, LANE, along)
                    * LinearLayout.identity_1d(8, REGISTER, along)).transpose_ins([REGISTER, LANE])
        return (out * LinearLayout.identity_1d(8, REGISTER, along) * LinearLayout.identity_1d(16, LANE, across)
                * LinearLayout.identity_1d(2, LANE, along))

    def _cta_part(self, names: Sequence[str], skip: int | None) -> LinearLayout:
        """Per-warp tiles then warps, N first, then M, then batch. ``skip``: a dim whose
        tiles are dropped and whose warps hold copies (a dot operand's K dim)."""
        rank = self.rank
        out = LinearLayout({REGISTER: [], WARP: []}, [(names[d], 1) for d in reversed(range(rank))])
        for d in reversed(range(rank)):
            if d == skip:
                out = out * LinearLayout.zeros_1d(self.warps_per_cta[d], WARP, names[d])
                continue
            out = out * LinearLayout.identity_1d(self.warp_tiles[d], REGISTER, names[d])
            out = out * LinearLayout.identity_1d(self.warps_per_cta[d], WARP, names[d])
        return out

    def accumulator(self, shape: Sequence[int]) -> LinearLayout:
        return _wmma_accumulator(self, _check_shape(shape, self.rank, "wmma_layout"))

    def operand(self, shape: Sequence[int], op_idx: int, k_width: int) -> LinearLayout:
        return _wmma_operand(self, _check_shape(shape, self.rank, "wmma_dot_operand_layout"), op_idx, k_width)


@lru_cache(maxsize=1024)
def _wmma_accumulator(p: AmdWmma, shape: tuple[int, ...]) -> LinearLayout:
    rank = p.rank
    names = dim_names(rank)
    out = p._tile(names[rank - 2], names[rank - 1])
    if rank == 3:
        out = out * LinearLayout({REGISTER: [], LANE: []}, [(names[0], 1)])
    return with_standard_ins(fit_to_shape(out * p._cta_part(names, None), shape, p.cta))


@lru_cache(maxsize=1024)
def _wmma_operand(p: AmdWmma, shape: tuple[int, ...], op_idx: int, k_width: int) -> LinearLayout:
    rank = p.rank
    names = dim_names(rank)
    if op_idx not in (0, 1):
        raise LayoutError(f"dot operand index must be 0 (A) or 1 (B), not {op_idx}")
    if not is_pow2(k_width):
        raise LayoutError(f"k_width {k_width} must be a power of two")
    k_i, nk_i = (rank - 1, rank - 2) if op_idx == 0 else (rank - 2, rank - 1)
    dk, dnk = names[k_i], names[nk_i]
    depth = WMMA_WAVE // 16
    out = (LinearLayout({REGISTER: [], LANE: []}, [(dk, 1), (dnk, 1)])
           * LinearLayout.identity_1d(k_width, REGISTER, dk)
           * LinearLayout.identity_1d(16, LANE, dnk))
    # Version 1 repeats the K slice in both lane halves; later versions split K.
    out = out * (LinearLayout.zeros_1d(depth, LANE, dk) if p.version == 1
                 else LinearLayout.identity_1d(depth, LANE, dk))
    k_tile = depth * k_width if p.version != 1 else k_width
    reps = max(shape[k_i], p.instr_shape[2]) // k_tile
    out = out * LinearLayout.identity_1d(max(1, reps), REGISTER, dk)
    if rank == 3:
        out = out * LinearLayout({REGISTER: [], LANE: []}, [(names[0], 1)])
    return with_standard_ins(fit_to_shape(out * p._cta_part(names, k_i).transpose_outs(list(out.out_dims)),
                                          shape, p.cta))


def wmma_layout(shape: Sequence[int], version: int = 3, transposed: bool = False,
                warps_per_cta: Sequence[int] = (1, 1), instr_shape: Sequence[int] = (16, 16, 32),
                tiles_per_warp: Sequence[int] | None = None, cta: CTALayout | None = None) -> LinearLayout:
    """The WMMA accumulator layout of a 2-D or 3-D (batch first) tile."""
    return AmdWmma(version, transposed, tuple(warps_per_cta), tuple(instr_shape),
                   tuple(tiles_per_warp) if tiles_per_warp is not None else None, cta).accumulator(shape)


def wmma_dot_operand_layout(shape: Sequence[int], op_idx: int, k_width: int, version: int = 3,
                            transposed: bool = False, warps_per_cta: Sequence[int] = (1, 1),
                            instr_shape: Sequence[int] = (16, 16, 32),
                            tiles_per_warp: Sequence[int] | None = None,
                            cta: CTALayout | None = None) -> LinearLayout:
    """Operand A (``op_idx`` 0) or B (1) of the WMMA with the given parent parameters;
    each lane holds ``k_width`` K-consecutive elements, the two lane halves split K."""
    parent = AmdWmma(version, transposed, tuple(warps_per_cta), tuple(instr_shape),
                     tuple(tiles_per_warp) if tiles_per_warp is not None else None, cta)
    return parent.operand(shape, op_idx, k_width)


def check_tiles_per_warp(shape: Sequence[int], instr_shape: Sequence[int], warps_per_cta: Sequence[int],
                         tiles_per_warp: Sequence[int]) -> None:
    """The rule TLX states for ``tiles_per_warp``: one positive entry per result dim, and
    ``instr[d] * warps[d] * tiles[d]`` (the layout's period) must fit in the tile."""
    rank = len(shape)
    if len(tiles_per_warp) != rank:
        raise LayoutError(f"tiles_per_warp {list(tiles_per_warp)} needs one entry per result dim ({rank})")
    instr = [1] * (rank - 2) + list(instr_shape[:2])
    for d in range(rank):
        t = tiles_per_warp[d]
        if t < 1 or not is_pow2(t):
            raise LayoutError(f"tiles_per_warp[{d}] = {t} must be a positive power of two")
        period = instr[d] * warps_per_cta[d] * t
        if period > shape[d]:
            raise LayoutError(f"tiles_per_warp {list(tiles_per_warp)}: the period along dim {d} is "
                              f"{instr[d]} x {warps_per_cta[d]} x {t} = {period}, larger than the tile's {shape[d]}")
