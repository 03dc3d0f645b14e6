"""``tl.dot`` of fp32 tiles with ``input_precision="bf16x3"`` or ``"bf16x6"``: bf16 tensor-core
dots on split operands, as Triton does (its F32DotTC pass; the 3xBF16 method of Henry et
al., arXiv:1904.06376).

Each f32 operand ``x`` is split into bf16 parts, ``hi = bf16(x)``, ``mid = bf16(x - hi)``
and (bf16x6) ``lo = bf16(x - hi - mid)``, whose sum carries 16 (24) of f32's
significand bits. The dot becomes, on a zero accumulator::

    bf16x6:  mid*mid + lo*hi + hi*lo +
    bf16x3:  mid*hi + hi*mid,  NaNs replaced by 0,
    both:    + hi*hi, then + the original accumulator

(smallest products first, so that they are not lost against the large ones; the NaN
mask drops the ``inf - inf`` that splitting an infinite operand makes in the small parts,
and ``hi*hi`` carries the infinity). Every new dot has bf16 operands and an f32
accumulator, which ``dot-to-wgmma`` and the ``mma.sync`` path take; before, these dots
ran in the per-thread FMA loop.

The interpreter runs the tile IR, where these precisions compute in f32 (what they
approximate); the split's result is within a few f32 ulps of the products' size of it
(bf16x3: about 2**-16 of each product, bf16x6: about 2**-24).

Expects: canonical tile IR (after ``software-pipeline``, whose rings then feed the splits).
Guarantees: no ``dot`` with f32 operands and a bf16xN precision is left; each one's
result is the sum above, of the same type.
Refuses: nothing.
"""

from __future__ import annotations

from ..builder import Builder
from ..core import Operation, Value
from ..ops import AddOp, CmpOp, ConstantOp, ConvertOp, DotOp, SelectOp, SubOp
from ..types import TileType, bfloat16, float32, int1, narrow
from .options import PassOptions

_PARTS = {"bf16x3": 2, "bf16x6": 3}  # bf16 parts per operand
HI, MID, LO = 0, 1, 2


def _split(b: Builder, x: Value, parts: int) -> list[Value]:
    """``x``'s bf16 parts, largest first: each one the bf16 of what the ones before left."""
    t = narrow(x.type, TileType)
    out = []
    for i in range(parts):
        part = b.value(ConvertOp, [x], TileType(t.shape, bfloat16))
        out.append(part)
        if i != parts - 1:
            x = b.value(SubOp, [x, b.value(ConvertOp, [part], t)], t)
    return out


def _rewrite(op: DotOp) -> None:
    acc_t = narrow(op.result.type, TileType)
    n = _PARTS[op.input_precision]
    with Builder(None, op.loc).before(op) as b:
        a, y = _split(b, op.a, n), _split(b, op.b, n)
        result = b.value(ConstantOp, [], acc_t, value=0.0)

        def dot(x: Value, z: Value) -> None:
            nonlocal result
            result = b.value(DotOp, [x, z, result], acc_t, input_precision="ieee")

        if n == 3:
            dot(a[MID], y[MID])
            dot(a[LO], y[HI])
            dot(a[HI], y[LO])
        dot(a[MID], y[HI])
        dot(a[HI], y[MID])
        nan = b.value(CmpOp, [result, result], TileType(acc_t.shape, int1), predicate="ne")  # unordered
        result = b.value(SelectOp, [nan, b.value(ConstantOp, [], acc_t, value=0.0), result], acc_t)
        dot(a[HI], y[HI])
        total = b.value(AddOp, [result, op.acc], acc_t)
    op.result.replace_all_uses_with(total)
    op.erase()


def _takes(op: Operation) -> bool:
    return (isinstance(op, DotOp) and op.input_precision in _PARTS
            and narrow(op.a.type, TileType).scalar == float32 and narrow(op.b.type, TileType).scalar == float32
            and narrow(op.result.type, TileType).scalar == float32)


def run(module: Operation, options: PassOptions) -> Operation:
    for func in module.funcs:
        for op in list(func.walk()):
            if _takes(op):
                _rewrite(op)
    return module
