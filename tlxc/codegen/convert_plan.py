"""The pure half of ``convert_layout``: what moves a conversion from one distributed
layout to another needs, computed from the two linear layouts and the planner's answer
(``conversion.plan_conversion``) -- no emitter. ``lower_convert`` emits them; tests
evaluate the answers for every thread and register and check them against the layouts.

Addresses and shuffle lanes are, as in ``Emitter.thread_coords``, a constant per register
XOR a per-thread value that is linear in the bits of ``%tid.x`` (lane bits, then warp
bits): ``ThreadXor``.

* ``RegisterMove`` -- result register ``r`` is an operand register, possibly chosen per
  thread (``selp``);
* ``ShuffleMove`` -- one ``shfl.sync.idx`` round per result register;
* ``SharedMove`` -- both sides of a round trip through the planner's swizzled scratch
  buffer (``SharedSide``: vector accesses, their offsets and registers).

A register or shuffle move whose register choice would take more than
``MAX_SELECT_BITS`` predicates goes through shared memory instead; ``plan_move`` answers
None for pairs the planner does not cover (a tile split over CTAs, a layout without a
whole warp of lanes).

Rounds. Given a scratch budget, a ``SharedMove`` whose buffer exceeds it is split into
``2**round_bits`` rounds (``split_rounds``, from ``conversion.plan_shared_rounds``): the
top offset bits of its buffer layout name the round, and one round's buffer is reused
by the next. A pair with too few round directions keeps fewer rounds than it needs,
and the kernel's shared-memory check then reports it (TLXC-RESOURCE-001).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..ir.layout import gf2
from ..ir.layout.common import BLOCK, LANE, OFFSET, REGISTER, WARP
from ..ir.layout.conversion import (
    ConversionKind,
    SharedConversion,
    plan_conversion,
    plan_shared_conversion,
    plan_shared_rounds,
    round_candidates,
)
from ..ir.layout.linear import LayoutError, LinearLayout
from ..ir.layout.target import LayoutTarget

# Bits each register class takes in the scratch buffer: a predicate is one byte, 8-bit
# integers keep their 16-bit register (they live sign- or zero-extended in it).
ELEM_BITS = {"pred": 8, "b16": 16, "b32": 32, "f32": 32, "b64": 64, "f64": 64}
# A select over 2**k registers costs 2**k - 1 ``selp`` per value; beyond this many
# thread-dependent register bits a shuffle is not worth it and shared memory is used.
MAX_SELECT_BITS = 2


@dataclass(frozen=True)
class ThreadXor:
    """A value linear in the thread's bits: the XOR of ``terms[i]`` over the set bits
    ``i`` of ``%tid.x`` (the lane's bits first, then the warp's)."""

    terms: tuple[int, ...]

    def at(self, tid: int) -> int:
        v = 0
        for i, t in enumerate(self.terms):
            if (tid >> i) & 1:
                v ^= t
        return v

    @property
    def mask(self) -> int:
        """Every bit the value can have."""
        m = 0
        for t in self.terms:
            m |= t
        return m

    def selects(self) -> tuple[list[int], list[int]]:
        """``(gens, masks)`` with ``at(tid) == XOR of gens[j] over j where tid & masks[j]
        has odd parity``: how many predicates (``len(gens)``) choosing among values
        indexed by this value takes."""
        ech = gf2.Echelon()
        gens: list[int] = []
        for t in self.terms:
            if ech.add(t):
                gens.append(t)
        basis = gf2.Echelon(gens)
        masks = [0] * len(gens)
        for i, t in enumerate(self.terms):
            combo = basis.solve(t)
            assert combo is not None
            for j in range(len(gens)):
                if (combo >> j) & 1:
                    masks[j] |= 1 << i
        return gens, masks


def combine(gens: Sequence[int], c: int) -> int:
    """The XOR of ``gens[j]`` over the set bits ``j`` of ``c``."""
    v = 0
    for j, g in enumerate(gens):
        if (c >> j) & 1:
            v ^= g
    return v


@dataclass(frozen=True)
class NoMove:
    """The layouts are equal."""


@dataclass(frozen=True)
class RegisterMove:
    """Result register ``r`` is operand register ``sources[r] ^ thread.at(tid)``."""

    sources: tuple[int, ...]
    thread: ThreadXor


@dataclass(frozen=True)
class ShuffleMove:
    """Rounds ``k`` (one per result register): every lane sends its operand register
    ``send[k] ^ send_thread.at(tid)`` and reads the value of lane ``lane[k] ^
    lane_thread.at(tid)`` of its own warp; result register ``r`` is what round
    ``r ^ place_thread.at(tid)`` read.

    With ``place_thread`` zero (the usual case) round ``k`` fills register ``k``. It is
    not zero when two lanes read from one lane different registers in the same round --
    a transpose between a register bit and a lane bit: the rounds are then permuted per
    thread so that every sender sends one register per round.
    """

    send: tuple[int, ...]
    send_thread: ThreadXor
    lane: tuple[int, ...]
    lane_thread: ThreadXor
    place_thread: ThreadXor


@dataclass(frozen=True)
class SharedSide:
    """One side of a shared-memory round trip: register ``r`` of thread ``tid`` lives at
    element offset ``offsets[r] ^ thread.at(tid)``; accesses move ``vec`` elements."""

    vec: int
    offsets: tuple[int, ...]
    thread: ThreadXor

    @property
    def address_thread(self) -> ThreadXor:
        """The thread's part of a vector's first offset."""
        return ThreadXor(tuple(t & ~(self.vec - 1) for t in self.thread.terms))

    @property
    def slot_thread(self) -> ThreadXor:
        """The thread's part inside a vector: it permutes the registers of a vector."""
        return ThreadXor(tuple(t & (self.vec - 1) for t in self.thread.terms))

    def groups(self) -> list[tuple[int, int, tuple[int, ...]]]:
        """The vector accesses, as ``(runtime, immediate, registers)``: the access covers
        offsets ``(runtime ^ address_thread.at(tid)) + immediate + i``, ``i < vec``, and
        offset ``i`` holds ``registers[i ^ slot_thread.at(tid)]``. ``runtime`` keeps the
        bits that the thread's part can flip (XORed at run time); the others become the
        instruction's immediate offset. A register holding an element twice is left out."""
        by_base: dict[int, list[int | None]] = {}
        for r, c in enumerate(self.offsets):
            slots = by_base.setdefault(c & ~(self.vec - 1), [None] * self.vec)
            if slots[c & (self.vec - 1)] is None:
                slots[c & (self.vec - 1)] = r
        mt = self.address_thread.mask
        out = []
        for base, slots in by_base.items():
            if any(s is None for s in slots):
                raise LayoutError(f"internal: a vector of {self.vec} elements at offset {base} is not held by one "
                                  "thread")
            out.append((base & mt, base & ~mt, tuple(s for s in slots if s is not None)))
        return out


@dataclass(frozen=True)
class SharedMove:
    """Through the scratch buffer laid out by ``shared`` (``offset`` -> tile), of
    ``size`` elements of ``elem_bits`` each. Only threads with no bit of
    ``copies`` set store: the others hold copies of what those hold (lanes or warps
    that broadcast, or step where registers already do)."""

    shared: LinearLayout
    size: int
    elem_bits: int
    store: SharedSide
    load: SharedSide
    copies: int = 0
    # in ``2**round_bits`` rounds: the top offset bits of ``shared`` (of a register's
    # constant offset; the thread's part has none) are its round
    round_bits: int = 0

    @property
    def rounds(self) -> int:
        return 1 << self.round_bits

    @property
    def round_size(self) -> int:
        """Elements of one round's buffer (the scratch it needs)."""
        return self.size >> self.round_bits

    def round_of(self, offset: int) -> int:
        """The round in which the element at buffer offset ``offset`` travels."""
        return offset // self.round_size

    def first_copies(self, loaded: list) -> list:
        """The destination registers from ``loaded`` (what each register's load gave, or
        None where a register was not loaded): one holding an element a second time takes
        the first one's value."""
        first: dict[int, object] = {}
        for r, c in enumerate(self.load.offsets):
            if loaded[r] is not None:
                first.setdefault(c, loaded[r])
        return [first[c] for c in self.load.offsets]


Move = NoMove | RegisterMove | ShuffleMove | SharedMove


def plan_move(src: LinearLayout, dst: LinearLayout, *, elem_bits: int, target: LayoutTarget,
              budget: int | None = None) -> Move | None:
    """What the lowering emits for a conversion from ``src`` to ``dst`` (None: the
    row-major fallback). ``budget``: the bytes of scratch available; a shared-memory
    move that needs more runs in rounds where the layouts allow."""
    if not supported(src, dst, target):
        return None
    try:
        plan = plan_conversion(src, dst, elem_bits=elem_bits, target=target)
    except LayoutError:
        return None
    kind, cmap = plan.kind, plan.map
    if kind is ConversionKind.NONE:
        return NoMove()
    if kind is ConversionKind.REGISTERS and cmap is not None:
        move = register_move(cmap)
        if len(move.thread.selects()[0]) <= MAX_SELECT_BITS:
            return move
    if kind is ConversionKind.WARP_SHUFFLE and cmap is not None:
        shuffle = shuffle_move(cmap)
        if shuffle is not None:
            return shuffle
    if kind is ConversionKind.CROSS_CTA:
        return None
    try:
        shared = plan.shared or plan_shared_conversion(src, dst, elem_bits=elem_bits, target=target)
    except LayoutError:
        return None
    if budget is not None:
        shared = split_rounds(src, dst, shared, elem_bits=elem_bits, target=target, budget=budget)
    return shared_move(src, dst, shared, elem_bits)


def rounds_needed(nbytes: int, budget: int) -> int:
    """The fewest round bits that bring ``nbytes`` (a power of two) within ``budget``."""
    k = 0
    while k < 62 and nbytes >> k > max(budget, 0):
        k += 1
    return k


def split_rounds(src: LinearLayout, dst: LinearLayout, plan: SharedConversion, *, elem_bits: int,
                 target: LayoutTarget, budget: int, load_vector_bits: int | None = None,
                 rounds: Sequence[int] | None = None) -> SharedConversion:
    """``plan`` itself when its buffer fits ``budget`` bytes, else the plan in as many
    rounds as it takes -- or as the layouts allow (``round_candidates``; ``rounds``: the
    candidates, when the caller restricts them). The rounds avoid the one-round plan's
    vector bits, so they keep its vectors."""
    size = 1 << plan.shared.in_dim_bits(OFFSET)
    need = rounds_needed(size * elem_bits // 8, budget)
    if not need:
        return plan
    vec_bits = max(plan.store_vec, plan.load_vec).bit_length() - 1
    avoid = [plan.shared.apply_flat(1 << i) for i in range(vec_bits)]
    if rounds is None:
        rounds = round_candidates(src, dst, avoid)
        if len(rounds) < need:
            # too few directions keep the one-round plan's vectors (a wgmma accumulator's
            # 16-byte stores span its rows 0 and 8, the only direction both layouts hold in
            # registers): rounds with vectors of their own, rather than a buffer over budget
            own = round_candidates(src, dst)
            if len(own) >= need:
                try:
                    return plan_shared_rounds(src, dst, own[:need], elem_bits=elem_bits, target=target,
                                              load_vector_bits=load_vector_bits)
                except LayoutError:
                    pass
    while need > 0:
        try:
            return plan_shared_rounds(src, dst, list(rounds)[:need], elem_bits=elem_bits, target=target,
                                      load_vector_bits=load_vector_bits)
        except LayoutError:  # a restricted pair the planner cannot place: fewer rounds
            need -= 1
    return plan


def supported(src: LinearLayout, dst: LinearLayout, target: LayoutTarget) -> bool:
    """Whether the planner's moves apply: one CTA's tile, whole warps of lanes, the same
    warps on both sides."""
    for side in (src, dst):
        if tuple(side.in_dims) != (REGISTER, LANE, WARP, BLOCK):
            return False
        # %tid.x's low bits are the lane only when the layout has a whole warp of lanes
        if side.in_dim_size(LANE) != target.warp_size:
            return False
        if side.in_dim_size(BLOCK) != 1:  # one CTA's tile; clusters are planned later
            return False
    return src.in_dim_size(WARP) == dst.in_dim_size(WARP)


def _thread_terms(cmap: LinearLayout, pick: Callable[[tuple[int, ...]], int]) -> ThreadXor:
    return ThreadXor(tuple(pick(b) for d in (LANE, WARP) for b in cmap.in_bases(d)))


def register_move(cmap: LinearLayout) -> RegisterMove:
    """From the plan's map for a ``REGISTERS`` conversion (lanes and warps kept)."""
    reg = cmap.out_dims.index(REGISTER)
    sources = tuple(cmap.apply_flat(r) & (cmap.out_dim_size(REGISTER) - 1)
                    for r in range(cmap.in_dim_size(REGISTER)))
    return RegisterMove(sources, _thread_terms(cmap, lambda b: b[reg]))


def shuffle_move(cmap: LinearLayout) -> ShuffleMove | None:
    """From the plan's map ``C`` for a ``WARP_SHUFFLE`` conversion (warps kept), or None
    when the register selects it needs are too many.

    Write ``C(register y) = (A y, P y)`` and ``C(lane x) = (B x, Q x)`` as (operand
    register, operand lane). Round ``k`` serves, in thread ``x``, result register
    ``k ^ T x``: it needs operand register ``A k ^ A T x ^ B x`` from lane
    ``P k ^ P T x ^ Q x``. One shuffle can serve a round only if a lane's register
    follows from the lane it is read by: on ``U = {(A T x ^ B x, P T x ^ Q x)}`` the
    register part must be a function ``R`` of the lane part. ``T`` is built lane bit by
    lane bit: ``0`` when that keeps ``U`` consistent, else the first register bit that
    does (one whose lane part is new).
    Lane ``s`` then sends ``A k ^ R(P k) ^ R(s)`` in round ``k``; warp bits add terms of
    their own to both sides (a warp reads only from itself).
    """
    reg, lane, warp = (cmap.out_dims.index(d) for d in (REGISTER, LANE, WARP))
    nsr = cmap.out_dim_bits(REGISTER)
    ndr = cmap.in_dim_bits(REGISTER)
    a = [b[reg] for b in cmap.in_bases(REGISTER)]
    p = [b[lane] for b in cmap.in_bases(REGISTER)]

    def img(vs: Sequence[int], y: int) -> int:
        return combine(vs, y)

    us: list[tuple[int, int]] = []  # (lane part, register part) per lane bit
    place: list[int] = []
    for b in cmap.in_bases(LANE):
        for y in [0] + [1 << j for j in range(ndr)]:
            u = (b[lane] ^ img(p, y), b[reg] ^ img(a, y))
            if _consistent(us + [u], nsr):
                us.append(u)
                place.append(y)
                break
        else:
            return None
    for i, b in enumerate(cmap.in_bases(WARP)):
        if b[warp] != 1 << i:
            return None
    # R: lane -> operand register, defined on the lane parts of U (zero on a complement)
    nl = cmap.in_dim_bits(LANE)
    ech = gf2.Echelon([ln for ln, _ in us] + gf2.unit_vectors(nl))
    regs_of = [r for _, r in us] + [0] * nl

    def r_of(ln: int) -> int:
        combo = ech.solve(ln)
        assert combo is not None
        return combine(regs_of, combo)

    ks = range(cmap.in_dim_size(REGISTER))
    send = tuple(img(a, k) ^ r_of(img(p, k)) for k in ks)
    lanes = tuple(img(p, k) for k in ks)
    warps = cmap.in_bases(WARP)
    send_thread = ThreadXor(tuple(r_of(1 << i) for i in range(nl))
                            + tuple(r_of(b[lane]) ^ b[reg] for b in warps))
    lane_thread = ThreadXor(tuple(ln for ln, _ in us) + tuple(b[lane] for b in warps))
    place_thread = ThreadXor(tuple(place) + (0,) * len(warps))
    if max(len(send_thread.selects()[0]), len(place_thread.selects()[0])) > MAX_SELECT_BITS:
        return None
    return ShuffleMove(send, send_thread, lanes, lane_thread, place_thread)


def _consistent(us: Sequence[tuple[int, int]], reg_bits: int) -> bool:
    """Whether the register parts are a linear function of the lane parts."""
    return gf2.rank((ln << reg_bits) | r for ln, r in us) == gf2.rank(ln for ln, _ in us)


def shared_move(src: LinearLayout, dst: LinearLayout, plan: SharedConversion, elem_bits: int) -> SharedMove:
    """Addresses of both sides under the planned buffer layout: the offset of an element
    is ``shared⁻¹`` of it, linear, so a register's offset is its constant part XOR the
    thread's part."""
    shared = plan.shared
    inv = shared.invert()
    bits = shared.in_dim_bits(OFFSET)

    def offset(layout: LinearLayout, x: int) -> int:
        return inv.apply_flat(layout.apply_flat(x)) & ((1 << bits) - 1)

    def side(layout: LinearLayout, vec: int) -> SharedSide:
        offs = tuple(offset(layout, r) for r in range(layout.in_dim_size(REGISTER)))
        nr = layout.in_dim_bits(REGISTER)
        thread = ThreadXor(tuple(offset(layout, 1 << (nr + i))
                                 for i in range(layout.in_dim_bits(LANE) + layout.in_dim_bits(WARP))))
        # The planner's vectors are register-held. Its line bits may still move a thread
        # inside a vector (they are lifted into a complement that mixes in vector
        # directions); then the order of a vector's registers depends on the thread and
        # ``selp`` puts them in place -- unless that takes too many, then narrower vectors.
        while vec > 1:
            s = SharedSide(vec, offs, thread)
            if len(s.slot_thread.selects()[0]) <= MAX_SELECT_BITS:
                try:
                    s.groups()
                    return s
                except LayoutError:
                    pass
            vec //= 2
        return SharedSide(1, offs, thread)

    free = src.free_variable_masks()
    copies = free[LANE] | (free[WARP] << src.in_dim_bits(LANE))
    return SharedMove(shared, 1 << bits, elem_bits, side(src, plan.store_vec), side(dst, plan.load_vec), copies,
                      plan.round_bits)
