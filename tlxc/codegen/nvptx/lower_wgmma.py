"""Hopper warpgroup MMA: ``async_dot`` as ``wgmma.mma_async`` and ``async_dot_wait`` as
``wgmma.wait_group`` (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate").

The accumulator lives in registers in the wgmma layout (``wgmma_accumulator``, chosen
for the result by ``async_dot_layout`` through the layout pass); B, and A unless it is a
register tile, are read from shared memory through 64-bit matrix descriptors whose
fields come from the buffers' layouts (``wgmma_smem_operand``). One ``async_dot`` is:

    wgmma.fence.sync.aligned;                       // registers written before are visible
    wgmma.mma_async ... (per M-repeat, N-chunk and K-step)
    wgmma.commit_group.sync.aligned;                // one group per async_dot

and ``async_dot_wait(n)`` is ``wgmma.wait_group.sync.aligned n``. The accumulator is
updated in place: the result has the accumulator's registers, and ``async_dot_wait``
passes registers through, so a loop that carries the accumulator moves no registers
while an MMA is in flight (a ``mov`` of an in-flight accumulator makes ptxas serialize
the wgmma pipeline). The accumulator is copied first when its registers are not its own
to update (``_owned``: used again, defined outside the MMA's loop body, or sharing
registers with other values -- a constant tile is one register repeated, which would
also make the ``{d...}`` vector repeat a register).

fp16 accumulators are ``.f16x2`` registers, two elements each. The result of an fp16
``async_dot`` is a *packed* value (emitter.py): its registers are the 32-bit ones the
MMA writes; ``async_dot_wait`` and loops carry them packed, the next ``async_dot``
updates them in place, and any other op that reads them unpacks them first (``mov.b32
{lo, hi}``) -- after the wait that retires the MMA, as the rules of ``async_dot_wait``
require. Unpacking at the wait instead would read the registers of
the MMA that ``async_dot_wait(1)`` leaves in flight, and ptxas would serialize the loop.
An fp16 accumulator coming from elsewhere (``tl.zeros``, a load) is packed before the
``wgmma.fence``.

A in registers: ``{a0..a3}`` are 32-bit registers packed before the fence from the
operand in the wgmma A layout (``mov.b32`` of two 16-bit elements; four 8-bit ones, each
in the low byte of a 16-bit register, gathered with ``prmt``).

Descriptors: ``template + (address >> 4)``, built once per operand and ``async_dot``;
each instruction adds its constant offset (and its warpgroup's offset) in 16-byte units,
which never carries out of the 14-bit address field because shared memory is < 256 KiB.
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Block, Operation, Value
from ...ir.layout.linear import LayoutError, LinearLayout
from ...ir.layout.wgmma import (
    WARPGROUP_ROWS,
    instruction_operands,
    operand_major,
    wgmma_accumulator,
    wgmma_accumulator_slots,
    wgmma_operand_a,
    wgmma_operand_a_slots,
)
from ...ir.types import DType, MemDescType, TileType
from . import instructions as insn
from .emitter import PACKED_PRODUCERS, Emitter, TileRegs, lowers, num_regs
from .mma_table import WgmmaInstr, check_wgmma_shape, legal_wgmma_shapes, wgmma_instr_k
from .ptx import Reg, reg_class
from .wgmma_smem import WgmmaSmemOperand, wgmma_smem_operand

__all__ = ["async_dot_a_layout", "async_dot_layout", "instr_n", "wgmma_instr_k", "wgmma_warps", "WGMMA_ARCHS"]

WGMMA_ARCHS = ("sm_90a",)
_ACC_TYPES = {"f32": "f32", "f16": "f16", "i32": "s32"}


def wgmma_warps(shape: tuple[int, ...], num_warps: int) -> tuple[int, int]:
    """``warps_per_cta`` of the accumulator: warpgroups split M first (64 rows each), then N."""
    groups = max(1, num_warps // 4)
    wg_m = 1
    while wg_m * 2 <= groups and shape[0] % (WARPGROUP_ROWS * wg_m * 2) == 0:
        wg_m *= 2
    return 4 * wg_m, groups // wg_m


def instr_n(op: Operation, wg_n: int) -> int:
    """The N of one instruction: the largest legal N that divides one warpgroup's columns."""
    n = op.result.type.shape[1] // wg_n
    elem: DType = op.b.type.element  # type: ignore[attr-defined]
    legal = sorted({s[1] for s in legal_wgmma_shapes(_type_name(elem))}, reverse=True)
    for c in legal:
        if n % c == 0:
            return c
    raise CompilationError("TLXC-TLX-004", f"async_dot: {n} columns per warpgroup cannot be split into wgmma "
                                           f"instructions (N from {legal[-1]} to {legal[0]})", op.loc)


def _type_name(t: DType) -> str:
    return "tf32" if t.ir_name == "f32" else t.ir_name


def async_dot_layout(op: Operation, num_warps: int) -> LinearLayout | None:
    """The accumulator layout of ``op`` (an ``async_dot``), for the layout pass."""
    shape = op.result.type.shape
    if num_warps % 4:
        return None
    warps = wgmma_warps(shape, num_warps)
    try:
        return wgmma_accumulator(shape, warps, instr_n(op, warps[1]))
    except (LayoutError, CompilationError):
        return None


def async_dot_a_layout(op: Operation, num_warps: int) -> LinearLayout | None:
    """The layout a register A operand must have (None when A is a buffer)."""
    a = op.a
    if not isinstance(a.type, TileType):
        return None
    warps = wgmma_warps(op.result.type.shape, num_warps)
    try:
        return wgmma_operand_a(a.type.shape, (warps[0], warps[1]), a.type.scalar.bits)
    except LayoutError:
        return None


# -- lowering ------------------------------------------------------------------------------------
def _fail(op: Operation, message: str, code: str = "TLXC-TLX-004") -> None:
    raise CompilationError(code, message, op.loc)


def _plan(e: Emitter, op: Operation) -> tuple[WgmmaInstr, tuple[int, int], int]:
    if e.target.arch not in WGMMA_ARCHS:
        _fail(op, f"async_dot with a register accumulator is Hopper's wgmma, which {e.target.arch} does not have; "
                  "Blackwell's tcgen05 form (accumulator in tensor memory) is not supported by tlxc yet",
              "TLXC-TLX-005")
    rt: TileType = op.result.type  # type: ignore[assignment]
    if e.num_warps % 4:
        _fail(op, f"async_dot needs whole warpgroups: num_warps={e.num_warps} is not a multiple of 4")
    warps = wgmma_warps(rt.shape, e.num_warps)
    if rt.layout != async_dot_layout(op, e.num_warps):  # pragma: no cover - the layout pass sets it
        raise CompilationError("TLXC-INTERNAL-001", "async_dot result is not in the wgmma layout", op.loc)
    a, b = op.a, op.b
    a_regs = isinstance(a.type, TileType)
    b_buf: MemDescType = b.type  # type: ignore[assignment]
    try:
        b_major = operand_major(b_buf.layout, "B")
        a_major = "K" if a_regs else operand_major(a.type.layout, "A")  # type: ignore[union-attr]
        n = instr_n(op, warps[1])
        acc = _ACC_TYPES.get(rt.scalar.ir_name)
        instr = check_wgmma_shape(rt.shape[0], n, a.type.shape[1] if a_regs else a.type.buf_shape[1],
                                  _type_name(b_buf.element), a_regs, a_major, b_major, acc)
    except LayoutError as err:
        _fail(op, f"async_dot: {err}")
    return instr, warps, n


def _operand(op: Operation, v: Value, which: str, instr: WgmmaInstr, warpgroups: int) -> WgmmaSmemOperand:
    t: MemDescType = v.type  # type: ignore[assignment]
    mn = WARPGROUP_ROWS if which == "A" else instr.n
    try:
        return wgmma_smem_operand(t.layout, elem_bits=t.element.bits, operand=which, instr_mn=mn,
                                  instr_k=instr.k, warpgroups=warpgroups)
    except LayoutError as err:
        pinned = _pinned_root(v)
        if pinned is not None:
            raise CompilationError(
                "TLXC-TLX-004", f"async_dot cannot read its {which} buffer: its layout, pinned with "
                                f"local_alloc(layout=...) at line {pinned.loc.line if pinned.loc else '?'}, is not "
                                f"an NVMMA layout wgmma reads ({str(err).splitlines()[0]})", op.loc,
                "pin tlx.nv_mma_shared_layout_encoding, or leave the layout to tlxc") from None
        _fail(op, f"async_dot cannot read its {which} buffer: {err}")
    raise AssertionError


def _pinned_root(v: Value) -> Operation | None:
    """The ``local_alloc`` with a user-pinned layout that ``v`` views, if any."""
    owner = getattr(v, "op", None)
    while owner is not None and not isinstance(owner, ops.LocalAllocOp) and owner.operands \
            and isinstance(owner.operands[0].type, MemDescType):
        owner = getattr(owner.operands[0], "op", None)
    return owner if isinstance(owner, ops.LocalAllocOp) and owner.pinned else None


def _descriptor_base(e: Emitter, address: Reg, smem: WgmmaSmemOperand, group: Reg | None) -> Reg:
    """``template | ((address + warpgroup offset) >> 4 & 0x3FFF)`` as a 64-bit register:
    the descriptor's 14-bit start-address field. The mask matters in a cluster launch,
    where a CTA's shared addresses carry its rank in the high bits (rank 1's spilled
    into the leading-byte-offset field, and wgmma read the second swizzle atom of an
    MN-major operand from the wrong place)."""
    a = address
    if group is not None and len(smem.warpgroup_offsets) > 1:
        step = smem.warpgroup_offsets[1]
        if any(off != g * step for g, off in enumerate(smem.warpgroup_offsets)):  # pragma: no cover - layouts
            raise CompilationError("TLXC-INTERNAL-001", "warpgroup offsets of a wgmma operand are not linear", None)
        a = e.fn.reg("b32")
        e.fn.emit(f"mad.lo.u32 {a}, {group}, {step}, {address}")
    lo = e.fn.reg("b32")
    e.fn.emit(f"bfe.u32 {lo}, {a}, 4, 14")
    d = e.fn.reg("b64")
    e.fn.emit(f"cvt.u64.u32 {d}, {lo}")
    e.fn.emit(f"or.b64 {d}, {d}, {smem.template}")
    return d


def _warpgroup_indices(e: Emitter, wg_m: int) -> tuple[Reg, Reg]:
    """(M-warpgroup, N-warpgroup) of this thread: warpgroup ``w // 4`` is M-group
    ``(w // 4) % wg_m`` and N-group ``(w // 4) // wg_m``."""
    warp = e.special("warp")
    gm = e.special_value(f"wgmma.gm{wg_m}", f"bfe.u32 {{r}}, {warp}, 2, {max(1, wg_m.bit_length() - 1)};")
    gn = e.special_value(f"wgmma.gn{wg_m}", f"shr.u32 {{r}}, {warp}, {2 + wg_m.bit_length() - 1};")
    return gm, gn


def _predicate(e: Emitter, key: str, value: bool) -> Reg:
    """A predicate register holding ``value``, set once in the prologue."""
    name = f"wgmma.pred.{value}"
    p = e._special.get(name)
    if p is None:
        p = e.fn.reg("pred")
        tid = e.special("tid")
        e.prologue.append(f"\tsetp.{'eq' if value else 'ne'}.u32 {p}, {tid}, {tid};")
        e._special[name] = p
    return p


@lowers(ops.AsyncDotOp)
def async_dot(e: Emitter, op: Operation) -> None:
    instr, warps, n = _plan(e, op)
    wg_m, wg_n = warps[0] // 4, warps[1]
    rt: TileType = op.result.type  # type: ignore[assignment]
    acc_v, use_v = op.acc, op.use_acc
    f16 = rt.scalar.ir_name == "f16"
    regs = _accumulator(e, acc_v, rt, f16)
    home = None if f16 else _carried_home(e, op)
    if home is not None and [r.name for r in home] != [r.name for r in regs]:
        for r, src in zip(home, regs):
            e.fn.emit(f"mov.{r.cls} {r}, {src}")
        regs = home
    # -- scale-d of the first K-step: accumulate unless there is no accumulator / use_acc is false --
    if use_v is not None:
        first = e.get(use_v).regs[0]
        if acc_v is None:
            first = _predicate(e, "false", False)
    else:
        first = _predicate(e, "true" if acc_v is not None else "false", acc_v is not None)
    later = _predicate(e, "true", True)
    # -- operands --
    gm, gn = _warpgroup_indices(e, wg_m) if wg_m * wg_n > 1 else (None, None)
    b_smem = _operand(op, op.b, "B", instr, wg_n)
    b_desc = _descriptor_base(e, e.get(op.b).regs[0], b_smem, gn if wg_n > 1 else None)
    a_v = op.a
    a_groups = None
    if isinstance(a_v.type, TileType):
        a_groups = _register_a(e, op, a_v, warps)
    else:
        a_smem = _operand(op, a_v, "A", instr, wg_m)
        a_desc = _descriptor_base(e, e.get(a_v).regs[0], a_smem, gm if wg_m > 1 else None)
    d_groups = instruction_operands(wgmma_accumulator_slots(rt.shape, warps, n, 16 if f16 else 32))
    e.fn.emit(insn.wgmma_fence())
    for k in range(instr.k_steps):
        scale_d = first if k == 0 else later
        for (m_rep, n_chunk), slots in d_groups.items():
            d = [regs[_packed_index(s) if f16 else s[0]] for s in slots]
            bd = _offset_desc(e, b_desc, b_smem.offsets[n_chunk][k])
            a: list[Reg] | Reg | str
            if a_groups is not None:
                a = a_groups[(m_rep, k)]
            else:
                a = _offset_desc(e, a_desc, a_smem.offsets[m_rep][k])
            e.fn.emit(insn.wgmma_mma_async(instr, d, a, bd, scale_d))
    e.fn.emit(insn.wgmma_commit_group())
    e.values[id(op.result)] = TileRegs(regs, rt.layout, packed=f16)


def _accumulator(e: Emitter, acc_v: Value | None, rt: TileType, f16: bool) -> list[Reg]:
    """The registers the MMA updates: the accumulator's own when this is its only use
    (``.f16x2`` pairs for fp16, already packed when it comes from an MMA), else a copy;
    zeros without an accumulator (scale-d is false then, but the registers must be defined)."""
    if acc_v is None:
        cls = "b32" if f16 else reg_class(rt.scalar)
        regs = [e.fn.reg(cls) for _ in range(num_regs(rt) // (2 if f16 else 1))]
        for r in regs:
            e.fn.emit(f"mov.{r.cls} {r}, {'0f00000000' if r.cls == 'f32' else 0}")
        return regs
    got = e.get(acc_v, packed_ok=True)
    if f16 and not got.packed:
        return e.pack16(got.regs)  # fresh registers
    if _owned(e, acc_v, e.current.parent if e.current is not None else None):
        return list(got.regs)
    regs = [e.fn.reg(r.cls) for r in got.regs]
    for r, src in zip(regs, got.regs):
        e.fn.emit(f"mov.{r.cls} {r}, {src}")
    return regs


def _all_retired_before(op: Operation) -> bool:
    """Whether an earlier ``wait_group 0`` of the same block already retired every wgmma
    (none issued since): the wait for attention's carried ``P @ V`` after the next ``Q @ K``'s
    own wait, which ``dot-to-wgmma`` adds for the value flow, costs no instruction then."""
    block = op.parent
    if block is None:
        return False
    for x in reversed(block.ops[:block.ops.index(op)]):
        if isinstance(x, ops.AsyncDotWaitOp) and x.pendings == 0:
            return True
        if any(isinstance(y, ops.AsyncDotOp) for y in x.walk()):
            return False
    return False


def _carried_home(e: Emitter, op: Operation) -> list[Reg] | None:
    """The registers of the loop-carried value that ``op``'s result becomes at the end of
    the iteration (``dot-to-wgmma`` leaves attention's ``P @ V`` in flight over the back
    edge), when nothing reads them after ``op`` in this iteration: the MMA accumulates
    there directly, so the back edge moves no in-flight accumulator (ptxas would serialize
    the wgmma pipeline: C7514). None otherwise."""
    slot = ops.carried_slot(op.result)
    body = op.parent
    if slot is None or body is None:
        return None
    arg = body.args[1 + slot]
    got = e.get(arg, packed_ok=True)
    if got.packed:
        return None
    names = {r.name for r in got.regs}
    before = {id(x) for x in body.ops[:body.ops.index(op)]}
    pending = [arg]
    while pending:  # every reader of the carried registers comes before op
        v = pending.pop()
        for user in v.uses:
            top = user
            while top.parent is not body and top.parent is not None and top.parent.parent_op is not None:
                top = top.parent.parent_op
            if id(top) not in before:
                return None
            if isinstance(user, ops.AsyncDotWaitOp):
                pending.extend(r for r, w in zip(user.results, user.operands) if w is v)
            elif any(names & {r.name for r in e.get(r_, packed_ok=True).regs}
                     for r_ in user.results if isinstance(r_.type, TileType)):
                return None  # a reader that passes the registers through
    return list(got.regs)


# ops whose results are registers they create (lower_arith's ``elementwise``), unless an
# operand passes through (a cast to the same type) or repeats (a splat): checked as well
_FRESH = (ops.AddOp, ops.SubOp, ops.MulOp, ops.DivOp, ops.FmaOp, ops.MinimumOp, ops.MaximumOp, ops.NegOp,
          ops.ConvertOp, ops.SelectOp, *ops.MATH_OPS.values())


def _owned(e: Emitter, v: Value, block: Block | None) -> bool:
    """Whether the MMA (in ``block``) may update ``v``'s registers in place: ``v`` is used
    only here, it is defined in the same block (a value from outside a loop is the same in
    every iteration), and its registers are its own -- an MMA's (through waits), a loop's
    or branch's carried value (lower_control gives those fresh registers), or distinct
    registers made by an arithmetic op. Other values may share registers with values used
    later (reshapes pass registers through; a constant tile is one register repeated,
    which would also repeat a register in the ``{d...}`` vector), so they are copied."""
    if len(v.uses) != 1:
        return False
    src = v.owner
    if isinstance(src, Block):
        return src is block
    if not isinstance(src, Operation) or src.parent is not block:
        return False
    if isinstance(src, ops.AsyncDotWaitOp):
        return _owned(e, src.operands[v.index], block)  # type: ignore[attr-defined]
    if isinstance(src, ops.AsyncDotOp):
        return True
    if isinstance(src, _FRESH):
        regs = {r.name for r in e.get(v, packed_ok=True).regs}
        inputs = {r.name for w in src.operands for r in e.get(w, packed_ok=True).regs}
        return len(regs) == len(e.get(v, packed_ok=True).regs) and not regs & inputs
    return False


def _packed_index(parts: tuple[int, ...]) -> int:
    """The packed register of an ``.f16x2`` slot: elements ``2j`` and ``2j + 1`` of the
    layout's registers (the accumulator's register bit 0 is the column bit of ``d_i``)."""
    lo, hi = parts
    if lo % 2 or hi != lo + 1:  # pragma: no cover - wgmma_accumulator puts d_i bit 0 on register bit 0
        raise CompilationError("TLXC-INTERNAL-001", f"f16 accumulator slot packs registers {parts}", None)
    return lo // 2


def _offset_desc(e: Emitter, base: Reg, offset: int) -> Reg | str:
    if not offset:
        return base
    if offset % 16:  # pragma: no cover - wgmma_smem_operand only yields 16-byte offsets
        raise CompilationError("TLXC-INTERNAL-001", f"wgmma operand offset {offset} is not 16-byte aligned", None)
    r = e.fn.reg("b64")
    e.fn.emit(f"add.s64 {r}, {base}, {offset >> 4}")
    return r


def _register_a(e: Emitter, op: Operation, a: Value, warps: tuple[int, int]) -> dict[tuple[int, int], list[Reg]]:
    """The ``{a0..a3}`` 32-bit registers of every (M-repeat, K-step) of a register A."""
    t: TileType = a.type  # type: ignore[assignment]
    bits = t.scalar.bits
    want = wgmma_operand_a(t.shape, warps, bits)
    if t.layout != want:  # pragma: no cover - the layout pass converts A
        raise CompilationError("TLXC-INTERNAL-001", "async_dot's register A is not in the wgmma operand layout", op.loc)
    src = e.get(a).regs
    out: dict[tuple[int, int], list[Reg]] = {}
    for key, slots in instruction_operands(wgmma_operand_a_slots(t.shape, warps, bits)).items():
        words = []
        for parts in slots:
            w = e.fn.reg("b32")
            if len(parts) == 1:
                e.fn.emit(f"mov.b32 {w}, {src[parts[0]]}")
            elif len(parts) == 2:
                e.fn.emit(f"mov.b32 {w}, {{{src[parts[0]]}, {src[parts[1]]}}}")
            else:  # four 8-bit elements, each in the low byte of a 16-bit register
                lo, hi = e.fn.reg("b32"), e.fn.reg("b32")
                e.fn.emit(f"mov.b32 {lo}, {{{src[parts[0]]}, {src[parts[1]]}}}")
                e.fn.emit(f"mov.b32 {hi}, {{{src[parts[2]]}, {src[parts[3]]}}}")
                e.fn.emit(f"prmt.b32 {w}, {lo}, {hi}, 0x6420")  # bytes 0 and 2 of each
            words.append(w)
        out[key] = words
    return out


@lowers(ops.AsyncDotWaitOp)
def async_dot_wait(e: Emitter, op: Operation) -> None:
    if not (op.pendings == 0 and _all_retired_before(op)):
        e.fn.emit(insn.wgmma_wait_group(op.pendings))
    for v, r in zip(op.operands, op.results):
        e.values[id(r)] = e.get(v, packed_ok=True)  # fp16 accumulators stay packed until read


# An fp16 accumulator is packed from its async_dot through waits and loops to its first reader.
PACKED_PRODUCERS[ops.AsyncDotOp] = lambda e, op, v: op.result.type.scalar.ir_name == "f16"
PACKED_PRODUCERS[ops.AsyncDotWaitOp] = lambda e, op, v: e.produces_packed(op.operands[v.index])
