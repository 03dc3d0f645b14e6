"""``tl.dot_scaled`` / ``tlx.dot_scaled`` on AMDGPU.

Two ways, chosen per op by ``plan_of`` (pure, tested in ``tests/codegen/test_amd_dot_scaled.py``):

**Native** (gfx950 ``v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4``, gfx1250
``v_wmma_scale_f32_16x16x128_f8f6f4``): both operands fp8 (e4m3 / e5m2, mixed allowed)
or both e2m1 packed along K, scales per 32 K values (or none: e8m0 127 = 1.0), rank 2,
M, N and K whole instruction tiles. The operands are handled as the bytes they are: a
``DotPlan`` of ``lower_dot`` over byte tiles (fp8: one byte per value; e2m1: two values
per byte, the first in the low nibble -- the order the f8f6f4 instructions read), whose
instruction has ``k`` and ``k_base`` in bytes; the format of each source goes to the
instruction as CBSZ / BLGP (MFMA) or ``matrix_a_fmt`` / ``matrix_b_fmt`` (WMMA), codes
of ``mma_table.F8F6F4_FORMAT``. The accumulator is ``transposed`` as for ``tl.dot``, so
source 0 of the instruction is B (its format and its scales) and source 1 is A.

Per-lane scale operands (an e8m0 byte per 32 K values of a row / column):

* MFMA (gfx950): lane ``l`` holds row ``l % m`` of its source and the 32 K values
  ``32 * (l // m) ..`` of the instruction's K contiguously (k_width = k_base = 32 values:
  32 fp8 bytes or 16 e2m1 bytes), and its scale VGPR holds *that* row's scale of *that*
  K block, in byte 0 (``scale_src_opsel`` = 0 selects byte 0). Sources: LLVM's
  ``IntrinsicsAMDGPU.td`` (``int_amdgcn_mfma_scale_f32_*_f8f6f4``: cbsz, blgp, opsel_a,
  scale_a, opsel_b, scale_b), the CDNA4 ISA guide ("V_MFMA_SCALE_F32_*_F8F6F4"), and
  Triton's ``AccelerateAMDMatmul.cpp`` / ``test/TritonGPU/amd/accelerate-amd-matmul-mfma-gfx950.mlir``,
  whose scale layout for 32x32x64 is ``lane = [[1,0]..[16,0],[0,1]]``: lanes 0-31 rows,
  lane bit 5 the K block; its e2m1 operand layout puts 16 bytes (32 values) per lane
  group, contiguous.
* WMMA (gfx1250, wave32): lane ``l`` holds row ``l % 16``; its 16-byte pieces
  (k_width = 16 bytes, Triton's kWidth) interleave the two lane halves along K
  (half ``h`` holds bytes ``32 j + 16 h ..``), so a lane touches all four 32-value blocks
  of the 128-value instruction K; its scale VGPR holds the four block scales of its row,
  byte ``j`` for block ``j``, the same in both lane halves (``scale_sel`` = 0, format 0 =
  E8M0). Source: Triton's ``test/Conversion/amd/tritongpu_wmma_dot_scaled_to_llvm.mlir``
  (the scale layout ``register = [[0,1],[0,2]], lane = [[1,0]..[8,0],[0,0]]`` packed as
  ``vector<4xi8>`` -> i32) and ``IntrinsicsAMDGPU.td`` (``int_amdgcn_wmma_scale_f32_16x16x128_f8f6f4``).

Scales are staged through LDS row-major ([rows, K / 32] bytes); a lane reads the scale of
a fragment at the address its *scale view* gives (the operand layout with the K
coordinate divided by 32 -- and, for WMMA, without the lane half's K part).

**Decomposed** (everything else: gfx942, which has no scaled MFMA; bf16 / fp16 operands;
e2m1 x fp8 mixes; e2m1 packed along M / N; groups of 16; batched dots; tiles or K that
are not whole scaled instructions): Triton's ``DecomposeScaledBlocked``. Each operand is
decoded in registers (e2m1 unpacked into twice the registers), multiplied by
``2**(s - 127)`` read from its staged scales, rounded to the work type, and run through
``tl.dot``'s MFMA / WMMA path. The work type is bf16 (every e2m1 / e4m3 / e5m2 value
times a power of two is a bf16 value, so the products are those of the interpreter,
barring bf16 under/overflow beyond 2**+-127), and fp32 when an operand is fp16 (fp16 is
not a bf16 subset) -- the fp32 instruction multiplies exactly. A dot no matrix
instruction takes (a tile below 16) is refused at the user's line.

``tiles_per_warp`` is honoured wherever the dot runs on WMMA (gfx1250), native or
decomposed: the accumulator is ``wmma_layout(tiles_per_warp=...)`` and its period is
checked by ``target_ops.check_wmma_period``. MFMA lowerings ignore it, as the seed and
Triton specify ("consumed only by the scaled-WMMA pattern").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import llvmlite.ir as ir

from ...errors import CompilationError, InternalCompilerError
from ...ir import ops
from ...ir.core import Operation
from ...ir.layout.amd import AmdMfma, AmdWmma
from ...ir.layout.common import LANE, REGISTER, dim_names, swizzled_shared
from ...ir.layout.linear import LinearLayout
from .. import target_ops
from .dot_plan import MFMA_VERSION, WMMA_VERSION, DotPlan, choose, warps_per_cta
from .emitter import Emitter, lowers
from .isa import TARGETS, AmdTarget
from .llvm import BFLOAT, F16, F32, I8, I16, I32, bytes_of
from .lower_dot import REGION_ALIGN, Addresses, issue, offset_map, stage
from .mma_table import F8F6F4_FORMAT, MmaInstr, entries

WHERE = "amdgpu"
SCALE_BLOCK = 32  # K values per e8m0 scale that the f8f6f4 instructions read
NATIVE = {"e4m3": "fp8e4nv", "e5m2": "fp8e5", "e2m1": "fp4e2m1"}
_MFMA_ARGS = "{a}, {b}, {c}, i32 %d, i32 %d, i32 0, {scale_a}, i32 0, {scale_b}"
_WMMA_ARGS = "i32 %d, {a}, i32 %d, {b}, i16 0, {c}, i32 0, i32 0, {scale_a}, i32 0, i32 0, {scale_b}, i1 0, i1 0"


@dataclass(frozen=True)
class ScaledPlan:
    """How one dot_scaled runs (see the module docstring)."""

    native: bool
    dot: DotPlan                 # native: over byte tiles; decomposed: over the work type
    instr: MmaInstr | None       # native: the scaled instruction (k, k_base in values)
    pack: int                    # values per byte of the native operands (2: e2m1)
    work: str                    # decomposed: "bf16" or "f32"
    why: str                     # decomposed: why not native (for reports and tests)

    @property
    def mnemonic(self) -> str:
        return (self.instr or self.dot.instr).mnemonic


# ----------------------------------------------------------------------------- the plan
def _dims(a_shape: tuple[int, ...], b_shape: tuple[int, ...], fa: str, fb: str, lpack: bool,
          rpack: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The operand shapes in values (e2m1 unpacked)."""
    a, b = list(a_shape), list(b_shape)
    if fa == "e2m1":
        a[-1 if lpack else -2] *= 2
    if fb == "e2m1":
        b[-2 if rpack else -1] *= 2
    return tuple(a), tuple(b)


def _native_instr(arch: str, fa: str, fb: str, M: int, N: int, K: int) -> MmaInstr | None:
    for mn in (32, 16):
        if M % mn or N % mn:
            continue
        for e in entries(arch, scaled=True):
            # one entry per (A storage, B storage) and shape; the formats are immediates
            if e.m == mn and K % e.k == 0 and e.a_dtype == NATIVE[fa] and \
                    (e.b_dtype == "fp4e2m1") == (fb == "e2m1"):
                fa_c, fb_c = F8F6F4_FORMAT[NATIVE[fa]], F8F6F4_FORMAT[NATIVE[fb]]
                # transposed accumulator: source 0 is B, source 1 is A
                args = (_WMMA_ARGS if e.kind == "wmma" else _MFMA_ARGS) % (fb_c, fa_c)
                return replace(e, a_dtype=NATIVE[fb], b_dtype=NATIVE[fa], a_type=e.b_type, b_type=e.a_type,
                               args=args)
    return None


@lru_cache(maxsize=256)
def choose_scaled(arch: str, fa: str, fb: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...],
                  lpack: bool, rpack: bool, factor: int | None, num_warps: int,
                  tiles_per_warp: tuple[int, ...] | None) -> ScaledPlan | None:
    """The plan of a dot_scaled (None: no matrix instruction takes it)."""
    target = TARGETS[arch]
    tpw = tiles_per_warp if target.has_wmma else None
    va, vb = _dims(a_shape, b_shape, fa, fb, lpack, rpack)
    M, K, N = va[-2], va[-1], vb[-1]
    fp8 = ("e4m3", "e5m2")
    why = ""
    if not target.has_scaled_mma:
        why = f"{arch} has no scaled MFMA"
    elif not ((fa in fp8 and fb in fp8) or (fa == fb == "e2m1")):
        why = f"{fa} x {fb} is not one f8f6f4 storage class"
    elif not (lpack and rpack):
        why = "e2m1 packed along M / N"
    elif factor not in (None, SCALE_BLOCK):
        why = f"scales per {factor} K values"
    elif len(a_shape) != 2:
        why = "batched"
    instr = None if why else _native_instr(arch, fa, fb, M, N, K)
    if not why and instr is None:
        why = "no whole scaled instruction tile"
    if instr is not None:
        pack = 2 if fa == "e2m1" else 1
        byte_instr = replace(instr, k=instr.k // pack, k_base=instr.k_base // pack)
        # MFMA: the whole k_base per lane (one 32-value block); WMMA: 16-byte pieces
        kw = 16 if instr.kind == "wmma" else byte_instr.k_base
        warps = _warps((M, N), num_warps, instr, tpw)
        parent: AmdMfma | AmdWmma
        if instr.kind == "wmma":
            parent = AmdWmma(WMMA_VERSION, True, warps, (instr.m, instr.n, byte_instr.k), tpw)
        else:
            parent = AmdMfma(MFMA_VERSION[arch], (instr.m, instr.n, byte_instr.k), True, warps)
        dot = DotPlan(arch, byte_instr, parent, kw, False, tuple(a_shape), tuple(b_shape), 8)
        return ScaledPlan(True, dot, instr, pack, "", "")
    work = "f32" if "fp16" in (fa, fb) else "bf16"
    plan = choose(arch, work, "f32", "ieee", va, vb, num_warps)
    if plan is None:
        return None
    if tpw is not None and isinstance(plan.parent, AmdWmma):
        warps = _warps(va[:-1] + vb[-1:], num_warps, plan.instr, tpw)
        plan = replace(plan, parent=AmdWmma(plan.parent.version, True, warps, plan.parent.instr_shape, tpw))
    return ScaledPlan(False, plan, None, 1, work, why)


def _warps(shape: tuple[int, ...], num_warps: int, instr: MmaInstr, tpw: tuple[int, ...] | None) -> tuple[int, ...]:
    """Triton's warpsPerTile with each warp's tile ``tiles_per_warp`` instructions big."""
    t = tpw or (1,) * len(shape)
    return warps_per_cta(shape, num_warps, instr.m * t[-2], instr.n * t[-1])


def _factor(op: Operation) -> int | None:
    a_shape = op.a.type.shape
    k = _dims(tuple(a_shape), tuple(op.b.type.shape), op.a_format, op.b_format,
              op.lhs_k_pack, op.rhs_k_pack)[0][-1]
    for name in ("a_scale", "b_scale"):
        s = op.operand(name)
        if s is not None:
            return k // s.type.shape[-1]
    return None


def plan_of(op: Operation, arch: str, num_warps: int) -> ScaledPlan | None:
    a, b = op.a.type, op.b.type
    tpw = op.tiles_per_warp
    return choose_scaled(arch, op.a_format, op.b_format, tuple(a.shape), tuple(b.shape),
                         op.lhs_k_pack, op.rhs_k_pack, _factor(op), num_warps,
                         tuple(tpw) if tpw is not None else None)


def check(op: Operation, target: AmdTarget, num_warps: int) -> None:
    """Refuse, at the user's line, a dot_scaled no matrix instruction takes, and a
    ``tiles_per_warp`` whose WMMA period does not fit the result, and e4m3 scales (nvfp4's:
    AMD's scaled instructions and this file's decomposition read e8m0 exponents only)."""
    for what, s in (("lhs_scale", op.a_scale), ("rhs_scale", op.b_scale)):
        if s is not None and s.type.scalar.ir_name != "u8":
            raise CompilationError("TLXC-CODEGEN-001", f"tl.dot_scaled with {what} of {s.type.scalar.tl_name} "
                                   f"(e4m3 scales, nvfp4) cannot be compiled for {target.arch}: its code generator "
                                   "reads e8m0 scales (uint8) only", op.loc,
                                   "use e8m0 scales (uint8 exponents, mxfp4 / mxfp8), or an NVIDIA target or the "
                                   "interpreter")
    plan = plan_of(op, target.arch, num_warps)
    if plan is None:
        raise CompilationError("TLXC-CODEGEN-001", f"tl.dot_scaled of {list(op.result.type.shape)} cannot be "
                               f"compiled for {target.arch}: no {'WMMA' if target.has_wmma else 'MFMA'} "
                               "instruction takes this shape (M and N must be multiples of 16, K whole "
                               "instruction steps)", op.loc, "use tiles of at least 16 x 16 with K a multiple "
                               "of 32, or run it in the interpreter")
    tpw = op.tiles_per_warp
    if tpw is not None and isinstance(plan.dot.parent, AmdWmma):
        target_ops.check_wmma_period(op, (plan.dot.instr.m, plan.dot.instr.n, plan.dot.instr.k),
                                     plan.dot.parent.warps_per_cta)


def accumulator_layout(op: Operation, arch: str, num_warps: int) -> LinearLayout | None:
    plan = plan_of(op, arch, num_warps)
    return plan.dot.accumulator() if plan is not None else None


# ----------------------------------------------------------------------------- layouts of scales and values
def scale_view(operand: LinearLayout, op_idx: int, k_shift: int, drop_lane_k: bool) -> LinearLayout:
    """The scale each register of an operand layout uses: (row / column, K >> k_shift),
    as a layout over the scale tile [rows, K / block]. ``drop_lane_k``: lanes contribute
    no K (each lane addresses the scales of its row from the block of its register)."""
    k_dim = 1 if op_idx == 0 else 0
    other = 1 - k_dim
    bases = {}
    for d in operand.in_dims:
        bases[d] = [(b[other], 0 if (drop_lane_k and d == LANE) else b[k_dim] >> k_shift)
                    for b in operand.in_bases(d)]
    names = dim_names(2)
    rows = operand.out_dim_size(operand.out_dims[other])
    blocks = max(1, operand.out_dim_size(operand.out_dims[k_dim]) >> k_shift)
    return LinearLayout(bases, {names[0]: rows, names[1]: blocks})


def unpacked(layout: LinearLayout, axis: int) -> LinearLayout:
    """An e2m1 tile's layout with each byte's two values as registers 2r (low nibble) and
    2r + 1 (high), the value coordinate along ``axis`` doubled."""
    outs = layout.out_dims
    axis %= len(outs)
    unit = tuple(1 if i == axis else 0 for i in range(len(outs)))

    def dbl(b: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(v * 2 if i == axis else v for i, v in enumerate(b))

    bases = {d: ([unit] if d == REGISTER else []) + [dbl(b) for b in layout.in_bases(d)] for d in layout.in_dims}
    sizes = {n: layout.out_dim_size(n) * (2 if i == axis else 1) for i, n in enumerate(outs)}
    return LinearLayout(bases, sizes)


# ----------------------------------------------------------------------------- code
def _regions(sizes: list[int]) -> tuple[list[int], int]:
    starts, at = [], 0
    for s in sizes:
        starts.append(at)
        at = -(-(at + max(s, 1)) // REGION_ALIGN) * REGION_ALIGN
    return starts, at


def _row_major(shape: tuple[int, ...]) -> LinearLayout:
    return swizzled_shared(shape, 1, 1, 1, (1, 0))


def _stage_all(e: Emitter, tiles: list[tuple[list[ir.Value], LinearLayout, LinearLayout, ir.Type]]) -> list[int]:
    sizes = [sh.in_dim_size("offset") * bytes_of(ty) for _, _, sh, ty in tiles]
    starts, total = _regions(sizes)
    e.scratch(total)
    e.barrier()  # the scratch area may still be read by an earlier op (or iteration)
    for (vals, src, sh, ty), at in zip(tiles, starts):
        stage(e, vals, src, sh, at, ty)
    e.barrier()
    return starts


def _lds_load(e: Emitter, ptr: ir.Value, ty: ir.Type, align: int) -> ir.Value:
    return e.b.load(ptr, typ=ty, align=align)


def _e8m0_f32(e: Emitter, s: ir.Value) -> ir.Value:
    """An e8m0 byte as f32 2**(s - 127): s << 23; s = 0 is the subnormal 2**-127; 255 NaN."""
    b = e.b
    w = b.zext(s, I32)
    bits = b.shl(w, ir.Constant(I32, 23))
    bits = b.select(b.icmp_unsigned("==", w, ir.Constant(I32, 0)), ir.Constant(I32, 0x00400000), bits)
    bits = b.select(b.icmp_unsigned("==", w, ir.Constant(I32, 255)), ir.Constant(I32, 0x7FC00000), bits)
    return b.bitcast(bits, F32)


def _minifloat_f32(e: Emitter, x: ir.Value, ebits: int, mbits: int, nan_all_ones: bool) -> ir.Value:
    """An OCP minifloat (sign, ``ebits``, ``mbits``; in the low bits of ``x``) as f32, in
    software: gfx942's ``v_cvt_f32_fp8`` decodes the fnuz formats, not these."""
    b = e.b
    w = b.zext(x, I32) if x.type != I32 else x
    bias = (1 << (ebits - 1)) - 1
    top = ebits + mbits
    sign = b.shl(b.and_(b.lshr(w, ir.Constant(I32, top)), ir.Constant(I32, 1)), ir.Constant(I32, 31))
    exp = b.and_(b.lshr(w, ir.Constant(I32, mbits)), ir.Constant(I32, (1 << ebits) - 1))
    man = b.and_(w, ir.Constant(I32, (1 << mbits) - 1))
    normal = b.or_(b.shl(b.add(exp, ir.Constant(I32, 127 - bias)), ir.Constant(I32, 23)),
                   b.shl(man, ir.Constant(I32, 23 - mbits)))
    sub = b.bitcast(b.fmul(b.uitofp(man, F32), ir.Constant(F32, 2.0 ** (1 - bias - mbits))), I32)
    mag = b.select(b.icmp_unsigned("==", exp, ir.Constant(I32, 0)), sub, normal)
    if ebits == 5:  # e5m2: all-ones exponent is inf / NaN
        special = b.or_(ir.Constant(I32, 0x7F800000), b.shl(man, ir.Constant(I32, 21)))
        mag = b.select(b.icmp_unsigned("==", exp, ir.Constant(I32, 31)), special, mag)
    elif nan_all_ones:  # e4m3fn: only S.1111.111 is NaN
        low = b.and_(w, ir.Constant(I32, (1 << top) - 1))
        mag = b.select(b.icmp_unsigned("==", low, ir.Constant(I32, (1 << top) - 1)), ir.Constant(I32, 0x7FC00000),
                       mag)
    return b.bitcast(b.or_(sign, mag), F32)


def _decode(e: Emitter, x: ir.Value, fmt: str) -> ir.Value:
    if fmt == "e4m3":
        return _minifloat_f32(e, x, 4, 3, True)
    if fmt == "e5m2":
        return _minifloat_f32(e, x, 5, 2, False)
    if fmt == "e2m1":
        return _minifloat_f32(e, x, 2, 1, False)
    ty = BFLOAT if fmt == "bf16" else F16
    if x.type == I16:
        x = e.b.bitcast(x, ty)
    return e.b.fpext(x, F32)


def _operand_values(e: Emitter, op: Operation, i: int) -> tuple[list[ir.Value], LinearLayout]:
    """Operand ``i``'s values as f32 times their scales, and their layout (e2m1 unpacked)."""
    v = op.operands[i]
    tile = e.get(v)
    fmt = op.attrs["a_format" if i == 0 else "b_format"]
    layout, vals = tile.layout, list(tile.vals)
    if fmt == "e2m1":
        k_pack = op.attrs["lhs_k_pack" if i == 0 else "rhs_k_pack"]
        axis = (-1 if k_pack else -2) if i == 0 else (-2 if k_pack else -1)
        layout = unpacked(layout, axis)
        vals = [n for x in vals for n in (e.b.and_(x, ir.Constant(I8, 15)), e.b.lshr(x, ir.Constant(I8, 4)))]
    return [_decode(e, x, fmt) for x in vals], layout


def _apply_scales(e: Emitter, op: Operation, values: list[list[ir.Value]], layouts: list[LinearLayout]) -> None:
    """Multiply each operand value by its e8m0 scale, read from the scales staged in LDS."""
    present = [op.a_scale, op.b_scale]
    tiles, which = [], []
    for i, s in enumerate(present):
        if s is not None:
            t = e.get(s)
            tiles.append((list(t.vals), t.layout, _row_major(tuple(s.type.shape)), I8))
            which.append(i)
    if not tiles:
        return
    starts = _stage_all(e, tiles)
    for (i, at), (_, _, shared, _) in zip(zip(which, starts), tiles):
        k = layouts[i].out_dim_size(layouts[i].out_dims[1 if i == 0 else 0])
        blocks = present[i].type.shape[-1]
        view = scale_view(layouts[i], i, (k // blocks).bit_length() - 1, False)
        addr = Addresses(e, offset_map(view, shared), at, 1)
        cache: dict[int, ir.Value] = {}
        for r, x in enumerate(values[i]):
            c = addr.map.register(r)
            if c not in cache:
                cache[c] = _e8m0_f32(e, _lds_load(e, addr.pointer(r), I8, 1))
            values[i][r] = e.b.fmul(x, cache[c])


@lowers(ops.DotScaledOp)
def dot_scaled(e: Emitter, op: Operation) -> None:
    plan = plan_of(op, e.target.arch, e.num_warps)
    if plan is None or op.result.type.layout != plan.dot.accumulator():
        raise InternalCompilerError(WHERE, "dot_scaled reached the code generator without its accumulator layout",
                                    op.loc)
    if plan.native:
        _native(e, op, plan)
    else:
        _decomposed(e, op, plan)


def _decomposed(e: Emitter, op: Operation, plan: ScaledPlan) -> None:
    vals, lays = zip(*(_operand_values(e, op, i) for i in (0, 1)))
    values, layouts = [list(v) for v in vals], list(lays)
    _apply_scales(e, op, values, layouts)
    ty = BFLOAT if plan.work == "bf16" else F32
    if ty != F32:
        values = [[e.b.fptrunc(x, ty) for x in v] for v in values]
    dot = plan.dot
    shared = [dot.shared(i, e.target.lds_banks) for i in (0, 1)]
    starts = _stage_all(e, [(values[i], layouts[i], shared[i], ty) for i in (0, 1)])
    issue(e, op, dot, shared, starts, ty)


def _native(e: Emitter, op: Operation, plan: ScaledPlan) -> None:
    dot = plan.dot
    shared = [dot.shared(i, e.target.lds_banks) for i in (0, 1)]
    tiles = []
    for i in (0, 1):
        t = e.get(op.operands[i])
        tiles.append((list(t.vals), t.layout, shared[i], I8))
    scales = [op.a_scale, op.b_scale]
    for s in scales:
        if s is not None:
            t = e.get(s)
            tiles.append((list(t.vals), t.layout, _row_major(tuple(s.type.shape)), I8))
    starts = _stage_all(e, tiles)
    # per-lane scale readers: (Addresses over the scale view of the operand) or None (1.0)
    wmma = isinstance(dot.parent, AmdWmma)
    shift = (SCALE_BLOCK // plan.pack).bit_length() - 1  # byte K -> block
    readers: list[Addresses | None] = []
    at = 2
    for i, s in enumerate(scales):
        if s is None:
            readers.append(None)
            continue
        view = scale_view(dot.operand(i), i, shift, wmma)
        readers.append(Addresses(e, offset_map(view, _row_major(tuple(s.type.shape))), starts[at], 1))
        at += 1

    def scale(i: int, regs: tuple[int, ...]) -> ir.Value:
        r = readers[i]
        if r is None:
            return ir.Constant(I32, 0x7F7F7F7F if wmma else 127)
        if wmma:  # the four block scales of this lane's row, byte j for block j
            return _lds_load(e, r.pointer(regs[0]), I32, 4)
        return e.b.zext(_lds_load(e, r.pointer(regs[0]), I8, 1), I32)

    issue(e, op, dot, shared, starts, I8, instr=plan.instr, scale=scale)


__all__ = ["ScaledPlan", "choose_scaled", "plan_of", "check", "accumulator_layout", "scale_view", "unpacked",
           "NATIVE"]
