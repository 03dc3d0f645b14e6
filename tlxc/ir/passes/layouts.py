"""Layout assignment: give every tile a distributed layout and insert ``convert_layout``
where an op needs its operand in another one.

Expects: a canonicalized kernel with no layouts; ``options.target`` (the
``TargetInfo``: warp size, vector width, and the layouts of dots and scheduled MFMAs,
which only the target can choose) and the ``func``'s ``num_warps`` -- inside an
``async_tasks`` partition, the partition's warp count.
Guarantees: every tile type carries a ``LinearLayout``; ops whose result only
re-indexes registers (reduce, expand_dims, trans, reshape, join, split, and the
elementwise ops) get the layout derived from their operand, so the code generators
move no data for them; loop-carried and if-yielded tiles keep one layout (a flattened
loop's once-per-tile index tile takes the layout of its one use: ``carry_in``).
Refuses: nothing (any pair of layouts converts through shared memory).

Choice of layouts (first version): each tile shape gets one *canonical* blocked layout,
vectorized along its last dim by the widest access that the axis analysis proves for
the loads and stores of that shape; creation ops (``arange``, ``splat``, constants) and
``broadcast`` results use it -- except a broadcast of a reduction back to the shape it
was reduced from (``x - tl.max(x, 1)[:, None]``), which takes the reduced tile's
layout. Where an op needs an operand in another layout, index arithmetic (integer,
pointer and boolean tiles built from scalars by cheap ops) is computed again in that
layout rather than converted (``rematerialize``); other values are converted. A load,
store or ``async_load`` whose pointers are contiguous along another dim only (a ``[K, N]``
tile of a K-contiguous matrix) gets a blocked layout vectorized along that dim instead,
and so does the index arithmetic it is made from (``contiguous_layouts``).

*Anchors*: in a scope (the kernel, or one partition) whose dots give a tile shape its
layout (the MMA accumulator), non-pointer tiles of that shape that creation ops and
broadcasts make (``tl.zeros``, a ``tl.where`` constant, a broadcast row) take the
accumulator's layout instead of the canonical one, and so do 1-D tiles of the shape a
reduction of the accumulator gives (its slice): the softmax state ``m_i`` / ``l_i``, the
masks and constants of an attention loop then live where the accumulator's rows do, and
nothing converts through shared memory (index arithmetic feeding the masks is
rematerialized). Loads and pointers keep the canonical, coalesced layouts.
"""

from __future__ import annotations

from typing import Any

from ...errors import CompilationError
from .. import ops
from ..analysis.axis_analysis import analyze
from ..builder import Builder
from ..core import Block, BlockArgument, Operation, OpResult, Value
from ..layout import shape_ops
from ..layout.amd import AmdMfma, AmdWmma
from ..layout.common import REGISTER, WARP, blocked, slice_layout
from ..layout.linear import LayoutError, LinearLayout
from ..layout.slices import extract_slice_layout, tile_over
from ..types import DType, Kind, MemDescType, PointerType, TileType, narrow
from .contiguous_layouts import blocked_in_order, dim_first, pointer_preferences
from .dot_loop_plan import pure_if
from .options import PassOptions
from .rewrite import add_carried

_ELEMENTWISE = (
    ops.AddOp, ops.SubOp, ops.MulOp, ops.DivOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp, ops.XorOp,
    ops.ShlOp, ops.ShrOp, ops.MinimumOp, ops.MaximumOp, ops.CmpOp, ops.SelectOp, ops.NegOp, ops.NotOp,
    ops.AbsOp, ops.FmaOp, ops.ConvertOp, ops.BitcastOp, ops.PtrToIntOp, ops.IntToPtrOp, ops.AddPtrOp,
    ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp, *ops.MATH_OPS.values(),
)


USER_LAYOUT = "TLXC-TLX-007"  # a user layout (tlx.zeros / require_layout / extract_slice) that cannot hold
REMAT_LIMIT = 24  # ops rebuilt for one operand at most


def _constant_choice(op: Operation) -> bool:
    """A ``select`` between constants or splats (``tl.where(mask, 0, -1e6)``): a float tile
    as cheap to rebuild as its mask, which is index arithmetic."""
    return isinstance(op, ops.SelectOp) and all(
        isinstance(u.owner, (ops.ConstantOp, ops.SplatOp)) for u in op.operands[1:])


def warp_rows_layout(shape: tuple[int, ...], warp_size: int, num_warps: int) -> LinearLayout:
    """The layout in which a warp-level op (``ir/ops/warp.py``) sees its tile: lane ``i %
    warp_size`` holds row ``i`` (dim 0) whole in its registers, warps take the next row
    groups, and rows beyond ``warp_size x num_warps`` wrap into registers. For [256, 2] and 4
    warps: thread (warp w, lane l) holds rows 32w + l and 128 + 32w + l, both columns."""
    rank = len(shape)
    rest = [1] * rank
    return blocked(shape, [1, *shape[1:]], [warp_size, *rest[1:]], [num_warps, *rest[1:]],
                   list(range(rank - 1, -1, -1)))


def scan_layout(shape: tuple[int, ...], axis: int, warp_size: int, num_warps: int) -> LinearLayout:
    """The layout a ``scan`` runs in: the scanned axis within each warp, a thread's
    registers holding consecutive positions and the low lane bits the next ones (lane
    ``j`` holds positions ``[j r, (j + 1) r)``), so that the code generators scan each
    thread's registers, then across lanes, with no step across warps. The other dims take
    the remaining lanes and the warps (copies where they are too small)."""
    rank = len(shape)
    n = shape[axis]
    lanes = min(n, warp_size)
    spt, tpw, wpc = [1] * rank, [1] * rank, [1] * rank
    spt[axis], tpw[axis] = n // lanes, lanes
    others = [d for d in range(rank - 1, -1, -1) if d != axis]
    left, warps = warp_size // lanes, num_warps
    for d in others:
        take = min(left, shape[d])
        tpw[d], left = take, left // take
    for d in reversed(others):
        take = min(warps, max(1, shape[d] // tpw[d]))
        wpc[d], warps = take, warps // take
    # what is left over broadcasts: on another dim if there is one, else beyond the axis
    spare = others[0] if others else axis
    tpw[spare] *= left
    wpc[spare] *= warps
    return blocked(shape, spt, tpw, wpc, [axis] + others)


def _bytes(t: DType | PointerType) -> int:
    return 8 if isinstance(t, PointerType) else max(1, t.bits // 8)


def _tile(v: Value) -> TileType:
    return narrow(v.type, TileType)


def _layout(v: Value) -> Any:
    """The layout of ``v``, a tile (None before this pass gave it one)."""
    return narrow(v.type, TileType).layout


class _Assigner:
    def __init__(self, func: Operation, options: PassOptions) -> None:
        self.func = func
        self.info = options.target
        self.target = options.target.layout_target
        self.num_warps: int = func.num_warps
        self.vec: dict[tuple[int, ...], int] = {}
        self.remat: dict[tuple[Value, LinearLayout], Value] = {}  # values rebuilt in another layout
        self.canon: dict[tuple[tuple[int, ...], int], LinearLayout] = {}
        self.anchors: dict[tuple[int, ...], LinearLayout | None] = {}
        axis = analyze(func)
        # where a float atomic add over consecutive elements is one instruction, atomics are
        # placed by their pointers as stores are (Triton's coalescing does so)
        self.atomics_coalesce = options.target.has.vector_atomics
        accesses = (ops.LoadOp, ops.StoreOp, ops.AsyncLoadOp) + \
            ((ops.AtomicRMWOp,) if self.atomics_coalesce else ())
        for op in func.walk():
            if isinstance(op, accesses) and op.ptr.type.shape:
                ptr = op.ptr
                shape = ptr.type.shape
                pointer = ptr.type.scalar
                assert isinstance(pointer, PointerType)  # the op's verify() checked it
                v = axis.vector_elements(ptr, len(shape) - 1, _bytes(pointer.pointee),
                                         self.target.max_vector_bytes, op.mask)
                self.vec[shape] = max(self.vec.get(shape, 1), v)
        # pointer tiles contiguous along another dim than the last, and the index arithmetic
        # they are made from, in a layout vectorized along that dim
        self.prefer = pointer_preferences(func, axis, self.target.max_vector_bytes, self.along)

    # -- layouts -------------------------------------------------------------------------------
    def canonical(self, shape: tuple[int, ...], min_last: int = 1) -> LinearLayout:
        key = (shape, min_last)
        if key not in self.canon:
            # as Triton's coalescing: no wider per-thread vectors than it takes to give every
            # thread an element (a small tile is spread over all threads, not packed into a few)
            vec = min(shape[-1], max(min(self.vec.get(shape, 1), self.spread(shape)), min_last))
            self.canon[key] = blocked_in_order(shape, vec, list(range(len(shape) - 1, -1, -1)),
                                               self.target.warp_size, self.num_warps)
        return self.canon[key]

    def spread(self, shape: tuple[int, ...]) -> int:
        """Elements per thread when the tile is spread over every thread of the scope."""
        numel = 1
        for n in shape:
            numel *= n
        return max(1, numel // (self.target.warp_size * self.num_warps))

    def along(self, shape: tuple[int, ...], dim: int, vec: int) -> LinearLayout:
        """The blocked layout of a pointer tile contiguous along ``dim`` (not the last):
        ``vec`` elements of ``dim`` per thread, ``dim`` fastest (``contiguous_layouts``)."""
        vec = min(shape[dim], max(1, min(vec, self.spread(shape))))
        return blocked_in_order(shape, vec, dim_first(len(shape), dim), self.target.warp_size, self.num_warps)

    def buffer_read(self, buf: MemDescType, shape: tuple[int, ...]) -> LinearLayout:
        """The layout a ``local_load`` reads a buffer into when nothing else decides: the
        canonical layout when the buffer's elements run along the last dim, else a blocked
        layout whose per-thread vectors follow the buffer's contiguous dim (a transposed
        view), so that the shared-memory reads are vectorized; consumers convert."""
        layout = buf.layout
        if layout is None or len(shape) < 2 or not layout.in_bases("offset"):
            return self.canonical(shape)
        first = layout.in_bases("offset")[0]
        dim = next((d for d, c in enumerate(first) if c), len(shape) - 1)
        if dim == len(shape) - 1:
            return self.canonical(shape)
        run = layout.num_consecutive("offset", f"dim{dim}")
        vec = max(1, min(run, shape[dim], self.target.max_vector_bytes * 8 // max(8, buf.element.bits)))
        return blocked_in_order(shape, vec, dim_first(len(shape), dim), self.target.warp_size, self.num_warps)

    def find_anchors(self, block: Block) -> dict[tuple[int, ...], LinearLayout | None]:
        """The shapes the dots of ``block`` (not of nested partitions) fix a layout for --
        their accumulators' -- and those of the reductions of such tiles (the slice); None
        for a shape two dots lay out differently."""
        found: dict[tuple[int, ...], LinearLayout | None] = {}

        def note(shape: tuple[int, ...], layout: LinearLayout | None) -> None:
            if layout is None:
                return
            if shape in found and found[shape] != layout:
                found[shape] = None
            else:
                found.setdefault(shape, layout)

        def walk(b: Block) -> None:
            for op in b.ops:
                if isinstance(op, ops.AsyncTasksOp):
                    continue
                if isinstance(op, (ops.DotOp, ops.DotScaledOp, ops.AsyncDotOp)):
                    note(op.result.type.shape, self.preferred(op.result))
                elif isinstance(op, ops.ReduceOp) and op.result.type.shape:
                    inner = self.preferred(op.x)
                    if inner is not None:
                        note(op.result.type.shape, slice_layout(inner, op.axis))
                for region in op.regions:
                    walk(region.block)

        walk(block)
        return found

    def anchored(self, v: Value) -> LinearLayout | None:
        """The anchor layout for tile ``v`` made by a creation op or a broadcast (see the
        module doc): for non-pointer tiles of a shape the scope's dots lay out."""
        t = _tile(v)
        if isinstance(t.element, PointerType) or t.element.kind != Kind.FLOAT:
            return None  # index arithmetic and masks follow their users (rematerialized)
        return self.anchors.get(t.shape)

    # -- rewriting -------------------------------------------------------------------------------
    def set_layout(self, v: Value, layout: LinearLayout) -> None:
        t = v.type
        assert isinstance(t, TileType)
        v.type = TileType(t.shape, t.element, layout)

    def require(self, op: Operation, index: int, layout: LinearLayout) -> None:
        """Operand ``index`` of ``op`` (a tile) in ``layout``, rebuilt or converted."""
        v = op.operands[index]
        t = _tile(v)
        if t.layout == layout:
            return
        new = self.rematerialize(v, layout)
        if new is None:
            with Builder(None).before(op) as b:
                b.loc = op.loc
                new = b.value(ops.ConvertLayoutOp, [v], TileType(t.shape, t.element, layout))
        op.set_operand(index, new)

    # -- rematerialization: index arithmetic rebuilt in the layout a consumer wants ------------------
    def rematerialize(self, v: Value, layout: LinearLayout) -> Value | None:
        """``v`` computed again in ``layout`` from the same scalars, when it is a constant
        or a splat, or cheap index arithmetic: ``arange`` and integer / pointer / boolean
        elementwise ops and ``expand_dims`` of them, and a float ``select`` between
        constants (a mask's ``tl.where(mask, 0, -1e6)``), at most ``REMAT_LIMIT`` ops (Triton's
        backward rematerialization does the same), also through the ``broadcast`` of an
        integer or boolean row (masks). Not through the broadcast of pointers: the
        full-size pointer tiles it would rebuild cost more registers than a conversion
        of the small operand (measured: spills in a batched dot). Each
        rebuilt op goes right after the op it copies, so it is computed where that was
        (outside a loop that only uses it); None: convert instead."""
        plan: dict[tuple[Value, LinearLayout], tuple[Operation, list[LinearLayout | None]]] = {}
        if not self._plan(v, layout, plan, [REMAT_LIMIT]):
            return None
        for (old, lay), (src, wants) in plan.items():  # dependencies first
            operands = [u if want is None or _layout(u) == want else self.remat[(u, want)]
                        for u, want in zip(src.operands, wants)]
            old_type = _tile(old)
            new_type = TileType(old_type.shape, old_type.element, lay)
            new = Builder.at(src, after=True).create(type(src), operands, [new_type], dict(src.attrs))
            self.remat[(old, lay)] = new.result
        return self.remat[(v, layout)]

    def _plan(self, v: Value, layout: LinearLayout, plan: dict, budget: list[int]) -> bool:
        """Add what rebuilding ``v`` in ``layout`` takes to ``plan`` (False: too much or not
        possible); ``budget[0]``: ops that may still be added."""
        key = (v, layout)
        if _layout(v) == layout or key in self.remat or key in plan:
            return True
        src = v.owner if isinstance(v, OpResult) else None
        if isinstance(src, ops.IfOp) and isinstance(v, OpResult):
            return self.carry_in(v, layout)
        if src is None or len(src.results) != 1 or budget[0] <= 0:
            return False
        budget[0] -= 1
        wants: list[LinearLayout | None] = [None] * len(src.operands)
        if isinstance(src, (ops.ConstantOp, ops.SplatOp)):  # of any element type
            return self._planned(key, src, wants, plan)
        element = _tile(v).element
        if not isinstance(element, PointerType) and element.kind == Kind.FLOAT and not _constant_choice(src):
            return False
        if isinstance(src, (ops.ArangeOp, ops.RematerializedRangeOp)):
            pass
        elif isinstance(src, ops.ExpandDimsOp):
            axis = src.axis
            try:
                inner = slice_layout(layout, axis)
                if shape_ops.expand_dims(inner, axis) != layout:
                    return False
            except LayoutError:
                return False
            wants[0] = inner
        elif isinstance(src, _ELEMENTWISE):
            wants = [layout if isinstance(u.type, TileType) else None for u in src.operands]
        elif isinstance(src, ops.BroadcastOp) and not isinstance(element, PointerType):
            try:  # a mask or index row broadcast: rebuilt from its small operand
                wants[0] = self.broadcast_source(src, layout)
            except LayoutError:
                return False
        else:
            return False
        for u, want in zip(src.operands, wants):
            if want is not None and not self._plan(u, want, plan, budget):
                return False
        return self._planned(key, src, wants, plan)

    def carry_in(self, r: OpResult, layout: LinearLayout) -> bool:
        """``r``, a result of a pure ``if``, rebuilt in ``layout`` by giving the ``if`` a
        result in ``layout`` that each branch computes (rebuilt there). A flattened loop's
        once-per-tile ``if`` (``flatten_loops``) computes ``r`` at a tile's first iteration
        and the loop carries it to the others (the ``else`` yields the block argument whose
        slot the loop yields ``r`` to): the loop then also gets a slot in ``layout``, with
        its init rebuilt before the loop. The use reads it as it is, with no conversion each
        iteration; what is left unused is for ``dce``. True, with ``self.remat[(r,
        layout)]`` set, when every part rebuilds."""
        cond = r.op
        if not isinstance(cond, ops.IfOp) or not pure_if(cond):
            return False
        then_y, else_y = (region.block.ops[-1] for region in cond.regions)
        parent = cond.parent.parent_op if cond.parent is not None else None
        loop = parent if isinstance(parent, ops.ForOp) and cond.parent is parent.body else None
        arg = else_y.operands[r.index]
        slot = arg.index - 1 if isinstance(arg, BlockArgument) and loop is not None and arg.block is loop.body else -1
        carried = loop is not None and slot >= 0 and loop.body.ops[-1].operands[slot] is r
        sources = [then_y.operands[r.index], loop.inits[slot] if loop is not None and carried else arg]
        rebuilt = [x if _layout(x) == layout else self.rematerialize(x, layout) for x in sources]
        if rebuilt[0] is None or rebuilt[1] is None:
            return False
        t = _tile(r)
        new_t = TileType(t.shape, t.element, layout)
        new_r = OpResult(new_t, cond, len(cond.results))
        cond.results.append(new_r)
        then_y._add_operand(rebuilt[0])
        if loop is not None and carried:
            def through_else(new_arg: BlockArgument) -> Value:  # the iterations between a tile's first ones
                else_y._add_operand(new_arg)
                return new_r
            add_carried(loop, rebuilt[1], through_else)
        else:
            else_y._add_operand(rebuilt[1])
        self.remat[(r, layout)] = new_r
        return True

    @staticmethod
    def _planned(key: tuple[Value, LinearLayout], src: Operation, wants: list[LinearLayout | None],
                 plan: dict) -> bool:
        plan[key] = (src, wants)
        return True

    def user_layout(self, op: ops.ZerosOp | ops.RequireLayoutOp) -> LinearLayout:
        """The layout a ``zeros`` / ``require_layout`` names (its dict attribute), for
        its result's shape; refused at the user's line when it does not fit the tile or
        the kernel's warps."""
        try:
            layout = attr_layout(op.layout, op.result.type.shape)
        except LayoutError as e:
            raise CompilationError(USER_LAYOUT, f"tlx.{op.NAME}: the layout does not fit the tile "
                                   f"{list(op.result.type.shape)}: {str(e).splitlines()[0]}", op.loc) from None
        if layout.in_dim_size(WARP) != self.num_warps:
            raise CompilationError(USER_LAYOUT, f"tlx.{op.NAME}: the layout spreads the tile over "
                                   f"{layout.in_dim_size(WARP)} warps; the kernel runs num_warps={self.num_warps}",
                                   op.loc, "make the product of warps_per_cta equal num_warps")
        return layout

    def broadcast_source(self, op: ops.BroadcastOp, result: LinearLayout) -> LinearLayout:
        """The layout a broadcast's operand must have for a result in ``result``: the same
        threads hold the same elements, projected on the size-1 dims."""
        want = result
        for d, n in enumerate(op.x.type.shape):
            if n == 1 and op.result.type.shape[d] != 1:
                want = shape_ops.expand_dims(slice_layout(want, d), d)
        return want

    def reduce_combine(self, op: ops.ReduceCombineOp) -> None:
        """The operands in one layout -- that of the first one an op computed (an index
        tile made by ``arange`` and ``broadcast`` is rebuilt for free in the data's) --
        and every result in its slice along the axis, like ``reduce``."""
        xs = list(op.xs)
        lead = next((i for i, v in enumerate(xs) if not isinstance(v.owner, (ops.ConstantOp, ops.SplatOp,
                                                                             ops.BroadcastOp))), 0)
        layout = _layout(xs[lead])
        for i in range(len(xs)):
            if i != lead:
                self.require(op, i, layout)
        for r in op.results:
            if isinstance(r.type, TileType):
                self.set_layout(r, slice_layout(layout, op.axis))

    def split(self, op: ops.SplitOp) -> None:
        """One register bit tells the halves apart: the operand's last dim goes to registers."""
        try:
            out = shape_ops.split(_layout(op.x))
        except LayoutError:
            self.require(op, 0, self.canonical(op.x.type.shape, min_last=2))
            out = shape_ops.split(_layout(op.x))
        for r in op.results:
            if isinstance(r.type, TileType):
                self.set_layout(r, out)

    def tile_operands(self, op: Operation) -> list[int]:
        return [i for i, v in enumerate(op.operands) if isinstance(v.type, TileType)]

    def block(self, block: Block) -> None:
        for op in list(block.ops):
            self.op(op)

    def op(self, op: Operation) -> None:
        results = [r for r in op.results if isinstance(r.type, TileType)]
        if isinstance(op, ops.ForOp):
            return self.for_loop(op)
        if isinstance(op, ops.IfOp):
            return self.if_op(op)
        if isinstance(op, ops.WhileOp):
            return self.while_loop(op)
        if isinstance(op, ops.AsyncTasksOp):
            return self.partitions(op)
        if isinstance(op, (ops.StoreOp, ops.AsyncLoadOp)):  # mask and values follow the pointers
            ptr = op.ptr
            if isinstance(ptr.type, TileType):
                for i in self.tile_operands(op)[1:]:
                    self.require(op, i, ptr.type.layout)
            return
        if self.atomics_coalesce and isinstance(op, (ops.AtomicRMWOp, ops.AtomicCASOp)) \
                and isinstance(op.ptr.type, TileType):  # as a store; the old values in the pointers' layout
            for i in self.tile_operands(op)[1:]:
                self.require(op, i, op.ptr.type.layout)
            self.set_layout(op.result, op.ptr.type.layout)
            return
        if isinstance(op, ops.ReduceCombineOp):  # also with scalar results: the operands meet in one layout
            return self.reduce_combine(op)
        if isinstance(op, ops.SplitOp):  # also of a [2] tile into scalars
            return self.split(op)
        if not results:
            return
        tiles = self.tile_operands(op)
        # an atomic's value, mask and comparand share the pointers' layout, as its old values do
        if isinstance(op, (*_ELEMENTWISE, ops.LoadOp, ops.AtomicRMWOp, ops.AtomicCASOp)):
            if not tiles:  # tile from scalars only cannot happen for these ops
                raise AssertionError(op.NAME)
            # the layout of the first operand that is not a constant or a splat (those are
            # rebuilt in any layout for free): ``0.01 * acc`` keeps the accumulator's layout
            # instead of converting the accumulator to the constant's and back
            # and data (float tiles) leads index arithmetic and masks, which are rebuilt in its
            # layout: ``tl.where(mask, s, -inf)`` keeps ``s`` where a dot left it
            def made(i: int) -> bool:
                return not isinstance(op.operands[i].owner, (ops.ConstantOp, ops.SplatOp))

            def data(i: int) -> bool:
                e = _tile(op.operands[i]).element
                return not isinstance(e, PointerType) and e.kind == Kind.FLOAT
            lead = next((i for i in tiles if made(i) and data(i)), None)
            if lead is None:
                lead = next((i for i in tiles if made(i)), tiles[0])
            layout = self.prefer.get(op.result) or _layout(op.operands[lead])
            for i in tiles:
                if _layout(op.operands[i]) != layout:
                    self.require(op, i, layout)
            self.set_layout(op.result, layout)
        elif isinstance(op, ops.InlineAsmOp):  # elementwise, with any number of results
            layout = _layout(op.operands[tiles[0]]) if tiles else self.canonical(results[0].type.shape)
            for i in tiles[1:]:
                self.require(op, i, layout)
            for r in results:
                self.set_layout(r, layout)
        elif isinstance(op, (ops.DotOp, ops.DotScaledOp)):
            chosen = self.info.dot_layout(op, self.num_warps)
            self.set_layout(op.result, chosen or self.canonical(op.result.type.shape))
            self.require(op, 2, _layout(op.result))  # a, b, acc
        elif isinstance(op, (ops.ConstantOp, ops.SplatOp)):
            for r in results:
                self.set_layout(r, self.prefer.get(r) or self.anchored(r) or self.canonical(r.type.shape))
        elif isinstance(op, ops.ArangeOp):
            for r in results:
                self.set_layout(r, self.canonical(r.type.shape))
        elif isinstance(op, ops.ReduceOp):
            self.set_layout(op.result, slice_layout(_layout(op.x), op.axis))
        # gather and histogram read their source through shared memory from whatever layout
        # it has; each thread's results follow the index (gather) or the canonical layout
        elif isinstance(op, ops.GatherOp):
            self.set_layout(op.result, _layout(op.index))
        elif isinstance(op, ops.HistogramOp):
            if op.mask is not None:
                self.require(op, 1, _layout(op.x))
            self.set_layout(op.result, self.canonical(op.result.type.shape))
        elif isinstance(op, ops.ExpandDimsOp):
            self.set_layout(op.result, shape_ops.expand_dims(_layout(op.x), op.axis))
        elif isinstance(op, ops.TransOp):
            self.set_layout(op.result, shape_ops.permute(_layout(op.x), op.order))
        elif isinstance(op, ops.ReshapeOp):
            self.set_layout(op.result, shape_ops.reshape(_layout(op.x), op.result.type.shape))
        elif isinstance(op, ops.JoinOp):
            self.require(op, 1, _layout(op.lhs))  # rhs
            self.set_layout(op.result, shape_ops.join(_layout(op.lhs)))
        elif isinstance(op, ops.BroadcastOp):
            res = self.reduced_from(op.x, op.result.type.shape) or self.anchored(op.result) or \
                self.prefer.get(op.result) or self.canonical(op.result.type.shape)
            self.set_layout(op.result, res)
            self.require(op, 0, self.broadcast_source(op, res))
        elif isinstance(op, ops.AsyncDotOp):
            chosen = self.info.async_dot_layout(op, self.num_warps)
            self.set_layout(op.result, chosen or self.canonical(op.result.type.shape))
            if op.acc is not None:
                self.require(op, 2, _layout(op.result))  # a, b, acc, use_acc
            a_want = self.info.async_dot_a_layout(op, self.num_warps)
            if a_want is not None:
                self.require(op, 0, a_want)
        elif isinstance(op, ops.AsyncDotWaitOp):
            for v, r in zip(op.values, op.results):
                if isinstance(v.type, TileType):
                    self.set_layout(r, v.type.layout)
        elif isinstance(op, ops.LocalLoadOp):
            want = self.dot_operand(op.result)
            self.set_layout(op.result, want or self.buffer_read(narrow(op.buf.type, MemDescType),
                                                                op.result.type.shape))
        elif isinstance(op, ops.ConvertLayoutOp):
            pass
        elif isinstance(op, (ops.ZerosOp, ops.RequireLayoutOp)):
            layout = self.user_layout(op)
            if isinstance(op, ops.RequireLayoutOp):
                self.require(op, 0, layout)
            self.set_layout(op.result, layout)
        elif isinstance(op, ops.RematerializedRangeOp):
            self.set_layout(op.result, self.canonical(op.result.type.shape))
        elif isinstance(op, ops.ScanOp):
            want = scan_layout(op.results[0].type.shape, op.axis, self.target.warp_size, self.num_warps)
            for i in range(len(op.operands)):
                self.require(op, i, want)
            for r in op.results:
                self.set_layout(r, want)
        elif isinstance(op, (ops.VoteBallotOp, ops.WarpReduxOp)):
            want = warp_rows_layout(op.operands[0].type.shape, self.target.warp_size, self.num_warps)
            self.require(op, 0, want)
            self.set_layout(op.result, want)
        elif isinstance(op, (ops.ReleaseLayoutOp, ops.AmdRegisterResidentOp, ops.AmdRegisterClassAnchorOp,
                             ops.AmdMfmaCommitOp)):
            for v, r in zip(op.operands, op.results):
                self.set_layout(r, _layout(v))
        elif isinstance(op, ops.ExtractSliceOp):
            src, offsets, shape = op.x, op.offsets, op.result.type.shape
            try:
                out = extract_slice_layout(_layout(src), offsets, shape)[0]
            except LayoutError:
                # the slice is not whole registers of the source's layout: move the tile
                # (once) into the layout that tiles the slice's wanted layout over it, where
                # every slice is whole registers of the same threads
                out = self.slice_layout(op)
                self.require(op, 0, tile_over(out, src.type.shape))
            self.set_layout(op.result, out)
        elif isinstance(op, ops.AmdScheduledMfmaOp):
            chosen = self.info.scheduled_mfma_layouts(op, self.num_warps)
            if chosen is None:
                raise LayoutError("amd_scheduled_mfma needs a target that chooses its MFMA layouts")
            acc, la, lb = chosen
            for i, want in enumerate((la, lb, acc)):
                self.require(op, i, want)
            self.set_layout(op.result, acc)
        else:
            raise AssertionError(f"layout assignment has no rule for '{op.NAME}'")

    def slice_layout(self, op: Operation) -> LinearLayout:
        """The layout for an ``extract_slice`` result that cannot be a view of its source:
        the one its only user needs (a scheduled MFMA's operand), else the shape's
        canonical layout."""
        users = op.result.uses
        if len(users) == 1 and isinstance(users[0], ops.AmdScheduledMfmaOp):
            chosen = self.info.scheduled_mfma_layouts(users[0], self.num_warps)
            index = users[0].operands.index(op.result)
            if chosen is not None and index < 3:
                acc, la, lb = chosen
                return (la, lb, acc)[index]
        return self.canonical(op.result.type.shape)

    def dot_operand(self, v: Value) -> LinearLayout | None:
        """The operand layout of the one dot ``v`` feeds (as A or B, and nothing else), when
        the target reads dot operands in a layout of their own (AMD's MFMA / WMMA operand
        layouts): a ``local_load`` then reads its buffer straight into it, instead of a
        blocked layout that the dot would convert through shared memory a second time."""
        if len(v.uses) != 1:
            return None
        user = v.uses[0]
        if not isinstance(user, ops.DotOp) or user.operands.count(v) != 1:
            return None
        index = user.operands.index(v)
        if index not in (0, 1):
            return None
        return self.info.dot_operand_layout(user, index, self.num_warps)

    def reduced_from(self, v: Value, shape: tuple[int, ...], depth: int = 0) -> LinearLayout | None:
        """The layout of a tile of ``shape`` that ``v`` was reduced from, through
        ``expand_dims`` and elementwise ops (``x - tl.max(x, 1)[:, None]``, also
        ``tl.maximum(m, tl.max(x, 1))``): broadcasting back into it moves no data, where the
        canonical layout would convert both the broadcast operand and the result (a wgmma
        accumulator through shared memory)."""
        if not isinstance(v, OpResult) or depth > 8:
            return None
        src = v.op
        if isinstance(src, ops.ReduceOp):
            x = _tile(src.x)
            return x.layout if x.shape == shape else None
        if isinstance(src, ops.ExpandDimsOp) or isinstance(src, _ELEMENTWISE):
            for i in self.tile_operands(src):
                found = self.reduced_from(src.operands[i], shape, depth + 1)
                if found is not None:
                    return found
        return None

    def _yield_to(self, term: Operation, layouts: list[LinearLayout | None]) -> None:
        for i, lay in enumerate(layouts):
            if lay is not None:
                self.require(term, i, lay)

    def preferred(self, v: Value, depth: int = 0) -> LinearLayout | None:
        """The layout ``v`` will get from the ops that compute it, when that is decided by
        something other than its operands' layouts (a dot's accumulator, a reduction of
        one): loop-carried values take it, so the loop does not convert every iteration."""
        if not isinstance(v, OpResult) or depth > 8:
            return None
        src = v.op
        if isinstance(src, (ops.DotOp, ops.DotScaledOp)):
            return self.info.dot_layout(src, self.num_warps)
        if isinstance(src, ops.AsyncDotOp):
            return self.info.async_dot_layout(src, self.num_warps)
        if isinstance(src, ops.AsyncDotWaitOp):
            return self.preferred(src.values[v.index], depth + 1)
        if isinstance(src, (ops.ZerosOp, ops.RequireLayoutOp)):
            return self.user_layout(src)
        if isinstance(src, ops.AmdScheduledMfmaOp):
            chosen = self.info.scheduled_mfma_layouts(src, self.num_warps)
            return chosen[0] if chosen is not None else None
        if isinstance(src, (ops.AmdMfmaCommitOp, ops.AmdRegisterResidentOp, ops.AmdRegisterClassAnchorOp)):
            return self.preferred(src.operands[v.index], depth + 1)
        if isinstance(src, ops.ReduceOp) and src.result.type.shape:
            inner = self.preferred(src.x, depth + 1)
            return slice_layout(inner, src.axis) if inner is not None else None
        if isinstance(src, _ELEMENTWISE):
            for operand in src.operands:
                if isinstance(operand.type, TileType):
                    found = self.preferred(operand, depth + 1)
                    if found is not None:
                        return found
        return None

    def partitions(self, op: ops.AsyncTasksOp) -> None:
        """Each partition runs on its own warps, so its tiles get layouts for its warp count
        (a helper inlined into two partitions gets a layout in each); the caches hold
        layouts for one warp count and values of one partition, so each gets fresh ones."""
        saved = (self.num_warps, self.canon, self.remat, self.anchors)
        try:
            for p in op.partitions:
                self.num_warps, self.canon, self.remat = p.num_warps, {}, {}
                if p.default:  # the default partition runs on the kernel's warps, with its values
                    self.num_warps, self.canon, self.remat = saved[:3]
                self.anchors = self.find_anchors(p.block)
                self.block(p.block)
        finally:
            self.num_warps, self.canon, self.remat, self.anchors = saved

    def for_loop(self, op: ops.ForOp) -> None:
        body = op.body
        layouts = [v.type.layout if isinstance(v.type, TileType) else None for v in op.inits]
        first_init = len(op.operands) - len(op.inits)
        for i, yielded in enumerate(body.ops[-1].operands):
            if layouts[i] is not None:
                want = self.preferred(yielded)
                if want is not None and want != layouts[i]:
                    self.require(op, first_init + i, want)
                    layouts[i] = want
        for arg, res, lay in zip(body.args[1:], op.results, layouts):
            if lay is not None:
                self.set_layout(arg, lay)
                self.set_layout(res, lay)
        self.block(body)
        self._yield_to(body.ops[-1], layouts)

    def if_op(self, op: ops.IfOp) -> None:
        for region in op.regions:
            self.block(region.block)
        then_term, else_term = (r.block.ops[-1] for r in op.regions)
        layouts = [v.type.layout if isinstance(v.type, TileType) else None for v in then_term.operands]
        self._yield_to(else_term, layouts)
        for res, lay in zip(op.results, layouts):
            if lay is not None:
                self.set_layout(res, lay)

    def while_loop(self, op: ops.WhileOp) -> None:
        before, after = op.regions[0].block, op.regions[1].block
        layouts = [v.type.layout if isinstance(v.type, TileType) else None for v in op.inits]
        for arg, lay in zip(before.args, layouts):
            if lay is not None:
                self.set_layout(arg, lay)
        self.block(before)
        cond = before.ops[-1]
        fwd = [v.type.layout if isinstance(v.type, TileType) else None for v in cond.operands[1:]]
        for arg, res, lay in zip(after.args, op.results, fwd):
            if lay is not None:
                self.set_layout(arg, lay)
                self.set_layout(res, lay)
        self.block(after)
        self._yield_to(after.ops[-1], layouts)


# ----------------------------------------------------------------------------- user layouts
def amd_parent(attr: dict[str, Any]) -> AmdMfma | AmdWmma:
    """The MFMA / WMMA parameters of an ``amd_mfma`` / ``amd_wmma`` layout attribute
    (``tlxc.ir.ops.amd``). A WMMA attribute's ``reg_bases`` / ``warp_bases`` are in units
    of instruction tiles ((row tile, column tile) per register / warp bit), as TLX's
    ``require_amd_wmma_layout`` spells them."""
    if attr["kind"] == "amd_mfma":
        tpw = attr["tiles_per_warp"]
        return AmdMfma(attr["version"], tuple(attr["instr_shape"]), attr["transposed"], tuple(attr["warps_per_cta"]),
                       attr["element_bitwidth"], tuple(tpw) if tpw is not None else None)
    if attr["kind"] == "amd_wmma":
        return AmdWmma(attr["version"], attr["transposed"], (1, 1), tuple(attr["instr_shape"]))
    raise LayoutError(f"a {attr['kind']} layout is not an MFMA or WMMA layout")


def attr_layout(attr: dict[str, Any], shape: tuple[int, ...]) -> LinearLayout:
    """The ``LinearLayout`` of a user layout attribute (``amd_mfma``, ``amd_wmma``,
    ``amd_dot_operand``) for a tile of ``shape``."""
    if attr["kind"] == "amd_dot_operand":
        parent = amd_parent(attr["parent"])
        if isinstance(parent, AmdWmma):
            raise LayoutError("dot operands of an explicit (linear) WMMA layout are not supported yet")
        return parent.operand(shape, attr["operand_index"], attr["k_width"])
    parent = amd_parent(attr)
    if isinstance(parent, AmdMfma):
        return parent.accumulator(shape)
    return _wmma_linear(parent, attr, shape)


def _wmma_linear(p: AmdWmma, attr: dict[str, Any], shape: tuple[int, ...]) -> LinearLayout:
    from ..layout.common import fit_to_shape, with_standard_ins

    if len(shape) != 2:
        raise LayoutError(f"an explicit WMMA layout is for 2-D tiles, not {list(shape)}")
    m, n = p.instr_shape[:2]
    tile = p.accumulator((m, n))
    bases = {d: list(tile.in_bases(d)) for d in tile.in_dims}
    bases[REGISTER] += [(i * m, j * n) for i, j in attr["reg_bases"]]
    bases[WARP] = list(bases.get(WARP, [])) + [(i * m, j * n) for i, j in attr["warp_bases"]]
    rows = max([m] + [b[0] * 2 for bs in bases.values() for b in bs])
    cols = max([n] + [b[1] * 2 for bs in bases.values() for b in bs])
    out = LinearLayout(bases, [("dim0", rows), ("dim1", cols)])
    return with_standard_ins(fit_to_shape(out, shape))


def run(module: Operation, options: PassOptions) -> Operation:
    for func in module.funcs:
        assigner = _Assigner(func, options)
        assigner.anchors = assigner.find_anchors(func.body)
        assigner.block(func.body)
    return module
