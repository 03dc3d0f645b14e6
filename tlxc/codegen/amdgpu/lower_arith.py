"""Elementwise arithmetic, comparisons and selects, as LLVM instructions on each register
(``elementwise``). The semantics are the IR's (``tlxc/ir/ops/arith.py``, which the
interpreter follows): integers wrap, ``idiv``/``rem`` truncate toward zero, ``shr`` is
arithmetic on signed and logical on unsigned types."""

from __future__ import annotations

from typing import Callable

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType, Kind, PointerType
from .emitter import Emitter, lowers
from .llvm import I1, value_type


def unsupported(e: Emitter, op: Operation, what: str) -> None:
    raise CompilationError("TLXC-CODEGEN-001", f"{what} cannot be compiled for {e.target.arch} yet", op.loc)


def elementwise(e: Emitter, op: Operation, body: Callable[[list[ir.Value]], ir.Value]) -> None:
    """``op``'s result register by register, ``body`` building one. The ops lowered this
    way are pure, so registers whose operands are the same values (a splat, a broadcast,
    a layout holding an element twice) share one result."""
    ins = [e.get(v).vals for v in op.operands]
    n = len(ins[0])
    for vals in ins:
        if len(vals) != n:
            raise AssertionError(f"{op.NAME}: operands hold {[len(r) for r in ins]} registers")
    done: dict[tuple[int, ...], ir.Value] = {}
    out = []
    for i in range(n):
        args = [vals[i] for vals in ins]
        key = tuple(id(a) for a in args)
        if key not in done:
            done[key] = body(args)
        out.append(done[key])
    e.set(op.result, out)


_INT = {"add": "add", "sub": "sub", "mul": "mul", "and": "and_", "or": "or_", "xor": "xor"}
_FLOAT = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}


@lowers(ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp, ops.XorOp, ops.ShlOp,
        ops.ShrOp, ops.MinimumOp, ops.MaximumOp, ops.DivOp)
def binary(e: Emitter, op: Operation) -> None:
    t = op.result.type.scalar
    name = op.NAME
    if isinstance(t, DType) and t.kind == Kind.FLOAT:
        if name not in _FLOAT:
            unsupported(e, op, f"'{name}' on {t!r}")
        return elementwise(e, op, lambda a: getattr(e.b, _FLOAT[name])(a[0], a[1]))
    signed = isinstance(t, DType) and t.kind == Kind.INT

    def body(a: list[ir.Value]) -> ir.Value:
        x, y = a
        if name in _INT:
            return getattr(e.b, _INT[name])(x, y)
        if name == "idiv":
            return e.b.sdiv(x, y) if signed else e.b.udiv(x, y)
        if name == "rem":
            return e.b.srem(x, y) if signed else e.b.urem(x, y)
        if name in ("minimum", "maximum"):
            cmp = e.b.icmp_signed if signed else e.b.icmp_unsigned
            return e.b.select(cmp("<" if name == "minimum" else ">", x, y), x, y)
        unsupported(e, op, f"'{name}' on {t!r}")
        raise AssertionError

    elementwise(e, op, body)


_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@lowers(ops.CmpOp)
def cmp(e: Emitter, op: Operation) -> None:
    t = op.operands[0].type.scalar
    pred = _CMP[op.attrs["predicate"]]

    def body(a: list[ir.Value]) -> ir.Value:
        x, y = a
        if isinstance(t, PointerType):
            return e.b.icmp_unsigned(pred, x, y)
        if t.kind == Kind.FLOAT:
            # ordered comparisons, except '!=' which is true on NaN (as in Python and Triton)
            return e.b.fcmp_unordered(pred, x, y) if pred == "!=" else e.b.fcmp_ordered(pred, x, y)
        if t.kind == Kind.INT:
            return e.b.icmp_signed(pred, x, y)
        return e.b.icmp_unsigned(pred, x, y)

    elementwise(e, op, body)


@lowers(ops.SelectOp)
def select(e: Emitter, op: Operation) -> None:
    elementwise(e, op, lambda a: e.b.select(a[0], a[1], a[2]))


__all__ = ["I1", "value_type"]
