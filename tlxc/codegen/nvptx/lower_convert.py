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
  vectorized ``ld.shared``; see ``SharedMove``. When the buffer does not fit in the
  shared memory the kernel's own buffers leave (``scratch_budget``), this runs in rounds
  that each move part of the registers through one round's buffer (``SharedMove.rounds``;
  two barriers per round); a conversion that fits keeps its one round.

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

The planning half is pure (no emitter) and lives in ``convert_plan``: tests evaluate its
answers for every thread and register and check them against the layouts. Its names
are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import REGISTER
from ...ir.layout.linear import LinearLayout
from ...ir.layout.target import LayoutTarget
from ..convert_plan import (
    ELEM_BITS,
    MAX_SELECT_BITS,
    Move,
    NoMove,
    RegisterMove,
    SharedMove,
    SharedSide,
    ShuffleMove,
    ThreadXor,
    combine,
    plan_move,
    register_move,
    shared_move,
    shuffle_move,
    supported,
)
from .emitter import Emitter, lowers, register_coords
from .ptx import Reg, reg_class

# The plan's names, for the code generator's other users and the tests.
__all__ = ["ELEM_BITS", "MAX_SELECT_BITS", "Move", "NoMove", "RegisterMove", "SharedMove", "SharedSide",
           "ShuffleMove", "ThreadXor", "accesses", "plan_move", "register_move", "shared_move", "shuffle_move",
           "store_shared", "supported"]


# ============================================================================ lowering
@lowers(ops.ConvertLayoutOp)
def convert_layout(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    dst = op.result.type.layout
    cls = reg_class(op.result.type.scalar)
    t = e.target
    target = LayoutTarget(t.warp_size, t.shared_banks, t.bank_bytes, t.max_vector_bytes)
    move = plan_move(src.layout, dst, elem_bits=ELEM_BITS[cls], target=target, budget=scratch_budget(e))
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


def scratch_budget(e: Emitter) -> int:
    """Bytes of scratch one op may use: the target's shared memory less the kernel's own
    buffers (the scratch area starts after them)."""
    return (e.target.max_shared_bytes - e.scratch_offset) // e.scratch_share


# -- per-thread values, computed once in the prologue ------------------------------------------
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
        return _select(e, cls, [value_of(combine(gens, c)) for c in range(1 << len(gens))], preds)

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
    lane_thread = e.thread_xor(list(move.lane_thread.terms))
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
    e.scratch_over_dead(move.round_size * move.elem_bits // 8)  # every round starts with a barrier
    out: list[Reg | None] = [None] * len(move.load.offsets)
    if move.rounds == 1:
        e.barrier()  # the scratch area may still be read by the op before
        store_shared(e, cls, regs, move)
        e.barrier()
        _load_shared(e, cls, move, out)
    else:
        stores, loads = round_accesses(e, move, move.store), round_accesses(e, move, move.load)
        for r in range(move.rounds):
            e.barrier()  # the scratch area may still be read by the op (or the round) before
            store_shared(e, cls, regs, move, access=stores[r])
            e.barrier()
            _load_shared(e, cls, move, out, loads[r])
    return move.first_copies(out)


Access = tuple[Reg, int, tuple[int, ...]]


def store_shared(e: Emitter, cls: str, regs: list[Reg], move: SharedMove, at: int = 0,
                 access: list[Access] | None = None) -> None:
    """The store half of ``move``: this thread's ``regs`` into the buffer that starts
    ``at`` bytes into the scratch area (the caller reserves it and places the barriers);
    ``access``: only these accesses (one round's, from ``round_accesses``)."""
    nbytes = move.elem_bits // 8
    store_slot = _selector(e, move.store.slot_thread)
    owner = e.thread_owner(move.copies)
    for addr, imm, group in accesses(e, move.store, nbytes, at) if access is None else access:
        values = [store_slot(cls, lambda x, i=i, g=group: regs[g[i ^ x]]) for i in range(len(group))]
        units = _pack(e, cls, values, move.elem_bits)
        ty = _unit_type(cls, move.elem_bits, len(group))
        e.fn.emit(f"st.shared{_vec(len(units))}.{ty} [{addr}+{imm}], {_operands(units)}", owner)


def _load_shared(e: Emitter, cls: str, move: SharedMove, out: list[Reg | None],
                 access: list[Access] | None = None) -> None:
    """The load half of ``move`` (``access``: one round's) into ``out``, by result register."""
    load_slot = _selector(e, move.load.slot_thread)
    for addr, imm, group in accesses(e, move.load, move.elem_bits // 8) if access is None else access:
        ty = _unit_type(cls, move.elem_bits, len(group))
        units = _load_units(e, cls, move.elem_bits, len(group))
        e.fn.emit(f"ld.shared{_vec(len(units))}.{ty} {_operands(units)}, [{addr}+{imm}]")
        loaded = _unpack(e, cls, units, move.elem_bits, len(group))
        for i, r in enumerate(group):
            out[r] = load_slot(cls, lambda x, i=i, v=loaded: v[i ^ x])


def round_accesses(e: Emitter, move: SharedMove, side: SharedSide, at: int = 0) -> list[list[Access]]:
    """``accesses`` of ``side`` of ``move`` per round, addressed in one round's buffer
    (the address registers are made once, before the first round)."""
    found = accesses(e, side, move.elem_bits // 8, at, move.round_size)
    per: list[list[Access]] = [[] for _ in range(move.rounds)]
    for a, (_, imm, _) in zip(found, side.groups()):
        per[move.round_of(imm)].append(a)
    return per


def accesses(e: Emitter, side: SharedSide, nbytes: int, at: int = 0,
             round_size: int | None = None) -> list[tuple[Reg, int, tuple[int, ...]]]:
    """``(address register, byte immediate, registers)`` per vector access of ``side`` to a
    buffer of ``nbytes``-byte elements that starts ``at`` bytes into the scratch area.
    ``round_size``: the elements of one round's buffer, when the side's offsets span
    several rounds (the round, in the immediate's top bits, is dropped)."""
    base = e.smem_base()
    thread = e.thread_xor([t * nbytes for t in side.address_thread.terms])
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
        if round_size is not None:
            imm %= round_size
        out.append((addrs[runtime], imm * nbytes + at, group))
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
        elif elem_bits == 8:
            out.append(_pack_bytes(e, chunk))
        else:  # two 16-bit values
            w = e.fn.reg("b32")
            e.fn.emit(f"mov.b32 {w}, {{{chunk[0]}, {chunk[1]}}}")
            out.append(w)
    return out


def _pack_bytes(e: Emitter, values: list[Reg]) -> Reg:
    """The low bytes of two or four 16-bit registers, packed into a 32-bit register in
    order (the operand of an 8-bit ``st.shared.b16`` or of 32-bit vector units). Only the
    dot's staging stores 8-bit elements as bytes; conversions keep them 16-bit."""
    halves = []
    for lo, hi in zip(values[0::2], values[1::2]):
        w = e.fn.reg("b32")
        e.fn.emit(f"mov.b32 {w}, {{{lo}, {hi}}}")
        halves.append(w)
    out = e.fn.reg("b32")
    if len(halves) == 1:
        e.fn.emit(f"prmt.b32 {out}, {halves[0]}, 0, 0x20")
    else:
        e.fn.emit(f"prmt.b32 {out}, {halves[0]}, {halves[1]}, 0x6420")
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
