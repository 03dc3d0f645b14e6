"""Semantic rules of TLX's register layouts and explicit MFMA scheduling: ``tlx.zeros``,
``require_layout`` / ``release_layout`` / ``require_amd_wmma_layout``,
``extract_slice``, ``rematerialized_range``, ``amd_sched_barrier``,
``amd_register_resident``, ``amd_register_class_anchor`` (TLX also calls it
``amd_register_handoff``), ``amd_scheduled_mfma`` and ``amd_mfma_commit``.

What is checked here is what the call alone decides: types, shapes, ranks, constant
arguments, and, where an operand's register layout was pinned by the user
(``require_layout``, ``zeros(layout=)``, through the ops that keep a layout), that the
MFMA operands' layouts fit together. The frontend does not know the target: rules that
depend on it (AMD operations on an NVIDIA target, AGPR accumulators on CDNA3, NVIDIA-only
operations on AMD) and those that need the final layout (register groups that divide the
per-thread elements, extract_slice alignment) are checked at the start of code
generation, still at the user's line (``tlxc.codegen.target_ops``).
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.core import OpResult, Value
from ...ir.types import DType, TileType, int32
from ...tlx.amd import amd_mfma_layout, amd_wmma_layout, dot_operand_layout
from ..values import Tensor, describe, unwrap
from .arith import cast
from .base import Ctx, check_shape, const_shape, const_value, dtype_arg, fail, rule, shaped, to_tensor
from .shape import as_tile, full

AMD = "TLXC-TLX-007"
LAYOUT_CLASSES = (amd_mfma_layout, dot_operand_layout, amd_wmma_layout)


def layout_attr(enc: Any) -> dict[str, Any]:
    """The IR attribute (a plain dict, see ``tlxc.ir.ops.amd``) of a TLX layout object."""
    enc = unwrap(enc)
    if isinstance(enc, amd_mfma_layout):
        return {"kind": "amd_mfma", "version": enc.version, "instr_shape": enc.instr_shape,
                "transposed": enc.transposed, "warps_per_cta": enc.warps_per_cta,
                "element_bitwidth": enc.element_bitwidth, "tiles_per_warp": enc.tiles_per_warp}
    if isinstance(enc, dot_operand_layout):
        return {"kind": "amd_dot_operand", "operand_index": enc.operand_index, "parent": layout_attr(enc.parent),
                "k_width": enc.k_width}
    if isinstance(enc, amd_wmma_layout):
        return {"kind": "amd_wmma", "version": enc.version, "transposed": enc.transposed,
                "warp_bases": enc.warp_bases, "reg_bases": enc.reg_bases, "instr_shape": enc.instr_shape}
    fail(AMD, f"expected a register layout (tlx.amd_mfma_layout, tlx.dot_operand_layout or tlx.amd_wmma_layout), "
              f"got {describe(enc)}")
    raise AssertionError


def _check_fits(layout: dict[str, Any], shape: tuple[int, ...], what: str) -> None:
    """A layout's rank must be the tile's; an MFMA layout's warps must tile its rank."""
    base = layout["parent"] if layout["kind"] == "amd_dot_operand" else layout
    rank = len(base["warps_per_cta"]) if base["kind"] == "amd_mfma" else 2
    if len(shape) != rank:
        fail(AMD, f"{what}: the layout is for rank-{rank} tiles, the tile has shape {list(shape)}")


# Ops whose result keeps its (first) operand's register layout.
_KEEPS_LAYOUT = (ops.ExtractSliceOp, ops.AmdRegisterResidentOp, ops.AmdRegisterClassAnchorOp)


def pinned_layout(v: Value) -> dict[str, Any] | None:
    """The register layout the user chose for ``v``, when its producers say so."""
    for _ in range(64):
        if not isinstance(v, OpResult):
            return None
        op = v.op
        if isinstance(op, (ops.ZerosOp, ops.RequireLayoutOp)):
            return op.attrs["layout"]
        if isinstance(op, _KEEPS_LAYOUT):
            v = op.operands[0]
        elif isinstance(op, ops.AmdScheduledMfmaOp):
            v = op.operands[2]
        elif isinstance(op, ops.AmdMfmaCommitOp):
            v = op.operands[v.index]
        else:
            return None
    return None


# -- layouts ---------------------------------------------------------------------------------
@rule("tlx.zeros")
def zeros(ctx: Ctx, shape: Any, dtype: Any, layout: Any = None) -> Tensor:
    if unwrap(layout) is None:
        return full(ctx, shape, 0, dtype)
    dims = const_shape(shape)
    dt = dtype_arg(dtype)
    attr = layout_attr(layout)
    _check_fits(attr, dims, "tlx.zeros")
    return Tensor(ctx.b.value(ops.ZerosOp, [], shaped(dt, dims), layout=attr))


def _bool(v: Any, what: str) -> bool:
    return bool(const_value(v, what, (bool,)))


@rule("tlx.require_layout")
def require_layout(ctx: Ctx, x: Any, layout: Any, pin: Any = True, late_address_compute: Any = False) -> Tensor:
    t = as_tile(x, "tlx.require_layout")
    attr = layout_attr(layout)
    _check_fits(attr, t.shape, "tlx.require_layout")
    return Tensor(ctx.b.value(ops.RequireLayoutOp, [t.handle], t.type, layout=attr, pin=_bool(pin, "pin"),
                              late_address_compute=_bool(late_address_compute, "late_address_compute")))


@rule("tlx.release_layout")
def release_layout(ctx: Ctx, x: Any) -> Tensor:
    t = as_tile(x, "tlx.release_layout")
    return Tensor(ctx.b.value(ops.ReleaseLayoutOp, [t.handle], t.type))


@rule("tlx.require_amd_wmma_layout")
def require_amd_wmma_layout(ctx: Ctx, src: Any, version: Any = 3, transposed: Any = True,
                            warp_bases: Any = ((0, 2), (2, 0)), reg_bases: Any = ((0, 1), (1, 0)),
                            instr_shape: Any = (16, 16, 128)) -> Tensor:
    try:
        enc = amd_wmma_layout(unwrap(version), unwrap(transposed), unwrap(warp_bases), unwrap(reg_bases),
                              unwrap(instr_shape))
    except ValueError as e:
        fail(AMD, str(e))
    return require_layout(ctx, src, enc, True)


# -- register fragments and coordinates ------------------------------------------------------
@rule("tlx.extract_slice")
def extract_slice(ctx: Ctx, source: Any, shape: Any, offsets: Any) -> Tensor:
    t = as_tile(source, "tlx.extract_slice")
    dims = const_shape(shape, "extract_slice shape")
    offs = unwrap(offsets)
    offs = tuple(const_value(o, "extract_slice offset") for o in (offs if isinstance(offs, (list, tuple)) else [offs]))
    rank = len(t.shape)
    if len(dims) != rank or len(offs) != rank:
        fail(AMD, f"tlx.extract_slice(x, shape, offsets) needs a shape and offsets of x's rank {rank}, got "
                  f"{list(dims)} and {list(offs)}")
    for d, (o, n, whole) in enumerate(zip(offs, dims, t.shape)):
        if o < 0 or o + n > whole:
            fail(AMD, f"tlx.extract_slice: [{o}, {o + n}) of dimension {d} is outside the source's {whole}")
    if dims == t.shape:
        return t
    return Tensor(ctx.b.value(ops.ExtractSliceOp, [t.handle], TileType(dims, t.dtype), offsets=offs))


@rule("tlx.rematerialized_range")
def rematerialized_range(ctx: Ctx, start: Any, end: Any, identity: Any, placement: Any = None) -> Tensor:
    lo, hi = const_value(start, "start"), const_value(end, "end")
    ident = const_value(identity, "identity")
    if hi <= lo:
        fail("TLXC-SHAPE-002", f"rematerialized_range({lo}, {hi}) is empty")
    n = hi - lo
    if n & (n - 1):
        fail("TLXC-SHAPE-002", f"rematerialized_range length {n} is not a power of two")
    check_shape((n,))
    place = None
    if unwrap(placement) is not None:
        p = to_tensor(ctx, placement, int32)
        if p.shape or not isinstance(p.dtype, DType) or not p.dtype.is_int():
            fail("TLXC-TYPE-001", f"placement must be an integer scalar, got {describe(p)}")
        place = (cast(ctx, p, int32) if p.dtype != int32 else p).handle
    return Tensor(ctx.b.value(ops.RematerializedRangeOp, [], TileType((n,), int32), optional={"placement": place},
                              start=lo, end=hi, identity=ident))


# -- scheduling and register classes ---------------------------------------------------------
@rule("tlx.amd_sched_barrier")
def amd_sched_barrier(ctx: Ctx, mask: Any = 0) -> None:
    m = const_value(mask, "mask")
    if not 0 <= m <= 0xFFF:
        fail(AMD, f"amd_sched_barrier mask must use only the scheduling-class bits 0..11, got {m:#x}",
             "0 blocks every class; see llvm.amdgcn.sched.barrier for the bits")
    ctx.b.create(ops.AmdSchedBarrierOp, [], [], {"mask": m})


def _register_value(v: Any, what: str) -> Tensor:
    t = as_tile(v, what)
    d = t.dtype
    if not isinstance(d, DType) or d.is_bool() or d.bits not in (16, 32):
        fail(AMD, f"{what} takes tiles of 16- or 32-bit integers or floats, got {describe(t)}")
    return t


def _register_class(v: Any, what: str) -> str:
    c = const_value(v, f"{what}'s register_class", (str,))
    if c not in ops.amd.REGISTER_CLASSES:
        fail(AMD, f'{what}: register_class must be "agpr" or "vgpr", got {c!r}')
    return c


@rule("tlx.amd_register_resident")
def amd_register_resident(ctx: Ctx, value: Any, register_class: Any = "agpr",
                          registers_per_group: Any = 1) -> Tensor:
    t = _register_value(value, "tlx.amd_register_resident")
    cls = _register_class(register_class, "tlx.amd_register_resident")
    group = const_value(registers_per_group, "registers_per_group")
    if group not in ops.amd.REGISTERS_PER_GROUP:
        fail(AMD, f"registers_per_group must be one of 1, 2, 4, 8, 16 or 32 (consecutive 32-bit registers per "
                  f"group), got {group}")
    per_group = group * 32 // t.dtype.bits  # type: ignore[union-attr]
    if t.numel % per_group:
        fail(AMD, f"a tile of {t.numel} elements does not split into groups of {per_group} "
                  f"{t.dtype!r} values ({group} registers)")
    return Tensor(ctx.b.value(ops.AmdRegisterResidentOp, [t.handle], t.type, register_class=cls,
                              registers_per_group=group))


@rule("tlx.amd_register_class_anchor", "tlx.amd_register_handoff")
def amd_register_class_anchor(ctx: Ctx, value: Any, register_class: Any = "vgpr") -> Tensor:
    t = _register_value(value, "tlx.amd_register_class_anchor")
    cls = _register_class(register_class, "tlx.amd_register_class_anchor")
    return Tensor(ctx.b.value(ops.AmdRegisterClassAnchorOp, [t.handle], t.type, register_class=cls))


# -- explicit MFMA ---------------------------------------------------------------------------
_RESIDENT = {None: "none", 0: "lhs", 1: "rhs"}


def _mfma_layouts(a: Tensor, b: Tensor, acc: Tensor) -> None:
    """Operands whose layouts the user pinned must be the dot operands of the
    accumulator's MFMA layout, with k_width 4 or 8."""
    la, lb, lc = (pinned_layout(v.handle) for v in (a, b, acc))
    if lc is not None and lc["kind"] != "amd_mfma":
        fail(AMD, f"amd_scheduled_mfma's acc must be in an MFMA layout (tlx.amd_mfma_layout), it is pinned to a "
                  f"{lc['kind']} layout")
    for lay, index, name in ((la, 0, "a"), (lb, 1, "b")):
        if lay is None:
            continue
        if lay["kind"] != "amd_dot_operand" or lay["operand_index"] != index:
            fail(AMD, f"amd_scheduled_mfma's {name} must be in the dot-operand layout "
                      f"tlx.dot_operand_layout({index}, mma, k_width=...), it is pinned to {_show(lay)}")
        if lay["k_width"] not in (4, 8):
            fail(AMD, f"amd_scheduled_mfma's {name} has k_width={lay['k_width']}; native MFMA operands take 4 or 8")
        if lc is not None and lay["parent"] != lc:
            fail(AMD, f"amd_scheduled_mfma's {name} is a dot operand of another MFMA layout than acc's: "
                      f"{_show(lay['parent'])} vs {_show(lc)}")
        if lay["parent"]["kind"] != "amd_mfma":
            fail(AMD, f"amd_scheduled_mfma's {name} is a dot operand of a WMMA layout; it needs an MFMA one")


def _show(layout: dict[str, Any]) -> str:
    fields = ", ".join(f"{k}={list(v) if isinstance(v, tuple) else v}" for k, v in layout.items()
                       if k not in ("kind", "parent"))
    return f"{layout['kind']}({fields})"


@rule("tlx.amd_scheduled_mfma")
def amd_scheduled_mfma(ctx: Ctx, a: Any, b: Any, acc: Any, accumulator_role: Any, resident_operand: Any = None,
                       accumulator_register_class: Any = None, initialize: Any = False) -> Tensor:
    ta, tb, tc = (as_tile(v, f"amd_scheduled_mfma's {n}") for v, n in ((a, "a"), (b, "b"), (acc, "acc")))
    role = const_value(accumulator_role, "accumulator_role", (str,))
    if role not in ops.amd.ACCUMULATOR_ROLES:
        fail(AMD, f'accumulator_role must be "transient" or "persistent", got {role!r}')
    resident = unwrap(resident_operand)
    if resident is not None:
        resident = const_value(resident, "resident_operand")
    if resident not in _RESIDENT:
        fail(AMD, f"resident_operand must be None, 0 (a) or 1 (b), got {resident!r}")
    acc_class = unwrap(accumulator_register_class)
    if acc_class is not None:
        acc_class = _register_class(acc_class, "amd_scheduled_mfma's accumulator")
    init = _bool(initialize, "initialize")
    rank = len(ta.shape)
    if rank not in (2, 3) or len(tb.shape) != rank or len(tc.shape) != rank:
        fail(AMD, f"amd_scheduled_mfma needs a, b and acc of one rank, 2 (or 3 with a batch), got shapes "
                  f"{list(ta.shape)}, {list(tb.shape)} and {list(tc.shape)}")
    if ta.dtype != tb.dtype or ta.dtype.ir_name not in ("bf16", "f16"):
        fail(AMD, f"amd_scheduled_mfma needs a and b both bf16 or both fp16, got {ta.dtype!r} and {tb.dtype!r}",
             "convert the operands with .to(tl.bfloat16) or .to(tl.float16)")
    if tc.dtype.ir_name != "f32":
        fail(AMD, f"amd_scheduled_mfma accumulates in fp32; acc is {tc.dtype!r}")
    if ta.shape[:-2] != tb.shape[:-2] or ta.shape[:-2] != tc.shape[:-2]:
        fail(AMD, f"amd_scheduled_mfma batch dimensions differ: {list(ta.shape)}, {list(tb.shape)}, "
                  f"{list(tc.shape)}")
    m, k, n = ta.shape[-2], ta.shape[-1], tb.shape[-1]
    if tb.shape[-2] != k or tc.shape[-2:] != (m, n):
        fail(AMD, f"amd_scheduled_mfma shapes do not multiply: a {list(ta.shape)} x b {list(tb.shape)} into acc "
                  f"{list(tc.shape)}", "a is [M, K], b is [K, N] and acc is [M, N]")
    _mfma_layouts(ta, tb, tc)
    return Tensor(ctx.b.value(ops.AmdScheduledMfmaOp, [ta.handle, tb.handle, tc.handle], tc.type,
                              accumulator_role=role, resident_operand=_RESIDENT[resident],
                              accumulator_register_class=acc_class or "auto", initialize=init))


def _check_chain(v: Value, preserve: bool) -> None:
    """Each scheduled-MFMA chain reaches its commit unforked: no chain value has a use
    besides the next link (the runtime-loop form, a loop result or block argument,
    ends the walk: its uses are the loop's business). A persistent (AGPR) result cannot
    be committed directly with ``preserve``, which moves the results to VGPRs."""
    head = v
    while isinstance(v, OpResult) and isinstance(v.op, ops.AmdScheduledMfmaOp):
        op = v.op
        if len(v.uses) > (0 if v is head else 1):
            fail(AMD, "an amd_scheduled_mfma result is used elsewhere before its chain reaches amd_mfma_commit; "
                      "each accumulator chain must reach the commit without a fork",
                 "use the values that amd_mfma_commit returns instead of the uncommitted accumulator")
        if v is head and preserve and op.attrs["accumulator_role"] == "persistent" \
                and op.attrs["accumulator_register_class"] != "vgpr":
            fail(AMD, "amd_mfma_commit with preserve cannot take a persistent (AGPR) amd_scheduled_mfma result "
                      "directly", 'give that amd_scheduled_mfma accumulator_register_class="vgpr", or commit '
                      "without preserve")
        if op.attrs["initialize"]:
            break
        v = op.operands[2]


@rule("tlx.amd_mfma_commit")
def amd_mfma_commit(ctx: Ctx, value: Any, preserve: Any = None) -> Any:
    v = unwrap(value)
    single = isinstance(v, Tensor)
    values = (v,) if single else v
    if not isinstance(values, (tuple, list)) or not values:
        fail(AMD, f"amd_mfma_commit takes an MFMA result or a non-empty tuple of them, got {describe(v)}")
    tiles = [as_tile(x, "amd_mfma_commit's value") for x in values]
    for t in tiles:
        if t.dtype.ir_name != "f32":
            fail(AMD, f"amd_mfma_commit commits fp32 MFMA results, got {describe(t)}")
    keep = unwrap(preserve)
    for t in tiles:
        _check_chain(t.handle, keep is not None)
    handles = [t.handle for t in tiles]
    if keep is not None:
        p = as_tile(keep, "amd_mfma_commit's preserve")
        if p.dtype.ir_name not in ("bf16", "f16"):
            fail(AMD, f"amd_mfma_commit's preserve is a bf16 or fp16 dot operand, got {describe(p)}")
        handles.append(p.handle)
    op = ctx.b.create(ops.AmdMfmaCommitOp, handles, [h.type for h in handles], {"preserve": keep is not None})
    out = [Tensor(r) for r in op.results]
    if keep is None:
        return out[0] if single else tuple(out)
    return (out[0], out[1]) if single else tuple(out)
