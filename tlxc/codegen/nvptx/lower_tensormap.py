"""TMA descriptors built on the device: ``make_tensor_descriptor`` as a CUtensorMap written
by the kernel into global scratch (PTX ISA, "Data Movement: tensormap.replace",
"tensormap.cp_fenceproxy" and "Parallel Synchronization: membar/fence" for
``fence.proxy.tensormap``; the field values are those of ``cuTensorMapEncodeTiled``).

Where a descriptor lives. TMA reads a descriptor from the param, const or global space,
never from shared memory, so the kernel writes it to global memory that the launch gives
it: a trailing hidden kernel parameter (``u64``, after the user's) points at
``grid size x plan.size`` bytes, and make_tensor_descriptor op ``k`` (in program order) of
program ``p`` owns the 128 bytes at ``scratch + p * plan.size + 128 * k`` (``p`` the
linear block id, x fastest). The compiled kernel's metadata ``global_scratch`` gives the
size; the runtime allocates it through the user's allocator (``tlxc.set_allocator``), as
Triton's ``global_scratch_alloc`` does. An op that runs again (in a loop) rewrites its
slot, as in Triton. ``tlx.allocate_tensor_descriptor(num)`` (``tensordesc_alloc``) takes
``num`` consecutive slots the same way; ``ptrs[i]`` is 128 bytes further per index;
``make_tensor_descriptor(desc_ptr=...)`` writes there instead of a slot of its own, and
``reinterpret_tensor_descriptor`` is just the address (Triton lowers it to an address-space
cast).

How it is built (Triton's ``TensormapCreateOp`` lowering): warp 0 zeroes a 128-byte
template in the shared scratch area; thread 0 fills every field with
``tensormap.replace.tile.<field>.shared::cta`` (dimensions innermost first: address,
rank - 1, box, global sizes, strides in bytes of dimensions 1.., element strides 1,
element type, no interleave, swizzle, fill); warp 0 copies it to the global slot with
``tensormap.cp_fenceproxy ... release.gpu`` and makes it visible to the TMA unit with
``fence.proxy.tensormap::generic.acquire.gpu``; a CTA barrier then lets every thread
use it (and frees the scratch area). The value of the op is the slot's 64-bit address,
which ``cp.async.bulk.tensor`` takes as it takes a host descriptor's.

The swizzle and the box are what the host path uses (runtime/tma.py): the swizzle is
that of the buffers the descriptor's TMA copies fill or read (``tma_swizzle_of``; all
must agree, or TLXC-TLX-003), chosen before the kernel is lowered (``plan``) and kept
in the descriptor's type (``tensordesc<..., swizzle=128>``); the box is ``tma_box`` of
the block, which lower_tma splits copies by. A descriptor in storage of the kernel's own
is known statically only through that storage: the makes into a slot and the reinterprets
of it (every slot of the allocation, where the index is not a constant) form one
descriptor, whose block, element type and swizzle must agree.

ptxas before CUDA 12.8 reads ``global_stride`` in 16-byte units instead of bytes (the
bug Triton works around for PTX <= 8.5, which is what it emits for those ptxas versions;
ptxas 13 assembles every PTX version the same way): strides are shifted right by 4 when
the ptxas that will assemble the PTX is that old.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation, Value
from ...ir.layout.wgmma import tma_swizzle_of
from ...ir.types import MemDescType, TensorDescType
from ...runtime import tma
from . import instructions as insn
from .emitter import Emitter, lowers
from .lower_sync import thread0
from .ptx import Reg

TENSORMAP_BYTES = tma.DESCRIPTOR_BYTES
TENSORMAP_ALIGN = 128  # of a slot in global scratch and of the template in shared memory
SWIZZLE_MODES = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CU_TENSOR_MAP_SWIZZLE_{NONE,32B,64B,128B}
FILL_MODES = {"zero": 0, "nan": 1}  # CU_TENSOR_MAP_FLOAT_OOB_FILL_{NONE,NAN_REQUEST_ZERO_FMA}
_TMA_OPS = (ops.TmaLoadOp, ops.TmaStoreOp)


@dataclass
class TensormapPlan:
    """The device descriptors of a kernel: the first slot of each make_tensor_descriptor op
    without ``desc_ptr`` and of each ``tensordesc_alloc`` (``slots[id(op)]``), ``count``
    slots in all; ``param`` names the hidden scratch parameter (set by the code generator)."""

    slots: dict[int, int] = field(default_factory=dict)
    count: int = 0
    param: str = ""

    @property
    def size(self) -> int:
        """Bytes of global scratch one program needs."""
        return TENSORMAP_BYTES * self.count

    def take(self, op: Operation, n: int) -> None:
        self.slots[id(op)] = self.count
        self.count += n


def plan(func: Operation) -> TensormapPlan:
    """Give each make_tensor_descriptor op (without ``desc_ptr``) and each
    ``tensordesc_alloc`` of ``func`` its slots, and each device descriptor its swizzle
    (layouts must be assigned). Descriptors that share storage -- made into and
    reinterpreted from the same ``allocate_tensor_descriptor`` slot -- are one descriptor:
    the same block, element type and swizzle (TLXC-TLX-003 otherwise)."""
    out = TensormapPlan()
    parent: dict[tuple, tuple] = {}  # union-find over storage: ("op", id) or ("slot", id(alloc), k)
    members: dict[tuple, Operation] = {}

    def find(k: tuple) -> tuple:
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    def join(op: Operation, keys: list[tuple]) -> None:
        members[("op", id(op))] = op
        for k in keys:
            parent[find(k)] = find(("op", id(op)))

    for op in func.walk():
        if isinstance(op, ops.AllocTensorDescOp):
            out.take(op, op.result.type.num)  # type: ignore[attr-defined]
        elif isinstance(op, ops.MakeTensorDescOp):
            at = op.desc_ptr
            if at is None:
                out.take(op, 1)
            join(op, [] if at is None else _storage(op, at))
        elif isinstance(op, ops.ReinterpretTensorDescOp):
            join(op, _storage(op, op.desc_ptr))
    groups: dict[tuple, list[Operation]] = {}
    for key, op in members.items():
        groups.setdefault(find(key), []).append(op)
    for group in groups.values():
        _agree(group)
    return out


def _storage(op: Operation, v: Value) -> list[tuple]:
    """The slots descriptor storage ``v`` may be: one where its index is known, else every
    slot of its allocation."""
    from ...ir.passes.rewrite import constant_of

    owner, offset = getattr(v, "op", None), 0
    while isinstance(owner, ops.TensorDescPtrIndexOp):
        c = constant_of(owner.index)
        offset = None if c is None or offset is None else offset + int(c)
        owner = getattr(owner.ptr, "op", None)
    if not isinstance(owner, ops.AllocTensorDescOp):
        raise CompilationError("TLXC-TLX-005", "descriptor storage that comes from a loop-carried value or a branch "
                                               "is not supported on the GPU by tlxc yet", op.loc,
                               "index the result of tlx.allocate_tensor_descriptor directly")
    num = owner.result.type.num  # type: ignore[attr-defined]
    return [("slot", id(owner), k) for k in (range(num) if offset is None else (offset,))]


def _agree(group: list[Operation]) -> None:
    """One descriptor's makes and reinterprets: the same block and element type, and the
    swizzle of every buffer a TMA copy through any of them fills or reads."""
    makes = [op for op in group if isinstance(op, ops.MakeTensorDescOp)]
    if not makes:
        raise CompilationError("TLXC-TLX-003", "no make_tensor_descriptor of this kernel writes the descriptor that "
                                               "this reinterpret_tensor_descriptor reads", group[0].loc,
                               "make it with tlx.make_tensor_descriptor(desc_ptr=ptrs[i], ...) first")
    made: TensorDescType = makes[0].result.type  # type: ignore[assignment]
    for op in group:
        t: TensorDescType = op.result.type  # type: ignore[assignment]
        if (t.block_shape, t.element) != (made.block_shape, made.element):
            line = makes[0].loc.line if makes[0].loc is not None else "?"
            raise CompilationError("TLXC-TLX-003", f"this descriptor is used for blocks of {t.element}"
                                                   f"{list(t.block_shape)} but made at line {line} for blocks of "
                                                   f"{made.element}{list(made.block_shape)}; TMA copies the block "
                                                   "it was made for", op.loc,
                                   "reinterpret it with the block shape and dtype it was made with")
    swizzle = _swizzle_of_uses([op.result for op in group])
    for op in group:
        op.result.type = op.result.type.with_swizzle(swizzle)  # type: ignore[attr-defined]


def _swizzle_of_uses(descs: list[Value]) -> int:
    """The swizzle of every buffer a TMA copy through one of ``descs`` fills or reads (0
    without any); TLXC-TLX-003 where two differ."""
    chosen: tuple[int, Operation] | None = None
    for desc in descs:
        for user in desc.uses:
            if not isinstance(user, _TMA_OPS) or user.desc is not desc:
                continue
            buf: MemDescType = user.buf.type  # type: ignore[assignment]
            swizzle = tma_swizzle_of(buf.layout, buf.element.bits) if buf.layout is not None else None
            if swizzle is None:
                continue  # lower_tma reports the buffer
            if chosen is None:
                chosen = (swizzle, user)
            elif chosen[0] != swizzle:
                first = chosen[1].loc.line if chosen[1].loc is not None else "?"
                raise CompilationError("TLXC-TLX-003", f"this descriptor copies buffers with a {swizzle}-byte "
                                                       f"swizzle here and with a {chosen[0]}-byte swizzle at line "
                                                       f"{first}; one descriptor has one swizzle", user.loc,
                                       "give the buffers the same inner dimension size, or make one descriptor per "
                                       "buffer shape")
    return chosen[0] if chosen is not None else 0


def is_device_descriptor(desc: Value) -> bool:
    """Whether ``desc`` is a descriptor the kernel built (or reads back from its storage)."""
    return isinstance(getattr(desc, "op", None), (ops.MakeTensorDescOp, ops.ReinterpretTensorDescOp))


def device_swizzle(op: Operation, desc: Value, swizzle: int) -> int:
    """The swizzle of a device descriptor that ``op`` copies a ``swizzle``-byte buffer
    through (the plan made them agree)."""
    dt: TensorDescType = desc.type  # type: ignore[assignment]
    if dt.swizzle != swizzle:  # pragma: no cover - plan() checked every use
        raise CompilationError("TLXC-TLX-003", f"this descriptor was built with a {dt.swizzle}-byte swizzle but "
                                               f"copies a buffer with a {swizzle}-byte swizzle here", op.loc)
    return swizzle


@lru_cache(maxsize=None)
def strides_in_16_byte_units() -> bool:
    """Whether the ptxas that assembles the PTX reads ``global_stride`` in 16-byte units
    (before CUDA 12.8; see the module docstring). Without ptxas the driver compiles the
    PTX, and a driver new enough for sm_90a PTX of this version reads bytes."""
    from ...runtime.ptxas import find_ptxas, ptxas_version

    path = find_ptxas()
    return path is not None and (0, 0) < ptxas_version(path) < (12, 8)


# -- lowering --------------------------------------------------------------------------------------

def _prologue_reg(e: Emitter, key: str, cls: str, lines: list[str]) -> Reg:
    """A register computed once at the kernel's start (``lines`` set ``{r}``)."""
    r = e._special.get(key)
    if r is None:
        r = e.fn.reg(cls)
        e.prologue.extend("\t" + ln.format(r=r) for ln in lines)
        e._special[key] = r
    return r


def _program_slots(e: Emitter) -> Reg:
    """The address of this program's descriptor slots: scratch + linear block id * size."""
    tm: TensormapPlan = e.tensormaps
    x, y, z = e.special("ctaid.x"), e.special("ctaid.y"), e.special("ctaid.z")
    nx, ny = e.special("nctaid.x"), e.special("nctaid.y")
    pid = _prologue_reg(e, "tensormap.pid", "b32", [f"mad.lo.u32 {{r}}, {z}, {ny}, {y};",
                                                    f"mad.lo.u32 {{r}}, {{r}}, {nx}, {x};"])
    return _prologue_reg(e, "tensormap.slots", "b64", [f"ld.param.u64 {{r}}, [{tm.param}];",
                                                       f"mad.wide.u32 {{r}}, {pid}, {tm.size}, {{r}};"])


def _template(e: Emitter) -> Reg:
    """The 128-byte aligned template in the shared scratch area."""
    e.scratch(TENSORMAP_BYTES + TENSORMAP_ALIGN)
    base = e.smem_base()
    return _prologue_reg(e, "tensormap.template", "b32", [f"add.u32 {{r}}, {base}, {TENSORMAP_ALIGN - 1};",
                                                          f"and.b32 {{r}}, {{r}}, 0x{(1 << 32) - TENSORMAP_ALIGN:x};"])


def _warp0(e: Emitter) -> Reg:
    return _prologue_reg(e, "tensormap.warp0", "pred", [f"setp.lt.u32 {{r}}, {e.special('tid')}, 32;"])


def _after_barrier(e: Emitter) -> bool:
    """Whether the last instruction emitted is a CTA barrier (another descriptor's end)."""
    for line in reversed(e.fn.body):
        if not line.lstrip().startswith(".loc"):
            return line.strip() == insn.bar_sync(0) + ";"
    return False


def _slot(e: Emitter, op: Operation) -> Reg:
    """The address of ``op``'s first slot in this program's scratch."""
    tm: TensormapPlan = e.tensormaps
    base, offset = _program_slots(e), TENSORMAP_BYTES * tm.slots[id(op)]
    if not offset:
        return base
    r = e.fn.reg("b64")
    e.fn.emit(f"add.u64 {r}, {base}, {offset}")
    return r


@lowers(ops.AllocTensorDescOp)
def allocate_tensor_descriptor(e: Emitter, op: Operation) -> None:
    e.set(op.result, [_slot(e, op)])


@lowers(ops.TensorDescPtrIndexOp)
def tensordesc_ptr_index(e: Emitter, op: Operation) -> None:
    r = e.fn.reg("b64")
    e.fn.emit(f"mad.wide.s32 {r}, {e.get(op.index).regs[0]}, {TENSORMAP_BYTES}, {e.get(op.ptr).regs[0]}")
    e.set(op.result, [r])


@lowers(ops.ReinterpretTensorDescOp)
def reinterpret_tensor_descriptor(e: Emitter, op: Operation) -> None:
    e.set(op.result, [e.get(op.desc_ptr).regs[0]])  # the storage's address is the descriptor's


@lowers(ops.MakeTensorDescOp)
def make_tensor_descriptor(e: Emitter, op: Operation) -> None:
    dt: TensorDescType = op.result.type  # type: ignore[assignment]
    rank = len(dt.block_shape)
    elem = dt.element.bits // 8
    swizzle = dt.swizzle or 0
    box = tma.tma_box(dt.block_shape, elem, swizzle)
    base = e.get(op.base).regs[0]
    sizes = op.dims
    dims = [e.get(v).regs[0] for v in sizes[:rank]]
    strides = [e.get(v).regs[0] for v in sizes[rank:]]
    fresh = not _after_barrier(e)

    at = op.desc_ptr
    slot = e.get(at).regs[0] if at is not None else _slot(e, op)
    # global strides of dimensions 1.. (innermost first), in bytes
    byte_strides = []
    for s in reversed(strides[:-1]):
        b = e.fn.reg("b64")
        e.fn.emit(f"mul.wide.s32 {b}, {s}, {elem}")
        if strides_in_16_byte_units():
            e.fn.emit(f"shr.s64 {b}, {b}, 4")
        byte_strides.append(b)

    tmpl, warp0, t0 = _template(e), _warp0(e), thread0(e)
    if fresh:
        e.barrier()  # the scratch area may still be read by the op before
    lane4 = _prologue_reg(e, "tensormap.lane4", "b32", [f"shl.b32 {{r}}, {e.special('lane')}, 2;",
                                                        f"add.u32 {{r}}, {{r}}, {tmpl};"])
    e.fn.emit(f"st.shared.u32 [{lane4}], 0", warp0)  # 32 lanes x 4 bytes: the whole template
    e.fn.emit(insn.bar_warp_sync())

    def replace(name: str, value: object, ordinal: int | None = None) -> None:
        e.fn.emit(insn.tensormap_replace(name, tmpl, value, ordinal), t0)  # type: ignore[arg-type]

    replace("global_address", base)
    replace("rank", rank - 1)
    for i in range(rank):
        replace("box_dim", box[rank - 1 - i], i)
    for i in range(rank):
        replace("global_dim", dims[rank - 1 - i], i)
    for i, b in enumerate(byte_strides):
        replace("global_stride", b, i)
    for i in range(rank):
        replace("element_stride", 1, i)
    replace("elemtype", tma.tma_type_code(dt.element.ir_name))
    replace("interleave_layout", 0)
    replace("swizzle_mode", SWIZZLE_MODES[swizzle])
    replace("fill_mode", FILL_MODES[op.padding])
    e.fn.emit(insn.bar_warp_sync())  # thread 0's fields, before the warp copies the template
    e.fn.emit(insn.tensormap_cp_fenceproxy(slot, tmpl, TENSORMAP_BYTES), warp0)
    e.fn.emit(insn.fence_proxy_tensormap_acquire(slot, TENSORMAP_BYTES), warp0)
    e.barrier()  # every thread may now issue TMA through it; the scratch area is free again
    e.set(op.result, [slot])
