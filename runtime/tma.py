"""Host TMA descriptors: the rules a tensor descriptor's layout must follow, and its
``CUtensorMap`` encoded with ``cuTensorMapEncodeTiled``.

A kernel parameter ``tensordesc<fp16[64,64]>`` is a 128-byte ``CUtensorMap`` passed by
value (PTX ``.param .align 64 .b8 name[128]``). The launcher encodes it from the
``TensorDescriptor`` given at launch (its base tensor's address, shape and strides) and
what the compiler decided (metadata ``tma_params``: the element type, the block shape
and the shared-memory swizzle of the buffers the descriptor fills). An encoding depends
on nothing else, so encodings are kept by those values and a launch with the same
descriptor again costs one dictionary lookup.

The box (``boxDim``) is the block one TMA message moves, which is not always the whole
block: no box dimension may exceed 256 elements, and with a swizzle the inner box row is
the swizzle span (32, 64 or 128 bytes), so a block whose rows are wider is moved by
several messages (``tma_box``; Triton's ``getTMABlockShape``). The code generator issues
the messages accordingly; ``tma_params`` may give the box explicitly.

The checks mirror what Triton's ``TensorDescriptor`` asserts at construction and what
``cuTensorMapEncodeTiled`` requires (CUDA driver API, "Tensor Map Object Management"):
rank 1 to 5; the last stride 1 and every other stride a multiple of 16 bytes (below
2**40); dimensions from 1 to 2**32; a 16-byte aligned base address; block dimensions
powers of two; box dimensions at most 256 with the inner box row a multiple of 16 bytes
and, when swizzled, no wider than the swizzle span; NaN padding only for floats. They
raise ``ValueError`` naming the offending value; the launcher turns that into a
``LaunchError`` naming the argument.

cuda-python is imported at the first encoding, never at import. ``ENCODER`` is the
function that makes the 128 bytes; tests without a GPU replace it.
"""

from __future__ import annotations

import ctypes
import math
import operator
from typing import Any, Callable, Sequence

from .dtypes import ALIASES, SCALAR_FORMATS

MAX_RANK = 5
MAX_BOX = 256  # elements per box dimension (boxDim[i] <= 256)
DESCRIPTOR_BYTES = 128  # sizeof(CUtensorMap)
DESCRIPTOR_ALIGN = 64  # alignof(CUtensorMap), and the alignment of its kernel parameter
SWIZZLES = (0, 32, 64, 128)  # bytes; CU_TENSOR_MAP_SWIZZLE_NONE/32B/64B/128B
PADDINGS = ("zero", "nan")
L2_PROMOTION = "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"  # what Triton's launcher uses
_MAX_DIM = 1 << 32  # globalDim[i] <= 2**32
_MAX_STRIDE = 1 << 40  # globalStrides[i] < 2**40 bytes
_MAX_CACHED = 4096

# IR dtype names (tlxc.ir.types DType.ir_name, as tma_params gives them) that differ from the
# signature names of the runtime
_IR_NAMES = {"f8e4m3": "fp8e4nv", "f8e5m2": "fp8e5", "f8e4m3fnuz": "fp8e4b8", "f8e5m2fnuz": "fp8e5b16"}

# signature name -> CUtensorMapDataType member. TMA copies bits, so types without a TMA
# type of their own travel as the unsigned type of their width (int8 and fp8 as UINT8).
_TMA_TYPES = {
    "i1": "UINT8", "i8": "UINT8", "u8": "UINT8", "i16": "UINT16", "u16": "UINT16",
    "i32": "INT32", "u32": "UINT32", "i64": "INT64", "u64": "UINT64",
    "fp16": "FLOAT16", "bf16": "BFLOAT16", "fp32": "FLOAT32", "fp64": "FLOAT64",
    "fp8e4nv": "UINT8", "fp8e5": "UINT8", "fp8e4b8": "UINT8", "fp8e5b16": "UINT8",
}
# CUtensorMapDataType values (cuda.h); a descriptor built on the device writes them into its
# ``elemtype`` field (PTX ``tensormap.replace``), so they must be these
TMA_TYPE_CODES = {"UINT8": 0, "UINT16": 1, "UINT32": 2, "INT32": 3, "UINT64": 4, "INT64": 5, "FLOAT16": 6,
                  "FLOAT32": 7, "FLOAT32_FTZ": 8, "FLOAT64": 9, "BFLOAT16": 10}


def element_name(name: str) -> str:
    """The signature name (``fp16``) of an element type given by its IR name (``f16``,
    ``f8e4m3``) or signature name; ``ValueError`` if it has no TMA type."""
    sig = _IR_NAMES.get(name, ALIASES.get(name, name))
    if sig not in _TMA_TYPES:
        raise ValueError(f"element type {name!r} cannot be moved by TMA; types are "
                         + ", ".join(sorted(_TMA_TYPES)))
    return sig


def tma_type_code(name: str) -> int:
    """The ``CUtensorMapDataType`` value that moves elements of type ``name`` (IR or
    signature name); ``ValueError`` if TMA cannot move them."""
    return TMA_TYPE_CODES[_TMA_TYPES[element_name(name)]]


def element_bytes(sig: str) -> int:
    return SCALAR_FORMATS[sig][1]


def is_float(sig: str) -> bool:
    return sig.startswith("fp") or sig == "bf16"


def _ints(values: Any, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ValueError(f"{what} must be a sequence of integers, got {values!r}") from None


# -- the rules -------------------------------------------------------------------------------------

def check_layout(shape: Sequence[int], strides: Sequence[int], elem_bytes: int) -> tuple[tuple[int, ...],
                                                                                          tuple[int, ...]]:
    """Check a descriptor's global shape and strides (in elements, innermost last) and
    return them as tuples of ints."""
    shape, strides = _ints(shape, "shape"), _ints(strides, "strides")
    rank = len(shape)
    if not 1 <= rank <= MAX_RANK:
        raise ValueError(f"a tensor descriptor has rank 1 to {MAX_RANK}; this shape {list(shape)} has rank {rank}")
    if len(strides) != rank:
        raise ValueError(f"the shape {list(shape)} has rank {rank} but there are {len(strides)} strides "
                         f"{list(strides)}")
    for i, n in enumerate(shape):
        if not 1 <= n <= _MAX_DIM:
            raise ValueError(f"shape[{i}] is {n}; TMA needs every dimension from 1 to 2**32")
    if strides[-1] != 1:
        raise ValueError(f"the last stride (strides[{rank - 1}]) is {strides[-1]}, but TMA needs the innermost "
                         "dimension contiguous (stride 1); make the tensor contiguous (.contiguous()) or transpose it "
                         "so that its last dimension has stride 1")
    for i, s in enumerate(strides[:-1]):
        nbytes = s * elem_bytes
        if s < 0 or nbytes % 16:
            raise ValueError(f"strides[{i}] is {s} elements ({nbytes} bytes), which is not "
                             + ("allowed: TMA strides cannot be negative" if s < 0 else
                                f"a multiple of 16 bytes as TMA requires; make it a multiple of "
                                f"{16 // math.gcd(16, elem_bytes)} elements (e.g. pad the rows)"))
        if nbytes >= _MAX_STRIDE:
            raise ValueError(f"strides[{i}] is {s} elements ({nbytes} bytes); TMA strides must be below 2**40 bytes")
    return shape, strides


def check_block_shape(block_shape: Sequence[int], rank: int | None = None) -> tuple[int, ...]:
    """Check a block shape as Triton does when a descriptor is made (positive powers of
    two, one per dimension); the limits of one TMA message are checked at encoding."""
    block = _ints(block_shape, "block_shape")
    if rank is not None and len(block) != rank:
        raise ValueError(f"block_shape {list(block)} has {len(block)} dimensions but the tensor has {rank}")
    if not 1 <= len(block) <= MAX_RANK:
        raise ValueError(f"block_shape {list(block)} must have 1 to {MAX_RANK} dimensions")
    for i, b in enumerate(block):
        if b < 1 or b & (b - 1):
            raise ValueError(f"block_shape[{i}] is {b}; block dimensions must be positive powers of two")
    return block


def check_padding(padding: str, sig: str | None = None) -> None:
    if padding not in PADDINGS:
        raise ValueError(f"padding must be 'zero' or 'nan', got {padding!r}")
    if padding == "nan" and sig is not None and not is_float(sig):
        raise ValueError(f"padding='nan' needs a floating-point tensor; this one holds {sig}")


def check_base(address: int) -> None:
    if address % 16:
        raise ValueError(f"the base address 0x{address:x} is not 16-byte aligned, as TMA requires; pass a tensor "
                         "whose data starts at a multiple of 16 bytes (a fresh allocation, or .clone())")


def tma_box(block_shape: Sequence[int], elem_bytes: int, swizzle: int) -> tuple[int, ...]:
    """The box of one TMA message for a block: every dimension at most 256 elements and,
    with a swizzle, the inner one the swizzle span (so wider blocks take several messages)."""
    box = [min(int(b), MAX_BOX) for b in block_shape]
    if swizzle:
        box[-1] = min(box[-1], swizzle // elem_bytes)
    return tuple(box)


def check_box(box: Sequence[int], elem_bytes: int, swizzle: int) -> None:
    """``cuTensorMapEncodeTiled``'s rules for ``boxDim`` (with no interleave)."""
    if swizzle not in SWIZZLES:
        raise ValueError(f"swizzle must be one of {SWIZZLES} bytes, got {swizzle!r}")
    for i, b in enumerate(box):
        if not 1 <= b <= MAX_BOX:
            raise ValueError(f"box dimension {i} is {b}; TMA boxes have 1 to {MAX_BOX} elements per dimension")
    inner = box[-1] * elem_bytes
    if inner % 16:
        raise ValueError(f"the inner block dimension is {box[-1]} elements ({inner} bytes); TMA needs it to be a "
                         "multiple of 16 bytes (at least 16)")
    if swizzle and inner > swizzle:
        raise ValueError(f"the inner box dimension is {inner} bytes, wider than the {swizzle}-byte swizzle")


# -- encoding --------------------------------------------------------------------------------------

def _encode_with_driver(address: int, sig: str, shape: tuple[int, ...], strides: tuple[int, ...],
                        box: tuple[int, ...], swizzle: int, padding: str) -> bytes:
    """``cuTensorMapEncodeTiled`` through cuda-python; the 128 bytes of the CUtensorMap."""
    from . import driver

    driver.device()  # starts the driver (NoGPUError without one)
    drv = driver.bindings()
    elem = element_bytes(sig)
    rank = len(shape)
    # CUDA counts dimensions innermost first; strides of dimensions 1.. in bytes
    dims = [drv.cuuint64_t(n) for n in reversed(shape)]
    gstrides = [drv.cuuint64_t(s * elem) for s in reversed(strides[:-1])]
    boxdim = [drv.cuuint32_t(b) for b in reversed(box)]
    estrides = [drv.cuuint32_t(1)] * rank
    dtype = getattr(drv.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + _TMA_TYPES[sig])
    swz = getattr(drv.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + (f"{swizzle}B" if swizzle else "NONE"))
    fill = drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE if padding == "zero" else \
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
    l2 = getattr(drv.CUtensorMapL2promotion, L2_PROMOTION)
    err, tmap = drv.cuTensorMapEncodeTiled(dtype, rank, address, dims, gstrides, boxdim, estrides,
                                           drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, swz, l2, fill)
    if int(err):
        raise driver.cuda_error("cuTensorMapEncodeTiled", int(err),
                                f"encoding a TMA descriptor of {sig} at 0x{address:x}, shape {list(shape)}, strides "
                                f"{list(strides)} (elements), box {list(box)}, swizzle {swizzle}")
    return ctypes.string_at(tmap.getPtr(), DESCRIPTOR_BYTES)


# the function that makes the bytes: (address, element signature name, shape, strides in
# elements, box, swizzle bytes, padding) -> 128 bytes. Tests without a GPU replace it.
ENCODER: Callable[..., bytes] = _encode_with_driver
_cache: dict[tuple, bytes] = {}


def encode(address: int, sig: str, shape: Sequence[int], strides: Sequence[int], block_shape: Sequence[int],
           swizzle: int, padding: str = "zero", box: Sequence[int] | None = None) -> bytes:
    """The 128-byte CUtensorMap of the tensor at ``address`` (a GPU address) of element
    type ``sig`` (``fp16``, or the IR name ``f16``) with ``shape`` and ``strides`` (in
    elements, innermost last), for blocks of ``block_shape`` in shared memory swizzled by
    ``swizzle`` bytes. ``box`` overrides the box of one message (``tma_box`` by default).
    Every rule is checked first (``ValueError`` naming what is wrong); the bytes are kept
    by all of these values, so encoding the same descriptor again is a lookup."""
    sig = element_name(sig)
    elem = element_bytes(sig)
    address = operator.index(address)
    shape, strides = check_layout(shape, strides, elem)
    block = check_block_shape(block_shape, len(shape))
    check_padding(padding, sig)
    check_base(address)
    box = tma_box(block, elem, swizzle) if box is None else _ints(box, "box")
    if len(box) != len(block):
        raise ValueError(f"box {list(box)} has {len(box)} dimensions but the block has {len(block)}")
    check_box(box, elem, swizzle)
    key = (address, sig, shape, strides, box, swizzle, padding, ENCODER)
    data = _cache.get(key)
    if data is None:
        data = bytes(ENCODER(address, sig, shape, strides, box, swizzle, padding))
        if len(data) != DESCRIPTOR_BYTES:
            raise ValueError(f"a CUtensorMap is {DESCRIPTOR_BYTES} bytes; the encoder returned {len(data)}")
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        _cache[key] = data
    return data


def clear_cache() -> None:
    _cache.clear()
