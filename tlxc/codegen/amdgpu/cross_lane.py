"""Moving values between the lanes of a wave, for reductions (``lower_reduce``) and layout
conversions (``lower_convert``).

Every primitive moves 32-bit words (``to_words`` / ``from_words`` pack other types), and
every lane of the wave executes it: the code generator only calls these outside
lane-divergent control flow (scalars are uniform, so ``for``/``if`` on them are too;
masked loads and stores branch around single accesses, never around these).

Which instruction moves ``lane ^ m`` (a butterfly step), per chip -- the choice of
Triton's AMD back end (``third_party/amd/lib/TritonAMDGPUToLLVM/Utility.cpp``,
``shuffleCommonImpl``) except where noted:

=========  =====================================  ======================================
``m``      gfx942 / gfx950 (GFX9, wave64)         gfx1250 (GFX12.5, wave32)
=========  =====================================  ======================================
1, 2       DPP ``quad_perm:[1,0,3,2]`` / ``[2,3,0,1]``   the same
4, 8       two DPP moves: ``row_shr:m`` into the      DPP ``row_xmask:m`` (one move; GFX10+,
           banks that read downwards, ``row_shl:m``   LLVM's ``AMDGPUAtomicOptimizer`` uses
           into the others (``bank_mask``)            it for its reductions)
16         ``ds_swizzle`` bit-mask mode, xor 16       the same
32         ``ds_bpermute`` from lane ``lane ^ 32``    (no such lane bit)
=========  =====================================  ======================================

Facts relied on, with sources:

* DPP (``llvm.amdgcn.update.dpp``, IntrinsicsAMDGPU.td: "equivalent to ``v_mov_b32
  <dest> <old>; v_mov_b32 <dest> <src> <dpp_ctrl> <row_mask> <bank_mask> <bound_ctrl>``"):
  a *row* is 16 lanes, a *bank* 4 lanes of a row; lanes of a bank left out of
  ``bank_mask`` keep ``old``. ``quad_perm`` (ctrl 0x00-0xFF) lets lane ``i`` of each quad
  read quad lane ``sel[i]`` (2 bits each, lane 0 lowest); ``row_shl:n`` (0x100+n) reads
  lane ``i + n`` and ``row_shr:n`` (0x110+n) lane ``i - n`` of the same row;
  ``row_xmask:n`` (0x160+n) reads lane ``i ^ n`` of the row. Encodings: LLVM
  ``SIDefines.h`` (``DPP::DppCtrl``); ``row_xmask`` is GFX10+ only -- LLVM 22 refuses it
  for gfx942/gfx950 ("row_share and row_xmask are not supported before GFX10"), and the
  row broadcasts (``row_bcast:15/31``) are GFX9 only ("broadcasts are not supported on
  GFX10+"), both checked with llvmlite. AMD "CDNA3 ISA" section "DPP"; "RDNA/GFX12 ISA"
  section "DPP16".
* ``ds_swizzle_b32`` with ``offset[15] == 0`` is the bit-mask mode over groups of 32
  lanes: lane ``i`` reads lane ``((i & and_mask) | or_mask) ^ xor_mask`` with
  ``and_mask = offset[4:0]``, ``or_mask = offset[9:5]``, ``xor_mask = offset[14:10]``
  (AMD "CDNA3 ISA", "DS_SWIZZLE_B32"; ``0x401F`` is Triton's xor-16 pattern).
* ``ds_bpermute_b32`` (``llvm.amdgcn.ds.bpermute(index, src)``): lane ``i`` gets ``src``
  of lane ``(index[i] / 4) mod wave``, i.e. the index is a *byte* address, lane * 4. On
  GFX9 it spans the whole 64-lane wave (GCN3+ "Cross-lane operations",
  gpuopen.com/learn/amd-gcn-assembly-cross-lane-operations; Triton uses it for the
  xor-32 step of wave64); on GFX10+ in wave64 mode it would only reach the lane's own 32-lane
  half, which does not arise: gfx1250 is wave32.
* DPP and ``ds_swizzle`` exist on all three chips, ``quad_perm`` and ``row_shl``/
  ``row_shr`` included (checked with llvmlite 0.50 / LLVM 22 for gfx942, gfx950 and
  gfx1250).
"""

from __future__ import annotations

import llvmlite.ir as ir

from .emitter import Emitter
from .llvm import I16, I32, I64, BFloatType

# LLVM SIDefines.h, DPP::DppCtrl
QUAD_PERM_XOR1 = 0b10_11_00_01  # quad_perm:[1,0,3,2]
QUAD_PERM_XOR2 = 0b01_00_11_10  # quad_perm:[2,3,0,1]
ROW_SHL0 = 0x100
ROW_SHR0 = 0x110
ROW_XMASK0 = 0x160
ALL_ROWS = ALL_BANKS = 0xF
# ds_swizzle bit-mask mode, and_mask 0x1F, or_mask 0, xor_mask 16
SWIZZLE_XOR16 = 0x401F


# -- words --------------------------------------------------------------------------------------
def word_count(ty: ir.Type) -> int:
    """32-bit words one value of ``ty`` takes."""
    return 2 if _bits(ty) == 64 else 1


def _bits(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return ty.width
    if isinstance(ty, (ir.HalfType, BFloatType)):
        return 16
    if isinstance(ty, ir.FloatType):
        return 32
    if isinstance(ty, (ir.DoubleType, ir.PointerType)):
        return 64
    raise TypeError(f"no cross-lane move for {ty}")


def to_words(b: ir.IRBuilder, x: ir.Value) -> list[ir.Value]:
    """``x`` as one or two ``i32`` words (narrow values zero-extended)."""
    ty = x.type
    bits = _bits(ty)
    if isinstance(ty, ir.PointerType):
        x = b.ptrtoint(x, I64)
    elif not isinstance(ty, ir.IntType):
        x = b.bitcast(x, ir.IntType(bits))
    if bits == 64:
        return [b.trunc(x, I32), b.trunc(b.lshr(x, ir.Constant(I64, 32)), I32)]
    if bits < 32:
        return [b.zext(x, I32)]
    return [x]


def from_words(b: ir.IRBuilder, words: list[ir.Value], ty: ir.Type) -> ir.Value:
    """The inverse of ``to_words``."""
    bits = _bits(ty)
    if bits == 64:
        lo, hi = (b.zext(w, I64) for w in words)
        x = b.or_(lo, b.shl(hi, ir.Constant(I64, 32)))
    else:
        (x,) = words
        if bits < 32:
            x = b.trunc(x, ir.IntType(bits))
    if isinstance(ty, ir.PointerType):
        return b.inttoptr(x, ty)
    if not isinstance(ty, ir.IntType):
        return b.bitcast(x, ty)
    return x


# -- primitives on one i32 word -----------------------------------------------------------------
def dpp(e: Emitter, old: ir.Value, src: ir.Value, ctrl: int, row_mask: int = ALL_ROWS,
        bank_mask: int = ALL_BANKS) -> ir.Value:
    fn = e.intrinsic("llvm.amdgcn.update.dpp.i32", I32, [I32, I32, I32, I32, I32, ir.IntType(1)])
    return e.b.call(fn, [old, src, ir.Constant(I32, ctrl), ir.Constant(I32, row_mask),
                         ir.Constant(I32, bank_mask), ir.Constant(ir.IntType(1), 0)])


def ds_swizzle(e: Emitter, x: ir.Value, pattern: int) -> ir.Value:
    return e.b.call(e.intrinsic("llvm.amdgcn.ds.swizzle", I32, [I32, I32]), [x, ir.Constant(I32, pattern)])


def ds_bpermute(e: Emitter, lane: ir.Value, x: ir.Value) -> ir.Value:
    """``x`` of lane ``lane`` (an ``i32`` per lane; the byte address is ``lane * 4``)."""
    addr = e.b.shl(lane, ir.Constant(I32, 2))
    return e.b.call(e.intrinsic("llvm.amdgcn.ds.bpermute", I32, [I32, I32]), [addr, x])


def xor_word(e: Emitter, x: ir.Value, m: int) -> ir.Value:
    """The word ``x`` of lane ``lane ^ m`` (``m`` a power of two below the wave size)."""
    assert m & (m - 1) == 0 and 0 < m < e.target.wave_size
    if m == 1:
        return dpp(e, x, x, QUAD_PERM_XOR1)
    if m == 2:
        return dpp(e, x, x, QUAD_PERM_XOR2)
    if m in (4, 8):
        if e.target.dpp_row_xmask:
            return dpp(e, x, x, ROW_XMASK0 + m)
        # Banks (4 lanes) whose lanes have bit m set read m lanes down (row_shr), the
        # others m lanes up (row_shl): bank k has lanes 4k..4k+3, so bit 4 is bank bit 0
        # and bit 8 bank bit 1.
        down = 0xA if m == 4 else 0xC
        t = dpp(e, x, x, ROW_SHR0 + m, bank_mask=down)
        return dpp(e, t, x, ROW_SHL0 + m, bank_mask=ALL_BANKS & ~down)
    if m == 16:
        return ds_swizzle(e, x, SWIZZLE_XOR16)
    lane = e.in_entry(f"lane^{m}", lambda b: b.xor(e.special("lane"), ir.Constant(I32, m)))
    return ds_bpermute(e, lane, x)


# -- on values of any type ----------------------------------------------------------------------
def xor_lanes(e: Emitter, x: ir.Value, m: int) -> ir.Value:
    """``x`` (any register type) of lane ``lane ^ m``."""
    words = to_words(e.b, x)
    return from_words(e.b, [xor_word(e, w, m) for w in words], x.type)


def read_lane(e: Emitter, x: ir.Value, lane: ir.Value) -> ir.Value:
    """``x`` (any register type) of lane ``lane`` of this wave (a per-lane ``i32``)."""
    words = to_words(e.b, x)
    return from_words(e.b, [ds_bpermute(e, lane, w) for w in words], x.type)


def uniform(e: Emitter, x: ir.Value) -> ir.Value:
    """``x``, known to be equal in every lane, as a wave-uniform value
    (``llvm.amdgcn.readfirstlane``, overloaded on any type since LLVM 19), so that it
    lives in a scalar register and a branch on it is uniform."""
    if isinstance(x, ir.Constant):
        return x
    ty = x.type
    if isinstance(ty, ir.PointerType) or (isinstance(ty, ir.IntType) and ty.width == 1):
        return x
    words = to_words(e.b, x)
    fn = e.intrinsic("llvm.amdgcn.readfirstlane.i32", I32, [I32])
    return from_words(e.b, [e.b.call(fn, [w]) for w in words], ty)


__all__ = ["I16", "to_words", "from_words", "xor_lanes", "read_lane", "uniform", "word_count", "ds_bpermute"]
