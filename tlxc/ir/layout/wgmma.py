"""Warpgroup MMA (``wgmma.mma_async``) layouts: register fragments, shared-memory matrix
descriptors, and the shape rules -- all as ``LinearLayout``\\ s and data derived from them.

Sources: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions":
"Register Fragments" (figures "WGMMA .m64nNk16/k8/k32 register fragment layout for matrix
A" and "... for accumulator matrix D"), "Shared Memory Matrix Layout" (swizzle atoms),
"Matrix Descriptor Format", "Strides", and "wgmma.mma_async" (shapes and types). The
shared-memory addressing model below matches the canonical layouts of those sections
(also written out in CUTLASS's ``make_gmma_desc``).

Worked example: the accumulator of ``m64n16`` (f32)
--------------------------------------------------
One warpgroup (4 warps) computes a 64 x N tile. Warp ``w`` owns rows ``16w..16w+15``;
with ``g = lane // 4`` and ``t = lane % 4``, element ``d_i`` of the instruction's
``{d0, d1, ...}`` vector is at::

    row = 16 w + g + 8 * ((i >> 1) & 1)
    col = 2 t + (i & 1) + 8 * (i >> 2)

so each register bit is one basis of the layout: ``i`` bit 0 -> (0, 1), bit 1 -> (8, 0),
bits 2.. -> (0, 8), (0, 16)...; lane bits -> (0, 2), (0, 4), (1, 0), (2, 0), (4, 0);
warp bits -> (16, 0), (32, 0). ``wgmma_accumulator((64, 16), (4, 1), 16).table()``::

    dim0\\dim1  0         1         2         3        ...  8         9
    0          w0:t0:r0  w0:t0:r1  w0:t1:r0  w0:t1:r1  ...  w0:t0:r4  w0:t0:r5
    1          w0:t4:r0  w0:t4:r1  w0:t5:r0  w0:t5:r1  ...  w0:t4:r4  w0:t4:r5
    8          w0:t0:r2  w0:t0:r3  w0:t1:r2  w0:t1:r3  ...  w0:t0:r6  w0:t0:r7
    16         w1:t0:r0  ...

Register order conventions (what the code generator relies on)
--------------------------------------------------------------
A tile larger than one instruction is covered by *repeats*. Warpgroups take the lower
tile bits, register repeats the higher ones (as in Triton's NvidiaMma version 3):

* **Warps.** ``warps_per_cta = [wm, wn]``, ``wm`` a multiple of 4. Warp ``w`` is warp
  ``w % 4`` of warpgroup ``w // 4``; it works on rows of M-warpgroup ``(w // 4) % (wm // 4)``
  and columns of N-warpgroup ``w // wm``.
* **Accumulator** (``wgmma_accumulator``): register index ``r`` of the layout is
  ``r = i + (instr_n / 2) * (n_chunk + n_chunks * m_rep)`` -- ``i`` the PTX ``d_i``, then
  N-chunks, then M-repeats. Instruction ``(m_rep, n_chunk)`` of M-warpgroup ``gm`` and
  N-warpgroup ``gn`` covers rows ``64 * (m_rep * (wm/4) + gm) + [0, 64)`` and columns
  ``instr_n * (n_chunk * wn + gn) + [0, instr_n)``. An f16 accumulator packs ``d_{2j}``
  (low half) and ``d_{2j+1}`` into the j-th ``.f16x2`` register of the vector.
* **A in registers** (``wgmma_operand_a``): ``r = e + 4 * p * (k_step + k_steps * m_rep)``
  with ``p = 32 / elem_bits`` elements per 32-bit register and ``e`` the PTX ``a_e``
  element index; the vector operand ``{a0, a1, a2, a3}`` register ``j`` packs elements
  ``e = p*j .. p*j + p-1`` (lowest first). Warps of other N-warpgroups hold copies.

``wgmma_accumulator_slots`` / ``wgmma_operand_a_slots`` derive, by applying the layout,
which instruction and which vector slot each register index is; ``instruction_operands``
groups them into the exact ``{d...}`` / ``{a...}`` lists.

Shared-memory operands
----------------------
``wgmma_smem_operand`` takes a buffer's layout (``offset`` -> tile) and finds the
descriptor fields by applying the layout's inverse at the probe elements the PTX
definitions name (the next 8-row group, the next swizzle atom, ...), then replays the
hardware's address computation for every element of every instruction and compares it
with the layout. Nothing is assumed about how the layout was built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .common import BLOCK, LANE, OFFSET, REGISTER, WARP, CTALayout, dim_names, fit_to_shape, with_standard_ins
from .linear import LayoutError, LinearLayout, is_pow2
from .nvidia import nvmma_shared

# ----------------------------------------------------------------------------- hardware facts
# PTX ISA, "wgmma.mma_async", section "Matrix shape" / "Data types".
WARPGROUP_WARPS = 4
WARPGROUP_ROWS = 64  # M of every wgmma instruction
MAX_N = 256

# element type -> (K of one instruction, element bits, legal accumulator types, PTX name)
_TYPES: dict[str, tuple[int, int, tuple[str, ...], str]] = {
    "f16": (16, 16, ("f32", "f16"), "f16"),
    "bf16": (16, 16, ("f32",), "bf16"),
    "tf32": (8, 32, ("f32",), "tf32"),
    "f8e4m3": (32, 8, ("f32", "f16"), "e4m3"),
    "f8e5m2": (32, 8, ("f32", "f16"), "e5m2"),
    "i8": (32, 8, ("i32",), "s8"),
    "u8": (32, 8, ("i32",), "u8"),
}
_ALIASES = {"fp16": "f16", "float16": "f16", "bfloat16": "bf16", "f32": "tf32", "fp32": "tf32",
            "float32": "tf32", "e4m3": "f8e4m3", "fp8e4nv": "f8e4m3", "e5m2": "f8e5m2", "fp8e5": "f8e5m2",
            "s8": "i8", "int8": "i8", "uint8": "u8"}
_ACC_PTX = {"f32": "f32", "f16": "f16", "i32": "s32"}
_ACC_ALIASES = {"fp32": "f32", "float32": "f32", "fp16": "f16", "float16": "f16", "s32": "i32", "int32": "i32"}
# Only 16-bit operands may be MN-major (imm-trans-a / imm-trans-b); the others must be K-major.
_TRANSPOSABLE = ("f16", "bf16")
# Integer wgmma has fewer N values: 8, 16, 24, then multiples of 16 (checked with ptxas).
_INT_N = (8, 16, 24) + tuple(range(32, MAX_N + 1, 16))
_FLOAT_N = tuple(range(8, MAX_N + 1, 8))

# Descriptor bits 62-63 (PTX ISA, "Matrix Descriptor Format").
SWIZZLE_MODE = {0: 0, 128: 1, 64: 2, 32: 3}
_UNUSED_STRIDE = 16  # an LBO / SBO the instruction never uses: the PTX ISA says "assumed 1" (x16 bytes)


def _canonical(elem_type: str) -> str:
    name = _ALIASES.get(elem_type, elem_type)
    if name not in _TYPES:
        raise LayoutError(f"wgmma does not take {elem_type!r} operands; it takes "
                          f"{', '.join(_TYPES)} (f32 operands run as tf32)")
    return name


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
    name = _canonical(elem_type)
    k = _TYPES[name][0]
    ns = _INT_N if name in ("i8", "u8") else _FLOAT_N
    return tuple((WARPGROUP_ROWS, n, k) for n in ns)


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
        return ".".join((_ACC_PTX[self.acc_type], _TYPES[self.a_type][3], _TYPES[self.b_type][3]))

    @property
    def elem_bits(self) -> int:
        return _TYPES[self.a_type][1]

    @property
    def takes_trans(self) -> bool:
        """Whether the instruction has imm-trans operands (f16/bf16 only)."""
        return self.a_type in _TRANSPOSABLE

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
    a = _canonical(elem_type)
    b = _canonical(b_type) if b_type is not None else a
    legal = f"legal: {_legal_summary()}"
    mixed_ok = {a, b} <= {"f8e4m3", "f8e5m2"} or {a, b} <= {"i8", "u8"} or a == b
    if not mixed_ok:
        raise LayoutError(f"wgmma cannot multiply {a} by {b}: operand types must match (fp8 formats and the "
                          f"signedness of int8 may differ); {legal}")
    step = _TYPES[a][0]
    ns = _INT_N if a in ("i8", "u8") else _FLOAT_N
    problems = []
    if m <= 0 or m % WARPGROUP_ROWS:
        problems.append(f"M={m} is not a multiple of {WARPGROUP_ROWS}")
    if n not in ns:
        problems.append(f"N={n} is not one of the instruction's N values")
    if k <= 0 or k % step:
        problems.append(f"K={k} is not a multiple of {step} (the K of one {a} instruction)")
    for what, major in (("A", a_major), ("B", b_major)):
        if major not in ("K", "MN"):
            problems.append(f"{what} major-ness {major!r} is neither 'K' nor 'MN'")
        elif major == "MN" and a not in _TRANSPOSABLE and not (what == "A" and a_in_registers):
            problems.append(f"{what} is MN-major, but {a} operands must be K-major (transpose the buffer, e.g. "
                            "load it with a K-major TMA box or local_trans a K-major one)")
    accs = _TYPES[a][2]
    acc = _ACC_ALIASES.get(acc_type, acc_type) if acc_type else accs[0]
    if acc not in accs:
        problems.append(f"a {acc} accumulator is not available for {a} inputs (use {' or '.join(accs)})")
    if problems:
        raise LayoutError(f"wgmma cannot compute [{m}, {k}] x [{k}, {n}] of {a}: " + "; ".join(problems)
                          + f". {legal}")
    trans_a = int(a_major == "MN" and not a_in_registers)
    return WgmmaInstr(WARPGROUP_ROWS, n, step, m // WARPGROUP_ROWS, k // step, a, b, acc, a_in_registers,
                      trans_a, int(b_major == "MN"))


# ----------------------------------------------------------------------------- register layouts
def _split_warps(warps_per_cta: Sequence[int]) -> tuple[int, int]:
    if len(warps_per_cta) != 2:
        raise LayoutError(f"wgmma tiles are 2-D: warps_per_cta {tuple(warps_per_cta)} must have 2 entries")
    wm, wn = (int(w) for w in warps_per_cta)
    if wm % WARPGROUP_WARPS or not is_pow2(wm) or not is_pow2(wn):
        raise LayoutError(f"warps_per_cta {(wm, wn)}: wgmma needs whole warpgroups along M (a power-of-two "
                          f"multiple of {WARPGROUP_WARPS} warps: [4, 1] one warpgroup, [8, 1] two splitting M, "
                          "[4, 2] two splitting N)")
    return wm // WARPGROUP_WARPS, wn


def _tile(shape: Sequence[int], wg_m: int, wg_n: int, instr_n: int, what: str) -> tuple[int, int]:
    if len(shape) != 2:
        raise LayoutError(f"{what}: wgmma tiles are 2-D, got shape {tuple(shape)}")
    m, n = (int(s) for s in shape)
    if not is_pow2(m) or not is_pow2(n):
        raise LayoutError(f"{what}: tile {m}x{n} is not a power of two in each dim")
    if m % (WARPGROUP_ROWS * wg_m):
        raise LayoutError(f"{what}: M={m} is not a multiple of 64 x {wg_m} M-warpgroups")
    if n % (instr_n * wg_n):
        raise LayoutError(f"{what}: {n} columns do not split into {wg_n} warpgroup(s) x instructions of {instr_n}")
    return m, n


def wgmma_accumulator(shape: Sequence[int], warps_per_cta: Sequence[int], instr_n: int,
                      cta: CTALayout | None = None) -> LinearLayout:
    """The register layout of the D fragments of ``wgmma.mma_async.m64n{instr_n}`` covering
    a ``[M, N]`` tile (module docstring: bases and register order)."""
    return _accumulator(tuple(shape), tuple(warps_per_cta), int(instr_n), cta)


@lru_cache(maxsize=256)
def _accumulator(shape: tuple[int, ...], warps: tuple[int, ...], instr_n: int, cta: CTALayout | None) -> LinearLayout:
    wg_m, wg_n = _split_warps(warps)
    if not is_pow2(instr_n) or not 8 <= instr_n <= MAX_N:
        raise LayoutError(f"accumulator: instr_n={instr_n} must be a power of two in [8, {MAX_N}]")
    per_cta = shape if cta is None else tuple(max(1, s // c) for s, c in zip(shape, cta.cta_split_num))
    m, n = _tile(per_cta, wg_m, wg_n, instr_n, "accumulator")
    d0, d1 = dim_names(2)
    one = LinearLayout.identity_1d
    pattern = (one(2, REGISTER, d1) * one(4, LANE, d1) * one(8, LANE, d0) * one(2, REGISTER, d0)
               * one(instr_n // 8, REGISTER, d1)  # d_i, i >> 2: the 8-column groups
               * one(WARPGROUP_WARPS, WARP, d0) * one(wg_m, WARP, d0) * one(wg_n, WARP, d1)
               * one(n // (instr_n * wg_n), REGISTER, d1)  # N-chunks
               * one(m // (WARPGROUP_ROWS * wg_m), REGISTER, d0))  # M-repeats
    return with_standard_ins(fit_to_shape(pattern.transpose_outs([d0, d1]), shape, cta))


def _a_width(elem_bits: int) -> int:
    if elem_bits not in (8, 16, 32):
        raise LayoutError(f"wgmma A fragments hold 8-, 16- or 32-bit (tf32) elements, not {elem_bits}-bit ones")
    return 32 // elem_bits


def wgmma_operand_a(shape: Sequence[int], warps_per_cta: Sequence[int], elem_bits: int,
                    cta: CTALayout | None = None) -> LinearLayout:
    """The register layout of an A operand ``[M, K]`` fed from registers: per warp the
    ``mma.m16n8k{8,16,32}`` A fragment (``p = 32/elem_bits`` consecutive K per 32-bit
    register, lanes ``4 x 8``, then row +8, then K + 4p), warps of a warpgroup stacked by
    16 rows, then K-steps and M-repeats in registers (module docstring)."""
    return _operand_a(tuple(shape), tuple(warps_per_cta), int(elem_bits), cta)


@lru_cache(maxsize=256)
def _operand_a(shape: tuple[int, ...], warps: tuple[int, ...], elem_bits: int, cta: CTALayout | None) -> LinearLayout:
    wg_m, wg_n = _split_warps(warps)
    p = _a_width(elem_bits)
    instr_k = 8 * p
    per_cta = shape if cta is None else tuple(max(1, s // c) for s, c in zip(shape, cta.cta_split_num))
    m, k = _tile(per_cta, wg_m, 1, instr_k, "wgmma A operand")
    d0, d1 = dim_names(2)
    one = LinearLayout.identity_1d
    pattern = (one(p, REGISTER, d1) * one(4, LANE, d1) * one(8, LANE, d0) * one(2, REGISTER, d0)
               * one(2, REGISTER, d1)  # a_e for e >= 2p: K + 4p
               * one(WARPGROUP_WARPS, WARP, d0) * one(wg_m, WARP, d0)
               * LinearLayout.zeros_1d(wg_n, WARP, d1)  # N-warpgroups share A
               * one(k // instr_k, REGISTER, d1)  # K-steps
               * one(m // (WARPGROUP_ROWS * wg_m), REGISTER, d0))  # M-repeats
    return with_standard_ins(fit_to_shape(pattern.transpose_outs([d0, d1]), shape, cta))


@dataclass(frozen=True)
class FragmentSlot:
    """Where one register of a wgmma fragment goes: instruction ``(m_rep, rep)`` --
    ``rep`` is the N-chunk for an accumulator, the K-step for an A operand -- vector
    operand slot ``slot`` (``d{slot}`` / ``a{slot}`` as 32-bit registers), and ``part``,
    the element inside that 32-bit register (0 = low bits)."""

    m_rep: int
    rep: int
    slot: int
    part: int


def _slots_of(layout: LinearLayout, elem_of, bits: int) -> tuple[FragmentSlot, ...]:
    per_word = 32 // bits
    out = []
    for r in range(layout.in_dim_size(REGISTER)):
        c = layout.apply({REGISTER: r})
        m_rep, rep, e = elem_of(c["dim0"], c["dim1"])
        out.append(FragmentSlot(m_rep, rep, e // per_word, e % per_word))
    return tuple(out)


def wgmma_accumulator_slots(shape: Sequence[int], warps_per_cta: Sequence[int], instr_n: int,
                            acc_bits: int = 32) -> tuple[FragmentSlot, ...]:
    """For each register index of ``wgmma_accumulator``: its instruction (M-repeat,
    N-chunk) and its ``d`` slot, found by applying the layout (lane 0 of warp 0) and
    inverting the PTX formula ``row = g + 8*((i>>1)&1)``, ``col = 2t + (i&1) + 8*(i>>2)``.
    ``acc_bits=16`` gives the ``.f16x2`` packing (two elements per slot)."""
    if acc_bits not in (16, 32):
        raise LayoutError(f"accumulators are 32-bit (f32/s32) or 16-bit (f16), not {acc_bits}-bit")
    wg_m, wg_n = _split_warps(warps_per_cta)
    lay = wgmma_accumulator(shape, warps_per_cta, instr_n)

    def elem_of(row: int, col: int) -> tuple[int, int, int]:
        m_rep, r = divmod(row, WARPGROUP_ROWS * wg_m)
        n_chunk, c = divmod(col, instr_n * wg_n)
        return m_rep, n_chunk, 4 * (c // 8) + 2 * ((r >> 3) & 1) + (c & 1)

    return _slots_of(lay, elem_of, acc_bits)


def wgmma_operand_a_slots(shape: Sequence[int], warps_per_cta: Sequence[int],
                          elem_bits: int) -> tuple[FragmentSlot, ...]:
    """For each register index of ``wgmma_operand_a``: its instruction (M-repeat, K-step),
    which of ``{a0, a1, a2, a3}`` it is in and where inside that 32-bit register, from the
    PTX formula ``row = g + 8*((e // p) & 1)``, ``col = p*t + e%p + 4p*(e // 2p)``."""
    wg_m, _ = _split_warps(warps_per_cta)
    p = _a_width(elem_bits)
    lay = wgmma_operand_a(shape, warps_per_cta, elem_bits)

    def elem_of(row: int, col: int) -> tuple[int, int, int]:
        m_rep, r = divmod(row, WARPGROUP_ROWS * wg_m)
        k_step, c = divmod(col, 8 * p)
        return m_rep, k_step, 2 * p * (c // (4 * p)) + p * ((r >> 3) & 1) + c % p

    return _slots_of(lay, elem_of, elem_bits)


def instruction_operands(slots: Sequence[FragmentSlot]) -> dict[tuple[int, int], tuple[tuple[int, ...], ...]]:
    """Group ``*_slots`` by instruction: ``{(m_rep, rep): (regs of slot 0, regs of slot 1,
    ...)}`` where ``regs of slot j`` lists the layout's register indices packed into the
    j-th register of the ``{d...}`` / ``{a...}`` vector, lowest bits first."""
    table: dict[tuple[int, int], dict[int, dict[int, int]]] = {}
    for r, s in enumerate(slots):
        table.setdefault((s.m_rep, s.rep), {}).setdefault(s.slot, {})[s.part] = r
    out = {}
    for key in sorted(table):
        by_slot = table[key]
        if sorted(by_slot) != list(range(len(by_slot))):
            raise LayoutError(f"instruction {key}: slots {sorted(by_slot)} are not 0..{len(by_slot) - 1}")
        out[key] = tuple(tuple(parts[q] for q in sorted(parts)) for _, parts in sorted(by_slot.items()))
    return out


# ----------------------------------------------------------------------------- NVMMA choice
def choose_nvmma_swizzle(shape: Sequence[int], elem_bits: int, transposed: bool = False) -> int:
    """Triton's default NVMMA swizzle: the largest of 128, 64, 32 bytes that the contiguous
    dim's byte size is a multiple of (and at least), else 0; also 0 when the dim next to
    it has fewer than 8 rows (a swizzle atom is 8 rows). The contiguous dim is the last
    one, the one before it when ``transposed``."""
    if len(shape) < 2:
        return 0
    contig, other = (len(shape) - 2, len(shape) - 1) if transposed else (len(shape) - 1, len(shape) - 2)
    if shape[other] < 8:
        return 0
    row_bytes = shape[contig] * elem_bits // 8
    for span in (128, 64, 32):
        if row_bytes >= span and row_bytes % span == 0:
            return span
    return 0


def nvmma_default(shape: Sequence[int], elem_bits: int, transposed: bool = False,
                  cta: CTALayout | None = None) -> LinearLayout:
    """``nvmma_shared`` with the swizzle of ``choose_nvmma_swizzle``."""
    return nvmma_shared(shape, elem_bits, choose_nvmma_swizzle(shape, elem_bits, transposed), transposed, cta)


def _per_cta_offsets(layout: LinearLayout) -> LinearLayout:
    """The ``offset`` part of a shared layout, onto the piece of the tile one CTA holds."""
    if not layout.has_in_dim(OFFSET):
        raise LayoutError("not a shared-memory layout (no 'offset' input dim)", layout)
    extra = [d for d in layout.in_dims if d not in (OFFSET, BLOCK)]
    if extra:
        raise LayoutError(f"not a shared-memory layout (input dims {extra})", layout)
    bases = layout.in_bases(OFFSET)
    sizes = []
    for j, name in enumerate(layout.out_dims):
        top = 0
        for b in bases:
            top |= b[j]
        sizes.append((name, 1 << top.bit_length()))
    off = LinearLayout({OFFSET: bases}, sizes)
    if not off.is_bijective():
        raise LayoutError("the buffer's offsets do not hold each element exactly once", layout)
    return off


def tma_swizzle_of(layout: LinearLayout, elem_bits: int | None = None) -> int | None:
    """The swizzle (128, 64, 32 or 0 bytes) of a layout that TMA writes -- an
    ``nvmma_shared`` layout of either orientation -- or None. Without ``elem_bits`` the
    element width is read off the swizzle pattern (span and 16-byte chunk fix it); with
    it, an unswizzled layout also needs rows of whole 16-byte granules (the TMA box rule).
    The host descriptor then takes ``CU_TENSOR_MAP_SWIZZLE_{128B,64B,32B,NONE}`` and, when
    swizzled, an inner box of one span (``swizzle * 8 / elem_bits`` elements); a wider
    tile is several boxes, one per column block of ``nvmma_shared``."""
    try:
        off = _per_cta_offsets(layout)
    except LayoutError:
        return None
    shape = off.out_shape
    if len(shape) == 1:
        # A 1-D block: TMA copies it unswizzled into contiguous elements (16-byte granules).
        contiguous = all(b == (1 << i,) for i, b in enumerate(off.in_bases(OFFSET)))
        if not contiguous or (elem_bits is not None and (shape[0] * elem_bits) % 128):
            return None
        return 0
    if len(shape) < 2:
        return None

    def same(candidate: LinearLayout) -> bool:
        return candidate.sublayout([OFFSET], candidate.out_dims) == off

    for bits in (elem_bits,) if elem_bits is not None else (8, 16, 32, 64):
        for transposed in (False, True):
            for swizzle in (128, 64, 32):
                try:
                    if same(nvmma_shared(shape, bits, swizzle, transposed)):
                        return swizzle
                except LayoutError:
                    continue
    for transposed in (False, True):
        # Unswizzled nvmma_shared is plain row-major whatever the width.
        if same(nvmma_shared(shape, 8, 0, transposed)):
            contig = len(shape) - 2 if transposed else len(shape) - 1
            if elem_bits is not None and (shape[contig] * elem_bits) % 128:
                return None
            return 0
    return None


# ----------------------------------------------------------------------------- descriptors
def encode_descriptor(start_address: int, lbo: int, sbo: int, swizzle: int, base_offset: int = 0) -> int:
    """The 64-bit wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits
    0-13 ``start_address >> 4``, 16-29 ``lbo >> 4``, 32-45 ``sbo >> 4``, 49-51 the base
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
    return ((start_address >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (base_offset << 49)
            | (SWIZZLE_MODE[swizzle] << 62))


def decode_descriptor(desc: int) -> dict[str, int]:
    """The fields of ``encode_descriptor``, in bytes (``swizzle`` as a span)."""
    modes = {v: k for k, v in SWIZZLE_MODE.items()}
    return {"start_address": (desc & 0x3FFF) << 4, "lbo": ((desc >> 16) & 0x3FFF) << 4,
            "sbo": ((desc >> 32) & 0x3FFF) << 4, "base_offset": (desc >> 49) & 7, "swizzle": modes[(desc >> 62) & 3]}


@dataclass(frozen=True)
class WgmmaSmemOperand:
    """How wgmma reads one operand from a shared buffer.

    The descriptor of instruction ``(mn_rep, k_step)`` of warpgroup ``g`` is
    ``template + ((base + warpgroup_offsets[g] + offsets[mn_rep][k_step]) >> 4)`` with
    ``base`` the buffer's shared-window address (a multiple of ``base_alignment``, so that
    the swizzle pattern starts with the buffer and the base-offset field stays 0).
    ``mn_rep`` counts instructions along M (A) or N (B) of one warpgroup; ``g`` is the
    warpgroup's index among those splitting this operand's M (A) or N (B) dim, with
    row / column ``instr_mn * (mn_rep * warpgroups + g)`` as in ``wgmma_accumulator``.
    """

    operand: str  # "A" or "B"
    major: str  # "K" or "MN"
    trans: int  # imm-trans-a / imm-trans-b
    elem_bits: int
    swizzle_bytes: int
    lbo: int
    sbo: int
    instr_mn: int
    instr_k: int
    offsets: tuple[tuple[int, ...], ...]
    warpgroup_offsets: tuple[int, ...]
    base_alignment: int

    @property
    def swizzle_mode(self) -> int:
        return SWIZZLE_MODE[self.swizzle_bytes]

    @property
    def mn_reps(self) -> int:
        return len(self.offsets)

    @property
    def k_steps(self) -> int:
        return len(self.offsets[0])

    @property
    def template(self) -> int:
        """The descriptor with start address 0: add ``address >> 4`` for a real one."""
        return encode_descriptor(0, self.lbo, self.sbo, self.swizzle_bytes)

    def descriptor(self, base_address: int, mn_rep: int = 0, k_step: int = 0, warpgroup: int = 0) -> int:
        if base_address % self.base_alignment:
            raise LayoutError(f"buffer address {base_address:#x} is not aligned to {self.base_alignment} bytes, "
                              f"as the {self.swizzle_bytes}-byte swizzle pattern needs")
        start = base_address + self.warpgroup_offsets[warpgroup] + self.offsets[mn_rep][k_step]
        return encode_descriptor(start, self.lbo, self.sbo, self.swizzle_bytes)


def smem_byte_offset(layout: LinearLayout, elem_bits: int, coords: Sequence[int]) -> int:
    """Where element ``coords`` of the tile lives, in bytes from the buffer's start (this CTA's piece)."""
    off = _per_cta_offsets(layout)
    return off.invert().apply(dict(zip(off.out_dims, coords)))[OFFSET] * elem_bits // 8


def operand_major(layout: LinearLayout, operand: str) -> str:
    """``"K"`` or ``"MN"``: which matrix dim of the A (``[M, K]``) or B (``[K, N]``) buffer
    is contiguous (the image of offset bit 0)."""
    if operand not in ("A", "B"):
        raise LayoutError(f"operand must be 'A' or 'B', not {operand!r}")
    off = _per_cta_offsets(layout)
    if off.num_out_dims != 2:
        raise LayoutError(f"wgmma operands are 2-D buffers, this one has {off.num_out_dims} dims", layout)
    first = off.in_bases(OFFSET)[0] if off.in_dim_bits(OFFSET) else None
    if first not in ((0, 1), (1, 0)):
        raise LayoutError("the buffer's first two elements are not neighbours along one dim: not an "
                          "NVMMA layout", layout)
    contig = 1 if first == (0, 1) else 0
    k_dim = 1 if operand == "A" else 0
    return "K" if contig == k_dim else "MN"


def wgmma_smem_operand(layout: LinearLayout, *, elem_bits: int, operand: str, instr_mn: int, instr_k: int,
                       warpgroups: int = 1, tile: Sequence[int] | None = None) -> WgmmaSmemOperand:
    """The descriptor fields and per-instruction offsets for reading ``tile`` (default: the
    whole buffer; an ``[M, K]`` A or ``[K, N]`` B at the buffer's origin) with wgmma
    instructions of ``instr_mn`` x ``instr_k`` (64 x K for A, K x N for B), the tile's
    M (A) or N (B) split among ``warpgroups`` warpgroups. Raises LayoutError naming the
    layouts wgmma can read when none of the four swizzle modes reproduces the buffer."""
    return _smem_operand(layout, elem_bits, operand, instr_mn, instr_k, warpgroups,
                         tuple(tile) if tile is not None else None)


@lru_cache(maxsize=256)
def _smem_operand(layout: LinearLayout, elem_bits: int, operand: str, instr_mn: int, instr_k: int,
                  warpgroups: int, tile: tuple[int, ...] | None) -> WgmmaSmemOperand:
    major = operand_major(layout, operand)
    if elem_bits not in (8, 16, 32):
        raise LayoutError(f"wgmma reads 8-, 16- or 32-bit elements from shared memory, not {elem_bits}-bit ones")
    if major == "MN" and elem_bits != 16:
        raise LayoutError(f"this {operand} buffer is MN-major, but only 16-bit operands may be: {elem_bits}-bit "
                          f"wgmma operands must be K-major (contiguous along K). Build the buffer "
                          f"{'without' if operand == 'A' else 'with'} transposed=True, or local_trans a "
                          "K-major buffer", layout)
    off = _per_cta_offsets(layout)
    shape = tile or off.out_shape
    if len(shape) != 2 or any(s > f for s, f in zip(shape, off.out_shape)):
        raise LayoutError(f"tile {tuple(shape)} does not fit in the buffer {off.out_shape}", layout)
    mn_ext, k_ext = (shape[0], shape[1]) if operand == "A" else (shape[1], shape[0])
    if mn_ext % (instr_mn * warpgroups) or k_ext % instr_k or instr_k * elem_bits != 256:
        raise LayoutError(f"{operand} tile {tuple(shape)} is not a whole number of {instr_mn}x{instr_k} "
                          f"instructions for {warpgroups} warpgroup(s) (one instruction reads 32 bytes of K)")
    plan = _Plan(off, elem_bits, operand, major, instr_mn, instr_k)
    reps, steps = mn_ext // (instr_mn * warpgroups), k_ext // instr_k
    failures = []
    for swizzle in (128, 64, 32, 0):
        found = plan.try_swizzle(swizzle, reps, steps, warpgroups)
        if isinstance(found, WgmmaSmemOperand):
            return found
        failures.append(f"{swizzle}-byte swizzle: {found}" if swizzle else f"no swizzle: {found}")
    rows = "M" if operand == "A" else "N"
    transposed = (operand == "B") == (major == "K")
    raise LayoutError(
        f"wgmma cannot read this {elem_bits}-bit {major}-major {operand} buffer with any matrix descriptor. It "
        f"reads NVMMA layouts: nvmma_shared(shape, {elem_bits}, swizzle_bytes, transposed={transposed}) with "
        f"swizzle_bytes 128, 64 or 32 (a contiguous dim of at least that many bytes and >= 8 rows), or 0 when the "
        f"contiguous dim is exactly 16 bytes; K-major for every type, {rows}-major for 16-bit types only. "
        + "; ".join(failures), layout)


class _Plan:
    """Descriptor search for one buffer: probes the layout and replays the hardware's
    addressing (PTX ISA, "Shared Memory Matrix Layout" and "Strides"; in 16-byte units
    ``T = 128 / elem_bits`` elements, ``W = swizzle / 16`` chunks per swizzled row)::

        K-major,  swizzled:   ((8, m), (T, 2)) : ((W*T, SBO), (1, T))       LBO unused
        K-major,  none:       ((8, m), (T, 2)) : ((T,   SBO), (1, LBO))
        MN-major, swizzled:   ((T, W, m), (8, 2)) : ((1, T, LBO), (W*T, SBO))
        MN-major, none:       ((T, m), (8, 2))    : ((1, SBO), (T, LBO))

    (``(mn, k)`` coordinates on the left, element strides on the right), and the swizzle
    XORs byte-address bits ``[4, 4+b)`` with bits ``[7, 7+b)``, ``b = log2(W)``.
    """

    def __init__(self, off: LinearLayout, elem_bits: int, operand: str, major: str, instr_mn: int,
                 instr_k: int) -> None:
        self.elem_bits, self.operand, self.major = elem_bits, operand, major
        self.instr_mn, self.instr_k = instr_mn, instr_k
        self.shape = off.out_shape
        inv = off.invert()
        # the layout is linear: element (x, y) sits at offset row[x] ^ col[y]
        self._rows = [inv.apply(dim0=x)[OFFSET] for x in range(self.shape[0])]
        self._cols = [inv.apply(dim1=y)[OFFSET] for y in range(self.shape[1])]

    def addr(self, mn: int, k: int) -> int | None:
        """Byte address of operand element ``(mn, k)`` in the buffer, None outside it."""
        x, y = (mn, k) if self.operand == "A" else (k, mn)
        if x >= self.shape[0] or y >= self.shape[1]:
            return None
        return (self._rows[x] ^ self._cols[y]) * self.elem_bits // 8

    def _name(self, mn: int, k: int) -> str:
        return f"[m={mn}, k={k}] of A" if self.operand == "A" else f"[k={k}, n={mn}] of B"

    def _stride(self, mn: int, k: int, needed: bool) -> int | str:
        if not needed:
            return _UNUSED_STRIDE
        a = self.addr(mn, k)
        if a is None or a <= 0 or a % 16 or a >= 1 << 18:
            return f"element {self._name(mn, k)} is at byte {a}, not a stride a descriptor can hold"
        return a

    def try_swizzle(self, swizzle: int, reps: int, steps: int, warpgroups: int) -> WgmmaSmemOperand | str:
        t = 128 // self.elem_bits
        w = max(1, swizzle // 16)
        if self.major == "K":
            sbo = self._stride(8, 0, self.instr_mn > 8)
            lbo = self._stride(0, t, not swizzle)
        elif swizzle:
            lbo = self._stride(t * w, 0, self.instr_mn > t * w)
            sbo = self._stride(0, 8, True)
        else:
            sbo = self._stride(t, 0, self.instr_mn > t)
            lbo = self._stride(0, 8, True)
        for v in (lbo, sbo):
            if isinstance(v, str):
                return v
        assert isinstance(lbo, int) and isinstance(sbo, int)
        starts = {}
        for g in range(warpgroups):
            for i in range(reps):
                for j in range(steps):
                    s = self.addr(self.instr_mn * (i * warpgroups + g), self.instr_k * j)
                    assert s is not None
                    if swizzle and (s >> 7) & (w - 1):
                        return f"instruction ({i}, {j}) would start inside a swizzle pattern (byte {s})"
                    err = self._replay(swizzle, lbo, sbo, s, self.instr_mn * (i * warpgroups + g), self.instr_k * j)
                    if err:
                        return err
                    starts[g, i, j] = s
        offsets = tuple(tuple(starts[0, i, j] for j in range(steps)) for i in range(reps))
        wg = tuple(starts[g, 0, 0] - starts[0, 0, 0] for g in range(warpgroups))
        for (g, i, j), s in starts.items():
            if s != wg[g] + offsets[i][j]:
                return f"warpgroup {g}'s instruction ({i}, {j}) is not at a fixed distance from warpgroup 0's"
        return WgmmaSmemOperand(self.operand, self.major, int(self.major == "MN"), self.elem_bits, swizzle, lbo, sbo,
                                self.instr_mn, self.instr_k, offsets, wg, max(16, 8 * swizzle))

    def _replay(self, swizzle: int, lbo: int, sbo: int, start: int, mn0: int, k0: int) -> str | None:
        """Compare the hardware's address of every element of one instruction with the layout."""
        eb = self.elem_bits // 8
        w = swizzle // 16
        mask = (w - 1) if swizzle else 0
        for mn in range(self.instr_mn):
            for k in range(self.instr_k):
                if self.major == "K":
                    kb = k * eb
                    row = (mn % 8) * (swizzle or 16) + (mn // 8) * sbo
                    pre = row + (kb if swizzle else (kb // 16) * lbo + kb % 16)
                else:
                    mb = mn * eb
                    if swizzle:
                        pre = mb % swizzle + (mb // swizzle) * lbo + (k % 8) * swizzle + (k // 8) * sbo
                    else:
                        pre = mb % 16 + (mb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
                a = start + pre
                a ^= ((a >> 7) & mask) << 4
                want = self.addr(mn0 + mn, k0 + k)
                if a != want:
                    return (f"element {self._name(mn0 + mn, k0 + k)} is at byte {want}, "
                            f"the descriptor (LBO {lbo}, SBO {sbo}) would read byte {a}")
        return None
