"""Semantic rules of ``tl.dot_scaled`` (Triton's microscaled matrix product) and
``tlx.dot_scaled`` (the same, with TLX's per-warp WMMA tiling hint ``tiles_per_warp``).

``dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc)`` is
``(lhs * lhs_scale) @ (rhs * rhs_scale) + acc`` in fp32, each scale an e8m0 exponent
(u8) or an e4m3 value (``float8e4nv``: NVIDIA's nvfp4 scales, Triton's tutorial 10)
shared by ``K / scale.shape[-1]`` (16 or 32) consecutive K values. Formats: e2m1
(two values per u8, the first in the low nibble, packed along K or, without ``*_k_pack``,
along M / N), e4m3 and e5m2 (fp8 or their u8 bits), bf16 and fp16 (or their u16 bits).
Operands given as bits are bitcast here, so the IR op sees fp8/bf16/fp16 tiles (e2m1
stays u8: there is no fp4 type).
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.ops.amd import SCALED_FORMATS, scaled_dims
from ...ir.types import TileType, bfloat16, float8e4nv, float8e5, float16, float32
from ..values import Tensor, describe, unwrap
from .base import Ctx, const_value, dtype_arg, fail, rule
from .shape import as_tile, full

SHAPE, TYPE = "TLXC-DOT-001", "TLXC-DOT-002"
_FLOAT_OF = {"e4m3": float8e4nv, "e5m2": float8e5, "bf16": bfloat16, "fp16": float16}


def _operand(ctx: Ctx, v: Any, fmt: str, what: str) -> Tensor:
    t = as_tile(v, f"dot_scaled's {what}")
    if fmt == "e2m1":
        if t.dtype.ir_name != "u8":
            fail(TYPE, f"dot_scaled's {what} in e2m1 holds two values per byte as uint8, got {describe(t)}")
        return t
    want = _FLOAT_OF[fmt]
    if t.dtype == want:
        return t
    bits = "u8" if want.bits == 8 else "u16"
    if t.dtype.ir_name != bits:
        fail(TYPE, f"dot_scaled's {what} in {fmt} must be {want!r} or its bits as {bits}, got {describe(t)}")
    return Tensor(ctx.b.value(ops.BitcastOp, [t.handle], TileType(t.shape, want)))


def _format(v: Any, what: str) -> str:
    f = const_value(v, what, (str,))
    if f not in SCALED_FORMATS:
        fail(TYPE, f"{what} must be one of {', '.join(SCALED_FORMATS)}, got {f!r}")
    return f


def _scale(v: Any, rank: int, rows: int, k: int, what: str) -> Tensor | None:
    v = unwrap(v)
    if v is None:
        return None
    t = as_tile(v, f"dot_scaled's {what}")
    if t.dtype.ir_name not in ("u8", "i8") and t.dtype != float8e4nv:
        fail(TYPE, f"dot_scaled's {what} holds e8m0 exponents as uint8 or e4m3 values as float8e4nv, got "
                   f"{describe(t)}")
    if len(t.shape) != rank or t.shape[-2] != rows or k % t.shape[-1] or k // t.shape[-1] not in (16, 32):
        fail(SHAPE, f"dot_scaled's {what} must have shape [..., {rows}, K / 32] (or K / 16) with K = {k}, got "
                    f"{list(t.shape)}")
    return t


def build(ctx: Ctx, lhs: Any, lhs_scale: Any, lhs_format: Any, rhs: Any, rhs_scale: Any, rhs_format: Any,
          acc: Any, fast_math: Any, lhs_k_pack: Any, rhs_k_pack: Any, out_dtype: Any,
          tiles_per_warp: tuple[int, ...] | None = None) -> Tensor:
    fa, fb = _format(lhs_format, "lhs_format"), _format(rhs_format, "rhs_format")
    a, b = _operand(ctx, lhs, fa, "lhs"), _operand(ctx, rhs, fb, "rhs")
    a_pack = bool(const_value(lhs_k_pack, "lhs_k_pack", (bool,)))
    b_pack = bool(const_value(rhs_k_pack, "rhs_k_pack", (bool,)))
    for pack, f, what in ((a_pack, fa, "lhs"), (b_pack, fb, "rhs")):
        if not pack and f != "e2m1":
            fail(TYPE, f"{what}_k_pack=False packs e2m1 values along M or N; {what} is {f}")
    if dtype_arg(out_dtype, "out_dtype") != float32:
        fail(TYPE, f"dot_scaled accumulates in float32 only, got out_dtype={describe(unwrap(out_dtype))}")
    rank = len(a.shape)
    if rank not in (2, 3) or len(b.shape) != rank:
        fail(SHAPE, f"dot_scaled needs two tiles of rank 2 (or 3 with a batch), got shapes {list(a.shape)} and "
                    f"{list(b.shape)}")
    if a.shape[:-2] != b.shape[:-2]:
        fail(SHAPE, f"dot_scaled batch dimensions differ: {list(a.shape)} and {list(b.shape)}")
    m, k, n = scaled_dims(a.shape, b.shape, fa, fb, a_pack, b_pack)
    if k is None:
        fail(SHAPE, f"dot_scaled operands hold different numbers of K values: lhs {list(a.shape)} ({fa}) and rhs "
                    f"{list(b.shape)} ({fb})", "e2m1 packs two values per byte along K (unless *_k_pack=False)")
    sa = _scale(lhs_scale, rank, m, k, "lhs_scale")
    sb = _scale(rhs_scale, rank, n, k, "rhs_scale")
    if sa is not None and sb is not None and sa.shape[-1] != sb.shape[-1]:
        fail(SHAPE, f"lhs_scale and rhs_scale group K differently: {list(sa.shape)} and {list(sb.shape)}")
    shape = a.shape[:-2] + (m, n)
    c = unwrap(acc)
    if c is None:
        c = full(ctx, shape, 0, float32)
    else:
        c = as_tile(c, "dot_scaled's acc")
        if c.shape != shape or c.dtype != float32:
            fail(SHAPE, f"dot_scaled's acc must be a float32 tile of shape {list(shape)}, got {describe(c)}")
    fast = bool(const_value(fast_math, "fast_math", (bool,)))
    scales = {"a_scale": sa.handle if sa else None, "b_scale": sb.handle if sb else None}
    return Tensor(ctx.b.value(ops.DotScaledOp, [a.handle, b.handle, c.handle], c.type, optional=scales,
                              a_format=fa, b_format=fb, fast_math=fast, lhs_k_pack=a_pack, rhs_k_pack=b_pack,
                              tiles_per_warp=tiles_per_warp))


@rule("dot_scaled")
def dot_scaled(ctx: Ctx, lhs: Any, lhs_scale: Any, lhs_format: Any, rhs: Any, rhs_scale: Any, rhs_format: Any,
               acc: Any = None, fast_math: Any = False, lhs_k_pack: Any = True, rhs_k_pack: Any = True,
               out_dtype: Any = float32) -> Tensor:
    return build(ctx, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math, lhs_k_pack,
                 rhs_k_pack, out_dtype)


# The M / N extent of one scaled-WMMA instruction tile: the lower bound of the layout
# period instr * warps * tiles_per_warp (with one warp along the dim); the code generator
# checks the full period once it has chosen the warps (tlxc.codegen.target_ops).
_WMMA_TILE = 16


@rule("tlx.dot_scaled")
def tlx_dot_scaled(ctx: Ctx, lhs: Any, lhs_scale: Any, lhs_format: Any, rhs: Any, rhs_scale: Any,
                   rhs_format: Any, acc: Any = None, fast_math: Any = False, lhs_k_pack: Any = True,
                   rhs_k_pack: Any = True, out_dtype: Any = float32, tiles_per_warp: Any = None) -> Tensor:
    tpw = unwrap(tiles_per_warp)
    tiles = None
    if tpw is not None:
        if not isinstance(tpw, (list, tuple)):
            fail(SHAPE, f"tiles_per_warp must be a list of integers, got {describe(tpw)}")
        tiles = tuple(const_value(t, "tiles_per_warp entry") for t in tpw)
    out = build(ctx, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math, lhs_k_pack,
                rhs_k_pack, out_dtype, tiles)
    if tiles is not None:
        shape = out.shape
        if len(tiles) != len(shape):
            fail(SHAPE, f"tiles_per_warp needs {len(shape)} entries (one per result dim), got {list(tiles)}")
        if any(t <= 0 for t in tiles):
            fail(SHAPE, f"tiles_per_warp entries must be positive, got {list(tiles)}")
        for d, (t, extent) in enumerate(zip(tiles[-2:], shape[-2:])):
            if _WMMA_TILE * t > extent:
                fail(SHAPE, f"tiles_per_warp={list(tiles)}: {t} WMMA tiles of {_WMMA_TILE} along result dim "
                            f"{len(shape) - 2 + d} span {_WMMA_TILE * t}, more than the result's {extent}",
                     "the layout period instr_shape * warps_per_cta * tiles_per_warp must fit in the result tile")
    return out


__all__ = ["dot_scaled", "tlx_dot_scaled", "build"]
