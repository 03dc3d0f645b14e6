"""``decompose-scaled-dot`` (tlxc/ir/passes/decompose_scaled_dot.py): ``tl.dot_scaled`` on
the NVIDIA targets as decoded, scaled operands and one ordinary ``dot``.

The key check compiles a kernel for sm_90a, runs the NVIDIA pipeline up to and including
the pass, and interprets that IR: its numbers must be the interpreter's own
``dot_scaled`` (the reference semantics) bit for bit, for every format pair, with and
without scales, for groups of 32 and 16 K values, e2m1 packed along K or along M / N,
operands given as their bits, and the special scales 0 (2**-127) and 255 (NaN). Then the
one documented difference (scaled operand values below 2**-126 round to bf16), the choice
of the dot's type, PTX that ptxas assembles for sm_90a and sm_100a, AMD targets keeping
the op, and the refusal of a batched dot_scaled at the user's line.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tlxc
import tlxc.language as tl
from tlxc.codegen.targets import backend
from tlxc.errors import CompilationError
from tlxc.interpreter.rules.amd import e8m0
from tlxc.interpreter.run import run_kernel
from tlxc.ir import print_ir
from tlxc.ir.clone import clone
from tlxc.ir.core import Operation
from tlxc.ir.ops import BitcastOp, DotOp, DotScaledOp
from tlxc.ir.passes import PassOptions, run_pipeline
from tlxc.ir.passes.decompose_scaled_dot import dot_type
from tlxc.ir.passes.pipeline import Entry
from tlxc.ir.verifier import verify

# The reference is the interpreter itself; under TLXC_TEST_ON_GPU=1 `.interpret` would run
# on the GPU, whose sums are in another order.
pytestmark = pytest.mark.interpreter_only

FORMATS = ["e2m1", "e4m3", "e5m2", "bf16", "fp16"]
_DTYPE = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "bf16": ml_dtypes.bfloat16,
          "fp16": np.float16}
_SIG = {"e2m1": "*u8", "e4m3": "*fp8e4nv", "e5m2": "*fp8e5", "bf16": "*bf16", "fp16": "*fp16"}


@tlxc.jit
def scaled(a_ptr, as_ptr, b_ptr, bs_ptr, c_ptr, AM: tl.constexpr, AK: tl.constexpr, BK: tl.constexpr,
           BN: tl.constexpr, M: tl.constexpr, N: tl.constexpr, SK: tl.constexpr, FA: tl.constexpr,
           FB: tl.constexpr, A_PACK: tl.constexpr, B_PACK: tl.constexpr, A_SCALE: tl.constexpr,
           B_SCALE: tl.constexpr):
    """C [M, N] += dot_scaled(A [AM, AK] in FA, B [BK, BN] in FB), scales [M, SK], [N, SK]."""
    ra, rak = tl.arange(0, AM), tl.arange(0, AK)
    rbk, rb = tl.arange(0, BK), tl.arange(0, BN)
    rm, rn, rs = tl.arange(0, M), tl.arange(0, N), tl.arange(0, SK)
    a = tl.load(a_ptr + ra[:, None] * AK + rak[None, :])
    b = tl.load(b_ptr + rbk[:, None] * BN + rb[None, :])
    a_scale = tl.load(as_ptr + rm[:, None] * SK + rs[None, :]) if A_SCALE else None
    b_scale = tl.load(bs_ptr + rn[:, None] * SK + rs[None, :]) if B_SCALE else None
    c_ptrs = c_ptr + rm[:, None] * N + rn[None, :]
    c = tl.dot_scaled(a, a_scale, FA, b, b_scale, FB, tl.load(c_ptrs), lhs_k_pack=A_PACK, rhs_k_pack=B_PACK)
    tl.store(c_ptrs, c)


@tlxc.jit
def batched(a_ptr, b_ptr, c_ptr):
    r2, r32, r64 = tl.arange(0, 2), tl.arange(0, 32), tl.arange(0, 64)
    a = tl.load(a_ptr + r2[:, None, None] * 2048 + r32[None, :, None] * 64 + r64[None, None, :])
    b = tl.load(b_ptr + r2[:, None, None] * 2048 + r64[None, :, None] * 32 + r32[None, None, :])
    c = tl.dot_scaled(a, None, "e4m3", b, None, "e4m3")  # the batched one
    tl.store(c_ptr + r2[:, None, None] * 1024 + r32[None, :, None] * 32 + r32[None, None, :], c)


def _until_pass(arch: str = "sm_90a") -> tuple[PassOptions, list[Entry]]:
    be = backend(arch)
    names = [name for name, _ in be.lowering]
    stop = names.index("decompose-scaled-dot") + 1
    return PassOptions(target=be.info), be.lowering[:stop]


class Case:
    """One dot_scaled: operands, scales, accumulator and the kernel's constants."""

    def __init__(self, rng: np.random.Generator, fa: str, fb: str, a_scale: bool = True, b_scale: bool = True,
                 group: int = 32, a_pack: bool = True, b_pack: bool = True, m: int = 32, n: int = 32, k: int = 64,
                 scales: tuple[tuple[int, int], tuple[int, int]] = ((100, 160), (100, 160)),
                 e4m3_scales: bool = False) -> None:
        a_shape = (m, k) if fa != "e2m1" else ((m, k // 2) if a_pack else (m // 2, k))
        b_shape = (k, n) if fb != "e2m1" else ((k // 2, n) if b_pack else (k, n // 2))
        self.a, self.b = self._operand(rng, fa, a_shape), self._operand(rng, fb, b_shape)
        (alo, ahi), (blo, bhi) = scales
        self.sa = rng.integers(alo, ahi, size=(m, k // group), dtype=np.uint8)
        self.sb = rng.integers(blo, bhi, size=(n, k // group), dtype=np.uint8)
        if e4m3_scales:  # nvfp4's scales: e4m3 values, here from 2**-9 (subnormal) to 448
            self.sa = (rng.random((m, k // group)) * 8).astype(ml_dtypes.float8_e4m3fn)
            self.sb = (rng.random((n, k // group)) * 8).astype(ml_dtypes.float8_e4m3fn)
            self.sa[0, 0], self.sa[1, 0], self.sb[2, 1] = 2.0 ** -9, 448.0, 0.875 * 2.0 ** -6
        self.c = rng.standard_normal((m, n)).astype(np.float32)
        self.consts = dict(AM=a_shape[0], AK=a_shape[1], BK=b_shape[0], BN=b_shape[1], M=m, N=n, SK=k // group,
                           FA=fa, FB=fb, A_PACK=a_pack, B_PACK=b_pack, A_SCALE=a_scale, B_SCALE=b_scale)

    @staticmethod
    def _operand(rng: np.random.Generator, fmt: str, shape: tuple[int, int]) -> np.ndarray:
        if fmt == "e2m1":
            return rng.integers(0, 256, size=shape, dtype=np.uint8)  # every nibble, both signs
        return (rng.standard_normal(shape) * 4).astype(_DTYPE[fmt])

    def args(self, c: np.ndarray) -> list[np.ndarray]:
        return [self.a, self.sa, self.b, self.sb, c]

    def signature(self) -> str:
        def sig(x: np.ndarray) -> str:
            return {"uint8": "*u8", "uint16": "*u16", "float32": "*fp32"}.get(x.dtype.name) or \
                _SIG[{"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "bfloat16": "bf16", "float16": "fp16"}[
                    x.dtype.name]]
        return ",".join(sig(x) for x in self.args(self.c))

    def reference(self) -> np.ndarray:
        """The interpreter's own dot_scaled."""
        out = self.c.copy()
        scaled.interpret[(1,)](*self.args(out), **self.consts)
        return out

    def decomposed_ir(self, arch: str = "sm_90a", edit: Any = None) -> Operation:
        """The IR after decompose-scaled-dot (``edit(module)`` changes the tile IR first)."""
        module = clone(scaled.compile(self.signature(), constants=self.consts, arch=arch).module)
        if edit is not None:
            edit(module)
            verify(module)
        options, passes = _until_pass(arch)
        return run_pipeline(module, options, passes, verify_each=True)

    def decomposed(self, module: Operation | None = None) -> np.ndarray:
        """The numbers of the decomposed IR, run by the interpreter."""
        module = module if module is not None else self.decomposed_ir()
        assert "dot_scaled" not in print_ir(module)
        out = self.c.copy()
        run_kernel(module.funcs[0], (1, 1, 1), self.args(out))
        return out


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert np.array_equal(got, want, equal_nan=True), f"max difference {np.nanmax(np.abs(got - want))}"


@pytest.mark.parametrize("fa", FORMATS)
@pytest.mark.parametrize("fb", FORMATS)
def test_every_format_pair_gives_the_interpreters_numbers(fa: str, fb: str) -> None:
    rng = np.random.default_rng(FORMATS.index(fa) * 8 + FORMATS.index(fb))
    for kw in ({}, {"b_scale": False, "group": 16}, {"a_scale": False}, {"a_scale": False, "b_scale": False}):
        case = Case(rng, fa, fb, **kw)  # type: ignore[arg-type]
        want = case.reference()
        assert np.abs(want - case.c).max() > 0.1  # the dot contributes
        _same(case.decomposed(), want)


@pytest.mark.parametrize("a_pack,b_pack,group", [(False, False, 32), (False, True, 16), (True, False, 16)])
def test_e2m1_packed_along_m_and_n(a_pack: bool, b_pack: bool, group: int) -> None:
    rng = np.random.default_rng(3)
    case = Case(rng, "e2m1", "e2m1", a_pack=a_pack, b_pack=b_pack, group=group)
    _same(case.decomposed(), case.reference())
    case = Case(rng, "e2m1", "e5m2", a_pack=a_pack, group=group)
    _same(case.decomposed(), case.reference())


def _as_bits(module: Operation) -> None:
    """Give dot_scaled its fp8 / bf16 operands as the u8 / u16 bits the frontend read
    (the IR allows both; the frontend bitcasts, so undo that here)."""
    op = next(o for o in module.walk() if isinstance(o, DotScaledOp))
    for i in (0, 1):
        owner = op.operands[i].owner
        if isinstance(owner, BitcastOp):
            op.set_operand(i, owner.x)


@pytest.mark.parametrize("fa,fb", [("e4m3", "e5m2"), ("bf16", "e2m1"), ("fp16", "bf16")])
def test_operands_given_as_bits(fa: str, fb: str) -> None:
    case = Case(np.random.default_rng(5), fa, fb)
    case.a = case.a.view(np.uint8 if case.a.itemsize == 1 else np.uint16)
    if fb != "e2m1":
        case.b = case.b.view(np.uint8 if case.b.itemsize == 1 else np.uint16)
    module = case.decomposed_ir(edit=_as_bits)
    text = print_ir(module)
    assert "bitcast" in text
    _same(case.decomposed(module), case.reference())


def test_a_scale_of_zero_is_two_to_the_minus_127_and_255_is_nan() -> None:
    rng = np.random.default_rng(11)
    # e2m1 values times 2**-127 are exact in bf16 (quantum 0.5 * 2**-127 >= 2**-133)
    case = Case(rng, "e2m1", "e2m1", scales=((0, 3), (246, 253)))
    case.sb[5, 1] = 255  # column 5 of the result is NaN
    want = case.reference()
    assert np.isnan(want[:, 5]).all() and not np.isnan(np.delete(want, 5, axis=1)).any()
    assert (np.abs(want - case.c) > 0.1).any()  # 2**-127 * 2**(246 - 127) is not negligible
    _same(case.decomposed(), want)
    case = Case(rng, "e4m3", "e2m1", scales=((0, 256), (0, 256)))
    _same(case.decomposed(), case.reference())


def test_operand_values_below_bf16s_normal_range_round_to_bf16() -> None:
    """The one documented difference: a scaled e4m3 value below 2**-126 has fewer bits in
    bf16 than in the f32 reference; the decomposition is then (bf16(a * sa)) @
    (bf16(b * sb)), exactly."""
    case = Case(np.random.default_rng(13), "e4m3", "e4m3", scales=((0, 6), (240, 250)))
    case.c[:] = 0
    got, want = case.decomposed(), case.reference()
    assert not np.array_equal(got, want)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())

    def bf16(x: np.ndarray, s: np.ndarray) -> np.ndarray:
        v = x.astype(np.float32) * np.repeat(e8m0(s), 32, axis=1)
        return v.astype(ml_dtypes.bfloat16).astype(np.float32)

    _same(got, bf16(case.a, case.sa) @ bf16(case.b.T, case.sb).T)


@pytest.mark.parametrize("fa,fb,a_scale,b_scale,want", [
    ("e2m1", "e4m3", True, True, "bf16"), ("e5m2", "bf16", False, True, "bf16"), ("bf16", "bf16", False, False, "bf16"),
    ("fp16", "e4m3", False, False, "f16"), ("e2m1", "fp16", False, False, "f16"), ("fp16", "fp16", True, False, "f32"),
    ("e4m3", "fp16", True, False, "f32"), ("fp16", "bf16", False, False, "f32"),
])
def test_the_dot_takes_the_narrowest_exact_type(fa: str, fb: str, a_scale: bool, b_scale: bool, want: str) -> None:
    assert dot_type(fa, fb, a_scale, b_scale).ir_name == want
    module = Case(np.random.default_rng(0), fa, fb, a_scale=a_scale, b_scale=b_scale).decomposed_ir()
    (dot,) = [op for op in module.walk() if isinstance(op, DotOp)]
    assert (dot.a.type.scalar.ir_name, dot.b.type.scalar.ir_name, dot.input_precision) == (want, want, "ieee")


def test_amd_targets_keep_dot_scaled() -> None:
    """The pass only rewrites where the code generator has no rule of its own."""
    from tlxc.ir.passes import decompose_scaled_dot

    case = Case(np.random.default_rng(0), "e4m3", "e4m3")
    module = clone(scaled.compile(case.signature(), constants=case.consts, arch="gfx950").module)
    before = print_ir(module)
    decompose_scaled_dot.run(module, PassOptions(target=backend("gfx950").info))
    assert print_ir(module) == before and "dot_scaled" in before


@pytest.mark.parametrize("arch,mma", [("sm_90a", "wgmma.mma_async"), ("sm_100a", "mma.sync.aligned")])
@pytest.mark.parametrize("fmt", ["e4m3", "e2m1"])
def test_ptx_of_a_64x64x64_scaled_dot_assembles(arch: str, mma: str, fmt: str) -> None:
    from tlxc.codegen.nvptx.toolchain import find_tool

    case = Case(np.random.default_rng(0), fmt, fmt, m=64, n=64, k=64)
    compiled = scaled.compile(case.signature(), constants=case.consts, arch=arch)
    ptx = compiled.asm["ptx"]
    assert ".bf16" in ptx and mma in ptx  # the bf16 dot on the tensor cores
    assert "cvt.rn.bf16" in ptx  # f32 -> bf16 of the scaled operands
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert len(compiled.asm["cubin"]) > 0


def test_a_batched_dot_scaled_is_refused_at_its_line() -> None:
    with pytest.raises(CompilationError) as info:
        batched.compile("*fp8e4nv,*fp8e4nv,*fp32", arch="sm_90a").asm["ptx"]
    err = info.value
    assert err.code == "TLXC-CODEGEN-001"
    assert "batched (rank-3) tl.dot_scaled" in err.message
    assert "# the batched one" in str(err) and err.line is not None


_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def _e2m1_by_hand(packed: np.ndarray) -> np.ndarray:
    """Two e2m1 values per byte along the last axis, the low nibble first."""
    out = np.empty(packed.shape[:-1] + (2 * packed.shape[-1],), np.float32)
    for idx in np.ndindex(packed.shape):
        for half, nibble in enumerate((packed[idx] & 0xF, packed[idx] >> 4)):
            v = _E2M1[nibble & 7]
            out[idx[:-1] + (2 * idx[-1] + half,)] = -v if nibble & 8 else v
    return out


@pytest.mark.parametrize("fa,fb", [("e2m1", "e2m1"), ("e4m3", "e2m1"), ("e5m2", "e4m3"), ("bf16", "e2m1")])
def test_e4m3_scales_of_nvfp4(fa: str, fb: str) -> None:
    """nvfp4 (Triton's tutorial 10): scales are e4m3 values, one per 16 K values. The
    interpreter multiplies by them as they are, and the decomposition gives its numbers
    bit for bit (a bf16 operand times an e4m3 scale needs the f32 dot)."""
    case = Case(np.random.default_rng(17), fa, fb, group=16, e4m3_scales=True)
    want = case.reference()
    _same(case.decomposed(), want)
    if (fa, fb) == ("e2m1", "e2m1"):  # by hand: decode, scale, multiply in float64
        a = _e2m1_by_hand(case.a).astype(np.float64) * np.repeat(case.sa.astype(np.float64), 16, axis=1)
        b = _e2m1_by_hand(case.b.T).astype(np.float64) * np.repeat(case.sb.astype(np.float64), 16, axis=1)
        np.testing.assert_allclose(want, case.c + a @ b.T, rtol=1e-6, atol=1e-5)
        assert np.abs(want - case.c).max() > 1.0
    dot = next(op for op in case.decomposed_ir().walk() if isinstance(op, DotOp))
    assert dot.a.type.scalar.ir_name == ("f32" if fa == "bf16" else "bf16")


def test_e4m3_scales_choose_the_dot_type() -> None:
    assert dot_type("e2m1", "e2m1", True, True, True, True).ir_name == "bf16"  # 2 x 4 significant bits
    assert dot_type("e4m3", "e5m2", True, True, True, True).ir_name == "bf16"  # at most 4 x 4
    assert dot_type("bf16", "e2m1", True, True, True, False).ir_name == "f32"  # 8 x 4 bits: not bf16
    assert dot_type("bf16", "e2m1", True, True, False, False).ir_name == "bf16"  # x a power of two: exact


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptx_of_an_nvfp4_scaled_dot_assembles(arch: str) -> None:
    from tlxc.codegen.nvptx.toolchain import find_tool

    case = Case(np.random.default_rng(0), "e2m1", "e2m1", m=64, n=64, k=64, group=16, e4m3_scales=True)
    compiled = scaled.compile(case.signature(), constants=case.consts, arch=arch)
    ptx = compiled.asm["ptx"]
    assert ".e4m3x2" in ptx  # the scales converted from e4m3
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert len(compiled.asm["cubin"]) > 0


def test_e4m3_scales_are_refused_on_amd_targets() -> None:
    case = Case(np.random.default_rng(0), "e2m1", "e2m1", m=64, n=64, k=64, group=16, e4m3_scales=True)
    with pytest.raises(CompilationError) as info:
        scaled.compile(case.signature(), constants=case.consts, arch="gfx950").asm["amdgcn"]
    err = info.value
    assert err.code == "TLXC-CODEGEN-001"
    assert "lhs_scale of float8e4nv (e4m3 scales, nvfp4) cannot be compiled for gfx950" in err.message
    assert "tl.dot_scaled(a, a_scale" in str(err)  # the user's line


@tlxc.jit
def half_scales(a_ptr, s_ptr, c_ptr):
    r32, r64, r4 = tl.arange(0, 32), tl.arange(0, 64), tl.arange(0, 4)
    a = tl.load(a_ptr + r32[:, None] * 64 + r64[None, :])
    s = tl.load(s_ptr + r32[:, None] * 4 + r4[None, :])
    c = tl.dot_scaled(a, s, "e4m3", a.T, None, "e4m3")  # scales of fp16
    tl.store(c_ptr + r32[:, None] * 32 + r32[None, :], c)


def test_scales_of_another_float_type_are_refused() -> None:
    with pytest.raises(CompilationError) as info:
        half_scales.compile("*fp8e4nv,*fp16,*fp32", arch="sm_90a")
    err = info.value
    assert err.code == "TLXC-DOT-002"
    assert "lhs_scale holds e8m0 exponents as uint8 or e4m3 values as float8e4nv" in err.message
    assert "# scales of fp16" in str(err)
