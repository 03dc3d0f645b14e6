"""The matrix instructions of the NVIDIA targets, as data: the ``mma.sync`` forms the
``tl.dot`` path uses, the ``wgmma.mma_async`` shapes and types, and the encoding of the
64-bit shared-memory matrix descriptor that wgmma reads its operands through.

Every table row and constant names the PTX ISA section it comes from (``PTX_ISA`` +
anchor). The register *layouts* of these instructions are layout algebra and live with
the other layouts (``tlxc.ir.layout.nvidia``: ``mma_v2_accumulator``, ``dot_operand``;
``tlxc.ir.layout.wgmma``: ``wgmma_accumulator``, ``wgmma_operand_a``); the facts here are
what the code generator checks and spells. Shared passes never import this module: they
get what they need through a parameter the code generator passes in
(``dot_to_wgmma.run(..., instr_k=wgmma_instr_k)``).

dtype names are tlxc's IR names (``f16``, ``bf16``, ``f32``, ``f8e4m3``, ``f8e5m2``,
``i8``, ``u8``); the wgmma functions also take the aliases the layout code used
(``fp16``, ``e4m3``, ``int8``...), and ``f32`` operands mean tf32 there.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.layout.linear import LayoutError
from ...ir.layout.wgmma import WARPGROUP_ROWS

PTX_ISA = "https://docs.nvidia.com/cuda/parallel-thread-execution/"

# ----------------------------------------------------------------------------- mma.sync
MMA_SECTION = PTX_ISA + "#warp-level-matrix-instructions-mma"
# the shapes and types per PTX version: the table of "Matrix Shape" under mma
MMA_SHAPES_SECTION = PTX_ISA + "#warp-level-matrix-shape"


@dataclass(frozen=True)
class MmaSync:
    """One ``mma.sync.aligned.m16n8k{k}.row.col.{acc}.{ab}.{ab}.{acc}`` form."""

    k: int
    ab: str                     # PTX type of A and B
    acc: str                    # PTX type of C and D
    min_ptx: tuple[int, int]    # PTX ISA version that introduced it (sm_80+ for all but fp8: sm_89)
    section: str = MMA_SECTION

    m: int = 16
    n: int = 8

    def text(self) -> str:
        return f"mma.sync.aligned.m{self.m}n{self.n}k{self.k}.row.col.{self.acc}.{self.ab}.{self.ab}.{self.acc}"

    @property
    def a_registers(self) -> int:
        """32-bit registers of A per thread: 16 x (32 bytes of K) over 32 lanes."""
        return 4

    @property
    def b_registers(self) -> int:
        return 2

    @property
    def c_registers(self) -> int:
        return 4


# (IR operand type, IR accumulator type) -> instruction. The f16-accumulating fp8 forms
# exist but are not used: an f16 accumulator of fp8 operands runs the f32 form
# (``lower_mma._work_acc``).
MMA_SYNC: dict[tuple[str, str], MmaSync] = {
    ("f16", "f32"): MmaSync(16, "f16", "f32", (6, 4)),
    ("f16", "f16"): MmaSync(16, "f16", "f16", (6, 4)),  # C and D: two .f16x2 registers
    ("bf16", "f32"): MmaSync(16, "bf16", "f32", (7, 0)),
    ("f32", "f32"): MmaSync(8, "tf32", "f32", (7, 0)),
    ("i8", "i32"): MmaSync(32, "s8", "s32", (7, 0)),
    ("u8", "i32"): MmaSync(32, "u8", "s32", (7, 0)),
    ("f8e4m3", "f32"): MmaSync(32, "e4m3", "f32", (8, 4)),
    ("f8e5m2", "f32"): MmaSync(32, "e5m2", "f32", (8, 4)),
}

# ----------------------------------------------------------------------------- wgmma
WGMMA_SECTION = PTX_ISA + "#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async"
WGMMA_SHAPE_SECTION = PTX_ISA + "#asynchronous-warpgroup-level-matrix-shape"
WGMMA_M = WARPGROUP_ROWS  # every instruction is m64 (the accumulator layout is built for it)
WGMMA_MAX_N = 256
_FLOAT_N = tuple(range(8, WGMMA_MAX_N + 1, 8))
# Integer wgmma has fewer N values: 8, 16, 24, then multiples of 16 (ptxas agrees).
_INT_N = (8, 16, 24) + tuple(range(32, WGMMA_MAX_N + 1, 16))


@dataclass(frozen=True)
class WgmmaType:
    """One operand type of ``wgmma.mma_async`` (section "Matrix shape" and the data-type
    table of ``wgmma.mma_async``)."""

    name: str
    ptx: str                          # the type in the instruction's suffix
    k: int                            # K of one instruction: 32 bytes of K
    bits: int
    accumulators: tuple[str, ...]     # legal accumulator types, the default first
    n_values: tuple[int, ...]
    transposable: bool                # may be MN-major in shared memory (imm-trans-a/b)
    section: str = WGMMA_SHAPE_SECTION


WGMMA_TYPES: dict[str, WgmmaType] = {t.name: t for t in (
    WgmmaType("f16", "f16", 16, 16, ("f32", "f16"), _FLOAT_N, True),
    WgmmaType("bf16", "bf16", 16, 16, ("f32",), _FLOAT_N, True),
    WgmmaType("tf32", "tf32", 8, 32, ("f32",), _FLOAT_N, False),
    WgmmaType("f8e4m3", "e4m3", 32, 8, ("f32", "f16"), _FLOAT_N, False),
    WgmmaType("f8e5m2", "e5m2", 32, 8, ("f32", "f16"), _FLOAT_N, False),
    WgmmaType("i8", "s8", 32, 8, ("i32",), _INT_N, False),
    WgmmaType("u8", "u8", 32, 8, ("i32",), _INT_N, False),
)}
_ALIASES = {"fp16": "f16", "float16": "f16", "bfloat16": "bf16", "f32": "tf32", "fp32": "tf32",
            "float32": "tf32", "e4m3": "f8e4m3", "fp8e4nv": "f8e4m3", "e5m2": "f8e5m2", "fp8e5": "f8e5m2",
            "s8": "i8", "int8": "i8", "uint8": "u8"}
_ACC_PTX = {"f32": "f32", "f16": "f16", "i32": "s32"}
_ACC_ALIASES = {"fp32": "f32", "float32": "f32", "fp16": "f16", "float16": "f16", "s32": "i32", "int32": "i32"}


def wgmma_type(elem_type: str) -> WgmmaType:
    """The table row of an operand type (aliases accepted), or a LayoutError listing them."""
    name = _ALIASES.get(elem_type, elem_type)
    if name not in WGMMA_TYPES:
        raise LayoutError(f"wgmma does not take {elem_type!r} operands; it takes "
                          f"{', '.join(WGMMA_TYPES)} (f32 operands run as tf32)")
    return WGMMA_TYPES[name]


def wgmma_instr_k(elem_type: str) -> int | None:
    """K of one wgmma instruction for an operand type, None when wgmma does not take it
    (what ``dot_to_wgmma`` asks through its ``instr_k`` parameter)."""
    try:
        return wgmma_type(elem_type).k
    except LayoutError:
        return None


def _legal_summary() -> str:
    return ("M a multiple of 64 (64 rows per instruction per warpgroup); N a multiple of 8 in [8, 256] "
            "(for i8/u8: 8, 16, 24 or a multiple of 16 up to 256); K a multiple of 16 for f16/bf16, 8 for tf32, "
            "32 for f8e4m3/f8e5m2/i8/u8; tf32, fp8 and int8 operands K-major (only f16/bf16 may be MN-major); "
            "accumulators f32 or f16 for f16 and fp8 inputs, f32 for bf16/tf32, i32 for i8/u8")


def legal_wgmma_shapes(elem_type: str | int, is_float: bool | None = None) -> tuple[tuple[int, int, int], ...]:
    """Every ``(m, n, k)`` instruction shape for an operand type, given by name (``"f16"``,
    ``"f8e4m3"``, ``"i8"``...) or as ``(bits, is_float)`` (16 float: f16/bf16, 32 float:
    tf32, 8 float: fp8, 8 integer: int8)."""
    if isinstance(elem_type, int):
        by_bits = {(16, True): "f16", (32, True): "tf32", (8, True): "f8e4m3", (8, False): "i8"}
        if (elem_type, bool(is_float)) not in by_bits:
            raise LayoutError(f"wgmma has no {elem_type}-bit {'float' if is_float else 'integer'} operands; "
                              f"legal: {_legal_summary()}")
        elem_type = by_bits[(elem_type, bool(is_float))]
    t = wgmma_type(elem_type)
    return tuple((WGMMA_M, n, t.k) for n in t.n_values)


@dataclass(frozen=True)
class WgmmaInstr:
    """One ``wgmma.mma_async.sync.aligned.m64n{n}k{k}.{acc}.{a}.{b}`` and how often a tile
    repeats it: ``m_reps`` instructions along M (over the whole tile: each M-warpgroup
    takes ``m_reps / warpgroups`` of them) and ``k_steps`` along K."""

    m: int
    n: int
    k: int
    m_reps: int
    k_steps: int
    a_type: str
    b_type: str
    acc_type: str
    a_in_registers: bool
    trans_a: int  # imm-trans-a: 1 for an M-major A in shared memory (16-bit types only)
    trans_b: int  # imm-trans-b: 1 for an N-major B

    @property
    def shape_name(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}"

    @property
    def ptx_types(self) -> str:
        """The type suffix, e.g. ``f32.bf16.bf16`` or ``s32.s8.u8``."""
        return ".".join((_ACC_PTX[self.acc_type], WGMMA_TYPES[self.a_type].ptx, WGMMA_TYPES[self.b_type].ptx))

    @property
    def mnemonic(self) -> str:
        return f"wgmma.mma_async.sync.aligned.{self.shape_name}.{self.ptx_types}"

    @property
    def elem_bits(self) -> int:
        return WGMMA_TYPES[self.a_type].bits

    @property
    def takes_trans(self) -> bool:
        """Whether the instruction has imm-trans operands (f16/bf16 only)."""
        return WGMMA_TYPES[self.a_type].transposable

    @property
    def accumulator_registers(self) -> int:
        """Length of the ``{d...}`` vector: N/2 32-bit registers (N/4 ``.f16x2`` for f16)."""
        return self.n // 2 if self.acc_type != "f16" else self.n // 4


def check_wgmma_shape(m: int, n: int, k: int, elem_type: str, a_in_registers: bool = False, a_major: str = "K",
                      b_major: str = "K", acc_type: str | None = None, b_type: str | None = None) -> WgmmaInstr:
    """The instruction for ``[m, k] x [k, n]``, or a LayoutError that lists the legal
    shapes. ``m`` is the whole tile's M (``m_reps = m / 64`` are shared out among the
    M-warpgroups), ``n`` the N of one instruction (the tile's N per N-warpgroup, or a
    chunk of it). ``a_major`` / ``b_major`` are ``"K"`` or ``"MN"`` (``operand_major`` of
    the shared buffers; ignored for A in registers); ``acc_type`` defaults to f32 (i32
    for int8); ``b_type`` to ``elem_type``."""
    ta = wgmma_type(elem_type)
    tb = wgmma_type(b_type) if b_type is not None else ta
    a, b = ta.name, tb.name
    legal = f"legal: {_legal_summary()}"
    mixed_ok = {a, b} <= {"f8e4m3", "f8e5m2"} or {a, b} <= {"i8", "u8"} or a == b
    if not mixed_ok:
        raise LayoutError(f"wgmma cannot multiply {a} by {b}: operand types must match (fp8 formats and the "
                          f"signedness of int8 may differ); {legal}")
    problems = []
    if m <= 0 or m % WGMMA_M:
        problems.append(f"M={m} is not a multiple of {WGMMA_M}")
    if n not in ta.n_values:
        problems.append(f"N={n} is not one of the instruction's N values")
    if k <= 0 or k % ta.k:
        problems.append(f"K={k} is not a multiple of {ta.k} (the K of one {a} instruction)")
    for what, major in (("A", a_major), ("B", b_major)):
        if major not in ("K", "MN"):
            problems.append(f"{what} major-ness {major!r} is neither 'K' nor 'MN'")
        elif major == "MN" and not ta.transposable and not (what == "A" and a_in_registers):
            problems.append(f"{what} is MN-major, but {a} operands must be K-major (transpose the buffer, e.g. "
                            "load it with a K-major TMA box or local_trans a K-major one)")
    acc = _ACC_ALIASES.get(acc_type, acc_type) if acc_type else ta.accumulators[0]
    if acc not in ta.accumulators:
        problems.append(f"a {acc} accumulator is not available for {a} inputs (use {' or '.join(ta.accumulators)})")
    if problems:
        raise LayoutError(f"wgmma cannot compute [{m}, {k}] x [{k}, {n}] of {a}: " + "; ".join(problems)
                          + f". {legal}")
    trans_a = int(a_major == "MN" and not a_in_registers)
    return WgmmaInstr(WGMMA_M, n, ta.k, m // WGMMA_M, k // ta.k, a, b, acc, a_in_registers,
                      trans_a, int(b_major == "MN"))


# ----------------------------------------------------------------------------- matrix descriptor
DESCRIPTOR_SECTION = PTX_ISA + "#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor"
# (first bit, width) of each field; addresses and byte offsets are stored >> 4
DESCRIPTOR_FIELDS: dict[str, tuple[int, int]] = {
    "start_address": (0, 14),
    "lbo": (16, 14),          # leading dimension byte offset
    "sbo": (32, 14),          # stride dimension byte offset
    "base_offset": (49, 3),   # where the swizzle pattern starts; 0 for buffers aligned to it
    "swizzle": (62, 2),
}
# swizzle span in bytes -> the value of bits 62-63
SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}
# an LBO / SBO the instruction never uses: the PTX ISA says "assumed 1" (x16 bytes)
# (PTX_ISA + "#asynchronous-warpgroup-level-leading-dimension-byte-offset")
UNUSED_STRIDE = 16


def encode_descriptor(start_address: int, lbo: int, sbo: int, swizzle: int, base_offset: int = 0) -> int:
    """The 64-bit wgmma matrix descriptor (``DESCRIPTOR_SECTION``): bits 0-13
    ``start_address >> 4``, 16-29 ``lbo >> 4``, 32-45 ``sbo >> 4``, 49-51 the base
    offset, 62-63 the swizzle mode (0 none, 1 128B, 2 64B, 3 32B). Addresses and strides
    are bytes (shared-window addresses), multiples of 16 below 256 KiB; ``swizzle`` is
    the swizzle span in bytes (0, 32, 64, 128)."""
    if swizzle not in SWIZZLE_MODE:
        raise LayoutError(f"swizzle must be one of {tuple(SWIZZLE_MODE)} bytes, not {swizzle}")
    for name, v in (("start address", start_address), ("leading byte offset", lbo), ("stride byte offset", sbo)):
        if v % 16 or not 0 <= v < (1 << 18):
            raise LayoutError(f"descriptor {name} {v} is not a multiple of 16 in [0, 256 KiB)")
    if not 0 <= base_offset < 8:
        raise LayoutError(f"descriptor base offset {base_offset} is not in [0, 8)")
    f = DESCRIPTOR_FIELDS
    return ((start_address >> 4) << f["start_address"][0] | (lbo >> 4) << f["lbo"][0] | (sbo >> 4) << f["sbo"][0]
            | base_offset << f["base_offset"][0] | SWIZZLE_MODE[swizzle] << f["swizzle"][0])


def decode_descriptor(desc: int) -> dict[str, int]:
    """The fields of ``encode_descriptor``, in bytes (``swizzle`` as a span)."""
    raw = {k: (desc >> lo) & ((1 << w) - 1) for k, (lo, w) in DESCRIPTOR_FIELDS.items()}
    spans = {v: k for k, v in SWIZZLE_MODE.items()}
    return {"start_address": raw["start_address"] << 4, "lbo": raw["lbo"] << 4, "sbo": raw["sbo"] << 4,
            "base_offset": raw["base_offset"], "swizzle": spans[raw["swizzle"]]}
