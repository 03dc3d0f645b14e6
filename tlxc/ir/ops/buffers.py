"""TLX buffer ops: allocate buffers in shared (or tensor) memory, take views of them,
and move tiles between them and registers.

A buffer value has a ``MemDescType``. ``local_alloc`` gives an array of ``num`` buffers;
``local_view`` picks one (the index may be a runtime value). Views (``local_view``,
``local_slice``, ``local_trans``, ``local_reinterpret``) move no data: they describe the
same bytes differently. ``local_load`` / ``local_store`` are the only ops here that touch
memory.
"""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand, VariadicOperands
from ..core import Operation, register
from ..effects import read, write
from ..types import STORAGES, AliasSpecType, DType, MemDescType, TileType
from .base import fail


def memdesc(op: Operation, value_type: object, what: str, array: bool | None = None) -> MemDescType:
    """``value_type`` as a MemDescType, or a verification error naming ``what``."""
    if not isinstance(value_type, MemDescType):
        fail(op, f"{what} must be a buffer (memdesc), got {value_type}")
    assert isinstance(value_type, MemDescType)
    if array is True and not value_type.num:
        fail(op, f"{what} must be an array of buffers, got one buffer {value_type}")
    if array is False and value_type.num:
        fail(op, f"{what} must be one buffer, got an array {value_type} (index it first)")
    return value_type


def i32_scalar(op: Operation, v: object, what: str) -> None:
    t = getattr(v, "type", None)
    if not isinstance(t, DType) or not t.is_int() or t.is_bool():
        fail(op, f"{what} must be an integer scalar, got {t}")


@register
class StorageAliasSpecOp(Operation):
    """A ``storage_alias_spec``: ``size`` bytes of ``storage`` that the allocations made
    with ``local_alloc(reuse=spec)`` overlay, each at the byte placement its ``alias``
    attribute gives. The frontend computes ``size`` (the user's ``buffer_size_bytes``,
    or the extent of the placements) and the placements from ``set_buffer_overlap``, so
    the interpreter and the shared-memory allocator read the same numbers. ``fixed``: the
    user gave the size (``buffer_size_bytes``). ``smem_offset``: where ``smem-alloc``
    placed it (-1 before)."""

    NAME = "storage_alias_spec"
    ATTRS = {"storage": "smem", "size": Operation.REQUIRED, "fixed": False, "smem_offset": -1}
    PURE = True

    storage = Attr[str]()
    size = Attr[int]()
    fixed = Attr[bool]()
    smem_offset = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if not isinstance(self.result.type, AliasSpecType):
            fail(self, f"the result must be alias_spec, got {self.result.type}")
        if self.storage not in STORAGES:
            fail(self, f"unknown storage {self.storage!r}")
        if not isinstance(self.size, int) or self.size < 0:
            fail(self, f"size must be a byte count, got {self.size!r}")


@register
class LocalAllocOp(Operation):
    """``num`` buffers of ``buf_shape`` elements (the result type says which). With the
    optional ``reuse`` operand the buffers overlay the bytes of that allocation, or of a
    ``storage_alias_spec``: then ``alias = [offset, step]`` places buffer ``i`` at byte
    ``offset + i * step`` of the spec's store. ``pinned`` marks a layout the user chose
    (it is never changed by the compiler). ``smem_offset``: the byte offset in the
    kernel's shared memory, written by the ``smem-alloc`` pass (-1 before it ran)."""

    NAME = "local_alloc"
    OPERANDS = ("?reuse",)
    ATTRS = {"pinned": False, "alias": (), "smem_offset": -1}
    PURE = False

    reuse = OptionalOperand()
    pinned = Attr[bool]()
    alias = Attr[tuple[int, ...]]()
    smem_offset = Attr[int]()

    def alias_placement(self) -> tuple[int, int] | None:
        """``(offset, step)`` in the spec's bytes when this allocation overlays a spec."""
        reuse = self.reuse
        if reuse is None or not isinstance(reuse.type, AliasSpecType):
            return None
        off, step = self.alias
        return int(off), int(step)

    def verify(self) -> None:
        super().verify()
        t = memdesc(self, self.result.type, "the result", array=True)
        if t.storage not in STORAGES:
            fail(self, f"unknown storage {t.storage!r}")
        if any(d <= 0 for d in t.buf_shape) or not t.buf_shape:
            fail(self, f"buffer shape must be non-empty and positive, got {t.buf_shape}")
        reuse = self.reuse
        if reuse is not None and isinstance(reuse.type, AliasSpecType):
            spec = getattr(reuse, "op", None)
            if isinstance(spec, StorageAliasSpecOp) and spec.storage != t.storage:
                fail(self, f"reuse must be in the same storage ({t.storage}), got a spec of {spec.storage}")
            alias = tuple(self.alias)
            if len(alias) != 2 or any(not isinstance(x, int) or x < 0 for x in alias):
                fail(self, f"an allocation in a storage_alias_spec needs alias = [offset, step], got {alias}")
            if isinstance(spec, StorageAliasSpecOp) and \
                    alias[0] + (t.num - 1) * alias[1] + t.nbytes > spec.size:
                fail(self, f"placement {list(alias)} of {t.num} buffers of {t.nbytes} bytes overflows the spec's "
                           f"{spec.size} bytes")
        elif reuse is not None:
            r = memdesc(self, reuse.type, "reuse")
            if r.storage != t.storage:
                fail(self, f"reuse must be in the same storage ({t.storage}), got {r.storage}")
        if self.alias and (reuse is None or not isinstance(reuse.type, AliasSpecType)):
            fail(self, "alias placements are for allocations in a storage_alias_spec")
        if self.pinned and t.layout is None:
            fail(self, "a pinned allocation needs a layout")


@register
class LocalViewOp(Operation):
    """Buffer ``index`` of an array of buffers (no bounds check on the GPU)."""

    NAME = "local_view"
    OPERANDS = ("buf", "index")
    PURE = True

    buf = Operand()
    index = Operand()

    def verify(self) -> None:
        super().verify()
        src = memdesc(self, self.buf.type, "the source", array=True)
        i32_scalar(self, self.index, "the index")
        if self.result.type != src.single():
            fail(self, f"result must be {src.single()}, got {self.result.type}")


@register
class LocalSliceOp(Operation):
    """The sub-buffer of result shape at ``offsets`` (one per dimension) of one buffer."""

    NAME = "local_slice"
    OPERANDS = ("buf", "*offsets")
    PURE = True

    buf = Operand()
    offsets = VariadicOperands()

    def verify(self) -> None:
        super().verify()
        src = memdesc(self, self.buf.type, "the source", array=False)
        dst = memdesc(self, self.result.type, "the result", array=False)
        offsets = self.offsets
        if len(offsets) != len(src.buf_shape) or len(dst.buf_shape) != len(src.buf_shape):
            fail(self, f"slice of a rank-{len(src.buf_shape)} buffer needs that many offsets and dims")
        for v in offsets:
            i32_scalar(self, v, "an offset")
        if any(d > s for d, s in zip(dst.buf_shape, src.buf_shape)) or dst.element != src.element:
            fail(self, f"slice {dst} does not fit in {src}")


@register
class LocalTransOp(Operation):
    """The same buffer with its dimensions permuted by ``perm``."""

    NAME = "local_trans"
    OPERANDS = ("buf",)
    ATTRS = {"perm": Operation.REQUIRED}
    PURE = True

    buf = Operand()
    perm = Attr[tuple[int, ...]]()

    def verify(self) -> None:
        super().verify()
        src = memdesc(self, self.buf.type, "the source", array=False)
        dst = memdesc(self, self.result.type, "the result", array=False)
        perm = tuple(self.perm)
        if sorted(perm) != list(range(len(src.buf_shape))):
            fail(self, f"perm {perm} is not a permutation of the {len(src.buf_shape)} dims")
        if dst.buf_shape != tuple(src.buf_shape[p] for p in perm) or dst.element != src.element:
            fail(self, f"result must be the permuted {src}, got {dst}")


@register
class LocalReinterpretOp(Operation):
    """The bytes of one buffer, or of a whole array of buffers (which lie back to back),
    seen as one buffer of another element type and shape (same or fewer bytes)."""

    NAME = "local_reinterpret"
    OPERANDS = ("buf",)
    PURE = True

    buf = Operand()

    def verify(self) -> None:
        super().verify()
        src = memdesc(self, self.buf.type, "the source")
        dst = memdesc(self, self.result.type, "the result", array=False)
        if dst.nbytes > src.nbytes * max(src.num, 1) or dst.storage != src.storage:
            fail(self, f"{dst} does not fit in the bytes of {src}")


@register
class LocalLoadOp(Operation):
    """Read one buffer into a register tile. ``token`` orders the read after the async
    copy that produced it. ``pinned``: the result's layout was chosen by the user."""

    NAME = "local_load"
    MEMORY = (read("buf"),)
    OPERANDS = ("buf", "?token")
    ATTRS = {"pinned": False}
    PURE = False

    buf = Operand()
    token = OptionalOperand()
    pinned = Attr[bool]()

    def verify(self) -> None:
        super().verify()
        src = memdesc(self, self.buf.type, "the source", array=False)
        t = self.result.type
        if not isinstance(t, TileType) or t.shape != src.buf_shape or t.scalar != src.element:
            fail(self, f"result must be a tile of {src.element} of shape {src.buf_shape}, got {t}")


@register
class LocalStoreOp(Operation):
    """Write a register tile into one buffer."""

    NAME = "local_store"
    MEMORY = (write("buf"),)
    OPERANDS = ("buf", "value")
    NUM_RESULTS = 0
    PURE = False

    buf = Operand()
    value = Operand()

    def verify(self) -> None:
        super().verify()
        dst = memdesc(self, self.buf.type, "the destination", array=False)
        t = self.value.type
        if not isinstance(t, TileType) or t.shape != dst.buf_shape or t.scalar != dst.element:
            fail(self, f"value must be a tile of {dst.element} of shape {dst.buf_shape}, got {t}")


@register
class ThreadIdOp(Operation):
    """The hardware thread index along ``axis`` (``%tid``); not partition-relative."""

    NAME = "thread_id"
    ATTRS = {"axis": Operation.REQUIRED}
    PURE = True

    axis = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if self.axis not in (0, 1, 2) or str(self.result.type) != "i32":
            fail(self, "thread_id takes axis 0, 1 or 2 and gives an i32")


@register
class SpecialRegisterOp(Operation):
    """A value the hardware keeps per SM or per GPU: ``smid`` (i32, the SM this program
    runs on) or ``globaltimer`` (i64, nanoseconds), Triton's ``tl.extra.cuda.smid()`` and
    ``globaltimer()``."""

    NAME = "special_register"
    PURE = False  # read again wherever it is written: the timer moves, programs move between SMs
    ATTRS = {"register": Operation.REQUIRED}
    KINDS = {"smid": "i32", "globaltimer": "i64"}

    register = Attr[str]()

    def verify(self) -> None:
        super().verify()
        want = self.KINDS.get(self.register)
        if want is None:
            fail(self, f"register must be one of {sorted(self.KINDS)}, got {self.register!r}")
        if str(self.result.type) != want:
            fail(self, f"{self.register} gives an {want}")


@register
class Clock64Op(Operation):
    """A 64-bit cycle counter."""

    NAME = "clock64"
    PURE = False

    def verify(self) -> None:
        super().verify()
        if str(self.result.type) != "i64":
            fail(self, "clock64 gives an i64")
