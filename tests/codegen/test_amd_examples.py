"""Every example in ``examples/`` on the AMD targets: it compiles for gfx942, gfx950 and
gfx1250 where it can (LLVM verifies the module, zero scratch, no spills, LDS within the
chip's limit, and the code object links when an ld.lld new enough is installed), the ISA
has the key instructions of each example (FileCheck lines ``# GFX942:`` / ``# GFX950:`` /
``# GFX1250:`` for the two AMD examples, tables for the others), the explicitly scheduled
GEMM issues its MFMAs K-major, N-major, M-minor, and the NVIDIA-only examples are refused
with ``TLXC-TLX-006`` at the user's line.

The cases are the ``CASES`` of ``tests/ir/test_examples_roundtrip.py``; each (case, chip)
is compiled once per process (``codegen_helpers.compile_amd_example``, shared with the
golden amdgcn files), so the file stays quick on CI's two cores.
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_helpers import AMD_ARCHS, EXAMPLE_CASES, amd_constants, compile_amd_example, filecheck, load_file
from example_modules import EXAMPLES

from tlxc import CompilationError
from tlxc.codegen.amdgpu import isa, toolchain

ARCHS = AMD_ARCHS

_roundtrip = load_file(Path(__file__).resolve().parents[1] / "ir" / "test_examples_roundtrip.py",
                       "_tlxc_codegen_example_cases")
NVIDIA_ONLY = _roundtrip.NVIDIA_ONLY
# examples that need a chip with MFMA (gfx1250 has WMMA only)
MFMA_ONLY = {"amd_scheduled_mfma_gemm"}

AMD_CASES = [(c, a) for c, case in EXAMPLE_CASES.items() if case[0] not in NVIDIA_ONLY for a in ARCHS
             if not (case[0] in MFMA_ONLY and a == "gfx1250")]
REFUSED_CASES = [(c, a) for c, case in EXAMPLE_CASES.items() for a in ARCHS
                 if case[0] in NVIDIA_ONLY or (case[0] in MFMA_ONLY and a == "gfx1250")]


compile_amd = compile_amd_example
_constants = amd_constants


def _asm(case_id: str, arch: str) -> str:
    return compile_amd(case_id, arch).asm["amdgcn"]


def mnemonics(asm: str) -> list[str]:
    return [ln.split()[0] for ln in asm.splitlines()
            if ln.startswith("\t") and ln.strip() and not ln.strip().startswith((".", ";"))]


def test_every_example_is_covered() -> None:
    names = {p.stem for p in EXAMPLES.glob("*.py") if p.stem != "conftest"}
    assert names <= {EXAMPLE_CASES[c][0] for c, _ in AMD_CASES + REFUSED_CASES}


# -- every example compiles ------------------------------------------------------------------------
@pytest.mark.parametrize("case_id,arch", AMD_CASES)
def test_example_compiles(case_id: str, arch: str) -> None:
    import llvmlite.binding as llvm

    ck = compile_amd(case_id, arch)
    llvm.parse_assembly(ck.asm["llir"]).verify()  # the module as handed to LLVM (it verifies again after -O)
    md = ck.metadata
    assert md["arch"] == arch
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0, md
    if EXAMPLE_CASES[case_id][0] in _roundtrip.AMD_ONLY:
        # SGPR spills go to VGPR lanes (no memory), but the AMD examples have none either;
        # attention has a few (its many loop-carried scalars)
        assert md["sgpr_spills"] == 0, md
    assert md["lds"] <= isa.TARGETS[arch].lds_bytes, md
    obj = ck._amd_object
    need = toolchain.MIN_LLD_FOR_CODE_OBJECT[toolchain.code_object_version_of(obj)]
    if toolchain.find_ld_lld(need) is None:
        pytest.skip(f"compiled; no ld.lld {need} or newer here to link the code object (CI installs one)")
    hsaco = ck.asm["hsaco"]
    assert hsaco[:4] == b"\x7fELF" and f"{EXAMPLE_CASES[case_id][1]}.kd".encode() in hsaco


# -- refusals at the user's line ---------------------------------------------------------------------
_NVIDIA_OPS = re.compile(r"tlx\.(async_dot|barrier_expect_bytes|async_descriptor_\w+|make_tensor_descriptor"
                         r"|cluster_\w+)\(|_desc\.load\(")  # the last: a host descriptor's TMA load


@pytest.mark.parametrize("case_id,arch", REFUSED_CASES)
def test_example_refused(case_id: str, arch: str) -> None:
    """Hopper's wgmma / TMA examples on AMD, and MFMA scheduling on gfx1250: TLXC-TLX-006,
    pointing at the line of the kernel that uses what the chip lacks."""
    example = EXAMPLE_CASES[case_id][0]
    with pytest.raises(CompilationError) as info:
        compile_amd(case_id, arch)
    err = info.value
    assert err.code == "TLXC-TLX-006", err
    assert err.loc is not None and err.loc.file.endswith(f"examples/{example}.py"), err.loc
    line = (EXAMPLES / f"{example}.py").read_text().splitlines()[err.loc.line - 1]
    if example in MFMA_ONLY:
        assert "gfx1250 has no MFMA" in str(err) and "tlx.require_layout(" in line, str(err)
    else:
        assert _NVIDIA_OPS.search(line), line
    assert line.strip() in str(err) and "^" in str(err), str(err)  # the line, rendered with a caret


# -- key instructions ----------------------------------------------------------------------------------
def _checks(case_id: str, arch: str, test_fn: Any) -> None:
    filecheck(_asm(case_id, arch), test_fn, arch)


@pytest.mark.parametrize("arch", ARCHS)
def test_gemm_pipelined_isa_golden(arch: str) -> None:
    """The ring: 16-byte global loads, an LDS store, a barrier, LDS reads feeding the matrix
    instructions, a barrier before the buffer is overwritten, 16-byte global stores."""
    # GFX942: global_load_dwordx4
    # GFX942: s_barrier
    # GFX942: ds_write_b128
    # GFX942: s_barrier
    # GFX942: ds_read_b128
    # GFX942: v_mfma_f32_32x32x8_f16
    # GFX942: s_barrier
    # GFX942: ds_write_b128
    # GFX942: global_store_dwordx4
    # GFX950: global_load_dwordx4
    # GFX950: s_barrier
    # GFX950: ds_write_b128
    # GFX950: s_barrier
    # GFX950: ds_read_b128
    # GFX950: v_mfma_f32_32x32x16_f16
    # GFX950: s_barrier
    # GFX950: ds_write_b128
    # GFX950: global_store_dwordx4
    # GFX1250: global_load_b128
    # GFX1250: s_barrier_signal
    # GFX1250: ds_store_b128
    # GFX1250: s_barrier_wait
    # GFX1250: ds_load_b128
    # GFX1250: v_wmma_f32_16x16x32_f16
    # GFX1250: s_barrier_wait
    # GFX1250: ds_store_b128
    # GFX1250: global_store_b128
    # CHECK: .private_segment_fixed_size: 0
    # CHECK: .vgpr_spill_count: 0
    _checks("amd_gemm_pipelined-0", arch, test_gemm_pipelined_isa_golden)


_PIPELINED_MMA = {"gfx942": {"v_mfma_f32_32x32x8_f16": 32}, "gfx950": {"v_mfma_f32_32x32x16_f16": 16},
                  "gfx1250": {"v_wmma_f32_16x16x32_f16": 32}}


@pytest.mark.parametrize("arch", ARCHS)
def test_gemm_pipelined_matrix_instructions(arch: str) -> None:
    """Two dots in the code (main loop, epilogue; the prologue has none), each of a
    128x128x64 tile spread over 8 waves: per wave 2 32x32 fragments x K/8 (gfx942) or
    K/16 (gfx950) steps, or 8 16x16 fragments x K/32 steps on gfx1250."""
    count = collections.Counter(m for m in mnemonics(_asm("amd_gemm_pipelined-0", arch))
                                if m.startswith(("v_mfma", "v_wmma")))
    assert dict(count) == _PIPELINED_MMA[arch]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_scheduled_mfma_gemm_isa_golden(arch: str) -> None:
    # GFX942: global_load_dwordx4
    # GFX942: ds_write_b128
    # GFX942: s_barrier
    # GFX942: v_mfma_f32_32x32x8_bf16 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], 0
    # GFX942: v_mfma_f32_32x32x8_bf16
    # GFX942: global_store_dwordx4
    # GFX950: global_load_dwordx4
    # GFX950: ds_write_b128
    # GFX950: s_barrier
    # GFX950: v_mfma_f32_32x32x16_bf16 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], 0
    # GFX950: v_mfma_f32_32x32x16_bf16
    # GFX950: global_store_dwordx4
    # CHECK: .private_segment_fixed_size: 0
    # CHECK: .vgpr_spill_count: 0
    _checks("amd_scheduled_mfma_gemm-0", arch, test_scheduled_mfma_gemm_isa_golden)


def _mfma_lines(asm: str) -> list[tuple[int, list[str]]]:
    """(line index, [dst, src0, src1, srcC]) of each MFMA, in issue order."""
    lines = asm.splitlines()
    return [(i, ln.split(None, 1)[1].replace(" ", "").split(",")) for i, ln in enumerate(lines)
            if ln.strip().startswith("v_mfma")]


def _regs(operand: str) -> set[int]:
    """The register numbers of ``v[4:7]`` / ``v4`` (a's or v's: the caller knows which)."""
    m = re.fullmatch(r"[av](?:\[(\d+):(\d+)\]|(\d+))", operand)
    assert m, operand
    lo, hi = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)),) * 2
    return set(range(lo, hi + 1))


def _writes(line: str, regs: set[int]) -> bool:
    """Whether the VALU / LDS instruction ``line`` writes one of the VGPRs ``regs``."""
    parts = line.strip().split(None, 1)
    if len(parts) < 2 or not parts[0].startswith(("v_", "ds_read", "ds_load", "global_load")):
        return False
    dst = parts[1].split(",")[0].strip()
    return dst.startswith("v") and bool(_regs(dst) & regs)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_scheduled_mfma_issue_order(arch: str) -> None:
    """The peeled first K step of examples/amd_scheduled_mfma_gemm.py, in the ISA: per native
    K band, the left half's four chains, then (after the scheduling barrier) the right
    half's; within a half, N-major (the B operand, src0 of the transposed layout, changes
    after two MFMAs) and M-minor (the A operand alternates); the same chains in the same
    order in every band; the first band initializes (src2 = 0), the later ones accumulate
    in place."""
    consts = _constants("amd_scheduled_mfma_gemm-0", arch)
    bands = consts["BLOCK_K"] // consts["INSTR_K"]
    asm = _asm("amd_scheduled_mfma_gemm-0", arch)
    lines = asm.splitlines()
    mfma = _mfma_lines(asm)
    step = mfma[:8 * bands]  # 2 halves x (2 M x 2 N fragments per wave) per band
    assert len(mfma) == 2 * len(step)  # the peeled step and the loop body
    groups = [step[i:i + 4] for i in range(0, len(step), 4)]  # band 0 left, band 0 right, band 1 left, ...
    left, right = [x[0] for _, x in groups[0]], [x[0] for _, x in groups[1]]
    assert len(set(left)) == 4 and len(set(right)) == 4 and not set(left) & set(right), (left, right)
    for g, group in enumerate(groups):
        dst = [x[0] for _, x in group]
        assert dst == (left if g % 2 == 0 else right), (g, dst)
        init = g < 2
        assert all(x[3] == ("0" if init else x[0]) for _, x in group), group
        a_src = [x[2] for _, x in group]
        assert a_src[0] == a_src[2] != a_src[1] == a_src[3], (g, a_src)  # M-minor
        b_src = [x[1] for _, x in group]
        (i0, _), (i1, _), (i2, _), (i3, _) = group
        # N-major: one B fragment for the first two, another for the last two (the same
        # registers may be reloaded with it: then they are written in between)
        same_01 = b_src[0] == b_src[1] and not any(_writes(ln, _regs(b_src[0])) for ln in lines[i0 + 1:i1])
        same_23 = b_src[2] == b_src[3] and not any(_writes(ln, _regs(b_src[2])) for ln in lines[i2 + 1:i3])
        changed = b_src[1] != b_src[2] or any(_writes(ln, _regs(b_src[1])) for ln in lines[i1 + 1:i2])
        assert same_01 and same_23 and changed, (g, b_src)
    # the loop body accumulates in place
    assert all(x[3] == x[0] for _, x in mfma[len(step):])


def test_scheduled_mfma_llvm_order() -> None:
    """The same order in the LLVM IR handed to the backend: intrinsic calls of the peeled
    step whose A operands alternate and whose B operands change every two calls."""
    llir = compile_amd("amd_scheduled_mfma_gemm-0", "gfx950").asm["llir"]
    calls = re.findall(r"call <16 x float> @\"?llvm\.amdgcn\.mfma\.f32\.32x32x16\.bf16\"?\(([^)]*)\)", llir)
    assert len(calls) == 32
    for i in range(0, 8, 4):
        ops = [[o.strip().split()[-1] for o in c.split(",")[:2]] for c in calls[i:i + 4]]
        b, a = [o[0] for o in ops], [o[1] for o in ops]
        assert a[0] == a[2] != a[1] == a[3] and b[0] == b[1] != b[2] == b[3], ops


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
