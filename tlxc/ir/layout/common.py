"""Target-independent named layouts: blocked, slice, generic swizzled shared memory, and
the helpers that fit a per-CTA pattern onto a concrete tile shape.

Every constructor returns a ``LinearLayout`` for one tile shape. Distributed layouts have
input dims ``("register", "lane", "warp", "block")`` -- always all four, sizes may be 1,
so two distributed layouts of one tile can always be compared and converted -- and
output dims ``("dim0", ..., "dim{rank-1}")``. Shared layouts have input dims
``("offset", "block")``: ``offset`` counts elements in the buffer.

The semantics follow Triton's encodings (``BlockedEncodingAttr``, ``SliceEncodingAttr``,
``SwizzledSharedEncodingAttr`` and its ``CTALayout``) so kernels written against Triton's
mental model behave the same:

* A pattern smaller than the tile *wraps around*: extra register bits repeat it along
  the pattern's fastest dims first (``order``), exactly as Triton's blocked layout does.
* A pattern larger than the tile *broadcasts*: the largest bases of an oversized dim
  become zero, so several lanes / warps / registers hold the same element.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .linear import LayoutError, LinearLayout, log2

REGISTER, LANE, WARP, BLOCK, OFFSET = "register", "lane", "warp", "block", "offset"
DISTRIBUTED_INS = (REGISTER, LANE, WARP, BLOCK)


def dim_names(rank: int) -> tuple[str, ...]:
    """The standard output dims of a rank-``rank`` tile: ``dim0`` ... ``dim{rank-1}``."""
    return tuple(f"dim{i}" for i in range(rank))


def identity_standard(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """``in_dim`` enumerates ``shape`` with ``order[0]`` fastest (Triton's ``order``).

    The output dims are listed in ``order`` (minor first); callers that need the standard
    ``dim0..`` order call ``transpose_outs``.
    """
    _check_order(order, len(shape))
    names = dim_names(len(shape))
    out = LinearLayout.empty()
    for d in order:
        out = out * LinearLayout.identity_1d(shape[d], in_dim, names[d])
    return out


def with_standard_ins(layout: LinearLayout, ins: Sequence[str] = DISTRIBUTED_INS) -> LinearLayout:
    """Add missing input dims (size 1) and put them in the standard order."""
    for name in ins:
        if not layout.has_in_dim(name):
            layout = layout.resize_in(name, 1)
    extra = [n for n in layout.in_dims if n not in ins]
    if extra:
        raise LayoutError(f"unexpected input dims {extra}", layout)
    return layout.transpose_ins(list(ins))


@dataclass(frozen=True)
class CTALayout:
    """How a tile is split over the CTAs of a cluster (Triton's ``CTALayoutAttr``).

    ``cta_split_num[d]`` CTAs each own a distinct 1/split of dim ``d``;
    ``ctas_per_cga[d] / cta_split_num[d]`` more CTAs along ``d`` hold copies (broadcast).
    ``cta_order`` lists dims fastest first. ``CTALayout.single(rank)`` is the one-CTA case.
    """

    ctas_per_cga: tuple[int, ...]
    cta_split_num: tuple[int, ...]
    cta_order: tuple[int, ...]

    @staticmethod
    def single(rank: int) -> CTALayout:
        return CTALayout((1,) * rank, (1,) * rank, tuple(reversed(range(rank))))

    def layout(self) -> LinearLayout:
        """``block`` -> tile coordinates of the CTA's piece (dims in standard order)."""
        rank = len(self.cta_order)
        _check_order(self.cta_order, rank)
        names = dim_names(rank)
        out = LinearLayout.empty()
        for d in self.cta_order:
            split, ctas = self.cta_split_num[d], self.ctas_per_cga[d]
            if ctas % split:
                raise LayoutError(f"ctas_per_cga[{d}]={ctas} is not a multiple of cta_split_num[{d}]={split}")
            out = out * LinearLayout.identity_1d(split, BLOCK, names[d])
            out = out * LinearLayout.zeros_1d(ctas // split, BLOCK, names[d])
        return out.transpose_outs(list(names))


def shape_per_cta(shape: Sequence[int], cta: CTALayout | None) -> tuple[int, ...]:
    """The piece of ``shape`` one CTA owns (the whole tile without a split)."""
    if cta is None:
        return tuple(shape)
    return tuple(max(1, s // k) for s, k in zip(shape, cta.cta_split_num))


def ensure_not_larger(layout: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """Shrink each output dim to ``shape`` by zeroing its largest bases first.

    Zeroed bits become broadcast: the lanes (or registers, warps) that used to reach past
    the tile now hold copies. Every basis of a distributed pattern is a power of two in
    one dim, so zeroing the largest ones leaves exactly the first ``shape[d]`` values.
    """
    bases = {n: [list(b) for b in bs] for n, bs in layout.bases.items()}
    for j, (out_name, size) in enumerate(zip(layout.out_dims, layout.out_shape)):
        want = shape[out_name]
        if size <= want:
            continue
        found = [(bs[i][j], name, i) for name, bs in bases.items() for i in range(len(bs)) if bs[i][j]]
        # Largest first; among equals, the later input dim first (mirrors Triton).
        order = {n: k for k, n in enumerate(layout.in_dims)}
        found.sort(key=lambda t: (t[0], order[t[1]], t[2]), reverse=True)
        for value, name, i in found:
            if size <= want:
                break
            if value & (value - 1):
                raise LayoutError(f"cannot shrink {out_name}: basis value {value} is not a power of two", layout)
            bases[name][i][j] = 0
            size >>= 1
    new_outs = [(n, min(s, shape[n])) for n, s in zip(layout.out_dims, layout.out_shape)]
    return LinearLayout({n: [tuple(b) for b in bs] for n, bs in bases.items()}, new_outs)


def ensure_not_smaller(layout: LinearLayout, shape: dict[str, int],
                       out_order: Sequence[str] | None = None) -> LinearLayout:
    """Grow each output dim to ``shape`` by adding bits to the first input dim
    (``register`` or ``offset``): the pattern repeats, dims in ``out_order`` (default:
    the layout's output order) being filled first."""
    in_dim = layout.in_dims[0]
    out = layout
    for name in out_order or layout.out_dims:
        have, want = layout.out_dim_size(name), shape[name]
        if want > have:
            if want % have:
                raise LayoutError(f"{name}: tile size {want} is not a multiple of pattern size {have}", layout)
            out = out * LinearLayout.identity_1d(want // have, in_dim, name)
    return out


def fit_to_shape(cta_pattern: LinearLayout, shape: Sequence[int], cta: CTALayout | None = None) -> LinearLayout:
    """Place a per-CTA pattern (inputs register/lane/warp, or offset) on a tile.

    The CTA split takes its share of the tile first; the pattern is then repeated or
    clipped to the per-CTA piece; the result has the standard output order.
    """
    rank = len(shape)
    names = dim_names(rank)
    if sorted(cta_pattern.out_dims) != sorted(names):
        raise LayoutError(f"pattern has outputs {cta_pattern.out_dims}, expected {names}", cta_pattern)
    for s in shape:
        log2(s)
    cta = cta or CTALayout.single(rank)
    labeled = dict(zip(names, shape))
    cga = ensure_not_larger(cta.layout(), labeled).transpose_outs(list(cta_pattern.out_dims))
    per_cta = {n: max(1, labeled[n] // cga.out_dim_size(n)) for n in names}
    inner = ensure_not_larger(ensure_not_smaller(cta_pattern, per_cta), per_cta)
    out = (inner * cga).transpose_outs(list(names))
    for n in names:
        if out.out_dim_size(n) != labeled[n]:
            raise LayoutError(f"internal: {n} has size {out.out_dim_size(n)} after fitting, expected {labeled[n]}", out)
    return out


def blocked(shape: Sequence[int], size_per_thread: Sequence[int], threads_per_warp: Sequence[int],
            warps_per_cta: Sequence[int], order: Sequence[int], cta: CTALayout | None = None) -> LinearLayout:
    """Triton's blocked layout: each thread holds a ``size_per_thread`` block, lanes then
    warps tile the CTA, all enumerated with ``order[0]`` fastest.

    The product of ``threads_per_warp`` is the warp size (a target fact the caller
    supplies). Tiles larger than the CTA pattern wrap around through registers; smaller
    tiles broadcast (see the module docstring). Layouts are immutable, so results are
    memoized: layout assignment asks for the same few layouts many times.
    """
    return _blocked(tuple(shape), tuple(size_per_thread), tuple(threads_per_warp), tuple(warps_per_cta),
                    tuple(order), cta)


@lru_cache(maxsize=4096)
def _blocked(shape: tuple[int, ...], size_per_thread: tuple[int, ...], threads_per_warp: tuple[int, ...],
             warps_per_cta: tuple[int, ...], order: tuple[int, ...], cta: CTALayout | None) -> LinearLayout:
    rank = len(shape)
    for name, v in (("size_per_thread", size_per_thread), ("threads_per_warp", threads_per_warp),
                    ("warps_per_cta", warps_per_cta), ("order", order)):
        if len(v) != rank:
            raise LayoutError(f"blocked: {name} has {len(v)} entries for a rank-{rank} tile")
    pattern = (identity_standard(REGISTER, size_per_thread, order)
               * identity_standard(LANE, threads_per_warp, order)
               * identity_standard(WARP, warps_per_cta, order))
    return with_standard_ins(fit_to_shape(pattern, shape, cta))


def slice_layout(parent: LinearLayout, dim: int) -> LinearLayout:
    """The layout of a tile with dim ``dim`` of ``parent`` removed (a reduction result,
    or the operand of ``expand_dims``): Triton's ``SliceEncodingAttr``.

    Each thread keeps the elements it held, projected: inputs that used to step along
    ``dim`` now step nowhere. For lanes and warps that means broadcast (zero bases);
    register bits that became zero are dropped, since a thread need not keep copies of
    its own values. Remaining output dims are renamed ``dim0``.. in order.
    """
    rank = parent.num_out_dims
    if not 0 <= dim < rank:
        raise LayoutError(f"slice: dim {dim} out of range for rank {rank}", parent)
    names = dim_names(rank)
    if tuple(parent.out_dims) != names:
        raise LayoutError(f"slice: parent outputs {parent.out_dims} are not the standard {names}", parent)
    keep = [n for i, n in enumerate(names) if i != dim]
    out = parent.sublayout(parent.in_dims, keep)
    if out.has_in_dim(REGISTER):
        out = out.drop_zero_bases(REGISTER)
    return out.rename(outs={old: new for old, new in zip(keep, dim_names(rank - 1))})


def swizzled_shared(shape: Sequence[int], vec: int, per_phase: int, max_phase: int, order: Sequence[int],
                    cta: CTALayout | None = None) -> LinearLayout:
    """Triton's ``SwizzledSharedEncodingAttr``: ``offset`` -> tile coordinates.

    Row-major along ``order`` (``order[0]`` contiguous); within the two fastest dims the
    ``vec``-element chunk of column ``c`` in row ``r`` is stored at chunk
    ``(c // vec) ^ ((r // per_phase) % max_phase)`` (modulo the row's chunk count).
    XOR with a value that depends only on the row is linear over GF(2), which is why a
    swizzled buffer is just another ``LinearLayout``; its inverse (tile -> offset) is
    what address computation uses.
    """
    return _swizzled_shared(tuple(shape), vec, per_phase, max_phase, tuple(order), cta)


@lru_cache(maxsize=1024)
def _swizzled_shared(shape: tuple[int, ...], vec: int, per_phase: int, max_phase: int, order: tuple[int, ...],
                     cta: CTALayout | None) -> LinearLayout:
    rank = len(shape)
    _check_order(order, rank)
    for v in (vec, per_phase, max_phase):
        log2(v)
    names = dim_names(rank)
    full_shape, shape = tuple(shape), shape_per_cta(shape, cta)
    if rank == 1:
        pattern = LinearLayout.identity_1d(shape[0], OFFSET, names[0])
    else:
        col, row = order[0], order[1]
        ncols, nrows = shape[col], shape[row]
        bases = [(0, 1 << i) for i in range(log2(ncols))]
        for i in range(log2(nrows)):
            r = 1 << i
            bases.append((r, (vec * ((r // per_phase) % max_phase)) % ncols))
        pattern = LinearLayout({OFFSET: bases}, {names[row]: nrows, names[col]: ncols})
        for d in order[2:]:
            pattern = pattern * LinearLayout.identity_1d(shape[d], OFFSET, names[d])
    return with_standard_ins(fit_to_shape(pattern, full_shape, cta), (OFFSET, BLOCK))


def _check_order(order: Sequence[int], rank: int) -> None:
    if sorted(order) != list(range(rank)):
        raise LayoutError(f"order {list(order)} is not a permutation of range({rank})")


@lru_cache(maxsize=4096)
def all_register_coords(layout: LinearLayout) -> tuple[tuple[int, ...], ...]:
    """The constant part of every register's coordinate, per output dim: ``L(r, 0, 0)``.
    Register ``r``'s coordinate is the XOR of the register bases of ``r``'s set bits, so
    each is one XOR away from that of ``r`` without its lowest bit. (A thread's element
    ``r`` is this XOR the lane and warp part, which code generators compute at run time.)"""
    bases = layout.in_bases("register") if "register" in layout.in_dims else ()
    coords = [tuple(0 for _ in layout.out_dims)]
    for r in range(1, 1 << len(bases)):
        low = (r & -r).bit_length() - 1
        prev = coords[r & (r - 1)]
        coords.append(tuple(a ^ b for a, b in zip(prev, bases[low])))
    return tuple(coords)


@lru_cache(maxsize=4096)
def thread_terms(layout: LinearLayout, dim: int) -> tuple[tuple[str, int, int], ...]:
    """The runtime part of a thread's coordinates along output dim ``dim``: the
    ``(input dim, bit, value)`` of every lane and warp basis that moves along it. A thread's
    ``L(0, lane, warp)`` there is the XOR of ``value`` over the terms whose ``bit`` is set
    in its lane / warp index (empty: every thread has 0)."""
    name = f"dim{dim}"
    k = layout.out_dims.index(name)
    return tuple((src, bit, basis[k]) for src in (LANE, WARP) if layout.has_in_dim(src)
                 for bit, basis in enumerate(layout.in_bases(src)) if basis[k])
