"""Asynchronous copies into shared memory: per-thread ``cp.async`` (``async_load``,
grouped by ``async_commit_group`` and retired by ``async_wait_group``) and TMA (bulk
tensor copies through a tensor descriptor, completing on an mbarrier for loads and in
bulk groups for stores)."""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand, VariadicOperands
from ..core import Operation, register
from ..effects import CTA_BARRIER, Sync, read, write
from ..types import DescPtrType, PointerType, TensorDescType, TileType, TokenType
from .barriers import barrier
from .base import fail, is_i1
from .buffers import i32_scalar, memdesc
from .memory import CACHE_MODIFIERS, EVICTION_POLICIES

STORE_REDUCTIONS = ("", "add", "min", "max", "and", "or", "xor")


def _token_result(op: Operation) -> None:
    if not isinstance(op.result.type, TokenType):
        fail(op, f"result must be a token, got {op.result.type}")


def _tokens(op: AsyncCommitGroupOp | AsyncWaitGroupOp) -> None:
    for v in op.tokens:
        if not isinstance(v.type, TokenType):
            fail(op, f"operands must be tokens, got {v.type}")


def _pendings(op: AsyncWaitGroupOp | TmaStoreWaitOp) -> None:
    if not isinstance(op.pendings, int) or op.pendings < 0:
        fail(op, f"pendings must be a non-negative integer, got {op.pendings}")


@register
class AsyncLoadOp(Operation):
    """Start copying the pointees of a tile of pointers into one buffer of the same
    shape; masked-off elements get ``other`` (zero without it)."""

    NAME = "async_load"
    MEMORY = (write("buf", "cp_async"),)  # at issue: the copy lands while others may still read
    OPERANDS = ("ptr", "buf", "?mask", "?other")
    ATTRS = {"cache": "", "eviction": ""}

    ptr = Operand()
    buf = Operand()
    mask = OptionalOperand()
    other = OptionalOperand()
    cache = Attr[str]()
    eviction = Attr[str]()

    def verify(self) -> None:
        super().verify()
        ptr = self.ptr.type
        buf = memdesc(self, self.buf.type, "the destination", array=False)
        if not isinstance(ptr, TileType) or not isinstance(ptr.scalar, PointerType):
            fail(self, f"async_load needs a tile of pointers, got {ptr}")
        if ptr.shape != buf.buf_shape or ptr.scalar.pointee != buf.element:
            fail(self, f"pointers {ptr} do not match the buffer {buf}")
        mask = self.mask
        if mask is not None and (not is_i1(mask.type) or mask.type.shape != ptr.shape):
            fail(self, f"mask must be i1 of shape {ptr.shape}, got {mask.type}")
        other = self.other
        if other is not None and (other.type.shape != ptr.shape or other.type.scalar != buf.element):
            fail(self, f"other must be {buf.element} of shape {ptr.shape}, got {other.type}")
        if self.cache not in CACHE_MODIFIERS or self.eviction not in EVICTION_POLICIES:
            fail(self, "unknown cache modifier or eviction policy")
        _token_result(self)


@register
class AsyncCommitGroupOp(Operation):
    """Close the group of async loads issued since the last commit."""

    NAME = "async_commit_group"
    OPERANDS = ("*tokens",)

    tokens = VariadicOperands()

    def verify(self) -> None:
        super().verify()
        _tokens(self)
        _token_result(self)


@register
class AsyncWaitGroupOp(Operation):
    """Wait until at most ``pendings`` committed groups are still in flight (then the data
    is visible to every thread of the CTA)."""

    NAME = "async_wait_group"
    OPERANDS = ("*tokens",)
    ATTRS = {"pendings": Operation.REQUIRED}
    SYNC = (Sync("wait"), CTA_BARRIER)  # the copies of every thread are visible to all: a CTA barrier follows
    RETIRES = ("async_load",)
    RETIRES_ALL_AT_ZERO = True

    tokens = VariadicOperands()
    pendings = Attr[int]()

    def verify(self) -> None:
        super().verify()
        _tokens(self)
        _pendings(self)
        _token_result(self)


def descriptor(op: Operation, t: object) -> TensorDescType:
    if not isinstance(t, TensorDescType):
        fail(op, f"expected a tensor descriptor, got {t}")
    assert isinstance(t, TensorDescType)
    return t


def _coords(op: Operation, coords: list, rank: int) -> None:
    if len(coords) != rank:
        fail(op, f"a rank-{rank} descriptor needs {rank} coordinates, got {len(coords)}")
    for c in coords:
        i32_scalar(op, c, "a coordinate")


def descriptor_ptr(op: Operation, v: object) -> DescPtrType:
    t = getattr(v, "type", None)
    if not isinstance(t, DescPtrType):
        fail(op, f"expected a tensordesc_ptr, got {t}")
    assert isinstance(t, DescPtrType)
    return t


@register
class AllocTensorDescOp(Operation):
    """Global memory for the result type's ``num`` descriptors of 128 bytes
    (``tlx.allocate_tensor_descriptor``), this program's own."""

    NAME = "tensordesc_alloc"

    def verify(self) -> None:
        super().verify()
        descriptor_ptr(self, self.result)


@register
class TensorDescPtrIndexOp(Operation):
    """Descriptor ``index`` of an allocation (``ptrs[i]``: 128 bytes further per index)."""

    NAME = "tensordesc_ptr_index"
    OPERANDS = ("ptr", "index")
    PURE = True

    ptr = Operand()
    index = Operand()

    def verify(self) -> None:
        super().verify()
        descriptor_ptr(self, self.ptr)
        i32_scalar(self, self.index, "the index")
        if descriptor_ptr(self, self.result).num != 1:
            fail(self, f"the result is one descriptor, got {self.result.type}")


@register
class ReinterpretTensorDescOp(Operation):
    """The descriptor stored at ``desc_ptr``, typed by the result
    (``tlx.reinterpret_tensor_descriptor``). Not pure: it reads what
    ``make_tensor_descriptor`` wrote, so it may not move above that write."""

    NAME = "reinterpret_tensor_descriptor"
    OPERANDS = ("desc_ptr",)

    desc_ptr = Operand()

    def verify(self) -> None:
        super().verify()
        descriptor_ptr(self, self.desc_ptr)
        descriptor(self, self.result.type)


@register
class MakeTensorDescOp(Operation):
    """A descriptor of the tensor at ``base`` with ``shape`` then ``strides`` (in elements,
    innermost last, the last stride 1) as operands, built on the device: in global scratch
    of its own, or written to ``desc_ptr`` when given (``tlx.make_tensor_descriptor``)."""

    NAME = "make_tensor_descriptor"
    OPERANDS = ("base", "*dims", "?desc_ptr")
    ATTRS = {"padding": "zero"}

    base = Operand()
    dims = VariadicOperands()
    desc_ptr = OptionalOperand()
    padding = Attr[str]()

    def verify(self) -> None:
        super().verify()
        d = descriptor(self, self.result.type)
        base = self.base.type
        if not isinstance(base, PointerType) or base.pointee != d.element:
            fail(self, f"base must be a pointer to {d.element}, got {base}")
        dims = self.dims
        at = self.desc_ptr
        if at is not None:
            descriptor_ptr(self, at)
        if len(dims) != 2 * len(d.block_shape):
            fail(self, f"a rank-{len(d.block_shape)} descriptor needs {len(d.block_shape)} sizes and strides")
        for v in dims:
            i32_scalar(self, v, "a size or stride")
        if self.padding not in ("zero", "nan"):
            fail(self, f"padding must be 'zero' or 'nan', got {self.padding!r}")


@register
class UnpackTensorDescOp(Operation):
    """The fields of a host tensor descriptor parameter on a target without TMA: its base
    pointer, then its sizes and its strides (elements, i32), which the launch packs in the
    parameter's place (runtime/args.py). ``host-descriptors`` feeds them to a
    ``make_tensor_descriptor``, so the descriptor's loads and stores become pointer
    accesses."""

    PURE = True
    NAME = "unpack_tensor_descriptor"
    OPERANDS = ("desc",)
    NUM_RESULTS = None

    desc = Operand()

    def verify(self) -> None:
        super().verify()
        d = self.desc.type
        if not isinstance(d, TensorDescType):
            fail(self, f"desc must be a tensor descriptor, got {d}")
        rank = len(d.block_shape)
        if len(self.results) != 1 + 2 * rank:
            fail(self, f"a rank-{rank} descriptor unpacks to a base pointer, {rank} sizes and {rank} strides")
        base = self.results[0].type
        if not isinstance(base, PointerType) or base.pointee != d.element:
            fail(self, f"the base must be a pointer to {d.element}, got {base}")
        for r in self.results[1:]:
            i32_scalar(self, r, "a size or stride")


@register
class TmaLoadOp(Operation):
    """Start a TMA copy of the block at ``coords`` into one buffer; its bytes complete on
    ``bar``."""

    NAME = "tma_load"
    OPERANDS = ("desc", "buf", "bar", "*coords", "?pred", "?cta_mask")
    # multicast: the cluster ranks whose buffer (and barrier) receive the block too (); empty: this CTA's only
    # (unless cta_mask: an i32 whose bit r names rank r, for targets known only at run time)
    ATTRS = {"eviction": "", "multicast": ()}
    MEMORY = (write("buf", "async"),)  # completes through ``bar``, not in program order
    NUM_RESULTS = 0

    desc = Operand()
    buf = Operand()
    bar = Operand()
    coords = VariadicOperands()
    pred = OptionalOperand()
    cta_mask = OptionalOperand()
    eviction = Attr[str]()
    multicast = Attr[tuple[int, ...]]()

    def multicasts(self) -> bool:
        """Whether the block lands in other CTAs of the cluster too."""
        return bool(self.multicast) or self.cta_mask is not None

    def verify(self) -> None:
        super().verify()
        d = descriptor(self, self.desc.type)
        buf = memdesc(self, self.buf.type, "the destination", array=False)
        barrier(self, self.bar.type)
        if buf.element != d.element or buf.numel != _numel(d.block_shape):
            fail(self, f"buffer {buf} does not hold a {d} block")
        _coords(self, self.coords, len(d.block_shape))
        pred = self.pred
        if pred is not None and (not is_i1(pred.type) or pred.type.shape):
            fail(self, f"pred must be a scalar i1, got {pred.type}")
        mask = self.cta_mask
        if mask is not None:
            i32_scalar(self, mask, "cta_mask")
            if self.multicast:
                fail(self, "multicast ranks are given either as the attribute or as cta_mask, not both")


@register
class TmaStoreOp(Operation):
    """Start a TMA copy of one buffer to the block at ``coords`` (optionally reducing into
    it); completes in a bulk group."""

    NAME = "tma_store"
    OPERANDS = ("desc", "buf", "*coords")
    ATTRS = {"reduce": "", "eviction": ""}
    MEMORY = (read("buf", "async"),)
    NUM_RESULTS = 0

    desc = Operand()
    buf = Operand()
    coords = VariadicOperands()
    reduce = Attr[str]()
    eviction = Attr[str]()

    def verify(self) -> None:
        super().verify()
        d = descriptor(self, self.desc.type)
        buf = memdesc(self, self.buf.type, "the source", array=False)
        if buf.element != d.element or buf.numel != _numel(d.block_shape):
            fail(self, f"buffer {buf} does not hold a {d} block")
        _coords(self, self.coords, len(d.block_shape))
        if self.reduce not in STORE_REDUCTIONS:
            fail(self, f"unknown store reduction {self.reduce!r}")


@register
class TmaStoreWaitOp(Operation):
    """Wait until at most ``pendings`` TMA store groups still read shared memory."""

    NAME = "tma_store_wait"
    ATTRS = {"pendings": Operation.REQUIRED}
    SYNC = (Sync("wait"),)
    RETIRES = ("tma_store",)
    # pendings=0 frees every source buffer: the issuing thread waits for the reads of its
    # bulk groups and the code generators follow with a barrier of the partition, so a
    # staging buffer is dead after it (shared-memory allocation reuses its bytes).
    RETIRES_ALL_AT_ZERO = True
    NUM_RESULTS = 0

    pendings = Attr[int]()

    def verify(self) -> None:
        super().verify()
        _pendings(self)


@register
class DescriptorLoadOp(Operation):
    """The block at ``coords`` as a register tile (out-of-bounds elements are zero)."""

    NAME = "descriptor_load"
    OPERANDS = ("desc", "*coords")

    desc = Operand()
    coords = VariadicOperands()

    def verify(self) -> None:
        super().verify()
        d = descriptor(self, self.desc.type)
        _coords(self, self.coords, len(d.block_shape))
        t = self.result.type
        if not isinstance(t, TileType) or t.shape != d.block_shape or t.scalar != d.element:
            fail(self, f"result must be a tile of {d.element} of shape {d.block_shape}, got {t}")


@register
class DescriptorStoreOp(Operation):
    """Store a register tile to the block at ``coords`` (out-of-bounds elements are
    dropped)."""

    NAME = "descriptor_store"
    OPERANDS = ("desc", "value", "*coords")
    NUM_RESULTS = 0

    desc = Operand()
    value = Operand()
    coords = VariadicOperands()

    def verify(self) -> None:
        super().verify()
        d = descriptor(self, self.desc.type)
        t = self.value.type
        if not isinstance(t, TileType) or t.shape != d.block_shape or t.scalar != d.element:
            fail(self, f"value must be a tile of {d.element} of shape {d.block_shape}, got {t}")
        _coords(self, self.coords, len(d.block_shape))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n

