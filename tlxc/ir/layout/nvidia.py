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
    instr_shape: tuple[int, ...] = (16, 8)  # (m, n)
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


def choose_nvmma_swizzle(shape: Sequence[int], elem_bits: int, transposed: bool = False,
                         cta: CTALayout | None = None) -> int:
    """The swizzle span (bytes) a buffer gets unless the user pins one -- the one rule that
    buffer layout assignment, the TLX layout encodings and the TMA descriptors share, so
    that a descriptor's swizzle always matches its buffer's.

    Triton's ``NVMMASharedEncodingAttr`` builder, on the piece of the tile one CTA holds:
    the largest of 128, 64 and 32 bytes that the contiguous dim's bytes are a positive
    multiple of, else 0; and 0 when the buffer is 1-D or its *rows* -- the product of all
    the other dims, which ``nvmma_shared`` collapses into rows -- are fewer than the 8 of
    a swizzle atom. So ``(2, 4, 64)`` fp16 has 8 rows of 128 bytes: 128. The contiguous
    dim is the last one, the one before it when ``transposed`` (``nvmma_shared``'s
    convention).
    """
    rank = len(shape)
    if rank < 2:
        return 0
    per_cta = shape_per_cta(tuple(shape), cta)
    contig = rank - 2 if transposed else rank - 1
    rows = 1
    for d, s in enumerate(per_cta):
        if d != contig:
            rows *= s
    if rows < 8:
        return 0
    row_bytes = per_cta[contig] * elem_bits // 8
    for span in (128, 64, 32):
        if row_bytes >= span and row_bytes % span == 0:
            return span
    return 0


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


# ---------------------------------------------------------------------------- ldmatrix
# ``ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16`` (PTX ISA, "Warp-level matrix
# load instruction: ldmatrix", its figures "ldmatrix fragment layout"): up to four 8x8
# matrices of 16-bit elements, each row 16 contiguous bytes of shared memory. Lane
# ``8*i + j`` gives the address of row ``j`` of matrix ``i``; thread ``t`` receives, in its
# destination register ``i``, row ``t // 4`` elements ``2*(t % 4)`` and ``2*(t % 4) + 1``
# (``.trans``: column ``t // 4``, rows ``2*(t % 4)`` and ``2*(t % 4) + 1``).
#
# Both halves are linear layouts onto an abstract tile of ``(col, row, matrix)`` where a
# row holds 16 bytes. The hardware moves bytes, not element types, so for elements of
# ``e`` bits a row holds ``128 / e`` of them and a 32-bit destination register
# ``32 / e``: 8-bit and 32-bit elements load without ``.trans`` as 16-bit pairs do
# (``.trans`` would split or interleave their bytes; it is 16-bit only).
LDMATRIX_DIMS = ("col", "row", "matrix")


def ldmatrix_fragment(elem_bits: int, trans: bool, matrices: int) -> LinearLayout:
    """What thread ``lane`` receives: ``(register, lane) -> (col, row, matrix)``, where
    ``register`` counts elements across the destination registers (the low
    ``log2(32 / elem_bits)`` bits inside one 32-bit register, the rest picking it)."""
    word, _ = _ldmatrix_sizes(elem_bits, trans)
    first = LinearLayout.identity_1d(word, REGISTER, "row" if trans else "col")
    quads = LinearLayout.identity_1d(4, LANE, "row" if trans else "col")
    groups = LinearLayout.identity_1d(8, LANE, "col" if trans else "row")
    which = LinearLayout.identity_1d(matrices, REGISTER, "matrix")
    out = first * quads * groups * which
    return out.transpose_outs(list(LDMATRIX_DIMS)).transpose_ins([REGISTER, LANE])


def ldmatrix_rows(elem_bits: int, matrices: int) -> LinearLayout:
    """Which row each lane addresses: ``(register, lane) -> (col, row, matrix)`` with
    ``register`` the elements of the 16-byte row, lanes ``8*i + j`` row ``j`` of matrix
    ``i``; lanes past ``8 * matrices`` repeat the first ones (their addresses are not read)."""
    per_row = 128 // elem_bits
    out = (LinearLayout.identity_1d(per_row, REGISTER, "col") * LinearLayout.identity_1d(8, LANE, "row")
           * LinearLayout.identity_1d(matrices, LANE, "matrix")
           * LinearLayout.zeros_1d(4 // matrices, LANE, "matrix"))
    return out.transpose_outs(list(LDMATRIX_DIMS))


def _ldmatrix_sizes(elem_bits: int, trans: bool) -> tuple[int, int]:
    if elem_bits not in (8, 16, 32):
        raise LayoutError(f"ldmatrix moves 8-, 16- or 32-bit elements, not {elem_bits}-bit ones")
    if trans and elem_bits != 16:
        raise LayoutError("ldmatrix .trans moves 16-bit elements only")
    return 32 // elem_bits, 128 // elem_bits


@lru_cache(maxsize=64)
def _ldmatrix_lanes(elem_bits: int, trans: bool, matrices: int) -> LinearLayout:
    """``F⁻¹ ∘ A``: the (register, lane) of the fragment that receives what each
    (register, lane) of the rows addresses."""
    return ldmatrix_rows(elem_bits, matrices).compose(ldmatrix_fragment(elem_bits, trans, matrices).invert())


@dataclass(frozen=True)
class LdmatrixAddress:
    """How an ``ldmatrix`` fills the distributed layout ``dst`` (see ``ldmatrix_address``).

    ``layout`` is the *address* layout: register bits ``[0, row_bits)`` are the elements of
    the 16-byte row that each lane addresses, its lane bits say which row, and register
    bits from ``row_bits`` on are ``dst``'s register bits ``rest_bits`` (in order): the
    instruction. Destination register ``i`` of that instruction holds the ``dst``
    registers whose bits ``matrix_bits`` spell ``i``, the low ``word_bits`` of them inside
    the 32-bit register.
    """

    layout: LinearLayout
    trans: bool
    elem_bits: int
    word_bits: int
    row_bits: int
    matrix_bits: tuple[int, ...]
    rest_bits: tuple[int, ...]

    @property
    def matrices(self) -> int:
        return 1 << len(self.matrix_bits)

    def dst_register(self, instruction: int, matrix: int, element: int = 0) -> int:
        """The ``dst`` register that holds ``element`` of destination register ``matrix`` of
        the instruction whose ``rest_bits`` spell ``instruction``."""
        r = element
        for j, b in enumerate(self.matrix_bits):
            r |= ((matrix >> j) & 1) << b
        for j, b in enumerate(self.rest_bits):
            r |= ((instruction >> j) & 1) << b
        return r

    def instruction_of(self, dst_register: int) -> int:
        """The instruction (value of ``rest_bits``) that loads ``dst`` register ``dst_register``."""
        return sum(((dst_register >> b) & 1) << j for j, b in enumerate(self.rest_bits))


def ldmatrix_address(dst: LinearLayout, *, elem_bits: int, trans: bool,
                     matrix_bits: Sequence[int]) -> LdmatrixAddress:
    """The address layout of ``ldmatrix`` instructions that fill ``dst`` (a distributed
    layout with a 32-lane warp), taking ``dst``'s low ``log2(32 / elem_bits)`` register
    bits as the elements of one 32-bit register and ``matrix_bits`` (1 or 2 other register
    bits, or none) as the choice among the ``2**len(matrix_bits)`` destination registers.

    With ``F = ldmatrix_fragment`` and ``A = ldmatrix_rows`` (both bijections onto the same
    abstract matrices, up to the ignored lanes of ``A``), the part of ``dst`` one
    instruction covers is ``D = phi ∘ F`` for the linear ``phi`` placing the matrices in
    the tile; the lane addressing row ``j`` of matrix ``i`` addresses ``phi(A(...)) =
    D(F⁻¹(A(...)))``. So the address layout is ``D ∘ F⁻¹ ∘ A`` -- one composition, no table
    -- with the other register bits, warps and blocks of ``dst`` kept as they are.
    Whether a shared-memory layout makes its rows 16 contiguous bytes is the planner's
    question (``plan_shared_conversion(..., load_vector_bits=row_bits)``).
    """
    word, per_row = _ldmatrix_sizes(elem_bits, trans)
    regs = dst.in_bases(REGISTER)
    w = log2(word)
    matrix_bits = tuple(matrix_bits)
    if len(matrix_bits) > 2 or len(set(matrix_bits)) != len(matrix_bits) \
            or any(not w <= b < len(regs) for b in matrix_bits):
        raise LayoutError(f"ldmatrix: matrix bits {matrix_bits} must be up to two distinct register bits "
                          f"above the {w} bits of a 32-bit register", dst)
    if len(regs) < w or dst.in_dim_size(LANE) != 32:
        raise LayoutError("ldmatrix fills 32-bit registers of a 32-lane warp", dst)
    part = LinearLayout({REGISTER: [regs[i] for i in list(range(w)) + list(matrix_bits)],
                         LANE: dst.in_bases(LANE)}, list(dst.out_sizes.items()))
    core = _ldmatrix_lanes(elem_bits, trans, 1 << len(matrix_bits)).compose(part)
    rest = tuple(i for i in range(w, len(regs)) if i not in matrix_bits)
    bases = [(REGISTER, list(core.in_bases(REGISTER)) + [regs[i] for i in rest]), (LANE, core.in_bases(LANE))]
    bases += [(d, dst.in_bases(d)) for d in dst.in_dims if d not in (REGISTER, LANE)]
    layout = LinearLayout(bases, list(dst.out_sizes.items())).transpose_ins(list(dst.in_dims))
    return LdmatrixAddress(layout, trans, elem_bits, w, log2(per_row), matrix_bits, rest)
