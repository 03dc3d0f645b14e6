"""``tl.atomic_add`` / ``max`` / ``min`` / ``and`` / ``or`` / ``xor`` / ``xchg`` and
``tl.atomic_cas`` through pointers and tiles of pointers.

As in Triton, the value (and the mask, and for CAS the comparand) are cast to the
pointee type and broadcast together with the pointers; several lanes of one tile may
name one address (each applies in turn).
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.ops.atomics import CAS_TYPES, RMW_TYPES, SCOPES, SEMANTICS
from ...ir.types import DType, PointerType
from ..values import Tensor, unwrap
from .arith import cast, is_const_pointer, to_bool
from .base import Ctx, const_value, fail, rule, to_tensor
from .memory import _pointer
from .shape import broadcast_all


def _sem_scope(sem: Any, scope: Any, what: str) -> tuple[str, str]:
    s = "acq_rel" if unwrap(sem) is None else const_value(sem, f"{what}'s sem", (str,))
    if s not in SEMANTICS:
        fail("TLXC-TYPE-001", f"{what}: unknown sem {s!r}; use one of {', '.join(SEMANTICS)}")
    c = "gpu" if unwrap(scope) is None else const_value(scope, f"{what}'s scope", (str,))
    if c not in SCOPES:
        fail("TLXC-TYPE-001", f"{what}: unknown scope {c!r}; use one of {', '.join(SCOPES)}")
    return s, c


def _element(ptr: Tensor, allowed: frozenset[str], what: str) -> DType:
    elem = ptr.dtype.pointee
    if not isinstance(elem, DType) or elem.ir_name not in allowed:
        ok = ", ".join(sorted(f"tl.{d}" for d in _tl_names(allowed)))
        fail("TLXC-TYPE-001", f"{what} does not support tl.{elem!r} elements", f"{what} takes {ok}")
    return elem


def _tl_names(names: frozenset[str]) -> list[str]:
    from ...ir import types as T

    by_ir = {d.ir_name: d.tl_name for d in vars(T).values() if isinstance(d, DType)}
    return [by_ir.get(n, n) for n in names]


def _operand(ctx: Ctx, v: Any, elem: DType, name: str, what: str) -> Tensor:
    v = unwrap(v)
    if isinstance(v, Tensor) and isinstance(v.dtype, PointerType):
        fail("TLXC-TYPE-001", f"{what}'s {name} must be a number, got a pointer")
    t = to_tensor(ctx, v, elem if not isinstance(v, Tensor) else None)
    return cast(ctx, t, elem)


def _writable(ptr: Tensor, what: str) -> Tensor:
    if is_const_pointer(ptr):
        fail("TLXC-TYPE-001", f"{what} writes through a constant pointer (the kernel parameter is annotated tl.const)",
             "drop the tl.const annotation of the parameter")
    return ptr


def _rmw(ctx: Ctx, kind: str, pointer: Any, val: Any, mask: Any, sem: Any, scope: Any) -> Tensor:
    what = f"tl.atomic_{kind}"
    ptr = _writable(_pointer(pointer, what), what)
    elem = _element(ptr, RMW_TYPES[kind], what)
    s, c = _sem_scope(sem, scope, what)
    v = _operand(ctx, val, elem, "val", what)
    mask = unwrap(mask)
    if mask is None:
        ptr, v = broadcast_all(ctx, ptr, v)
        m = None
    else:
        ptr, v, m = broadcast_all(ctx, ptr, v, to_bool(ctx, mask))
    rt = ptr.type.with_element(elem) if ptr.shape else elem
    op = ctx.b.create(ops.AtomicRMWOp, [ptr.handle, v.handle], [rt], {"kind": kind, "sem": s, "scope": c},
                      optional={"mask": m.handle if m is not None else None})
    return Tensor(op.result)


def _make(kind: str) -> None:
    def atomic(ctx: Ctx, pointer: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> Tensor:
        return _rmw(ctx, kind, pointer, val, mask, sem, scope)

    atomic.__name__ = f"atomic_{kind}"
    rule(f"atomic_{kind}")(atomic)


for _kind in RMW_TYPES:
    _make(_kind)


@rule("atomic_cas")
def atomic_cas(ctx: Ctx, pointer: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> Tensor:
    what = "tl.atomic_cas"
    ptr = _writable(_pointer(pointer, what), what)
    elem = _element(ptr, CAS_TYPES, what)
    s, c = _sem_scope(sem, scope, what)
    cm = _operand(ctx, cmp, elem, "cmp", what)
    v = _operand(ctx, val, elem, "val", what)
    ptr, cm, v = broadcast_all(ctx, ptr, cm, v)
    rt = ptr.type.with_element(elem) if ptr.shape else elem
    op = ctx.b.create(ops.AtomicCASOp, [ptr.handle, cm.handle, v.handle], [rt], {"sem": s, "scope": c})
    return Tensor(op.result)
