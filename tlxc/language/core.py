"""What kernels see as ``tl``: dtypes, ``constexpr`` and the builtin functions.

Builtins here are names only: calling one outside a kernel is an error. Inside a
kernel the frontend recognizes the object and applies the semantic rule registered
under the same name in ``tlxc.frontend.semantics`` (a test checks that every builtin
has one). Keeping this module free of compiler code lets ``import tlxc.language`` stay
cheap and lets host code use the dtypes.
"""

from __future__ import annotations

import builtins
from typing import Any

from ..ir.types import BY_TL_NAME as _BY_TL_NAME
from ..ir.types import BY_TRITON_NAME as _BY_TRITON_NAME
from ..ir.types import (  # noqa: F401  (re-exported as tl.*)
    DType,
    PointerType,
    TensorDescType,
    TileType,
    bfloat16,
    float8e4b8,
    float8e4nv,
    float8e5,
    float8e5b16,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)


class NotYetDType:
    """A dtype of Triton's that tlxc cannot compile yet (``tl.float8e4b15``): it exists on
    the host, so that code listing dtypes (a test's parametrization) runs, and a kernel
    that names it is ``TLXC-NAME-002`` ("not supported by tlxc yet") at that line."""

    def __init__(self, tl_name: str, name: str) -> None:
        self.tl_name, self.name = tl_name, name

    def __repr__(self) -> str:
        return self.tl_name

    @property
    def refusal(self) -> str:
        """What a kernel that uses it is told."""
        return f"tl.{self.tl_name} is not supported by tlxc yet"


float8e4b15 = NotYetDType("float8e4b15", "fp8e4b15")  # E4M3 with bias 15: deprecated by Triton on Hopper
_NOT_YET_DTYPES = {d.name: d for d in (float8e4b15,)}


class _DTypeClass(type):
    """What makes ``tl.dtype`` behave like Triton's class: ``isinstance(x, tl.dtype)`` holds
    for every tlxc dtype, and ``tl.dtype("fp32")`` gives ``tl.float32``. The dtypes
    themselves are the IR's ``DType`` objects, so ``dtype`` only stands in for their class.
    Triton's name lists (``tl.dtype.SINT_TYPES``...) are here too."""

    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return isinstance(obj, (DType, NotYetDType))

    def __subclasscheck__(cls, sub: type) -> builtins.bool:
        return issubclass(sub, (DType, NotYetDType))

    def __call__(cls, name: Any) -> Any:  # type: ignore[override]
        name = name.value if isinstance(name, constexpr) else name
        if isinstance(name, str) and name in _NOT_YET_DTYPES:
            return _NOT_YET_DTYPES[name]
        found = _BY_TRITON_NAME.get(name) if isinstance(name, str) else None
        if found is None:
            hint = f"; tl.{name} is {_BY_TL_NAME[name].name!r}" if name in _BY_TL_NAME else ""
            raise ValueError(f"tl.dtype takes a dtype name ({', '.join(_BY_TRITON_NAME)}), got {name!r}{hint}")
        return found


class dtype(metaclass=_DTypeClass):
    """Triton's ``tl.dtype``: a type to test against and a way to name a dtype by Triton's
    spelling (``tl.dtype("bf16")``); see ``_DTypeClass``."""


class _BlockTypeClass(type):
    """What makes ``tl.block_type`` Triton's: ``tl.block_type(tl.float32, [16, 32])`` (element
    first, as Triton) builds the IR's ``TileType``, and ``isinstance(x.type,
    tl.block_type)`` holds for a tile's type."""

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return isinstance(obj, TileType)

    def __subclasscheck__(cls, sub: type) -> builtins.bool:
        return issubclass(sub, TileType)

    def __call__(cls, element_ty: Any, shape: Any) -> TileType:  # type: ignore[override]
        if not isinstance(element_ty, (DType, PointerType)):
            raise TypeError(f"tl.block_type(element_ty, shape): element_ty must be a dtype, got {element_ty!r}")
        dims = builtins.tuple(int(d.value if isinstance(d, constexpr) else d) for d in shape)
        if not dims or any(d <= 0 for d in dims):
            raise ValueError(f"tl.block_type: shape must be positive sizes, got {list(shape)!r}")
        return TileType(dims, element_ty)


class block_type(metaclass=_BlockTypeClass):
    """Triton's ``tl.block_type``: the type of a tile; see ``_BlockTypeClass``."""

    _tlxc_host = True  # kernels build these at compile time


bool = int1  # noqa: A001  (Triton spells int1 this way too)
float8e4m3fn = float8e4nv
float8e5m2 = float8e5


def pointer_type(element_ty: Any, address_space: int = 1) -> PointerType:
    """The type of a pointer to ``element_ty`` (for ``ptr.to(tl.pointer_type(...))``)."""
    return PointerType(element_ty, address_space)


pi32_t = pointer_type(int32)  # Triton's name for a pointer to int32


class _ConstQualifier:
    """``tl.const``: a pointer parameter annotated ``x: tl.const`` is read-only; a store or
    an atomic through it, or through a pointer computed from it, is a compile error."""

    def __repr__(self) -> str:
        return "tl.const"


const = _ConstQualifier()


class constexpr:
    """Marks a kernel parameter (``BLOCK: tl.constexpr``) or a local
    (``N: tl.constexpr = 4``) as a compile-time constant; ``tl.constexpr(v)`` wraps a
    value, also at module level for constants that kernels read."""

    def __init__(self, value: Any = None) -> None:
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __index__(self) -> int:
        return self.value.__index__()

    def __bool__(self) -> bool:
        return builtins.bool(self.value)

    def __eq__(self, other: Any) -> Any:
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self) -> int:
        return hash(self.value)


class constexpr_type:
    """Triton's type of a compile-time value: in a kernel, ``x.type`` of a constant ``x``
    is ``tl.constexpr_type(x)`` (``tl.static_assert(n.type == tl.constexpr_type(3))``,
    ``isinstance(s.type, tl.constexpr_type)``). Two are equal when their values are."""

    _tlxc_host = True  # kernels build these at compile time

    def __init__(self, value: Any) -> None:
        self.value = value.value if isinstance(value, constexpr) else value

    def __eq__(self, other: Any) -> builtins.bool:
        return isinstance(other, constexpr_type) and type(self.value) is type(other.value) \
            and builtins.bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash(("constexpr_type", self.value))

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value!r}]"


class tuple_type:
    """Triton's type of a tuple: in a kernel, ``t.type`` of a tuple is the tuple_type of
    its members' types (``tl.tuple_type([tl.int32, tl.int32])`` for two int32 scalars; a
    constant member's is its ``constexpr_type``). ``fields`` names the members of a named
    tuple (empty names otherwise)."""

    _tlxc_host = True

    def __init__(self, types: Any, fields: Any = None) -> None:
        self.types = builtins.list(types)
        self.fields = builtins.list(fields) if fields is not None else [""] * len(self.types)
        if len(self.fields) != len(self.types):
            raise ValueError(f"tl.tuple_type: {len(self.types)} types but {len(self.fields)} field names")

    def __eq__(self, other: Any) -> builtins.bool:
        return isinstance(other, tuple_type) and self.types == other.types and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(("tuple_type", builtins.tuple(map(str, self.types)), builtins.tuple(self.fields)))

    def __len__(self) -> int:
        return len(self.types)

    def __getitem__(self, i: Any) -> Any:
        return self.types[i]

    def __iter__(self) -> Any:
        return iter(self.types)

    def __repr__(self) -> str:
        return f"tuple_type[{', '.join(map(repr, self.types))}]"


class _DescTypeClass(type):
    """What makes ``tl.tensor_descriptor_type`` stand for the type of a descriptor, as
    ``tl.dtype`` does for dtypes: ``isinstance(desc.type, tl.tensor_descriptor_type)``
    holds for a kernel's descriptor, whose type is the IR's ``TensorDescType``."""

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return isinstance(obj, TensorDescType)

    def __subclasscheck__(cls, sub: type) -> builtins.bool:
        return issubclass(sub, TensorDescType)

    def __call__(cls, block_type: Any, shape_type: Any = None, strides_type: Any = None) -> TensorDescType:  # type: ignore[override]
        """Triton's constructor: the descriptor type for blocks of ``block_type`` (a
        ``tl.block_type``); the runtime shape and strides are not part of tlxc's type."""
        if not isinstance(block_type, TileType) or not isinstance(block_type.element, DType):
            raise TypeError(f"tl.tensor_descriptor_type takes the block's tl.block_type, got {block_type!r}")
        for what, t in (("shape_type", shape_type), ("strides_type", strides_type)):
            if t is not None and len(t) != len(block_type.tile_shape):
                raise ValueError(f"tl.tensor_descriptor_type: {what} has {len(t)} members for a block of rank "
                                 f"{len(block_type.tile_shape)}")
        return TensorDescType(builtins.tuple(block_type.tile_shape), block_type.element)


class tensor_descriptor_type(metaclass=_DescTypeClass):
    """Triton's ``tl.tensor_descriptor_type``: the type of a TMA descriptor in a kernel
    (``desc.type``); see ``_DescTypeClass``."""

    _tlxc_host = True


class _KernelType:
    """A type that only kernel values have. Kernels test for it at compile time
    (``isinstance(x, tl.tensor_descriptor)`` folds to a constant, as in Triton); the
    frontend decides membership from the value's IR type, since kernel values are never
    instances of these classes. Outside a kernel they cannot be created."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"tl.{type(self).__name__} values exist only inside a @tlxc.kernel function")


class tensor(_KernelType):
    """The type of a runtime value of a kernel: a scalar (also a pointer) or a tile."""


class tensor_descriptor_base(_KernelType):
    """The type of a TMA tensor descriptor, however it was made."""


class tensor_descriptor(tensor_descriptor_base):
    """The type of a TMA tensor descriptor: a kernel parameter that received a host
    ``tlxc.TensorDescriptor``, or the result of ``tl.make_tensor_descriptor``."""


class Builtin:
    """A ``tl.*`` function; only meaningful inside a ``@tlxc.kernel`` function."""

    def __init__(self, name: str, doc: str = "", namespace: str = "tl") -> None:
        self.name = name
        self.__name__ = name
        self.__doc__ = doc
        self.namespace = namespace
        # the name of its semantic rule: "load" for tl.load, "tlx.local_alloc" for tlx's
        self.rule = name if namespace == "tl" else f"{namespace}.{name}"

    @property
    def qualname(self) -> str:
        return f"{self.namespace}.{self.name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.qualname} can only be called inside a @tlxc.kernel function")

    def __repr__(self) -> str:
        return f"<{self.qualname}>"


class PropagateNan:
    """Whether ``tl.minimum`` / ``tl.maximum`` return NaN when an operand is NaN."""

    NONE = 0
    ALL = 0xFFFF


def _b(name: str, doc: str) -> Builtin:
    return Builtin(name, doc)


# -- indexing and creation ----------------------------------------------------------------
program_id = _b("program_id", "Index of this program along an axis of the grid.")
num_programs = _b("num_programs", "Number of programs along an axis of the grid.")
arange = _b("arange", "Consecutive integers [start, end) as an int32 tile.")
zeros = _b("zeros", "A tile of zeros.")
zeros_like = _b("zeros_like", "A tile of zeros shaped like another.")
full = _b("full", "A tile filled with one value.")
cast = _b("cast", "Convert a value to a dtype (like x.to).")
# -- memory -----------------------------------------------------------------------------
load = _b("load", "Load through a pointer or a tile of pointers.")
store = _b("store", "Store through a pointer or a tile of pointers.")
atomic_add = _b("atomic_add", "Atomically add to memory; returns the old values.")
atomic_max = _b("atomic_max", "Atomic maximum in memory; returns the old values.")
atomic_min = _b("atomic_min", "Atomic minimum in memory; returns the old values.")
atomic_and = _b("atomic_and", "Atomic bitwise and in memory; returns the old values.")
atomic_or = _b("atomic_or", "Atomic bitwise or in memory; returns the old values.")
atomic_xor = _b("atomic_xor", "Atomic bitwise xor in memory; returns the old values.")
atomic_xchg = _b("atomic_xchg", "Atomically exchange memory for a value; returns the old values.")
atomic_cas = _b("atomic_cas", "Atomic compare-and-swap; returns the old values.")
make_tensor_descriptor = _b("make_tensor_descriptor", "A TMA tensor descriptor built on the device.")
load_tensor_descriptor = _b("load_tensor_descriptor", "desc.load(offsets): a tensor descriptor's block at offsets.")
store_tensor_descriptor = _b("store_tensor_descriptor", "desc.store(offsets, value): store a block through a "
                             "tensor descriptor.")
# -- shapes -----------------------------------------------------------------------------
reshape = _b("reshape", "Same elements, new shape.")
view = _b("view", "Same elements, new shape (older spelling of reshape).")
ravel = _b("ravel", "Flatten to one dimension.")
trans = _b("trans", "Permute dimensions (swap the two of a 2-D tile by default).")
permute = _b("permute", "Permute dimensions.")
expand_dims = _b("expand_dims", "Insert dimensions of size 1.")
squeeze = _b("squeeze", "Remove a dimension of size 1.")
unsqueeze = _b("unsqueeze", "Insert a dimension of size 1 (tl.expand_dims with one axis).")
broadcast_to = _b("broadcast_to", "Broadcast to a shape.")
broadcast = _b("broadcast", "Broadcast two values to a common shape.")
join = _b("join", "Stack two tiles along a new last dimension.")
split = _b("split", "Split a tile whose last dimension is 2.")
cat = _b("cat", "Concatenate two tiles along dimension `dim` (0 by default).")
# -- arithmetic -------------------------------------------------------------------------
where = _b("where", "Elementwise select.")
add = _b("add", "x + y as a function (Triton's tl.add).")
sub = _b("sub", "x - y as a function (Triton's tl.sub).")
mul = _b("mul", "x * y as a function (Triton's tl.mul).")
# Triton's limit on a tile's elements (tlxc refuses larger tiles at the line that makes one)
TRITON_MAX_TENSOR_NUMEL = 1048576
minimum = _b("minimum", "Elementwise minimum.")
maximum = _b("maximum", "Elementwise maximum.")
clamp = _b("clamp", "Clamp to [min, max].")
fma = _b("fma", "Fused multiply-add.")
cdiv = _b("cdiv", "Ceiling division.")
exp = _b("exp", "Elementwise e**x.")
exp2 = _b("exp2", "Elementwise 2**x.")
log = _b("log", "Natural logarithm.")
log2 = _b("log2", "Base-2 logarithm.")
sqrt = _b("sqrt", "Square root.")
sqrt_rn = _b("sqrt_rn", "Square root, rounded to nearest.")
rsqrt = _b("rsqrt", "1 / sqrt(x).")
abs = _b("abs", "Absolute value.")  # noqa: A001
sin = _b("sin", "Sine.")
cos = _b("cos", "Cosine.")
floor = _b("floor", "Round down.")
ceil = _b("ceil", "Round up.")
erf = _b("erf", "Error function.")
sigmoid = _b("sigmoid", "1 / (1 + exp(-x)).")
div_rn = _b("div_rn", "Division rounded to nearest.")
fdiv = _b("fdiv", "Floating-point division.")
umulhi = _b("umulhi", "High half of the double-width product of two 32- or 64-bit integers, read as unsigned.")
interleave = _b("interleave", "Two tensors interleaved along their last dimension.")
make_block_ptr = _b("make_block_ptr", "A pointer to a block of a strided tensor (load/store with boundary_check).")
advance = _b("advance", "A block pointer moved by offsets.")
to_tensor = _b("to_tensor", "A number as a runtime scalar (a tensor stays as it is).")
swizzle2d = _b("swizzle2d", "Renumber the (i, j) of a row-major grid so that groups of size_g rows run "
                            "column-major.")
# -- reductions and dot -----------------------------------------------------------------
sum = _b("sum", "Sum along an axis.")  # noqa: A001
max = _b("max", "Maximum along an axis.")  # noqa: A001
min = _b("min", "Minimum along an axis.")  # noqa: A001
argmax = _b("argmax", "Index of the maximum along an axis.")
argmin = _b("argmin", "Index of the minimum along an axis.")
xor_sum = _b("xor_sum", "Bitwise xor along an axis.")
reduce = _b("reduce", "Reduce one tile or a tuple of tiles along an axis with a @jit combine function.")  # noqa: A001
cumsum = _b("cumsum", "Inclusive running sum along an axis.")
cumprod = _b("cumprod", "Inclusive running product along an axis.")
associative_scan = _b("associative_scan", "Inclusive scan along an axis with a @jit combine function.")
histogram = _b("histogram", "Count the values 0..num_bins-1 of a 1-D integer tile (int32 result of num_bins).")
gather = _b("gather", "Read src at the index tile's coordinates along an axis.")
dot = _b("dot", "Matrix product a @ b (+ acc).")
dot_scaled = _b("dot_scaled", "Matrix product of microscaled (mx) operands: (a * a_scale) @ (b * b_scale) + acc.")
# -- control and hints ------------------------------------------------------------------
range = _b("range", "A loop range with pipelining and unrolling hints.")  # noqa: A001
static_range = _b("static_range", "A loop range unrolled at compile time.")
map_elementwise = _b("map_elementwise", "Apply a scalar @jit function to every element of tiles.")
static_assert = _b("static_assert", "Compile-time assertion.")
condition = _b("condition", "``while tl.condition(c, disable_licm=False):`` -- Triton's wrapper of a while loop's "
               "condition; tlxc moves no code out of while loops, so disable_licm changes nothing.")
static_print = _b("static_print", "Print at compile time.")
device_assert = _b("device_assert", "Runtime assertion.")
device_print = _b("device_print", "Print values at run time, element by element, with program id and index.")
inline_asm_elementwise = _b("inline_asm_elementwise", "Inline PTX applied to every element (NVIDIA targets).")
debug_barrier = _b("debug_barrier", "A barrier of every thread of the program (__syncthreads).")
multiple_of = _b("multiple_of", "Promise that values are multiples of a number.")
max_contiguous = _b("max_contiguous", "Promise that runs of values are consecutive.")
max_constancy = _b("max_constancy", "Promise that runs of values are equal.")
assume = _b("assume", "Promise that a condition holds.")

BUILTINS: dict[str, Builtin] = {
    name: obj for name, obj in list(globals().items()) if isinstance(obj, Builtin)
}
