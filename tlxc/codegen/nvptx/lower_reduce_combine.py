"""``reduce_combine`` (``tl.reduce`` with a user's combine function): the steps of
``lower_reduce`` -- the registers of a thread, then butterfly shuffles across the lanes,
then shared memory across the warps, each only over the layout bits that move along the
axis -- on tuples of ``n`` registers, one per operand. Each combine step emits the op's
region once more with its block arguments bound to the two tuples' registers; the
values it yields are the combined tuple. The region's ops are scalar, so the ordinary
lowering rules apply to them one register at a time.

Whose value is ``a`` and whose is ``b`` in a step follows the hardware's tree, not the
positions along the axis (within a thread, ``a`` holds the earlier registers; across
lanes and warps, ``a`` is this thread's partial result): the function must be
associative and commutative, as in Triton. Boolean and fp8 operands are refused, like
in ``reduce`` (their registers do not travel through shuffles or shared memory here).
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind
from .emitter import Emitter, lowers, register_coords
from .lower_reduce import _ld, _st, shuffle, warp_row_and_thread_offset
from .ptx import Reg, reg_class

Regs = tuple[Reg, ...]


def combine(e: Emitter, op: ops.ReduceCombineOp, a: Regs, b: Regs) -> Regs:
    """The region applied to the partial results ``a`` and ``b``."""
    block = op.body
    for arg, r in zip(block.args, a + b):
        e.set(arg, [r])
        e._divergent[id(arg)] = True  # a partial result differs between threads
    for inner in block.ops[:-1]:
        e.op(inner)
    return tuple(e.get(v).regs[0] for v in block.ops[-1].operands)


@lowers(ops.ReduceCombineOp)
def reduce_combine(e: Emitter, op: Operation) -> None:
    assert isinstance(op, ops.ReduceCombineOp)
    srcs = [e.get(x) for x in op.xs]
    layout: LinearLayout = srcs[0].layout  # type: ignore[assignment]
    if any(s.layout != layout for s in srcs):
        raise CompilationError("TLXC-CODEGEN-001", "reduce_combine operands in different layouts (the layouts pass "
                               "gives them one)", op.loc)
    types: list[DType] = [x.type.scalar for x in op.xs]  # type: ignore[misc]
    for t in types:
        if t.kind == Kind.BOOL or (t.kind == Kind.FLOAT and t.bits == 8):
            raise CompilationError("TLXC-CODEGEN-001", f"tl.reduce of {t!r} cannot be compiled for "
                                   f"{e.target.arch} yet", op.loc, "convert the tile to a wider type (int32, float32) "
                                   "before reducing it")
    ax = layout.out_dims.index(f"dim{op.axis}")
    for src_dim in ("lane", "warp"):
        for basis in layout.in_bases(src_dim):
            if basis[ax] and any(x for i, x in enumerate(basis) if i != ax):
                raise CompilationError("TLXC-CODEGEN-001", "reduction over a layout that mixes the reduced axis "
                                       "with other dims in one lane/warp bit is not supported yet", op.loc)
    # 1. registers of this thread, grouped by their coordinate without the axis
    groups: dict[tuple[int, ...], Regs] = {}
    seen: set[tuple[int, ...]] = set()
    for r in range(len(srcs[0].regs)):
        c = register_coords(layout, r)
        if c in seen:
            continue
        seen.add(c)
        key = c[:ax] + c[ax + 1:]
        val = tuple(s.regs[r] for s in srcs)
        groups[key] = combine(e, op, groups[key], val) if key in groups else val
    # 2. lanes whose bit moves along the axis
    for bit, basis in enumerate(layout.in_bases("lane")):
        if not basis[ax]:
            continue
        for key, val in groups.items():
            groups[key] = combine(e, op, val, tuple(shuffle(e, r, 1 << bit) for r in val))
    # 3. warps whose bit moves along the axis: through shared memory
    warp_bits = [bit for bit, basis in enumerate(layout.in_bases("warp")) if basis[ax]]
    if warp_bits:
        _across_warps(e, op, layout, ax, types, groups, warp_bits)
    # 4. the results, in the slice layout
    if not op.results[0].type.shape:
        (val,) = groups.values()
        for res, r in zip(op.results, val):
            e.set(res, [r])
        return
    dst: LinearLayout = op.results[0].type.layout  # type: ignore[attr-defined]
    picked = [groups[register_coords(dst, r)] for r in range(dst.in_dim_size("register"))]
    for i, res in enumerate(op.results):
        e.set(res, [val[i] for val in picked])


def _across_warps(e: Emitter, op: ops.ReduceCombineOp, layout: LinearLayout, ax: int, types: list[DType],
                  groups: dict[tuple[int, ...], Regs], warp_bits: list[int]) -> None:
    """Every warp stores its partial results in row ``w`` (its index along the axis) of one
    array ``[rows][elements off the axis]`` per operand; after a barrier every thread
    combines the rows of its elements in row order."""
    dims = [i for i in range(layout.num_out_dims) if i != ax]
    shape = [layout.out_dim_size(f"dim{i}") for i in dims]
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    numel = (strides[0] * shape[0]) if shape else 1
    nw = 1 << len(warp_bits)
    sizes = [8 if reg_class(t) in ("b64", "f64") else 4 for t in types]
    planes = []  # byte offset of each operand's array
    total = 0
    for size in sizes:
        total = (total + size - 1) // size * size
        planes.append(total)
        total += nw * numel * size
    e.scratch(total)
    base = e.smem_base()
    row, thread = warp_row_and_thread_offset(e, layout, warp_bits, dims, strides)
    e.barrier()  # the scratch area may still be read by the op before
    elems = {}
    for key, val in groups.items():
        off = sum(c * s for c, s in zip(key, strides))
        elem = e.fn.reg("b32")
        e.fn.emit(f"add.u32 {elem}, {thread}, {off}")
        elems[key] = elem
        slot = e.fn.reg("b32")
        e.fn.emit(f"mad.lo.u32 {slot}, {row}, {numel}, {elem}")
        for r, t, size, plane in zip(val, types, sizes, planes):
            addr = e.fn.reg("b32")
            e.fn.emit(f"mad.lo.u32 {addr}, {slot}, {size}, {base}")
            _st(e, addr, plane, r, t)
    e.barrier()
    for key in list(groups):
        acc: Regs | None = None
        for w in range(nw):
            cur = []
            for t, size, plane in zip(types, sizes, planes):
                addr = e.fn.reg("b32")
                e.fn.emit(f"mad.lo.u32 {addr}, {elems[key]}, {size}, {base}")
                cur.append(_ld(e, addr, plane + w * numel * size, t))
            acc = tuple(cur) if acc is None else combine(e, op, acc, tuple(cur))
        assert acc is not None
        groups[key] = acc
