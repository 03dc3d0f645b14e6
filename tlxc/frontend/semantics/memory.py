"""``tl.load`` and ``tl.store`` through pointers and tiles of pointers."""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.types import DType, PointerType
from ..block_ptr import BlockPointer
from ..values import Tensor, describe, unwrap
from .arith import cast, is_const_pointer, to_bool
from .base import Ctx, const_value, constant, fail, rule, to_tensor
from .block_ptr import pointers_and_mask
from .shape import broadcast_all, broadcast_shapes, broadcast_to_shape

_CACHE = {"": "", ".ca": ".ca", ".cg": ".cg", ".cs": ".cs", ".cv": ".cv", ".wb": ".wb", ".wt": ".wt",
          "ca": ".ca", "cg": ".cg", "cs": ".cs", "cv": ".cv", "wb": ".wb", "wt": ".wt"}


def _pointer(v: Any, what: str) -> Tensor:
    v = unwrap(v)
    if not isinstance(v, Tensor) or not isinstance(v.dtype, PointerType):
        fail("TLXC-MEM-001", f"{what} needs a pointer or a tile of pointers, got {describe(v)}")
    return v


def _cache(v: Any, what: str) -> str:
    if unwrap(v) is None:  # Triton accepts None for "no modifier"
        v = ""
    c = const_value(v, what, (str,))
    if c not in _CACHE:
        fail("TLXC-TYPE-001", f"unknown {what} {c!r}; use one of {sorted(k for k in _CACHE if k.startswith('.'))}")
    return _CACHE[c]


def _eviction(v: Any) -> str:
    if unwrap(v) is None:
        v = ""
    e = const_value(v, "eviction_policy", (str,))
    if e not in ops.memory.EVICTION_POLICIES:
        fail("TLXC-TYPE-001", f"unknown eviction_policy {e!r}; use evict_first, evict_last or evict_normal")
    return e


def _scalar_pointer_operand(what: str, name: str, v: Any) -> None:
    """Triton's rule: through a scalar pointer, ``value`` / ``mask`` / ``other`` are scalars
    too (a tile would have all its elements go to, or come from, one address)."""
    if isinstance(v, Tensor) and v.shape:
        fail("TLXC-SHAPE-001", f"{what} through a scalar pointer needs a scalar `{name}`, got a {describe(v)}",
             "store or load a scalar (reduce the tile first, e.g. with tl.sum), or index the pointer with a tile "
             "of offsets (ptr + tl.arange(0, N)) to access one element per lane")


def _block_access(ctx: Ctx, bp: BlockPointer, boundary_check: Any, padding_option: Any,
                  what: str) -> tuple[Tensor, Tensor | None, Any]:
    """The pointer tile, mask and ``other`` of an access through a block pointer."""
    ptr, mask = pointers_and_mask(ctx, bp, boundary_check, what)
    pad = unwrap(padding_option)
    if pad in (None, ""):
        other = 0 if mask is not None else None
    elif pad == "zero":
        other = 0
    elif pad == "nan":
        elem = ptr.dtype.pointee  # type: ignore[union-attr]
        if isinstance(elem, PointerType) or not elem.is_floating():
            fail("TLXC-TYPE-001", f"{what}: padding_option='nan' needs floating-point elements, not {elem!r}")
        other = float("nan")
    else:
        fail("TLXC-TYPE-001", f"{what}: padding_option must be 'zero' or 'nan', got {pad!r}")
    return ptr, mask, other if mask is not None else None


@rule("load")
def load(ctx: Ctx, pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (),
         padding_option: Any = "", cache_modifier: Any = "", eviction_policy: Any = "",
         volatile: Any = False) -> Tensor:
    if isinstance(unwrap(pointer), BlockPointer):
        if unwrap(mask) is not None or unwrap(other) is not None:
            fail("TLXC-TYPE-001", "tl.load through a block pointer takes boundary_check and padding_option, not "
                                  "mask and other")
        pointer, mask, other = _block_access(ctx, unwrap(pointer), boundary_check, padding_option, "tl.load")
    elif unwrap(boundary_check) not in ((), [], None) or unwrap(padding_option):
        fail("TLXC-TYPE-001", "boundary_check and padding_option apply to block pointers (tl.make_block_ptr); "
                              "use a mask")
    ptr = _pointer(pointer, "tl.load")
    mask, other = unwrap(mask), unwrap(other)
    if other is not None and mask is None:
        fail("TLXC-TYPE-001", "tl.load got `other` without `mask`", "`other` is the value of masked-off lanes")
    elem = ptr.dtype.pointee
    if not ptr.shape:
        _scalar_pointer_operand("tl.load", "mask", mask)
        _scalar_pointer_operand("tl.load", "other", other)
    m = None
    if mask is not None:
        m = to_bool(ctx, mask)
        ptr, m = broadcast_all(ctx, ptr, m)
    o = None
    if other is not None:
        o = cast(ctx, to_tensor(ctx, other, elem if not isinstance(other, Tensor) else None), elem)
        if o.shape != ptr.shape:
            ptr_shape = ptr.shape
            if len(o.shape) > len(ptr_shape) or any(a != b and a != 1 for a, b in zip(o.shape[::-1], ptr_shape[::-1])):
                ptr, o = broadcast_all(ctx, ptr, o)
                if m is not None:
                    m = broadcast_to_shape(ctx, m, ptr.shape)
            else:
                o = broadcast_to_shape(ctx, o, ptr.shape)
    rt = ptr.type.with_element(elem) if ptr.shape else elem
    op = ctx.b.create(
        ops.LoadOp, [ptr.handle], [rt],
        {"cache": _cache(cache_modifier, "cache_modifier"), "eviction": _eviction(eviction_policy),
         "volatile": bool(const_value(volatile, "volatile", (bool, int)))},
        optional={"mask": m.handle if m is not None else None, "other": o.handle if o is not None else None},
    )
    return Tensor(op.result)


@rule("store")
def store(ctx: Ctx, pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (),
          cache_modifier: Any = "", eviction_policy: Any = "") -> None:
    if isinstance(unwrap(pointer), BlockPointer):
        if unwrap(mask) is not None:
            fail("TLXC-TYPE-001", "tl.store through a block pointer takes boundary_check, not mask")
        bp = unwrap(pointer)
        pointer, mask, _ = _block_access(ctx, bp, boundary_check, None, "tl.store")
        value = unwrap(value)
        if isinstance(value, Tensor) and value.shape != bp.block_shape:
            fail("TLXC-SHAPE-001", f"tl.store through a block pointer of blocks {list(bp.block_shape)} got a "
                                   f"{describe(value)}")
    elif unwrap(boundary_check) not in ((), [], None):
        fail("TLXC-TYPE-001", "boundary_check applies to block pointers (tl.make_block_ptr); use a mask")
    ptr = _pointer(pointer, "tl.store")
    if is_const_pointer(ptr):
        fail("TLXC-TYPE-001", "Cannot store to a constant pointer (the kernel parameter is annotated tl.const)",
             "drop the tl.const annotation of the parameter, or store through another pointer")
    elem = ptr.dtype.pointee
    value = unwrap(value)
    v = constant(ctx, value, elem) if not isinstance(value, Tensor) else value
    # pointers are stored as pointers, or as 64-bit integers (Triton casts, ptrtoint)
    as_address = isinstance(v.dtype, PointerType) and isinstance(elem, DType) and elem.is_int() and elem.bits == 64
    if isinstance(v.dtype, PointerType) != isinstance(elem, PointerType) and not as_address:
        fail("TLXC-TYPE-001", f"cannot store {describe(v)} through a pointer to {elem!r}")
    v = cast(ctx, v, elem)
    mask = unwrap(mask)
    if not ptr.shape:
        _scalar_pointer_operand("tl.store", "value", v)
        _scalar_pointer_operand("tl.store", "mask", mask)
    m = to_bool(ctx, mask) if mask is not None else None
    # As in Triton, the value and the mask take the pointer's shape: a pointer that grew to fit
    # them would store several elements to one address (and which one lands is up to the hardware).
    for name, t in (("value", v), ("mask", m)):
        if t is not None and broadcast_shapes(ptr.shape, t.shape) != ptr.shape:
            fail("TLXC-SHAPE-001", f"tl.store's {name} has shape {list(t.shape)}, which does not fit the "
                                   f"pointer's shape {list(ptr.shape)}",
                 "the value and the mask broadcast to the pointer's shape, not the other way round; build the "
                 "pointers with the full shape (e.g. ptr + rows[:, None] * stride + cols[None, :])")
    v = broadcast_to_shape(ctx, v, ptr.shape)
    if m is not None:
        m = broadcast_to_shape(ctx, m, ptr.shape)
    ctx.b.create(
        ops.StoreOp, [ptr.handle, v.handle], [],
        {"cache": _cache(cache_modifier, "cache_modifier"), "eviction": _eviction(eviction_policy)},
        optional={"mask": m.handle if m is not None else None},
    )
