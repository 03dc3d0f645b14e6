"""The AMDGPU emitter: walks a kernel's IR (with layouts assigned) and asks one lowering
rule per op (``@lowers(OpClass)``) to build LLVM IR with ``llvmlite.ir``.

Values, as in the NVIDIA emitter (``codegen/nvptx/emitter.py``): a scalar IR value
(uniform across the work-group) is one LLVM value; a tile in a distributed layout ``L``
is the list of this lane's values, one per value of L's ``register`` input: value ``r``
holds element ``L(register=r, lane=lane, warp=wave)``. Layouts are linear over GF(2), so
that coordinate is ``L(r, 0, 0) XOR L(0, lane, wave)``: a constant per register XOR one
runtime value per lane (``thread_coords``). A "warp" is a wavefront: 64 lanes on gfx942
and gfx950, 32 on gfx1250 (``target.wave_size``).

Control flow is structured (``for``/``if``/``while`` regions); ``lower_control`` builds
basic blocks and phi nodes for region results and loop-carried values, so the rules of
other ops never see a phi. ``e.b`` is the ``IRBuilder`` positioned where the current op's
code goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import llvmlite.ir as ir

from ...errors import CompilationError, InternalCompilerError, TlxcError
from ...ir import ops
from ...ir.core import Block, Operation, Value
from ...ir.layout.common import all_register_coords, thread_terms
from ...ir.layout.linear import LinearLayout
from ...ir.types import BarrierType, MemDescType, TileType, TokenType, Type
from ..dead_window import DeadWindows
from .isa import AmdTarget
from .llvm import I32, I64, LDS_PTR, mangle

RULES: dict[type, Callable[["Emitter", Operation], None]] = {}


def lowers(*classes: type) -> Callable[[Callable[["Emitter", Operation], None]], Callable]:
    def deco(fn: Callable[["Emitter", Operation], None]) -> Callable:
        for c in classes:
            RULES[c] = fn
        return fn

    return deco


@dataclass
class TileVals:
    """This lane's part of a value: one LLVM value per layout register (scalars: one)."""

    vals: list[ir.Value]
    layout: LinearLayout | None = None


@dataclass
class Emitter:
    module: ir.Module
    fn: ir.Function
    b: ir.IRBuilder
    target: AmdTarget
    num_warps: int
    values: dict[int, TileVals] = field(default_factory=dict)
    current: Operation | None = None
    axis: Any = None  # the axis analysis of the function (contiguity/alignment), for vectorization
    # LDS: the kernel's buffer plan (``tlxc.ir.passes.smem_alloc.SmemPlan``), the scratch
    # area of conversions and reductions after the buffers, and the LDS array itself
    smem: Any = None
    scratch_offset: int = 0
    scratch_bytes: int = 0
    lds: ir.GlobalVariable | None = None
    entry: ir.Block | None = None  # the function's first block: per-kernel values are computed there
    # tl.device_print: the record buffer (the last parameter) and the sites written so far
    print_buffer: ir.Value | None = None
    print_sites: list[dict[str, Any]] = field(default_factory=list)
    _special: dict[str, ir.Value] = field(default_factory=dict)
    _coords: dict[tuple[LinearLayout, int], ir.Value | int] = field(default_factory=dict)
    _dead: Any = None  # the buffers' live ranges, for ``dead_window`` (``codegen.dead_window``)

    # -- values ------------------------------------------------------------------------------
    def get(self, v: Value) -> TileVals:
        try:
            return self.values[id(v)]
        except KeyError:
            raise InternalCompilerError("amdgpu", f"value of type {v.type} used before it was lowered",
                                        self.current.loc if self.current else None) from None

    def set(self, v: Value, vals: list[ir.Value], layout: LinearLayout | None = None) -> None:
        self.values[id(v)] = TileVals(list(vals), layout if layout is not None else layout_of(v.type))

    # -- intrinsics and calls ------------------------------------------------------------------
    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        """The declaration of ``name`` (an LLVM intrinsic or a device function), made once."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return fn

    def call(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        return self.b.call(self.intrinsic(name, ret, [a.type for a in args]), args)

    def call_overloaded(self, base: str, ret: ir.Type, args: list[ir.Value], overload: ir.Type) -> ir.Value:
        """``base.<mangled overload type>`` (``llvm.maxnum`` + f32 -> ``llvm.maxnum.f32``)."""
        return self.call(f"{base}.{mangle(overload)}", ret, args)

    # -- per-kernel values (computed once, in the entry block) ---------------------------------
    def in_entry(self, key: str, make: Callable[[ir.IRBuilder], ir.Value]) -> ir.Value:
        """A value computed once at the top of the kernel (before the first branch), so
        that every block may use it."""
        v = self._special.get(key)
        if v is None:
            assert self.entry is not None
            v = self._special[key] = make(_EntryBuilder(self.entry))
        return v

    def special(self, name: str) -> ir.Value:
        """``tid`` (work-item id in the work-group), ``lane``, ``warp`` (wave index, made
        wave-uniform with readfirstlane so that it lives in a scalar register),
        ``pid0..2`` (work-group ids)."""
        wave = self.target.wave_size
        if name == "tid":
            return self.in_entry("tid", lambda b: b.call(self.intrinsic("llvm.amdgcn.workitem.id.x", I32, []), []))
        if name == "lane":
            tid = self.special("tid")
            return self.in_entry("lane", lambda b: b.and_(tid, ir.Constant(I32, wave - 1)))
        if name == "warp":
            tid = self.special("tid")

            def make(b: ir.IRBuilder) -> ir.Value:
                w = b.lshr(tid, ir.Constant(I32, wave.bit_length() - 1))
                return b.call(self.intrinsic("llvm.amdgcn.readfirstlane.i32", I32, [I32]), [w])

            return self.in_entry("warp", make)
        if name.startswith("pid"):
            axis = "xyz"[int(name[3:])]
            return self.in_entry(name, lambda b: b.call(
                self.intrinsic(f"llvm.amdgcn.workgroup.id.{axis}", I32, []), []))
        raise InternalCompilerError("amdgpu", f"unknown special value {name!r}")

    def thread_coords(self, layout: LinearLayout, dim: int) -> ir.Value | int:
        """L(0, lane, warp) along output dim ``dim``: the runtime part of every register's
        coordinate (0 when no lane or warp bit moves along it)."""
        key = (layout, dim)
        if key in self._coords:
            return self._coords[key]
        terms = thread_terms(layout, dim)
        if not terms:
            self._coords[key] = 0
            return 0
        lane, warp = self.special("lane"), self.special("warp")

        def make(b: ir.IRBuilder) -> ir.Value:
            acc: ir.Value | None = None
            for src, bit, c in terms:
                x = lane if src == "lane" else warp
                t = b.and_(b.lshr(x, ir.Constant(I32, bit)), ir.Constant(I32, 1))
                t = b.mul(t, ir.Constant(I32, c))
                acc = t if acc is None else b.xor(acc, t)
            assert acc is not None
            return acc

        v = self.in_entry(f"coords:{id(layout)}:{dim}", make)
        self._coords[key] = v
        return v

    # -- LDS -------------------------------------------------------------------------------------
    def scratch(self, nbytes: int) -> None:
        """Reserve ``nbytes`` of the kernel's LDS scratch area (reused by every op, which
        brackets its use with barriers)."""
        self.scratch_bytes = max(self.scratch_bytes, nbytes)

    def dead_window(self) -> tuple[int, int]:
        """(offset, bytes) of the largest run of LDS below the scratch area that only
        buffers dead at the current op cover: every access to them comes earlier in the
        program, and the op is in no loop (a later iteration would use them again). An op
        whose scratch starts with a barrier (every wave is past its last access to them)
        may put its scratch there instead of in the scratch area -- a GEMM epilogue's
        layout conversion over the operand buffers of the finished main loop. (0, 0): none.
        Liveness ends at a buffer's last ``local_load``, whose reads ``lower_buffers`` may
        defer to the dot that uses them: such an op never comes in between (``deferrable``)."""
        if self.current is None:
            return 0, 0
        if self._dead is None:
            self._dead = DeadWindows(self.smem, self.scratch_offset)
        return self._dead.at(self.current)

    def scratch_at(self, nbytes: int) -> int:
        """Where the current op's ``nbytes`` of scratch start, in bytes from the scratch
        area: over dead buffers (``dead_window``, a negative offset) when they leave room,
        else at the area's start, reserved there. The op must begin with a barrier."""
        at, room = self.dead_window()
        if nbytes <= room:
            return at - self.scratch_offset
        self.scratch(nbytes)
        return 0

    def lds_base(self) -> ir.Value:
        """The LDS address of the kernel's scratch area (after the buffers)."""
        assert self.lds is not None
        return self.in_entry("lds_scratch", lambda b: _opaque(b.gep(self.lds, [ir.Constant(I32, self.scratch_offset)],
                                                                    source_etype=ir.IntType(8))))

    def lds_address(self, offset: ir.Value | int) -> ir.Value:
        """``lds + offset`` bytes (an ``i32`` value or a constant)."""
        assert self.lds is not None
        if isinstance(offset, int):
            offset = ir.Constant(I32, offset)
        return _opaque(self.b.gep(self.lds, [offset], source_etype=ir.IntType(8)))

    def barrier(self) -> None:
        """A work-group barrier that also orders LDS accesses (``s_barrier`` with the
        fences LLVM needs to keep LDS loads and stores on their side)."""
        self.b.fence("release", "workgroup")
        self.b.call(self.intrinsic("llvm.amdgcn.s.barrier", ir.VoidType(), []), [])
        self.b.fence("acquire", "workgroup")

    # -- walking -------------------------------------------------------------------------------
    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        rule = RULES.get(type(op))
        if rule is None:
            raise CompilationError("TLXC-CODEGEN-001", f"'{op.NAME}' cannot be compiled for {self.target.arch} yet",
                                   op.loc)
        prev, self.current = self.current, op
        try:
            rule(self, op)
        except TlxcError:
            raise
        except Exception as err:  # a bug in a lowering rule: reported at the user's line, not as a traceback
            raise InternalCompilerError("amdgpu", f"lowering '{op.NAME}': {type(err).__name__}: {err}", op.loc) from err
        finally:
            self.current = prev


class _EntryBuilder(ir.IRBuilder):
    """Appends every instruction at the end of the entry block (before its branch, once
    there is one). A plain builder keeps the insertion index it was positioned at, so a
    ``make`` that asks for another entry value (``special("tid")`` inside it) would put its
    own instructions before that value's definition."""

    def _insert(self, instr: ir.Instruction) -> None:
        term = self.block.terminator
        if term is not None:
            self.position_before(term)
        else:
            self.position_at_end(self.block)
        super()._insert(instr)


def _opaque(gep: ir.Value) -> ir.Value:
    """A ``getelementptr`` on ``@global_smem`` as the opaque ``ptr addrspace(3)`` it is:
    llvmlite types it as a pointer to the array (its typed-pointer walk), and then refuses to
    store anything but the array through it."""
    gep.type = LDS_PTR
    return gep


def layout_of(t: Type) -> LinearLayout | None:
    return t.layout if isinstance(t, TileType) else None


def num_regs(t: Type) -> int:
    if isinstance(t, TileType):
        if t.layout is None:
            raise InternalCompilerError("amdgpu", f"tile {t} has no layout (layout assignment did not run)")
        return t.layout.in_dim_size("register")
    return 1


def is_handle(t: Type) -> bool:
    """Buffers, barriers and tokens: one LDS address (tokens: a placeholder)."""
    return isinstance(t, (MemDescType, BarrierType, TokenType))


def register_coords(layout: LinearLayout, r: int) -> tuple[int, ...]:
    """The constant part of register ``r``'s coordinate, per output dim."""
    return all_register_coords(layout)[r]


__all__ = ["Emitter", "TileVals", "lowers", "RULES", "register_coords", "ops", "I64", "LDS_PTR"]
