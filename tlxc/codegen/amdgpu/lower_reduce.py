"""Reductions along one axis (``reduce``): first over the registers a lane holds, then
across the lanes of a wave with butterfly steps (``cross_lane.xor_lanes``: DPP,
``ds_swizzle``, ``ds_bpermute``), then across waves through the LDS scratch area with
two barriers -- each step only over the layout bits that move along the reduced axis, so
a reduction whose axis lives in one wave's lanes and registers needs no LDS and no
barrier.

Semantics are the interpreter's (``tlxc/interpreter/rules/reduce.py``):

* ``sum`` adds in its element type (the frontend chose it: ``tl.sum`` of bf16 is an f32
  reduce, of f16 an f16 one, as in Triton): 16-bit floats are held in f32 and rounded
  back after every add, which is the f16/bf16 add exactly (f32 has more than twice
  their significand bits plus two); integer sums wrap in the element type; ``i1`` sums
  are XOR (they wrap modulo 2).
* float ``max``/``min`` propagate NaN (``llvm.maximum`` / ``llvm.minimum``, like
  ``np.max``); on ``i1`` they are OR / AND.
* ``argmax``/``argmin`` give the smallest index among the extreme elements, a NaN
  counting as the extreme (``np.argmax``): ``b`` replaces ``a`` when it is strictly better
  (NaN beats a number) or equally good with a smaller index.

A lane or wave bit whose step along the axis is already spanned by the bits reduced
before it (the layout holds those elements twice) is skipped: the partner holds the same
partial result. fp8 elements are refused like on NVIDIA (their arithmetic goes through
conversions the arithmetic lowering owns).
"""

from __future__ import annotations

from typing import Union

import llvmlite.ir as ir

from ...errors import CompilationError, InternalCompilerError
from ...ir import ops
from ...ir.core import Operation
from ...ir.layout import gf2
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from . import cross_lane
from .emitter import Emitter, lowers, register_coords
from .llvm import F32, I1, I32, I64, BFloatType, value_type

Val = Union[ir.Value, tuple[ir.Value, ir.Value]]  # a value, or (value, index) for arg reductions


# -- combining two partial results ----------------------------------------------------------------
def _is_float(t: DType) -> bool:
    return t.kind == Kind.FLOAT


def _wide(t: DType) -> bool:
    """16-bit floats are held in f32 while reducing (exact for max/min; a sum rounds back
    after every add)."""
    return _is_float(t) and t.bits == 16


def combine(e: Emitter, kind: str, t: DType, a: ir.Value, b: ir.Value) -> ir.Value:
    """``a <kind> b`` for ``sum``/``max``/``min``/``xor_sum`` (values as held while
    reducing: 16-bit floats widened to f32)."""
    if _is_float(t):
        if kind == "sum":
            s = e.b.fadd(a, b)
            return _widen(e, t, _narrow(e, t, s)) if _wide(t) else s
        base = "llvm.maximum" if kind == "max" else "llvm.minimum"
        return e.call_overloaded(base, a.type, [a, b], a.type)
    if t.kind == Kind.BOOL:
        return {"sum": e.b.xor, "xor_sum": e.b.xor, "max": e.b.or_, "min": e.b.and_}[kind](a, b)
    if kind == "sum":
        return e.b.add(a, b)
    if kind == "xor_sum":
        return e.b.xor(a, b)
    cmp = e.b.icmp_signed if t.kind == Kind.INT else e.b.icmp_unsigned
    return e.b.select(cmp(">" if kind == "max" else "<", a, b), a, b)


def arg_combine(e: Emitter, kind: str, t: DType, a: tuple[ir.Value, ir.Value],
                b: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
    """(value, index) pairs: ``b`` if it is strictly better, or as good with a smaller
    index; NaN is better than any number."""
    (va, ia), (vb, ib) = a, b
    op = ">" if kind == "argmax" else "<"
    if _is_float(t):
        a_nan = e.b.fcmp_unordered("uno", va, va)
        b_nan = e.b.fcmp_unordered("uno", vb, vb)
        better = e.b.or_(e.b.fcmp_ordered(op, vb, va), e.b.and_(b_nan, e.b.not_(a_nan)))
        equal = e.b.or_(e.b.fcmp_ordered("==", vb, va), e.b.and_(b_nan, a_nan))
    else:
        cmp = e.b.icmp_signed if t.kind == Kind.INT else e.b.icmp_unsigned
        better = cmp(op, vb, va)
        equal = e.b.icmp_unsigned("==", vb, va)
    take = e.b.or_(better, e.b.and_(equal, e.b.icmp_signed("<", ib, ia)))
    return e.b.select(take, vb, va), e.b.select(take, ib, ia)


def _merge(e: Emitter, kind: str, t: DType, a: Val, b: Val) -> Val:
    if kind.startswith("arg"):
        return arg_combine(e, kind, t, a, b)  # type: ignore[arg-type]
    return combine(e, kind, t, a, b)  # type: ignore[arg-type]


def _map(val: Val, fn) -> Val:
    if isinstance(val, tuple):
        return tuple(fn(x) for x in val)  # type: ignore[return-value]
    return fn(val)


# -- the lowering -----------------------------------------------------------------------------------
@lowers(ops.ReduceOp)
def reduce(e: Emitter, op: Operation) -> None:
    src = e.get(op.x)
    layout: LinearLayout = src.layout  # type: ignore[assignment]
    axis, kind = op.axis, op.kind
    t: DType = op.x.type.scalar  # type: ignore[assignment]
    is_arg = kind.startswith("arg")
    if _is_float(t) and t.bits == 8:
        raise CompilationError("TLXC-CODEGEN-001", f"reducing {t!r} cannot be compiled for {e.target.arch} yet",
                               op.loc, "convert the tile to float32 (x.to(tl.float32)) before reducing it")
    ax = layout.out_dims.index(f"dim{axis}")
    for d in ("lane", "warp"):
        for basis in layout.in_bases(d):
            if basis[ax] and any(x for i, x in enumerate(basis) if i != ax):
                raise CompilationError("TLXC-CODEGEN-001", "reduction over a layout that mixes the reduced axis "
                                       f"with other dims in one {d} bit cannot be compiled for {e.target.arch} yet",
                                       op.loc)

    # The steps along the axis that registers already cover; a lane or wave bit whose step
    # is in their span (with the bits before it) holds what its partner holds.
    spanned = gf2.Echelon(b[ax] for b in layout.in_bases("register") if b[ax])

    # 1. registers of this lane, grouped by their coordinate without the axis
    axis_thread = e.thread_coords(layout, axis) if is_arg else 0
    groups: dict[tuple[int, ...], Val] = {}
    seen: set[tuple[int, ...]] = set()
    for r, x in enumerate(src.vals):
        c = register_coords(layout, r)
        if c in seen:
            continue
        seen.add(c)
        key = c[:ax] + c[ax + 1:]
        x = _widen(e, t, x)
        val: Val = (x, _index(e, c[ax], axis_thread)) if is_arg else x
        groups[key] = _merge(e, kind, t, groups[key], val) if key in groups else val

    # 2. lanes whose bit moves along the axis: butterfly steps
    for bit, basis in enumerate(layout.in_bases("lane")):
        if not basis[ax] or not spanned.add(basis[ax]):
            continue
        for key, val in groups.items():
            other = _map(val, lambda x, m=1 << bit: cross_lane.xor_lanes(e, x, m))
            groups[key] = _merge(e, kind, t, val, other)

    # 3. waves whose bit moves along the axis: through LDS
    warp_bits = [bit for bit, basis in enumerate(layout.in_bases("warp")) if basis[ax] and spanned.add(basis[ax])]
    if warp_bits:
        _across_waves(e, layout, ax, kind, t, groups, warp_bits)

    # 4. the result, in the slice layout the layouts pass assigned
    def finish(val: Val) -> ir.Value:
        if is_arg:
            return val[1]  # type: ignore[index]
        return _narrow(e, t, val)  # type: ignore[arg-type]

    if not op.result.type.shape:
        (val,) = groups.values()
        e.set(op.result, [cross_lane.uniform(e, finish(val))])
        return
    dst: LinearLayout = op.result.type.layout
    done: dict[tuple[int, ...], ir.Value] = {}
    out = []
    for r in range(dst.in_dim_size("register")):
        key = register_coords(dst, r)
        if key not in groups:
            raise InternalCompilerError("amdgpu", f"reduce: the result layout is not the slice of the operand's "
                                                  f"(register {r} at {key})", op.loc)
        if key not in done:
            done[key] = finish(groups[key])
        out.append(done[key])
    e.set(op.result, out)


def _widen(e: Emitter, t: DType, x: ir.Value) -> ir.Value:
    return e.b.fpext(x, F32) if _wide(t) else x


def _narrow(e: Emitter, t: DType, x: ir.Value) -> ir.Value:
    return e.b.fptrunc(x, value_type(t)) if _wide(t) else x


def _index(e: Emitter, const: int, thread: ir.Value | int) -> ir.Value:
    """The position along the axis of a register: its constant part XOR the lane's."""
    if isinstance(thread, int):
        return ir.Constant(I32, const ^ thread)
    return e.b.xor(thread, ir.Constant(I32, const)) if const else thread


def _across_waves(e: Emitter, layout: LinearLayout, ax: int, kind: str, t: DType,
                  groups: dict[tuple[int, ...], Val], warp_bits: list[int]) -> None:
    """Every wave writes its partial results to row ``w`` (its index along the axis) of a
    scratch array ``[rows][elements off the axis]``; after a barrier every lane combines
    the rows of its elements in row order (so all lanes get the same bits)."""
    is_arg = kind.startswith("arg")
    dims = [i for i in range(layout.num_out_dims) if i != ax]
    shape = [layout.out_dim_size(f"dim{i}") for i in dims]
    shifts = [0] * len(shape)  # row-major element offset = XOR of coordinate << shift (sizes are 2**k)
    for i in range(len(shape) - 2, -1, -1):
        shifts[i] = shifts[i + 1] + (shape[i + 1].bit_length() - 1)
    numel = 1
    for s in shape:
        numel *= s
    rows = 1 << len(warp_bits)
    vty = next(iter(groups.values()))
    vty = vty[0].type if isinstance(vty, tuple) else vty.type
    size = 4 * cross_lane.word_count(vty)
    plane = rows * numel * size  # the values; the indices of arg reductions follow
    e.scratch(plane + (rows * numel * 4 if is_arg else 0))

    # this wave's row, and the lane/wave part of the element offset (its possible bits in tmask)
    warp = e.special("warp")
    row: ir.Value = ir.Constant(I32, 0)
    for k, bit in enumerate(warp_bits):
        row = e.b.or_(row, e.b.shl(e.b.and_(e.b.lshr(warp, ir.Constant(I32, bit)), ir.Constant(I32, 1)),
                                   ir.Constant(I32, k)))
    thread: ir.Value | int = 0
    tmask = 0
    for i, d in enumerate(dims):  # output dims are dim0, dim1, ... in order (layout/common.py)
        tc = e.thread_coords(layout, d)
        for src in ("lane", "warp"):
            for basis in layout.in_bases(src):
                tmask |= basis[d] << shifts[i]
        if isinstance(tc, int):
            continue
        part = e.b.shl(tc, ir.Constant(I32, shifts[i])) if shifts[i] else tc
        thread = part if isinstance(thread, int) else e.b.or_(thread, part)

    def element(key: tuple[int, ...]) -> ir.Value | int:
        const = 0
        for c, s in zip(key, shifts):
            const |= c << s
        if isinstance(thread, int):
            return const ^ thread
        if const & tmask:
            return e.b.xor(thread, ir.Constant(I32, const))
        return e.b.add(thread, ir.Constant(I32, const)) if const else thread

    def address(elem: ir.Value | int, row_: ir.Value | int, nbytes: int, base: int) -> ir.Value:
        if isinstance(row_, int) and isinstance(elem, int):
            return e.lds_address(e.scratch_offset + base + (row_ * numel + elem) * nbytes)
        r = ir.Constant(I32, row_) if isinstance(row_, int) else row_
        x = ir.Constant(I32, elem) if isinstance(elem, int) else elem
        off = e.b.mul(e.b.add(e.b.mul(r, ir.Constant(I32, numel)), x), ir.Constant(I32, nbytes))
        return e.b.gep(e.lds_base(), [e.b.add(off, ir.Constant(I32, base))], source_etype=ir.IntType(8))

    elems = {key: element(key) for key in groups}
    e.barrier()  # the scratch area may still be read by the op before
    for key, val in groups.items():
        v, i = val if isinstance(val, tuple) else (val, None)
        _store_words(e, address(elems[key], row, size, 0), v)
        if i is not None:
            e.b.store(i, address(elems[key], row, 4, plane), align=4)
    e.barrier()
    for key in list(groups):
        acc: Val | None = None
        for w in range(rows):
            v = _load_words(e, address(elems[key], w, size, 0), vty)
            cur: Val = (v, e.b.load(address(elems[key], w, 4, plane), typ=I32, align=4)) if is_arg else v
            acc = cur if acc is None else _merge(e, kind, t, acc, cur)
        assert acc is not None
        groups[key] = acc


def _store_words(e: Emitter, ptr: ir.Value, x: ir.Value) -> None:
    words = cross_lane.to_words(e.b, x)
    if len(words) == 1:
        e.b.store(words[0], ptr, align=4)
    else:
        e.b.store(e.b.or_(e.b.zext(words[0], I64), e.b.shl(e.b.zext(words[1], I64), ir.Constant(I64, 32))), ptr,
                  align=8)


def _load_words(e: Emitter, ptr: ir.Value, ty: ir.Type) -> ir.Value:
    if cross_lane.word_count(ty) == 1:
        return cross_lane.from_words(e.b, [e.b.load(ptr, typ=I32, align=4)], ty)
    x = e.b.load(ptr, typ=I64, align=8)
    return cross_lane.from_words(e.b, [e.b.trunc(x, I32), e.b.trunc(e.b.lshr(x, ir.Constant(I64, 32)), I32)], ty)


__all__ = ["combine", "arg_combine", "I1", "BFloatType"]
