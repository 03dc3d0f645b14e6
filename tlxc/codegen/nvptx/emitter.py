"""The PTX emitter: walks a kernel's IR (with layouts assigned) and asks one lowering
rule per op (``@lowers(OpClass)``) to append PTX to a ``PtxFunction``.

Values. A scalar IR value (thread-uniform) is one register. A tile in a distributed
layout ``L`` is the list of this thread's registers, one per value of L's ``register``
input: register ``r`` holds element ``L(register=r, lane=laneid, warp=warpid)``. Because
layouts are linear over GF(2), that coordinate is ``L(r, 0, 0) XOR L(0, lane, warp)``:
a constant per register XOR one runtime value per thread (``thread_coords``), which is
how ``arange``, conversions and reductions find out what they hold.

Packed values. A tile of 16-bit elements may be held *packed*: register ``j`` a 32-bit
register with elements ``2j`` (low half) and ``2j + 1`` (high half). Only the producers
that need it make one (an fp16 wgmma accumulator, whose registers must not be touched by
other instructions while the MMA is in flight: lower_wgmma), and only the ops that know
it see it (``get(v, packed_ok=True)``); every other ``get`` unpacks it right there, once
per op, so no other lowering rule is concerned. A loop carries a value packed when it
yields a packed value (``produces_packed``), so a pipelined loop never unpacks an
accumulator that an MMA still writes.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ...errors import CompilationError, InternalCompilerError, TlxcError
from ...ir import ops
from ...ir.core import Block, Operation, Value
from ...ir.layout.common import all_register_coords, thread_terms
from ...ir.layout.linear import LinearLayout
from ...ir.types import BarrierType, DType, MemDescType, PointerType, TileType, TokenType, Type
from ..dead_window import DeadWindows
from .instructions import PtxOperandError, bar_sync, bar_warp_sync
from .isa import NvidiaTarget
from .ptx import PtxFunction, Reg, reg_class

RULES: dict[type, Callable[["Emitter", Operation], None]] = {}
# op class -> whether its result ``v`` is produced packed (module docstring)
PACKED_PRODUCERS: dict[type, Callable[["Emitter", Operation, Value], bool]] = {}


def lowers(*classes: type) -> Callable[[Callable[["Emitter", Operation], None]], Callable]:
    def deco(fn: Callable[["Emitter", Operation], None]) -> Callable:
        for c in classes:
            RULES[c] = fn
        return fn

    return deco


@dataclass
class TileRegs:
    """This thread's part of a value: one register per layout register (scalars: one)."""

    regs: list[Reg]
    layout: LinearLayout | None = None
    packed: bool = False  # two 16-bit elements per 32-bit register (module docstring)


@dataclass(frozen=True)
class Scope:
    """Who runs the code being emitted: warps ``[first_warp, first_warp + num_warps)`` of
    the CTA. A rule that synchronizes or asks for a thread id asks the emitter's scope, so
    that the same rule is right inside any warp-specialized partition: the scope's
    barrier is ``bar.sync 0`` for the whole CTA, ``bar.sync id, threads`` on the
    partition's own hardware barrier (``barrier_id``), or ``bar.warp.sync`` for one warp
    (``barrier_id`` None); its thread ids count from its first warp."""

    first_warp: int
    num_warps: int
    barrier_id: int | None = 0
    whole_cta: bool = True

    def barrier(self) -> str:
        if self.whole_cta:
            return bar_sync(0)
        if self.barrier_id is None:
            return bar_warp_sync()
        return bar_sync(self.barrier_id, self.num_warps * 32)


@dataclass
class Emitter:
    fn: PtxFunction
    target: NvidiaTarget
    num_warps: int
    files: dict[str, int] = field(default_factory=dict)
    values: dict[int, TileRegs] = field(default_factory=dict)
    prologue: list[str] = field(default_factory=list)
    _special: dict[str, Reg] = field(default_factory=dict)
    _coords: dict[tuple[LinearLayout, int], Reg | int] = field(default_factory=dict)
    scratch_bytes: int = 0
    # shared memory: the kernel's buffer plan (``tlxc.ir.passes.smem_alloc.SmemPlan``) and
    # where the scratch area starts after the buffers
    smem: Any = None
    # TMA descriptor parameters: index -> {"index", "block_shape", "element", "swizzle"}
    tma_params: dict[int, dict[str, Any]] = field(default_factory=dict)
    # descriptors built in the kernel (``lower_tensormap.TensormapPlan``): slots in global scratch
    tensormaps: Any = None
    # False (enable_fp_fusion=False): float add/sub/mul carry .rn, which ptxas does not contract
    fp_fusion: bool = True
    scratch_offset: int = 0
    current: Operation | None = None
    # where the current op's scratch lies over buffers dead at it (``scratch_over_dead``);
    # None: in the scratch area
    _window: int | None = None
    _dead: Any = None
    axis: Any = None  # the axis analysis of the function (contiguity/alignment), for vectorization
    _unpacked: dict[int, TileRegs] = field(default_factory=dict)  # packed values unpacked by this op
    _divergent: dict[int, bool] = field(default_factory=dict)  # scalar values that differ between threads
    divergent_depth: int = 0  # > 0 while lowering code that only some threads of the CTA run
    # i32 registers known to equal ``base + constant`` without signed overflow (the lanes of an
    # ``arange``): name -> (base, constant). Address arithmetic scales the base once and adds
    # the constant in bytes, which ptxas folds into the access's immediate offset.
    offset_of: dict[str, tuple[Reg, int]] = field(default_factory=dict)
    # the cluster shape the kernel is compiled for (() or all ones: not clustered)
    cluster_dims: tuple[int, ...] = ()
    # Triton's num_ctas: each program is a cluster of this many CTAs (program ids count clusters)
    num_ctas: int = 1
    # the kernel writes a peer's shared memory with plain stores (``remote_store``): its
    # remote mbarrier arrives must then release at cluster scope (``lower_sync.barrier_arrive``)
    remote_stores: bool = False
    # the warps that run the code being emitted (``enter``), and each scope's per-thread values
    scope: Scope | None = None
    _scoped: dict[Scope, tuple[dict, dict]] = field(default_factory=dict)
    _base_scope: Scope | None = None
    # warp specialization: the worker partitions' count, each one's scratch bytes, and the
    # code of the worker warps (emitted after the default path: ``lower_tasks``)
    partitions: int = 0
    partition_scratch: dict[Scope, int] = field(default_factory=dict)
    worker_code: list[str] = field(default_factory=list)
    # the run-time checks that trap at the kernel's exits (``defer_trap``): their OR
    failed_check: Reg | None = None
    ws: Any = None  # the warp-specialization plan (``lower_tasks.WsPlan``)

    def __post_init__(self) -> None:
        if self.scope is None:
            self.scope = Scope(0, self.num_warps)
        self._base_scope = self.scope
        self._scoped[self.scope] = (self._special, self._coords)

    def rebase(self, scope: Scope) -> None:
        """Make ``scope`` the kernel's base scope (before anything is emitted): under warp
        specialization the code outside the partitions runs on the default warps only."""
        self._scoped = {scope: (self._special, self._coords)}
        self.scope = self._base_scope = scope

    @property
    def clustered(self) -> bool:
        """Whether the kernel runs in clusters of several CTAs."""
        n = 1
        for d in self.cluster_dims:
            n *= d
        return n > 1

    @contextmanager
    def enter(self, scope: Scope) -> Iterator[None]:
        """Emit for ``scope`` (a partition's warps): its thread ids, barriers and per-thread
        values (``special``, ``thread_xor``... are kept per scope), and its warp count for
        layouts."""
        saved = (self.scope, self.num_warps, self._special, self._coords)
        self.scope, self.num_warps = scope, scope.num_warps
        self._special, self._coords = self._scoped.setdefault(scope, ({}, {}))
        try:
            yield
        finally:
            self.scope, self.num_warps, self._special, self._coords = saved

    # -- values ------------------------------------------------------------------------------
    def get(self, v: Value, packed_ok: bool = False) -> TileRegs:
        try:
            got = self.values[id(v)]
        except KeyError:
            raise InternalCompilerError("nvptx", f"value of type {v.type} used before it was lowered",
                                        self.current.loc if self.current else None) from None
        if got.packed and not packed_ok:
            unpacked = self._unpacked.get(id(v))
            if unpacked is None:
                unpacked = self._unpacked[id(v)] = TileRegs(self.unpack16(got.regs), got.layout)
            return unpacked
        return got

    def produces_packed(self, v: Value) -> bool:
        op = v.owner
        rule = PACKED_PRODUCERS.get(type(op))
        return rule is not None and isinstance(op, Operation) and rule(self, op, v)

    def pack16(self, regs: list[Reg]) -> list[Reg]:
        """Fresh 32-bit registers holding ``regs`` (16-bit) in pairs, lowest first."""
        out = []
        for j in range(0, len(regs), 2):
            w = self.fn.reg("b32")
            self.fn.emit(f"mov.b32 {w}, {{{regs[j]}, {regs[j + 1]}}}")
            out.append(w)
        return out

    def unpack16(self, words: list[Reg]) -> list[Reg]:
        out = []
        for w in words:
            lo, hi = self.fn.reg("b16"), self.fn.reg("b16")
            self.fn.emit(f"mov.b32 {{{lo}, {hi}}}, {w}")
            out += [lo, hi]
        return out

    def set(self, v: Value, regs: list[Reg], layout: LinearLayout | None = None) -> None:
        self.values[id(v)] = TileRegs(regs, layout if layout is not None else layout_of(v.type))

    def new_regs(self, t: Type) -> list[Reg]:
        if isinstance(t, (MemDescType, BarrierType, TokenType)):
            return [self.fn.reg("b32")]  # a shared-memory address (a token: a placeholder)
        n = num_regs(t)
        cls = reg_class(t.scalar)
        return [self.fn.reg(cls) for _ in range(n)]

    # -- special registers (computed once, in the prologue) -----------------------------------
    def special(self, name: str) -> Reg:
        r = self._special.get(name)
        if r is None:
            r = self.fn.reg("b32")
            if name == "lane":
                self.prologue.append(f"\tand.b32 {r}, {self.special('tid')}, 31;")
            elif name == "warp":
                self.prologue.append(f"\tshr.u32 {r}, {self.special('tid')}, 5;")
            elif name == "tid":  # counted from the scope's first warp
                self.prologue.append(f"\tmov.u32 {r}, %tid.x;")
                assert self.scope is not None
                if self.scope.first_warp:
                    self.prologue.append(f"\tsub.u32 {r}, {r}, {self.scope.first_warp * 32};")
            else:
                self.prologue.append(f"\tmov.u32 {r}, %{name};")
            self._special[name] = r
        return r

    def thread_coords(self, layout: LinearLayout, dim: int) -> Reg | int:
        """L(0, lane, warp) along output dim ``dim``: the runtime part of every register's
        coordinate (0 when no lane or warp bit moves along it)."""
        key = (layout, dim)
        if key in self._coords:
            return self._coords[key]
        # lane bit b is bit b of %tid.x, warp bit b is bit b + log2(32): as a function of
        # %tid.x, runs of bits that land on consecutive bits (the usual blocked layout)
        # take one bit-field extract and one shift (thread_xor)
        lane_bits = (layout.in_dim_size("lane") - 1).bit_length() if layout.has_in_dim("lane") else 0
        by_tid_bit: list[int] = []
        for src, bit, c in thread_terms(layout, dim):
            b = bit if src == "lane" else lane_bits + bit
            by_tid_bit += [0] * (b + 1 - len(by_tid_bit))
            by_tid_bit[b] ^= c
        acc = self.thread_xor(by_tid_bit)
        self._coords[key] = acc
        return acc

    def thread_xor(self, terms: list[int]) -> Reg | int:
        """``XOR of terms[i] over the set bits i of %tid.x``, computed once in the
        prologue (0 when every term is 0). Runs of bits that land on consecutive bits
        take one bit-field extract and a shift."""
        if not any(terms):
            return 0
        key = f"thread_xor:{terms}"
        if key in self._special:
            return self._special[key]
        tid = self.special("tid")
        acc: Reg | None = None
        i = 0
        while i < len(terms):
            c = terms[i]
            if not c:
                i += 1
                continue
            t = self.fn.reg("b32")
            if c & (c - 1) == 0:
                j = i + 1
                while j < len(terms) and terms[j] == c << (j - i):
                    j += 1
                self.prologue.append(f"\tbfe.u32 {t}, {tid}, {i}, {j - i};")
                if c > 1:
                    self.prologue.append(f"\tshl.b32 {t}, {t}, {c.bit_length() - 1};")
                i = j
            else:
                self.prologue.append(f"\tbfe.u32 {t}, {tid}, {i}, 1;")
                self.prologue.append(f"\tmul.lo.u32 {t}, {t}, {c};")
                i += 1
            if acc is None:
                acc = t
            else:
                self.prologue.append(f"\txor.b32 {acc}, {acc}, {t};")
        assert acc is not None
        self._special[key] = acc
        return acc

    def thread_owner(self, mask: int) -> Reg | None:
        """A predicate, set once in the prologue: ``%tid.x & mask == 0`` -- the one thread
        of each group of copies that does the work (None when ``mask`` is 0)."""
        if not mask:
            return None
        key = f"thread_owner:{mask}"
        if key not in self._special:
            p, t = self.fn.reg("pred"), self.fn.reg("b32")
            self.prologue.append(f"\tand.b32 {t}, {self.special('tid')}, {mask};")
            self.prologue.append(f"\tsetp.eq.u32 {p}, {t}, 0;")
            self._special[key] = p
        return self._special[key]

    # -- scratch shared memory -----------------------------------------------------------------
    def scratch(self, nbytes: int) -> None:
        """Reserve ``nbytes`` of the scope's scratch area (reused by every op of the scope,
        which brackets its use with the scope's barriers)."""
        assert self.scope is not None
        if self.scope == self._base_scope:
            self.scratch_bytes = max(self.scratch_bytes, nbytes)
        else:  # a partition runs beside the others: its own area, placed after the base one (placement)
            self.partition_scratch[self.scope] = max(self.partition_scratch.get(self.scope, 0), nbytes)

    def scratch_over_dead(self, nbytes: int) -> None:
        """Reserve ``nbytes`` of scratch for the current op, over the bytes of buffers that
        are dead at it where they leave room (a GEMM epilogue's layout conversion over the
        finished main loop's operand ring: the kernel's shared memory stays what the loop
        needs, so more CTAs fit on an SM), else in the scratch area. Only for an op that
        writes its scratch after a barrier of the whole CTA (every thread is past its last
        access to the dead buffers; their asynchronous work was retired before the
        allocation's live range ended -- ``smem_alloc.live_ranges``), outside loops and
        partitions."""
        at, room = self._dead_window()
        if nbytes <= room:
            self._window = at
        else:
            self.scratch(nbytes)

    def _dead_window(self) -> tuple[int, int]:
        op = self.current
        if op is None or self.scope != self._base_scope or self.partitions:
            return 0, 0
        if self._dead is None:
            self._dead = DeadWindows(self.smem, self.scratch_offset)
        return self._dead.at(op)

    def smem_base(self) -> Reg:
        """The 32-bit shared-window address of the scope's scratch area (after the
        kernel's buffers, ``scratch_offset`` bytes into ``global_smem``; a partition's
        after the others', written as a placeholder that ``place_scratch`` fills)."""
        assert self.scope is not None
        if self._window is not None:
            return self.special_value(f"smem@{self._window}", f"mov.u32 {{r}}, global_smem+{self._window};")
        if self.scope != self._base_scope:
            return self.special_value("smem", f"mov.u32 {{r}}, global_smem+@SCRATCH{self.scope.first_warp}@;")
        if self.scratch_offset:
            return self.special_value("smem", f"mov.u32 {{r}}, global_smem+{self.scratch_offset};")
        return self.special_value("smem", "mov.u32 {r}, global_smem;")

    @property
    def scratch_share(self) -> int:
        """How many scopes share the shared memory the buffers leave for scratch."""
        return 1 + self.partitions

    def place_scratch(self, text: str) -> tuple[str, int]:
        """``text`` with each partition's scratch placeholder replaced by its offset (after
        the base scope's area, 16-byte aligned), and the scratch bytes of all scopes."""
        end = self.scratch_offset + self.scratch_bytes
        for scope, nbytes in sorted(self.partition_scratch.items(), key=lambda kv: kv[0].first_warp):
            end = -(-end // 16) * 16
            text = text.replace(f"@SCRATCH{scope.first_warp}@", str(end))
            end += nbytes
        return text, end - self.scratch_offset

    def special_value(self, key: str, text: str) -> Reg:
        r = self._special.get(key)
        if r is None:
            r = self.fn.reg("b32")
            self.prologue.append("\t" + text.format(r=r))
            self._special[key] = r
        return r

    def barrier(self) -> None:
        """Every thread of the scope reaches this point."""
        assert self.scope is not None
        self.fn.emit(self.scope.barrier())

    # -- uniformity ----------------------------------------------------------------------------
    def divergent(self, v: Value) -> bool:
        """Whether scalar ``v`` may differ between the threads of the CTA: it depends on
        ``tlx.thread_id`` or ``tlx.clock64`` (through any op, region result or loop-carried
        value). Every other scalar is uniform, which lets branches be ``bra.uni`` and a
        scalar store be done by one thread."""
        key = id(v)
        if key in self._divergent:
            return self._divergent[key]
        self._divergent[key] = False  # while visiting: a cycle through a loop adds nothing
        owner = v.owner
        if isinstance(owner, Operation):
            found = isinstance(owner, (ops.ThreadIdOp, ops.Clock64Op, ops.SpecialRegisterOp)) or \
                any(self.divergent(x) for x in owner.operands) or \
                any(self.divergent(x) for r in owner.regions for b in r.blocks if b.ops for x in b.ops[-1].operands)
        elif isinstance(owner, Block) and owner.parent is not None and owner.parent.parent is not None:
            op = owner.parent.parent  # the op whose region this block is
            found = any(self.divergent(x) for x in op.operands) or \
                any(self.divergent(x) for r in op.regions for b in r.blocks if b.ops for x in b.ops[-1].operands)
        else:
            found = False
        self._divergent[key] = found
        return found

    # -- walking -------------------------------------------------------------------------------
    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        rule = RULES.get(type(op))
        if rule is None:
            raise CompilationError("TLXC-CODEGEN-001", f"'{op.NAME}' cannot be compiled for {self.target.arch} yet",
                                   op.loc)
        if op.loc is not None:
            idx = self.files.setdefault(op.loc.file, len(self.files) + 1)
            self.fn.loc(idx, op.loc.line, op.loc.col)
        prev, self.current = self.current, op
        prev_window, self._window = self._window, None
        # an unpacked copy is only valid where it was made: within one op, which does not
        # interleave with the ops of its regions (they reset this too)
        self._unpacked = {}
        try:
            rule(self, op)
        except PtxOperandError as err:
            raise InternalCompilerError("nvptx", f"lowering '{op.NAME}': {err}", op.loc) from None
        except TlxcError:
            raise
        except Exception as err:  # a bug in a lowering rule: reported at the user's line, not as a traceback
            raise InternalCompilerError("nvptx", f"lowering '{op.NAME}': {type(err).__name__}: {err}", op.loc) from err
        finally:
            self.current = prev
            self._window = prev_window
            self._unpacked = {}


def layout_of(t: Type) -> LinearLayout | None:
    return t.layout if isinstance(t, TileType) else None


def num_regs(t: Type) -> int:
    if isinstance(t, TileType):
        if t.layout is None:
            raise InternalCompilerError("nvptx", f"tile {t} has no layout (layout assignment did not run)")
        return t.layout.in_dim_size("register")
    return 1


def register_coords(layout: LinearLayout, r: int) -> tuple[int, ...]:
    """The constant part of register ``r``'s coordinate, per output dim."""
    return all_register_coords(layout)[r]


def element_type(t: Type) -> DType | PointerType:
    return t.scalar


__all__ = ["Emitter", "TileRegs", "lowers", "RULES", "register_coords", "ops"]
