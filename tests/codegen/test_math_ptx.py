"""The math routines of ``tlxc/codegen/nvptx/lower_math.py`` (erf, round, float ``%`` and
the f64 transcendentals) compile for sm_90a and sm_100a and ptxas assembles them, without
spills; FileCheck lines pin the methods they use. Their accuracy is measured on the GPU
(tests/gpu/test_math_gpu.py).

The kernels are written as IR text: ``tl.tanh``, ``tl.tan`` and ``tl.math.round`` have no
frontend spelling yet, and IR in, PTX out is how the code generator is tested anyway.
"""

from __future__ import annotations

import functools

import pytest
from codegen_helpers import NVIDIA_ARCHS, filecheck, ptxas_or_skip

from tlxc import CompilationError
from tlxc.codegen.nvptx import compile as nvptx
from tlxc.codegen.nvptx import lower_math
from tlxc.codegen.nvptx.toolchain import ptxas
from tlxc.ir import ops
from tlxc.ir.parser import parse_ir

F64_FUNCTIONS = ("exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh", "rsqrt", "erf", "round")
NARROW_FUNCTIONS = ("erf", "round")  # f32, and f16/bf16 through f32
TYPES = {"fp64": "f64", "fp32": "f32", "fp16": "f16", "bf16": "bf16"}


def unary_ir(op: str, t: str, block: int = 128, num_warps: int = 4) -> str:
    """y[i] = op(x[i]) for i < n, ``block`` elements per program."""
    tile = f"tile<{block}x{t}>"
    return f'''module {{
^():
  func {{sym_name = "{op}_{t}", arg_divisibility = [16, 16, 1], num_warps = {num_warps}}} {{
  ^(%x: ptr<{t}>, %y: ptr<{t}>, %n: i32):
    %0 = program_id {{axis = 0}} : i32
    %1 = constant {{value = {block}}} : i32
    %2 = mul %0, %1 : i32
    %3 = arange {{start = 0, end = {block}}} : tile<{block}xi32>
    %4 = splat %2 : tile<{block}xi32>
    %5 = add %4, %3 : tile<{block}xi32>
    %6 = splat %n : tile<{block}xi32>
    %7 = cmp %5, %6 {{predicate = "lt"}} : tile<{block}xi1>
    %8 = splat %x : tile<{block}xptr<{t}>>
    %9 = addptr %8, %5 : tile<{block}xptr<{t}>>
    %10 = load %9, mask=%7 : {tile}
    %11 = {op} %10 : {tile}
    %12 = splat %y : tile<{block}xptr<{t}>>
    %13 = addptr %12, %5 : tile<{block}xptr<{t}>>
    store %13, %11, mask=%7
    return
  }}
}}
'''


def rem_ir(t: str, block: int = 128, num_warps: int = 4) -> str:
    """z[i] = x[i] % y[i] (C fmod) for i < n."""
    tile = f"tile<{block}x{t}>"
    return f'''module {{
^():
  func {{sym_name = "rem_{t}", arg_divisibility = [16, 16, 16, 1], num_warps = {num_warps}}} {{
  ^(%x: ptr<{t}>, %y: ptr<{t}>, %z: ptr<{t}>, %n: i32):
    %0 = program_id {{axis = 0}} : i32
    %1 = constant {{value = {block}}} : i32
    %2 = mul %0, %1 : i32
    %3 = arange {{start = 0, end = {block}}} : tile<{block}xi32>
    %4 = splat %2 : tile<{block}xi32>
    %5 = add %4, %3 : tile<{block}xi32>
    %6 = splat %n : tile<{block}xi32>
    %7 = cmp %5, %6 {{predicate = "lt"}} : tile<{block}xi1>
    %8 = splat %x : tile<{block}xptr<{t}>>
    %9 = addptr %8, %5 : tile<{block}xptr<{t}>>
    %10 = load %9, mask=%7 : {tile}
    %11 = splat %y : tile<{block}xptr<{t}>>
    %12 = addptr %11, %5 : tile<{block}xptr<{t}>>
    %13 = load %12, mask=%7 : {tile}
    %14 = rem %10, %13 : {tile}
    %15 = splat %z : tile<{block}xptr<{t}>>
    %16 = addptr %15, %5 : tile<{block}xptr<{t}>>
    store %16, %14, mask=%7
    return
  }}
}}
'''


@functools.lru_cache(maxsize=None)
def ptx_of(ir: str, arch: str) -> str:
    return nvptx.generate(parse_ir(ir), arch).ptx


def assemble(ir: str, arch: str) -> None:
    ptxas_or_skip()
    res = ptxas(ptx_of(ir, arch), arch)
    assert res.cubin[:4] == b"\x7fELF"
    assert (res.spill_stores, res.spill_loads) == (0, 0), f"spills {res.spill_stores}/{res.spill_loads} bytes"


CASES = ([(op, "f64") for op in F64_FUNCTIONS]
         + [(op, t) for op in NARROW_FUNCTIONS for t in ("f32", "f16", "bf16")])


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("op,t", CASES, ids=[f"{op}-{t}" for op, t in CASES])
def test_math_routine_assembles(op: str, t: str, arch: str) -> None:
    assemble(unary_ir(op, t), arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16"])
def test_float_rem_assembles(t: str, arch: str) -> None:
    assemble(rem_ir(t), arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("op,labels", [("sin", 8), ("erf", 0), ("rem", 16)])
def test_routines_repeat_per_register(op: str, labels: int, arch: str) -> None:
    """1024 f64 elements over 128 threads: eight copies of the routine per thread, each
    with its own labels (fmod's loop, the trig functions' Payne-Hanek branch; erf has
    none), and still no spills."""
    ir = rem_ir("f64", block=1024) if op == "rem" else unary_ir(op, "f64", block=1024)
    placed = [line[:-1] for line in ptx_of(ir, arch).splitlines() if line.startswith("$")]
    assert len(placed) == len(set(placed)) == labels
    assemble(ir, arch)


def test_every_math_function_compiles_for_f64_and_f32() -> None:
    """No TLXC-CODEGEN-001 is left for a float math function (fp8 aside)."""
    for name in ops.MATH_FUNCTIONS:
        for t in ("f64", "f32", "bf16"):
            try:
                ptx_of(unary_ir(name, t), "sm_90a")
            except CompilationError as e:  # pragma: no cover - the assertion says which
                pytest.fail(f"tl.{name} on {t}: {e}")


def test_fp8_math_still_refused() -> None:
    with pytest.raises(CompilationError) as info:
        ptx_of(unary_ir("erf", "f8e4m3"), "sm_90a")
    assert info.value.code == "TLXC-CODEGEN-001"


def test_two_over_pi_table() -> None:
    """The Payne-Hanek table is 2/pi's binary expansion: recompute it with integers
    (Machin's formula for pi, 64 guard bits)."""
    nbits = 64 * len(lower_math.TWO_OVER_PI_WORDS)
    prec = nbits + 64
    one = 1 << prec

    def arctan_inv(k: int) -> int:  # arctan(1/k) * 2^prec
        total, term, n, sign = 0, one // k, 1, 1
        while term:
            total += sign * (term // n)
            term //= k * k
            n += 2
            sign = -sign
        return total

    pi = 4 * (4 * arctan_inv(5) - arctan_inv(239))
    two_over_pi = (2 << (prec + nbits)) // pi  # floor(2/pi * 2^nbits), up to the last guard bits
    words = [(two_over_pi >> (64 * (len(lower_math.TWO_OVER_PI_WORDS) - 1 - i))) & (2 ** 64 - 1)
             for i in range(len(lower_math.TWO_OVER_PI_WORDS))]
    assert words[:-1] == list(lower_math.TWO_OVER_PI_WORDS[:-1])
    assert abs(words[-1] - lower_math.TWO_OVER_PI_WORDS[-1]) <= 1


# -- what the routines are made of -----------------------------------------------------------------


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_erf_f32_is_polynomials_and_an_accurate_exp(arch: str) -> None:
    """f32 erf: an odd polynomial below 0.921875, 1 - exp(log-erfc polynomial) above, with
    exp reduced by ln2 and rebuilt in the exponent field (no ex2.approx: its 2 ulp would
    show in the result); the two paths are chosen with selp, NaN by the unordered
    compare."""
    filecheck(ptx_of(unary_ir("erf", "f32"), arch), test_erf_f32_is_polynomials_and_an_accurate_exp, arch)
    # CHECK-LABEL: .entry erf_f32(
    # CHECK:       abs.f32 [[T:%f[0-9]+]],
    # CHECK-COUNT-6: fma.rn.f32
    # CHECK:       min.f32 {{%f[0-9]+}}, [[T]], 0f40800000;
    # CHECK:       cvt.rni.f32.f32
    # CHECK:       shl.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 23;
    # CHECK:       sub.rn.f32 {{%f[0-9]+}}, 0f3F800000,
    # CHECK-NEXT:  setp.ltu.f32 [[SMALL:%p[0-9]+]], [[T]], 0f3F6C0000;
    # CHECK-NEXT:  copysign.f32
    # CHECK-NEXT:  selp.f32 {{%f[0-9]+}}, {{%f[0-9]+}}, {{%f[0-9]+}}, [[SMALL]];
    # CHECK-NOT:   ex2.approx
    # CHECK:       st.global


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_fmod_is_an_integer_long_division(arch: str) -> None:
    """f64 %: significands as integers, a loop of shift-and-remainder steps of at most 11
    bits, then the remainder renormalized into the result's bits."""
    filecheck(ptx_of(rem_ir("f64"), arch), test_fmod_is_an_integer_long_division, arch)
    # CHECK-LABEL: .entry rem_f64(
    # CHECK:       rem.u64 [[R:%rd[0-9]+]],
    # CHECK-NEXT:  [[HEAD:\$_fmod[0-9]+]]:
    # CHECK-NEXT:  setp.le.s32 [[STOP:%p[0-9]+]], [[D:%r[0-9]+]], 0;
    # CHECK-NEXT:  @[[STOP]] bra [[DONE:\$_fmod_done[0-9]+]];
    # CHECK-NEXT:  min.s32 [[K:%r[0-9]+]], [[D]], 11;
    # CHECK-NEXT:  shl.b64 [[R]], [[R]], [[K]];
    # CHECK-NEXT:  rem.u64 [[R]], [[R]], {{%rd[0-9]+}};
    # CHECK-NEXT:  sub.s32 [[D]], [[D]], [[K]];
    # CHECK-NEXT:  bra [[HEAD]];
    # CHECK-NEXT:  [[DONE]]:
    # CHECK-NEXT:  clz.b64 {{%r[0-9]+}}, [[R]];
    # CHECK-NOT:   div.
    # CHECK:       st.global


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_sin_f64_reduces_by_cody_waite_then_payne_hanek(arch: str) -> None:
    """f64 sin: the three-part Cody-Waite reduction inline, and for |x| >= 2^32 a branch
    to the Payne-Hanek reduction (a 64 x 256-bit product with the words of 2/pi)."""
    filecheck(ptx_of(unary_ir("sin", "f64"), arch), test_sin_f64_reduces_by_cody_waite_then_payne_hanek, arch)
    # CHECK-LABEL: .entry sin_f64(
    # CHECK:       mul.rn.f64 {{%fd[0-9]+}}, {{%fd[0-9]+}}, 0d3FE45F306DC9C883;
    # CHECK-NEXT:  cvt.rni.f64.f64 [[K:%fd[0-9]+]],
    # CHECK-NEXT:  fma.rn.f64 {{%fd[0-9]+}}, [[K]], 0dBFF921FB54442D18,
    # CHECK:       setp.ge.f64 {{%p[0-9]+}}, {{%fd[0-9]+}}, 0d41F0000000000000;
    # CHECK:       @!{{%p[0-9]+}} bra [[SKIP:\$_trig_reduced[0-9]+]];
    # CHECK:       add.cc.u64
    # CHECK-NEXT:  addc.cc.u64
    # CHECK-NEXT:  addc.cc.u64
    # CHECK-NEXT:  addc.u64
    # CHECK:       [[SKIP]]:
    # CHECK-NOT:   sin.approx
    # CHECK:       st.global
