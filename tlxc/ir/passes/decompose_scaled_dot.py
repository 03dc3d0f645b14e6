"""``tl.dot_scaled`` on a target without scaled matrix instructions: rewrite each
``dot_scaled`` into ordinary tile ops and one ``dot``.

Each operand is decoded to f32 values in its logical orientation (A [M, K], B [K, N]):

* e2m1: each byte's two nibbles (the low one first) are joined along a new last axis and
  moved next to the packed axis (K, or M / N without ``*_k_pack``), then reshaped away.
  A nibble ``s e e m`` becomes f32 bits directly: ``v = eem``; ``v >= 2`` is
  ``2**(ee - 1) * 1.m``, whose bits are ``(v << 22) + bits(0.5)``; ``v = 1`` is 0.5 and
  ``v = 0`` is 0 (``v * bits(0.5)``); the sign bit is ``(n & 8) << 28``.
* e4m3 / e5m2: ``convert`` to f32 (u8 storage is first bitcast to the fp8 type);
* bf16 / fp16: ``convert`` to f32 (u16 storage bitcast first), unless the operand goes
  into the dot unchanged (see below).

A present scale (u8 e8m0 exponents, [rows, K / f]) becomes the f32 ``2**(s - 127)`` as
bits: ``s << 23``, except ``s = 0`` (``2**-127``, the subnormal 0x00400000) and
``s = 255`` (NaN, 0x7FC00000); an e4m3 scale (nvfp4's, f8e4m3) is ``convert``ed to f32.
It is repeated over its group of ``f`` K values
(``expand_dims``, ``broadcast``, ``reshape``; transposed for B) and multiplies the
operand in f32, as the interpreter's reference does.

**The dot's element type** (``dot_type``) is the narrowest one that holds every scaled
operand value the f32 reference has, so the dot's products are the reference's:

* bf16 when neither operand is fp16 (nor a bf16 operand has an e4m3 scale). e2m1, e4m3
  and e5m2 values have at most 4 significant bits, an e8m0 scale is a power of two and an
  e4m3 scale has 4 significant bits (between 2**-9 and 448), bf16 has 8 and f32's
  exponent range, so the f32 value of a scaled operand converts exactly -- except where
  it is below 2**-126 (bf16's subnormals, out of reach of e4m3 scales): there bf16
  keeps fewer low bits than f32 and the conversion rounds to nearest even. Such operand
  values need a scale of at most 2**-118 (e4m3), 2**-111 (e5m2) or a bf16
  value that is itself that small; this is the upcast to bf16 that Triton documents for
  its software emulation of ``dot_scaled``, and it is the one place where the result can
  differ from the interpreter's. e2m1 values (quantum 0.5) stay exact for every scale.
* f16 when an operand is fp16, nothing is scaled and the other one is e2m1, e4m3, e5m2
  or fp16 (all of them exact in f16).
* f32 otherwise (a scaled fp16 operand: 11 significant bits fit neither bf16 nor the
  exponent range of f16; fp16 with bf16; a bf16 operand times an e4m3 scale: up to 12
  significant bits), with ``input_precision = "ieee"``, so no tensor-core rounding
  either.

An operand whose storage type already is the dot type and that has no scale goes in
unchanged (bf16 into a bf16 dot, f16 into an f16 dot).

Expects: canonical tile IR, before layout assignment; runs only where the target has no
lowering rule of its own for ``dot_scaled`` (``options.target.lowers``).
Guarantees: no ``dot_scaled`` is left; each one's result is a ``dot`` of the same f32
type with the original accumulator; ``fast_math`` and ``tiles_per_warp`` (hints that
allow shortcuts, not change results) are not used.
Refuses: a batched (rank-3) ``dot_scaled``, with ``TLXC-CODEGEN-001`` at its line.
"""

from __future__ import annotations

from ...errors import CompilationError
from ..builder import Builder
from ..core import Operation, Value
from ..ops import (
    AddOp,
    AndOp,
    BitcastOp,
    BroadcastOp,
    CmpOp,
    ConstantOp,
    ConvertOp,
    DotOp,
    ExpandDimsOp,
    JoinOp,
    MulOp,
    OrOp,
    ReshapeOp,
    SelectOp,
    ShlOp,
    ShrOp,
    TransOp,
)
from ..ops.amd import DotScaledOp
from ..types import DType, TileType, bfloat16, float8e4nv, float8e5, float16, float32, int1, int32, narrow
from .options import PassOptions

_HALF_BITS = 0x3F000000     # f32 0.5
_MIN_SCALE_BITS = 0x00400000  # f32 2**-127, e8m0's s = 0
_NAN_BITS = 0x7FC00000      # e8m0's s = 255
_STORED_AS = {"e4m3": float8e4nv, "e5m2": float8e5, "bf16": bfloat16, "fp16": float16}
_EXACT_IN_F16 = ("e2m1", "e4m3", "e5m2", "fp16")


def dot_type(fa: str, fb: str, a_scaled: bool, b_scaled: bool, a_float_scale: bool = False,
             b_float_scale: bool = False) -> DType:
    """The element type of the ``dot`` a ``dot_scaled`` becomes (module docstring);
    ``*_float_scale``: that operand's scale is an e4m3 value rather than a power of two."""
    bf16_widened = (fa == "bf16" and a_float_scale) or (fb == "bf16" and b_float_scale)
    if "fp16" not in (fa, fb) and not bf16_widened:
        return bfloat16
    if not (a_scaled or b_scaled) and fa in _EXACT_IN_F16 and fb in _EXACT_IN_F16:
        return float16
    return float32


class _Rewriter:
    """Builds the decomposition of one ``dot_scaled`` just before it."""

    def __init__(self, b: Builder) -> None:
        self.b = b

    def const(self, shape: tuple[int, ...], elem: DType, value: int | float) -> Value:
        return self.b.value(ConstantOp, [], TileType(shape, elem), value=value)

    def binary(self, cls: type[Operation], x: Value, y: Value) -> Value:
        return self.b.value(cls, [x, y], x.type)

    def binary_c(self, cls: type[Operation], x: Value, c: int) -> Value:
        t = narrow(x.type, TileType)
        elem = t.scalar
        assert isinstance(elem, DType)
        return self.binary(cls, x, self.const(t.shape, elem, c))

    def cmp_c(self, x: Value, predicate: str, c: int) -> Value:
        t = narrow(x.type, TileType)
        elem = t.scalar
        assert isinstance(elem, DType)
        return self.b.value(CmpOp, [x, self.const(t.shape, elem, c)], TileType(t.shape, int1), predicate=predicate)

    def select(self, cond: Value, x: Value, y: Value) -> Value:
        return self.b.value(SelectOp, [cond, x, y], x.type)

    def cast(self, cls: type[Operation], x: Value, elem: DType) -> Value:
        return self.b.value(cls, [x], TileType(narrow(x.type, TileType).shape, elem))

    def reshape(self, x: Value, shape: tuple[int, ...]) -> Value:
        return self.b.value(ReshapeOp, [x], TileType(shape, narrow(x.type, TileType).scalar))

    def trans(self, x: Value, order: tuple[int, ...]) -> Value:
        t = narrow(x.type, TileType)
        return self.b.value(TransOp, [x], TileType(tuple(t.shape[i] for i in order), t.scalar), order=order)

    # -- operands ------------------------------------------------------------------------------
    def e2m1(self, packed: Value, along_last: bool) -> Value:
        """f32 values of a u8 tile of nibble pairs, unpacked along its last axis or its
        first one."""
        rows, cols = narrow(packed.type, TileType).shape
        lo = self.binary_c(AndOp, packed, 0x0F)
        hi = self.binary_c(ShrOp, packed, 4)  # logical: the tile is unsigned
        pairs = self.b.value(JoinOp, [lo, hi], TileType((rows, cols, 2), narrow(packed.type, TileType).scalar))
        n = self.cast(ConvertOp, pairs, int32)
        v = self.binary_c(AndOp, n, 0x07)
        large = self.binary_c(AddOp, self.binary_c(ShlOp, v, 22), _HALF_BITS)
        small = self.binary_c(MulOp, v, _HALF_BITS)  # 0 -> 0.0, 1 -> 0.5
        magnitude = self.select(self.cmp_c(v, "lt", 2), small, large)
        sign = self.binary_c(ShlOp, self.binary_c(AndOp, n, 0x08), 28)
        values = self.cast(BitcastOp, self.binary(OrOp, magnitude, sign), float32)
        if along_last:
            return self.reshape(values, (rows, 2 * cols))
        return self.reshape(self.trans(values, (0, 2, 1)), (2 * rows, cols))

    def values(self, x: Value, fmt: str, along_last: bool) -> Value:
        """``x`` decoded to f32."""
        if fmt == "e2m1":
            return self.e2m1(x, along_last)
        elem = _STORED_AS[fmt]
        if narrow(x.type, TileType).scalar != elem:  # the bits in u8 / u16
            x = self.cast(BitcastOp, x, elem)
        return self.cast(ConvertOp, x, float32)

    def scale(self, s: Value, k: int) -> Value:
        """f32 ``2**(s - 127)`` of a u8 [rows, K / f] tile (or the f32 values of an e4m3
        one), repeated to [rows, K]."""
        rows, groups = narrow(s.type, TileType).shape
        if _float_scale(s):
            f = self.cast(ConvertOp, s, float32)
        else:
            e = self.cast(ConvertOp, s, int32)  # zero-extends: u8
            bits = self.binary_c(ShlOp, e, 23)
            bits = self.select(self.cmp_c(e, "eq", 0), self.const((rows, groups), int32, _MIN_SCALE_BITS), bits)
            bits = self.select(self.cmp_c(e, "eq", 255), self.const((rows, groups), int32, _NAN_BITS), bits)
            f = self.cast(BitcastOp, bits, float32)
        f = self.b.value(ExpandDimsOp, [f], TileType((rows, groups, 1), float32), axis=2)
        f = self.b.value(BroadcastOp, [f], TileType((rows, groups, k // groups), float32))
        return self.reshape(f, (rows, k))

    def operand(self, x: Value, fmt: str, along_last: bool, scale: Value | None, k: int, transposed: bool,
                to: DType) -> Value:
        """The operand as ``to`` values, scaled; ``transposed``: B, whose scale is [N, K / f]."""
        if scale is None and narrow(x.type, TileType).scalar == to:
            return x
        if scale is None and fmt in ("bf16", "fp16") and _STORED_AS[fmt] == to:
            return self.cast(BitcastOp, x, to)  # its bits in u16
        v = self.values(x, fmt, along_last)
        if scale is not None:
            s = self.scale(scale, k)
            if transposed:
                s = self.trans(s, (1, 0))
            v = self.binary(MulOp, v, s)
        return v if to == float32 else self.cast(ConvertOp, v, to)


def _float_scale(s: Value) -> bool:
    """Whether a scale tile holds e4m3 values (nvfp4) rather than e8m0 exponents (u8)."""
    return narrow(s.type, TileType).scalar == float8e4nv


def _decompose(op: DotScaledOp) -> None:
    a_t = narrow(op.a.type, TileType)
    if len(a_t.shape) != 2:
        raise CompilationError("TLXC-CODEGEN-001", f"a batched (rank-{len(a_t.shape)}) tl.dot_scaled cannot be "
                               "compiled for this target yet: it decomposes rank-2 scaled dots only", op.loc,
                               "loop over the batch and call tl.dot_scaled on rank-2 tiles")
    acc_t = narrow(op.acc.type, TileType)
    k = narrow(op.a.type, TileType).shape[-1] * (2 if op.a_format == "e2m1" and op.lhs_k_pack else 1)
    to = dot_type(op.a_format, op.b_format, op.a_scale is not None, op.b_scale is not None,
                  op.a_scale is not None and _float_scale(op.a_scale),
                  op.b_scale is not None and _float_scale(op.b_scale))
    with Builder(None, op.loc).before(op) as b:
        r = _Rewriter(b)
        a = r.operand(op.a, op.a_format, op.lhs_k_pack, op.a_scale, k, False, to)
        # B is [K, N]: e2m1 packed along K packs its first axis, along N its last one
        y = r.operand(op.b, op.b_format, not op.rhs_k_pack, op.b_scale, k, True, to)
        dot = b.value(DotOp, [a, y, op.acc], acc_t, input_precision="ieee")
    op.result.replace_all_uses_with(dot)
    op.erase()


def run(module: Operation, options: PassOptions) -> Operation:
    if options.target.lowers(DotScaledOp):
        return module
    for func in module.funcs:
        for op in list(func.walk()):
            if isinstance(op, DotScaledOp):
                _decompose(op)
    return module
