"""Atomic read-modify-write and compare-and-swap through global pointers (scalars or
tiles of pointers). Both return the values memory held before the operation."""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand
from ..core import Operation, register
from ..types import DType, PointerType
from .base import fail, is_i1

SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("gpu", "cta", "sys")

_INTS = frozenset({"i32", "u32", "i64", "u64"})
_FLOATS = frozenset({"f32", "f64"})
# The element types each read-modify-write kind accepts (Triton's rules): bitwise ops on
# 32/64-bit integers, max/min also on f32/f64 (lowered through their integer ordering),
# add also on the 16-bit floats the hardware adds natively.
RMW_TYPES: dict[str, frozenset[str]] = {
    "add": _INTS | _FLOATS | {"f16", "bf16"},
    "max": _INTS | _FLOATS,
    "min": _INTS | _FLOATS,
    "and": _INTS,
    "or": _INTS,
    "xor": _INTS,
    "xchg": _INTS | _FLOATS,
}
CAS_TYPES = frozenset({"i16", "u16", "f16", "bf16"}) | _INTS | _FLOATS


def _check_common(op: Operation, types: frozenset[str], what: str) -> None:
    ptr = op.ptr.type
    if not isinstance(ptr.scalar, PointerType):
        fail(op, f"{op.NAME} needs a pointer, got {ptr}")
    elem = ptr.scalar.pointee
    if not isinstance(elem, DType) or elem.ir_name not in types:
        fail(op, f"{what} does not support {elem}")
    if op.sem not in SEMANTICS:
        fail(op, f"unknown sem {op.sem!r}")
    if op.scope not in SCOPES:
        fail(op, f"unknown scope {op.scope!r}")
    t = op.result.type
    if t.shape != ptr.shape or t.scalar != elem:
        fail(op, f"result must be {elem} of shape {ptr.shape}, got {t}")


@register
class AtomicRMWOp(Operation):
    """``*ptr = kind(*ptr, val)`` atomically for every pointer where ``mask`` is true; the
    result is the old value (undefined where the mask is false)."""

    NAME = "atomic_rmw"
    OPERANDS = ("ptr", "val", "?mask")
    ATTRS = {"kind": Operation.REQUIRED, "sem": "acq_rel", "scope": "gpu"}
    PURE = False

    ptr = Operand()
    val = Operand()
    mask = OptionalOperand()
    kind = Attr[str]()
    sem = Attr[str]()
    scope = Attr[str]()

    def verify(self) -> None:
        super().verify()
        if self.kind not in RMW_TYPES:
            fail(self, f"unknown atomic kind {self.kind!r}")
        _check_common(self, RMW_TYPES[self.kind], f"atomic_{self.kind}")
        if self.val.type != self.result.type:
            fail(self, f"val must have the result type {self.result.type}, got {self.val.type}")
        mask = self.mask
        if mask is not None and (not is_i1(mask.type) or mask.type.shape != self.ptr.type.shape):
            fail(self, f"mask must be i1 of shape {self.ptr.type.shape}, got {mask.type}")


@register
class AtomicCASOp(Operation):
    """``old = *ptr; if old == cmp: *ptr = val`` atomically for every pointer; the result
    is ``old``. Floats compare by their bits."""

    NAME = "atomic_cas"
    OPERANDS = ("ptr", "cmp", "val")
    ATTRS = {"sem": "acq_rel", "scope": "gpu"}
    PURE = False

    ptr = Operand()
    cmp = Operand()
    val = Operand()
    sem = Attr[str]()
    scope = Attr[str]()

    def verify(self) -> None:
        super().verify()
        _check_common(self, CAS_TYPES, "atomic_cas")
        for name, v in (("cmp", self.cmp), ("val", self.val)):
            if v.type != self.result.type:
                fail(self, f"{name} must have the result type {self.result.type}, got {v.type}")


__all__ = ["AtomicRMWOp", "AtomicCASOp"]
