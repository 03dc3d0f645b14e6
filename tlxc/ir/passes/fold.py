"""Constant folding and algebraic simplification.

Expects: well-formed IR (every op verifies). Constants are ``constant`` ops, scalar or
splat tiles.

Guarantees:
* an elementwise op (arithmetic, ``cmp``, ``convert``) whose operands are all constants
  is replaced by one new ``constant`` op, placed where the op was and carrying its
  location, whose value is exactly what the IR's semantics give (``evaluate.py``:
  integer wraparound, truncating ``idiv``/``rem``, ``shr`` by signedness, floats rounded
  once in their own type);
* ``splat``, ``broadcast``, ``expand_dims``, ``reshape`` and ``trans`` of a constant
  become a constant of the result type; ``select`` with a constant condition, or with
  equal arms, becomes the chosen value;
* identities are removed: ``x+0``, ``x-0``, ``x*1``, ``x|0``, ``x^0``, ``x&-1``,
  ``x/1``, shifts by 0, ``addptr p, 0``, ``x&x``, ``x|x``, ``min/max(x, x)``; on integers
  also ``x*0``, ``x&0``, ``x|-1`` (the constant) and ``x-x``, ``x^x`` (zero). For floats
  only the exact ones: ``x + -0.0``, ``x - 0.0`` and ``x * 1.0``;
* an ``if`` with a constant condition is replaced by the ops of the taken region, its
  results by the values that region yields; a ``for`` whose constant bounds give zero
  iterations (``step > 0``, ``lb >= ub``) is replaced by its initial values, and one whose
  constant bounds give one iteration (``lb < ub <= lb + step``) by its body, with ``lb``
  for the induction variable and the initial values for the carried ones.
Constants that become unused are left for ``dce``.

Refuses (leaves the op as it is): division or remainder by zero, shifts by a negative
amount or by the width or more, transcendental math and ``fma``, float ``min``/``max``
whose result depends on the target (NaN without ``propagate_nan``, ``-0.0`` against
``+0.0``), fp8 arithmetic, conversions involving a float that are not exact, and every
float fold when ``options.fold_floats`` is off.
"""

from __future__ import annotations

import math

from .. import ops
from ..core import Block, Operation, Value
from ..types import DType, Kind
from . import evaluate as ev
from .options import PassOptions
from .rewrite import blocks_of, constant_of, inline_block_before, insert_constant, replace_op, tag

ELEMENTWISE_BINARY = ev.INT_BINARY | ev.FLOAT_BINARY
SHAPE_OPS = (ops.SplatOp, ops.BroadcastOp, ops.ExpandDimsOp, ops.ReshapeOp, ops.TransOp)
COMMUTATIVE = frozenset({"add", "mul", "and", "or", "xor", "minimum", "maximum"})
# x op x == x
IDEMPOTENT = frozenset({"and", "or", "minimum", "maximum"})


def run(module: Operation, options: PassOptions) -> Operation:
    """Fold constants and remove identities in ``module``, in place (see the module docstring)."""
    folder = _Folder(options)
    while folder.fold_regions(module):
        pass  # every rewrite removes an op or turns one into a constant, so this ends
    return module


class _Folder:
    def __init__(self, options: PassOptions) -> None:
        self.options = options

    def fold_regions(self, op: Operation) -> bool:
        changed = False
        for block in list(blocks_of(op)):
            changed |= self.fold_block(block)
        return changed

    def fold_block(self, block: Block) -> bool:
        changed = False
        for op in list(block.ops):
            if op.parent is not block:
                continue  # already rewritten away
            try:
                changed |= self.fold_regions(op)
                changed |= self.fold_op(op)
            except Exception as e:
                tag(e, op)
                raise
        return changed

    # -- one op ----------------------------------------------------------------------------
    def fold_op(self, op: Operation) -> bool:
        name = op.NAME
        if name in ELEMENTWISE_BINARY or name in ("cmp", "convert") or name in ev.UNARY:
            if self._fold_elementwise(op):
                return True
        if isinstance(op, SHAPE_OPS):
            value = constant_of(op.x)
            if value is not None:
                return self._replace_by_constant(op, value)
            return False
        match op:
            case ops.SelectOp():
                return self._fold_select(op)
            case ops.IfOp():
                return self._fold_if(op)
            case ops.ForOp():
                return self._fold_for(op)
            case ops.AddPtrOp():
                if self._const(op.offset) == 0:
                    replace_op(op, [op.ptr])
                    return True
                return False
        if name in ELEMENTWISE_BINARY:
            return self._simplify_binary(op)
        return False

    def _const(self, v: Value) -> ev.Scalar | None:
        """The canonical value of ``v`` if it is a constant of a number type."""
        value = constant_of(v)
        t = v.type.scalar
        if value is None or not isinstance(t, DType):
            return None
        return ev.canonical(value, t)

    def _replace_by_constant(self, op: Operation, value: object) -> bool:
        replace_op(op, [insert_constant(op, op.result.type, value)])
        return True

    def _fold_elementwise(self, op: Operation) -> bool:
        consts = [self._const(v) for v in op.operands]
        values = [v for v in consts if v is not None]
        if len(values) != len(consts):
            return False
        src = op.operands[0].type.scalar
        dst = op.result.type.scalar
        assert isinstance(src, DType) and isinstance(dst, DType)
        if not self.options.fold_floats and Kind.FLOAT in (src.kind, dst.kind):
            return False
        r: ev.Scalar | None
        match op:
            case ops.CmpOp():
                r = ev.eval_cmp(op.predicate, values[0], values[1], src)
            case ops.ConvertOp():
                r = ev.eval_convert(values[0], src, dst)
            case _ if op.NAME in ev.UNARY:
                r = ev.eval_unary(op.NAME, values[0], dst)
            case _:
                r = ev.eval_binary(op.NAME, values[0], values[1], dst, op.attrs)
        if r is None:
            return False
        return self._replace_by_constant(op, ev.as_attr(r, dst))

    def _fold_select(self, op: ops.SelectOp) -> bool:
        cond, a, b = op.cond, op.true_value, op.false_value
        c = self._const(cond)
        if c is not None:
            replace_op(op, [a if c else b])
            return True
        if a is b:
            replace_op(op, [a])
            return True
        return False

    def _fold_if(self, op: ops.IfOp) -> bool:
        c = self._const(op.cond)
        if c is None:
            return False
        taken = op.regions[0 if c else 1].block
        replace_op(op, inline_block_before(taken, op))
        return True

    def _fold_for(self, op: ops.ForOp) -> bool:
        lb, ub, step = (self._const(v) for v in (op.lb, op.ub, op.step))
        # A negative step is left alone: whether it counts down is the frontend's rule.
        if lb is None or ub is None or step is None or step <= 0:
            return False
        if lb >= ub:  # no iteration
            replace_op(op, op.inits)
            return True
        if ub - lb > step:
            return False
        # one iteration: the body, with the induction variable lb and the inits
        body = op.body
        body.args[0].replace_all_uses_with(op.lb)
        for a, v in zip(body.args[1:], op.inits):
            a.replace_all_uses_with(v)
        replace_op(op, inline_block_before(body, op))
        return True

    # -- identities ------------------------------------------------------------------------
    def _simplify_binary(self, op: Operation) -> bool:
        name = op.NAME
        x, y = op.operands
        t = op.result.type.scalar
        assert isinstance(t, DType)
        is_float = t.kind == Kind.FLOAT
        if x is y:
            if name in IDEMPOTENT:
                replace_op(op, [x])
                return True
            if name in ("sub", "xor") and not is_float:  # x - x is NaN for inf/NaN floats
                return self._replace_by_constant(op, ev.as_attr(0, t))
            return False
        if is_float and not self.options.fold_floats:
            return False
        candidates = [(x, y)] + ([(y, x)] if name in COMMUTATIVE else [])
        for keep, const in candidates:
            c = self._const(const)
            if c is None:
                continue
            result = _identity(name, c, t, keep, const)
            if result is not None:
                replace_op(op, [result])
                return True
        return False


def _identity(name: str, c: ev.Scalar, t: DType, x: Value, const: Value) -> Value | None:
    """The value ``x <name> c`` equals when the constant ``c`` makes it trivial, else None.

    Only identities that hold for every ``x``: on floats ``x + 0.0`` is not one
    (-0.0 + 0.0 is +0.0) and ``x * 0.0`` is not one (inf * 0 is NaN).
    """
    if t.kind == Kind.FLOAT:
        c = float(c)
        negative_zero = c == 0.0 and math.copysign(1.0, c) < 0
        positive_zero = c == 0.0 and not negative_zero
        if (name == "add" and negative_zero) or (name == "sub" and positive_zero) or (name == "mul" and c == 1.0):
            return x
        return None
    ones = ev.all_ones(t)
    match name:
        case "add" | "sub" | "or" | "xor" | "shl" | "shr" if c == 0:
            return x
        case "mul" | "idiv" if c == 1:
            return x
        case "and" if c == ones:
            return x
        case "mul" | "and" if c == 0:
            return const
        case "or" if c == ones:
            return const
    return None
