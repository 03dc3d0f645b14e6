"""How a ``tl.dot`` runs on an AMD matrix core -- the pure half of ``lower_dot``: which
instruction, which accumulator and operand layouts, and which registers each MFMA / WMMA
reads and accumulates into. Nothing here emits code, so tests check every answer
against the layouts element by element (``tests/codegen/test_amd_dot.py``).

Instruction (``choose``): ``mma_table.choose_mma`` for the operand dtypes in the chip's
own names -- fp16, bf16, int8 (i32 accumulator), the chip's fp8 flavour (fnuz on gfx942,
OCP on gfx950 and gfx1250), and fp32: ``input_precision="tf32"`` takes gfx942's
``xf32`` instructions; chips without them round the operands to tf32 (to nearest even,
as the interpreter does) and run the fp32 instruction, which gives the same products;
``ieee`` (and tf32x3 / bf16x3 / bf16x6, which the interpreter runs as fp32) run the
fp32 instruction on the operands as they are -- exact fp32 products with an fp32 sum,
as Triton's AMD back end does. Anything else (fp64, uint8, fp16 accumulators, tiles below
16, a K that is not whole instruction steps) is ``None``: the FMA loop of ``lower_dot``.
An fp8 dot whose K is too short for the chip's fp8 instructions (gfx1250's start at
K = 64) runs the fp16 instruction instead, its operands widened after the LDS read:
every fp8 value (either flavour, e4m3 or e5m2) is exactly an fp16 value.

Accumulator layout: MFMA version 3 (gfx942) / 4 (gfx950) or WMMA version 3 (gfx1250),
``transposed`` as Triton makes it for its global stores (each lane then holds 4 (MFMA)
or 8 (WMMA) N-consecutive results, which a store vectorizes); the instruction then runs
with A and B swapped (``C^T = B^T A^T``), which leaves the operand layouts unchanged.
Warps (``warps_per_cta``): Triton's ``warpsPerTile`` for MFMA/WMMA -- keep doubling the
warps along M while M still has at least twice as many instruction tiles per warp as N,
else along N; if the N warps overshoot N, swap the two. A batched dot puts warps on the
batch first (as many as it has slices; Triton puts all of them there) and splits the
rest over M and N the same way. Triton's chained-dot case (all warps on M for an
attention-like second dot) is not detected yet.

Operands: the dot-operand layouts of that parent with ``k_width`` K-consecutive elements
per lane (``choose_k_width``): the instruction's own ``k_base`` or, like Triton's kPack,
a multiple of it up to the 16 bytes of one ``ds_read_b128`` when K holds whole groups
of it; a WMMA whose ``k_base`` is over 16 bytes (16 halves) reads it in 16-byte pieces.

Fragments (``operand_tiles`` / ``accumulator_tiles``): a lane's registers of one operand
tile (one M (or N) instruction tile of one batch slice), sorted by their K coordinate,
are cut into ``k_base``-register pieces; piece ``s`` is what the lane feeds the ``s``-th
instruction of that tile along K. For A and B these pieces hold the same K values in
the same order in every lane (the two operand layouts have the same K structure), and
the hardware reads A and B with the same K slot per (lane group, element) -- so each
instruction multiplies matching K terms, whatever K permutation the pieces apply to the
instruction's native slot order. The accumulator registers of one instruction tile are
put in the order of the instruction's own result registers (the one-tile layout of the
same parent). ``tests/codegen/test_amd_dot.py`` replays every instruction lane by lane
against the hardware formulas and checks that each result register sums exactly its
own row times its own column over all of K.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import llvmlite.ir as ir

from ...ir.layout.amd import AmdMfma, AmdWmma
from ...ir.layout.amd_lds import mfma_operand_shared, wmma_operand_shared
from ...ir.layout.common import all_register_coords
from ...ir.layout.linear import LinearLayout
from .isa import TARGETS
from .llvm import BFLOAT, F16, F32, F64, I1, I8, I16, I32, I64
from .mma_table import MmaInstr, choose_mma

# MFMA layout version of each CDNA chip (Triton: 3 for CDNA3, 4 for CDNA4); WMMA version 3
# is GFX12.5's.
MFMA_VERSION = {"gfx942": 3, "gfx950": 4}
WMMA_VERSION = 3
MAX_READ_BYTES = 16  # ds_read_b128

# tlxc dtype names -> the names of mma_table
TABLE_DTYPE = {"f16": "fp16", "bf16": "bf16", "i8": "int8", "f32": "fp32", "f8e4m3": "fp8e4nv",
               "f8e5m2": "fp8e5", "f8e4m3fnuz": "fp8e4b8", "f8e5m2fnuz": "fp8e5b16"}
TABLE_ACC = {"f32": "fp32", "i32": "int32"}
FP8 = ("f8e4m3", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz")


@dataclass(frozen=True)
class DotPlan:
    """One dot's instruction, layouts and register plan (see the module docstring)."""

    arch: str
    instr: MmaInstr
    parent: AmdMfma | AmdWmma
    k_width: int
    round_tf32: bool             # round fp32 operands to tf32 before the fp32 instruction
    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    elem_bits: int               # of the operands as staged in LDS
    widen: bool = False          # fp8 operands converted to fp16 (exactly) for an fp16 instruction

    @property
    def rank(self) -> int:
        return len(self.a_shape)

    @property
    def c_shape(self) -> tuple[int, ...]:
        return self.a_shape[:-1] + self.b_shape[-1:]

    @property
    def transposed(self) -> bool:
        return self.parent.transposed

    def accumulator(self) -> LinearLayout:
        return self.parent.accumulator(self.c_shape)

    def operand(self, i: int) -> LinearLayout:
        return self.parent.operand(self.a_shape if i == 0 else self.b_shape, i, self.k_width)

    def instruction_tile(self) -> LinearLayout:
        """The accumulator layout of one instruction tile in one wave: its registers are
        the instruction's result registers, in order."""
        m, n = self.instr.m, self.instr.n
        if isinstance(self.parent, AmdWmma):
            return AmdWmma(self.parent.version, self.parent.transposed, (1, 1),
                           self.parent.instr_shape).accumulator((m, n))
        return AmdMfma(self.parent.version, (m, n, self.instr.k), self.parent.transposed, (1, 1)).accumulator((m, n))

    def shared(self, i: int, num_banks: int) -> LinearLayout:
        """The LDS layout operand ``i`` is staged in: K contiguous (B stored as B^T), with
        Triton's conflict-free swizzle for the operand reads."""
        shape = self.a_shape if i == 0 else self.b_shape
        rank = len(shape)
        k_dim = rank - 1 if i == 0 else rank - 2
        other = rank - 2 if i == 0 else rank - 1
        order = (k_dim, other) + ((0,) if rank == 3 else ())
        if isinstance(self.parent, AmdWmma):
            return wmma_operand_shared(shape, i, order, self.k_width, self.elem_bits, num_banks, self.instr.m)
        return mfma_operand_shared(shape, i, order, self.k_width, self.elem_bits, self.parent.version, num_banks,
                                   self.instr.m)

    @property
    def k_steps(self) -> int:
        return self.a_shape[-1] // self.instr.k


# ----------------------------------------------------------------------------- choice
def table_dtypes(arch: str, a: str, acc: str, precision: str) -> tuple[str, str, bool] | None:
    """(operand dtype, accumulator dtype) in mma_table's names and whether fp32 operands
    are rounded to tf32 first; None: no instruction takes these types."""
    if a not in TABLE_DTYPE or acc not in TABLE_ACC:
        return None
    name, acc_name = TABLE_DTYPE[a], TABLE_ACC[acc]
    if name == "fp32":
        has_xf32 = any(e.a_dtype == "tf32" for e in _entries(arch))
        if precision == "tf32":
            return ("tf32", acc_name, False) if has_xf32 else ("fp32", acc_name, True)
    return name, acc_name, False


def _entries(arch: str) -> tuple[MmaInstr, ...]:
    from .mma_table import entries

    return entries(arch, scaled=False)


def warps_per_cta(shape: Sequence[int], num_warps: int, m: int, n: int) -> tuple[int, ...]:
    """Triton's ``warpsPerTile`` (see the module docstring)."""
    if len(shape) == 3:
        wb = max(1, min(num_warps, shape[0]))
        return (wb,) + warps_per_cta(shape[1:], num_warps // wb, m, n)
    M, N = shape
    ret = [1, 1]
    while ret[0] * ret[1] < num_warps:
        if M // (m * 2) // ret[0] >= N // n // ret[1]:
            if ret[0] < M // m:
                ret[0] *= 2
            else:
                ret[1] *= 2
        else:
            ret[1] *= 2
    if ret[1] * n > N:
        return (ret[1], ret[0])
    return (ret[0], ret[1])


def lane_groups(instr: MmaInstr, wave: int) -> int:
    """Lane groups that split one instruction's K (wave / rows of an operand tile)."""
    return wave // instr.m


def choose_k_width(instr: MmaInstr, elem_bits: int, K: int, wave: int) -> int:
    """Elements of K one lane holds contiguously (see the module docstring)."""
    elem_bytes = max(1, elem_bits // 8)
    most = MAX_READ_BYTES // elem_bytes
    kw = min(instr.k_base, most)
    groups = lane_groups(instr, wave)
    while kw * 2 <= most and K % (groups * kw * 2) == 0:
        kw *= 2
    return kw


@lru_cache(maxsize=512)
def choose(arch: str, a_dtype: str, acc_dtype: str, precision: str, a_shape: tuple[int, ...],
           b_shape: tuple[int, ...], num_warps: int) -> DotPlan | None:
    """The matrix-core plan of a dot, or None (the FMA loop)."""
    names = table_dtypes(arch, a_dtype, acc_dtype, precision)
    if names is None:
        return None
    ab, acc, round_tf32 = names
    M, K = a_shape[-2:]
    N = b_shape[-1]
    instr = choose_mma(arch, ab, ab, acc, M, N, K)
    widen = False
    if instr is None and ab.startswith("fp8"):
        instr = choose_mma(arch, "fp16", "fp16", acc, M, N, K)
        widen = instr is not None
    if instr is None:
        return None
    target = TARGETS[arch]
    wave = target.wave_size
    warps = warps_per_cta(a_shape[:-1] + b_shape[-1:], num_warps, instr.m, instr.n)
    bits = 32 if ab in ("fp32", "tf32") else (8 if ab in ("int8",) or ab.startswith("fp8") else 16)
    kw = choose_k_width(instr, bits, K, wave)
    parent: AmdMfma | AmdWmma
    if instr.kind == "wmma":
        parent = AmdWmma(WMMA_VERSION, True, warps, (instr.m, instr.n, instr.k))
    else:
        parent = AmdMfma(MFMA_VERSION[arch], (instr.m, instr.n, instr.k), True, warps)
    return DotPlan(arch, instr, parent, kw, round_tf32, tuple(a_shape), tuple(b_shape), bits, widen)


# ----------------------------------------------------------------------------- fragments
TileKey = tuple[int, int]            # (batch, first row (A) / column (B) of the instruction tile)
AccKey = tuple[int, int, int]        # (batch, first row, first column)


def operand_tiles(layout: LinearLayout, op_idx: int) -> dict[TileKey, list[int]]:
    """Operand ``op_idx``'s registers per instruction tile, sorted by K (one per K value:
    a register holding the same element as an earlier one is left out)."""
    rank = len(layout.out_dims)
    k_dim, other = (rank - 1, rank - 2) if op_idx == 0 else (rank - 2, rank - 1)
    tiles: dict[TileKey, dict[int, int]] = {}
    for r, c in enumerate(all_register_coords(layout)):
        key = (c[0] if rank == 3 else 0, c[other])
        tiles.setdefault(key, {}).setdefault(c[k_dim], r)
    return {key: [regs[k] for k in sorted(regs)] for key, regs in tiles.items()}


def accumulator_tiles(plan: DotPlan, layout: LinearLayout | None = None) -> dict[AccKey, list[int]]:
    """The accumulator registers of each instruction tile, in the order of the
    instruction's result registers."""
    layout = layout or plan.accumulator()
    m, n = plan.instr.m, plan.instr.n
    rank = plan.rank
    hw = {c: r for r, c in enumerate(all_register_coords(plan.instruction_tile()))}
    per = len(hw)
    tiles: dict[AccKey, list[int]] = {}
    for r, c in enumerate(all_register_coords(layout)):
        b = c[0] if rank == 3 else 0
        i, j = c[-2], c[-1]
        key = (b, i & ~(m - 1), j & ~(n - 1))
        slots = tiles.setdefault(key, [-1] * per)
        slot = hw[(i & (m - 1), j & (n - 1))]
        if slots[slot] == -1:
            slots[slot] = r
    return tiles


@dataclass(frozen=True)
class Call:
    """One MFMA / WMMA: the accumulator tile, and the registers of the instruction's
    first and second source (B and A for a transposed parent) it reads."""

    acc: AccKey
    step: int
    src0: tuple[int, ...]
    src1: tuple[int, ...]


def calls(plan: DotPlan) -> list[Call]:
    """Every instruction of the dot in issue order: K-major (all tiles of one K step,
    then the next step), tiles M-major then N within a step."""
    a_tiles = operand_tiles(plan.operand(0), 0)
    b_tiles = operand_tiles(plan.operand(1), 1)
    acc = accumulator_tiles(plan)
    kb = plan.instr.k_base
    out = []
    for s in range(plan.k_steps):
        for key in sorted(acc):
            b, i, j = key
            a = tuple(a_tiles[(b, i)][s * kb:(s + 1) * kb])
            bb = tuple(b_tiles[(b, j)][s * kb:(s + 1) * kb])
            out.append(Call(key, s, *((bb, a) if plan.transposed else (a, bb))))
    return out


# ----------------------------------------------------------------------------- LLVM types
_SCALARS: dict[str, ir.Type] = {"half": F16, "bfloat": BFLOAT, "float": F32, "double": F64, "i1": I1, "i8": I8,
                                "i16": I16, "i32": I32, "i64": I64}


def llvm_type(text: str) -> ir.Type:
    """``"<4 x half>"``, ``"i64"``... as an ``llvmlite.ir`` type."""
    text = text.strip()
    if text.startswith("<"):
        count, _, elem = text[1:-1].partition(" x ")
        return ir.VectorType(_SCALARS[elem.strip()], int(count))
    return _SCALARS[text]


def intrinsic_signature(instr: MmaInstr, scaled: bool = False) -> tuple[ir.Type, list[ir.Type], list[ir.Value | str]]:
    """(result type, argument types, arguments) of ``instr``'s intrinsic; an argument is
    ``"a"``, ``"b"`` or ``"c"`` (the operands), with ``scaled`` also ``"scale_a"`` and
    ``"scale_b"`` (i32 scale operands), or an immediate constant."""
    types: list[ir.Type] = []
    args: list[ir.Value | str] = []
    named = {"{a}": ("a", instr.a_type), "{b}": ("b", instr.b_type), "{c}": ("c", instr.c_type)}
    if scaled:
        named.update({"{scale_a}": ("scale_a", "i32"), "{scale_b}": ("scale_b", "i32")})
    for token in (t.strip() for t in instr.args.split(",")):
        if token in named:
            name, ty = named[token]
            types.append(llvm_type(ty))
            args.append(name)
            continue
        if token.startswith("{"):
            raise ValueError(f"{instr.intrinsic}: a scaled instruction needs its scales ({token})")
        ty_text, value = token.split()
        ty = llvm_type(ty_text)
        types.append(ty)
        args.append(ir.Constant(ty, int(value)))
    return llvm_type(instr.c_type), types, args


__all__ = ["DotPlan", "choose", "calls", "operand_tiles", "accumulator_tiles", "warps_per_cta", "llvm_type",
           "intrinsic_signature", "FP8"]
