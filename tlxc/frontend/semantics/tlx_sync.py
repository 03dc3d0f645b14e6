"""Semantic rules of the ``tlx`` synchronization and data-movement builtins: mbarriers,
named barriers, fences, per-thread async copies (cp.async) and TMA through tensor
descriptors (``async_descriptor_load`` / ``_store``, ``desc.load`` / ``desc.store``,
``make_tensor_descriptor``, and descriptors in storage of the kernel's own:
``allocate_tensor_descriptor``, ``make_tensor_descriptor(desc_ptr=...)``,
``reinterpret_tensor_descriptor``).

``check_named_barriers`` runs on the finished module: the thread count of a named
barrier must be the same at every wait and arrive on it.
"""

from __future__ import annotations

from typing import Any

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import BarrierType, DescPtrType, DType, PointerType, TensorDescType, TileType, int32, token
from ..values import Handle, Tensor, describe, unwrap
from .arith import cast, to_bool
from .base import Ctx, const_shape, const_value, constant, dtype_arg, fail, rule, to_tensor
from .memory import _cache, _eviction
from .shape import broadcast_to_shape
from .tlx_buffers import buffer

BAR = "TLXC-TLX-002"
TMA = "TLXC-TLX-003"


class RemoteBarrier(Handle):
    """An mbarrier of the peer CTA ``rank`` (``tlx.remote_view``): only ``barrier_arrive``
    takes it."""

    __slots__ = ("rank",)

    def __init__(self, handle: Any, rank: Tensor) -> None:
        super().__init__(handle)
        self.rank = rank


def rank_value(ctx: Ctx, rank: Any, what: str = "remote_cta_rank") -> Tensor:
    """A peer's rank as an i32 scalar."""
    r = to_tensor(ctx, rank, int32)
    if r.shape or not r.dtype.is_int():  # type: ignore[union-attr]
        fail("TLXC-TYPE-001", f"{what} must be an integer scalar, got {describe(r)}")
    if r.dtype != int32:
        from .arith import cast

        r = cast(ctx, r, int32)
    return r


def not_remote(v: Any, what: str) -> None:
    """Refuse a remote view where only a local mbarrier will do."""
    if isinstance(unwrap(v), RemoteBarrier):
        fail(BAR, f"{what} on a remote view: a CTA waits on (and expects bytes on) its own mbarriers only",
             "arrive remote, wait local: wait on the local barrier, and let the peer arrive on it with "
             "tlx.barrier_arrive(bar, remote_cta_rank=...)")


def one_barrier(v: Any, what: str = "the barrier", remote_ok: bool = False) -> Handle:
    """One mbarrier (a Handle of BarrierType with num == 0) or a clear error; a peer's
    (``remote_view``) only where ``remote_ok``."""
    v = unwrap(v)
    if not remote_ok:
        not_remote(v, what)
    if not isinstance(v, Handle) or not isinstance(v.type, BarrierType):
        fail(BAR, f"{what} must be an mbarrier from tlx.alloc_barriers, got {describe(v)}")
    if v.type.num:
        fail(BAR, f"{what} must be one mbarrier, got an array of {v.type.num}", "index the array first: bars[i]")
    return v


def _single(ctx: Ctx, v: Any) -> Any:
    """An array of one mbarrier (``tlx.alloc_barriers(1)``) as its one element, which TLX
    takes where it wants a barrier for a TMA load; other values unchanged."""
    u = unwrap(v)
    if isinstance(u, Handle) and isinstance(u.type, BarrierType) and u.type.num == 1:
        return Handle(ctx.b.value(ops.BarrierViewOp, [u.handle, constant(ctx, 0, int32).handle], u.type.single()))
    return v


def _pred(ctx: Ctx, pred: Any) -> Any:
    pred = unwrap(pred)
    if pred is None:
        return None
    p = to_bool(ctx, pred)
    if p.shape:
        fail("TLXC-TYPE-001", f"pred must be a scalar, got {describe(p)}")
    return p.handle


def _count(v: Any, what: str) -> int:
    n = const_value(v, what)
    if n < 1:
        fail(BAR, f"{what} must be at least 1, got {n}")
    return n


@rule("tlx.alloc_barriers")
def alloc_barriers(ctx: Ctx, num_barriers: Any, arrive_count: Any = 1) -> Handle:
    n = _count(num_barriers, "the number of barriers")
    c = _count(arrive_count, "arrive_count")
    return Handle(ctx.b.value(ops.BarrierAllocOp, [], BarrierType(n), count=c))


@rule("tlx.alloc_warp_barrier")
def alloc_warp_barrier(ctx: Ctx, num_barriers: Any, num_warps: Any = 1, num_arrivals: Any = 1) -> Handle:
    n = _count(num_barriers, "the number of barriers")
    c = _count(num_warps, "num_warps") * 32 * _count(num_arrivals, "num_arrivals")
    return Handle(ctx.b.value(ops.BarrierAllocOp, [], BarrierType(n, warp=True), count=c))


@rule("tlx.barrier_expect_bytes")
def barrier_expect_bytes(ctx: Ctx, bar: Any, size: Any, pred: Any = None) -> None:
    b = one_barrier(bar, "barrier_expect_bytes")
    if b.type.warp:
        fail(BAR, "barrier_expect_bytes on a warp barrier (alloc_warp_barrier): a TMA barrier must be allocated "
                  "with alloc_barriers")
    n = const_value(size, "size")
    if n < 0 or n >= 1 << 20:
        fail(BAR, f"expected bytes must be in [0, 2**20), got {n}")
    ctx.b.create(ops.BarrierExpectOp, [b.handle], [], {"bytes": n}, optional={"pred": _pred(ctx, pred)})


@rule("tlx.barrier_wait")
def barrier_wait(ctx: Ctx, bar: Any, phase: Any, pred: Any = None) -> None:
    b = one_barrier(bar, "barrier_wait")
    p = to_tensor(ctx, phase, int32)
    if p.shape or not isinstance(p.dtype, DType) or not p.dtype.is_int():
        fail("TLXC-TYPE-001", f"phase must be an integer scalar, got {describe(p)}")
    if p.dtype != int32:
        p = cast(ctx, p, int32)
    ctx.b.create(ops.BarrierWaitOp, [b.handle, p.handle], [], optional={"pred": _pred(ctx, pred)})


@rule("tlx.barrier_arrive")
def barrier_arrive(ctx: Ctx, bar: Any, arrive_count: Any = 1, remote_cta_rank: Any = None, pred: Any = None) -> None:
    b = one_barrier(bar, remote_ok=True)
    rank = b.rank if isinstance(b, RemoteBarrier) else None
    if unwrap(remote_cta_rank) is not None:
        if rank is not None:
            fail(BAR, "barrier_arrive on a remote view with remote_cta_rank too: name the peer once")
        rank = rank_value(ctx, remote_cta_rank)
    c = _count(arrive_count, "arrive_count")
    ctx.b.create(ops.BarrierArriveOp, [b.handle], [], {"count": c},
                 optional={"pred": _pred(ctx, pred), "remote_rank": rank.handle if rank is not None else None})


def _named(ctx: Ctx, cls: type, bar: Any, arrive_count: Any) -> None:
    i = const_value(bar, "the named barrier id")
    if not 0 <= i < 16:
        fail(BAR, f"named barrier ids are 0..15, got {i}")
    if i == 0:
        fail(BAR, "named barrier 0 is the one __syncthreads uses; pick an id in 1..15")
    n = const_value(arrive_count, "the named barrier's thread count")
    if n <= 0 or n % 32:
        fail(BAR, f"a named barrier's thread count must be a positive multiple of 32 (whole warps), got {n}")
    ctx.b.create(cls, [], [], {"bar_id": i, "threads": n})


@rule("tlx.named_barrier_wait")
def named_barrier_wait(ctx: Ctx, bar: Any, arrive_count: Any) -> None:
    _named(ctx, ops.NamedBarrierWaitOp, bar, arrive_count)


@rule("tlx.named_barrier_arrive")
def named_barrier_arrive(ctx: Ctx, bar: Any, arrive_count: Any) -> None:
    _named(ctx, ops.NamedBarrierArriveOp, bar, arrive_count)


def check_named_barriers(module: Operation) -> None:
    """Every wait and arrive on one named barrier must name the same thread count."""
    seen: dict[int, Operation] = {}
    for op in module.walk():
        if isinstance(op, (ops.NamedBarrierWaitOp, ops.NamedBarrierArriveOp)):
            first = seen.setdefault(op.attrs["bar_id"], op)
            if first.attrs["threads"] != op.attrs["threads"]:
                raise CompilationError(
                    BAR, f"named barrier {op.attrs['bar_id']} is used with {op.attrs['threads']} threads here but "
                         f"with {first.attrs['threads']} threads at line {first.loc.line if first.loc else '?'}",
                    op.loc, "every wait and arrive on a named barrier counts all its threads (waiters + arrivers)")


@rule("tlx.fence")
def fence(ctx: Ctx, scope: Any) -> None:
    s = const_value(scope, "fence scope", (str,))
    if s not in ops.FENCE_SCOPES:
        fail("TLXC-TYPE-001", f"fence scope must be one of {', '.join(ops.FENCE_SCOPES)}, got {s!r}")
    ctx.b.create(ops.FenceOp, [], [], {"scope": s})


@rule("tlx.fence_async_shared")
def fence_async_shared(ctx: Ctx) -> None:
    ctx.b.create(ops.FenceOp, [], [], {"scope": "async_shared"})


# -- cp.async ------------------------------------------------------------------------------
def _tokens(v: Any) -> list[Any]:
    v = unwrap(v)
    items = v if isinstance(v, tuple) else (() if v is None else (v,))
    out = []
    for t in items:
        if not isinstance(t, Handle) or t.type != token:
            fail("TLXC-TYPE-001", f"tokens must be async tokens, got {describe(t)}")
        out.append(t.handle)
    return out


@rule("tlx.async_load")
def async_load(ctx: Ctx, src: Any, result: Any, mask: Any = None, other: Any = None, cache_modifier: Any = "",
               eviction_policy: Any = "", is_volatile: Any = False, bulk: Any = False, bulk_size: Any = None,
               barrier: Any = None) -> Handle:
    t = buffer(result, "async_load's destination", array=False)
    ptr = unwrap(src)
    if unwrap(bulk):
        fail("TLXC-TLX-005", "bulk async_load is not supported by tlxc yet; use a TMA descriptor")
    if not isinstance(ptr, Tensor) or not isinstance(ptr.dtype, PointerType):
        fail("TLXC-MEM-001", f"async_load needs a tile of pointers, got {describe(ptr)}")
    if ptr.dtype.pointee != t.element:
        fail("TLXC-TYPE-001", f"async_load of {ptr.dtype.pointee!r} values into a {t.element!r} buffer")
    if ptr.shape != t.buf_shape:
        ptr = broadcast_to_shape(ctx, ptr, t.buf_shape)
    m = broadcast_to_shape(ctx, to_bool(ctx, mask), t.buf_shape).handle if unwrap(mask) is not None else None
    o = None
    if unwrap(other) is not None:
        if m is None:
            fail("TLXC-TYPE-001", "async_load got `other` without `mask`")
        ov = unwrap(other)
        o = cast(ctx, to_tensor(ctx, ov, t.element if not isinstance(ov, Tensor) else None), t.element)
        o = broadcast_to_shape(ctx, o, t.buf_shape).handle
    cache = _cache(cache_modifier, "cache_modifier")
    if cache not in ("", ".ca", ".cg"):
        fail("TLXC-TYPE-001", f"async_load supports the cache modifiers .ca and .cg, got {cache!r}")
    op = ctx.b.create(ops.AsyncLoadOp, [ptr.handle, unwrap(result).handle], [token],
                      {"cache": cache, "eviction": _eviction(eviction_policy)}, optional={"mask": m, "other": o})
    return Handle(op.result)


@rule("tlx.async_load_commit_group")
def async_load_commit_group(ctx: Ctx, tokens: Any = ()) -> Handle:
    return Handle(ctx.b.value(ops.AsyncCommitGroupOp, _tokens(tokens), token))


@rule("tlx.async_load_wait_group")
def async_load_wait_group(ctx: Ctx, pendings: Any, tokens: Any = ()) -> Handle:
    n = const_value(pendings, "pendings")
    if n < 0:
        fail("TLXC-TYPE-001", f"pendings must be >= 0, got {n}")
    return Handle(ctx.b.value(ops.AsyncWaitGroupOp, _tokens(tokens), token, pendings=n))


# -- TMA -----------------------------------------------------------------------------------
def descriptor(v: Any, what: str = "the descriptor") -> Handle:
    v = unwrap(v)
    if not isinstance(v, Handle) or not isinstance(v.type, TensorDescType):
        fail(TMA, f"{what} must be a tensor descriptor, got {describe(v)}")
    return v


def _coords(ctx: Ctx, offsets: Any, rank: int) -> list[Any]:
    offs = unwrap(offsets)
    offs = offs if isinstance(offs, tuple) else (offs,)
    if len(offs) != rank:
        fail(TMA, f"a rank-{rank} descriptor needs {rank} coordinates, got {len(offs)}")
    out = []
    for o in offs:
        c = to_tensor(ctx, o, int32)
        if c.shape or not isinstance(c.dtype, DType) or not c.dtype.is_int() or c.dtype.is_bool():
            fail("TLXC-TYPE-001", f"coordinates must be integer scalars, got {describe(c)}")
        out.append((cast(ctx, c, int32) if c.dtype != int32 else c).handle)
    return out


def check_block(shape: tuple[int, ...], element: DType) -> None:
    """What a tensor descriptor's block can be: rank 1..5, the inner dim >= 16 bytes.

    A block dimension over NVIDIA's 256-element box limit is fine here, as in TLX: the TMA
    lowering splits such a block into several messages (lower_tma.py), and AMD targets
    turn descriptors into masked pointer accesses, which have no box at all."""
    if not 1 <= len(shape) <= 5:
        fail(TMA, f"TMA blocks have 1 to 5 dimensions, got {len(shape)}")
    inner = shape[-1] * element.bits // 8
    if inner < 16:
        fail(TMA, f"the inner block dimension is {shape[-1]} x {element.itemsize} = {inner} bytes; TMA needs at "
                  "least 16 bytes", f"make the last block dimension at least {16 * 8 // element.bits} elements")


def _matching_buffer(desc: TensorDescType, buf: Any, what: str) -> Any:
    t = buffer(buf, what, array=False)
    if t.element != desc.element:
        fail(TMA, f"{what} holds {t.element!r} but the descriptor copies {desc.element!r}")
    if t.numel != _numel(desc.block_shape):
        fail(TMA, f"{what} has shape {list(t.buf_shape)} but the descriptor's block is {list(desc.block_shape)}")
    check_block(desc.block_shape, desc.element)
    return unwrap(buf).handle


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@rule("tlx.async_descriptor_load")
def async_descriptor_load(ctx: Ctx, desc: Any, result: Any, offsets: Any, barrier: Any, pred: Any = None,
                          cache_modifier: Any = "", eviction_policy: Any = "", multicast_targets: Any = (),
                          two_ctas: Any = False) -> None:
    d = descriptor(desc)
    dt: TensorDescType = d.type  # type: ignore[assignment]
    buf = _matching_buffer(dt, result, "async_descriptor_load's destination")
    bar = one_barrier(_single(ctx, barrier), "async_descriptor_load's barrier")
    if unwrap(two_ctas):
        fail("TLXC-TLX-005", "two-CTA TMA (two_ctas=True) is a Blackwell feature tlxc does not support yet")
    targets, mask = _multicast(ctx, multicast_targets)
    coords = _coords(ctx, offsets, len(dt.block_shape))
    ctx.b.create(ops.TmaLoadOp, [d.handle, buf, bar.handle, *coords], [],
                 {"eviction": _eviction(eviction_policy), "multicast": targets},
                 optional={"pred": _pred(ctx, pred), "cta_mask": mask})


def _multicast(ctx: Ctx, targets: Any) -> tuple[tuple[int, ...], Any]:
    """``multicast_targets``: distinct cluster ranks (0..15: the CTA mask of
    ``.multicast::cluster`` has 16 bits). All known at compile time: (the ranks, None).
    Some only at run time (TLX's 2-CTA GEMM multicasts to ``[cta_id, cta_id ^ 1]``):
    ((), the mask as an i32 scalar, bit r for rank r), checked for range by nobody --
    as in TLX, a rank outside the cluster is the user's to avoid."""
    t = unwrap(targets)
    if t is None:
        return (), None
    if not isinstance(t, (list, tuple)):
        fail(TMA, f"multicast_targets must be a list of cluster ranks, got {describe(t)}")
    if any(isinstance(unwrap(x), Tensor) for x in t):
        from .arith import binary

        mask: Any = None
        for x in t:
            bit = binary(ctx, "lshift", constant(ctx, 1, int32), rank_value(ctx, x, "a multicast target"))
            mask = bit if mask is None else binary(ctx, "or", mask, bit)
        return (), mask.handle
    out = []
    for x in t:
        r = const_value(x, "a multicast target (a cluster rank)")
        if not isinstance(r, int) or not 0 <= r < 16 or r in out:
            fail(TMA, f"multicast targets must be distinct cluster ranks 0..15, got {list(t)}")
        out.append(r)
    return tuple(out), None


@rule("tlx.async_descriptor_store")
def async_descriptor_store(ctx: Ctx, desc: Any, source: Any, offsets: Any, eviction_policy: Any = "",
                           store_reduce: Any = "") -> None:
    d = descriptor(desc)
    dt: TensorDescType = d.type  # type: ignore[assignment]
    buf = _matching_buffer(dt, source, "async_descriptor_store's source")
    reduce = const_value(store_reduce, "store_reduce", (str,))
    if reduce not in ops.STORE_REDUCTIONS:
        fail("TLXC-TYPE-001", f"store_reduce must be one of {ops.STORE_REDUCTIONS[1:]}, got {reduce!r}")
    coords = _coords(ctx, offsets, len(dt.block_shape))
    ctx.b.create(ops.TmaStoreOp, [d.handle, buf, *coords], [], {"reduce": reduce,
                                                                "eviction": _eviction(eviction_policy)})


@rule("tlx.async_descriptor_store_wait")
def async_descriptor_store_wait(ctx: Ctx, pendings: Any) -> None:
    n = const_value(pendings, "pendings")
    if n < 0:
        fail("TLXC-TYPE-001", f"pendings must be >= 0, got {n}")
    ctx.b.create(ops.TmaStoreWaitOp, [], [], {"pendings": n})


@rule("tlx.descriptor_load", "load_tensor_descriptor")
def descriptor_load(ctx: Ctx, desc: Any, offsets: Any) -> Tensor:
    d = descriptor(desc)
    dt: TensorDescType = d.type  # type: ignore[assignment]
    check_block(dt.block_shape, dt.element)
    coords = _coords(ctx, offsets, len(dt.block_shape))
    return Tensor(ctx.b.value(ops.DescriptorLoadOp, [d.handle, *coords], TileType(dt.block_shape, dt.element)))


@rule("tlx.descriptor_store", "store_tensor_descriptor")
def descriptor_store(ctx: Ctx, desc: Any, offsets: Any, value: Any) -> None:
    d = descriptor(desc)
    dt: TensorDescType = d.type  # type: ignore[assignment]
    check_block(dt.block_shape, dt.element)
    v = unwrap(value)
    v = constant(ctx, v, dt.element) if not isinstance(v, Tensor) else v
    v = cast(ctx, v, dt.element) if v.dtype != dt.element else v
    if v.shape != dt.block_shape:
        v = broadcast_to_shape(ctx, v, dt.block_shape)
    coords = _coords(ctx, offsets, len(dt.block_shape))
    ctx.b.create(ops.DescriptorStoreOp, [d.handle, v.handle, *coords], [])


def _make_descriptor(ctx: Ctx, base: Any, shape: Any, strides: Any, block_shape: Any, padding_option: Any,
                     desc_ptr: Handle | None = None) -> Handle:
    b = unwrap(base)
    if not isinstance(b, Tensor) or b.shape or not isinstance(b.dtype, PointerType):
        fail(TMA, f"make_tensor_descriptor needs a pointer as its base, got {describe(b)}")
    element = b.dtype.pointee
    block = const_shape(block_shape, "block_shape")
    check_block(block, element)
    dims, strs = unwrap(shape), unwrap(strides)
    dims = dims if isinstance(dims, tuple) else (dims,)
    strs = strs if isinstance(strs, tuple) else (strs,)
    if len(dims) != len(block) or len(strs) != len(block):
        fail(TMA, f"a rank-{len(block)} block needs {len(block)} sizes and strides, got {len(dims)} and {len(strs)}")
    last = strs[-1]
    if not isinstance(last, Tensor) and last != 1:
        fail(TMA, f"the last stride of a TMA tensor must be 1, got {last}")
    for s in strs[:-1]:
        if not isinstance(s, Tensor) and (s * element.itemsize) % 16:
            fail(TMA, f"stride {s} x {element.itemsize} bytes is not a multiple of 16 bytes, as TMA requires")
    padding = const_value(padding_option, "padding_option", (str,))
    if padding not in ("zero", "nan"):
        fail(TMA, f"padding_option must be 'zero' or 'nan', got {padding!r}")
    if padding == "nan" and not element.is_floating():
        fail(TMA, "padding_option='nan' needs a floating-point tensor")
    operands = [cast(ctx, to_tensor(ctx, x, int32), int32).handle for x in (*dims, *strs)]
    t = TensorDescType(block, element)
    at = desc_ptr.handle if desc_ptr is not None else None
    return Handle(ctx.b.value(ops.MakeTensorDescOp, [b.handle, *operands], t, padding=padding,
                              optional={"desc_ptr": at}))


@rule("make_tensor_descriptor")
def tl_make_tensor_descriptor(ctx: Ctx, base: Any, shape: Any, strides: Any, block_shape: Any,
                              padding_option: Any = "zero") -> Handle:
    return _make_descriptor(ctx, base, shape, strides, block_shape, padding_option)


@rule("tlx.make_tensor_descriptor")
def make_tensor_descriptor(ctx: Ctx, desc_ptr: Any, base: Any, shape: Any, strides: Any, block_shape: Any,
                           padding_option: Any = "zero") -> Handle:
    at = unwrap(desc_ptr)
    if at is not None:
        at = descriptor_ptr(at, "desc_ptr")
    return _make_descriptor(ctx, base, shape, strides, block_shape, padding_option, at)


def descriptor_ptr(v: Any, what: str) -> Handle:
    """Storage for descriptors from tlx.allocate_tensor_descriptor (an allocation, or one of it)."""
    v = unwrap(v)
    if not isinstance(v, Handle) or not isinstance(v.type, DescPtrType):
        fail(TMA, f"{what} must be descriptor storage from tlx.allocate_tensor_descriptor, got {describe(v)}",
             "allocate it with ptrs = tlx.allocate_tensor_descriptor(num) and pass ptrs[i]")
    return v


@rule("tlx.allocate_tensor_descriptor")
def allocate_tensor_descriptor(ctx: Ctx, num: Any) -> Handle:
    n = const_value(num, "the number of descriptors")
    if n < 1:
        fail(TMA, f"the number of descriptors must be at least 1, got {n}")
    return Handle(ctx.b.value(ops.AllocTensorDescOp, [], DescPtrType(n)))


@rule("tlx.reinterpret_tensor_descriptor")
def reinterpret_tensor_descriptor(ctx: Ctx, desc_ptr: Any, block_shape: Any, dtype: Any) -> Handle:
    at = descriptor_ptr(desc_ptr, "desc_ptr")
    element = dtype_arg(dtype)
    if not isinstance(element, DType):
        fail(TMA, f"a tensor descriptor holds numbers, not {describe(element)}")
    block = const_shape(block_shape, "block_shape")
    check_block(block, element)
    return Handle(ctx.b.value(ops.ReinterpretTensorDescOp, [at.handle], TensorDescType(block, element)))
