"""Warpgroup MMA (``wgmma.mma_async``) register layouts, and the queries on NVMMA shared
layouts that TMA and wgmma need (which swizzle, which dim is contiguous, where an element
is) -- all as ``LinearLayout``\\ s and data derived from them.

Sources: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions",
"Register Fragments" (figures "WGMMA .m64nNk16/k8/k32 register fragment layout for matrix
A" and "... for accumulator matrix D"). The instruction facts -- shapes, types, the matrix
descriptor's encoding and how the hardware addresses a shared operand through it -- are
the NVIDIA code generator's (``codegen/nvptx/mma_table.py``, ``wgmma_smem.py``).

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

Shared-memory layouts
---------------------
``tma_swizzle_of``, ``operand_major`` and ``smem_byte_offset`` read an NVMMA layout back
(``nvmma_shared``); the default swizzle of a buffer is ``nvidia.choose_nvmma_swizzle``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .common import BLOCK, LANE, OFFSET, REGISTER, WARP, CTALayout, dim_names, fit_to_shape, with_standard_ins
from .linear import LayoutError, LinearLayout, is_pow2
from .nvidia import choose_nvmma_swizzle, nvmma_shared

# One warpgroup (4 warps) computes 64 rows: the fragment patterns below are built for it.
WARPGROUP_WARPS = 4
WARPGROUP_ROWS = 64


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
    # the pattern repeats 8-column groups; which N an instruction may have is the ISA's
    # business (codegen/nvptx/mma_table.py)
    if not is_pow2(instr_n) or instr_n < 8:
        raise LayoutError(f"accumulator: instr_n={instr_n} must be a power of two, at least 8")
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


# ----------------------------------------------------------------------------- NVMMA layouts
def nvmma_default(shape: Sequence[int], elem_bits: int, transposed: bool = False,
                  cta: CTALayout | None = None) -> LinearLayout:
    """``nvmma_shared`` with the swizzle of ``choose_nvmma_swizzle``."""
    return nvmma_shared(shape, elem_bits, choose_nvmma_swizzle(shape, elem_bits, transposed, cta), transposed, cta)


def per_cta_offsets(layout: LinearLayout) -> LinearLayout:
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
        off = per_cta_offsets(layout)
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


def smem_byte_offset(layout: LinearLayout, elem_bits: int, coords: Sequence[int]) -> int:
    """Where element ``coords`` of the tile lives, in bytes from the buffer's start (this CTA's piece)."""
    off = per_cta_offsets(layout)
    return off.invert().apply(dict(zip(off.out_dims, coords)))[OFFSET] * elem_bits // 8


def operand_major(layout: LinearLayout, operand: str) -> str:
    """``"K"`` or ``"MN"``: which matrix dim of the A (``[M, K]``) or B (``[K, N]``) buffer
    is contiguous (the image of offset bit 0)."""
    if operand not in ("A", "B"):
        raise LayoutError(f"operand must be 'A' or 'B', not {operand!r}")
    off = per_cta_offsets(layout)
    if off.num_out_dims != 2:
        raise LayoutError(f"wgmma operands are 2-D buffers, this one has {off.num_out_dims} dims", layout)
    first = off.in_bases(OFFSET)[0] if off.in_dim_bits(OFFSET) else None
    if first not in ((0, 1), (1, 0)):
        raise LayoutError("the buffer's first two elements are not neighbours along one dim: not an "
                          "NVMMA layout", layout)
    contig = 1 if first == (0, 1) else 0
    k_dim = 1 if operand == "A" else 0
    return "K" if contig == k_dim else "MN"
