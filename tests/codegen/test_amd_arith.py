"""The AMDGPU elementwise family (``tlxc/codegen/amdgpu/lower_arith.py``, ``lower_cast.py``,
``lower_math.py``) compiles for gfx942, gfx950 and gfx1250: LLVM verifies and compiles
each op on each type, without scratch, and the ISA has the instructions chosen for it
(FileCheck-style, per chip). The numerics of the same lowerings are tested on the host CPU
in ``test_amd_numerics.py``.

The kernels are IR text: y[i] = op(x[i], ...) over one 256-element tile.
"""

from __future__ import annotations

import functools
import re

import pytest

import tlxc
import tlxc.language as tl
from tlxc import CompilationError
from tlxc.codegen.amdgpu import compile as amd
from tlxc.codegen.amdgpu.toolchain import compile_llvm_ir
from tlxc.ir import ops
from tlxc.ir.parser import parse_ir

ARCHS = ("gfx942", "gfx950", "gfx1250")
OCP = ("f8e4m3", "f8e5m2")
FNUZ = ("f8e4m3fnuz", "f8e5m2fnuz")
FP8_OF = {"gfx942": FNUZ, "gfx950": OCP, "gfx1250": OCP}
BLOCK = 256


def kernel_ir(body: str | list[str], in_types: list[str], out_type: str | list[str], name: str = "k") -> str:
    """``out_j[i] = <body_j>`` where each body uses %a0, %a1... (loaded tiles of
    ``in_types``) and defines %r (several bodies: %r0, %r1...; their ``{j}`` is replaced)
    of ``out_type`` (or one per body). Many ops in one kernel keep the tests fast."""
    bodies = [body] if isinstance(body, str) else body
    outs = [out_type] * len(bodies) if isinstance(out_type, str) else out_type
    if isinstance(body, str):
        bodies = [body.replace("%r ", "%r0 ").replace("%r\n", "%r0\n")]
    tile = lambda t: f"tile<{BLOCK}x{t}>"  # noqa: E731
    args = ", ".join([f"%p{i}: ptr<{t}>" for i, t in enumerate(in_types)]
                     + [f"%out{j}: ptr<{t}>" for j, t in enumerate(outs)])
    lines = []
    for i, t in enumerate(in_types):
        lines.append(f"    %q{i} = splat %p{i} : tile<{BLOCK}xptr<{t}>>")
        lines.append(f"    %g{i} = addptr %q{i}, %o : tile<{BLOCK}xptr<{t}>>")
        lines.append(f"    %a{i} = load %g{i} : {tile(t)}")
    for j, (b, t) in enumerate(zip(bodies, outs)):
        lines.append("    " + b.replace("{j}", str(j)))
        lines.append(f"    %qo{j} = splat %out{j} : tile<{BLOCK}xptr<{t}>>")
        lines.append(f"    %go{j} = addptr %qo{j}, %o : tile<{BLOCK}xptr<{t}>>")
        lines.append(f"    store %go{j}, %r{j}")
    div = ", ".join(["16"] * (len(in_types) + len(outs)))
    return f'''module {{
^():
  func {{sym_name = "{name}", arg_divisibility = [{div}], num_warps = 4}} {{
  ^({args}):
    %o = arange {{start = 0, end = {BLOCK}}} : tile<{BLOCK}xi32>
{chr(10).join(lines)}
    return
  }}
}}
'''


def unary(op: str, t: str, out: str | None = None, attrs: str = "") -> str:
    return kernel_ir(f"%r = {op} %a0{attrs} : tile<{BLOCK}x{out or t}>", [t], out or t)


def binary(op: str, t: str, attrs: str = "") -> str:
    return kernel_ir(f"%r = {op} %a0, %a1{attrs} : tile<{BLOCK}x{t}>", [t, t], t)


def many(ops_: list[tuple[str, str]], in_types: list[str]) -> str:
    """One kernel computing each (op text without the result, result type) of ``ops_``."""
    return kernel_ir([f"%r{{j}} = {text} : tile<{BLOCK}x{t}>" for text, t in ops_], in_types,
                     [t for _, t in ops_])


@functools.lru_cache(maxsize=None)
def compiled(ir: str, arch: str):
    k = amd.generate(parse_ir(ir), arch)
    return compile_llvm_ir(k.llvm_ir, arch)


def check(ir: str, arch: str) -> str:
    obj = compiled(ir, arch)
    res = obj.kernel()
    assert res.scratch_bytes == 0 and res.vgpr_spills == 0, f"scratch {res.scratch_bytes}, spills {res.vgpr_spills}"
    return obj.asm


def instructions(asm: str) -> list[str]:
    return [ln.split()[0] for ln in asm.splitlines() if ln.startswith("\t") and ln.strip()
            and not ln.strip().startswith((".", ";"))]


FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i1", "i8", "i16", "i32", "i64", "u8", "u32", "u64")
INT_BINARY = ("add", "sub", "mul", "idiv", "rem", "and", "or", "xor", "shl", "shr", "minimum", "maximum")
FLOAT_BINARY = ("add", "sub", "mul", "div", "rem", "minimum", "maximum")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("t", INTS)
def test_int_binary_compiles(t: str, arch: str) -> None:
    check(many([(f"{op} %a0, %a1", t) for op in INT_BINARY]
               + [(f"{op} %a0", t) for op in ("neg", "not", "abs")], [t, t]), arch)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("t", FLOATS + ("fp8",))
def test_float_binary_and_unary_compile(t: str, arch: str) -> None:
    types = FP8_OF[arch][:1] if t == "fp8" else (t,)  # e5m2 takes the same code (conversions differ)
    for t in types:
        body = [(f"{op} %a0, %a1", t) for op in FLOAT_BINARY]
        body += [(f"{op} %a0, %a1 {{propagate_nan = true}}", t) for op in ("minimum", "maximum")]
        body += [(f"{op} %a0", t) for op in ("neg", "abs")] + [("fma %a0, %a1, %a2", t)]
        body += [(f'cmp %a0, %a1 {{predicate = "{p}"}}', "i1") for p in ("lt", "ne")]
        check(many(body, [t, t, t]), arch)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("t", FLOATS + ("fp8",))
def test_math_compiles(t: str, arch: str) -> None:
    t = FP8_OF[arch][0] if t == "fp8" else t
    # the narrow types run the f32 code between a widening and a rounding: a few suffice
    names = list(ops.MATH_OPS) if t in ("f32", "f64") else ["exp", "sin", "rsqrt", "round", "erf"]
    check(many([(f"{name} %a0", t) for name in names], [t]), arch)


CONVERT_TYPES = ("i1", "i8", "u8", "i16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("src", CONVERT_TYPES + ("fp8",))
def test_every_conversion_compiles(src: str, arch: str) -> None:
    types = CONVERT_TYPES + FP8_OF[arch]
    for s in (FP8_OF[arch] if src == "fp8" else (src,)):
        body = [("convert %a0", d) for d in types if d != s]
        if s in ("f32", "f64", "f16"):
            body += [('convert %a0 {rounding = "rtz"}', d) for d in ("f16", "bf16") + FP8_OF[arch] if d != s]
        check(many(body, [s]), arch)


# -- the instructions chosen ----------------------------------------------------------------------

def asm_of(ir: str, arch: str) -> set[str]:
    return set(instructions(check(ir, arch)))


@pytest.mark.parametrize("arch", ARCHS)
def test_exp2_f32_is_v_exp(arch: str) -> None:
    assert "v_exp_f32_e32" in asm_of(unary("exp2", "f32"), arch) or \
        any(i.startswith("v_exp_f32") for i in asm_of(unary("exp2", "f32"), arch))
    assert any(i.startswith("v_exp_f32") for i in asm_of(unary("exp", "f32"), arch))
    assert any(i.startswith("v_log_f32") for i in asm_of(unary("log2", "f32"), arch))
    assert any(i.startswith("v_rsq_f32") for i in asm_of(unary("rsqrt", "f32"), arch))


@pytest.mark.parametrize("arch", ARCHS)
def test_division_is_ieee(arch: str) -> None:
    """'/' on f32 is correctly rounded: LLVM's v_div_scale / v_rcp / v_div_fmas /
    v_div_fixup sequence (Triton's AMD lowering is a plain fdiv too)."""
    ins = asm_of(binary("div", "f32"), arch)
    for want in ("v_div_scale_f32", "v_rcp_f32", "v_div_fmas_f32", "v_div_fixup_f32"):
        assert any(i.startswith(want) for i in ins), (want, sorted(ins))


@pytest.mark.parametrize("arch", ARCHS)
def test_fma_is_v_fma(arch: str) -> None:
    ins = asm_of(kernel_ir(f"%r = fma %a0, %a1, %a2 : tile<{BLOCK}xf32>", ["f32"] * 3, "f32"), arch)
    assert any("fma_f32" in i or "fmac_f32" in i for i in ins), sorted(ins)


@pytest.mark.parametrize("arch", ARCHS)
def test_fp8_conversions_use_the_hardware(arch: str) -> None:
    e4, e5 = FP8_OF[arch]
    ins = asm_of(unary("convert", "f32", e4), arch)
    assert any(i.startswith("v_cvt_pk_fp8_f32") for i in ins), sorted(ins)
    ins = asm_of(unary("convert", "f32", e5), arch)
    assert any(i.startswith("v_cvt_pk_bf8_f32") for i in ins), sorted(ins)
    ins = asm_of(unary("convert", e4, "f32"), arch)
    assert any(i.startswith("v_cvt_f32_fp8") for i in ins), sorted(ins)
    ins = asm_of(unary("convert", e5, "f32"), arch)
    assert any(i.startswith("v_cvt_f32_bf8") for i in ins), sorted(ins)


@pytest.mark.parametrize("arch", ("gfx950", "gfx1250"))
def test_bf16_conversion_native_where_the_chip_has_it(arch: str) -> None:
    ins = asm_of(unary("convert", "f32", "bf16"), arch)
    assert any(re.match(r"v_cvt_(pk_)?bf16_f32", i) for i in ins), sorted(ins)


def test_rem_fmod_loops_and_sin_branches() -> None:
    """Float % is exact (a long-division loop); f64 sin has its Payne-Hanek branch."""
    ir = binary("rem", "f32")
    k = amd.generate(parse_ir(ir), "gfx942")
    assert "fmod.head" in k.llvm_ir
    k = amd.generate(parse_ir(unary("sin", "f64")), "gfx942")
    assert "trig.far" in k.llvm_ir


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("which", ["convert", "add", "neg", "exp"])
def test_fp8_flavour_of_the_other_chips_is_refused(arch: str, which: str) -> None:
    wrong = OCP[0] if arch == "gfx942" else FNUZ[0]
    ir = {"convert": unary("convert", "f32", wrong), "add": binary("add", wrong), "neg": unary("neg", wrong),
          "exp": unary("exp", wrong)}[which]
    with pytest.raises(CompilationError) as info:
        amd.generate(parse_ir(ir), arch)
    err = info.value
    assert err.code == "TLXC-TLX-006"
    e4, e5 = ("fp8e4b8", "fp8e5b16") if arch == "gfx942" else ("fp8e4nv", "fp8e5")
    assert e4 in str(err) and e5 in str(err) and arch in str(err)


@tlxc.jit
def wrapped_rows(x_ptr, y_ptr, N, SHIFT, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    first = (pid - SHIFT) * BLOCK  # of unknown sign, as in the grouped GEMM ordering
    cols = (first + tl.arange(0, BLOCK)) % N
    tl.store(y_ptr + pid * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + cols))


@pytest.mark.parametrize("arch", ARCHS)
def test_rem_on_assumed_non_negative_dividend_traps(arch: str) -> None:
    """(first + arange) % N with ``first`` of unknown sign: the axis analysis assumes the
    dividend non-negative (its assumption (4)) and each lane checks it: s_trap on a
    negative one."""
    k = wrapped_rows.compile(signature="*fp16:16,*fp16:16,i32:16,i32", constants={"BLOCK": 1024}, arch=arch)
    asm = k.asm["amdgcn"]
    assert "s_trap" in asm
