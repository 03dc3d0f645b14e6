"""Buffer layout assignment: give every shared-memory buffer value (``MemDescType``) the
``LinearLayout`` that says where each of its elements lives (``offset`` -> ``dim0..``).

Expects: a kernel whose buffers have no layouts yet, except allocations the user pinned
(``local_alloc {pinned = true}``).
Guarantees: every shared-memory ``MemDescType`` value -- allocations, views, loop-carried
buffers -- carries a layout, and the layouts of views agree with their allocation:

* an allocation (``local_alloc``): rank >= 2 gets the target's swizzled layout
  (``options.target.buffer_layout``; AMD: an XOR swizzle of 16-byte chunks that keeps LDS
  accesses free of bank conflicts), by default the NVMMA swizzled layout that TMA and
  wgmma use, with the swizzle span (128, 64 or 32 bytes, 0 = plain) chosen from the
  bytes of the contiguous (last) dim as Triton does (``choose_nvmma_swizzle``); rank 1 is
  plain. The contiguous dim is the one before the last instead (the *transposed* NVMMA
  layout: K-major for a ``[K, N]`` B, MN-major for an ``[M, K]`` A) when the buffer is
  filled by ``async_load`` -- or by ``local_store`` of a ``load``'s tile, the operand
  buffer ``dot-to-wgmma`` fills when the loop is not pipelined -- from pointers that the
  axis analysis proves contiguous along that dim and not along the last
  (``AxisInfoMap.vector_dim``: the ``[K, N]`` tile of a K-contiguous matrix, tutorial
  09's ``b.T``) and is otherwise only read by
  ``local_load`` and 16-bit ``async_dot`` operands (wgmma reads 16-bit operands either
  way; other element types only K-major): then each thread's ``cp.async`` copies 16
  contiguous bytes into 16 contiguous bytes of the buffer, as Triton's shared encoding
  follows the order of the copy that fills it. The choice is made here, from the writer,
  rather than by ``software-pipeline`` allocating an ``[N, K]`` ring read through
  ``local_trans`` views: the tile IR stays as it was (the interpreter, ``dot-to-wgmma``
  and every reader see the same ops), user ``tlx.async_load`` buffers benefit alike, and
  the readers already follow the buffer's layout (``wgmma_smem_operand`` finds the
  descriptor of either major order; ``local_load`` reads along the contiguous dim).
  An allocation that one of its views reinterprets with another element width or
  shape is plain row-major instead, so that the reinterpretation is exact, and so is one
  that ``async_load`` writes when ``options.target.plain_async_copy_buffers`` says the target's
  copies need it (AMD's direct-to-LDS copies);
* ``local_view``: the array's layout (one buffer of it);
* ``local_trans``: the same bytes with the output dims permuted;
* ``local_slice``: the sub-layout of the slice's elements (``slice_view``), with *holes*
  -- offset bits whose basis is zero -- where the parent's bytes in between belong to
  other elements. Only slices whose elements are a block of the parent's offset bits are
  views of one base address: the offsets must be tile-aligned for the buffer's layout;
* ``local_reinterpret``: the source's layout when only the element type changes (same
  width, same shape), else the plain row-major layout of the new shape over the same
  bytes -- exact only when the source is itself plain row-major.

Refuses (``CompilationError`` at the user's line): shapes that are not powers of two,
1-bit elements, slices that are not tile-aligned, reinterpretations that would not be
exact, and loop-carried buffers whose layout changes between iterations.
Tensor-memory buffers keep no layout (tcgen05 lowering is a later issue).
"""

from __future__ import annotations

from typing import Any, NoReturn

from ...errors import CompilationError
from .. import ops
from ..analysis.axis_analysis import analyze
from ..analysis.buffers import alias_roots
from ..core import Block, Operation, Value
from ..layout import gf2
from ..layout.common import BLOCK, OFFSET, dim_names, with_standard_ins
from ..layout.linear import LayoutError, LinearLayout, is_pow2, log2
from ..layout.nvidia import choose_nvmma_swizzle, nvmma_shared
from ..types import MemDescType, PointerType, narrow
from .options import DEFAULT_OPTIONS, PassOptions
from .rewrite import constant_of

TLX = "TLXC-TLX-001"


# ----------------------------------------------------------------------------- layouts
def plain_layout(shape: tuple[int, ...], elem_bits: int) -> LinearLayout:
    """Row-major, unswizzled."""
    if len(shape) == 1:
        return with_standard_ins(LinearLayout.identity_1d(shape[0], OFFSET, "dim0"), (OFFSET, BLOCK))
    return nvmma_shared(shape, elem_bits, 0)


def default_layout(shape: tuple[int, ...], elem_bits: int, swizzle: bool = True) -> LinearLayout:
    """What an allocation gets unless the user pinned one (see the module doc)."""
    if len(shape) >= 2 and swizzle:
        return nvmma_shared(shape, elem_bits, choose_nvmma_swizzle(shape, elem_bits))
    return plain_layout(shape, elem_bits)


def nvmma_swizzle_of(t: MemDescType) -> int | None:
    """The NVMMA swizzle span (0, 32, 64 or 128 bytes) of an allocation's layout, or None
    when the layout is not an untransposed NVMMA layout of its shape (a transposed or
    sliced view, or a layout the user pinned). What a TMA descriptor for the buffer must
    be encoded with."""
    if t.layout is None or len(t.buf_shape) < 2:
        return 0 if t.layout is not None and t.layout == plain_layout(t.buf_shape, t.element.bits) else None
    for span in (0, 32, 64, 128):
        try:
            if t.layout == nvmma_shared(t.buf_shape, t.element.bits, span):
                return span
        except LayoutError:
            continue
    return None


def trans_view(layout: LinearLayout, perm: tuple[int, ...]) -> LinearLayout:
    """The layout of ``local_trans(buf, perm)``: result dim ``i`` is source dim ``perm[i]``."""
    names = dim_names(len(perm))
    tmp = layout.rename(outs={names[p]: f"_t{i}" for i, p in enumerate(perm)})
    out = tmp.rename(outs={f"_t{i}": names[i] for i in range(len(perm))})
    return out.transpose_outs(list(names))


def _inv_offsets(parent: LinearLayout, dim: int, bits: range) -> list[int]:
    """The offsets of the elements ``2**i`` along ``dim`` for ``i`` in ``bits``."""
    inv = parent.invert()
    mask = parent.in_dim_size(OFFSET) - 1
    names = parent.out_dims
    return [inv.apply_flat(parent.encode_out({names[dim]: 1 << i})) & mask for i in bits]


def slice_view(parent: LinearLayout, shape: tuple[int, ...]) -> LinearLayout:
    """The layout of a tile-aligned ``shape`` slice of a buffer laid out by ``parent``,
    relative to the slice's first element; raises ``LayoutError`` with the reason when
    the slice's elements are not one block of offset bits (then no base address and
    layout describe it).

    With ``I`` the parent's inverse, element ``o + x`` of an aligned slice at ``o`` is at
    ``I(o) XOR I(x)``. That is ``I(o) + I(x)`` -- a base address plus a layout -- when the
    offset bits the slice's elements use (``A``) and those the slice positions use
    (``B``) are disjoint, and the slice's elements fill exactly the offsets made of bits
    of ``A``. Bits below the highest of ``A`` that are not in it are holes."""
    pshape = parent.out_shape
    inner: list[int] = []
    outer: list[int] = []
    for d, (s, p) in enumerate(zip(shape, pshape)):
        inner += _inv_offsets(parent, d, range(log2(s)))
        outer += _inv_offsets(parent, d, range(log2(s), log2(p)))
    bits_a = 0
    for v in inner:
        bits_a |= v
    bits_b = 0
    for v in outer:
        bits_b |= v
    if bits_a & bits_b or gf2.rank(inner) != bin(bits_a).count("1"):
        raise LayoutError(f"a {list(shape)} slice of this {list(pshape)} buffer does not cover a block of its "
                          "layout's offsets (the buffer is swizzled across the slice's edge)", parent)
    names = parent.out_dims
    bases = []
    for k in range(bits_a.bit_length()):
        if (bits_a >> k) & 1:
            c = parent.apply({OFFSET: 1 << k})
            bases.append(tuple(c[n] for n in names))
        else:
            bases.append((0,) * len(names))
    out = LinearLayout({OFFSET: bases}, list(zip(names, shape)))
    return with_standard_ins(out, (OFFSET, BLOCK))


def slice_offset_terms(parent: LinearLayout, shape: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """How a slice position ``o`` (per dim, multiples of ``shape``) gives the slice's first
    element offset ``I(o)``: ``(dim, bit, offset)`` -- bit ``bit`` of ``o[dim]`` XORs
    ``offset`` in. (``slice_view`` proved these offsets never meet the slice's own bits,
    so the result is added to the parent's base address.)"""
    out = []
    for d, (s, p) in enumerate(zip(shape, parent.out_shape)):
        bits = range(log2(s), log2(p))
        out += [(d, b, v) for b, v in zip(bits, _inv_offsets(parent, d, bits)) if v]
    return out


def slice_offset(parent: LinearLayout, shape: tuple[int, ...], offsets: tuple[int, ...]) -> int:
    """``I(o)`` for constant slice offsets."""
    v = 0
    for d, b, off in slice_offset_terms(parent, shape):
        if (offsets[d] >> b) & 1:
            v ^= off
    return v


def is_plain(layout: LinearLayout, shape: tuple[int, ...], elem_bits: int) -> bool:
    return layout == plain_layout(shape, elem_bits)


# ----------------------------------------------------------------------------- the pass
def _fail(op: Operation, message: str, help: str | None = None) -> NoReturn:
    raise CompilationError(TLX, message, op.loc, help)


def _is_smem(v: Value) -> bool:
    return isinstance(v.type, MemDescType) and v.type.storage == "smem"


def _check_buffer(op: Operation, t: MemDescType) -> None:
    if not all(is_pow2(d) for d in t.buf_shape):
        _fail(op, f"buffer shape {list(t.buf_shape)} is not a power of two in every dimension; shared-memory "
                  "layouts need power-of-two shapes", "round the block sizes up to powers of two")
    if t.element.bits < 8:
        raise CompilationError("TLXC-TLX-005", f"buffers of {t.element!r} ({t.element.bits}-bit elements) are not "
                               "supported by the code generator yet; store them as int8", op.loc)


def _allocation_of(v: Value) -> Operation | None:
    """The ``local_alloc`` whose one buffer ``v`` is (through ``local_view``), or None."""
    op = v.owner
    while isinstance(op, ops.LocalViewOp):
        op = op.buf.owner
    return op if isinstance(op, ops.LocalAllocOp) else None


def _reinterprets_bytes(op: ops.LocalReinterpretOp) -> bool:
    # verify() has checked that both are buffers
    src, dst = narrow(op.buf.type, MemDescType), narrow(op.result.type, MemDescType)
    return (src.element.bits, src.buf_shape) != (dst.element.bits, dst.buf_shape)


def _filled_along_rows(func: Operation, roots: dict[int, frozenset[Operation]],
                       max_vector_bytes: int) -> set[Operation]:
    """The allocations that take the transposed NVMMA layout (see the module doc): rank
    >= 2, every ``async_load`` into them contiguous along dim ``rank - 2`` only, and no
    use but views of one buffer, those copies, ``local_load`` and 16-bit ``async_dot``
    operands."""
    axis = None
    votes: dict[Operation, bool] = {}
    for op in func.walk():
        source = _copied_from(op)
        if source is None or not _is_smem(op.buf):
            continue
        if axis is None:
            axis = analyze(func)
        ptr, mask = source
        pointer = ptr.type.scalar
        assert isinstance(pointer, PointerType)  # the op's verify() checked it
        rank = len(ptr.type.shape)
        nbytes = 8 if isinstance(pointer.pointee, PointerType) else max(1, pointer.pointee.bits // 8)
        found = axis.vector_dim(ptr, nbytes, max_vector_bytes, mask)
        along = found is not None and found[0] == rank - 2
        for alloc in roots.get(id(op.buf), frozenset()):
            votes[alloc] = votes.get(alloc, True) and along
    return {a for a, yes in votes.items()
            if yes and isinstance(a, ops.LocalAllocOp) and _only_copied_and_read(a.result)}


def _copied_from(op: Operation) -> tuple[Value, Value | None] | None:
    """(pointers, mask) of the global tile that ``op`` puts into a buffer unchanged: an
    ``async_load``'s, or those of the ``load`` whose result a ``local_store`` stores (the
    operand ``dot-to-wgmma`` stores when the loop is not pipelined); None for anything else."""
    if isinstance(op, ops.AsyncLoadOp) and op.ptr.type.shape:
        return op.ptr, op.mask
    if isinstance(op, ops.LocalStoreOp) and isinstance(op.value.owner, ops.LoadOp) and op.value.type.shape:
        load = op.value.owner
        return load.ptr, load.mask
    return None


def _only_copied_and_read(buf: Value) -> bool:
    for user in buf.uses:
        if isinstance(user, ops.LocalViewOp) and user.buf is buf:
            if not _only_copied_and_read(user.result):
                return False
        elif isinstance(user, (ops.AsyncLoadOp, ops.LocalStoreOp)) and user.buf is buf:
            continue
        elif isinstance(user, ops.LocalLoadOp) and user.buf is buf:
            continue
        elif isinstance(user, ops.AsyncDotOp) and user.acc is not buf and \
                narrow(buf.type, MemDescType).element.bits == 16:
            continue
        else:
            return False
    return True


class _Assigner:
    def __init__(self, func: Operation, swizzle: bool, options: PassOptions | None = None) -> None:
        self.swizzle = swizzle
        self.info = (options or DEFAULT_OPTIONS).target
        roots = alias_roots(func)
        self.plain: set[Operation] = set()
        self.slices: dict[int, list[tuple[int, ...]]] = {}  # id(allocation) -> shapes sliced out of it
        plain_copies = self.info.plain_async_copy_buffers
        for op in func.walk():
            if isinstance(op, ops.LocalSliceOp) and _is_smem(op.buf):
                alloc = _allocation_of(op.buf)
                if alloc is not None:
                    self.slices.setdefault(id(alloc), []).append(narrow(op.result.type, MemDescType).buf_shape)
            if isinstance(op, ops.LocalReinterpretOp) and _is_smem(op.buf) and _reinterprets_bytes(op):
                self.plain |= roots.get(id(op.buf), set())
            if plain_copies and isinstance(op, ops.AsyncLoadOp) and _is_smem(op.buf):
                self.plain |= roots.get(id(op.buf), set())
        self.transposed = _filled_along_rows(func, roots, self.info.layout_target.max_vector_bytes) \
            if swizzle else set()

    def set(self, v: Value, layout: LinearLayout) -> None:
        v.type = narrow(v.type, MemDescType).with_layout(layout)

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, (ops.ForOp, ops.IfOp, ops.WhileOp)):
            return self.control(op)
        for region in op.regions:  # regions that carry no values (async_tasks partitions)
            self.block(region.block)
        if not any(_is_smem(r) for r in op.results):
            return
        try:
            self.set(op.result, self.layout_of(op))
        except LayoutError as e:
            _fail(op, str(e).splitlines()[0])

    def layout_of(self, op: Operation) -> LinearLayout:
        t = narrow(op.result.type, MemDescType)  # op() picked ops with buffer results
        if isinstance(op, ops.LocalAllocOp):
            _check_buffer(op, t)
            reuse = op.reuse
            if t.layout is not None and op.pinned:
                return t.layout
            if reuse is not None and isinstance(reuse.type, MemDescType) and reuse.type.layout is not None and \
                    (reuse.type.buf_shape, reuse.type.element.bits) == (t.buf_shape, t.element.bits):
                return reuse.type.layout  # the same bytes seen the same way
            if op in self.plain:
                return plain_layout(t.buf_shape, t.element.bits)
            chosen = self.info.buffer_layout(t.buf_shape, t.element.bits) \
                if self.swizzle and len(t.buf_shape) >= 2 else None
            if chosen is not None:
                return chosen
            if self.swizzle and op in self.transposed and id(op) not in self.slices:
                shape, bits = t.buf_shape, t.element.bits
                return nvmma_shared(shape, bits, choose_nvmma_swizzle(shape, bits, transposed=True), transposed=True)
            if self.swizzle and len(t.buf_shape) >= 2:
                return self.sliceable_nvmma(t, self.slices.get(id(op), []))
            return default_layout(t.buf_shape, t.element.bits, self.swizzle)
        if not isinstance(op, (ops.LocalViewOp, ops.LocalTransOp, ops.LocalSliceOp, ops.LocalReinterpretOp)):
            raise LayoutError(f"internal: no buffer layout rule for '{op.NAME}'")
        src = narrow(op.buf.type, MemDescType)
        if src.layout is None:  # pragma: no cover - the walk visits definitions first
            raise LayoutError("internal: a view of a buffer without a layout")
        match op:
            case ops.LocalViewOp():
                return src.layout
            case ops.LocalTransOp():
                return trans_view(src.layout, tuple(op.perm))
            case ops.LocalSliceOp():
                return self.slice(op, src, t)
            case ops.LocalReinterpretOp():
                return self.reinterpret(op, src, t)

    @staticmethod
    def sliceable_nvmma(t: MemDescType, slices: list[tuple[int, ...]]) -> LinearLayout:
        """The NVMMA layout with the widest swizzle span, at most ``choose_nvmma_swizzle``'s,
        under which every slice the kernel takes of the buffer is one block of offsets: a
        ``[64, 64]`` fp16 half of a ``[64, 128]`` buffer keeps 128 bytes, a ``[32, 32]``
        half of ``[32, 64]`` gets 64 (so each half is a TMA box of its own swizzle)."""
        shape, bits = t.buf_shape, t.element.bits
        widest = choose_nvmma_swizzle(shape, bits)
        for span in (128, 64, 32, 0):
            if span > widest:
                continue
            layout = nvmma_shared(shape, bits, span)
            try:
                for s in slices:
                    slice_view(layout, s)
            except LayoutError:
                continue
            return layout
        return nvmma_shared(shape, bits, widest)  # no span fits: the slice reports why

    def slice(self, op: ops.LocalSliceOp, src: MemDescType, dst: MemDescType) -> LinearLayout:
        shape = dst.buf_shape
        _check_buffer(op, dst)
        for d, (v, n) in enumerate(zip(op.offsets, shape)):
            c = constant_of(v)
            if c is not None and int(c) % n:
                _fail(op, f"local_slice offset {c} of dimension {d} is not a multiple of the slice size {n}; "
                          "slices must be tile-aligned", "slice at multiples of the slice shape")
        try:
            return slice_view(src.layout, shape)
        except LayoutError as e:
            _fail(op, str(e).splitlines()[0], "slice whole swizzle atoms (rows, or columns in multiples of the "
                                              "swizzle span), or allocate the pieces as separate buffers")

    def reinterpret(self, op: ops.LocalReinterpretOp, src: MemDescType, dst: MemDescType) -> LinearLayout:
        if (src.element.bits, src.buf_shape) == (dst.element.bits, dst.buf_shape):
            return src.layout
        _check_buffer(op, dst)
        if not is_plain(src.layout, src.buf_shape, src.element.bits):
            _fail(op, "local_reinterpret with another element width or shape needs a row-major source; this view "
                      "is transposed, sliced or swizzled", "reinterpret the allocation itself (buf[i]), not a view")
        return plain_layout(dst.buf_shape, dst.element.bits)

    def control(self, op: Operation) -> None:
        if isinstance(op, ops.ForOp):
            body = op.body
            self.carry(op.inits, list(body.args[1:]) + list(op.results), len(body.args) - 1)
            self.block(body)
            self.check(op, body.ops[-1].operands, body.args[1:])
        elif isinstance(op, ops.IfOp):
            for region in op.regions:
                self.block(region.block)
            then_y, else_y = (r.block.ops[-1].operands for r in op.regions)
            self.carry(then_y, list(op.results), len(op.results))
            self.check(op, else_y, op.results)
        elif isinstance(op, ops.WhileOp):
            before, after = op.regions[0].block, op.regions[1].block
            self.carry(op.inits, list(before.args), len(before.args))
            self.block(before)
            cond = before.ops[-1].operands[1:]
            self.carry(cond, list(after.args) + list(op.results), len(after.args))
            self.block(after)
            self.check(op, after.ops[-1].operands, before.args)

    def carry(self, srcs: Any, dsts: list[Value], n: int) -> None:
        """``dsts[i]`` and ``dsts[i + n]`` (if any) take the layout of ``srcs[i]``."""
        for i, s in enumerate(srcs):
            if _is_smem(s):
                for d in dsts[i::n]:
                    self.set(d, s.type.layout)

    def check(self, op: Operation, yielded: Any, args: Any) -> None:
        for y, a in zip(yielded, args):
            if _is_smem(y) and y.type.layout != a.type.layout:
                _fail(op, "a loop-carried or branch-merged buffer has a different layout on different paths "
                          "(e.g. a transposed view on one, the buffer on the other)",
                      "carry the same kind of view on every path")


def run(module: Operation, options: PassOptions, *, swizzle: bool = True) -> Operation:
    """Assign buffer layouts in every kernel of ``module``. ``swizzle`` makes a swizzled
    layout the default for rank >= 2 -- the target's (``options.target.buffer_layout``: AMD's
    bank-conflict-avoiding LDS swizzle) or else NVIDIA's NVMMA one (TMA / wgmma); without
    it buffers are plain row-major. ``options.target.plain_async_copy_buffers`` keeps the
    allocations ``async_load`` writes row-major."""
    for func in module.funcs:
        _Assigner(func, swizzle, options).block(func.body)
    return module
