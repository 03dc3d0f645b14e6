"""Planning layout conversions: how data gets from one distributed layout to another.

Everything here is derived from the two layouts with one operation -- find, for each
(register, lane, warp, block) of the destination, a source coordinate holding the same
element -- and plain linear algebra; there is no table of layout pairs.

``classify_conversion`` asks how far data must travel:

* ``NONE`` -- the layouts are equal.
* ``REGISTERS`` -- every thread already holds what it needs (the layouts differ in
  register order or duplication only): the lowering renames SSA values, no instruction.
* ``WARP_SHUFFLE`` -- data crosses lanes but stays within each warp: warp shuffles.
* ``SHARED_MEMORY`` -- data crosses warps of a CTA: a round trip through shared memory.
* ``CROSS_CTA`` -- data crosses CTAs of a cluster (distributed shared memory); not
  planned here yet.

For the shared-memory case ``plan_shared_conversion`` picks the vector widths and a
swizzled scratch layout under which both the store and the load are free of bank
conflicts, and reports the cost computed by ``bank_wavefronts`` -- a plain function of
(distributed layout, shared layout), so tests can check any pair of layouts.

Bank model (parameters come from ``LayoutTarget``): a warp-wide access of ``v`` bytes
per thread is served in *phases* of consecutive lanes, each phase moving at most one
bank line (``num_banks * bank_bytes`` bytes; 8 lanes for 16-byte accesses with 32 banks
of 4 bytes). Within a phase, a bank serves one word per wavefront; lanes reading the
same word share it. The wavefronts of an access are the sum over phases of the largest
number of distinct words any bank must serve.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from . import gf2
from .common import BLOCK, LANE, OFFSET, REGISTER, WARP
from .linear import LayoutError, LinearLayout, log2
from .target import LayoutTarget


class ConversionKind(str, Enum):
    NONE = "none"
    REGISTERS = "registers"
    WARP_SHUFFLE = "warp_shuffle"
    SHARED_MEMORY = "shared_memory"
    CROSS_CTA = "cross_cta"


# ---------------------------------------------------------------------------- mapping
def conversion_map(src: LinearLayout, dst: LinearLayout, keep: Sequence[str] = ()) -> LinearLayout | None:
    """See ``_conversion_map`` (this wrapper makes ``keep`` hashable for the cache)."""
    return _conversion_map(src, dst, tuple(keep))


@lru_cache(maxsize=1024)
def _conversion_map(src: LinearLayout, dst: LinearLayout, keep: tuple[str, ...]) -> LinearLayout | None:
    """A map ``C`` from ``dst``'s inputs to ``src``'s inputs with ``src(C(x)) == dst(x)``
    that leaves the input dims in ``keep`` unchanged, or None when none exists.

    Unlike ``dst.invert_and_compose(src)``, which picks the smallest source coordinate,
    this keeps a thread's lane / warp / block where the layouts allow, so a conversion
    between two layouts that broadcast the same way does not move data needlessly. For
    a kept dim each basis of ``dst`` maps to the same basis of ``src`` plus a correction
    solved in the other dims; among the corrections the smallest input is chosen
    (registers before lanes before warps).
    """
    _check_same_tile(src, dst)
    if set(src.in_dims) != set(dst.in_dims):
        raise LayoutError(f"conversion: input dims differ: {src.in_dims} vs {dst.in_dims}", src, dst)
    for d in keep:
        if src.in_dim_size(d) != dst.in_dim_size(d):
            return None
    free = [d for d in src.in_dims if d not in keep]
    gens: list[int] = []
    owners: list[tuple[str, int]] = []
    for d in free:
        for i, b in enumerate(src.in_bases(d)):
            gens.append(src.encode_out(dict(zip(src.out_dims, b))))
            owners.append((d, i))
    ech = gf2.Echelon(gens)
    new: dict[str, list[tuple[int, ...]]] = {}
    for d in dst.in_dims:
        rows = []
        for i, b in enumerate(dst.in_bases(d)):
            target = dst.encode_out(dict(zip(dst.out_dims, b)))
            coords = dict.fromkeys(src.in_dims, 0)
            if d in keep:
                target ^= src.encode_out(dict(zip(src.out_dims, src.basis(d, i))))
                coords[d] = 1 << i
            combo = ech.solve(target)
            if combo is None:
                return None
            for j, (owner, bit) in enumerate(owners):
                if (combo >> j) & 1:
                    coords[owner] ^= 1 << bit
            rows.append(tuple(coords[n] for n in src.in_dims))
        new[d] = rows
    return LinearLayout(new, list(src.in_sizes.items()))


def classify_conversion(src: LinearLayout, dst: LinearLayout) -> ConversionKind:
    """How far data must travel to go from ``src`` to ``dst`` (see the module doc)."""
    if src == dst:
        return ConversionKind.NONE
    for kind, keep in ((ConversionKind.REGISTERS, (LANE, WARP, BLOCK)),
                       (ConversionKind.WARP_SHUFFLE, (WARP, BLOCK)),
                       (ConversionKind.SHARED_MEMORY, (BLOCK,))):
        if conversion_map(src, dst, _present(src, keep)) is not None:
            return kind
    return ConversionKind.CROSS_CTA


def _present(layout: LinearLayout, dims: Sequence[str]) -> tuple[str, ...]:
    return tuple(d for d in dims if layout.has_in_dim(d))


def _check_same_tile(src: LinearLayout, dst: LinearLayout) -> None:
    if src.out_sizes != dst.out_sizes:
        raise LayoutError(f"conversion between different tiles: {src.out_sizes} vs {dst.out_sizes}", src, dst)
    if not src.is_surjective():
        raise LayoutError("conversion source does not hold every element of its tile", src)


# ---------------------------------------------------------------------------- banks
@dataclass(frozen=True)
class BankCost:
    """Cost of one warp-wide shared-memory access (every instruction of an access
    pattern costs the same: the layouts are linear, so other instructions only XOR a
    constant into every address, which permutes banks and words alike)."""

    wavefronts: int
    ideal: int

    @property
    def conflicts(self) -> int:
        """How many times slower than ideal (1 = conflict-free)."""
        return -(-self.wavefronts // self.ideal)


def bank_cost(dist: LinearLayout, shared: LinearLayout, *, elem_bits: int, vec: int,
              target: LayoutTarget) -> BankCost:
    """Wavefronts for one warp-wide access of ``dist`` to a buffer laid out by ``shared``,
    each thread moving ``vec`` elements that are consecutive in the buffer.

    ``shared`` maps ``offset`` (and optionally ``block``) onto ``dist``'s tile: every
    element must have exactly one offset (per CTA); its first ``log2(vec)`` offset bits
    must be held by one thread of ``dist`` (else ``LayoutError``). Computed by
    enumerating the warp's lanes: exact, and cheap.
    """
    if dist.out_sizes != shared.out_sizes:
        raise LayoutError("bank_cost: layouts cover different tiles", dist, shared)
    inv = _offsets_of(shared)
    if dist.in_dim_size(LANE) != target.warp_size:
        raise LayoutError(f"bank_cost: layout has {dist.in_dim_size(LANE)} lanes, target warps have "
                          f"{target.warp_size}", dist)
    kvec = log2(vec)
    regs = gf2.Echelon(dist.encode_out(dict(zip(dist.out_dims, b))) for b in dist.in_bases(REGISTER))
    for i in range(kvec):
        if not regs.contains(shared.apply_flat(1 << i)):
            raise LayoutError(f"bank_cost: a vector of {vec} buffer-consecutive elements is not held by one "
                              "thread", dist, shared)
    offset_bits = shared.in_dim_bits(OFFSET)
    word_bits = target.bank_bytes * 8
    vec_bits = vec * elem_bits
    phase = min(target.warp_size, max(1, target.line_bytes * 8 // max(vec_bits, word_bits)))
    # offsets are linear in the lane: XOR the lane bits' offsets
    lane_offsets = [_solve(inv, dist.apply_flat(dist.encode_in({LANE: 1 << i}))) & ((1 << offset_bits) - 1)
                    for i in range(dist.in_dim_bits(LANE))]
    total = ideal = 0
    for start in range(0, target.warp_size, phase):
        words: set[int] = set()
        for lane in range(start, start + phase):
            off = 0
            for i, o in enumerate(lane_offsets):
                if (lane >> i) & 1:
                    off ^= o
            off &= ~(vec - 1)
            first = off * elem_bits // word_bits
            last = ((off + vec) * elem_bits - 1) // word_bits
            words.update(range(first, last + 1))
        per_bank: dict[int, int] = {}
        for w in words:
            per_bank[w % target.num_banks] = per_bank.get(w % target.num_banks, 0) + 1
        total += max(per_bank.values())
        ideal += -(-len(words) // target.num_banks)
    return BankCost(total, ideal)


@lru_cache(maxsize=1024)
def _offsets_of(shared: LinearLayout) -> gf2.Echelon:
    """``shared``'s bases in echelon form (``_solve`` inverts with it, as ``invert`` would),
    once ``shared`` is checked to give every element exactly one offset."""
    if shared.in_dims[:1] != (OFFSET,) or not shared.is_surjective() \
            or not shared.sublayout([OFFSET], shared.out_dims).is_injective():
        raise LayoutError("bank_cost: the shared layout must give each element exactly one offset", shared)
    return gf2.Echelon(shared.flat_bases())


def _solve(ech: gf2.Echelon, element: int) -> int:
    combo = ech.solve(element)
    assert combo is not None  # the layout is surjective
    return combo


def bank_wavefronts(dist: LinearLayout, shared: LinearLayout, *, elem_bits: int, vec: int,
                    target: LayoutTarget) -> int:
    """Wavefronts of one warp-wide access (see ``bank_cost``)."""
    return bank_cost(dist, shared, elem_bits=elem_bits, vec=vec, target=target).wavefronts


def bank_conflicts(dist: LinearLayout, shared: LinearLayout, *, elem_bits: int, vec: int,
                   target: LayoutTarget) -> int:
    """The conflict degree of one warp-wide access: 1 means conflict-free, 32 means every
    word of a phase hits the same bank."""
    return bank_cost(dist, shared, elem_bits=elem_bits, vec=vec, target=target).conflicts


# ---------------------------------------------------------------------------- planning
@dataclass(frozen=True)
class SharedConversion:
    """A conversion through a scratch buffer: each thread stores ``store_vec`` elements
    per instruction under ``shared`` (``offset``, ``block`` -> tile), the CTA syncs, and
    each thread loads ``load_vec`` elements per instruction."""

    shared: LinearLayout
    store_vec: int
    load_vec: int
    store: BankCost
    load: BankCost
    # The conversion runs in ``2**round_bits`` rounds (``plan_shared_rounds``): the top
    # ``round_bits`` offset bits of ``shared`` say which round an element travels in, and
    # one round's buffer is the rest; ``store`` / ``load`` are the costs of one round.
    round_bits: int = 0


@dataclass(frozen=True)
class ConversionPlan:
    """``map`` sends each destination (register, lane, warp, block) to a source
    coordinate holding the same element, moving no further than ``kind`` says; ``shared``
    is set for ``SHARED_MEMORY``."""

    kind: ConversionKind
    map: LinearLayout | None
    shared: SharedConversion | None = None


def plan_conversion(src: LinearLayout, dst: LinearLayout, *, elem_bits: int, target: LayoutTarget) -> ConversionPlan:
    kind = classify_conversion(src, dst)
    if kind is ConversionKind.NONE:
        return ConversionPlan(kind, conversion_map(src, dst, src.in_dims))
    keep = {ConversionKind.REGISTERS: (LANE, WARP, BLOCK), ConversionKind.WARP_SHUFFLE: (WARP, BLOCK),
            ConversionKind.SHARED_MEMORY: (BLOCK,), ConversionKind.CROSS_CTA: ()}[kind]
    cmap = conversion_map(src, dst, _present(src, keep))
    if kind is ConversionKind.SHARED_MEMORY:
        return ConversionPlan(kind, cmap, plan_shared_conversion(src, dst, elem_bits=elem_bits, target=target))
    return ConversionPlan(kind, cmap)


def plan_shared_conversion(src: LinearLayout, dst: LinearLayout, *, elem_bits: int,
                           target: LayoutTarget, load_vector_bits: int | None = None) -> SharedConversion:
    """Choose vector widths and a scratch layout so that both sides are conflict-free.

    ``load_vector_bits=k`` asks for loads of exactly ``2**k`` elements: ``dst``'s first
    ``k`` register bits, in that order, become offset bits ``[0, k)`` -- for an instruction
    that reads its elements in a fixed order, ``ldmatrix`` (its address layout from
    ``nvidia.ldmatrix_address``). Stores then move the longest prefix of that vector that
    ``src``'s registers hold. ``LayoutError`` when those bits are not independent.

    Work in the GF(2) space T of per-CTA tile coordinates (n bits). The buffer layout is
    a basis of T: offset bits ``[0, k)`` are the vector, the next bits up to one bank
    line (``L`` bits) select banks, the rest (``G``) select lines.

    1. Vectors: the tile directions both layouts hold in registers (the intersection of
       their register spans) are shared vector bits; the side with more register
       directions beyond those extends its vector further, up to ``max_vector_bytes``.
    2. For each side, the elements one phase of lanes touches, together with the vector
       and the sub-word bits, span a subspace ``Y`` of dimension <= L. Two of them share
       a bank without sharing a word exactly when their difference falls in ``G`` but not
       in the word, so an access is conflict-free iff ``G ∩ Y = {0}``.
    3. A common complement ``G`` of ``Y_store`` and ``Y_load`` always exists
       (``gf2.common_complement``); bank bits are then filled with the wider side's lane
       directions, so its accesses are plain rows, and line bits with the lift of unit
       vectors into ``G`` -- which is what a classic XOR swizzle looks like.

    Multi-CTA layouts are handled per CTA when both sides split the tile across CTAs
    the same way (unit-vector block bases); the buffer's ``block`` dim repeats that split.
    """
    _check_same_tile(src, dst)
    if not dst.is_surjective():
        raise LayoutError("conversion destination does not cover its tile", dst)
    if conversion_map(src, dst, _present(src, (BLOCK,))) is None:
        raise LayoutError("data must cross CTAs: not a shared-memory conversion", src, dst)
    for side in (src, dst):
        if side.in_dim_size(LANE) != target.warp_size:
            raise LayoutError(f"layout has {side.in_dim_size(LANE)} lanes, target warps have {target.warp_size}",
                              side)
    cta_bits = _cta_bits(src, dst)
    n_full = src.total_out_bits
    keep_bits = [b for b in range(n_full) if not (cta_bits >> b) & 1]
    n = len(keep_bits)

    def squeeze(v: int) -> int:
        return sum(1 << i for i, b in enumerate(keep_bits) if (v >> b) & 1)

    def expand(v: int) -> int:
        return sum(1 << b for i, b in enumerate(keep_bits) if (v >> i) & 1)

    def images(layout: LinearLayout, dim: str) -> list[int]:
        if not layout.has_in_dim(dim):
            return []
        out = []
        for b in layout.in_bases(dim):
            v = layout.encode_out(dict(zip(layout.out_dims, b)))
            if v & cta_bits:
                raise LayoutError(f"a {dim} bit moves between CTAs' pieces of the tile", layout)
            out.append(squeeze(v))
        return out

    word_bits = target.bank_bytes * 8
    line_bits = target.line_bytes * 8
    eb = log2(elem_bits)
    max_k = max(0, log2(target.max_vector_bytes * 8) - eb)  # vector bits
    w = max(0, log2(word_bits) - eb)  # offset bits inside one bank word
    L = min(n, max(0, log2(line_bits) - eb))  # offset bits inside one bank line

    # 1. vectors
    rs, rd = images(src, REGISTER), images(dst, REGISTER)
    if load_vector_bits is None:
        v_big, k_src, k_dst = _vectors(rs, rd, max_k)
    else:
        v_big, k_src, k_dst = _fixed_load_vector(rs, rd, load_vector_bits, max_k, src, dst)
    src_is_big = k_src >= k_dst

    # sub-word bits: the vector, padded with the wide side's lane directions
    lanes_s, lanes_d = images(src, LANE), images(dst, LANE)
    big_lanes = lanes_s if src_is_big else lanes_d
    low = gf2.extend_to(v_big, min(n, max(len(v_big), w)), big_lanes + lanes_s + lanes_d + gf2.unit_vectors(n))
    word = low[:min(w, len(low))]

    def phase_lanes(lanes: list[int], k: int) -> list[int]:
        bits = max((1 << k) * elem_bits, word_bits)
        return lanes[:log2(min(target.warp_size, max(1, line_bits // bits)))]

    # 2. what one phase of each side touches (the wide side's Y contains ``low``)
    y_s = gf2.basis_of(v_big[:k_src] + word + phase_lanes(lanes_s, k_src))
    y_d = gf2.basis_of(v_big[:k_dst] + word + phase_lanes(lanes_d, k_dst))
    if max(len(y_s), len(y_d)) > L:
        raise LayoutError("internal: access subspace larger than a bank line", src, dst)

    # 3. line bits G, bank bits H, then the offset basis
    g = gf2.common_complement(y_s if src_is_big else y_d, y_d if src_is_big else y_s, n, L)
    ech = gf2.Echelon(low + g)
    h: list[int] = []
    for v in phase_lanes(big_lanes, len(v_big)) + big_lanes + lanes_s + lanes_d + gf2.unit_vectors(n):
        if len(low) + len(h) >= L:
            break
        if ech.add(v):
            h.append(v)
    lines: list[int] = []
    quotient = gf2.Echelon(low + h)
    for e in gf2.unit_vectors(n):
        if len(lines) == len(g):
            break
        if quotient.add(e):
            lines.append(gf2.lift(e, low + h, g))
    offsets = low + h + lines
    if load_vector_bits is not None:
        offsets = _rows_in_order(offsets, load_vector_bits, images(dst, LANE) + images(dst, WARP) + rd, src, dst)
    if gf2.rank(offsets) != n or len(offsets) != n:
        raise LayoutError("internal: scratch layout is not a basis", src, dst)

    out_dims = src.out_dims
    offset_bases = [tuple(src.decode_out(expand(v)).values()) for v in offsets]
    block_bases = src.in_bases(BLOCK) if src.has_in_dim(BLOCK) else ()
    # Every CTA has its own buffer with the same layout; ``block`` says which piece of the
    # tile it holds (zero bases: CTAs holding copies).
    shared = LinearLayout({OFFSET: offset_bases, BLOCK: block_bases}, list(zip(out_dims, src.out_shape)))
    store = bank_cost(src, shared, elem_bits=elem_bits, vec=1 << k_src, target=target)
    load = bank_cost(dst, shared, elem_bits=elem_bits, vec=1 << k_dst, target=target)
    return SharedConversion(shared, 1 << k_src, 1 << k_dst, store, load)


def _vectors(rs: Sequence[int], rd: Sequence[int], max_k: int) -> tuple[list[int], int, int]:
    """Step 1 of the planner: ``(vector bits, store bits, load bits)`` -- the common
    register directions, extended by the side with more of its own."""
    common = gf2.Echelon(gf2.intersection(rs, rd))
    v_common = _pick(rs, lambda v: common.contains(v), max_k)
    v_common = gf2.extend_to(v_common, min(max_k, common.rank), common.basis())
    ext_s = _pick(rs, lambda v: True, max_k, start=v_common)[len(v_common):]
    ext_d = _pick(rd, lambda v: True, max_k, start=v_common)[len(v_common):]
    if len(ext_s) >= len(ext_d):
        return v_common + ext_s, len(v_common) + len(ext_s), len(v_common)
    return v_common + ext_d, len(v_common), len(v_common) + len(ext_d)


def _fixed_load_vector(rs: Sequence[int], rd: Sequence[int], k: int, max_k: int, src: LinearLayout,
                       dst: LinearLayout) -> tuple[list[int], int, int]:
    """Step 1 with the load vector given: ``dst``'s first ``k`` register directions."""
    v = list(rd[:k])
    if len(v) != k or k > max_k or gf2.rank(v) != k:
        raise LayoutError(f"the first {k} register bits of the destination are not a vector of {1 << k} "
                          f"distinct elements (at most {1 << max_k})", dst)
    held = gf2.Echelon(rs)
    k_src = 0
    while k_src < k and held.contains(v[k_src]):
        k_src += 1
    return v, k_src, k


def _rows_in_order(offsets: Sequence[int], k: int, dst_images: Sequence[int], src: LinearLayout,
                   dst: LinearLayout) -> list[int]:
    """``offsets`` with every basis vector above the load vector ``R = offsets[:k]`` moved
    into ``C``, the span of ``dst``'s other directions (its lanes, warps and higher
    registers), along ``R``: then the first element of every vector is one that ``dst``
    reaches without its vector bits, so each vector holds its elements in ``dst``'s
    register order. Each vector keeps its elements (a vector bit is only XORed in),
    so whole-vector accesses touch the same banks; narrower stores may not."""
    rows = list(offsets[:k])
    split = gf2.Echelon(rows)
    c: list[int] = []
    for v in dst_images:
        if split.add(v):
            c.append(v)
    if len(rows) + len(c) != len(offsets):
        raise LayoutError("the destination's other directions do not complement its vector", src, dst)
    basis = gf2.Echelon(rows + c)
    out = list(rows)
    for v in offsets[k:]:
        combo = basis.solve(v)
        assert combo is not None
        out.append(_combine_bits(rows + c, combo >> k << k))
    return out


def _combine_bits(vectors: Sequence[int], mask: int) -> int:
    v = 0
    for i, x in enumerate(vectors):
        if (mask >> i) & 1:
            v ^= x
    return v


def _pick(vectors: Sequence[int], ok: Callable[[int], bool], limit: int, start: Sequence[int] = ()) -> list[int]:
    """Greedily extend ``start`` with ``vectors`` (in order) that pass ``ok`` and are
    independent, up to ``limit`` vectors in all."""
    out = list(start)
    ech = gf2.Echelon(out)
    for v in vectors:
        if len(out) >= limit:
            break
        if v and ok(v) and ech.add(v):
            out.append(v)
    return out


def _cta_bits(src: LinearLayout, dst: LinearLayout) -> int:
    """Tile bits that select the CTA; both sides must split the same way, by unit bits."""
    mask = 0
    for layout in (src, dst):
        m = 0
        if layout.has_in_dim(BLOCK):
            for b in layout.in_bases(BLOCK):
                v = layout.encode_out(dict(zip(layout.out_dims, b)))
                if v & (v - 1):
                    raise LayoutError("multi-CTA conversion with a non-unit block basis is not planned yet", layout)
                m |= v
        if layout is src:
            mask = m
        elif m != mask:
            raise LayoutError("source and destination split the tile across CTAs differently", src, dst)
    return mask



# ---------------------------------------------------------------------------- rounds
# A conversion whose scratch buffer does not fit can run in rounds (Triton's "repeats"):
# every thread stores part of its registers, the CTA syncs, every thread loads the part
# of its result registers those hold, the CTA syncs, and the next round reuses the buffer.
# Each round must move the same elements on both sides, and a register's round must not
# depend on the thread, or a thread would need different registers in different threads'
# rounds. Both hold when the rounds are told apart by a subspace R of tile directions
#
# * held in registers by both layouts (R inside span(src registers) ∩ span(dst registers)),
# * independent of every lane and warp direction of either layout (R ∩ W = 0).
#
# Then T = C ⊕ R for a complement C that contains W; an element's R-part (its round) is
# a function of the register alone, and within a round the elements a side touches are
# the translate of C by that R-part. Planning a round is planning the conversion of the
# two layouts restricted to C (their registers with R-part zero, their lanes and warps as
# they are): the same problem, 2**dim(R) times smaller, with the same bank analysis since
# the lanes of a warp access the same offsets in every round. The buffer layout is that
# plan's, with R as its top offset bits.


def round_candidates(src: LinearLayout, dst: LinearLayout, avoid: Sequence[int] = ()) -> list[int]:
    """Tile directions (flat, as ``encode_out``) that can tell the rounds of a shared-memory
    conversion apart, best first, each independent of the ones before: held in registers
    by both layouts, independent of both layouts' lane, warp and block directions and of
    ``avoid`` (the vector bits of the one-round plan, so that rounds keep its vectors).

    Preferred: the destination's register bits from the last one down, then the
    source's -- the outermost register bits, Triton's repeats, which leave the low tile
    bits (vectors and bank lines) inside each round. Empty when no direction qualifies
    (e.g. a transpose whose register directions are the other side's lanes)."""
    _check_same_tile(src, dst)

    def images(layout: LinearLayout, dims: Sequence[str]) -> list[int]:
        return [layout.encode_out(dict(zip(layout.out_dims, b)))
                for d in dims if layout.has_in_dim(d) for b in layout.in_bases(d)]

    rs, rd = images(src, (REGISTER,)), images(dst, (REGISTER,))
    common = gf2.Echelon(gf2.intersection(rs, rd))
    taken = gf2.Echelon(images(src, (LANE, WARP, BLOCK)) + images(dst, (LANE, WARP, BLOCK)) + list(avoid))
    out = []
    for v in list(reversed(rd)) + list(reversed(rs)):
        if v and common.contains(v) and taken.add(v):
            out.append(v)
    return out


def rounds_qualify(src: LinearLayout, dst: LinearLayout, rounds: Sequence[int], avoid: Sequence[int] = ()) -> bool:
    """Whether the tile directions ``rounds`` can tell rounds apart (see the note above
    ``round_candidates``): independent, held in registers by both layouts, independent of
    their lane, warp and block directions and of ``avoid``."""
    def images(layout: LinearLayout, dims: Sequence[str]) -> list[int]:
        return [layout.encode_out(dict(zip(layout.out_dims, b)))
                for d in dims if layout.has_in_dim(d) for b in layout.in_bases(d)]

    if not all(_in_register_spans(src, dst, v) for v in rounds):
        return False
    taken = images(src, (LANE, WARP, BLOCK)) + images(dst, (LANE, WARP, BLOCK)) + list(avoid)
    return gf2.rank(taken + list(rounds)) == gf2.rank(taken) + len(rounds)


def plan_shared_rounds(src: LinearLayout, dst: LinearLayout, rounds: Sequence[int], *, elem_bits: int,
                       target: LayoutTarget, load_vector_bits: int | None = None) -> SharedConversion:
    """``plan_shared_conversion`` in ``2**len(rounds)`` rounds told apart by the tile
    directions ``rounds`` (from ``round_candidates``, see the note above it): the buffer
    layout's offset bits are one round's plan, then ``rounds`` in order. No rounds: the
    one-round plan itself. ``LayoutError`` when ``rounds`` do not qualify or the tile is
    split over CTAs (rounds of a cluster's tile are not planned yet)."""
    if not rounds:
        return plan_shared_conversion(src, dst, elem_bits=elem_bits, target=target,
                                      load_vector_bits=load_vector_bits)
    _check_same_tile(src, dst)
    for side in (src, dst):
        if side.has_in_dim(BLOCK) and side.in_dim_bits(BLOCK):
            raise LayoutError("rounds of a conversion split over CTAs are not planned yet", side)
    n, k = src.total_out_bits, len(rounds)
    if gf2.rank(rounds) != k or not all(_in_register_spans(src, dst, v) for v in rounds):
        raise LayoutError("round directions must be independent and held in registers by both layouts", src, dst)
    threads = gf2.basis_of(side.encode_out(dict(zip(side.out_dims, b))) for side in (src, dst)
                           for d in (LANE, WARP) for b in side.in_bases(d))
    # C: a complement of R that contains every thread direction; its basis is ordered by
    # the tile bits it comes from (projections of unit vectors along R), so the planner's
    # "lowest first" preferences mean the same in C as in the tile.
    ech = gf2.Echelon(list(rounds))
    c0 = []
    for v in threads + gf2.unit_vectors(n):
        if ech.add(v):
            c0.append(v)
    if len(c0) != n - k or len(threads) > len(c0) or c0[:len(threads)] != threads:
        raise LayoutError("a round direction is a lane or warp direction", src, dst)
    split = gf2.Echelon(c0 + list(rounds))
    c_basis: list[int] = []
    c_ech = gf2.Echelon()
    for e in gf2.unit_vectors(n):
        combo = split.solve(e)
        assert combo is not None
        c = _combine_bits(c0, combo & ((1 << (n - k)) - 1))
        if c and c_ech.add(c):
            c_basis.append(c)
    coords = gf2.Echelon(c_basis + list(rounds))

    def to_c(v: int) -> tuple[int, int]:
        """(C-coordinates, round) of tile vector ``v``."""
        combo = coords.solve(v)
        assert combo is not None
        return combo & ((1 << (n - k)) - 1), combo >> (n - k)

    def restrict(layout: LinearLayout) -> LinearLayout:
        regs: list[int] = []
        pivots = gf2.Echelon()  # the round parts of the registers kept out, and which they are
        kept_out: list[int] = []
        for b in layout.in_bases(REGISTER):
            v = layout.encode_out(dict(zip(layout.out_dims, b)))
            c, r = to_c(v)
            if r == 0:
                regs.append(c)
                continue
            combo = pivots.solve(r)
            if combo is None:
                pivots.add(r)
                kept_out.append(v)
                continue
            regs.append(to_c(v ^ _combine_bits(kept_out, combo))[0])
        bases: dict[str, list[tuple[int, ...]]] = {REGISTER: [(c,) for c in regs]}
        for d in (LANE, WARP, BLOCK):
            if layout.has_in_dim(d):
                bases[d] = [(to_c(layout.encode_out(dict(zip(layout.out_dims, b))))[0],)
                            for b in layout.in_bases(d)]
        return LinearLayout({d: bases[d] for d in layout.in_dims}, [("round", 1 << (n - k))])

    sub = plan_shared_conversion(restrict(src), restrict(dst), elem_bits=elem_bits, target=target,
                                 load_vector_bits=load_vector_bits)
    offsets = [_combine_bits(c_basis, b[0]) for b in sub.shared.in_bases(OFFSET)] + list(rounds)
    shared = LinearLayout({OFFSET: [tuple(src.decode_out(v).values()) for v in offsets],
                           BLOCK: src.in_bases(BLOCK) if src.has_in_dim(BLOCK) else ()},
                          list(zip(src.out_dims, src.out_shape)))
    return SharedConversion(shared, sub.store_vec, sub.load_vec, sub.store, sub.load, k)


def _in_register_spans(src: LinearLayout, dst: LinearLayout, v: int) -> bool:
    return all(gf2.span_contains((side.encode_out(dict(zip(side.out_dims, b))) for b in side.in_bases(REGISTER)), v)
               for side in (src, dst))
