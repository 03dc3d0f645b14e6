"""The MFMA and WMMA instructions of each AMDGPU target, as data, and a chooser.

Sources: LLVM's ``llvm/include/llvm/IR/IntrinsicsAMDGPU.td`` (intrinsic names and
operand types; its ``llvm/test/Analysis/UniformityAnalysis/AMDGPU`` tests spell the
gfx1250 WMMA call forms), the AMD CDNA3 and CDNA4 ISA guides ("Matrix Arithmetic
Instructions") and the gfx1250 section of LLVM's AMDGPUUsage, and Triton's instruction
tables (``third_party/amd/lib/TritonAMDGPUTransforms/MfmaGroup.cpp``,
``WmmaGroup.cpp``) for ``k_base``. Every entry is compiled by llvmlite's LLVM 22 in
``tests/codegen/test_amd_mma_table.py``, which checks the ``v_mfma_*`` / ``v_wmma_*``
mnemonic in the assembly.

Conventions:

* dtypes are tlxc's names: ``fp16``, ``bf16``, ``fp32`` (IEEE f32 products), ``tf32``
  (``xf32``: fp32 operands rounded to tf32, gfx942 only), ``int8``, and the fp8 flavour
  of each chip -- ``fp8e4b8``/``fp8e5b16`` (fnuz) on gfx942, ``fp8e4nv``/``fp8e5`` (OCP)
  on gfx950 and gfx1250. ``fp4``/``fp6`` appear only in scaled entries (``f8f6f4``).
* ``k_base``: elements of A (and of B) that one lane feeds one instruction; the dot
  operand ``k_width`` is ``k_base`` or a multiple (Triton's kPack).
* LLVM types are the intrinsic's operand types: fp8 and int8 vectors travel as ``i64`` /
  ``<N x i32>``; bf16 on gfx942 as ``<4 x i16>``.
* ``args`` is the call's argument list with ``{a}``, ``{b}``, ``{c}`` (typed operands)
  and, for scaled entries, ``{scale_a}``/``{scale_b}`` (i32 or i64 holding E8M0
  scales); the other operands are immediates (CBSZ/ABID/BLGP = 0, no negation, no
  reuse hints, formats).
* The gfx950 ``v_mfma_f32_{16x16x128,32x32x64}_f8f6f4`` instructions have no intrinsic
  of their own: LLVM selects them from ``llvm.amdgcn.mfma.scale.*`` with zero scales.
"""

from __future__ import annotations

from dataclasses import dataclass

WAVE = {"gfx942": 64, "gfx950": 64, "gfx1250": 32}


@dataclass(frozen=True)
class MmaInstr:
    arch: str
    m: int
    n: int
    k: int
    a_dtype: str
    b_dtype: str
    acc_dtype: str
    intrinsic: str        # LLVM intrinsic, with its overload suffix where it has one
    a_type: str           # LLVM operand types
    b_type: str
    c_type: str           # accumulator and result
    args: str             # argument template, see the module docstring
    k_base: int
    mnemonic: str         # the instruction the assembly must contain
    scaled: bool = False
    blocks: int = 1       # independent result blocks (16 for the 4x4 instructions)

    @property
    def kind(self) -> str:
        return "wmma" if ".wmma." in self.intrinsic else "mfma"

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    def declaration(self) -> str:
        """The LLVM ``declare`` line of the intrinsic."""
        types = [_arg_type(t, self) for t in _split(self.args)]
        return f"declare {self.c_type} @{self.intrinsic}({', '.join(types)})"

    def call(self, a: str, b: str, c: str, scale_a: str = "i32 0", scale_b: str = "i32 0") -> str:
        """``call`` text for SSA values ``a``, ``b``, ``c`` (names like ``%a``)."""
        text = self.args.format(a=f"{self.a_type} {a}", b=f"{self.b_type} {b}", c=f"{self.c_type} {c}",
                                scale_a=scale_a, scale_b=scale_b)
        return f"call {self.c_type} @{self.intrinsic}({text})"


def _split(args: str) -> list[str]:
    return [p.strip() for p in args.split(",")]


def _arg_type(token: str, e: MmaInstr) -> str:
    names = {"{a}": e.a_type, "{b}": e.b_type, "{c}": e.c_type}
    if token in names:
        return names[token]
    if token in ("{scale_a}", "{scale_b}"):
        return "i64" if ".scale16." in e.intrinsic else "i32"
    return token.split()[0]


_MFMA = "{a}, {b}, {c}, i32 0, i32 0, i32 0"
_F8F6F4 = "{a}, {b}, {c}, i32 %d, i32 %d, i32 0, i32 0, i32 0, i32 0"        # unscaled use
_F8F6F4_SCALED = "{a}, {b}, {c}, i32 %d, i32 %d, i32 0, {scale_a}, i32 0, {scale_b}"
_WMMA16 = "i1 0, {a}, i1 0, {b}, i16 0, {c}, i1 0, i1 0"
_WMMA8 = "{a}, {b}, i16 0, {c}, i1 0, i1 0"
_WMMA_IU8 = "i1 1, {a}, i1 1, {b}, {c}, i1 0, i1 0"
_WMMA_F8F6F4_SCALED = ("i32 %d, {a}, i32 %d, {b}, i16 0, {c}, i32 0, i32 0, {scale_a}, "
                       "i32 0, i32 0, {scale_b}, i1 0, i1 0")

# Format codes of the f8f6f4 instructions (CBSZ / BLGP on MFMA, matrix_*_fmt on WMMA).
F8F6F4_FORMAT = {"fp8e4nv": 0, "fp8e5": 1, "fp6e2m3": 2, "fp6e3m2": 3, "fp4e2m1": 4}
_F8F6F4_A_TYPE = {0: "<8 x i32>", 1: "<8 x i32>", 2: "<6 x i32>", 3: "<6 x i32>", 4: "<4 x i32>"}


def _mfma(arch: str, shape: tuple[int, int, int], a: str, b: str, acc: str, name: str, ab_type: str,
          k_base: int, mnemonic: str, blocks: int = 1) -> MmaInstr:
    m, n, k = shape
    c_type = f"<{m * n * blocks // 64} x {'i32' if acc == 'int32' else 'float'}>"
    return MmaInstr(arch, m, n, k, a, b, acc, f"llvm.amdgcn.mfma.{name}", ab_type, ab_type, c_type, _MFMA,
                    k_base, mnemonic, blocks=blocks)


def _fp8_pairs(e4: str, e5: str) -> list[tuple[str, str, str]]:
    return [(e4, e4, "fp8"), (e4, e5, "fp8_bf8"), (e5, e4, "bf8_fp8"), (e5, e5, "bf8")]


def _cdna(arch: str) -> list[MmaInstr]:
    t: list[MmaInstr] = []
    for m, k in ((32, 8), (16, 16)):
        t.append(_mfma(arch, (m, m, k), "fp16", "fp16", "fp32", f"f32.{m}x{m}x{k}f16", "<4 x half>", 4,
                       f"v_mfma_f32_{m}x{m}x{k}_f16"))
        t.append(_mfma(arch, (m, m, k), "bf16", "bf16", "fp32", f"f32.{m}x{m}x{k}bf16.1k", "<4 x i16>", 4,
                       f"v_mfma_f32_{m}x{m}x{k}_bf16"))
    for m, k in ((32, 16), (16, 32)):
        t.append(_mfma(arch, (m, m, k), "int8", "int8", "int32", f"i32.{m}x{m}x{k}.i8", "i64", 8,
                       f"v_mfma_i32_{m}x{m}x{k}_i8"))
    for m, k in ((32, 2), (16, 4)):
        t.append(_mfma(arch, (m, m, k), "fp32", "fp32", "fp32", f"f32.{m}x{m}x{k}f32", "float", 1,
                       f"v_mfma_f32_{m}x{m}x{k}_f32"))
    e4, e5 = ("fp8e4b8", "fp8e5b16") if arch == "gfx942" else ("fp8e4nv", "fp8e5")
    for a, b, tag in _fp8_pairs(e4, e5):
        ia, ib = ("fp8" if a == e4 else "bf8"), ("fp8" if b == e4 else "bf8")
        for m, k in ((32, 16), (16, 32)):
            t.append(_mfma(arch, (m, m, k), a, b, "fp32", f"f32.{m}x{m}x{k}.{ia}.{ib}", "i64", 8,
                           f"v_mfma_f32_{m}x{m}x{k}_{ia}_{ib}"))
    # The 4x4 instructions: 16 independent 4x4x4 blocks per wave (used as 4x64 / 64x4).
    t.append(_mfma(arch, (4, 4, 4), "fp16", "fp16", "fp32", "f32.4x4x4f16", "<4 x half>", 4,
                   "v_mfma_f32_4x4x4_16b_f16", blocks=16))
    if arch == "gfx942":
        for m, k in ((32, 4), (16, 8)):
            t.append(_mfma(arch, (m, m, k), "tf32", "tf32", "fp32", f"f32.{m}x{m}x{k}.xf32", "<2 x float>", 2,
                           f"v_mfma_f32_{m}x{m}x{k}_xf32"))
        return t
    # CDNA4 additions: double-K 16-bit and int8 instructions, and the f8f6f4 family.
    for m, k in ((32, 16), (16, 32)):
        t.append(_mfma(arch, (m, m, k), "fp16", "fp16", "fp32", f"f32.{m}x{m}x{k}.f16", "<8 x half>", 8,
                       f"v_mfma_f32_{m}x{m}x{k}_f16"))
        t.append(_mfma(arch, (m, m, k), "bf16", "bf16", "fp32", f"f32.{m}x{m}x{k}.bf16", "<8 x bfloat>", 8,
                       f"v_mfma_f32_{m}x{m}x{k}_bf16"))
    for m, k in ((32, 32), (16, 64)):
        t.append(_mfma(arch, (m, m, k), "int8", "int8", "int32", f"i32.{m}x{m}x{k}.i8", "<4 x i32>", 16,
                       f"v_mfma_i32_{m}x{m}x{k}_i8"))
    for m, k in ((32, 64), (16, 128)):
        c_type = f"<{m * m // 64} x float>"
        for a, b, _ in _fp8_pairs(e4, e5):
            fa, fb = F8F6F4_FORMAT[a], F8F6F4_FORMAT[b]
            t.append(MmaInstr(arch, m, m, k, a, b, "fp32", f"llvm.amdgcn.mfma.scale.f32.{m}x{m}x{k}.f8f6f4.v8i32.v8i32",
                              "<8 x i32>", "<8 x i32>", c_type, _F8F6F4 % (fa, fb), 32,
                              f"v_mfma_f32_{m}x{m}x{k}_f8f6f4"))
        for a in ("fp8e4nv", "fp8e5", "fp6e2m3", "fp6e3m2", "fp4e2m1"):
            for b in ("fp8e4nv", "fp4e2m1"):
                fa, fb = F8F6F4_FORMAT[a], F8F6F4_FORMAT[b]
                ta, tb = _F8F6F4_A_TYPE[fa], _F8F6F4_A_TYPE[fb]
                sa, sb = ta.split()[0][1:], tb.split()[0][1:]
                t.append(MmaInstr(arch, m, m, k, a, b, "fp32",
                                  f"llvm.amdgcn.mfma.scale.f32.{m}x{m}x{k}.f8f6f4.v{sa}i32.v{sb}i32",
                                  ta, tb, c_type, _F8F6F4_SCALED % (fa, fb), 32,
                                  f"v_mfma_scale_f32_{m}x{m}x{k}_f8f6f4", scaled=True))
    return t


def _gfx1250() -> list[MmaInstr]:
    arch = "gfx1250"
    t = [
        MmaInstr(arch, 16, 16, 4, "fp32", "fp32", "fp32", "llvm.amdgcn.wmma.f32.16x16x4.f32.v8f32.v2f32",
                 "<2 x float>", "<2 x float>", "<8 x float>", _WMMA16, 2, "v_wmma_f32_16x16x4_f32"),
        MmaInstr(arch, 16, 16, 32, "fp16", "fp16", "fp32", "llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16",
                 "<16 x half>", "<16 x half>", "<8 x float>", _WMMA16, 16, "v_wmma_f32_16x16x32_f16"),
        MmaInstr(arch, 16, 16, 32, "bf16", "bf16", "fp32", "llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16",
                 "<16 x bfloat>", "<16 x bfloat>", "<8 x float>", _WMMA16, 16, "v_wmma_f32_16x16x32_bf16"),
        MmaInstr(arch, 16, 16, 64, "int8", "int8", "int32", "llvm.amdgcn.wmma.i32.16x16x64.iu8.v8i32.v8i32",
                 "<8 x i32>", "<8 x i32>", "<8 x i32>", _WMMA_IU8, 32, "v_wmma_i32_16x16x64_iu8"),
    ]
    for a, b, _ in _fp8_pairs("fp8e4nv", "fp8e5"):
        ia, ib = ("fp8" if a == "fp8e4nv" else "bf8"), ("fp8" if b == "fp8e4nv" else "bf8")
        for k, vec in ((64, 8), (128, 16)):
            t.append(MmaInstr(arch, 16, 16, k, a, b, "fp32",
                              f"llvm.amdgcn.wmma.f32.16x16x{k}.{ia}.{ib}.v8f32.v{vec}i32", f"<{vec} x i32>",
                              f"<{vec} x i32>", "<8 x float>", _WMMA8, k // 2, f"v_wmma_f32_16x16x{k}_{ia}_{ib}"))
    for a in ("fp8e4nv", "fp8e5", "fp6e2m3", "fp6e3m2", "fp4e2m1"):
        for b in ("fp8e4nv", "fp4e2m1"):
            fa, fb = F8F6F4_FORMAT[a], F8F6F4_FORMAT[b]
            ta, tb = (_WMMA_OPERAND[fa], _WMMA_OPERAND[fb])
            t.append(MmaInstr(arch, 16, 16, 128, a, b, "fp32",
                              f"llvm.amdgcn.wmma.scale.f32.16x16x128.f8f6f4.v8f32.v{ta}i32.v{tb}i32",
                              f"<{ta} x i32>", f"<{tb} x i32>", "<8 x float>", _WMMA_F8F6F4_SCALED % (fa, fb), 64,
                              "v_wmma_scale_f32_16x16x128_f8f6f4", scaled=True))
    return t


# Lane words of a gfx1250 f8f6f4 operand (64 elements per lane): fp8 16, fp6 12, fp4 8.
_WMMA_OPERAND = {0: 16, 1: 16, 2: 12, 3: 12, 4: 8}

TABLE: dict[str, tuple[MmaInstr, ...]] = {
    "gfx942": tuple(_cdna("gfx942")),
    "gfx950": tuple(_cdna("gfx950")),
    "gfx1250": tuple(_gfx1250()),
}


def entries(arch: str, *, scaled: bool | None = None) -> tuple[MmaInstr, ...]:
    """Every instruction of ``arch`` (``scaled`` filters scaled / unscaled ones)."""
    if arch not in TABLE:
        raise KeyError(f"no MMA table for {arch!r}; known: {', '.join(TABLE)}")
    return tuple(e for e in TABLE[arch] if scaled is None or e.scaled == scaled)


def choose_mma(arch: str, a_dtype: str, b_dtype: str, acc_dtype: str, M: int, N: int, K: int) -> MmaInstr | None:
    """The unscaled instruction for ``A[M, K] @ B[K, N] + C`` on ``arch``, or None.

    A simplified form of Triton's ``chooseMfmaInstruction`` / WMMA selection:
    the result tile is 32x32 when M and N are multiples of 32 and 16x16 when they are
    multiples of 16 (WMMA is 16x16 only); among the instructions of that tile for the
    dtypes, the one with the largest K that divides ``K``. Tiles smaller than 16, K not
    a multiple of the smallest instruction K, and dtype combinations the chip lacks
    give None; the 4x4 instructions are never chosen (Triton uses them only for
    M or N below 16, which tlxc does not lower yet).
    """
    cands = [e for e in entries(arch, scaled=False)
             if (e.a_dtype, e.b_dtype, e.acc_dtype) == (a_dtype, b_dtype, acc_dtype) and e.blocks == 1]
    for mn in (32, 16):
        if M % mn or N % mn:
            continue
        fits = [e for e in cands if e.m == mn and K % e.k == 0]
        if fits:
            return max(fits, key=lambda e: e.k)
    return None
