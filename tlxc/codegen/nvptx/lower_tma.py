"""TMA on NVIDIA: ``tma_load`` / ``tma_store`` as ``cp.async.bulk.tensor`` (PTX ISA, "Data
Movement: cp.async.bulk.tensor" and "Tensor Map").

A host descriptor is a kernel parameter ``.param .align 64 .b8 name[128]`` (the
CUtensorMap, passed by value); its value in the emitter is the parameter's address, which
``cp.async.bulk.tensor`` takes directly. The descriptor is encoded by the runtime with the
swizzle of the buffers it copies: ``tma_params`` (one entry per descriptor parameter,
filled here and handed to the runtime through the compiled kernel's metadata) records it,
and every buffer one descriptor copies must have the same swizzle. A descriptor built in
the kernel (``make_tensor_descriptor``, lower_tensormap.py) is the 64-bit address of its
CUtensorMap in global scratch, and its swizzle is kept in its type, not in ``tma_params``.

One block may take several messages: with a swizzle, one message moves at most one swizzle
span of the inner dim (``tma_box``), so a wider block is one message per column block of
the buffer's NVMMA layout; a block dimension over 256 elements (TLX allows [1, 8192]) is
one message per 256 (``_check_split`` says which blocks split cleanly); the destination of
each is where the buffer's layout puts the message's first element. Only thread 0 issues; loads complete on the mbarrier
(``complete_tx``), stores in a bulk group that ``tma_store_wait`` (thread 0, then a CTA
barrier so no thread refills the buffer early) waits for.
"""

from __future__ import annotations

import itertools

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import BlockArgument, Operation, Value
from ...ir.layout.wgmma import smem_byte_offset, tma_swizzle_of
from ...ir.passes.buffer_layouts import is_plain
from ...ir.types import MemDescType, TensorDescType
from ...runtime.tma import MAX_BOX, tma_box
from . import instructions as insn
from .emitter import Emitter, lowers
from .lower_sync import cta_barrier, thread0
from .lower_tensormap import device_swizzle, is_device_descriptor
from .ptx import Reg


def _param_index(op: Operation, desc: Value) -> int:
    if not isinstance(desc, BlockArgument) or desc.block.parent_op is None \
            or not isinstance(desc.block.parent_op, ops.FuncOp):
        raise CompilationError("TLXC-TLX-005", "TMA through a descriptor that comes from a loop-carried value "
                                               "or a branch is not supported on the GPU by tlxc yet", op.loc,
                               "use the descriptor that make_tensor_descriptor returned, or a kernel argument")
    return desc.index


def _swizzle(e: Emitter, op: Operation, desc: Value, buf: MemDescType) -> int:
    """The buffer's TMA swizzle, recorded for the descriptor parameter (all uses must agree)."""
    dt: TensorDescType = desc.type  # type: ignore[assignment]
    swizzle = tma_swizzle_of(buf.layout, buf.element.bits) if buf.layout is not None else None
    if swizzle is None:
        raise CompilationError("TLXC-TLX-003", "this buffer's shared-memory layout is not one TMA can copy (an "
                                               "NVMMA layout, rows along the tensor's inner dimension)", op.loc,
                               "copy into a buffer from tlx.local_alloc, not a transposed or sliced view; a layout "
                               "pinned with local_alloc(layout=...) must be tlx.nv_mma_shared_layout_encoding")
    if is_device_descriptor(desc):  # built in the kernel: lower_tensormap
        return device_swizzle(op, desc, swizzle)
    index = _param_index(op, desc)
    entry = {"index": index, "block_shape": list(dt.block_shape), "element": dt.element.ir_name, "swizzle": swizzle}
    known = e.tma_params.setdefault(index, entry)
    if known["swizzle"] != swizzle:
        raise CompilationError("TLXC-TLX-003", f"this descriptor copies buffers with a {swizzle}-byte swizzle here "
                                               f"and with a {known['swizzle']}-byte swizzle elsewhere; one "
                                               "descriptor has one swizzle", op.loc,
                               "give the buffers the same inner dimension size")
    return swizzle


def _check_split(op: Operation, dt: TensorDescType, buf: MemDescType, swizzle: int) -> None:
    """A block dimension over the 256-element box limit is copied in slabs of 256 (as TLX
    does). One message writes its box densely (row-major, then swizzled), so a slab must be
    a dense piece of the buffer: that holds when the split dimension is the only one over
    the limit and every dimension before it is 1 -- a slab is then a run of whole rows of
    the block, contiguous in a row-major buffer and whole swizzle atoms in an NVMMA one.
    Other splits would need a box per row; they are refused rather than miscopied."""
    block = dt.block_shape
    wide = [d for d, n in enumerate(block) if n > MAX_BOX]
    if not wide:
        return
    d = wide[0]
    if len(wide) > 1 or any(n != 1 for n in block[:d]) or (
            tuple(buf.buf_shape) != tuple(block) and not is_plain(buf.layout, buf.buf_shape, buf.element.bits)):
        raise CompilationError("TLXC-TLX-003", f"TMA block {list(block)}: dimension {d} is over the hardware's "
                                               f"{MAX_BOX} elements per message, and tlxc splits a block into "
                                               "messages only along one dimension with every dimension before it 1",
                               op.loc, f"use a block with at most {MAX_BOX} elements per dimension, or one such as "
                                       f"[1, {block[d]}] whose leading dimensions are 1")


def _messages(dt: TensorDescType, buf: MemDescType, swizzle: int) -> list[tuple[tuple[int, ...], int]]:
    """``(element offset of the message's box in the block, byte offset in the buffer)`` per
    message, the box being ``tma_box`` of the block."""
    box = tma_box(dt.block_shape, dt.element.bits // 8, swizzle)
    out = []
    for start in itertools.product(*(range(0, b, x) for b, x in zip(dt.block_shape, box))):
        coords = start if len(buf.buf_shape) == len(start) else _flat(start, dt.block_shape, buf.buf_shape)
        out.append((start, smem_byte_offset(buf.layout, buf.element.bits, coords)))
    return out


def _flat(start: tuple[int, ...], block: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """``start`` in ``block`` re-indexed in a buffer of another shape with as many elements."""
    linear = 0
    for s, b in zip(start, block):
        linear = linear * b + s
    out = []
    for d in reversed(shape):
        out.append(linear % d)
        linear //= d
    return tuple(reversed(out))


def _coords(e: Emitter, op: Operation, values: list[Value], start: tuple[int, ...]) -> list[Reg]:
    """The coordinates of the message at ``start`` of the block, innermost first."""
    regs = []
    for v, s in zip(values, start):
        r = e.get(v).regs[0]
        if s:
            t = e.fn.reg("b32")
            e.fn.emit(f"add.s32 {t}, {r}, {s}")
            r = t
        regs.append(r)
    return regs[::-1]


def _address(e: Emitter, base: Reg, offset: int) -> str:
    return f"{base}+{offset}" if offset else str(base)


@lowers(ops.TmaLoadOp)
def tma_load(e: Emitter, op: Operation) -> None:
    desc, buf_v, bar_v = op.desc, op.buf, op.bar
    dt: TensorDescType = desc.type  # type: ignore[assignment]
    buf: MemDescType = buf_v.type  # type: ignore[assignment]
    swizzle = _swizzle(e, op, desc, buf)
    _check_split(op, dt, buf, swizzle)
    pred = op.pred
    p = thread0(e, e.get(pred).regs[0] if pred is not None else None)
    d, base, bar = e.get(desc).regs[0], e.get(buf_v).regs[0], e.get(bar_v).regs[0]
    coords = op.coords
    rank = len(dt.block_shape)
    targets = op.attrs["multicast"]
    mask = None
    if targets:  # the block lands at the same offset in each target CTA, completing on its barrier
        mask = e.fn.reg("b16")
        e.fn.emit(f"mov.b16 {mask}, {sum(1 << r for r in targets)}")
    elif op.cta_mask is not None:  # ranks known at run time: the low 16 bits of the i32 mask
        mask = e.fn.reg("b16")
        e.fn.emit(f"cvt.u16.u32 {mask}, {e.get(op.cta_mask).regs[0]}")
    for start, offset in _messages(dt, buf, swizzle):
        e.fn.emit(insn.cp_async_bulk_tensor_load(rank, _address(e, base, offset), d, _coords(e, op, coords, start),
                                                 bar, multicast_mask=mask), p)


@lowers(ops.TmaStoreOp)
def tma_store(e: Emitter, op: Operation) -> None:
    desc, buf_v = op.desc, op.buf
    dt: TensorDescType = desc.type  # type: ignore[assignment]
    buf: MemDescType = buf_v.type  # type: ignore[assignment]
    swizzle = _swizzle(e, op, desc, buf)
    _check_split(op, dt, buf, swizzle)
    p = thread0(e)
    d, base = e.get(desc).regs[0], e.get(buf_v).regs[0]
    coords = list(op.coords)
    rank = len(dt.block_shape)
    reduce = op.reduce
    for start, offset in _messages(dt, buf, swizzle):
        e.fn.emit(insn.cp_async_bulk_tensor_store(rank, d, _coords(e, op, coords, start), _address(e, base, offset),
                                                  reduce=reduce or None), p)
    e.fn.emit(insn.cp_async_bulk_commit_group(), p)


@lowers(ops.TmaStoreWaitOp)
def tma_store_wait(e: Emitter, op: Operation) -> None:
    e.fn.emit(insn.cp_async_bulk_wait_group(op.pendings, read=True), thread0(e))
    cta_barrier(e)
