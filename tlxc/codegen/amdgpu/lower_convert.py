"""``convert_layout`` on AMDGPU: moving a tile from one distributed layout to another the
way the target-generic planner says it must travel (``conversion.plan_conversion``, made
concrete by ``convert_plan.plan_move``: the same planning the NVIDIA code generator uses,
with this chip's wave size and LDS banks in the ``LayoutTarget``).

* ``NoMove`` -- the layouts are equal: the operand's values.
* ``RegisterMove`` -- every lane already holds what it needs: the values are renamed; where
  the register a lane needs depends on its lane or wave, ``select`` picks it.
* ``ShuffleMove`` -- data crosses lanes, not waves: one ``ds_bpermute`` per 32-bit word per
  round (16- and 8-bit values are packed two or four to a word). ``ds_bpermute`` reads any
  lane of the wave on GFX9 wave64 and on wave32 (``cross_lane``).
* ``SharedMove`` -- data crosses waves: a barrier (the scratch area is shared with the ops
  before), vector stores into the planner's swizzled buffer (only by the lanes that are not
  copies of others), a barrier, vector loads. The planner picks the vector widths (up to
  16 bytes: ``ds_write_b128`` / ``ds_read_b128``; LLVM selects ``ds_write_b64``/``b96``/
  ``b128`` and the ``ds_read`` forms from the vector type and alignment) and an XOR
  swizzle under which both sides are free of bank conflicts with the chip's banks
  (``AmdTarget.lds_banks``: 32 x 4 B on gfx942, 64 x 4 B on gfx950 and gfx1250).
  A tile larger than the LDS the kernel's own buffers leave (``scratch_budget``) runs in
  rounds that each move part of the registers through one round's buffer
  (``SharedMove.rounds``; a barrier, that round's stores, a barrier, its loads); a
  conversion that fits keeps its one round.

Addresses and lanes are, as in ``Emitter.thread_coords``, a constant per register XOR a
per-thread value linear in the bits of the work-item id (lane bits, then wave bits):
``ThreadXor``, evaluated once in the kernel's entry block. A pair the planner does not
cover (a tile split over CTAs, a layout without a whole wave of lanes) takes a
row-major LDS round trip with scalar accesses (``_legacy``), correct for any pair of
distributed layouts of one tile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import REGISTER
from ...ir.layout.conversion import plan_shared_conversion, round_candidates
from ...ir.layout.linear import LinearLayout
from ...ir.layout.target import LayoutTarget

# The planning half is shared with the NVIDIA code generator (no emitter, nothing
# NVIDIA-specific: its thread bits are the lane bits then the warp bits of a 1-D thread
# index, which is what workitem.id.x is on AMD).
from ..convert_plan import (
    NoMove,
    RegisterMove,
    SharedMove,
    SharedSide,
    ShuffleMove,
    ThreadXor,
    combine,
    plan_move,
    shared_move,
    split_rounds,
)
from . import cross_lane
from .emitter import Emitter, lowers, register_coords
from .llvm import I1, I8, I32, bytes_of, value_type

#: The widest LDS access per lane: ``ds_read_b128`` / ``ds_write_b128`` (AMD CDNA3 ISA,
#: "LDS instructions"; the same on GFX12).
MAX_VECTOR_BYTES = 16


def layout_target(e: Emitter) -> LayoutTarget:
    t = e.target
    return LayoutTarget(t.wave_size, t.lds_banks, t.lds_bank_bytes, MAX_VECTOR_BYTES)


def elem_bits(ty: ir.Type) -> int:
    """Bits one register value takes in the LDS scratch buffer (``i1`` is a byte)."""
    if isinstance(ty, ir.IntType) and ty.width == 1:
        return 8
    return bytes_of(ty) * 8


@lowers(ops.ConvertLayoutOp)
def convert_layout(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    dst: LinearLayout = op.result.type.layout
    ty = value_type(op.result.type.scalar)
    bits, target, budget = elem_bits(ty), layout_target(e), scratch_budget(e)
    move = plan_move(src.layout, dst, elem_bits=bits, target=target, budget=budget)
    if isinstance(move, SharedMove) and move.round_size * bits // 8 > budget:
        move = _narrower_rounds(src.layout, dst, move, bits, target, budget)
    match move:
        case NoMove():
            e.set(op.result, list(src.vals))
        case RegisterMove():
            e.set(op.result, _registers(e, src.vals, move))
        case ShuffleMove():
            e.set(op.result, _shuffle(e, ty, src.vals, move))
        case SharedMove():
            e.set(op.result, _shared(e, ty, src.vals, move))
        case _:
            e.set(op.result, _legacy(e, op, ty, src.layout, src.vals))


def _narrower_rounds(src: LinearLayout, dst: LinearLayout, move: SharedMove, bits: int, target: LayoutTarget,
                     budget: int) -> SharedMove:
    """``move`` in rounds that may narrow its vectors, when the rounds that keep them
    are too few to fit ``budget``: ``split_rounds`` avoids the one-round plan's vector
    bits, and in a GEMM epilogue (an MFMA accumulator to the store layout) those are the
    only register directions both layouts share, so it finds no round at all. Giving
    up a vector bit per round bit (``ds_read_b128`` -> ``b64``) is what fits the LDS.
    Planner business: it belongs in ``split_rounds`` as its second try, for both targets."""
    plan = split_rounds(src, dst, plan_shared_conversion(src, dst, elem_bits=bits, target=target),
                        elem_bits=bits, target=target, budget=budget, rounds=round_candidates(src, dst))
    return shared_move(src, dst, plan, bits) if plan.round_bits > move.round_bits else move


def scratch_budget(e: Emitter) -> int:
    """Bytes of scratch one op may use: the chip's LDS less the kernel's own buffers (the
    scratch area starts after them; ``compile`` checks the sum against the same limit)."""
    return max(e.target.lds_bytes - e.scratch_offset, e.dead_window()[1])


# -- per-thread values, computed once in the entry block -------------------------------------------
def thread_xor(e: Emitter, terms: Sequence[int]) -> ir.Value | int:
    """The XOR of ``terms[i]`` over the set bits ``i`` of the work-item id: its low
    ``log2(wave)`` bits are the lane, the others the wave index (0 when every term is 0)."""
    if not any(terms):
        return 0
    nl = e.target.wave_size.bit_length() - 1
    lane, warp = e.special("lane"), e.special("warp")

    def make(b: ir.IRBuilder) -> ir.Value:
        acc: ir.Value | None = None
        for i, c in enumerate(terms):
            if not c:
                continue
            x, bit = (lane, i) if i < nl else (warp, i - nl)
            t = b.and_(b.lshr(x, ir.Constant(I32, bit)), ir.Constant(I32, 1))
            t = b.mul(t, ir.Constant(I32, c))
            acc = t if acc is None else b.xor(acc, t)
        assert acc is not None
        return acc

    return e.in_entry(f"convert.xor:{tuple(terms)}", make)


def _tid_and(e: Emitter, b: ir.IRBuilder, mask: int) -> ir.Value:
    return b.and_(e.special("tid"), ir.Constant(I32, mask))


def parity(e: Emitter, mask: int) -> ir.Value:
    """Whether ``tid & mask`` has an odd number of bits (an ``i1``)."""
    def make(b: ir.IRBuilder) -> ir.Value:
        t = _tid_and(e, b, mask)
        if mask & (mask - 1):
            t = b.and_(b.call(e.intrinsic("llvm.ctpop.i32", I32, [I32]), [t]), ir.Constant(I32, 1))
        return b.icmp_unsigned("!=", t, ir.Constant(I32, 0))

    return e.in_entry(f"convert.parity:{mask}", make)


def owner(e: Emitter, mask: int) -> ir.Value | None:
    """``tid & mask == 0``: the one thread of each group of copies that stores."""
    if not mask:
        return None
    return e.in_entry(f"convert.owner:{mask}",
                      lambda b: b.icmp_unsigned("==", _tid_and(e, b, mask), ir.Constant(I32, 0)))


def _select(e: Emitter, values: Sequence[ir.Value], preds: Sequence[ir.Value]) -> ir.Value:
    """``values[c]`` where bit ``j`` of ``c`` is ``preds[j]``."""
    level = list(values)
    for p in preds:
        level = [lo if lo is hi else e.b.select(p, hi, lo) for lo, hi in zip(level[0::2], level[1::2])]
    (out,) = level
    return out


def selector(e: Emitter, tx: ThreadXor) -> Callable[[Callable[[int], ir.Value]], ir.Value]:
    """``pick(value_of)``: ``value_of(tx.at(tid))`` of this thread; ``value_of`` is asked
    for every value the thread part can take, ``select`` chooses."""
    gens, masks = tx.selects()
    preds = [parity(e, m) for m in masks]

    def pick(value_of: Callable[[int], ir.Value]) -> ir.Value:
        return _select(e, [value_of(combine(gens, c)) for c in range(1 << len(gens))], preds)

    return pick


# -- registers ----------------------------------------------------------------------------------------
def _registers(e: Emitter, vals: list[ir.Value], move: RegisterMove) -> list[ir.Value]:
    pick = selector(e, move.thread)
    cache: dict[int, ir.Value] = {}
    out = []
    for s in move.sources:
        if s not in cache:
            cache[s] = pick(lambda x, s=s: vals[s ^ x])
        out.append(cache[s])
    return out


# -- lanes of a wave: ds_bpermute -----------------------------------------------------------------------
def _per_word(ty: ir.Type) -> int:
    bits = elem_bits(ty)
    return 32 // bits if bits <= 16 else 1


def _pack(e: Emitter, ty: ir.Type, values: list[ir.Value]) -> list[ir.Value]:
    """``values`` in the 32-bit words one ``ds_bpermute`` each moves."""
    if len(values) == 1:
        return cross_lane.to_words(e.b, values[0])
    bits = elem_bits(ty)
    word: ir.Value | None = None
    for i, v in enumerate(values):
        (w,) = cross_lane.to_words(e.b, v)
        if i:
            w = e.b.shl(w, ir.Constant(I32, i * bits))
        word = w if word is None else e.b.or_(word, w)
    assert word is not None
    return [word]


def _unpack(e: Emitter, ty: ir.Type, words: list[ir.Value], n: int) -> list[ir.Value]:
    if n == 1:
        return [cross_lane.from_words(e.b, words, ty)]
    bits = elem_bits(ty)
    (word,) = words
    out = []
    for i in range(n):
        w = e.b.lshr(word, ir.Constant(I32, i * bits)) if i else word
        if isinstance(ty, ir.IntType) and ty.width == 1:
            out.append(e.b.trunc(w, I1))
        else:
            out.append(cross_lane.from_words(e.b, [e.b.and_(w, ir.Constant(I32, (1 << bits) - 1))], ty))
    return out


def _shuffle(e: Emitter, ty: ir.Type, vals: list[ir.Value], move: ShuffleMove) -> list[ir.Value]:
    send_pick = selector(e, move.send_thread)
    place_pick = selector(e, move.place_thread)
    lane_thread = thread_xor(e, move.lane_thread.terms)
    keys = list(dict.fromkeys(zip(move.send, move.lane)))  # rounds reading one lane's register are one
    by_lane: dict[int, list[tuple[int, int]]] = {}
    for key in keys:
        by_lane.setdefault(key[1], []).append(key)
    sent: dict[int, ir.Value] = {}
    received: dict[tuple[int, int], ir.Value] = {}
    moved: dict[tuple[int, tuple[int, ...]], list[ir.Value]] = {}
    n = _per_word(ty)
    for lane_const, group in by_lane.items():
        if isinstance(lane_thread, int):
            lane: ir.Value = ir.Constant(I32, lane_const ^ lane_thread)
        else:
            lane = e.b.xor(lane_thread, ir.Constant(I32, lane_const)) if lane_const else lane_thread
        for i in range(0, len(group), n):
            chunk = group[i:i + n]
            for s, _ in chunk:
                if s not in sent:
                    sent[s] = send_pick(lambda x, s=s: vals[s ^ x])
            ids = (lane_const, tuple(id(sent[s]) for s, _ in chunk))
            if ids not in moved:  # a broadcast reads one value in many rounds
                words = _pack(e, ty, [sent[s] for s, _ in chunk])
                moved[ids] = [cross_lane.ds_bpermute(e, lane, w) for w in words]
            for key, v in zip(chunk, _unpack(e, ty, moved[ids], len(chunk))):
                received[key] = v
    return [place_pick(lambda x, r=r: received[(move.send[r ^ x], move.lane[r ^ x])])
            for r in range(len(move.send))]


# -- across waves: LDS ------------------------------------------------------------------------------------
def _memory_type(ty: ir.Type) -> ir.Type:
    return I8 if isinstance(ty, ir.IntType) and ty.width == 1 else ty


def _to_memory(e: Emitter, ty: ir.Type, x: ir.Value) -> ir.Value:
    return e.b.zext(x, I8) if isinstance(ty, ir.IntType) and ty.width == 1 else x


def _from_memory(e: Emitter, ty: ir.Type, x: ir.Value) -> ir.Value:
    return e.b.icmp_unsigned("!=", x, ir.Constant(I8, 0)) if isinstance(ty, ir.IntType) and ty.width == 1 else x


def _shared(e: Emitter, ty: ir.Type, vals: list[ir.Value], move: SharedMove) -> list[ir.Value]:
    at = e.scratch_at(move.round_size * move.elem_bits // 8)  # may overlay dead buffers: a barrier comes first
    out: list[ir.Value | None] = [None] * len(move.load.offsets)
    if move.rounds == 1:
        e.barrier()  # the scratch area may still be read by the op before
        store_shared(e, ty, vals, move, at)
        e.barrier()
        _load_shared(e, ty, move, out, at=at)
    else:
        stores, loads = round_accesses(e, move, move.store, at), round_accesses(e, move, move.load, at)
        for r in range(move.rounds):
            e.barrier()  # the scratch area may still be read by the op (or the round) before
            store_shared(e, ty, vals, move, access=stores[r])
            e.barrier()
            _load_shared(e, ty, move, out, loads[r])
    return move.first_copies(out)


Access = tuple[ir.Value, int, tuple[int, ...]]


def accesses(e: Emitter, side: SharedSide, nbytes: int, at: int = 0,
             round_size: int | None = None) -> list[Access]:
    """``(LDS pointer, alignment, registers)`` per vector access of ``side`` to a buffer of
    ``nbytes``-byte elements that starts ``at`` bytes into the scratch area.
    ``round_size``: the elements of one round's buffer, when the side's offsets span
    several rounds (the round, in the immediate's top bits, is dropped)."""
    base = e.lds_base()
    thread = thread_xor(e, [t * nbytes for t in side.address_thread.terms])
    starts: dict[int, ir.Value] = {}
    out = []
    align = side.vec * nbytes
    for runtime, imm, group in side.groups():
        if runtime not in starts:
            if isinstance(thread, int):
                off: ir.Value = ir.Constant(I32, (thread ^ runtime * nbytes) + at)
            else:
                x = e.b.xor(thread, ir.Constant(I32, runtime * nbytes)) if runtime else thread
                off = e.b.add(x, ir.Constant(I32, at)) if at else x
            starts[runtime] = e.b.gep(base, [off], source_etype=I8)
        ptr = starts[runtime]
        if round_size is not None:
            imm %= round_size
        if imm:
            ptr = e.b.gep(ptr, [ir.Constant(I32, imm * nbytes)], source_etype=I8)
        out.append((ptr, align, group))
    return out


def round_accesses(e: Emitter, move: SharedMove, side: SharedSide, at: int = 0) -> list[list[Access]]:
    """``accesses`` of ``side`` of ``move`` per round, addressed in one round's buffer
    (the pointers are made once, before the first round)."""
    found = accesses(e, side, move.elem_bits // 8, at, move.round_size)
    per: list[list[Access]] = [[] for _ in range(move.rounds)]
    for a, (_, imm, _) in zip(found, side.groups()):
        per[move.round_of(imm)].append(a)
    return per


def store_shared(e: Emitter, ty: ir.Type, vals: list[ir.Value], move: SharedMove, at: int = 0,
                 access: list[Access] | None = None) -> None:
    """The store half of ``move``: this thread's ``vals`` into the buffer that starts ``at``
    bytes into the scratch area (the caller reserves it and places the barriers);
    ``access``: only these accesses (one round's, from ``round_accesses``). Lanes that hold
    copies of what others hold skip it (one branch around all stores)."""
    nbytes = move.elem_bits // 8
    mt = _memory_type(ty)
    slot = selector(e, move.store.slot_thread)
    guard = owner(e, move.copies)
    join = None
    if guard is not None:
        then = e.fn.append_basic_block("convert.store")
        join = e.fn.append_basic_block("convert.stored")
        e.b.cbranch(guard, then, join)
        e.b.position_at_end(then)
    for ptr, align, group in accesses(e, move.store, nbytes, at) if access is None else access:
        values = [_to_memory(e, ty, slot(lambda x, i=i, g=group: vals[g[i ^ x]])) for i in range(len(group))]
        if len(values) == 1:
            e.b.store(values[0], ptr, align=align)
            continue
        vec: ir.Value = ir.Constant(ir.VectorType(mt, len(values)), ir.Undefined)
        for i, v in enumerate(values):
            vec = e.b.insert_element(vec, v, ir.Constant(I32, i))
        e.b.store(vec, ptr, align=align)
    if join is not None:
        e.b.branch(join)
        e.b.position_at_end(join)


def load_shared(e: Emitter, ty: ir.Type, move: SharedMove, at: int = 0) -> list[ir.Value]:
    """The load half of ``move``: the result registers, from the buffer that starts ``at``
    bytes into the scratch area."""
    out: list[ir.Value | None] = [None] * len(move.load.offsets)
    _load_shared(e, ty, move, out, at=at)
    return move.first_copies(out)


def _load_shared(e: Emitter, ty: ir.Type, move: SharedMove, out: list[ir.Value | None],
                 access: list[Access] | None = None, at: int = 0) -> None:
    """The load half of ``move`` (``access``: one round's) into ``out``, by result register."""
    nbytes = move.elem_bits // 8
    mt = _memory_type(ty)
    slot = selector(e, move.load.slot_thread)
    for ptr, align, group in accesses(e, move.load, nbytes, at) if access is None else access:
        n = len(group)
        if n == 1:
            loaded = [e.b.load(ptr, typ=mt, align=align)]
        else:
            v = e.b.load(ptr, typ=ir.VectorType(mt, n), align=align)
            loaded = [e.b.extract_element(v, ir.Constant(I32, i)) for i in range(n)]
        loaded = [_from_memory(e, ty, x) for x in loaded]
        for i, r in enumerate(group):
            out[r] = slot(lambda x, i=i, v=loaded: v[i ^ x])


# -- fallback -----------------------------------------------------------------------------------------------
def _legacy(e: Emitter, op: Operation, ty: ir.Type, src: LinearLayout, vals: list[ir.Value]) -> list[ir.Value]:
    """Any layout to any layout: every lane writes what it holds at the element's row-major
    offset, then reads what it needs (scalar accesses, not swizzled)."""
    t = op.result.type
    dst: LinearLayout = t.layout
    mt = _memory_type(ty)
    size = bytes_of(mt)
    shape = t.shape
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    e.scratch(strides[0] * shape[0] * size)
    e.barrier()
    _pass(e, src, vals, strides, size, ty, store=True)
    e.barrier()
    out: list[ir.Value] = [None] * dst.in_dim_size(REGISTER)  # type: ignore[list-item]
    _pass(e, dst, out, strides, size, ty, store=False)
    return out


def _pass(e: Emitter, layout: LinearLayout, vals: list[ir.Value], strides: list[int], size: int, ty: ir.Type,
          store: bool) -> None:
    """Store (or load into ``vals``) every register of ``layout`` at its element's offset;
    a register holding an element twice is stored once."""
    mt = _memory_type(ty)
    seen: set[tuple[int, ...]] = set()
    for r in range(len(vals)):
        c = register_coords(layout, r)
        if store and c in seen:
            continue
        seen.add(c)
        off: ir.Value = ir.Constant(I32, 0)
        for d, (x, s) in enumerate(zip(c, strides)):
            tc = e.thread_coords(layout, d)
            if isinstance(tc, int):
                coord: ir.Value = ir.Constant(I32, x ^ tc)
            else:
                coord = e.b.xor(tc, ir.Constant(I32, x)) if x else tc
            off = e.b.add(off, e.b.mul(coord, ir.Constant(I32, s * size)))
        ptr = e.b.gep(e.lds_base(), [off], source_etype=I8)
        if store:
            e.b.store(_to_memory(e, ty, vals[r]), ptr, align=size)
        else:
            vals[r] = _from_memory(e, ty, e.b.load(ptr, typ=mt, align=size))
