"""Global-memory ops: load and store through pointers (scalars or tiles of pointers)."""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand
from ..core import Operation, register
from ..types import PointerType
from .base import fail, is_i1

CACHE_MODIFIERS = ("", ".ca", ".cg", ".cs", ".cv", ".wb", ".wt")
EVICTION_POLICIES = ("", "evict_first", "evict_last", "evict_normal")


def _check_mask(op: LoadOp | StoreOp, ptr_shape: tuple[int, ...]) -> None:
    mask = op.mask
    if mask is not None and (not is_i1(mask.type) or mask.type.shape != ptr_shape):
        fail(op, f"mask must be i1 of shape {ptr_shape}, got {mask.type}")


def _check_attrs(op: LoadOp | StoreOp) -> None:
    if op.cache not in CACHE_MODIFIERS:
        fail(op, f"unknown cache modifier {op.cache!r}")
    if op.eviction not in EVICTION_POLICIES:
        fail(op, f"unknown eviction policy {op.eviction!r}")


@register
class LoadOp(Operation):
    """Load the pointee of every pointer; where ``mask`` is false the result is ``other``
    (or undefined without it) and memory is not touched."""

    NAME = "load"
    OPERANDS = ("ptr", "?mask", "?other")
    ATTRS = {"cache": "", "eviction": "", "volatile": False}
    PURE = False

    ptr = Operand()
    mask = OptionalOperand()
    other = OptionalOperand()
    cache = Attr[str]()
    eviction = Attr[str]()
    volatile = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        ptr = self.ptr.type
        if not isinstance(ptr.scalar, PointerType):
            fail(self, f"load needs a pointer, got {ptr}")
        _check_mask(self, ptr.shape)
        _check_attrs(self)
        t = self.result.type
        if t.shape != ptr.shape or t.scalar != ptr.scalar.pointee:
            fail(self, f"result must be {ptr.scalar.pointee} of shape {ptr.shape}, got {t}")
        other = self.other
        if other is not None and other.type != t:
            fail(self, f"other must have the result type {t}, got {other.type}")


@register
class StoreOp(Operation):
    """Store ``value`` through every pointer where ``mask`` is true."""

    NAME = "store"
    OPERANDS = ("ptr", "value", "?mask")
    ATTRS = {"cache": "", "eviction": ""}
    NUM_RESULTS = 0
    PURE = False

    ptr = Operand()
    value = Operand()
    mask = OptionalOperand()
    cache = Attr[str]()
    eviction = Attr[str]()

    def verify(self) -> None:
        super().verify()
        ptr, value = self.ptr.type, self.value.type
        if not isinstance(ptr.scalar, PointerType):
            fail(self, f"store needs a pointer, got {ptr}")
        if value.shape != ptr.shape or value.scalar != ptr.scalar.pointee:
            fail(self, f"value must be {ptr.scalar.pointee} of shape {ptr.shape}, got {value}")
        _check_mask(self, ptr.shape)
        _check_attrs(self)
