"""TLX buffers in LDS on AMDGPU: the addresses of allocations and views, ``local_load`` /
``local_store`` between a register tile's layout and a buffer's, and ``async_load`` with
its commit / wait groups.

A buffer value is one ``ptr addrspace(3)``: the LDS address of its first element
(``@global_smem`` plus the allocation's offset from the ``SmemPlan``, plus view
arithmetic). ``local_view`` adds ``index x step`` (the buffer's bytes, or its
``storage_alias_spec`` placement's step); ``local_slice`` adds the offset of the slice's
first element (``buffer_layouts.slice_offset_terms``); ``local_trans`` and
``local_reinterpret`` keep the address (only the layout changes); ``storage_alias_spec``
has no code (the plan places its allocations).

Reads and writes follow ``tlxc.ir.layout.shared_access`` exactly as on NVIDIA: register
``r`` of work-item ``tid`` is at element ``offsets[r] ^ T(tid)``; ``T`` (lane bits, then
the wave's, which is wave-uniform) is computed once per pair of layouts in the entry
block, and each access is ``base + (T ^ runtime) + immediate`` -- LLVM folds the
immediate into the ``ds_read`` / ``ds_write`` offset field. Accesses are vectorized up to
16 bytes (``ds_read_b64`` / ``ds_read_b128``, ``ds_write_b64`` / ``_b128``) where a
work-item's consecutive registers are consecutive in the buffer; the default LDS layout
(``lds_buffer_layout``) keeps 16-byte chunks whole and XOR-swizzles them across rows, so
row accesses vectorize and column accesses spread over the banks. Work-items holding
copies of others' elements skip their stores.

A ``local_load`` whose one user is a ``tl.dot`` (it then reads straight into the MFMA /
WMMA operand layout) is read lazily (``DeferredLoad``): each vector when the dot first
asks for it, next to the instruction that consumes it, where nothing between the two
could change what it reads (``deferrable``).

``async_load`` (TLX: H, B and gfx950 only, tlx-semantics "async_load"):

* gfx950 copies global memory straight into LDS with ``llvm.amdgcn.global.load.lds``
  (``global_load_lds_dword`` / ``_dwordx3`` / ``_dwordx4``: 4, 12 or 16 bytes per lane,
  checked with LLVM 22). The instruction writes lane ``i``'s bytes at a wave-uniform LDS
  address (M0) plus ``i x size``, so it is used where the buffer layout puts consecutive
  lanes' vectors one after the other (``buffer_layouts`` keeps ``async_load``
  destinations row-major on AMD for this) and the vector is one of those sizes. Masked
  lanes skip the copy (the wave branches around it) and store ``other`` (zero without
  it) with a ``ds_write``. Other shapes fall back to ``global_load`` + ``ds_write``
  (synchronous: the data is there at least as early).
* gfx942 and gfx1250 are refused at the user's line: TLX defines ``async_load`` on AMD
  for gfx950 only (gfx942's ``global_load_lds_dword`` moves 4 bytes and TLX does not use
  it; gfx1250's asynchronous copies count on their own ``asynccnt`` and are not lowered
  yet) -- use ``tl.load`` + ``tlx.local_store`` there.
* ``async_load_commit_group`` emits nothing. ``async_load_wait_group(N)`` waits with
  ``s_waitcnt vmcnt(V)`` (``llvm.amdgcn.s.waitcnt``, GFX9 encoding: vmcnt bits 3:0 and
  15:14, expcnt 6:4 and lgkmcnt 11:8 left at their maxima) and then ``s_barrier`` (what
  other waves copied becomes visible, as the reference requires). vmcnt counts memory
  instructions, not groups, and retires them in order: ``V = N x`` the fewest copy
  instructions any commit group of the kernel is known to hold (the unmasked direct
  copies between two commits of one block). Undercounting only waits longer, so ``V``
  is 0 unless every group is known.
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation, Value
from ...ir.layout.amd_lds import mfma_lds_swizzle
from ...ir.layout.common import swizzled_shared
from ...ir.layout.linear import LinearLayout
from ...ir.layout.shared_access import SharedAccess, plan_shared_access
from ...ir.passes.buffer_layouts import plain_layout, slice_offset_terms
from ...ir.passes.rewrite import constant_of
from ...ir.types import DType, Kind, MemDescType
from .emitter import Emitter, TileVals, _opaque, lowers
from .isa import AmdTarget
from .llvm import GLOBAL_PTR, I8, I32, LDS_PTR, VOID, memory_type

MAX_VECTOR_BYTES = 16
DIRECT_COPY_BYTES = {"gfx950": (4, 12, 16)}  # global_load_lds_dword / _dwordx3 / _dwordx4
VMCNT_MAX = 63  # 6 bits on GFX9
SWIZZLE_CHUNKS = 8


# -- the default LDS layout ---------------------------------------------------------------------
def lds_buffer_layout(target: AmdTarget, shape: tuple[int, ...], elem_bits: int) -> LinearLayout:
    """The default layout of an LDS buffer on ``target`` (``TargetInfo.buffer_layout``):
    16-byte chunks of each row XOR-swizzled by the row (Triton's swizzled shared layout
    with the parameters of a K-contiguous MFMA operand read 16 bytes at a time,
    ``amd_lds.mfma_lds_swizzle``, over at most 128 bytes): a wave reading a column of
    chunks spreads over the banks, reading a row stays contiguous."""
    vec = max(1, MAX_VECTOR_BYTES * 8 // elem_bits)
    inner = shape[-1]
    if inner <= vec:
        return plain_layout(shape, elem_bits)
    order = tuple(range(len(shape) - 1, -1, -1))
    s = mfma_lds_swizzle(0, shape[-2:], (1, 0), vec, elem_bits, 4, target.lds_banks)
    # at most 8 chunks (128 bytes, NVMMA's widest span): slices of 128-byte columns stay views
    return swizzled_shared(shape, s.vec, s.per_phase, min(s.max_phase, SWIZZLE_CHUNKS), order)


# -- addresses --------------------------------------------------------------------------------
def _gep(e: Emitter, ptr: ir.Value, offset: ir.Value | int, b: ir.IRBuilder | None = None) -> ir.Value:
    b = b or e.b
    if isinstance(offset, int):
        if not offset:
            return ptr
        offset = ir.Constant(I32, offset)
    return _opaque(b.gep(ptr, [offset], inbounds=True, source_etype=I8))


@lowers(ops.LocalAllocOp)
def local_alloc(e: Emitter, op: Operation) -> None:
    offset = e.smem.offset_of(op)
    e.set(op.result, [e.in_entry(f"lds+{offset}", lambda b: _gep(e, e.lds, offset, b))])


@lowers(ops.StorageAliasSpecOp)
def storage_alias_spec(e: Emitter, op: Operation) -> None:
    e.set(op.result, [])


@lowers(ops.LocalViewOp)
def local_view(e: Emitter, op: Operation) -> None:
    step = e.smem.index_step(op.buf, op.loc)
    base = e.get(op.buf).vals[0]
    c = constant_of(op.index)
    if c is not None:
        e.set(op.result, [_gep(e, base, int(c) * step)])
        return
    index = e.get(op.index).vals[0]
    if index.type != I32:
        index = e.b.trunc(index, I32) if index.type.width > 32 else e.b.zext(index, I32)
    e.set(op.result, [_gep(e, base, e.b.mul(index, ir.Constant(I32, step)))])


@lowers(ops.LocalTransOp, ops.LocalReinterpretOp)
def same_address(e: Emitter, op: Operation) -> None:
    e.set(op.result, list(e.get(op.buf).vals))


@lowers(ops.LocalSliceOp)
def local_slice(e: Emitter, op: Operation) -> None:
    src: MemDescType = op.buf.type  # type: ignore[assignment]
    nbytes = src.element.bits // 8
    base = e.get(op.buf).vals[0]
    const, runtime = 0, []
    for d, bit, off in slice_offset_terms(src.layout, op.result.type.buf_shape):
        c = constant_of(op.offsets[d])
        if c is not None:
            const ^= off if (int(c) >> bit) & 1 else 0
        else:
            runtime.append((d, bit, off))
    # the terms XOR together; their bits miss the slice's own, so the sum is an address
    acc: ir.Value = ir.Constant(I32, const * nbytes)
    for d, bit, off in runtime:
        x = e.get(op.offsets[d]).vals[0]
        t = e.b.and_(e.b.lshr(x, ir.Constant(x.type, bit)), ir.Constant(x.type, 1))
        if t.type != I32:
            t = e.b.trunc(t, I32) if t.type.width > 32 else e.b.zext(t, I32)
        acc = e.b.xor(acc, e.b.mul(t, ir.Constant(I32, off * nbytes)))
    e.set(op.result, [_gep(e, base, acc if runtime else const * nbytes)])


# -- planning -------------------------------------------------------------------------------------
def plan(e: Emitter, dist: LinearLayout, buf: MemDescType, max_vec: int | None = None) -> SharedAccess:
    return plan_shared_access(dist, buf.layout, elem_bits=buf.element.bits, max_vector_bytes=MAX_VECTOR_BYTES,
                              warp_size=e.target.wave_size, max_vec=max_vec)


def thread_part(e: Emitter, access: SharedAccess) -> ir.Value | int:
    """``T(tid)`` of ``access`` (elements), computed once in the entry block."""
    lane_bits = e.target.wave_size.bit_length() - 1
    terms = [(i, t) for i, t in enumerate(access.thread) if t]
    if not terms:
        return 0
    key = "lds-thread:" + ",".join(f"{i}:{t}" for i, t in terms)
    lane, warp = e.special("lane"), e.special("warp")

    def make(b: ir.IRBuilder) -> ir.Value:
        acc: ir.Value | None = None
        for i, t in terms:
            x, bit = (lane, i) if i < lane_bits else (warp, i - lane_bits)
            v = b.mul(b.and_(b.lshr(x, ir.Constant(I32, bit)), ir.Constant(I32, 1)), ir.Constant(I32, t))
            acc = v if acc is None else b.xor(acc, v)
        assert acc is not None
        return acc

    return e.in_entry(key, make)


def accesses(e: Emitter, base: ir.Value, access: SharedAccess, nbytes: int) -> list[tuple[ir.Value, tuple[int, ...]]]:
    """(LDS address, registers in slot order) of each vector access to the buffer at ``base``."""
    thread = thread_part(e, access)
    rows: dict[int, ir.Value] = {}
    out = []
    for runtime, imm, group in access.groups():
        if runtime not in rows:
            if isinstance(thread, int):
                rows[runtime] = _gep(e, base, (thread ^ runtime) * nbytes)
            else:
                x = e.b.xor(thread, ir.Constant(I32, runtime)) if runtime else thread
                rows[runtime] = _gep(e, base, e.b.mul(x, ir.Constant(I32, nbytes)))
        out.append((_gep(e, rows[runtime], imm * nbytes), group))
    return out


def owner_guard(e: Emitter, copies: int) -> ir.Value | None:
    """True in the work-items that hold no copy of another's elements (they store)."""
    if not copies:
        return None
    lane_bits = e.target.wave_size.bit_length() - 1
    lane_mask, warp_mask = copies & ((1 << lane_bits) - 1), copies >> lane_bits

    def make(b: ir.IRBuilder) -> ir.Value:
        acc = ir.Constant(I32, 0)
        if lane_mask:
            acc = b.or_(acc, b.and_(e.special("lane"), ir.Constant(I32, lane_mask)))
        if warp_mask:
            acc = b.or_(acc, b.and_(e.special("warp"), ir.Constant(I32, warp_mask)))
        return b.icmp_unsigned("==", acc, ir.Constant(I32, 0))

    return e.in_entry(f"lds-owner:{copies}", make)


def _elem_type(buf: MemDescType) -> ir.Type:
    return memory_type(buf.element)


def _pack(e: Emitter, ty: ir.Type, vals: list[ir.Value]) -> ir.Value:
    if len(vals) == 1:
        return vals[0]
    x = ir.Constant(ir.VectorType(ty, len(vals)), ir.Undefined)
    for i, v in enumerate(vals):
        x = e.b.insert_element(x, v, ir.Constant(I32, i))
    return x


def _guarded(e: Emitter, pred: ir.Value | None, emit) -> None:
    if pred is None:
        emit()
        return
    then = e.fn.append_basic_block("lds.store")
    join = e.fn.append_basic_block("lds.store.end")
    e.b.cbranch(pred, then, join)
    e.b.position_at_end(then)
    emit()
    e.b.branch(join)
    e.b.position_at_end(join)


# -- moving data --------------------------------------------------------------------------------
def store_tile(e: Emitter, base: ir.Value, buf: MemDescType, layout: LinearLayout, vals: list[ir.Value]) -> None:
    access = plan(e, layout, buf)
    ty = _elem_type(buf)
    nbytes = buf.element.bits // 8

    def emit() -> None:
        for addr, group in accesses(e, base, access, nbytes):
            e.b.store(_pack(e, ty, [vals[r] for r in group]), addr, align=len(group) * nbytes)

    _guarded(e, owner_guard(e, access.copies), emit)


def load_tile(e: Emitter, base: ir.Value, buf: MemDescType, layout: LinearLayout) -> list[ir.Value]:
    access = plan(e, layout, buf)
    ty = _elem_type(buf)
    nbytes = buf.element.bits // 8
    out: list[ir.Value | None] = [None] * len(access.offsets)
    for addr, group in accesses(e, base, access, nbytes):
        vt = ir.VectorType(ty, len(group)) if len(group) > 1 else ty
        x = e.b.load(addr, typ=vt, align=len(group) * nbytes)
        for i, r in enumerate(group):
            out[r] = e.b.extract_element(x, ir.Constant(I32, i)) if len(group) > 1 else x
    first = access.first_of()
    return [out[first[r]] for r in range(len(out))]  # type: ignore[misc]


@lowers(ops.LocalStoreOp)
def local_store(e: Emitter, op: Operation) -> None:
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    value = e.get(op.value)
    store_tile(e, e.get(op.buf).vals[0], buf, value.layout, value.vals)


# ops a deferred read must not move past: they synchronize, order memory or fix a
# schedule -- or, a layout conversion, may put scratch over buffers that liveness (which
# ends at the local_load) counts as dead (``Emitter.dead_window``)
# (ops that synchronize or order memory declare it: ``Operation.sync_effects``)
_SCHEDULING = (ops.AmdSchedBarrierOp, ops.AmdScheduledMfmaOp, ops.AmdMfmaCommitOp, ops.Clock64Op, ops.ConvertLayoutOp)


class DeferredLoad(Sequence):
    """The registers of a ``local_load`` read from LDS only when first asked for, at the
    builder's position then: each vector access once, the first time one of its registers
    is used. ``lower_dot`` asks for one instruction's fragments at a time, so the reads of
    a dot operand sit next to the MFMAs / WMMAs that consume them instead of all being live
    at once. Only made where reading later reads the same bytes (``deferrable``)."""

    def __init__(self, e: Emitter, base: ir.Value, buf: MemDescType, layout: LinearLayout) -> None:
        self.e, self.base, self.buf = e, base, buf
        self.access = plan(e, layout, buf)
        self.first = self.access.first_of()
        self._addresses: list[tuple[ir.Value, tuple[int, ...]]] | None = None
        self._group_of: dict[int, int] = {}
        self._loaded: dict[int, ir.Value] = {}

    def __len__(self) -> int:
        return len(self.first)

    def __getitem__(self, r):  # type: ignore[override]
        if isinstance(r, slice):
            return [self[i] for i in range(*r.indices(len(self)))]
        r = self.first[r]
        if r not in self._loaded:
            self._load(r)
        return self._loaded[r]

    def _load(self, r: int) -> None:
        e, buf = self.e, self.buf
        if self._addresses is None:
            self._addresses = accesses(e, self.base, self.access, buf.element.bits // 8)
            for i, (_, group) in enumerate(self._addresses):
                for x in group:
                    self._group_of[x] = i
        addr, group = self._addresses[self._group_of[r]]
        ty = _elem_type(buf)
        vt = ir.VectorType(ty, len(group)) if len(group) > 1 else ty
        x = e.b.load(addr, typ=vt, align=len(group) * (buf.element.bits // 8))
        for i, g in enumerate(group):
            self._loaded[g] = e.b.extract_element(x, ir.Constant(I32, i)) if len(group) > 1 else x


def deferrable(op: Operation) -> bool:
    """Whether ``local_load`` ``op`` may read its buffer where its one user, a ``tl.dot`` of
    the same block, reads the value: nothing in between writes shared memory,
    synchronizes (another wave's later write could then land first), converts a layout
    or holds a region."""
    uses = op.result.uses
    if len(uses) != 1 or not isinstance(uses[0], ops.DotOp) or uses[0].parent is not op.parent:
        return False
    block = op.parent.ops  # type: ignore[union-attr]
    between = block[block.index(op) + 1:block.index(uses[0])]
    for x in between:
        if x.regions or x.sync_effects() or isinstance(x, _SCHEDULING) \
                or any(effect.access == "write" for effect, _ in x.memory_effects()):
            return False
    return True


@lowers(ops.LocalLoadOp)
def local_load(e: Emitter, op: Operation) -> None:
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    base = e.get(op.buf).vals[0]
    if deferrable(op):
        e.values[id(op.result)] = TileVals(DeferredLoad(e, base, buf, op.result.type.layout),  # type: ignore[arg-type]
                                           op.result.type.layout)
        return
    e.set(op.result, load_tile(e, base, buf, op.result.type.layout))


# -- async copies ---------------------------------------------------------------------------------
def check_async_copies(func: Operation, target: AmdTarget) -> None:
    """``async_load`` and its groups exist on gfx950 only (see the module doc)."""
    if target.arch in DIRECT_COPY_BYTES:
        return
    for op in func.walk():
        if isinstance(op, (ops.AsyncLoadOp, ops.AsyncCommitGroupOp, ops.AsyncWaitGroupOp)):
            name = {"async_load": "tlx.async_load", "async_commit_group": "tlx.async_load_commit_group",
                    "async_wait_group": "tlx.async_load_wait_group"}[op.NAME]
            raise CompilationError("TLXC-TLX-006", f"{name}: asynchronous global-to-LDS copies are a TLX "
                                   f"operation of gfx950 among the AMD chips; {target.arch} does not have them",
                                   op.loc, "load with tl.load and write the buffer with tlx.local_store, or "
                                   "compile for gfx950")


def direct_plan(e: Emitter, op: Operation) -> SharedAccess | None:
    """The access plan of an ``async_load`` that ``global_load_lds`` can do: each vector
    one of the instruction's sizes, lane ``i``'s right after lane ``i - 1``'s, and the
    wave's and the registers' parts never touching the lane bits (so the LDS address of
    a vector is a wave-uniform base plus ``lane x size``). None: copy synchronously."""
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    layout = op.ptr.type.layout
    sizes = DIRECT_COPY_BYTES.get(e.target.arch, ())
    nbytes = buf.element.bits // 8
    access = plan(e, layout, buf)
    vec = access.vec
    if vec * nbytes not in sizes or access.copies:
        return None
    lane_bits = e.target.wave_size.bit_length() - 1
    lane_span = ((1 << lane_bits) - 1) * vec
    for i in range(lane_bits):
        if access.thread[i] != vec << i:
            return None
    if any(t & lane_span for t in access.thread[lane_bits:]) or any(c & lane_span for c in access.offsets):
        return None
    return access


def copy_instructions(e: Emitter, op: Operation) -> int:
    """``global_load_lds`` instructions a wave surely issues for ``op`` (0: not known)."""
    if op.mask is not None:
        return 0  # a wave whose lanes are all masked off skips them
    access = direct_plan(e, op)
    return len(access.groups()) if access is not None else 0


@lowers(ops.AsyncLoadOp)
def async_load(e: Emitter, op: Operation) -> None:
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    base = e.get(op.buf).vals[0]
    ptrs = e.get(op.ptr).vals
    mask = e.get(op.mask).vals if op.mask is not None else None
    other = e.get(op.other).vals if op.other is not None else None
    access = direct_plan(e, op)
    layout = op.ptr.type.layout
    if access is None:
        _sync_copy(e, base, buf, layout, ptrs, mask, other)
    else:
        _direct_copy(e, base, buf, access, ptrs, mask, other)
    e.set(op.result, [ir.Constant(I32, 0)])


def _fill(e: Emitter, buf: MemDescType, other: list[ir.Value] | None, group: tuple[int, ...]) -> ir.Value:
    ty = _elem_type(buf)
    vals = [_to_memory(e, buf, other[r]) if other is not None else ir.Constant(ty, 0) for r in group]
    return _pack(e, ty, vals)


def _to_memory(e: Emitter, buf: MemDescType, x: ir.Value) -> ir.Value:
    if isinstance(buf.element, DType) and buf.element.kind == Kind.BOOL:
        return e.b.zext(x, I8)
    return x


def _direct_copy(e: Emitter, base: ir.Value, buf: MemDescType, access: SharedAccess, ptrs: list[ir.Value],
                 mask: list[ir.Value] | None, other: list[ir.Value] | None) -> None:
    nbytes = buf.element.bits // 8
    size = access.vec * nbytes
    fn = e.intrinsic("llvm.amdgcn.global.load.lds", VOID, [GLOBAL_PTR, LDS_PTR, I32, I32, I32])
    lane_bits = e.target.wave_size.bit_length() - 1
    lane_free = SharedAccess(access.vec, access.offsets, (0,) * lane_bits + access.thread[lane_bits:], 0,
                             access.vector_bits)
    per_lane = accesses(e, base, access, nbytes)
    for (uniform, group), (lane_addr, _) in zip(accesses(e, base, lane_free, nbytes), per_lane):
        src = ptrs[group[0]]
        call = lambda: e.b.call(fn, [src, uniform, ir.Constant(I32, size), ir.Constant(I32, 0),  # noqa: E731
                                     ir.Constant(I32, 0)])
        if mask is None:
            call()
            continue
        then = e.fn.append_basic_block("copy")
        orelse = e.fn.append_basic_block("copy.fill")
        join = e.fn.append_basic_block("copy.end")
        e.b.cbranch(mask[group[0]], then, orelse)
        e.b.position_at_end(then)
        call()
        e.b.branch(join)
        e.b.position_at_end(orelse)
        e.b.store(_fill(e, buf, other, group), lane_addr, align=size if size != 12 else 4)
        e.b.branch(join)
        e.b.position_at_end(join)


def _sync_copy(e: Emitter, base: ir.Value, buf: MemDescType, layout: LinearLayout, ptrs: list[ir.Value],
               mask: list[ir.Value] | None, other: list[ir.Value] | None) -> None:
    """``global_load`` (``other`` or zero where masked) then ``ds_write``, one element per
    register: the loads' vectors need not match the buffer's."""
    ty = _elem_type(buf)
    vals = []
    for r, p in enumerate(ptrs):
        if mask is None:
            vals.append(e.b.load(p, typ=ty, align=buf.element.bits // 8))
            continue
        here = e.b.block
        then = e.fn.append_basic_block("copy")
        join = e.fn.append_basic_block("copy.end")
        e.b.cbranch(mask[r], then, join)
        e.b.position_at_end(then)
        got = e.b.load(p, typ=ty, align=buf.element.bits // 8)
        e.b.branch(join)
        e.b.position_at_end(join)
        phi = e.b.phi(ty)
        phi.add_incoming(got, then)
        phi.add_incoming(_to_memory(e, buf, other[r]) if other is not None else ir.Constant(ty, 0), here)
        vals.append(phi)
    store_tile(e, base, buf, layout, vals)


@lowers(ops.AsyncCommitGroupOp)
def async_commit_group(e: Emitter, op: Operation) -> None:
    e.set(op.result, [ir.Constant(I32, 0)])


def _root(op: Operation) -> Operation:
    while op.parent is not None and op.parent.parent_op is not None:
        op = op.parent.parent_op  # type: ignore[assignment]
    return op


def group_instructions(e: Emitter, func: Operation) -> int:
    """The fewest ``global_load_lds`` instructions known to be in any commit group."""
    fewest: int | None = None
    for op in func.walk():
        if not isinstance(op, ops.AsyncCommitGroupOp):
            continue
        count = 0
        block_ops = op.parent.ops  # type: ignore[union-attr]
        for prev in reversed(block_ops[:block_ops.index(op)]):
            if isinstance(prev, ops.AsyncCommitGroupOp):
                break
            if isinstance(prev, ops.AsyncLoadOp):
                count += copy_instructions(e, prev)
        fewest = count if fewest is None else min(fewest, count)
    return fewest or 0


def vmcnt_encoding(count: int) -> int:
    """``s_waitcnt vmcnt(count)`` on GFX9 with expcnt and lgkmcnt at their maxima."""
    count = min(count, VMCNT_MAX)
    return (count & 0xF) | (0x7 << 4) | (0xF << 8) | ((count >> 4) << 14)


@lowers(ops.AsyncWaitGroupOp)
def async_wait_group(e: Emitter, op: Operation) -> None:
    key = "async-group-instructions"
    if key not in e._special:
        e._special[key] = group_instructions(e, _root(op))  # type: ignore[assignment]
    per_group: int = e._special[key]  # type: ignore[assignment]
    count = op.pendings * per_group
    e.call("llvm.amdgcn.s.waitcnt", VOID, [ir.Constant(I32, vmcnt_encoding(count))])
    e.barrier()
    e.set(op.result, [ir.Constant(I32, 0)])


__all__ = ["lds_buffer_layout", "check_async_copies", "store_tile", "load_tile", "vmcnt_encoding", "Value",
           "DeferredLoad", "deferrable"]
