"""Types of the tile IR.

Every SSA value has one of these types:

* ``DType`` -- a scalar element type (``i32``, ``f16``, ``f8e4m3``...). A value of this
  type is a single scalar (a kernel argument, ``program_id``...).
* ``PointerType`` -- a pointer to a scalar element type, ``ptr<f32>``.
* ``TileType`` -- a tile: a static shape whose elements are ``DType`` or ``PointerType``,
  ``tile<128x64xf16>``; ``layout`` is filled in by layout assignment (issue 3) and is
  ``None`` until then.

The same ``DType`` objects are what kernels see as ``tl.float16`` and friends, so they also
carry the small query API that Triton kernels use (``is_floating()``,
``primitive_bitwidth``...). They are plain data: nothing here knows about a target.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar


class Kind(IntEnum):
    """Kind order used by Triton's scalar promotion rule: bool < uint < int < float."""

    BOOL = 0
    UINT = 1
    INT = 2
    FLOAT = 3


class Type:
    """Base of all IR types."""

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def scalar(self) -> "DType | PointerType":
        """Element type: the type itself for scalars, the element type for tiles."""
        return self  # type: ignore[return-value]

    def is_ptr(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False


@dataclass(frozen=True, eq=True)
class DType(Type):
    """A scalar element type. ``ir_name`` is the IR spelling (``f32``), ``tl_name`` the
    ``tl.*`` attribute (``float32``), ``sig_name`` the signature spelling (``fp32``);
    ``name`` is Triton's ``dtype.name`` (``fp32``, ``uint32``), which user code reads."""

    ir_name: str
    kind: Kind
    bits: int
    tl_name: str
    sig_name: str
    # floating-point formats: exponent and mantissa bits, whether the format has inf
    exp_bits: int = 0
    man_bits: int = 0

    def __str__(self) -> str:
        return self.ir_name

    def __repr__(self) -> str:
        return self.tl_name

    @property
    def name(self) -> str:
        # Triton's spelling: kernels and Triton's test helpers write ``getattr(np, d.name)``
        # and ``d.name in ("fp16", "bf16")``. Compiler code reads ``ir_name`` instead.
        return self.sig_name if self.kind == Kind.FLOAT else self.tl_name

    # -- the query API of Triton's ``tl.dtype`` -------------------------------------------
    @property
    def primitive_bitwidth(self) -> int:
        return self.bits

    @property
    def itemsize(self) -> int:
        return max(1, self.bits // 8)

    @property
    def int_bitwidth(self) -> int:
        return self.bits

    @property
    def fp_mantissa_width(self) -> int:
        """The explicit mantissa bits of a float format (Triton's ``tl.dtype`` query)."""
        return self.man_bits

    @property
    def exponent_bias(self) -> int:
        """The exponent bias of a float format; the fnuz fp8 formats (AMD's ``e4b8`` and
        ``e5b16``) have one more than the IEEE-style bias."""
        bias = (1 << (self.exp_bits - 1)) - 1
        return bias + 1 if self.ir_name in ("f8e4m3fnuz", "f8e5m2fnuz") else bias

    @property
    def element_ty(self) -> "DType":
        return self

    @property
    def scalar(self) -> "DType":
        return self

    def is_floating(self) -> bool:
        return self.kind == Kind.FLOAT

    def is_int(self) -> bool:
        return self.kind in (Kind.INT, Kind.UINT, Kind.BOOL)

    def is_bool(self) -> bool:
        return self.kind == Kind.BOOL

    def is_int1(self) -> bool:
        return self.kind == Kind.BOOL

    def is_int_signed(self) -> bool:
        return self.kind == Kind.INT

    def is_int_unsigned(self) -> bool:
        return self.kind in (Kind.UINT, Kind.BOOL)

    def is_standard_floating(self) -> bool:
        return self.ir_name in ("f16", "bf16", "f32", "f64")

    def is_fp8(self) -> bool:
        return self.kind == Kind.FLOAT and self.bits == 8

    def is_fp16(self) -> bool:
        return self.ir_name == "f16"

    def is_bf16(self) -> bool:
        return self.ir_name == "bf16"

    def is_fp32(self) -> bool:
        return self.ir_name == "f32"

    def is_fp64(self) -> bool:
        return self.ir_name == "f64"

    def is_fp8e4nv(self) -> bool:
        return self.ir_name == "f8e4m3"

    def is_fp8e5(self) -> bool:
        return self.ir_name == "f8e5m2"

    def is_fp8e4b8(self) -> bool:
        return self.ir_name == "f8e4m3fnuz"

    def is_fp8e5b16(self) -> bool:
        return self.ir_name == "f8e5m2fnuz"

    def kind_value(self) -> Kind:
        return self.kind

    def to(self, *_: Any, **__: Any) -> Any:  # pragma: no cover - guard for misuse
        raise TypeError(f"{self.tl_name} is a dtype, not a tensor")


@dataclass(frozen=True, eq=True)
class PointerType(Type):
    """A global (address space 1) or shared (3) pointer to ``pointee``."""

    pointee: "DType | PointerType"
    address_space: int = 1

    def __str__(self) -> str:
        if self.address_space == 1:
            return f"ptr<{self.pointee}>"
        return f"ptr<{self.pointee}, {self.address_space}>"

    def __repr__(self) -> str:
        return f"pointer<{self.pointee!r}>"

    @property
    def element_ty(self) -> "DType | PointerType":
        return self.pointee

    @property
    def scalar(self) -> "PointerType":
        return self

    @property
    def ir_name(self) -> str:
        return str(self)

    @property
    def name(self) -> str:
        # Triton's ``pointer_type.name``: ``pointer<fp32>`` (no address space)
        return f"pointer<{self.pointee.name}>"

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    @property
    def bits(self) -> int:
        return 64

    @property
    def itemsize(self) -> int:
        return 8

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False


ElementType = "DType | PointerType"


@dataclass(frozen=True, eq=True)
class TileType(Type):
    """A tile of ``element`` with a static ``shape`` (rank >= 1)."""

    tile_shape: tuple[int, ...]
    element: "DType | PointerType"
    layout: Any = None

    def __str__(self) -> str:
        dims = "x".join(str(d) for d in self.tile_shape)
        if self.layout is None:
            return f"tile<{dims}x{self.element}>"
        return f"tile<{dims}x{self.element}, {self.layout}>"

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tile_shape

    @property
    def scalar(self) -> "DType | PointerType":
        return self.element

    @property
    def numel(self) -> int:
        n = 1
        for d in self.tile_shape:
            n *= d
        return n

    def is_block(self) -> bool:
        return True

    def is_ptr(self) -> bool:
        return False

    def with_element(self, element: "DType | PointerType") -> "TileType":
        return TileType(self.tile_shape, element, self.layout)

    def with_shape(self, shape: tuple[int, ...]) -> "TileType":
        return TileType(tuple(shape), self.element, None)


STORAGES = ("smem", "tmem")


@dataclass(frozen=True, eq=True)
class MemDescType(Type):
    """Buffers in on-chip memory: TLX's buffered tensor (a "memdesc").

    ``buf_shape`` is the shape of one buffer. ``num > 0`` makes the value an *array* of
    ``num`` buffers (what ``local_alloc`` gives); indexing it gives a single buffer
    (``num == 0``). ``layout`` maps the bytes of one buffer to its elements: a
    ``LinearLayout`` from ``offset`` (in elements) to ``dim0..``, chosen by the
    buffer-layout pass or pinned by the user, and None until then. Printed as
    ``memdesc<128x64xf16, smem, num=2>``.
    """

    buf_shape: tuple[int, ...]
    element: DType
    num: int = 0
    storage: str = "smem"
    layout: Any = None

    def __str__(self) -> str:
        dims = "x".join(str(d) for d in self.buf_shape)
        parts = [f"{dims}x{self.element}", self.storage]
        if self.num:
            parts.append(f"num={self.num}")
        if self.layout is not None:
            parts.append(str(self.layout))
        return f"memdesc<{', '.join(parts)}>"

    @property
    def scalar(self) -> DType:
        return self.element

    @property
    def numel(self) -> int:
        n = 1
        for d in self.buf_shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        """Bytes of one buffer."""
        return self.numel * self.element.bits // 8

    def single(self) -> "MemDescType":
        """One buffer of this array."""
        return MemDescType(self.buf_shape, self.element, 0, self.storage, self.layout)

    def with_layout(self, layout: Any) -> "MemDescType":
        return MemDescType(self.buf_shape, self.element, self.num, self.storage, layout)


@dataclass(frozen=True, eq=True)
class BarrierType(Type):
    """mbarriers in shared memory: an array of ``num`` (``num == 0``: one barrier).
    ``warp`` marks barriers from ``alloc_warp_barrier``, on which every thread arrives.
    Printed ``mbarrier<4>``, ``mbarrier<0, warp>``."""

    num: int = 0
    warp: bool = False

    def __str__(self) -> str:
        return f"mbarrier<{self.num}{', warp' if self.warp else ''}>"

    def single(self) -> "BarrierType":
        return BarrierType(0, self.warp)


@dataclass(frozen=True, eq=True)
class TokenType(Type):
    """Orders asynchronous work (cp.async groups); carries no data. Printed ``token``."""

    def __str__(self) -> str:
        return "token"


@dataclass(frozen=True, eq=True)
class AliasSpecType(Type):
    """A ``storage_alias_spec``: the backing store that allocations made with
    ``local_alloc(reuse=spec)`` overlay; carries no data of its own. Printed
    ``alias_spec``; its storage and size are attributes of the op that makes it."""

    def __str__(self) -> str:
        return "alias_spec"


@dataclass(frozen=True, eq=True)
class TensorDescType(Type):
    """A TMA tensor descriptor for tiles of ``block_shape`` elements of ``element``.
    ``swizzle`` (bytes: 0, 32, 64 or 128) is the shared-memory swizzle the descriptor is
    encoded with; None until the buffer-layout pass picks it. Printed
    ``tensordesc<64x64xf16>`` or ``tensordesc<64x64xf16, swizzle=128>``."""

    block_shape: tuple[int, ...]
    element: DType
    swizzle: int | None = None

    def __str__(self) -> str:
        dims = "x".join(str(d) for d in self.block_shape)
        extra = "" if self.swizzle is None else f", swizzle={self.swizzle}"
        return f"tensordesc<{dims}x{self.element}{extra}>"

    @property
    def scalar(self) -> DType:
        return self.element

    @property
    def block_bytes(self) -> int:
        n = 1
        for d in self.block_shape:
            n *= d
        return n * self.element.bits // 8

    def with_swizzle(self, swizzle: int | None) -> "TensorDescType":
        return TensorDescType(self.block_shape, self.element, swizzle)


@dataclass(frozen=True, eq=True)
class DescPtrType(Type):
    """Global memory for ``num`` TMA descriptors of 128 bytes each
    (``tlx.allocate_tensor_descriptor``; indexing gives one, ``num == 1``), which
    ``make_tensor_descriptor`` writes and ``reinterpret_tensor_descriptor`` reads.
    Printed ``tensordesc_ptr<2>``."""

    num: int = 1

    def __str__(self) -> str:
        return f"tensordesc_ptr<{self.num}>"


token = TokenType()
alias_spec = AliasSpecType()


def _f(name: str, tl: str, sig: str, bits: int, e: int, m: int) -> DType:
    return DType(name, Kind.FLOAT, bits, tl, sig, e, m)


int1 = DType("i1", Kind.BOOL, 1, "int1", "i1")
int8 = DType("i8", Kind.INT, 8, "int8", "i8")
int16 = DType("i16", Kind.INT, 16, "int16", "i16")
int32 = DType("i32", Kind.INT, 32, "int32", "i32")
int64 = DType("i64", Kind.INT, 64, "int64", "i64")
uint8 = DType("u8", Kind.UINT, 8, "uint8", "u8")
uint16 = DType("u16", Kind.UINT, 16, "uint16", "u16")
uint32 = DType("u32", Kind.UINT, 32, "uint32", "u32")
uint64 = DType("u64", Kind.UINT, 64, "uint64", "u64")
float16 = _f("f16", "float16", "fp16", 16, 5, 10)
bfloat16 = _f("bf16", "bfloat16", "bf16", 16, 8, 7)
float32 = _f("f32", "float32", "fp32", 32, 8, 23)
float64 = _f("f64", "float64", "fp64", 64, 11, 52)
# OCP fp8 formats (NVIDIA and newer AMD chips) and the AMD "fnuz" flavours (older CDNA chips).
float8e4nv = _f("f8e4m3", "float8e4nv", "fp8e4nv", 8, 4, 3)
float8e5 = _f("f8e5m2", "float8e5", "fp8e5", 8, 5, 2)
float8e4b8 = _f("f8e4m3fnuz", "float8e4b8", "fp8e4b8", 8, 4, 3)
float8e5b16 = _f("f8e5m2fnuz", "float8e5b16", "fp8e5b16", 8, 5, 2)

ALL_DTYPES: tuple[DType, ...] = (
    int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, float8e4nv, float8e5, float8e4b8, float8e5b16,
)
BY_NAME: dict[str, DType] = {d.ir_name: d for d in ALL_DTYPES}
BY_TL_NAME: dict[str, DType] = {d.tl_name: d for d in ALL_DTYPES}
BY_SIG_NAME: dict[str, DType] = {d.sig_name: d for d in ALL_DTYPES}
# Triton's ``dtype.name`` spellings, the names ``tl.dtype(name)`` takes
BY_TRITON_NAME: dict[str, DType] = {d.name: d for d in ALL_DTYPES}
# spellings accepted in signatures beside Triton's own
BY_SIG_NAME.update({"u1": int1, "fp8e4m3": float8e4nv, "fp8e5m2": float8e5,
                    "f16": float16, "f32": float32, "f64": float64})


def as_tlxc_dtype(dt: Any) -> "DType | None":
    """``dt`` as a tlxc dtype: itself, or the one of the same name for a dtype of Triton's
    (``triton.reinterpret(t, tl.uint64)`` wraps a tensor with one); None otherwise."""
    if isinstance(dt, DType):
        return dt
    if type(dt).__module__.startswith("triton."):
        name = getattr(dt, "name", None)
        return BY_TRITON_NAME.get(name) if isinstance(name, str) else None
    return None


def pointer(pointee: "DType | PointerType", address_space: int = 1) -> PointerType:
    return PointerType(pointee, address_space)


def tile(shape: tuple[int, ...] | list[int], element: "DType | PointerType") -> TileType:
    return TileType(tuple(int(d) for d in shape), element)


def with_shape(element: "DType | PointerType", shape: tuple[int, ...]) -> Type:
    """``element`` if ``shape`` is empty (a scalar), else a tile of it."""
    return TileType(tuple(shape), element) if shape else element


T = TypeVar("T", bound=Type)


def narrow(t: Type, cls: type[T]) -> T:
    """``t`` as the type class ``cls``, where the verifier (or a check just before) has
    established it: ``narrow(v.type, TileType).layout``. A value of another type is a
    compiler bug, raised as a TypeError (the pass runner reports it as an internal error
    naming the pass), never a silent misread."""
    if not isinstance(t, cls):
        raise TypeError(f"expected a {cls.__name__}, got {t}")
    return t


def element_of(t: Type) -> "DType | PointerType":
    return t.scalar


def numpy_dtype(d: DType) -> Any:
    """The numpy dtype that holds ``d`` (ml_dtypes for bf16 and fp8)."""
    import numpy as np

    if d.kind == Kind.FLOAT and d.ir_name not in ("f16", "f32", "f64"):
        import ml_dtypes

        return np.dtype({
            "bf16": ml_dtypes.bfloat16,
            "f8e4m3": ml_dtypes.float8_e4m3fn,
            "f8e5m2": ml_dtypes.float8_e5m2,
            "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
            "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
        }[d.ir_name])
    return np.dtype({
        "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
        "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
        "f16": "float16", "f32": "float32", "f64": "float64",
    }[d.ir_name])


def from_numpy_dtype(dt: Any) -> DType:
    import numpy as np

    dt = np.dtype(dt)
    for d in ALL_DTYPES:
        if numpy_dtype(d) == dt:
            return d
    raise KeyError(f"no tlxc dtype for numpy dtype {dt}")
