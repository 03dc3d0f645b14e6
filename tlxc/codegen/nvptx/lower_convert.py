"""``convert_layout``: moving a tile from one distributed layout to another, the way
``conversion.plan_conversion`` says it must travel.

* ``NONE`` -- the layouts are equal: the result is the operand's registers.
* ``REGISTERS`` -- every thread already holds what it needs: the result's registers are
  the operand's, renamed. Where the register a thread needs depends on its lane or warp
  (the plan's map sends a lane bit to a lane bit plus registers), ``selp`` picks it.
* ``WARP_SHUFFLE`` -- data crosses lanes, not warps: one ``shfl.sync.idx`` round per
  result register (two 16-bit values, or up to 32 predicates, share a round; a 64-bit
  value takes two), see ``ShuffleMove``.
* ``SHARED_MEMORY`` -- data crosses warps: a barrier (the scratch area is shared with the
  ops before), vectorized ``st.shared`` into the planner's swizzled buffer, a barrier,
  vectorized ``ld.shared``; see ``SharedMove``.

Everything is computed from linear maps, so addresses and shuffle lanes are, as in
``Emitter.thread_coords``, a constant per register XOR a per-thread value that is linear
in the bits of ``%tid.x`` (lane bits, then warp bits): ``ThreadXor``. The per-thread
values and predicates are computed once, in the kernel's prologue.

A register or shuffle move whose register choice would take more than
``MAX_SELECT_BITS`` predicates goes through shared memory instead. A pair the planner
does not cover (a tile split over CTAs, a layout without a whole warp of lanes) takes
the first version's path: a row-major shared-memory round trip with scalar accesses
(``_legacy``), correct for any pair of distributed layouts of one tile; planning
``block`` bits (distributed shared memory) would lift that.

The ``plan_move`` half of this module is pure (no emitter): tests evaluate its answers
for every thread and register and check them against the layouts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout import gf2
from ...ir.layout.common import BLOCK, LANE, OFFSET, REGISTER, WARP
from ...ir.layout.conversion import ConversionKind, SharedConversion, plan_conversion, plan_shared_conversion
from ...ir.layout.linear import LayoutError, LinearLayout, log2
from ...ir.layout.target import LayoutTarget
from .emitter import Emitter, lowers, register_coords
from .ptx import Reg, reg_class

# Bits each register class takes in the scratch buffer: a predicate is one byte, 8-bit
# integers keep their 16-bit register (they live sign- or zero-extended in it).
ELEM_BITS = {"pred": 8, "b16": 16, "b32": 32, "f32": 32, "b64": 64, "f64": 64}
# A select over 2**k registers costs 2**k - 1 ``selp`` per value; beyond this many
# thread-dependent register bits a shuffle is not worth it and shared memory is used.
MAX_SELECT_BITS = 2


# ============================================================================ planning
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


def _combine(gens: Sequence[int], c: int) -> int:
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


Move = NoMove | RegisterMove | ShuffleMove | SharedMove


def plan_move(src: LinearLayout, dst: LinearLayout, *, elem_bits: int, target: LayoutTarget) -> Move | None:
    """What the lowering emits for a conversion from ``src`` to ``dst`` (None: the
    row-major fallback)."""
    if not _supported(src, dst, target):
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
    return shared_move(src, dst, shared, elem_bits)


def _supported(src: LinearLayout, dst: LinearLayout, target: LayoutTarget) -> bool:
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
        return _combine(vs, y)

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
        return _combine(regs_of, combo)

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
    return SharedMove(shared, 1 << bits, elem_bits, side(src, plan.store_vec), side(dst, plan.load_vec), copies)


# ============================================================================ lowering
@lowers(ops.ConvertLayoutOp)
def convert_layout(e: Emitter, op: Operation) -> None:
    src = e.get(op.operands[0])
    dst = op.result.type.layout
    cls = reg_class(op.result.type.scalar)
    t = e.target
    target = LayoutTarget(t.warp_size, t.shared_banks, t.bank_bytes, t.max_vector_bytes)
    move = plan_move(src.layout, dst, elem_bits=ELEM_BITS[cls], target=target)
    match move:
        case NoMove():
            e.set(op.result, list(src.regs))
        case RegisterMove():
            e.set(op.result, _registers(e, cls, src.regs, move))
        case ShuffleMove():
            e.set(op.result, _shuffle(e, cls, src.regs, move))
        case SharedMove():
            e.set(op.result, _shared(e, cls, src.regs, move))
        case _:
            e.set(op.result, _legacy(e, op, src.layout, src.regs))


# -- per-thread values, computed once in the prologue ------------------------------------------
def _thread_value(e: Emitter, tx: ThreadXor, scale: int = 1) -> Reg | int:
    """``tx.at(%tid.x) * scale`` (``scale`` a power of two); 0 when it is always 0."""
    terms = [t * scale for t in tx.terms]
    if not any(terms):
        return 0
    key = f"convert.tx:{terms}"
    if key in e._special:
        return e._special[key]
    tid = e.special("tid")
    acc: Reg | None = None
    i = 0
    while i < len(terms):
        c = terms[i]
        if not c:
            i += 1
            continue
        t = e.fn.reg("b32")
        if c & (c - 1) == 0:
            # a run of bits that land on consecutive bits: one bit-field extract and a shift
            j = i + 1
            while j < len(terms) and terms[j] == c << (j - i):
                j += 1
            e.prologue.append(f"\tbfe.u32 {t}, {tid}, {i}, {j - i};")
            if c > 1:
                e.prologue.append(f"\tshl.b32 {t}, {t}, {log2(c)};")
            i = j
        else:
            e.prologue.append(f"\tbfe.u32 {t}, {tid}, {i}, 1;")
            e.prologue.append(f"\tmul.lo.u32 {t}, {t}, {c};")
            i += 1
        if acc is None:
            acc = t
        else:
            e.prologue.append(f"\txor.b32 {acc}, {acc}, {t};")
    assert acc is not None
    e._special[key] = acc
    return acc


def _parity(e: Emitter, mask: int) -> Reg:
    """A predicate: whether ``%tid.x & mask`` has an odd number of bits."""
    key = f"convert.parity:{mask}"
    if key in e._special:
        return e._special[key]
    tid = e.special("tid")
    p = e.fn.reg("pred")
    t = e.fn.reg("b32")
    e.prologue.append(f"\tand.b32 {t}, {tid}, {mask};")
    if mask & (mask - 1):
        e.prologue.append(f"\tpopc.b32 {t}, {t};")
        e.prologue.append(f"\tand.b32 {t}, {t}, 1;")
    e.prologue.append(f"\tsetp.ne.u32 {p}, {t}, 0;")
    e._special[key] = p
    return p


def _owner(e: Emitter, mask: int) -> Reg:
    """A predicate: whether ``%tid.x & mask`` is zero."""
    key = f"convert.owner:{mask}"
    if key not in e._special:
        tid = e.special("tid")
        p, t = e.fn.reg("pred"), e.fn.reg("b32")
        e.prologue.append(f"\tand.b32 {t}, {tid}, {mask};")
        e.prologue.append(f"\tsetp.eq.u32 {p}, {t}, 0;")
        e._special[key] = p
    return e._special[key]


def _select(e: Emitter, cls: str, values: Sequence[Reg], preds: Sequence[Reg]) -> Reg:
    """``values[c]`` where bit ``j`` of ``c`` is ``preds[j]``."""
    level = list(values)
    for p in preds:
        nxt = []
        for lo, hi in zip(level[0::2], level[1::2]):
            if lo is hi:
                nxt.append(lo)
                continue
            d = e.fn.reg(cls)
            if cls == "pred":
                e.fn.emit(f"mov.pred {d}, {lo}")
                e.fn.emit(f"mov.pred {d}, {hi}", p)
            else:
                e.fn.emit(f"selp.{cls} {d}, {hi}, {lo}, {p}")
            nxt.append(d)
        level = nxt
    (out,) = level
    return out


def _selector(e: Emitter, tx: ThreadXor) -> Callable[[str, Callable[[int], Reg]], Reg]:
    """``pick(cls, value_of)``: the register ``value_of(tx.at(%tid.x))`` of this thread.
    ``value_of`` is asked for every value the thread part can take; ``selp`` chooses
    (nothing is emitted when ``tx`` is zero)."""
    gens, masks = tx.selects()
    preds = [_parity(e, m) for m in masks]

    def pick(cls: str, value_of: Callable[[int], Reg]) -> Reg:
        return _select(e, cls, [value_of(_combine(gens, c)) for c in range(1 << len(gens))], preds)

    return pick


# -- registers ----------------------------------------------------------------------------------
def _registers(e: Emitter, cls: str, regs: list[Reg], move: RegisterMove) -> list[Reg]:
    pick = _selector(e, move.thread)
    cache: dict[int, Reg] = {}
    out = []
    for s in move.sources:
        if s not in cache:
            cache[s] = pick(cls, lambda x, s=s: regs[s ^ x])
        out.append(cache[s])
    return out


# -- warp shuffles ------------------------------------------------------------------------------
def _per_word(cls: str) -> int:
    """Values one 32-bit shuffle carries."""
    return {"pred": 32, "b16": 2}.get(cls, 1)


def _shuffle(e: Emitter, cls: str, regs: list[Reg], move: ShuffleMove) -> list[Reg]:
    send_pick = _selector(e, move.send_thread)
    place_pick = _selector(e, move.place_thread)
    lane_thread = _thread_value(e, move.lane_thread)
    # rounds that read the same lane's same register are one round
    keys = list(dict.fromkeys(zip(move.send, move.lane)))
    by_lane: dict[int, list[tuple[int, int]]] = {}
    for key in keys:
        by_lane.setdefault(key[1], []).append(key)
    sent: dict[int, Reg] = {}
    words: dict[tuple[Reg, ...], list[Reg]] = {}
    received: dict[tuple[int, int], Reg] = {}
    n = _per_word(cls)
    for lane_const, group in by_lane.items():
        if isinstance(lane_thread, int):
            lane_op: Reg | int = lane_const ^ lane_thread
        elif lane_const:
            lane_op = e.fn.reg("b32")
            e.fn.emit(f"xor.b32 {lane_op}, {lane_thread}, {lane_const}")
        else:
            lane_op = lane_thread
        for i in range(0, len(group), n):
            chunk = group[i:i + n]
            values = []
            for s, _ in chunk:
                if s not in sent:
                    sent[s] = send_pick(cls, lambda x, s=s: regs[s ^ x])
                values.append(sent[s])
            if tuple(values) not in words:  # a broadcast sends one value in many rounds
                words[tuple(values)] = _to_words(e, cls, values)
            got = []
            for w in words[tuple(values)]:
                d = e.fn.reg(w.cls)
                e.fn.emit(f"shfl.sync.idx.b32 {d}, {w}, {lane_op}, 31, -1")
                got.append(d)
            for key, v in zip(chunk, _from_words(e, cls, got, len(chunk))):
                received[key] = v
    return [place_pick(cls, lambda x, r=r: received[(move.send[r ^ x], move.lane[r ^ x])])
            for r in range(len(move.send))]


def _to_words(e: Emitter, cls: str, values: list[Reg]) -> list[Reg]:
    """``values`` packed into the 32-bit words one shuffle each moves."""
    if cls in ("b32", "f32"):
        return list(values)
    if cls in ("b64", "f64"):
        (v,) = values
        lo, hi = e.fn.reg("b32"), e.fn.reg("b32")
        e.fn.emit(f"mov.b64 {{{lo}, {hi}}}, {v}")
        return [lo, hi]
    word = e.fn.reg("b32")
    if cls == "pred":
        _pack_bits(e, word, values, 1)
    elif len(values) == 2:
        e.fn.emit(f"mov.b32 {word}, {{{values[0]}, {values[1]}}}")
    else:
        e.fn.emit(f"cvt.u32.u16 {word}, {values[0]}")
    return [word]


def _from_words(e: Emitter, cls: str, words: list[Reg], n: int) -> list[Reg]:
    if cls in ("b32", "f32"):
        return list(words)
    if cls in ("b64", "f64"):
        d = e.fn.reg(cls)
        e.fn.emit(f"mov.b64 {d}, {{{words[0]}, {words[1]}}}")
        return [d]
    (word,) = words
    if cls == "pred":
        return _unpack_bits(e, word, n, 1, "b32")
    hs = [e.fn.reg("b16") for _ in range(n)]
    if n == 2:
        e.fn.emit(f"mov.b32 {{{hs[0]}, {hs[1]}}}, {word}")
    else:
        e.fn.emit(f"cvt.u16.u32 {hs[0]}, {word}")
    return hs


def _pack_bits(e: Emitter, word: Reg, preds: Sequence[Reg], stride: int) -> None:
    """``word`` = predicate ``i`` at bit ``i * stride`` (a 16- or 32-bit register)."""
    w = 16 if word.cls == "b16" else 32
    for i, p in enumerate(preds):
        if i == 0:
            e.fn.emit(f"selp.b{w} {word}, 1, 0, {p}")
        else:
            t = e.fn.reg(word.cls)
            e.fn.emit(f"selp.b{w} {t}, 0x{1 << (i * stride):x}, 0, {p}")
            e.fn.emit(f"or.b{w} {word}, {word}, {t}")


def _unpack_bits(e: Emitter, word: Reg, n: int, stride: int, cls: str) -> list[Reg]:
    w = 16 if cls == "b16" else 32
    out = []
    for i in range(n):
        t, p = e.fn.reg(cls), e.fn.reg("pred")
        e.fn.emit(f"and.b{w} {t}, {word}, 0x{((1 << stride) - 1) << (i * stride):x}")
        e.fn.emit(f"setp.ne.u{w} {p}, {t}, 0")
        out.append(p)
    return out


# -- shared memory ------------------------------------------------------------------------------
def _shared(e: Emitter, cls: str, regs: list[Reg], move: SharedMove) -> list[Reg]:
    nbytes = move.elem_bits // 8
    e.scratch(move.size * nbytes)
    base = e.smem_base()
    e.barrier()  # the scratch area may still be read by the op before
    store_slot = _selector(e, move.store.slot_thread)
    owner = _owner(e, move.copies) if move.copies else None
    for addr, imm, group in _accesses(e, move.store, base, nbytes):
        values = [store_slot(cls, lambda x, i=i, g=group: regs[g[i ^ x]]) for i in range(len(group))]
        units = _pack(e, cls, values, move.elem_bits)
        ty = _unit_type(cls, move.elem_bits, len(group))
        e.fn.emit(f"st.shared{_vec(len(units))}.{ty} [{addr}+{imm}], {_operands(units)}", owner)
    e.barrier()
    out: list[Reg | None] = [None] * len(move.load.offsets)
    load_slot = _selector(e, move.load.slot_thread)
    for addr, imm, group in _accesses(e, move.load, base, nbytes):
        ty = _unit_type(cls, move.elem_bits, len(group))
        units = _load_units(e, cls, move.elem_bits, len(group))
        e.fn.emit(f"ld.shared{_vec(len(units))}.{ty} {_operands(units)}, [{addr}+{imm}]")
        loaded = _unpack(e, cls, units, move.elem_bits, len(group))
        for i, r in enumerate(group):
            out[r] = load_slot(cls, lambda x, i=i, v=loaded: v[i ^ x])
    # registers holding an element a second time take the first one's value
    first: dict[int, Reg] = {}
    for r, c in enumerate(move.load.offsets):
        if out[r] is not None:
            first.setdefault(c, out[r])  # type: ignore[arg-type]
    return [first[c] for c in move.load.offsets]


def _accesses(e: Emitter, side: SharedSide, base: Reg, nbytes: int) -> list[tuple[Reg, int, tuple[int, ...]]]:
    """``(address register, byte immediate, registers)`` per vector access."""
    thread = _thread_value(e, side.address_thread, nbytes)
    if isinstance(thread, int):
        start: Reg = base
    else:
        key = f"convert.addr:{base}:{thread}"
        if key not in e._special:
            r = e.fn.reg("b32")
            e.prologue.append(f"\tadd.u32 {r}, {base}, {thread};")
            e._special[key] = r
        start = e._special[key]
    addrs: dict[int, Reg] = {0: start}
    out = []
    for runtime, imm, group in side.groups():
        if runtime not in addrs:
            a = e.fn.reg("b32")
            e.fn.emit(f"xor.b32 {a}, {thread}, {runtime * nbytes}")
            e.fn.emit(f"add.u32 {a}, {a}, {base}")
            addrs[runtime] = a
        out.append((addrs[runtime], imm * nbytes, group))
    return out


def _unit_bits(elem_bits: int, n: int) -> int:
    """The width of one register moved by a vector access of ``n`` elements: 64-bit
    elements as they are, narrower ones packed into 32-bit words when they fill one."""
    if elem_bits >= 32:
        return elem_bits
    return min(32, elem_bits * n)


def _unit_type(cls: str, elem_bits: int, n: int) -> str:
    bits = _unit_bits(elem_bits, n)
    if bits == elem_bits and cls in ("f32", "f64"):
        return cls
    return "u8" if bits == 8 else f"b{bits}"


def _vec(n: int) -> str:
    return "" if n == 1 else f".v{n}"


def _operands(units: Sequence[Reg]) -> str:
    return str(units[0]) if len(units) == 1 else "{" + ", ".join(str(u) for u in units) + "}"


def _pack(e: Emitter, cls: str, values: list[Reg], elem_bits: int) -> list[Reg]:
    bits = _unit_bits(elem_bits, len(values))
    per = bits // elem_bits
    out = []
    for i in range(0, len(values), per):
        chunk = values[i:i + per]
        if cls == "pred":
            w = e.fn.reg("b16" if bits <= 16 else "b32")
            _pack_bits(e, w, chunk, 8)
            out.append(w)
        elif per == 1:
            out.append(chunk[0])
        else:  # two 16-bit values
            w = e.fn.reg("b32")
            e.fn.emit(f"mov.b32 {w}, {{{chunk[0]}, {chunk[1]}}}")
            out.append(w)
    return out


def _load_units(e: Emitter, cls: str, elem_bits: int, n: int) -> list[Reg]:
    bits = _unit_bits(elem_bits, n)
    count = n * elem_bits // bits
    ucls = cls if bits == elem_bits and cls != "pred" else ("b16" if bits <= 16 else "b32")
    return [e.fn.reg(ucls) for _ in range(count)]


def _unpack(e: Emitter, cls: str, units: list[Reg], elem_bits: int, n: int) -> list[Reg]:
    bits = _unit_bits(elem_bits, n)
    per = bits // elem_bits
    out: list[Reg] = []
    for u in units:
        if cls == "pred":
            out += _unpack_bits(e, u, per, 8, u.cls)
        elif per == 1:
            out.append(u)
        else:
            h0, h1 = e.fn.reg("b16"), e.fn.reg("b16")
            e.fn.emit(f"mov.b32 {{{h0}, {h1}}}, {u}")
            out += [h0, h1]
    return out


# -- fallback -----------------------------------------------------------------------------------
def _legacy(e: Emitter, op: Operation, src_layout: LinearLayout, src_regs: list[Reg]) -> list[Reg]:
    """Any layout to any layout: every thread writes what it holds at the element's
    row-major offset, then reads what it needs (scalar accesses, not swizzled)."""
    t = op.result.type
    dst_layout = t.layout
    cls = reg_class(t.scalar)
    size = 8 if cls in ("b64", "f64") else (4 if cls in ("b32", "f32") else 2)
    shape = t.shape
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    numel = strides[0] * shape[0]
    e.scratch(numel * size)
    base = e.smem_base()
    e.barrier()
    _smem_pass(e, src_layout, src_regs, shape, strides, size, cls, base, store=True)
    e.barrier()
    regs = [e.fn.reg(cls) for _ in range(dst_layout.in_dim_size(REGISTER))]
    _smem_pass(e, dst_layout, regs, shape, strides, size, cls, base, store=False)
    return regs


def _smem_pass(e: Emitter, layout: LinearLayout, regs: list[Reg], shape: tuple[int, ...],
               strides: list[int], size: int, cls: str, base: Reg, store: bool) -> None:
    """Store (or load) every register of ``layout`` at its element's offset under
    ``strides`` (in elements) of ``size`` bytes, scalar accesses; registers holding an
    element twice are stored once."""
    thread = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {thread}, 0")
    for d in range(len(shape)):
        t = e.thread_coords(layout, d)
        if not isinstance(t, int):
            e.fn.emit(f"mad.lo.u32 {thread}, {t}, {strides[d] * size}, {thread}")
    e.fn.emit(f"add.u32 {thread}, {thread}, {base}")
    seen = set()
    for r, reg in enumerate(regs):
        c = register_coords(layout, r)
        off = sum(x * s for x, s in zip(c, strides)) * size
        if store and off in seen:
            continue
        seen.add(off)
        mt = {"pred": "u8", "b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64"}[cls]
        if cls == "pred":
            h = e.fn.reg("b16")
            if store:
                e.fn.emit(f"selp.u16 {h}, 1, 0, {reg}")
                e.fn.emit(f"st.shared.u8 [{thread}+{off}], {h}")
            else:
                e.fn.emit(f"ld.shared.u8 {h}, [{thread}+{off}]")
                e.fn.emit(f"setp.ne.u16 {reg}, {h}, 0")
        elif store:
            e.fn.emit(f"st.shared.{mt} [{thread}+{off}], {reg}")
        else:
            e.fn.emit(f"ld.shared.{mt} {reg}, [{thread}+{off}]")
