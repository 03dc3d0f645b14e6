"""LDS (shared-memory) layouts for AMD matrix-core operands, and their bank cost.

Two kinds, both as Triton's AMD back end makes them:

* **Swizzled** (``SwizzledSharedEncodingAttr`` with the parameters of
  ``AMDMfmaEncodingAttr::composeSharedLayoutForOperand`` /
  ``AMDWmmaEncodingAttr::composeSharedLayoutForOperand``): ``vec`` = the operand's
  ``k_width`` (MFMA; WMMA caps it at 16 bytes), ``per_phase`` = how many rows share one
  pass over all banks, ``max_phase`` = how many distinct XOR phases the rows that one
  read touches at once need (16 rows of an MFMA operand, ``m`` rows of a WMMA one).
  A K-contiguous buffer is swizzled; an MN-contiguous one is left plain (its reads
  already fall in different banks) except for 8- and 16-bit types on MFMA version 4,
  whose LDS transpose reads (``ds_read_b64_tr_*``) want the swizzle too.
* **Padded** (``PaddedSharedEncodingAttr``): ``pad`` elements are inserted after every
  ``interval`` elements of a linear order of the tile, for each ``(interval, pad)``
  pair: the element at linear index ``i`` lives at ``i + sum(i // interval * pad)``.

How padding is represented
--------------------------
Padding is not linear over GF(2) (it adds, with carries), so a padded buffer is a
``PaddedShared``: the ``LinearLayout`` of the *unpadded* index (``offset`` -> tile,
Triton's "linear component", which may permute rows) plus ``padded_offset(i)``, the
pure function from that index to the element's position in LDS. Every layout
computation (conversions, vector widths, who owns what) runs on the linear part; only
address generation and the bank count apply ``padded_offset``. Because each interval is
a power of two no smaller than a vector, a vector of consecutive unpadded offsets never
straddles a pad and stays contiguous.

Bank model: that of ``conversion.bank_cost`` (a wave's access is served in phases of
consecutive lanes, each phase at most one line of ``num_banks * bank_bytes`` bytes; a
bank serves one word per wavefront). ``lds_bank_conflicts`` replays it with an optional
address function, so padded and swizzled layouts are measured by the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import gf2
from .common import BLOCK, LANE, OFFSET, REGISTER, CTALayout, identity_standard, swizzled_shared, with_standard_ins
from .conversion import BankCost
from .linear import LayoutError, LinearLayout, is_pow2, log2
from .target import LayoutTarget

# Rows one MFMA operand read touches together (Triton's ``simdWidth``).
MFMA_ROWS_PER_READ = 16
BANK_BITS = 32


@dataclass(frozen=True)
class Swizzle:
    vec: int
    per_phase: int
    max_phase: int


def mfma_lds_swizzle(op_idx: int, shape: Sequence[int], order: Sequence[int], k_width: int, elem_bits: int,
                     version: int, num_banks: int, instr_m: int = 32, need_trans: bool = False) -> Swizzle:
    """Triton's swizzle for an MFMA operand buffer of ``shape`` stored with ``order``
    (fastest dim first); ``num_banks`` is the target's LDS bank count (32 on CDNA3, 64 on
    CDNA4). ``need_trans``: the buffer holds the operand transposed."""
    k_dim = 1 if op_idx == 0 else 0
    if need_trans:
        k_dim = 1 - k_dim
    rank = len(shape)
    k_dim += rank - 2
    k_contig = order[0] == k_dim
    if not k_contig and not (version == 4 and elem_bits in (8, 16)):
        return Swizzle(1, 1, 1)
    inner = shape[order[0]]
    per_row = num_banks * BANK_BITS // elem_bits
    per_phase = max(1, per_row // inner)
    max_phase = max(min(MFMA_ROWS_PER_READ // per_phase, inner // k_width), 1)
    if instr_m == 4:
        max_phase = 4  # as Triton; its 4x4 parameters are not tuned
    return Swizzle(k_width, per_phase, max_phase)


def wmma_lds_swizzle(op_idx: int, shape: Sequence[int], order: Sequence[int], k_width: int, elem_bits: int,
                     num_banks: int = 32, instr_m: int = 16) -> Swizzle:
    """Triton's swizzle for a WMMA operand buffer (K-contiguous buffers only)."""
    rank = len(shape)
    k_dim = (1 if op_idx == 0 else 0) + rank - 2
    if order[0] != k_dim:
        return Swizzle(1, 1, 1)
    vec = min(k_width * elem_bits, 128) // elem_bits
    inner = shape[order[0]]
    per_phase = max(1, num_banks * BANK_BITS // elem_bits // inner)
    max_phase = max(min(instr_m // per_phase, inner // vec), 1)
    return Swizzle(vec, per_phase, max_phase)


def mfma_operand_shared(shape: Sequence[int], op_idx: int, order: Sequence[int], k_width: int, elem_bits: int,
                        version: int, num_banks: int, instr_m: int = 32, need_trans: bool = False,
                        cta: CTALayout | None = None) -> LinearLayout:
    """The swizzled LDS layout (``offset`` -> tile) Triton gives an MFMA operand."""
    s = mfma_lds_swizzle(op_idx, shape, order, k_width, elem_bits, version, num_banks, instr_m, need_trans)
    return swizzled_shared(shape, s.vec, s.per_phase, s.max_phase, order, cta)


def wmma_operand_shared(shape: Sequence[int], op_idx: int, order: Sequence[int], k_width: int, elem_bits: int,
                        num_banks: int = 32, instr_m: int = 16, cta: CTALayout | None = None) -> LinearLayout:
    """The swizzled LDS layout (``offset`` -> tile) Triton gives a WMMA operand."""
    s = wmma_lds_swizzle(op_idx, shape, order, k_width, elem_bits, num_banks, instr_m)
    return swizzled_shared(shape, s.vec, s.per_phase, s.max_phase, order, cta)


# ----------------------------------------------------------------------------- padding
@dataclass(frozen=True)
class PaddedShared:
    """A padded LDS buffer: ``layout`` maps the unpadded index (``offset``) to the tile;
    after every ``intervals[j]`` unpadded elements come ``paddings[j]`` unused ones."""

    layout: LinearLayout
    intervals: tuple[int, ...]
    paddings: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.intervals) != len(self.paddings) or not self.intervals:
            raise LayoutError("padded_shared needs one or more (interval, padding) pairs")
        if len(set(self.intervals)) != len(self.intervals):
            raise LayoutError(f"padded_shared intervals {list(self.intervals)} have duplicates")
        for v in self.intervals + self.paddings:
            if not is_pow2(v):
                raise LayoutError(f"padded_shared: intervals {list(self.intervals)} and paddings "
                                  f"{list(self.paddings)} must all be powers of two")
        if self.layout.in_dims[:1] != (OFFSET,):
            raise LayoutError("padded_shared: the linear component must map 'offset' to the tile", self.layout)

    def padded_offset(self, offset: int) -> int:
        """Where (in elements from the buffer start) unpadded index ``offset`` lives."""
        return offset + sum((offset // i) * p for i, p in zip(self.intervals, self.paddings))

    @property
    def unpadded_size(self) -> int:
        return self.layout.in_dim_size(OFFSET)

    @property
    def padded_size(self) -> int:
        """Elements to allocate: the last element's position plus one (Triton also counts
        no padding after the last element)."""
        return self.padded_offset(self.unpadded_size - 1) + 1

    def offset_of(self, coords: Sequence[int]) -> int:
        """The padded position of the tile element at ``coords`` (one per output dim)."""
        inv = self.layout.sublayout([OFFSET], self.layout.out_dims).invert()
        return self.padded_offset(inv.apply(dict(zip(self.layout.out_dims, coords)))[OFFSET])

    def __str__(self) -> str:
        pairs = ", ".join(f"{i}:+{p}" for i, p in zip(self.intervals, self.paddings))
        return f"padded_shared<[{pairs}] {self.layout}>"


def padded_shared(shape: Sequence[int], interval_paddings: Sequence[tuple[int, int]],
                  order: Sequence[int] | None = None, linear: LinearLayout | None = None) -> PaddedShared:
    """A padded buffer of ``shape``: ``(interval, padding)`` pairs over either the
    row-major-along-``order`` index (``order[0]`` fastest; default last dim fastest) or a
    given ``linear`` component (``offset`` -> tile, e.g. with permuted rows)."""
    rank = len(shape)
    if linear is None:
        order = tuple(order) if order is not None else tuple(reversed(range(rank)))
        names = [f"dim{i}" for i in range(rank)]
        linear = identity_standard(OFFSET, shape, order).transpose_outs(names)
    elif order is not None:
        raise LayoutError("padded_shared takes an order or a linear component, not both")
    if linear.out_shape != tuple(shape):
        raise LayoutError(f"padded_shared: the linear component covers {linear.out_shape}, not {tuple(shape)}",
                          linear)
    if not linear.sublayout([OFFSET], linear.out_dims).is_bijective():
        raise LayoutError("padded_shared: the linear component must give each element one offset", linear)
    linear = with_standard_ins(linear, (OFFSET, BLOCK))
    return PaddedShared(linear, tuple(i for i, _ in interval_paddings), tuple(p for _, p in interval_paddings))


# ----------------------------------------------------------------------------- banks
def lds_bank_conflicts(dist: LinearLayout, shared: LinearLayout | PaddedShared, *, elem_bits: int, vec: int,
                       target: LayoutTarget) -> BankCost:
    """Wavefronts of one wave-wide LDS access in which every lane of ``dist`` moves
    ``vec`` buffer-consecutive elements (``ds_read_b64``: ``vec * elem_bits == 64``),
    from a swizzled (``LinearLayout``) or padded (``PaddedShared``) buffer. Same model
    as ``conversion.bank_cost``, to which it agrees on unpadded buffers."""
    address: Callable[[int], int]
    if isinstance(shared, PaddedShared):
        lin, address = shared.layout, shared.padded_offset
        for i in shared.intervals:
            if i < vec:
                raise LayoutError(f"padding interval {i} is narrower than the {vec}-element vector")
    else:
        lin, address = shared, (lambda o: o)
    if dist.out_sizes != lin.out_sizes:
        raise LayoutError("lds_bank_conflicts: layouts cover different tiles", dist, lin)
    if dist.in_dim_size(LANE) != target.warp_size:
        raise LayoutError(f"lds_bank_conflicts: layout has {dist.in_dim_size(LANE)} lanes, the target's waves "
                          f"have {target.warp_size}", dist)
    if vec * elem_bits > target.max_vector_bytes * 8:
        raise LayoutError(f"a {vec} x {elem_bits}-bit access is wider than {target.max_vector_bytes} bytes")
    inv = lin.sublayout([OFFSET], lin.out_dims).invert()
    regs = gf2.Echelon(dist.encode_out(dict(zip(dist.out_dims, b))) for b in dist.in_bases(REGISTER))
    for i in range(log2(vec)):
        if not regs.contains(lin.apply_flat(1 << i)):
            raise LayoutError(f"lds_bank_conflicts: {vec} buffer-consecutive elements are not held by one lane",
                              dist, lin)
    word_bits = target.bank_bytes * 8
    vec_bits = vec * elem_bits
    phase = min(target.warp_size, max(1, target.line_bytes * 8 // max(vec_bits, word_bits)))
    total = ideal = 0
    for start in range(0, target.warp_size, phase):
        words: set[int] = set()
        for lane in range(start, start + phase):
            coords = dist.apply({LANE: lane})
            off = inv.apply(coords)[OFFSET] & ~(vec - 1)
            first = address(off) * elem_bits // word_bits
            last = (address(off) * elem_bits + vec_bits - 1) // word_bits
            words.update(range(first, last + 1))
        per_bank: dict[int, int] = {}
        for w in words:
            per_bank[w % target.num_banks] = per_bank.get(w % target.num_banks, 0) + 1
        total += max(per_bank.values())
        ideal += -(-len(words) // target.num_banks)
    return BankCost(total, ideal)
