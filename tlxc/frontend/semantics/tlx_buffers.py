"""Semantic rules of the ``tlx`` buffer builtins: ``local_alloc`` and its views,
``local_load`` / ``local_store``, and the compile-time queries (``dtype_of``,
``size_of``, ``get_fp8_format_name``), ``thread_id`` and ``clock64``.

Buffers are ``Handle`` values of ``MemDescType``; indexing (``buf[i]`` or
``local_view``) also serves arrays of mbarriers (``BarrierType``).
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import (
    BarrierType,
    DescPtrType,
    DType,
    MemDescType,
    PointerType,
    TensorDescType,
    TileType,
    int32,
    int64,
)
from ...tlx import storage_kind
from ..values import Handle, Tensor, describe, unwrap
from .arith import cast
from .base import Ctx, const_shape, const_value, constant, dtype_arg, fail, rule, to_tensor
from .tlx_alias import alias_alloc, is_spec
from .tlx_layouts import shared_layout

BUF = "TLXC-TLX-001"


def buffer(v: Any, what: str, array: bool | None = None) -> MemDescType:
    """The MemDescType of ``v`` or a clear error; ``array`` requires (True) or forbids
    (False) an array of buffers."""
    v = unwrap(v)
    if not isinstance(v, Handle) or not isinstance(v.type, MemDescType):
        fail(BUF, f"{what} must be a buffer from tlx.local_alloc, got {describe(v)}")
    t: MemDescType = v.type  # type: ignore[assignment]
    if array is True and not t.num:
        fail(BUF, f"{what} must be an array of buffers (the result of tlx.local_alloc), got one buffer")
    if array is False and t.num:
        fail(BUF, f"{what} must be one buffer, got an array of {t.num}", "index the array first: buf[i]")
    return t


def index_value(ctx: Ctx, index: Any, size: int, what: str) -> Tensor:
    """A buffer index as an i32 scalar; a constant one must be in ``[0, size)``."""
    index = unwrap(index)
    if isinstance(index, Tensor):
        if index.shape or not isinstance(index.dtype, DType) or not index.dtype.is_int() or index.dtype.is_bool():
            fail(BUF, f"{what} must be an integer scalar, got {describe(index)}")
        return cast(ctx, index, int32) if index.dtype != int32 else index
    i = const_value(index, what)
    if not 0 <= i < size:
        fail(BUF, f"{what} {i} is out of range for an array of {size}", f"valid indices are 0..{size - 1}")
    return constant(ctx, i, int32)


def _storage(v: Any) -> str:
    v = unwrap(v)
    if isinstance(v, storage_kind):
        v = v.value
    if v not in ("smem", "tmem"):
        fail(BUF, f"storage must be tlx.storage_kind.smem or tlx.storage_kind.tmem, got {describe(v)}")
    return v


@rule("tlx.local_alloc")
def local_alloc(ctx: Ctx, shape: Any, dtype: Any, num: Any, storage: Any = storage_kind.smem, reuse: Any = None,
                layout: Any = None) -> Handle:
    dims = const_shape(shape, "buffer shape")
    element = dtype_arg(dtype)
    if not isinstance(element, DType):
        fail(BUF, "buffers hold numbers, not pointers")
    n = unwrap(num)
    if isinstance(n, Tensor):
        fail("TLXC-CONSTEXPR-001", f"the number of buffers must be a compile-time constant, got {describe(n)}",
             "pass a tl.constexpr, e.g. tl.constexpr(NUM_STAGES)")
    n = const_value(n, "the number of buffers")
    if n < 1:
        fail(BUF, f"the number of buffers must be at least 1, got {n}")
    kind = _storage(storage)
    pinned_layout = None
    if unwrap(layout) is not None:
        if kind != "smem":
            fail(BUF, "local_alloc(layout=...) pins a shared-memory layout; this buffer is in tensor memory")
        pinned_layout = shared_layout(unwrap(layout), dims, element)
    reuse = unwrap(reuse)
    reuse_handle = None
    if is_spec(reuse):
        return alias_alloc(ctx, reuse, MemDescType(dims, element, n, kind, pinned_layout))
    if reuse is not None:
        r = buffer(reuse, "reuse")
        if r.storage != kind:
            fail(BUF, f"reuse must be a buffer in the same storage ({kind}), got one in {r.storage}")
        reuse_handle = reuse.handle
    t = MemDescType(dims, element, n, kind, pinned_layout)
    return Handle(ctx.b.value(ops.LocalAllocOp, [], t, optional={"reuse": reuse_handle},
                              pinned=pinned_layout is not None))


@rule("tlx.local_view")
def local_view(ctx: Ctx, buffers: Any, buffer_idx: Any) -> Handle:
    v = unwrap(buffers)
    if isinstance(v, Handle) and isinstance(v.type, DescPtrType):  # descriptor i of allocate_tensor_descriptor
        i = index_value(ctx, buffer_idx, v.type.num, "descriptor index")
        return Handle(ctx.b.value(ops.TensorDescPtrIndexOp, [v.handle, i.handle], DescPtrType(1)))
    if isinstance(v, Handle) and isinstance(v.type, BarrierType):
        bt: BarrierType = v.type
        if not bt.num:
            fail(BUF, "cannot index a single mbarrier")
        i = index_value(ctx, buffer_idx, bt.num, "barrier index")
        return Handle(ctx.b.value(ops.BarrierViewOp, [v.handle, i.handle], bt.single()))
    t = buffer(v, "local_view's buffer")
    if not t.num and len(t.buf_shape) == 1:
        # TLX: indexing one 1-D buffer gives the one-element view [i] (shape [1]).
        i = index_value(ctx, buffer_idx, t.buf_shape[0], "element index")
        return Handle(ctx.b.value(ops.LocalSliceOp, [v.handle, i.handle], MemDescType((1,), t.element, 0,
                                                                                         t.storage)))
    if not t.num:
        # TLX drops the first dimension (row i); tlxc has no rank-reducing buffer view yet.
        fail("TLXC-TLX-005", "indexing one buffer of rank > 1 (a row view) is not supported by tlxc yet",
             "use tlx.local_slice(buf, [i, 0, ...], [1, ...]) for the row")
    i = index_value(ctx, buffer_idx, t.num, "buffer index")
    return Handle(ctx.b.value(ops.LocalViewOp, [v.handle, i.handle], t.single()))


@rule("tlx.local_slice")
def local_slice(ctx: Ctx, buffer_: Any, offset: Any, shape: Any) -> Handle:
    t = buffer(buffer_, "local_slice's buffer", array=False)
    dims = const_shape(shape, "slice shape")
    offs = unwrap(offset)
    offs = offs if isinstance(offs, tuple) else (offs,)
    if len(offs) != len(t.buf_shape) or len(dims) != len(t.buf_shape):
        fail(BUF, f"slicing a rank-{len(t.buf_shape)} buffer needs {len(t.buf_shape)} offsets and dims")
    handles = []
    for d, (o, n, full) in enumerate(zip(offs, dims, t.buf_shape)):
        if not isinstance(o, Tensor):
            o = const_value(o, "slice offset")
            if o < 0 or o + n > full:
                fail(BUF, f"slice [{o}, {o + n}) of dimension {d} is outside the buffer's {full}")
        handles.append(to_tensor(ctx, o, int32).handle)
    rt = MemDescType(dims, t.element, 0, t.storage)
    return Handle(ctx.b.value(ops.LocalSliceOp, [unwrap(buffer_).handle, *handles], rt))


@rule("tlx.subslice")
def subslice(ctx: Ctx, buf: Any, offset: Any, size: Any) -> Handle:
    t = buffer(buf, "subslice's buffer", array=False)
    if t.storage != "tmem":
        fail(BUF, "subslice takes a tensor-memory buffer; use local_slice for shared memory")
    fail("TLXC-TLX-005", "tensor memory (subslice) is not supported by tlxc yet")
    raise AssertionError


@rule("tlx.local_trans")
def local_trans(ctx: Ctx, input: Any, dims: Any = (1, 0)) -> Handle:
    t = buffer(input, "local_trans's buffer", array=False)
    perm = tuple(const_value(d, "dims entry") for d in unwrap(dims))
    if sorted(perm) != list(range(len(t.buf_shape))):
        fail(BUF, f"dims {list(perm)} is not a permutation of the buffer's {len(t.buf_shape)} dimensions")
    rt = MemDescType(tuple(t.buf_shape[p] for p in perm), t.element, 0, t.storage)
    return Handle(ctx.b.value(ops.LocalTransOp, [unwrap(input).handle], rt, perm=perm))


@rule("tlx.local_reinterpret")
def local_reinterpret(ctx: Ctx, src: Any, dtype: Any, shape: Any = None, layout: Any = None) -> Handle:
    t = buffer(src, "local_reinterpret's buffer")
    element = dtype_arg(dtype)
    if not isinstance(element, DType):
        fail(BUF, "buffers hold numbers, not pointers")
    nbytes = t.nbytes * max(t.num, 1)
    if t.num:  # TLX reinterprets a whole multi-buffered allocation: its buffers lie back to back
        if unwrap(shape) is None:
            fail(BUF, f"local_reinterpret of an array of {t.num} buffers needs the shape of the whole allocation",
                 "give shape=[...] (one buffer covering all of them), or index the array first: buf[i]")
        if t.storage != "smem":
            fail(BUF, "local_reinterpret of a whole array of buffers works on shared memory only",
                 "index the array first: buf[i]")
    dims = const_shape(shape, "shape") if unwrap(shape) is not None else t.buf_shape
    rt = MemDescType(dims, element, 0, t.storage)
    if rt.nbytes > nbytes:
        what = f"the {t.num} source buffers have" if t.num else "the source has"
        fail(BUF, f"a {element!r} buffer of shape {list(dims)} needs {rt.nbytes} bytes; {what} {nbytes}")
    if unwrap(layout) is not None:
        fail(BUF, "local_reinterpret(layout=...) is not supported by tlxc yet")
    return Handle(ctx.b.value(ops.LocalReinterpretOp, [unwrap(src).handle], rt))


@rule("tlx.local_load")
def local_load(ctx: Ctx, src: Any, token: Any = None, layout: Any = None, relaxed: Any = False,
               rematerialize_coordinates: Any = False, rematerialize_coordinates_group: Any = None) -> Tensor:
    t = buffer(src, "local_load's source", array=False)
    if t.storage == "tmem":
        fail("TLXC-TLX-005", "tensor memory (local_load from tmem) is not supported by tlxc yet")
    if unwrap(layout) is not None:
        fail(BUF, "local_load(layout=...) is not supported by tlxc yet; the compiler picks the register layout")
    tok = unwrap(token)
    tok_handle = tok.handle if isinstance(tok, Handle) else None
    rt = TileType(t.buf_shape, t.element)
    return Tensor(ctx.b.value(ops.LocalLoadOp, [unwrap(src).handle], rt, optional={"token": tok_handle}))


@rule("tlx.local_store")
def local_store(ctx: Ctx, dst: Any, src: Any) -> None:
    t = buffer(dst, "local_store's destination", array=False)
    if t.storage == "tmem":
        fail("TLXC-TLX-005", "tensor memory (local_store to tmem) is not supported by tlxc yet")
    v = unwrap(src)
    if isinstance(v, Handle) and isinstance(v.type, MemDescType):
        fail(BUF, "local_store(dst, src) stores a register tile into a buffer; the source is a buffer",
             "the order is local_store(dst, src), as in TLX")
    if not isinstance(v, Tensor) or v.shape != t.buf_shape:
        fail(BUF, f"local_store needs a tile of shape {list(t.buf_shape)}, got {describe(v)}")
    if v.dtype != t.element:
        fail(BUF, f"local_store of a {v.dtype!r} tile into a {t.element!r} buffer", f"convert with .to({t.element!r})")
    ctx.b.create(ops.LocalStoreOp, [unwrap(dst).handle, v.handle], [])


@rule("tlx.dtype_of")
def dtype_of(ctx: Ctx, v: Any) -> DType | PointerType:
    v = unwrap(v)
    if isinstance(v, Tensor):
        d = v.dtype
        return d.pointee if isinstance(d, PointerType) else d
    if isinstance(v, Handle) and isinstance(v.type, (MemDescType, TensorDescType)):
        return v.type.element
    fail("TLXC-TYPE-001", f"dtype_of needs a tensor, pointer, buffer or descriptor, got {describe(v)}")
    raise AssertionError


@rule("tlx.size_of")
def size_of(ctx: Ctx, dtype: Any) -> int:
    d = dtype_arg(dtype)
    return d.itemsize


@rule("tlx.get_fp8_format_name")
def get_fp8_format_name(ctx: Ctx, dtype: Any) -> str:
    d = dtype_arg(dtype)
    if isinstance(d, DType) and d.is_fp8():
        return "e4m3" if d.man_bits == 3 else "e5m2"
    fail("TLXC-TYPE-001", f"get_fp8_format_name needs an fp8 dtype, got {d!r}")
    raise AssertionError


@rule("tlx.thread_id")
def thread_id(ctx: Ctx, axis: Any) -> Tensor:
    a = const_value(axis, "axis")
    if a not in (0, 1, 2):
        fail("TLXC-SHAPE-003", f"thread_id axis must be 0, 1 or 2, got {a}")
    return Tensor(ctx.b.value(ops.ThreadIdOp, [], int32, axis=a))


@rule("tlx.clock64")
def clock64(ctx: Ctx) -> Tensor:
    return Tensor(ctx.b.value(ops.Clock64Op, [], int64))
