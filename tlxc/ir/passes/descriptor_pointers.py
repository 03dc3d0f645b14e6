"""Tensor descriptors made in the kernel, rewritten as masked pointer loads and stores,
for targets without TMA.

``tl.make_tensor_descriptor(base, shape, strides, block_shape)`` followed by
``desc.load(coords)`` / ``desc.store(coords, value)`` means the same as loading or storing
the block through pointers: element ``(c0 + i0, c1 + i1, ...)`` lives at
``base + sum((c_k + i_k) * stride_k)``, elements outside ``[0, shape_k)`` read as the
descriptor's padding (zero or NaN) and are not written. A target whose memory system has
no TMA (AMD's chips; the tensor data mover of the newest is not used yet) runs
descriptor code, as Triton's AMD back end does, through this rewrite. The scalar part
``base + sum(c_k * stride_k)`` is computed once, in 64 bits (a large tensor can pass 2**31
elements); the offsets inside the block, ``sum(i_k * stride_k)``, are 32-bit where a
constant stride shows they fit and 64-bit otherwise. A dimension whose coordinate and
extent are constants that keep the block inside needs no bounds test (the usual
``[row, 0]`` of a ``[rows, HEAD_DIM]`` tensor); fold, CSE and DCE then tidy what the
rewrite built.

Expects: verified IR.

Guarantees: every ``make_tensor_descriptor`` without ``desc_ptr`` whose result is used
only as the descriptor of ``descriptor_load`` / ``descriptor_store`` ops is gone, and those
ops are ``load`` / ``store`` through a tile of pointers with the bounds as the mask (a
load's ``other`` is the padding).

Refuses nothing: descriptors it cannot rewrite -- kernel parameters (host descriptors),
descriptors in storage of ``tlx.allocate_tensor_descriptor``, descriptors carried
through a loop or an ``if``, ``tlx.async_descriptor_load`` / ``_store`` into shared
memory -- are left as they are, for the target's check to name at the user's line.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation, Value
from ..types import DType, PointerType, TensorDescType, TileType, int1, int32, int64
from . import cse, dce, fold
from .options import DEFAULT_OPTIONS, PassOptions
from .rewrite import constant_of

_USERS = (ops.DescriptorLoadOp, ops.DescriptorStoreOp)


def run(module: Operation, options: PassOptions | None = None) -> Operation:
    """Rewrite the descriptors of every function of ``module`` (see the module docstring)."""
    for func in module.funcs:
        rewrite(func)
    return module


def rewrite(func: Operation) -> int:
    """Rewrite ``func``'s device-made descriptors in place; return how many were."""
    done = 0
    for make in [op for op in func.walk() if isinstance(op, ops.MakeTensorDescOp)]:
        if make.desc_ptr is not None:
            continue
        users = [u for u in make.result.uses if isinstance(u, _USERS) and u.desc is make.result
                 and make.result not in u.operands[1:]]
        if len(users) != len(make.result.uses):
            continue
        for user in users:
            _lower(user, make)
        make.erase()
        done += 1
    if done:  # the bounds of a dimension read whole fold away, and loads share their address terms
        for tidy in (fold, cse, dce):
            tidy.run(func, DEFAULT_OPTIONS)
    return done


def _lower(op: ops.DescriptorLoadOp | ops.DescriptorStoreOp, make: ops.MakeTensorDescOp) -> None:
    dt = make.result.type
    assert isinstance(dt, TensorDescType)  # make_tensor_descriptor's verify() checked it
    base_type = make.base.type
    assert isinstance(base_type, PointerType)  # checked there too
    rank = len(dt.block_shape)
    base, dims = make.base, make.dims
    shape, strides = dims[:rank], dims[rank:]
    coords = op.coords
    b = Builder(loc=op.loc)
    with b.before(op):
        block = tuple(dt.block_shape)
        # the block's first element, a scalar pointer: 64-bit offsets
        start: Value = base
        for c, s in zip(coords, strides):
            off = b.value(ops.MulOp, [_int(b, c, int64), _int(b, s, int64)], int64)
            start = b.value(ops.AddPtrOp, [start, off], base.type)
        ptrs = b.value(ops.SplatOp, [start], TileType(block, base_type))
        mask: Value | None = None
        for k in range(rank):
            n = block[k]
            local = b.value(ops.ArangeOp, [], TileType((n,), int32), start=0, end=n)
            wide = _offset_type(strides[k], n)
            lanes = local if wide == int32 else b.value(ops.ConvertOp, [local], TileType((n,), wide))
            stride = b.value(ops.SplatOp, [_int(b, strides[k], wide)], TileType((n,), wide))
            step = b.value(ops.MulOp, [lanes, stride], TileType((n,), wide))
            ptrs = b.value(ops.AddPtrOp, [ptrs, _spread(b, step, k, block)], ptrs.type)
            if _inside(coords[k], shape[k], n):
                continue
            index = b.value(ops.AddOp, [local, b.value(ops.SplatOp, [_int(b, coords[k], int32)],
                                                       TileType((n,), int32))], TileType((n,), int32))
            lo = b.value(ops.CmpOp, [index, _splat_const(b, 0, (n,))], TileType((n,), int1), predicate="ge")
            extent = b.value(ops.SplatOp, [_int(b, shape[k], int32)], TileType((n,), int32))
            hi = b.value(ops.CmpOp, [index, extent], TileType((n,), int1), predicate="lt")
            inside = _spread(b, b.value(ops.AndOp, [lo, hi], TileType((n,), int1)), k, block)
            mask = inside if mask is None else b.value(ops.AndOp, [mask, inside], TileType(block, int1))
        if isinstance(op, ops.DescriptorLoadOp):
            pad = float("nan") if make.padding == "nan" else 0
            other = b.value(ops.ConstantOp, [], TileType(block, dt.element),
                            value=float(pad) if dt.element.is_floating() else 0)
            loaded = b.value(ops.LoadOp, [ptrs], op.result.type, optional={"mask": mask, "other": other})
            op.result.replace_all_uses_with(loaded)
        else:
            b.create(ops.StoreOp, [ptrs, op.value], [], optional={"mask": mask})
    op.erase()


def _inside(coord: Value, extent: Value, n: int) -> bool:
    """Whether ``[coord, coord + n)`` lies in ``[0, extent)`` for certain (both constant)."""
    c, e = constant_of(coord), constant_of(extent)
    return isinstance(c, int) and isinstance(e, int) and 0 <= c and c + n <= e


def _offset_type(stride: Value, n: int) -> DType:
    """i32 when ``(n - 1) * stride`` is known to fit in it, else i64."""
    s = constant_of(stride)
    return int32 if isinstance(s, int) and abs(s) * (n - 1) < 2 ** 31 else int64


def _int(b: Builder, v: Value, t: DType) -> Value:
    """``v`` (a scalar integer) as ``t``."""
    if v.type == t:
        return v
    return b.value(ops.ConvertOp, [v], t)


def _splat_const(b: Builder, value: int, shape: tuple[int, ...]) -> Value:
    return b.value(ops.ConstantOp, [], TileType(shape, int32), value=value)


def _spread(b: Builder, v: Value, axis: int, shape: tuple[int, ...]) -> Value:
    """The 1-D tile ``v`` laid along ``axis`` of a tile of ``shape``, repeated across the
    other dimensions."""
    t: TileType = v.type  # type: ignore[assignment]
    rank = len(shape)
    if rank == 1:
        return v
    cur = v
    cur_shape = list(t.shape)
    for d in range(rank):
        if d != axis:
            cur_shape.insert(d, 1)
            cur = b.value(ops.ExpandDimsOp, [cur], TileType(tuple(cur_shape), t.scalar), axis=d)
    return b.value(ops.BroadcastOp, [cur], TileType(shape, t.scalar))


__all__ = ["run", "rewrite"]
