"""``reduce_combine`` (``tl.reduce`` with a user's combine function): the steps of
``lower_reduce`` -- the registers of a lane, then butterfly steps across the lanes of a
wave (``cross_lane.xor_lanes``), then the LDS scratch area across waves, each only over
the layout bits that move along the axis, skipping the bits whose partner holds the same
partial result -- on tuples of ``n`` values, one per operand. Each combine step emits
the op's region once more with its block arguments bound to the two tuples; the values
it yields are the combined tuple. The region's ops are scalar, so the ordinary lowering
rules apply to them one value at a time, in the operands' own types.

Whose value is ``a`` and whose is ``b`` in a step follows the hardware's tree (across
lanes and waves ``a`` is this lane's partial result): the function must be associative
and commutative, as in Triton. A scalar result is read from the first lane
(``readfirstlane``), so every lane uses the same bits. Boolean and fp8 operands are
refused, as on NVIDIA.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ...errors import CompilationError, InternalCompilerError
from ...ir import ops
from ...ir.core import Operation
from ...ir.layout import gf2
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from . import cross_lane
from .emitter import Emitter, lowers, register_coords
from .llvm import I32
from .lower_reduce import _load_words, _store_words

Vals = tuple[ir.Value, ...]


def combine(e: Emitter, op: ops.ReduceCombineOp, a: Vals, b: Vals) -> Vals:
    """The region applied to the partial results ``a`` and ``b``."""
    block = op.body
    for arg, v in zip(block.args, a + b):
        e.set(arg, [v])
    for inner in block.ops[:-1]:
        e.op(inner)
    return tuple(e.get(v).vals[0] for v in block.ops[-1].operands)


@lowers(ops.ReduceCombineOp)
def reduce_combine(e: Emitter, op: Operation) -> None:
    assert isinstance(op, ops.ReduceCombineOp)
    srcs = [e.get(x) for x in op.xs]
    layout: LinearLayout = srcs[0].layout  # type: ignore[assignment]
    if any(s.layout != layout for s in srcs):
        raise InternalCompilerError("amdgpu", "reduce_combine operands in different layouts", op.loc)
    types: list[DType] = [x.type.scalar for x in op.xs]  # type: ignore[misc]
    for t in types:
        if t.kind == Kind.BOOL or (t.kind == Kind.FLOAT and t.bits == 8):
            raise CompilationError("TLXC-CODEGEN-001", f"tl.reduce of {t!r} cannot be compiled for "
                                   f"{e.target.arch} yet", op.loc, "convert the tile to a wider type (int32, "
                                   "float32) before reducing it")
    ax = layout.out_dims.index(f"dim{op.axis}")
    for d in ("lane", "warp"):
        for basis in layout.in_bases(d):
            if basis[ax] and any(x for i, x in enumerate(basis) if i != ax):
                raise CompilationError("TLXC-CODEGEN-001", "reduction over a layout that mixes the reduced axis "
                                       f"with other dims in one {d} bit cannot be compiled for {e.target.arch} yet",
                                       op.loc)
    spanned = gf2.Echelon(b[ax] for b in layout.in_bases("register") if b[ax])

    # 1. registers of this lane, grouped by their coordinate without the axis
    groups: dict[tuple[int, ...], Vals] = {}
    seen: set[tuple[int, ...]] = set()
    for r in range(len(srcs[0].vals)):
        c = register_coords(layout, r)
        if c in seen:
            continue
        seen.add(c)
        key = c[:ax] + c[ax + 1:]
        val = tuple(s.vals[r] for s in srcs)
        groups[key] = combine(e, op, groups[key], val) if key in groups else val

    # 2. lanes whose bit moves along the axis: butterfly steps
    for bit, basis in enumerate(layout.in_bases("lane")):
        if not basis[ax] or not spanned.add(basis[ax]):
            continue
        for key, val in groups.items():
            groups[key] = combine(e, op, val, tuple(cross_lane.xor_lanes(e, x, 1 << bit) for x in val))

    # 3. waves whose bit moves along the axis: through LDS
    warp_bits = [bit for bit, basis in enumerate(layout.in_bases("warp")) if basis[ax] and spanned.add(basis[ax])]
    if warp_bits:
        _across_waves(e, op, layout, ax, groups, warp_bits)

    # 4. the results, in the slice layout the layouts pass assigned
    if not op.results[0].type.shape:
        (val,) = groups.values()
        for res, v in zip(op.results, val):
            e.set(res, [cross_lane.uniform(e, v)])
        return
    dst: LinearLayout = op.results[0].type.layout  # type: ignore[attr-defined]
    picked = []
    for r in range(dst.in_dim_size("register")):
        key = register_coords(dst, r)
        if key not in groups:
            raise InternalCompilerError("amdgpu", f"reduce_combine: the result layout is not the slice of the "
                                                  f"operands' (register {r} at {key})", op.loc)
        picked.append(groups[key])
    for i, res in enumerate(op.results):
        e.set(res, [val[i] for val in picked])


def _across_waves(e: Emitter, op: ops.ReduceCombineOp, layout: LinearLayout, ax: int,
                  groups: dict[tuple[int, ...], Vals], warp_bits: list[int]) -> None:
    """Every wave writes its partial results to row ``w`` (its index along the axis) of one
    scratch array ``[rows][elements off the axis]`` per operand (8 bytes an element, so
    that any type fits); after a barrier every lane combines the rows of its elements in
    row order."""
    dims = [i for i in range(layout.num_out_dims) if i != ax]
    shape = [layout.out_dim_size(f"dim{i}") for i in dims]
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    numel = (strides[0] * shape[0]) if shape else 1
    rows = 1 << len(warp_bits)
    tys = [v.type for v in next(iter(groups.values()))]
    sizes = [4 * cross_lane.word_count(t) for t in tys]
    planes = []
    total = 0
    for size in sizes:
        total = (total + size - 1) // size * size
        planes.append(total)
        total += rows * numel * size
    e.scratch(total)

    warp = e.special("warp")
    row: ir.Value = ir.Constant(I32, 0)
    for k, bit in enumerate(warp_bits):
        row = e.b.or_(row, e.b.shl(e.b.and_(e.b.lshr(warp, ir.Constant(I32, bit)), ir.Constant(I32, 1)),
                                   ir.Constant(I32, k)))
    thread: ir.Value = ir.Constant(I32, 0)
    for i, d in enumerate(dims):
        tc = e.thread_coords(layout, d)
        if not isinstance(tc, int):
            thread = e.b.add(thread, e.b.mul(tc, ir.Constant(I32, strides[i])))

    def address(elem: ir.Value, row_: ir.Value, size: int, plane: int) -> ir.Value:
        off = e.b.mul(e.b.add(e.b.mul(row_, ir.Constant(I32, numel)), elem), ir.Constant(I32, size))
        return e.b.gep(e.lds_base(), [e.b.add(off, ir.Constant(I32, plane))],
                       source_etype=ir.IntType(8))

    elems = {key: e.b.add(thread, ir.Constant(I32, sum(c * s for c, s in zip(key, strides)))) for key in groups}
    e.barrier()  # the scratch area may still be read by the op before
    for key, val in groups.items():
        for v, size, plane in zip(val, sizes, planes):
            _store_words(e, address(elems[key], row, size, plane), v)
    e.barrier()
    for key in list(groups):
        acc: Vals | None = None
        for w in range(rows):
            cur = tuple(_load_words(e, address(elems[key], ir.Constant(I32, w), size, plane), t)
                        for t, size, plane in zip(tys, sizes, planes))
            acc = cur if acc is None else combine(e, op, acc, cur)
        assert acc is not None
        groups[key] = acc
