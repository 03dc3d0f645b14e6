"""``tl.dot`` on AMDGPU, 2-D and batched 3-D: MFMA on gfx942 / gfx950, WMMA on gfx1250,
and a per-lane FMA loop for what no matrix instruction takes.

The plan (instruction, layouts, which registers feed which instruction) is the pure
``dot_plan``; this file emits it:

* ``dot_layout`` is what the layout pass asks (``TargetInfo.dot_layout``): the plan's accumulator layout,
  so a loop-carried accumulator lives in it and the loop converts nothing;
* an operand that arrives in the plan's operand layout is used from its registers
  (``RegisterFragments``): a ``local_load`` that only feeds the dot reads its buffer
  straight into that layout (the layout pass asks ``dot_operand_layout``), and
  ``lower_buffers`` defers those reads to here, so each instruction's fragments are read
  next to it rather than the whole operand being live at once;
* any other operand is staged through LDS once (``stage``): written from whatever layout
  it arrives in (vectorized where consecutive registers land on consecutive LDS
  elements), K contiguous with the swizzle of ``amd_lds`` that makes the operand reads
  conflict-free, between two barriers; each lane then reads ``k_width`` K-consecutive
  elements per ``ds_read_b64`` / ``ds_read_b128`` (``Fragments``);
* one MFMA / WMMA intrinsic per (tile, K step), K-major, each accumulating into the
  vector (``<16 x float>``...) built from the accumulator registers of its tile;
* the FMA loop (``_fma``) reads the same kind of staging (unswizzled) at this lane's rows
  of A and columns of B, in the accumulator's own layout -- fp64, uint8, fp16
  accumulators, tiles below 16 and K not a multiple of an instruction step; correct for
  every shape, not fast.

LDS addresses: the layouts are linear over GF(2), so a register's LDS element offset is
a constant per register XOR a value per lane (``ThreadPart``); the constant's bits that
the lane value can never have are added instead (they become the immediate offset of
the ``ds_read`` / ``ds_write``), the rest are XORed at run time, once per distinct value.

fp8 has two flavours on AMD: gfx942 multiplies the fnuz formats (float8e4b8, float8e5b16),
gfx950 and gfx1250 the OCP ones (float8e4nv, float8e5); a dot on the other flavour is
refused at the user's line (``check``). ``tl.dot_scaled`` is ``lower_dot_scaled``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import llvmlite.ir as ir

from ...errors import CompilationError, InternalCompilerError
from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.common import BLOCK, LANE, OFFSET, REGISTER, WARP, all_register_coords, dim_names, swizzled_shared
from ...ir.layout.linear import LinearLayout, log2
from ...ir.types import DType, Kind
from .dot_plan import FP8, DotPlan, accumulator_tiles, calls, choose, intrinsic_signature, llvm_type
from .emitter import Emitter, lowers
from .isa import AmdTarget
from .llvm import BFLOAT, F16, F32, I32, LDS_PTR, bytes_of, value_type
from .mma_table import MmaInstr

WHERE = "amdgpu"
REGION_ALIGN = 128  # the second operand's LDS region starts on a bank line
MAX_VECTOR_BYTES = 16


# ----------------------------------------------------------------------------- the plan of a dot op
def plan_of(op: Operation, arch: str, num_warps: int) -> DotPlan | None:
    a, b, acc = op.a.type, op.b.type, op.result.type
    return choose(arch, a.scalar.ir_name, acc.scalar.ir_name, op.input_precision, tuple(a.shape), tuple(b.shape),
                  num_warps)


def dot_layout(op: Operation, target: AmdTarget, num_warps: int) -> LinearLayout | None:
    """The MFMA / WMMA accumulator layout of a dot that runs on the matrix cores of
    ``target``, None for the FMA loop (the canonical layout): ``TargetInfo.dot_layout``."""
    if isinstance(op, ops.DotScaledOp):
        from .lower_dot_scaled import accumulator_layout  # lower_dot_scaled builds on this module

        return accumulator_layout(op, target.arch, num_warps)
    if not isinstance(op, ops.DotOp):
        return None
    plan = plan_of(op, target.arch, num_warps)
    return plan.accumulator() if plan is not None else None


def dot_operand_layout(op: Operation, target: AmdTarget, index: int, num_warps: int) -> LinearLayout | None:
    """The MFMA / WMMA operand layout of a dot's operand ``index`` (a ``local_load`` feeding
    it reads its buffer straight into it), None for the FMA loop:
    ``TargetInfo.dot_operand_layout``."""
    if not isinstance(op, ops.DotOp):
        return None
    plan = plan_of(op, target.arch, num_warps)
    return plan.operand(index) if plan is not None else None


def check(func: Operation, target: AmdTarget) -> None:
    """Dots this target refuses, at the user's line, before any code is built."""
    for op in func.walk():
        if isinstance(op, ops.DotOp):
            t = op.a.type.scalar
            if isinstance(t, DType) and t.ir_name in FP8 and t.sig_name not in target.fp8_dtypes:
                e4, e5 = target.fp8_dtypes
                flavour = "fnuz" if target.fp8 == "fnuz" else "OCP"
                other = "OCP" if target.fp8 == "fnuz" else "fnuz"
                raise CompilationError(
                    "TLXC-TYPE-001", f"tl.dot on {t.tl_name} ({other} fp8): {target.arch}'s matrix cores multiply "
                    f"the {flavour} fp8 formats only ({_tl(e4)}, {_tl(e5)})", op.loc,
                    f"use tl.{_tl(e4)} / tl.{_tl(e5)} on {target.arch} (the OCP formats float8e4nv / float8e5 on "
                    "gfx950 and gfx1250, the fnuz formats float8e4b8 / float8e5b16 on gfx942)")
        elif isinstance(op, ops.DotScaledOp):
            from .lower_dot_scaled import check as check_scaled

            check_scaled(op, target, func.num_warps)


def _tl(sig: str) -> str:
    return {"fp8e4b8": "float8e4b8", "fp8e5b16": "float8e5b16", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}[sig]


@lowers(ops.DotOp)
def dot(e: Emitter, op: Operation) -> None:
    plan = plan_of(op, e.target.arch, e.num_warps)
    if plan is not None and op.result.type.layout == plan.accumulator():
        _mma(e, op, plan)
    else:
        _fma(e, op)


# ----------------------------------------------------------------------------- LDS addresses
@dataclass(frozen=True)
class OffsetMap:
    """Element offsets in an LDS buffer of the elements a distributed layout holds:
    ``layout`` maps (register, lane, warp, block) to ``offset``."""

    layout: LinearLayout

    @property
    def thread_mask(self) -> int:
        """Every offset bit that a lane or wave can contribute."""
        m = 0
        for d in (LANE, WARP, BLOCK):
            if self.layout.has_in_dim(d):
                for b in self.layout.in_bases(d):
                    m |= b[0]
        return m

    def register(self, r: int) -> int:
        return self.layout.apply_flat(r)

    def split(self, r: int) -> tuple[int, int]:
        """(the part XORed at run time, the part added) of register ``r``'s constant offset."""
        c = self.register(r)
        return c & self.thread_mask, c & ~self.thread_mask

    def vector(self, max_elems: int) -> int:
        """The most registers (a power of two, at most ``max_elems``) whose elements lie
        at consecutive offsets in every lane, starting at a multiple of the count."""
        regs = self.layout.in_bases(REGISTER)
        v = 1
        while v < max_elems and log2(v) < len(regs) and regs[log2(v)][0] == v:
            v *= 2
        low = v - 1
        others = [b[0] for b in regs[log2(v):]]
        for d in (LANE, WARP, BLOCK):
            if self.layout.has_in_dim(d):
                others += [b[0] for b in self.layout.in_bases(d)]
        while v > 1 and any(o & low for o in others):
            v //= 2
            low = v - 1
        return v


def offset_map(dist: LinearLayout, shared: LinearLayout) -> OffsetMap:
    inv = shared.sublayout([OFFSET], shared.out_dims).invert()
    return OffsetMap(dist.compose(inv))


def _thread_part(e: Emitter, m: OffsetMap) -> tuple[ir.Value | int, str]:
    """This lane's part of the offsets of ``m`` (the XOR of the lane and wave bases), and
    a key naming it among the kernel's per-lane values."""
    terms: list[tuple[str, int, int]] = []
    for src in (LANE, WARP):
        if m.layout.has_in_dim(src):
            for bit, basis in enumerate(m.layout.in_bases(src)):
                if basis[0]:
                    terms.append((src, bit, basis[0]))
    if not terms:
        return 0, "0"
    key = "lds-offsets:" + ";".join(f"{s}{b}:{c}" for s, b, c in terms)
    lane, warp = e.special("lane"), e.special("warp")

    def make(b: ir.IRBuilder) -> ir.Value:
        acc: ir.Value | None = None
        for src, bit, c in terms:
            x = lane if src == LANE else warp
            t = b.and_(b.lshr(x, ir.Constant(I32, bit)), ir.Constant(I32, 1))
            t = b.mul(t, ir.Constant(I32, c))
            acc = t if acc is None else b.xor(acc, t)
        assert acc is not None
        return acc

    return e.in_entry(key, make), key


@dataclass
class Addresses:
    """LDS pointers of one buffer (at byte ``at`` of the scratch area) for the registers
    of one distributed layout: one runtime XOR per distinct runtime part."""

    e: Emitter
    map: OffsetMap
    at: int
    elem_bytes: int
    _thread: tuple[ir.Value | int, str] | None = None
    _rows: dict[int, ir.Value] = field(default_factory=dict)

    def pointer(self, r: int, extra: int = 0) -> ir.Value:
        """The address of register ``r``'s element, plus ``extra`` elements."""
        lo, hi = self.map.split(r)
        return self.at_offset(lo, hi + extra)

    def at_offset(self, lo: int, hi: int) -> ir.Value:
        if self._thread is None:
            self._thread = _thread_part(self.e, self.map)
        if lo not in self._rows:
            t, key = self._thread
            if isinstance(t, int):
                x: ir.Value = ir.Constant(I32, (t ^ lo) * self.elem_bytes)
            else:
                e = self.e
                x = e.in_entry(f"{key}^{lo}*{self.elem_bytes}", lambda b: b.mul(
                    b.xor(t, ir.Constant(I32, lo)) if lo else t, ir.Constant(I32, self.elem_bytes)))
            self._rows[lo] = x
        e = self.e
        const = e.scratch_offset + self.at + hi * self.elem_bytes
        base = _lds_gep(e, e.lds, self._rows[lo])
        return _lds_gep(e, base, ir.Constant(I32, const)) if const else base


def _lds_gep(e: Emitter, ptr: ir.Value, offset: ir.Value) -> ir.Value:
    """``ptr + offset`` bytes in LDS, typed as the opaque pointer it is (llvmlite would
    type a GEP on ``@global_smem`` as a pointer to the array)."""
    gep = e.b.gep(ptr, [offset], inbounds=True, source_etype=ir.IntType(8))
    gep.type = LDS_PTR
    return gep


def stage(e: Emitter, vals: list[ir.Value], src: LinearLayout, shared: LinearLayout, at: int,
          elem_ty: ir.Type) -> None:
    """Write the elements this lane holds in ``src`` (values ``vals``) to the LDS buffer
    ``shared`` at byte ``at`` of the scratch area: each element once per lane, as wide
    vectors as the layouts allow. Lanes holding the same element write the same value."""
    eb = bytes_of(elem_ty)
    m = offset_map(src, shared)
    v = m.vector(MAX_VECTOR_BYTES // eb)
    addr = Addresses(e, m, at, eb)
    seen: set[int] = set()
    for r in range(0, len(vals), v):
        c = m.register(r)
        if c in seen:
            continue
        seen.add(c)
        if v == 1:
            x = vals[r]
        else:
            x = ir.Constant(ir.VectorType(elem_ty, v), ir.Undefined)
            for i in range(v):
                x = e.b.insert_element(x, vals[r + i], ir.Constant(I32, i))
        e.b.store(x, addr.pointer(r), align=v * eb)


@dataclass
class Fragments:
    """One operand read back from LDS in its dot-operand layout: ``k_width``-element
    vectors (one ``ds_read``), loaded when first used; ``piece`` builds an instruction
    operand from the registers it names."""

    e: Emitter
    layout: LinearLayout
    addr: Addresses
    k_width: int
    elem_ty: ir.Type
    _vectors: dict[int, ir.Value] = field(default_factory=dict)
    _pieces: dict[tuple[int, ...], ir.Value] = field(default_factory=dict)

    def vector(self, r: int) -> ir.Value:
        start = r - r % self.k_width
        if start not in self._vectors:
            kw, eb = self.k_width, self.addr.elem_bytes
            ty = ir.VectorType(self.elem_ty, kw) if kw > 1 else self.elem_ty
            x = self.e.b.load(self.addr.pointer(start), typ=ty, align=kw * eb)
            if kw == 1:
                x = self.e.b.insert_element(ir.Constant(ir.VectorType(self.elem_ty, 1), ir.Undefined), x,
                                            ir.Constant(I32, 0))
            self._vectors[start] = x
        return self._vectors[start]

    def piece(self, regs: tuple[int, ...]) -> ir.Value:
        """A vector of the elements of ``regs`` (runs of consecutive registers)."""
        if regs in self._pieces:
            return self._pieces[regs]
        step = min(self.k_width, len(regs))
        parts = []
        for i in range(0, len(regs), step):
            run = regs[i:i + step]
            if list(run) != list(range(run[0], run[0] + step)) or run[0] % step:
                raise InternalCompilerError(WHERE, f"dot operand registers {run} are not one LDS vector")
            vec = self.vector(run[0])
            off = run[0] % self.k_width
            if step < self.k_width:
                vec = _shuffle(self.e, vec, vec, list(range(off, off + step)))
            parts.append(vec)
        while len(parts) > 1:
            parts = [_shuffle(self.e, parts[j], parts[j + 1], list(range(2 * _count(parts[j]))))
                     for j in range(0, len(parts), 2)]
        self._pieces[regs] = parts[0]
        return parts[0]


@dataclass
class RegisterFragments:
    """An operand that arrives in its dot-operand layout (a ``local_load`` read its buffer
    straight into it): ``piece`` gathers the registers it names into a vector. A deferred
    ``local_load`` (``lower_buffers.DeferredLoad``) reads a register's LDS vector when
    ``piece`` first asks for it, so the reads interleave with the instructions."""

    e: Emitter
    vals: Sequence[ir.Value]
    elem_ty: ir.Type
    _pieces: dict[tuple[int, ...], ir.Value] = field(default_factory=dict)

    def piece(self, regs: tuple[int, ...]) -> ir.Value:
        if regs not in self._pieces:
            x = ir.Constant(ir.VectorType(self.elem_ty, len(regs)), ir.Undefined)
            for i, r in enumerate(regs):
                x = self.e.b.insert_element(x, self.vals[r], ir.Constant(I32, i))
            self._pieces[regs] = x
        return self._pieces[regs]


def _count(v: ir.Value) -> int:
    return v.type.count  # type: ignore[attr-defined]


def _shuffle(e: Emitter, x: ir.Value, y: ir.Value, mask: list[int]) -> ir.Value:
    return e.b.shuffle_vector(x, y, ir.Constant(ir.VectorType(I32, len(mask)), [ir.Constant(I32, i) for i in mask]))


def _operand(e: Emitter, x: ir.Value, ty: ir.Type, round_tf32: bool, widen: str | None = None) -> ir.Value:
    """A fragment vector as the intrinsic's operand type (same bits, or its one element);
    ``widen``: fp8 bytes of this kind (``fp8`` / ``bf8``) converted to fp16 first."""
    if round_tf32:
        x = _tf32(e, x)
    if widen is not None:
        out = ir.Constant(ir.VectorType(F16, _count(x)), ir.Undefined)
        for i in range(_count(x)):
            f = _fp8_to_f32(e, e.b.extract_element(x, ir.Constant(I32, i)), widen)
            out = e.b.insert_element(out, e.b.fptrunc(f, F16), ir.Constant(I32, i))
        x = out
    if not isinstance(ty, ir.VectorType) and _count(x) == 1:
        x = e.b.extract_element(x, ir.Constant(I32, 0))
        return x if x.type == ty else e.b.bitcast(x, ty)
    return x if x.type == ty else e.b.bitcast(x, ty)


def _tf32(e: Emitter, x: ir.Value) -> ir.Value:
    """fp32 values rounded to tf32 (10 mantissa bits, to nearest even; as the interpreter
    rounds): ``(bits + 0xfff + ((bits >> 13) & 1)) & ~0x1fff``. Infinities and NaNs are not
    inputs a dot is defined on here."""
    ity = ir.VectorType(I32, _count(x)) if isinstance(x.type, ir.VectorType) else I32

    def c(v: int) -> ir.Constant:
        return ir.Constant(ity, [ir.Constant(I32, v)] * _count(x)) if isinstance(ity, ir.VectorType) \
            else ir.Constant(I32, v)

    bits = e.b.bitcast(x, ity)
    odd = e.b.and_(e.b.lshr(bits, c(13)), c(1))
    bits = e.b.and_(e.b.add(e.b.add(bits, c(0xFFF)), odd), c(0xFFFFE000 - (1 << 32)))
    return e.b.bitcast(bits, x.type)


# ----------------------------------------------------------------------------- the matrix cores
def _regions(sizes: list[int]) -> tuple[list[int], int]:
    starts, at = [], 0
    for s in sizes:
        starts.append(at)
        at = -(-(at + s) // REGION_ALIGN) * REGION_ALIGN
    return starts, starts[-1] + sizes[-1]


def _stage_operands(e: Emitter, op: Operation, shared: list[LinearLayout],
                    which: tuple[int, ...] = (0, 1)) -> list[int]:
    """Operands ``which`` into their LDS buffers (barriers before and after); the starts
    of both buffers (an operand not staged keeps its region unused)."""
    eb = bytes_of(value_type(op.a.type.scalar))
    sizes = [s.in_dim_size(OFFSET) * eb if i in which else 0 for i, s in enumerate(shared)]
    starts, total = _regions(sizes)
    if not which:
        return starts
    e.scratch(total)
    e.barrier()  # the scratch area may still be read by an earlier op (or iteration)
    for i in which:
        v = op.operands[i]
        value = e.get(v)
        stage(e, value.vals, value.layout, shared[i], starts[i], value_type(v.type.scalar))
    e.barrier()
    return starts


def _mma(e: Emitter, op: Operation, plan: DotPlan) -> None:
    elem_ty = value_type(op.a.type.scalar)
    shared = [plan.shared(i, e.target.lds_banks) for i in (0, 1)]
    # an operand already in its dot-operand layout (a local_load read it so) is used from
    # its registers; the others take one trip through LDS
    values = [e.get(op.operands[i]) for i in (0, 1)]
    direct = tuple(i for i in (0, 1) if values[i].layout == plan.operand(i))
    starts = _stage_operands(e, op, shared, tuple(i for i in (0, 1) if i not in direct))
    sources: list[Any] = [RegisterFragments(e, values[i].vals, elem_ty) if i in direct else None for i in (0, 1)]
    widen = _fp8_kind(op.a.type.scalar) if plan.widen else None
    issue(e, op, plan, shared, starts, elem_ty, round_tf32=plan.round_tf32, widen=widen, sources=sources)


def issue(e: Emitter, op: Operation, plan: DotPlan, shared: list[LinearLayout], starts: list[int],
          elem_ty: ir.Type, *, instr: MmaInstr | None = None, round_tf32: bool = False, widen: str | None = None,
          scale: Callable[[int, tuple[int, ...]], ir.Value] | None = None,
          sources: Sequence[Any] | None = None) -> None:
    """Read the staged operands back as fragments and issue every MFMA / WMMA of ``plan``
    (``instr``: the plan's own unless given), accumulating in ``op``'s accumulator.
    ``scale(i, regs)``: the i32 scale operand of operand ``i`` for the fragment made of
    ``regs``, for the scaled instructions of ``lower_dot_scaled``. ``sources[i]``: the
    fragments of an operand that was not staged (``RegisterFragments``), else None."""
    instr = instr or plan.instr
    eb = bytes_of(elem_ty)
    frags: list[Any] = []
    for i in (0, 1):
        if sources is not None and sources[i] is not None:
            frags.append(sources[i])
            continue
        layout = plan.operand(i)
        m = offset_map(layout, shared[i])
        if m.vector(plan.k_width) != plan.k_width:
            raise InternalCompilerError(WHERE, f"operand {i} of {instr.mnemonic}: {plan.k_width} K elements are "
                                        f"not contiguous in LDS", op.loc)
        frags.append(Fragments(e, layout, Addresses(e, m, starts[i], eb), plan.k_width, elem_ty))
    src_frags = (frags[1], frags[0]) if plan.transposed else (frags[0], frags[1])

    ret, arg_types, template = intrinsic_signature(instr, scaled=scale is not None)
    fn = e.intrinsic(instr.intrinsic, ret, arg_types)
    ty = {"a": llvm_type(instr.a_type), "b": llvm_type(instr.b_type)}

    layout = op.result.type.layout
    acc_vals = e.get(op.acc).vals
    tiles = accumulator_tiles(plan, layout)
    cur: dict[tuple[int, int, int], ir.Value] = {}
    for key, regs in tiles.items():
        if -1 in regs:
            raise InternalCompilerError(WHERE, f"accumulator registers {regs} do not fill one {instr.mnemonic} "
                                        "result", op.loc)
        vec = ir.Constant(ret, ir.Undefined)
        for slot, r in enumerate(regs):
            vec = e.b.insert_element(vec, acc_vals[r], ir.Constant(I32, slot))
        cur[key] = vec
    for call in calls(plan):
        operands = {"a": _operand(e, src_frags[0].piece(call.src0), ty["a"], round_tf32, widen),
                    "b": _operand(e, src_frags[1].piece(call.src1), ty["b"], round_tf32, widen),
                    "c": cur[call.acc]}
        if scale is not None:  # source 0 is B (scales of operand 1) for a transposed plan
            operands["scale_a"] = scale(1 if plan.transposed else 0, call.src0)
            operands["scale_b"] = scale(0 if plan.transposed else 1, call.src1)
        args = [operands[t] if isinstance(t, str) else t for t in template]
        cur[call.acc] = e.b.call(fn, args)
    where: dict[tuple[int, ...], ir.Value] = {}
    coords = all_register_coords(layout)
    for key, regs in tiles.items():
        for slot, r in enumerate(regs):
            where[coords[r]] = e.b.extract_element(cur[key], ir.Constant(I32, slot))
    e.set(op.result, [where[c] for c in coords])


# ----------------------------------------------------------------------------- the FMA loop
def _project(layout: LinearLayout, shape: tuple[int, ...], keep: tuple[int, ...]) -> LinearLayout:
    """``layout`` (of the accumulator) with only the output dims ``keep[d]`` kept, renamed
    onto a tile of ``shape`` (dim ``d`` of the result takes ``keep[d]``; -1: zero)."""
    names = dim_names(len(shape))
    bases = {}
    for d in layout.in_dims:
        bases[d] = [tuple(b[k] if k >= 0 else 0 for k in keep) for b in layout.in_bases(d)]
    return LinearLayout(bases, dict(zip(names, shape)))


def _fma(e: Emitter, op: Operation) -> None:
    a, b, acc = op.operands
    rank = len(a.type.shape)
    a_t: DType = a.type.scalar
    acc_t: DType = op.result.type.scalar
    layout = op.result.type.layout
    elem_ty = value_type(a_t)
    eb = bytes_of(elem_ty)
    k = a.type.shape[-1]
    batch = (0,) if rank == 3 else ()
    # A as [.., M, K] and B as [.., K, N], both K contiguous, no swizzle
    order_a = (rank - 1, rank - 2) + batch
    order_b = (rank - 2, rank - 1) + batch
    shared = [swizzled_shared(a.type.shape, 1, 1, 1, order_a), swizzled_shared(b.type.shape, 1, 1, 1, order_b)]
    starts = _stage_operands(e, op, shared)
    # this lane's rows of A (K = 0) and columns of B, in the accumulator's registers
    keep_a = batch + (rank - 2, -1)
    keep_b = batch + (-1, rank - 1)
    rows = offset_map(_project(layout, a.type.shape, keep_a), shared[0])
    cols = offset_map(_project(layout, b.type.shape, keep_b), shared[1])
    addrs = [Addresses(e, rows, starts[0], eb), Addresses(e, cols, starts[1], eb)]
    v = max(1, min(k, MAX_VECTOR_BYTES // eb))
    vec_ty = ir.VectorType(elem_ty, v) if v > 1 else elem_ty
    loaded: dict[tuple[int, int, int], ir.Value] = {}

    def element(which: int, r: int, kk: int) -> ir.Value:
        m = (rows, cols)[which]
        start = kk - kk % v
        key = (which, m.register(r), start)
        if key not in loaded:
            x = e.b.load(addrs[which].pointer(r, start), typ=vec_ty, align=v * eb)
            loaded[key] = x
        x = loaded[key]
        return e.b.extract_element(x, ir.Constant(I32, kk % v)) if v > 1 else x

    work = _work_type(a_t, acc_t)
    tf32 = op.input_precision == "tf32" and a_t.ir_name == "f32"
    acc_vals = e.get(acc).vals
    done: dict[tuple[int, int], ir.Value] = {}
    out = []
    for r in range(layout.in_dim_size(REGISTER)):
        key = (rows.register(r), cols.register(r))
        if key in done:
            out.append(done[key])
            continue
        cur = _convert(e, acc_vals[r], acc_t, work)
        for kk in range(k):
            x = _convert(e, element(0, r, kk), a_t, work)
            y = _convert(e, element(1, r, kk), a_t, work)
            if tf32:
                x, y = _tf32(e, x), _tf32(e, y)
            if isinstance(work, ir.IntType):
                cur = e.b.add(e.b.mul(x, y), cur)
            else:
                cur = e.b.fma(x, y, cur)
        res = _convert(e, cur, work, acc_t)
        done[key] = res
        out.append(res)
    e.set(op.result, out)


def _fp8_kind(t: DType) -> str:
    return "fp8" if t.ir_name.startswith("f8e4") else "bf8"


def _fp8_to_f32(e: Emitter, x: ir.Value, kind: str) -> ir.Value:
    """One fp8 byte (e4m3: ``fp8``, e5m2: ``bf8``, in the chip's flavour) as f32:
    ``v_cvt_f32_fp8`` / ``v_cvt_f32_bf8`` on byte 0 of a dword."""
    wide = e.b.zext(x, I32)
    return e.b.call(e.intrinsic(f"llvm.amdgcn.cvt.f32.{kind}", F32, [I32, I32]), [wide, ir.Constant(I32, 0)])


def _work_type(a_t: DType, acc_t: DType) -> Any:
    """The type the FMA loop sums in: f64 for f64, the accumulator's integer type, else
    f32 (fp16 / bf16 accumulators are summed in f32 and rounded once at the end)."""
    if acc_t.kind != Kind.FLOAT:
        return value_type(acc_t)
    return value_type(acc_t) if acc_t.ir_name == "f64" else F32


def _convert(e: Emitter, x: ir.Value, t: Any, to: Any) -> ir.Value:
    """An operand or accumulator value of IR type ``t`` into the work type ``to`` (and
    the sum back: ``t`` an LLVM type, ``to`` the IR type)."""
    if isinstance(t, ir.Type):  # back from the work type to the accumulator's dtype
        want = value_type(to)
        if want == t:
            return x
        if isinstance(want, ir.IntType):
            return e.b.trunc(x, want)
        return e.b.fptrunc(x, want)
    src = value_type(t)
    if src == to:
        return x
    if isinstance(to, ir.IntType):
        return e.b.sext(x, to) if t.kind == Kind.INT else e.b.zext(x, to)
    if isinstance(src, (ir.HalfType,)) or src == BFLOAT or src == F16:
        return e.b.fpext(x, to)
    if t.ir_name in FP8:
        f = _fp8_to_f32(e, x, _fp8_kind(t))
        return f if to == F32 else e.b.fpext(f, to)
    if src == F32 and to != F32:
        return e.b.fpext(x, to)
    raise CompilationError("TLXC-CODEGEN-001", f"tl.dot on {t!r} cannot be compiled for {e.target.arch} yet",
                           e.current.loc if e.current else None)


__all__ = ["dot_layout", "dot_operand_layout", "check", "plan_of", "stage", "offset_map", "OffsetMap"]
