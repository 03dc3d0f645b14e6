"""TLX's AMD operations on AMDGPU (seed 000, "Explicit MFMA scheduling"; tlx-semantics AMD
rows): register layouts, register fragments, scheduling fences, register classes and
explicitly scheduled MFMA chains.

* ``zeros``: a zero per register of the layout the user named (``layouts`` turned the
  dict into it). ``require_layout`` / ``release_layout``: no code (``layouts`` put any
  conversion before ``require_layout``). ``extract_slice``: the registers that hold the
  sub-tile (``layout.slices.extract_slice_layout`` refused a misaligned one at the user's
  line); nothing moves.
* ``rematerialized_range``: an ``arange`` whose lane-dependent part is recomputed from
  ``llvm.amdgcn.workitem.id.x`` where the op is, instead of the kernel-wide value in the
  entry block that other ranges share (LLVM may still merge equal computations).
* ``amd_sched_barrier(mask)``: ``llvm.amdgcn.sched.barrier(mask)`` (``SCHED_BARRIER``
  in the assembly: machine instructions of the classes not in ``mask`` stay on their
  side).
Inline ``asm`` has an empty text (see ``tied_asm``: only its constraints matter).

* ``amd_register_resident``: one side-effecting inline ``asm`` whose outputs are tied to
  its inputs, one ``"a"`` / ``"v"`` operand per group of ``registers_per_group``
  consecutive 32-bit registers (16-bit elements packed in pairs): every group is in the
  class at that one point. ``amd_register_class_anchor``: one such ``asm`` per packed
  32-bit register.
* ``amd_scheduled_mfma``: for each native fragment, the accumulator registers gathered
  into the instruction's result vector (zeros with ``initialize``), then one MFMA per
  (K step, N fragment, M fragment) in that order (K-major, N-major, M-minor), each
  chain threading its own vector, with an ``llvm.amdgcn.sched.barrier`` between two MFMAs
  that lets every other instruction class cross (``MFMA_ORDER_MASK``), so that the
  machine scheduler keeps that issue order (without it, LLVM reorders the independent
  chains of a VGPR-form op). Both roles call the MFMA intrinsic (so LLVM models its
  latency and hazards); the persistent role passes every result through a tied
  ``asm`` with the accumulator's class (``auto``: AGPR, so gfx950 keeps the chain in
  ``a`` registers) and pins ``resident_operand`` to AGPRs. The instruction is the
  ``mma_table`` entry of the accumulator's MFMA ``instr_shape`` and operand dtype; the
  operand layouts are the dot operands of that MFMA layout with ``k_width`` 4 or 8
  (``scheduled_plan(...).layouts`` gives them to the layout pass through ``TargetInfo``; unpinned values are
  converted). An accumulator without a pinned layout gets the MFMA layout ``tl.dot``
  would (``dot_plan``).
* ``amd_mfma_commit``: ``s_nop``s (``llvm.amdgcn.s.nop``) long enough for the longest
  MFMA's results (18 wait states: the 16-pass 32x32 instructions before a VALU read),
  then one side-effecting ``asm`` with every committed value tied through it, in groups
  of four 32-bit registers. A results-only boundary keeps each result in the class its
  chain was given (``committed_class``): AGPRs for a persistent ``auto`` / ``agpr`` chain
  or a value the user made AGPR-resident, VGPRs otherwise (a transient chain); with
  ``preserve``, the results in VGPRs and the preserved operand in AGPRs, as the seed
  states. The seed's own lowering puts every results-only boundary in AGPRs; it calls the
  placement an implementation detail, and tlxc departs from it for transient chains
  because of what one ``"a"`` constraint does to the whole kernel (below).

Why a transient chain must not meet an ``"a"`` constraint: LLVM (22) selects every MFMA of
a function in its AGPR form (accumulator and result in AGPRs) as soon as the function may
use AGPRs, which its attributor infers from any ``"a"`` operand of an inline ``asm``
(``"amdgpu-agpr-alloc"``). Values that cross a basic block -- a loop-carried accumulator --
travel in 32-bit VGPR-class virtual registers whatever the form, and an AGPR-form chain
carried around a loop then costs a copy per accumulator register per iteration
(``v_accvgpr_mov``: 256 per iteration of ``examples/amd_scheduled_mfma_gemm.py`` when its
commit was in AGPRs, against none now). Without ``"a"`` constraints LLVM selects the VGPR
form and, where VGPRs run out, moves whole chains to AGPRs itself (``AMDGPURewriteAGPRCopyMFMA``),
without copies in the loop. Kernels that do pin values to AGPRs (``amd_register_resident``,
persistent chains, ``preserve``) still get the AGPR form, and a chain carried around a loop
there still costs AGPR-to-AGPR copies (128 per iteration for 64 accumulator registers in
two bands; ``tests/codegen/test_amd_sched_copies.py``): lifting that needs LLVM to give
loop-carried MFMA results an AGPR class across blocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir

from ...errors import CompilationError, InternalCompilerError
from ...ir import ops
from ...ir.core import BlockArgument, Operation, OpResult, Value
from ...ir.layout.amd import AmdMfma
from ...ir.layout.common import all_register_coords
from ...ir.layout.linear import LayoutError, LinearLayout
from ...ir.layout.slices import extract_slice_layout
from ...ir.passes.layouts import amd_parent
from .. import target_ops
from .dot_plan import MFMA_VERSION, DotPlan, accumulator_tiles, intrinsic_signature, llvm_type, operand_tiles
from .dot_plan import warps_per_cta as default_warps
from .emitter import Emitter, lowers
from .llvm import F32, I16, I32, VOID, constant, value_type
from .mma_table import MmaInstr, choose_mma, entries

AMD = "TLXC-TLX-007"
SCHEDULED_K_WIDTHS = (4, 8)
# ``llvm.amdgcn.sched.barrier`` mask between two MFMAs of one scheduled op: every class may
# cross (VALU 0x2, SALU 0x4, VMEM 0x10-0x40, DS 0x80-0x200, TRANS 0x400) except MFMA/WMMA
# (0x8) and the "all ALU" class (0x1, which includes them)
MFMA_ORDER_MASK = 0x7F6
# s_nop N waits N + 1 states: 8 + 8 + 2 = 18, what a VALU read of a 16-pass MFMA's result needs
COMMIT_NOPS = (7, 7, 1)
_DTYPES = {"f16": "fp16", "bf16": "bf16"}


# ----------------------------------------------------------------------------- layouts and values
@lowers(ops.ZerosOp)
def zeros(e: Emitter, op: Operation) -> None:
    ty = value_type(op.result.type.scalar)
    e.set(op.result, [constant(ty, 0)] * op.result.type.layout.in_dim_size("register"))


@lowers(ops.RequireLayoutOp, ops.ReleaseLayoutOp)
def same_values(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    if src.layout != op.result.type.layout:
        raise InternalCompilerError("amdgpu", f"'{op.NAME}': the layout pass left its operand in another layout",
                                    op.loc)
    e.set(op.result, src.vals)


@lowers(ops.ExtractSliceOp)
def extract_slice(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    layout, regs = extract_slice_layout(src.layout, op.offsets, op.result.type.shape)
    if layout != op.result.type.layout:  # pragma: no cover - the layout pass set it
        raise InternalCompilerError("amdgpu", "extract_slice: result layout differs from the pass's", op.loc)
    e.set(op.result, [src.vals[r] for r in regs])


@lowers(ops.RematerializedRangeOp)
def rematerialized_range(e: Emitter, op: Operation) -> None:
    layout = op.result.type.layout
    start = op.start
    tid = e.b.call(e.intrinsic("llvm.amdgcn.workitem.id.x", I32, []), [])
    wave = e.target.wave_size
    lane = e.b.and_(tid, ir.Constant(I32, wave - 1))
    warp = e.b.lshr(tid, ir.Constant(I32, wave.bit_length() - 1))
    t: ir.Value = ir.Constant(I32, 0)
    for name, x in (("lane", lane), ("warp", warp)):
        for bit, basis in enumerate(layout.in_bases(name)):
            if basis[0]:
                term = e.b.and_(e.b.lshr(x, ir.Constant(I32, bit)), ir.Constant(I32, 1))
                t = e.b.xor(t, e.b.mul(term, ir.Constant(I32, basis[0])))
    out, cache = [], {}
    for c in all_register_coords(layout):
        if c[0] not in cache:
            cache[c[0]] = e.b.add(e.b.xor(t, ir.Constant(I32, c[0])), ir.Constant(I32, start))
        out.append(cache[c[0]])
    e.set(op.result, out)


@lowers(ops.AmdSchedBarrierOp)
def amd_sched_barrier(e: Emitter, op: Operation) -> None:
    e.call("llvm.amdgcn.sched.barrier", VOID, [ir.Constant(I32, op.mask)])


# ----------------------------------------------------------------------------- register classes
def _constraint(cls: str) -> str:
    return "a" if cls == "agpr" else "v"


def _pack_words(e: Emitter, vals: list[ir.Value]) -> list[ir.Value]:
    """The values as 32-bit words (16-bit elements two to a word, the first in the low half)."""
    words = []
    bits = vals[0].type.width if isinstance(vals[0].type, ir.IntType) else (32 if vals[0].type == F32 else 16)
    if bits == 32:
        return [v if v.type == I32 else e.b.bitcast(v, I32) for v in vals]
    for i in range(0, len(vals), 2):
        pair = vals[i:i + 2]
        lo = pair[0] if pair[0].type == I16 else e.b.bitcast(pair[0], I16)
        w = e.b.zext(lo, I32)
        if len(pair) == 2:
            hi = pair[1] if pair[1].type == I16 else e.b.bitcast(pair[1], I16)
            w = e.b.or_(w, e.b.shl(e.b.zext(hi, I32), ir.Constant(I32, 16)))
        words.append(w)
    return words


def _unpack_words(e: Emitter, words: list[ir.Value], like: list[ir.Value]) -> list[ir.Value]:
    ty = like[0].type
    bits = ty.width if isinstance(ty, ir.IntType) else (32 if ty == F32 else 16)
    if bits == 32:
        return [w if ty == I32 else e.b.bitcast(w, ty) for w in words]
    out = []
    for w in words:
        for half in range(2):
            if len(out) == len(like):
                break
            x = e.b.trunc(e.b.lshr(w, ir.Constant(I32, 16 * half)) if half else w, I16)
            out.append(x if ty == I16 else e.b.bitcast(x, ty))
    return out


def tied_asm(e: Emitter, groups: list[tuple[ir.Value, str]]) -> list[ir.Value]:
    """One side-effecting inline ``asm`` that passes each ``(value, class letter)`` through
    a tied operand of that class; returns the values it gives back.

    The asm text is empty, always: llvmlite's LLVM has no AMDGPU assembly parser, and
    emitting an object aborts on any non-empty inline asm ("Inline asm not supported by
    this streamer"); an empty one is only the ``;;#ASMSTART`` / ``;;#ASMEND`` markers,
    with its register constraints intact."""
    if not groups:
        return []
    types = [v.type for v, _ in groups]
    outs = ",".join(f"={c}" for _, c in groups)
    ins = ",".join(str(i) for i in range(len(groups)))
    ret: ir.Type = types[0] if len(types) == 1 else ir.LiteralStructType(types)
    asm = ir.InlineAsm(ir.FunctionType(ret, types), "", f"{outs},{ins}", side_effect=True)
    r = e.b.call(asm, [v for v, _ in groups])
    if len(types) == 1:
        return [r]
    return [e.b.extract_value(r, i) for i in range(len(types))]


def _vector(e: Emitter, vals: list[ir.Value]) -> ir.Value:
    if len(vals) == 1:
        return vals[0]
    x = ir.Constant(ir.VectorType(vals[0].type, len(vals)), ir.Undefined)
    for i, v in enumerate(vals):
        x = e.b.insert_element(x, v, ir.Constant(I32, i))
    return x


def _elements(e: Emitter, x: ir.Value, n: int) -> list[ir.Value]:
    if n == 1 and not isinstance(x.type, ir.VectorType):
        return [x]
    return [e.b.extract_element(x, ir.Constant(I32, i)) for i in range(n)]


def pin_groups(e: Emitter, vals: list[ir.Value], group: int, cls: str) -> list[ir.Value]:
    """``vals`` through one tied ``asm``, as groups of ``group`` 32-bit words of class ``cls``."""
    words = _pack_words(e, vals)
    vecs = [_vector(e, words[i:i + group]) for i in range(0, len(words), group)]
    back = tied_asm(e, [(v, cls) for v in vecs])
    out_words: list[ir.Value] = []
    for v, b in zip(vecs, back):
        out_words += _elements(e, b, v.type.count if isinstance(v.type, ir.VectorType) else 1)
    return _unpack_words(e, out_words, vals)


@lowers(ops.AmdRegisterResidentOp)
def amd_register_resident(e: Emitter, op: Operation) -> None:
    vals = e.get(op.x).vals
    target_ops.check_register_groups(op, len(vals))
    out = pin_groups(e, vals, op.registers_per_group, _constraint(op.register_class))
    e.set(op.result, out)


@lowers(ops.AmdRegisterClassAnchorOp)
def amd_register_class_anchor(e: Emitter, op: Operation) -> None:
    vals = e.get(op.x).vals
    cls = _constraint(op.register_class)
    words = [tied_asm(e, [(w, cls)])[0] for w in _pack_words(e, vals)]
    e.set(op.result, _unpack_words(e, words, vals))


# ----------------------------------------------------------------------------- scheduled MFMA
@dataclass(frozen=True)
class ScheduledPlan:
    plan: DotPlan

    @property
    def layouts(self) -> tuple[LinearLayout, LinearLayout, LinearLayout]:
        return self.plan.accumulator(), self.plan.operand(0), self.plan.operand(1)


def _producer_attr(v: Value, kinds: tuple[str, ...], depth: int = 0) -> dict[str, Any] | None:
    """The user layout attribute of ``kinds`` that decides ``v``'s layout, through the ops
    that keep a layout and loop-carried values."""
    if depth > 64:
        return None
    if isinstance(v, BlockArgument):
        owner = v.block.parent_op
        if isinstance(owner, ops.ForOp) and v.index >= 1:
            return _producer_attr(owner.inits[v.index - 1], kinds, depth + 1)
        return None
    if not isinstance(v, OpResult):
        return None
    op = v.op
    if isinstance(op, (ops.ZerosOp, ops.RequireLayoutOp)):
        attr = op.layout
        return attr if attr["kind"] in kinds else None
    if isinstance(op, (ops.ExtractSliceOp, ops.AmdRegisterResidentOp, ops.AmdRegisterClassAnchorOp,
                       ops.ReleaseLayoutOp)):
        return _producer_attr(op.x, kinds, depth + 1)
    if isinstance(op, ops.AmdScheduledMfmaOp):
        return _producer_attr(op.acc, kinds, depth + 1)
    if isinstance(op, ops.AmdMfmaCommitOp):
        return _producer_attr(op.operands[v.index], kinds, depth + 1)
    return None


def _fail(op: Operation, message: str, help: str | None = None) -> None:
    raise CompilationError(AMD, f"tlx.amd_scheduled_mfma: {message}", op.loc, help)


def _instruction(op: Operation, arch: str, parent: AmdMfma, dtype: str, K: int) -> MmaInstr:
    m, n = parent.instr_shape[:2]
    k = parent.instr_shape[2] if len(parent.instr_shape) == 3 else None
    fits = [x for x in entries(arch, scaled=False)
            if (x.a_dtype, x.acc_dtype, x.m, x.n) == (dtype, "fp32", m, n) and x.blocks == 1
            and (k is None or x.k == k) and K % x.k == 0]
    if not fits:
        shape = list(parent.instr_shape)
        _fail(op, f"{arch} has no native {dtype} MFMA of instr_shape {shape} for K = {K}",
              "use an instr_shape of the chip's 16-bit MFMAs (gfx942: [32, 32, 8] / [16, 16, 16]; gfx950 also "
              "[32, 32, 16] / [16, 16, 32]) whose K divides the operands' K")
    return max(fits, key=lambda x: x.k)


_PLANS: dict[tuple[int, str, int], tuple[Operation, ScheduledPlan]] = {}


def scheduled_plan(op: Operation, arch: str, num_warps: int) -> ScheduledPlan:
    """The instruction and layouts of one ``amd_scheduled_mfma`` (see the module doc)."""
    key = (id(op), arch, num_warps)
    if key in _PLANS and _PLANS[key][0] is op:
        return _PLANS[key][1]
    a, b, c = (v.type for v in op.operands)
    dtype = _DTYPES[a.scalar.ir_name]
    acc_attr = _producer_attr(op.acc, ("amd_mfma", "amd_wmma"))
    dots = [_producer_attr(v, ("amd_dot_operand",)) for v in (op.a, op.b)]
    if acc_attr is not None and acc_attr["kind"] != "amd_mfma":
        _fail(op, "acc must be in an MFMA layout (tlx.amd_mfma_layout)")
    parent_attr = acc_attr or next((d["parent"] for d in dots if d is not None), None)
    K = a.shape[-1]
    widths = {d["k_width"] for d in dots if d is not None}
    if len(widths) > 1:
        _fail(op, f"a and b have different k_width ({sorted(widths)}); they must match")
    if parent_attr is not None:
        try:
            parent = amd_parent(parent_attr)
        except LayoutError as err:
            _fail(op, str(err).splitlines()[0])
        if not isinstance(parent, AmdMfma):
            _fail(op, "the operands are dot operands of a WMMA layout; it needs an MFMA one")
        instr = _instruction(op, arch, parent, dtype, K)
    else:
        instr = choose_mma(arch, dtype, dtype, "fp32", c.shape[-2], c.shape[-1], K)
        if instr is None:
            _fail(op, f"no native {dtype} MFMA tiles a {list(c.shape)} accumulator with K = {K} on {arch}")
        parent = AmdMfma(MFMA_VERSION[arch], instr.shape, True, default_warps(c.shape, num_warps, instr.m, instr.n))
    kw = widths.pop() if widths else instr.k_base
    if kw not in SCHEDULED_K_WIDTHS:
        _fail(op, f"k_width {kw}: native MFMA operands take 4 or 8")
    rank = len(c.shape)
    if parent.rank != rank:
        _fail(op, f"the MFMA layout is for rank-{parent.rank} tiles, acc has rank {rank}")
    plan = ScheduledPlan(DotPlan(arch, instr, parent, kw, False, tuple(a.shape), tuple(b.shape), 16))
    try:
        layouts = plan.layouts
    except LayoutError as err:
        _fail(op, f"the operands do not fit the MFMA layout: {str(err).splitlines()[0]}")
    if layouts[0].in_dim_size("warp") != num_warps:
        _fail(op, f"the MFMA layout spreads acc over {layouts[0].in_dim_size('warp')} warps; the kernel runs "
                  f"num_warps={num_warps}")
    if len(_PLANS) > 256:
        _PLANS.clear()
    _PLANS[key] = (op, plan)
    return plan


def _issue_order(tiles: dict[tuple[int, int, int], list[int]]) -> list[tuple[int, int, int]]:
    """Output fragments N-major, M-minor (per batch)."""
    return sorted(tiles, key=lambda k: (k[0], k[2], k[1]))


@lowers(ops.AmdScheduledMfmaOp)
def amd_scheduled_mfma(e: Emitter, op: Operation) -> None:
    sp = scheduled_plan(op, e.target.arch, e.num_warps)
    plan, instr = sp.plan, sp.plan.instr
    acc_l, a_l, b_l = sp.layouts
    for v, want, what in ((op.a, a_l, "a"), (op.b, b_l, "b"), (op.acc, acc_l, "acc")):
        if e.get(v).layout != want:  # pragma: no cover - the layout pass converted them
            raise InternalCompilerError("amdgpu", f"amd_scheduled_mfma: {what} is not in its MFMA layout", op.loc)
    persistent = op.accumulator_role == "persistent"
    acc_cls = "v" if op.accumulator_register_class == "vgpr" else "a"
    resident = op.resident_operand if persistent else "none"
    a_vals, b_vals = e.get(op.a).vals, e.get(op.b).vals
    acc_vals = e.get(op.acc).vals
    ret, arg_types, template = intrinsic_signature(instr)
    fn = e.intrinsic(instr.intrinsic, ret, arg_types)
    a_ty, b_ty = llvm_type(instr.a_type), llvm_type(instr.b_type)
    a_tiles, b_tiles = operand_tiles(a_l, 0), operand_tiles(b_l, 1)
    tiles = accumulator_tiles(plan, acc_l)
    cur: dict[tuple[int, int, int], ir.Value] = {}
    for key, regs in tiles.items():
        if -1 in regs:
            raise InternalCompilerError("amdgpu", f"accumulator registers {regs} do not fill one {instr.mnemonic}",
                                        op.loc)
        if op.initialize:
            cur[key] = ir.Constant(ret, None)
        else:
            cur[key] = _vector(e, [acc_vals[r] for r in regs])
    kb = instr.k_base
    pieces: dict[tuple[str, tuple[int, ...]], ir.Value] = {}

    def operand(name: str, vals: list[ir.Value], regs: tuple[int, ...], ty: ir.Type) -> ir.Value:
        if (name, regs) not in pieces:
            x = _vector(e, [vals[r] for r in regs])
            x = x if x.type == ty else e.b.bitcast(x, ty)
            if resident == ("lhs" if name == "a" else "rhs"):
                x = tied_asm(e, [(x, "a")])[0]
            pieces[(name, regs)] = x
        return pieces[(name, regs)]

    first = True
    for s in range(plan.k_steps):
        for key in _issue_order(tiles):
            bt, i, j = key
            if not first:  # the MFMAs stay in this order; everything else may move past them
                e.call("llvm.amdgcn.sched.barrier", VOID, [ir.Constant(I32, MFMA_ORDER_MASK)])
            first = False
            ra = tuple(a_tiles[(bt, i)][s * kb:(s + 1) * kb])
            rb = tuple(b_tiles[(bt, j)][s * kb:(s + 1) * kb])
            xa, xb = operand("a", a_vals, ra, a_ty), operand("b", b_vals, rb, b_ty)
            src = {"a": xb, "b": xa} if plan.transposed else {"a": xa, "b": xb}
            src["c"] = cur[key]
            r = e.b.call(fn, [src[t] if isinstance(t, str) else t for t in template])
            if persistent:
                r = tied_asm(e, [(r, acc_cls)])[0]
            cur[key] = r
    coords = all_register_coords(acc_l)
    out: list[ir.Value | None] = [None] * len(coords)
    per = len(next(iter(tiles.values())))
    for key, regs in tiles.items():
        vals = _elements(e, cur[key], per)
        for slot, r in enumerate(regs):
            out[r] = vals[slot]
    at = {c: out[r] for r, c in enumerate(coords) if out[r] is not None}
    e.set(op.result, [at[c] for c in coords])


def committed_class(v: Value, depth: int = 0) -> str:
    """The register class (``"a"`` / ``"v"``) a results-only ``amd_mfma_commit`` keeps ``v``
    in: ``"a"`` where the chain that made it was pinned to AGPRs (a persistent chain whose
    class is ``auto`` or ``agpr``, an explicit ``agpr`` class, ``amd_register_resident`` /
    ``amd_register_class_anchor`` in AGPRs), followed through ops that keep the registers
    and through loop-carried and ``if`` values; ``"v"`` otherwise (see the module doc)."""
    if depth > 64:
        return "v"
    if isinstance(v, BlockArgument):
        owner = v.block.parent_op
        if isinstance(owner, ops.ForOp) and v.index >= 1:
            sources = [owner.inits[v.index - 1], owner.body.terminator.operands[v.index - 1]]
            return "a" if any(committed_class(x, depth + 1) == "a" for x in sources) else "v"
        return "v"
    if not isinstance(v, OpResult):
        return "v"
    op = v.op
    if isinstance(op, ops.AmdScheduledMfmaOp):
        cls = op.accumulator_register_class
        if cls == "auto":
            return "a" if op.accumulator_role == "persistent" else "v"
        return "a" if cls == "agpr" else "v"
    if isinstance(op, (ops.AmdRegisterResidentOp, ops.AmdRegisterClassAnchorOp)):
        return _constraint(op.register_class)
    if isinstance(op, (ops.ExtractSliceOp, ops.RequireLayoutOp, ops.ReleaseLayoutOp)):
        return committed_class(op.x, depth + 1)
    if isinstance(op, ops.AmdMfmaCommitOp):
        return committed_class(op.operands[v.index], depth + 1)
    if isinstance(op, ops.ForOp):
        return committed_class(op.body.terminator.operands[v.index], depth + 1)
    if isinstance(op, ops.IfOp):
        yields = [r.block.terminator.operands[v.index] for r in op.regions]
        return "a" if any(committed_class(x, depth + 1) == "a" for x in yields) else "v"
    return "v"


@lowers(ops.AmdMfmaCommitOp)
def amd_mfma_commit(e: Emitter, op: Operation) -> None:
    preserve = op.preserve
    n = len(op.operands) - (1 if preserve else 0)
    groups: list[tuple[ir.Value, str]] = []
    spans: list[tuple[int, int, list[ir.Value]]] = []  # (operand, groups, values)
    for i, v in enumerate(op.operands):
        vals = e.get(v).vals
        cls = "a" if i >= n else "v" if preserve else committed_class(v)
        words = _pack_words(e, vals)
        vecs = [_vector(e, words[k:k + 4]) for k in range(0, len(words), 4)]
        spans.append((len(groups), len(vecs), vals))
        groups += [(x, cls) for x in vecs]
    for n_ in COMMIT_NOPS:
        e.call("llvm.amdgcn.s.nop", VOID, [ir.Constant(I16, n_)])
    back = tied_asm(e, groups)
    for (start, count, vals), res in zip(spans, op.results):
        words: list[ir.Value] = []
        for x, (orig, _) in zip(back[start:start + count], groups[start:start + count]):
            words += _elements(e, x, orig.type.count if isinstance(orig.type, ir.VectorType) else 1)
        e.set(res, _unpack_words(e, words, vals))


__all__ = ["committed_class", "scheduled_plan", "tied_asm", "pin_groups"]
