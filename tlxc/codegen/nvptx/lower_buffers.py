"""Shared-memory buffers on NVIDIA: the addresses of allocations and views, and
``local_load`` / ``local_store`` between a register tile's layout and a buffer's.

A buffer value is one ``.b32`` register: the shared-window address of its first element
(``global_smem`` plus the allocation's offset from the ``SmemPlan``, plus view
arithmetic). ``local_view`` adds ``index x step`` (the buffer's bytes, or its
``storage_alias_spec`` placement's step); ``local_slice`` adds the
offset of the slice's first element (``buffer_layouts.slice_offset_terms``);
``local_trans`` and ``local_reinterpret`` keep the address (the layout changes).

Reads and writes follow ``tlxc.ir.layout.shared_access``: register ``r`` of thread
``tid`` is at ``offsets[r] ^ T(tid)``. ``T(tid)`` (in bytes) is computed once per pair
of layouts, in the prologue; each access is ``[address + immediate]``, or needs one
``xor`` when its constant meets the bits ``T`` can flip. Accesses are vectorized up to
16 bytes where a thread's consecutive registers are consecutive in the buffer (8-bit
elements: up to 4, which keeps them in their 16-bit registers).

``thread_id`` and ``clock64`` live here too (the other small TLX value ops).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation, Value
from ...ir.layout.linear import LinearLayout
from ...ir.layout.shared_access import SharedAccess, plan_shared_access
from ...ir.passes.buffer_layouts import slice_offset_terms
from ...ir.passes.rewrite import constant_of
from ...ir.types import Kind, MemDescType
from . import instructions as insn
from .emitter import Emitter, lowers
from .ptx import Reg, reg_class


# -- addresses --------------------------------------------------------------------------------
def shared_address(e: Emitter, offset: int) -> Reg:
    """``global_smem + offset``, computed once in the prologue."""
    text = f"mov.u32 {{r}}, global_smem+{offset};" if offset else "mov.u32 {r}, global_smem;"
    return e.special_value(f"smem+{offset}", text)


def add_const(e: Emitter, base: Reg, value: int) -> Reg:
    if not value:
        return base
    r = e.fn.reg("b32")
    e.fn.emit(f"add.u32 {r}, {base}, {value}")
    return r


@lowers(ops.LocalAllocOp)
def local_alloc(e: Emitter, op: Operation) -> None:
    t: MemDescType = op.result.type  # type: ignore[assignment]
    if t.storage != "smem" or e.smem is None:  # pragma: no cover - compile.check_storage refuses first
        raise CompilationError("TLXC-TLX-005", "tensor-memory buffers are not supported yet", op.loc)
    e.set(op.result, [shared_address(e, e.smem.offset_of(op))])


@lowers(ops.StorageAliasSpecOp)
def storage_alias_spec(e: Emitter, op: Operation) -> None:
    """No code: the SmemPlan gives each allocation in the spec its address."""
    e.set(op.result, [])


@lowers(ops.LocalViewOp)
def local_view(e: Emitter, op: Operation) -> None:
    step = e.smem.index_step(op.buf, op.loc)  # type: ignore[union-attr]
    e.set(op.result, [index_address(e, e.get(op.buf).regs[0], op.index, step)])


def index_address(e: Emitter, base: Reg, index: Value, stride: int) -> Reg:
    """``base + index * stride`` (folded when the index is a constant)."""
    c = constant_of(index)
    if c is not None:
        return add_const(e, base, int(c) * stride)
    r = e.fn.reg("b32")
    e.fn.emit(f"mad.lo.u32 {r}, {e.get(index).regs[0]}, {stride}, {base}")
    return r


@lowers(ops.LocalTransOp, ops.LocalReinterpretOp)
def same_address(e: Emitter, op: Operation) -> None:
    e.set(op.result, list(e.get(op.buf).regs))


@lowers(ops.LocalSliceOp)
def local_slice(e: Emitter, op: Operation) -> None:
    src: MemDescType = op.buf.type  # type: ignore[assignment]
    shape = op.result.type.buf_shape
    nbytes = src.element.bits // 8
    base = e.get(op.buf).regs[0]
    terms = slice_offset_terms(src.layout, shape)
    const, runtime = 0, []
    for d, bit, off in terms:
        c = constant_of(op.offsets[d])
        if c is not None:
            const ^= off if (int(c) >> bit) & 1 else 0
        else:
            runtime.append((d, bit, off))
    # the terms XOR together (they may share bits); their bits are disjoint from those of
    # the slice's own elements, so the result adds to the base address
    if not runtime:
        e.set(op.result, [add_const(e, base, const * nbytes)])
        return
    acc = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {acc}, {const * nbytes}")
    for d, bit, off in runtime:
        t = e.fn.reg("b32")
        e.fn.emit(f"bfe.u32 {t}, {e.get(op.offsets[d]).regs[0]}, {bit}, 1")
        e.fn.emit(f"mul.lo.u32 {t}, {t}, {off * nbytes}")
        e.fn.emit(f"xor.b32 {acc}, {acc}, {t}")
    r = e.fn.reg("b32")
    e.fn.emit(f"add.u32 {r}, {base}, {acc}")
    e.set(op.result, [r])


def accesses(e: Emitter, base: Reg, access: SharedAccess, nbytes: int) -> list[tuple[Reg, int, tuple[int, ...]]]:
    """``(address register, byte immediate, registers in slot order)`` per vector access
    of ``access`` to the buffer at ``base``."""
    thread = e.thread_xor([t * nbytes for t in access.thread])
    start = base
    if not isinstance(thread, int):
        start = e.fn.reg("b32")
        e.fn.emit(f"add.u32 {start}, {base}, {thread}")
    addrs: dict[int, Reg] = {0: start}
    out = []
    for runtime, imm, group in access.groups():
        if runtime not in addrs:
            a = e.fn.reg("b32")
            e.fn.emit(f"xor.b32 {a}, {thread}, {runtime * nbytes}")
            e.fn.emit(f"add.u32 {a}, {a}, {base}")
            addrs[runtime] = a
        out.append((addrs[runtime], imm * nbytes, group))
    return out


# -- moving data --------------------------------------------------------------------------------
def mem_type(cls: str, elem: object, n: int) -> str:
    """The ld/st type of one unit (see ``pack``)."""
    bits = getattr(elem, "bits", 32)
    if bits == 8:
        return "s8" if getattr(elem, "kind", None) == Kind.INT else "u8"
    if bits == 16:
        return "b16" if n == 1 else "b32"
    if cls in ("f32", "f64"):
        return cls
    return f"b{bits}"


def pack(e: Emitter, cls: str, bits: int, values: Sequence[Reg]) -> list[Reg]:
    """``values`` (consecutive elements) as the registers one access moves: 16-bit
    pairs packed into 32-bit words; other widths as they are."""
    if bits != 16 or len(values) == 1:
        return list(values)
    out = []
    for lo, hi in zip(values[0::2], values[1::2]):
        w = e.fn.reg("b32")
        e.fn.emit(f"mov.b32 {w}, {{{lo}, {hi}}}")
        out.append(w)
    return out


def unpack(e: Emitter, cls: str, bits: int, units: Sequence[Reg], n: int) -> list[Reg]:
    if bits != 16 or n == 1:
        return list(units)
    out: list[Reg] = []
    for w in units:
        lo, hi = e.fn.reg("b16"), e.fn.reg("b16")
        e.fn.emit(f"mov.b32 {{{lo}, {hi}}}, {w}")
        out += [lo, hi]
    return out


def unit_regs(e: Emitter, cls: str, bits: int, n: int) -> list[Reg]:
    if bits == 16 and n > 1:
        return [e.fn.reg("b32") for _ in range(n // 2)]
    return [e.fn.reg(cls) for _ in range(n)]


def operands(units: Sequence[Reg]) -> str:
    return str(units[0]) if len(units) == 1 else "{" + ", ".join(map(str, units)) + "}"


def vec_suffix(n: int) -> str:
    return "" if n == 1 else f".v{n}"


def plan(e: Emitter, dist: LinearLayout, buf: MemDescType, max_vec: int | None = None) -> SharedAccess:
    bits = buf.element.bits
    if bits == 8:  # bytes stay in their 16-bit registers: at most a .v4.u8
        max_vec = min(max_vec or 4, 4)
    return plan_shared_access(dist, buf.layout, elem_bits=bits, max_vector_bytes=e.target.max_vector_bytes,
                              warp_size=e.target.warp_size, max_vec=max_vec)


def store_tile(e: Emitter, base: Reg, buf: MemDescType, layout: LinearLayout, regs: Sequence[Reg],
               pred: Reg | None = None, *, remote: bool = False, complete_tx: Reg | None = None) -> None:
    """Write this thread's ``regs`` (a tile in ``layout``) into the buffer at ``base``;
    threads holding copies of others' elements skip their stores. ``remote``: ``base`` is
    a peer CTA's buffer (a ``shared::cluster`` address from ``mapa``); with ``complete_tx``
    (the peer's mbarrier) the stores are ``st.async`` and complete their bytes on it."""
    access = plan(e, layout, buf)
    cls, bits = reg_class(buf.element), buf.element.bits
    guard = e.thread_owner(access.copies)
    if pred is not None and guard is not None:
        both = e.fn.reg("pred")
        e.fn.emit(f"and.pred {both}, {pred}, {guard}")
        guard = both
    elif pred is not None:
        guard = pred
    for addr, imm, group in accesses(e, base, access, bits // 8):
        units = pack(e, cls, bits, [regs[r] for r in group])
        ty = mem_type(cls, buf.element, len(group))
        if bits == 8:
            ty = "u8"
        if complete_tx is not None:
            e.fn.emit(insn.st_async(f"{addr}+{imm}", units, ty, complete_tx), guard)
        else:
            e.fn.emit(f"st.shared{'::cluster' if remote else ''}{vec_suffix(len(units))}.{ty} [{addr}+{imm}], "
                      f"{operands(units)}", guard)


def load_tile(e: Emitter, base: Reg, buf: MemDescType, layout: LinearLayout) -> list[Reg]:
    """This thread's registers of a tile in ``layout`` read from the buffer at ``base``."""
    access = plan(e, layout, buf)
    cls, bits = reg_class(buf.element), buf.element.bits
    out: list[Reg | None] = [None] * len(access.offsets)
    for addr, imm, group in accesses(e, base, access, bits // 8):
        units = unit_regs(e, cls, bits, len(group))
        ty = mem_type(cls, buf.element, len(group))
        e.fn.emit(f"ld.shared{vec_suffix(len(units))}.{ty} {operands(units)}, [{addr}+{imm}]")
        for r, v in zip(group, unpack(e, cls, bits, units, len(group))):
            out[r] = v
    first = access.first_of()
    return [out[first[r]] for r in range(len(out))]  # type: ignore[misc]


@lowers(ops.LocalStoreOp)
def local_store(e: Emitter, op: Operation) -> None:
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    value = e.get(op.value)
    store_tile(e, e.get(op.buf).regs[0], buf, value.layout, value.regs)


@lowers(ops.LocalLoadOp)
def local_load(e: Emitter, op: Operation) -> None:
    buf: MemDescType = op.buf.type  # type: ignore[assignment]
    e.set(op.result, load_tile(e, e.get(op.buf).regs[0], buf, op.result.type.layout))


# -- small value ops ------------------------------------------------------------------------------
@lowers(ops.ThreadIdOp)
def thread_id(e: Emitter, op: Operation) -> None:
    r = e.fn.reg("b32")
    e.fn.emit(f"mov.u32 {r}, %tid.{'xyz'[op.axis]}")
    e.set(op.result, [r])


@lowers(ops.SpecialRegisterOp)
def special_register(e: Emitter, op: Operation) -> None:
    wide = op.register == "globaltimer"
    r = e.fn.reg("b64" if wide else "b32")
    e.fn.emit(f"mov.u{64 if wide else 32} {r}, %{op.register}")
    e.set(op.result, [r])


@lowers(ops.Clock64Op)
def clock64(e: Emitter, op: Operation) -> None:
    r = e.fn.reg("b64")
    e.fn.emit(f"mov.u64 {r}, %clock64")
    e.set(op.result, [r])
