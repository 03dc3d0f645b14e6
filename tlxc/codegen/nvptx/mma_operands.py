"""The operands of ``mma.sync``: from the layouts a dot's operands arrive in to the 32-bit
fragment registers the instruction reads.

The fragments are the registers of the dot-operand layouts of the accumulator's mma
layout (``MmaV2.operand`` with ``k_width`` = the elements of one 32-bit register): a
*word* is ``32 / bits`` consecutive K elements, named here by the tile coordinates of
its first element (the register's constant part; lanes and warps add theirs). Getting
an operand there is a layout conversion through shared memory whose load half is
``ldmatrix`` (``Matrices``):

* ``nvidia.ldmatrix_address`` turns the operand layout into the *address* layout of the
  ``ldmatrix`` instructions that fill it: each lane addresses one 16-byte row, and up to
  2 of the operand's register bits choose among the destination registers of an ``.x4``;
* the conversion planner lays out the scratch buffer so that those rows are contiguous
  and both the stores (vectorized from the source layout) and the ``ldmatrix`` phases
  are free of bank conflicts (``plan_shared_conversion(..., load_vector_bits=...)``);
* ``.trans`` is the other choice for 16-bit operands (rows along M or N instead of K);
  ``plan_ldmatrix`` keeps whichever stores wider vectors, then with fewer conflicts;
* the destination registers of one ``.x4`` are chosen among the operand's register bits
  inside one instruction step (``_matrix_bits``): each ``ldmatrix`` then feeds the MMAs
  of one K step (A: its 4 words; B: 2 words of 2 neighbouring n8 tiles). Two K steps in
  one ``.x4`` of B made ptxas (12.9, 13.0) drop a spilling kernel to 32 registers.

Rounds. When both operands' buffers do not fit in the shared memory the kernel's own
buffers leave, they are staged in rounds along K (``_k_rounds``): round ``r`` stores the
K steps whose round bits (K directions above one instruction step, held in registers by
both the source and the address layout of both operands, ``conversion.rounds_qualify``)
spell ``r``, syncs, and loads every fragment word of those steps with ``ldmatrix``
before the next round reuses the buffers. The words are loaded eagerly then, so they
stay live until their MMAs; a round-outer MMA loop (``lower_mma.emit_mma``) would let
them die sooner. Operands that fit keep one round and load lazily.

The first version's staging (``Staged``: A ``[batch, M, K]`` row-major, B transposed to
``[batch, N, K]``, every row padded by 16 bytes, one ``ld.shared.b32`` per word) stays
for an 8-bit K of 16 -- half an instruction step, the other half reads zeros -- and for
operands the planner cannot place (a tile split over CTAs); the FMA loop of
``lower_dot`` reads it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from ...errors import InternalCompilerError
from ...ir.core import Operation
from ...ir.layout import gf2
from ...ir.layout.common import LANE, REGISTER
from ...ir.layout.conversion import BankCost, bank_cost, plan_shared_conversion, plan_shared_rounds, rounds_qualify
from ...ir.layout.linear import LayoutError, LinearLayout, log2
from ...ir.layout.nvidia import LdmatrixAddress, MmaV2, ldmatrix_address
from ...ir.layout.target import LayoutTarget
from ...ir.types import DType, Kind
from ..convert_plan import SharedMove, shared_move, supported
from . import instructions as insn
from .emitter import Emitter, TileRegs
from .lower_convert import Access, accesses, round_accesses, scratch_budget, store_shared
from .ptx import Reg

# The bytes of K that one mma.sync instruction consumes, for every form lowered here.
K_BYTES = 32
# The second operand's buffer starts on a bank line, so that the planner's bank analysis
# (which puts offset 0 on bank 0) holds for it as it does for the first -- as long as the
# scratch area itself starts on one.
REGION_ALIGN = 128


def elem_bytes(t: DType) -> int:
    return max(1, t.bits // 8)


def constant_coords(layout: LinearLayout, r: int) -> tuple[int, ...]:
    """``emitter.register_coords`` for a distributed layout (register its first input
    dim, so register ``r`` is flat input ``r``), without building dicts: the tile loops
    ask it for every register."""
    return tuple(layout.decode_out(layout.apply_flat(r)).values())


class Fragments(Protocol):
    def word(self, coords: tuple[int, ...]) -> Reg | None:
        """The 32-bit register whose first element has the constant tile coordinates
        ``coords`` (None: past K, the instruction reads zeros there)."""


# -- ldmatrix ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class LdmatrixPlan:
    """``address`` says which instructions fill the operand layout; ``move`` stores the
    source layout into the scratch buffer and reads the address layout back a row
    (16 bytes) per lane: ``move.load`` has one vector access per instruction."""

    address: LdmatrixAddress
    move: SharedMove
    store_cost: BankCost  # of the stores, as the planner counted them


@lru_cache(maxsize=256)
def plan_ldmatrix(src: LinearLayout, dst: LinearLayout, *, elem_bits: int, target: LayoutTarget,
                  k_dim: int | None = None) -> LdmatrixPlan | None:
    """How ``ldmatrix`` fills ``dst`` from a buffer that ``src`` stores, or None.

    For 16-bit elements ``.trans`` is the other choice (rows along M or N instead of K):
    both are planned and the one with the wider stores wins, then the one with fewer
    bank wavefronts (narrow stores of a layout whose lanes run along the rows of the
    other form conflict), then plain. ``k_dim``: the operand's K dim, see
    ``_matrix_bits``."""
    best: tuple[tuple[int, int, bool], LdmatrixPlan] | None = None
    for trans in (False, True) if elem_bits == 16 else (False,):
        plan = plan_ldmatrix_as(src, dst, elem_bits=elem_bits, target=target, trans=trans, k_dim=k_dim)
        if plan is None:
            continue
        store = plan.store_cost
        score = (-plan.move.store.vec, store.wavefronts * plan.move.store.vec // store.ideal, trans)
        if best is None or score < best[0]:
            best = (score, plan)
    return best[1] if best else None


def plan_ldmatrix_as(src: LinearLayout, dst: LinearLayout, *, elem_bits: int, target: LayoutTarget,
                     trans: bool, k_dim: int | None = None, rounds: tuple[int, ...] = ()) -> LdmatrixPlan | None:
    """The plan with ``.trans`` or without, or None when the planner cannot lay out the
    buffer so that every row is 16 contiguous bytes in order. ``rounds``: staged in
    rounds told apart by these tile directions (``conversion.plan_shared_rounds``)."""
    if not supported(src, dst, target) or dst.in_dim_size(LANE) != 32:
        return None
    address = _address(dst, elem_bits, trans, k_dim)
    if address is None:
        return None
    try:
        if rounds:
            if not rounds_qualify(src, address.layout, rounds, _vector_bits(address)):
                return None
            plan = plan_shared_rounds(src, address.layout, rounds, elem_bits=elem_bits, target=target,
                                      load_vector_bits=address.row_bits)
        else:
            plan = plan_shared_conversion(src, address.layout, elem_bits=elem_bits, target=target,
                                          load_vector_bits=address.row_bits)
    except LayoutError:
        return None
    move = shared_move(src, address.layout, plan, elem_bits)
    if move.load.vec != 1 << address.row_bits or move.load.slot_thread.mask:
        return None
    store = plan.store if move.store.vec == plan.store_vec else \
        bank_cost(src, plan.shared, elem_bits=elem_bits, vec=move.store.vec, target=target)
    return LdmatrixPlan(address, move, store)


def _vector_bits(address: LdmatrixAddress) -> list[int]:
    """The tile directions of one ``ldmatrix`` row: they stay inside every round."""
    layout = address.layout
    return [layout.encode_out(dict(zip(layout.out_dims, b))) for b in layout.in_bases(REGISTER)[:address.row_bits]]


def _address(dst: LinearLayout, elem_bits: int, trans: bool, k_dim: int | None) -> LdmatrixAddress | None:
    """The address layout, with the register bits ``_matrix_bits`` picks choosing the
    destination registers."""
    try:
        return ldmatrix_address(dst, elem_bits=elem_bits, trans=trans,
                                matrix_bits=_matrix_bits(dst, 32 // elem_bits, k_dim, K_BYTES * 8 // elem_bits))
    except LayoutError:
        return None


def instruction_groups(plan: LdmatrixPlan) -> dict[int, int]:
    """Instruction (value of the address layout's register bits above the row) -> the
    index of its vector access in ``plan.move.load.groups()``: the access whose first
    element is the instruction's row element 0 (instructions whose rows hold the same
    elements share one)."""
    side, row_bits = plan.move.load, plan.address.row_bits
    index = {runtime | imm: i for i, (runtime, imm, _) in enumerate(side.groups())}
    return {r >> row_bits: index[side.offsets[r]] for r in range(0, len(side.offsets), 1 << row_bits)}


def _matrix_bits(dst: LinearLayout, word: int, k_dim: int | None = None, k_step: int = 0) -> tuple[int, ...]:
    """Up to two register bits above a 32-bit register whose elements are new (not
    reachable from the register's own bits, the lanes, or each other), preferring those
    that stay inside one instruction's K step (``k_step`` elements along output dim
    ``k_dim``): then an instruction's registers feed the same MMAs, not the next step's."""
    regs = [dst.encode_out(dict(zip(dst.out_dims, b))) for b in dst.in_bases(REGISTER)]
    lanes = [dst.encode_out(dict(zip(dst.out_dims, b))) for b in dst.in_bases(LANE)]

    def later_step(i: int) -> bool:
        return k_dim is not None and dst.in_bases(REGISTER)[i][k_dim] >= k_step

    order = sorted(range(log2(word), len(regs)), key=lambda i: (later_step(i), i))
    span = gf2.Echelon(regs[:log2(word)] + lanes)
    out: list[int] = []
    for i in order:
        if len(out) == 2:
            break
        if span.add(regs[i]):
            out.append(i)
    return tuple(sorted(out))


@dataclass
class Matrices:
    """Fragments loaded by ``ldmatrix``, one instruction (4 words with ``.x4``) when one
    of its words is first asked for."""

    e: Emitter
    layout: LinearLayout  # the operand layout
    plan: LdmatrixPlan
    cls: str  # of the destination registers: b32, or f32 for tf32 operands
    at: int   # byte offset of the buffer in the scratch area
    _first: dict[tuple[int, ...], int] = field(default_factory=dict)
    _addr: dict[int, tuple[Reg, int]] = field(default_factory=dict)
    _words: dict[int, Reg] = field(default_factory=dict)
    _rounds: dict[int, int] = field(default_factory=dict)  # instruction -> its round

    def __post_init__(self) -> None:
        a = self.plan.address
        move = self.plan.move
        word = 1 << a.word_bits
        for r in range(0, self.layout.in_dim_size(REGISTER), word):
            self._first.setdefault(constant_coords(self.layout, r), r)
        rows = accesses(self.e, move.load, a.elem_bits // 8, self.at, None if move.rounds == 1 else move.round_size)
        groups = move.load.groups()
        for instruction, i in instruction_groups(self.plan).items():
            self._addr[instruction] = rows[i][:2]
            self._rounds[instruction] = move.round_of(groups[i][1])

    def load_round(self, r: int) -> None:
        """Every instruction of round ``r`` (its data is in the buffer now)."""
        for instruction, rnd in self._rounds.items():
            if rnd == r:
                self._load(instruction)

    def word(self, coords: tuple[int, ...]) -> Reg | None:
        r = self._first.get(coords)
        if r is None:
            raise InternalCompilerError("nvptx", f"no register of the mma operand layout {self.layout} starts at "
                                        f"{coords}")
        if r not in self._words:
            self._load(self.plan.address.instruction_of(r))
        return self._words[r]

    def _load(self, instruction: int) -> None:
        a = self.plan.address
        regs = [self.e.fn.reg(self.cls) for _ in range(a.matrices)]
        addr, imm = self._addr[instruction]
        self.e.fn.emit(insn.ldmatrix(regs, insn.offset_address(addr, imm), trans=a.trans))
        for i, reg in enumerate(regs):
            self._words[a.dst_register(instruction, i)] = reg


# -- the first version's staging ------------------------------------------------------------------
@dataclass(frozen=True)
class Staged:
    """Where ``stage`` put the operands: A at ``base_a + ((b*M + m) * pitch + k*size)``,
    B^T at ``base_b + ((b*N + n) * pitch + k*size)`` (bytes)."""

    base_a: Reg
    base_b: Reg
    m: int
    n: int
    k: int
    size: int   # bytes per element
    pitch: int  # bytes per row


def stage(e: Emitter, op: Operation) -> Staged:
    """Both operands of ``op`` into the scratch area, K contiguous (barriers included)."""
    a, b = op.a, op.b
    m, k = a.type.shape[-2:]
    n = b.type.shape[-1]
    size = elem_bytes(a.type.scalar)
    pads = [_padded(op, i, layout=e.get(v).layout) for i, v in enumerate((a, b))]
    e.scratch(pads[0].nbytes + pads[1].nbytes)
    base_a = e.smem_base()
    base_b = e.fn.reg("b32")
    e.fn.emit(f"add.u32 {base_b}, {base_a}, {pads[0].nbytes}")
    e.barrier()
    for v, pad, base in zip((a, b), pads, (base_a, base_b)):
        value = e.get(v)
        _store(e, value.layout, value.regs, list(pad.strides), size, base)
    e.barrier()
    return Staged(base_a, base_b, m, n, k, size, k * size + 16)


def _store(e: Emitter, layout: LinearLayout, regs: list[Reg], strides: list[int], size: int, base: Reg) -> None:
    """Every element this thread holds, once, at sum(coord * stride) bytes from ``base``
    (lane/warp and register bits of a distributed layout are disjoint, so the runtime and
    constant parts of a coordinate add)."""
    thread = _thread_offset(e, layout, strides, base)
    seen = set()
    for r, reg in enumerate(regs):
        off = sum(c * s for c, s in zip(constant_coords(layout, r), strides))
        if off in seen:
            continue
        seen.add(off)
        mt = "b8" if size == 1 else {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64"}[reg.cls]
        e.fn.emit(f"st.shared.{mt} [{thread}+{off}], {reg}")


def _thread_offset(e: Emitter, layout: LinearLayout, strides: Sequence[int], base: Reg) -> Reg:
    """``base`` + this thread's coordinates (its lanes' and warps' part) times ``strides``."""
    thread = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {thread}, 0")
    for d, s in enumerate(strides):
        t = e.thread_coords(layout, d)
        if not isinstance(t, int):
            e.fn.emit(f"mad.lo.u32 {thread}, {t}, {s}, {thread}")
    e.fn.emit(f"add.u32 {thread}, {thread}, {base}")
    return thread


def load_type(t: DType, cls: str) -> str:
    """The ``ld.shared`` type that brings one staged element back into its register class
    (8-bit integers sign- or zero-extended, as the other lowerings keep them)."""
    if t.bits == 8:
        return "s8" if t.kind == Kind.INT else "u8"
    return {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64"}[cls]


@dataclass
class StagedWords:
    """Fragments read from ``stage``'s buffers, one ``ld.shared`` per word, at this
    thread's coordinates in the operand layout ``layout``."""

    e: Emitter
    layout: LinearLayout
    strides: tuple[int, ...]  # bytes per step of each tile dim
    base: Reg
    k_dim: int
    k: int
    cls: str
    _thread: Reg | None = None
    _words: dict[tuple[int, ...], Reg] = field(default_factory=dict)

    def word(self, coords: tuple[int, ...]) -> Reg | None:
        if coords[self.k_dim] >= self.k:
            return None
        if coords not in self._words:
            if self._thread is None:
                self._thread = _thread_offset(self.e, self.layout, self.strides, self.base)
            off = sum(c * s for c, s in zip(coords, self.strides))
            x = self.e.fn.reg(self.cls)
            self.e.fn.emit(f"ld.shared.{'f32' if self.cls == 'f32' else 'b32'} {x}, [{self._thread}+{off}]")
            self._words[coords] = x
        return self._words[coords]


# -- both operands ---------------------------------------------------------------------------------
@dataclass
class _Padded:
    """One operand in the first version's staging: rows of K (B transposed), padded."""

    layout: LinearLayout  # the operand layout its words are read in
    strides: tuple[int, ...]  # bytes per step of each tile dim
    nbytes: int
    k_dim: int

    def store(self, e: Emitter, value: TileRegs, at: int) -> None:
        base = _offset_base(e, at)
        _store(e, value.layout, value.regs, list(self.strides), self.strides[self.k_dim], base)

    def words(self, e: Emitter, at: int, k: int, cls: str) -> Fragments:
        return StagedWords(e, self.layout, self.strides, _offset_base(e, at), self.k_dim, k, cls)


def _padded(op: Operation, i: int, layout: LinearLayout) -> _Padded:
    """Operand ``i`` of the dot ``op`` in the first version's staging: ``[batch, rows, K]``
    row-major (B transposed), rows padded by 16 bytes; its words read in ``layout``."""
    v = op.operands[i]
    shape = v.type.shape
    rank = len(shape)
    size = elem_bytes(v.type.scalar)
    pitch = op.a.type.shape[-1] * size + 16
    rows = shape[-2 + i]  # M of A, N of B
    inner = (pitch, size) if i == 0 else (size, pitch)
    strides = ((rows * pitch,) if rank == 3 else ()) + inner
    return _Padded(layout, strides, (shape[0] if rank == 3 else 1) * rows * pitch, rank - 1 - i)


@dataclass
class _Swizzled:
    """One operand through the planner's buffer, loaded with ``ldmatrix``."""

    layout: LinearLayout
    plan: LdmatrixPlan
    nbytes: int

    def store(self, e: Emitter, value: TileRegs, at: int, access: list[Access] | None = None) -> None:
        store_shared(e, value.regs[0].cls, value.regs, self.plan.move, at, access)

    def words(self, e: Emitter, at: int, k: int, cls: str) -> Fragments:
        return Matrices(e, self.layout, self.plan, cls, at)


def _offset_base(e: Emitter, at: int) -> Reg:
    """The scratch area's address plus ``at`` (computed once, in the prologue)."""
    base = e.smem_base()
    if not at:
        return base
    return e.special_value(f"mma.scratch:{at}", f"add.u32 {{r}}, {base}, {at};")


def fragments(e: Emitter, op: Operation, parent: MmaV2, cls: str) -> tuple[Fragments, Fragments]:
    """A's and B's fragments for the ``mma.sync`` accumulating in ``parent``'s layout,
    words in registers of class ``cls``: the stores are emitted here (between barriers),
    the loads when a word is first asked for -- or here, round by round, when the
    operands are staged in rounds (module doc). Each operand takes ``ldmatrix`` when its
    K is whole instruction steps and the planner places it, else the padded staging."""
    a, b = op.a, op.b
    size = elem_bytes(a.type.scalar)  # type: ignore[arg-type]
    k = a.type.shape[-1]
    rank = len(a.type.shape)
    t = e.target
    target = LayoutTarget(t.warp_size, t.shared_banks, t.bank_bytes, t.max_vector_bytes)
    operands: list[_Padded | _Swizzled] = []
    for i, v in enumerate((a, b)):
        layout = parent.operand(v.type.shape, i, 4 // size)
        plan = None if (k * size) % K_BYTES else \
            plan_ldmatrix(e.get(v).layout, layout, elem_bits=8 * size, target=target, k_dim=rank - 1 - i)
        operands.append(_padded(op, i, layout) if plan is None else _Swizzled(layout, plan, plan.move.size * size))
    operands = _k_rounds(e, op, operands, target)
    starts = [0, -(-operands[0].nbytes // REGION_ALIGN) * REGION_ALIGN]
    e.scratch(starts[1] + operands[1].nbytes)
    rounds = operands[0].plan.move.rounds if isinstance(operands[0], _Swizzled) else 1
    if rounds == 1:
        e.barrier()  # the scratch area may still be read by the op before
        for v, operand, at in zip((a, b), operands, starts):
            operand.store(e, e.get(v), at)
        e.barrier()
        return operands[0].words(e, starts[0], k, cls), operands[1].words(e, starts[1], k, cls)
    swizzled = [o for o in operands if isinstance(o, _Swizzled)]
    stores = [round_accesses(e, o.plan.move, o.plan.move.store, at) for o, at in zip(swizzled, starts)]
    words = [Matrices(e, o.layout, o.plan, cls, at) for o, at in zip(swizzled, starts)]
    for r in range(rounds):
        e.barrier()  # the buffers may still be read by the op (or the round) before
        for v, o, at, st in zip((a, b), swizzled, starts, stores):
            o.store(e, e.get(v), at, st[r])
        e.barrier()
        for w in words:
            w.load_round(r)
    return words[0], words[1]


def _k_rounds(e: Emitter, op: Operation, operands: list[_Padded | _Swizzled],
              target: LayoutTarget) -> list[_Padded | _Swizzled]:
    """``operands`` staged in rounds along K when both buffers do not fit in the scratch
    budget (module doc): the fewest K directions, highest first, that qualify for both
    operands and bring the two round buffers within it. Operands that fit, or that take
    the padded staging, stay as they are; too few directions keep as many rounds as they
    allow (the kernel's shared-memory check then reports the rest)."""
    budget = scratch_budget(e)

    def total(ops_: Sequence[_Padded | _Swizzled]) -> int:
        return -(-ops_[0].nbytes // REGION_ALIGN) * REGION_ALIGN + ops_[1].nbytes

    if total(operands) <= budget or not all(isinstance(o, _Swizzled) for o in operands):
        return operands
    a, b = op.a, op.b
    size = elem_bytes(a.type.scalar)  # type: ignore[arg-type]
    rank = len(a.type.shape)
    k = a.type.shape[-1]
    step = K_BYTES // size  # K elements of one instruction step: a round holds whole steps
    best = operands
    picked: list[tuple[int, int]] = []  # K bits, as (A direction, B direction)
    for j in reversed(range(log2(step), log2(k))):
        dirs = []
        for i, (v, o) in enumerate(zip((a, b), operands)):
            src = e.get(v).layout
            coords = {src.out_dims[rank - 1 - i]: 1 << j}
            dirs.append(src.encode_out(coords))
        trial = []
        for i, (v, o) in enumerate(zip((a, b), operands)):
            assert isinstance(o, _Swizzled)
            rounds = tuple(p[i] for p in picked) + (dirs[i],)
            plan = plan_ldmatrix_as(e.get(v).layout, o.layout, elem_bits=8 * size, target=target,
                                    trans=o.plan.address.trans, k_dim=rank - 1 - i, rounds=rounds)
            if plan is None or plan.address != o.plan.address:
                break
            trial.append(_Swizzled(o.layout, plan, plan.move.round_size * size))
        if len(trial) != 2:
            continue
        picked.append((dirs[0], dirs[1]))
        best = trial
        if total(best) <= budget:
            break
    return best
