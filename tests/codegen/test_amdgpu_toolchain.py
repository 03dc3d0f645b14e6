"""The AMDGPU toolchain on hand-written LLVM IR: llvmlite's AMDGPU target compiles for
gfx942, gfx950 and gfx1250, the resource figures are read back, ld.lld links the code
object, and LLVM's complaints become tlxc errors. No GPU is needed."""

from __future__ import annotations

import struct

import pytest

import tlxc
from tlxc.codegen.amdgpu import toolchain
from tlxc.codegen.amdgpu.isa import EM_AMDGPU, TARGETS

ARCHS = ["gfx942", "gfx950", "gfx1250"]

STORE_TID = """
declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %tid, ptr addrspace(1) %p
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
"""

MFMA = """
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32, i32, i32)

define amdgpu_kernel void @mm(ptr addrspace(1) %out, <4 x half> %a, <4 x half> %b) #0 {
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %a, <4 x half> %b,
                                                          <16 x float> zeroinitializer, i32 0, i32 0, i32 0)
  store <16 x float> %r, ptr addrspace(1) %out
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
"""

# gfx1250's WMMA (IntrinsicsAMDGPU.td, LLVM 22): neg_a, A, neg_b, B, C modifiers, C,
# reuse_a, reuse_b; 16x16x32 with 16 halves of A and B and 8 floats of C per lane (wave32).
WMMA = """
declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16(i1 immarg, <16 x half>, i1 immarg,
                                                                    <16 x half>, i16 immarg, <8 x float>,
                                                                    i1 immarg, i1 immarg)

define amdgpu_kernel void @mm(ptr addrspace(1) %out, <16 x half> %a, <16 x half> %b) #0 {
  %r = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16(i1 0, <16 x half> %a, i1 0,
                                                                        <16 x half> %b, i16 0,
                                                                        <8 x float> zeroinitializer,
                                                                        i1 false, i1 false)
  store <8 x float> %r, ptr addrspace(1) %out
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
"""

LDS_AND_SCRATCH = """
@buf = internal addrspace(3) global [1024 x float] poison, align 16
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @lds(ptr addrspace(1) %out, i32 %i) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %f = uitofp i32 %tid to float
  %p = getelementptr float, ptr addrspace(3) @buf, i32 %tid
  store float %f, ptr addrspace(3) %p
  call void @llvm.amdgcn.s.barrier()
  %q = getelementptr float, ptr addrspace(3) @buf, i32 %i
  %v = load float, ptr addrspace(3) %q
  %stack = alloca [16 x float], align 4, addrspace(5)
  %s = getelementptr float, ptr addrspace(5) %stack, i32 %tid
  store volatile float %v, ptr addrspace(5) %s
  %o = getelementptr float, ptr addrspace(1) %out, i32 %tid
  store float %v, ptr addrspace(1) %o
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
"""

STORE_INSTRUCTION = {"gfx942": "global_store_dword ", "gfx950": "global_store_dword ", "gfx1250": "global_store_b32 "}


def _link_or_skip(obj: bytes) -> bytes:
    need = toolchain.MIN_LLD_FOR_CODE_OBJECT[toolchain.code_object_version_of(obj)]
    if toolchain.find_ld_lld(need) is None:
        pytest.skip(f"no ld.lld {need} or newer here (CI installs one)")
    return toolchain.link_hsaco(obj)


@pytest.mark.parametrize("arch", ARCHS)
def test_store_kernel_compiles(arch: str) -> None:
    result = toolchain.compile_llvm_ir(STORE_TID, arch)
    asm = result.asm
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{arch}' in asm
    assert ".amdhsa_kernel k" in asm and ".end_amdhsa_kernel" in asm
    assert STORE_INSTRUCTION[arch] in asm
    assert ".amdhsa_code_object_version 5" in asm and result.code_object_version == 5
    assert ("amdhsa_wavefront_size32 1" in asm) == (arch == "gfx1250")
    res = result.kernel()
    assert res == result.kernels["k"]
    assert res.wave_size == TARGETS[arch].wave_size
    assert 1 <= res.vgprs <= 4 and res.agprs == 0 and res.sgprs >= 2
    assert res.lds_bytes == 0 and res.scratch_bytes == 0 and res.vgpr_spills == 0
    assert res.max_flat_workgroup_size == 256 and res.kernarg_bytes == 8
    assert "workitem.id.x" in result.llvm_ir and 'target triple = "amdgcn-amd-amdhsa"' in result.llvm_ir
    assert result.obj[:4] == b"\x7fELF"


@pytest.mark.parametrize("arch", ARCHS)
def test_lds_and_scratch_figures(arch: str) -> None:
    res = toolchain.compile_llvm_ir(LDS_AND_SCRATCH, arch).kernel("lds")
    assert res.lds_bytes == 4096
    assert res.scratch_bytes >= 64
    assert "s_barrier" in toolchain.compile_llvm_ir(LDS_AND_SCRATCH, arch).asm


@pytest.mark.parametrize("arch", ARCHS)
def test_links_into_an_amdgpu_shared_object(arch: str) -> None:
    hsaco = _link_or_skip(toolchain.compile_llvm_ir(STORE_TID, arch).obj)
    assert hsaco[:4] == b"\x7fELF" and hsaco[4] == 2 and hsaco[5] == 1  # 64-bit, little endian
    assert hsaco[7] == 64  # ELFOSABI_AMDGPU_HSA
    e_type, e_machine = struct.unpack_from("<HH", hsaco, 16)
    assert e_type == 3 and e_machine == EM_AMDGPU == 224  # ET_DYN
    assert toolchain.code_object_version_of(hsaco) == 5
    assert b"k.kd" in hsaco  # the kernel descriptor symbol the runtime looks up


def test_code_object_v4_links_with_any_lld() -> None:
    result = toolchain.compile_llvm_ir(STORE_TID, "gfx942", code_object_version=4)
    assert ".amdhsa_code_object_version 4" in result.asm and result.obj[8] == 2
    hsaco = _link_or_skip(result.obj)
    assert struct.unpack_from("<H", hsaco, 18)[0] == EM_AMDGPU


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_mfma(arch: str) -> None:
    result = toolchain.compile_llvm_ir(MFMA, arch)
    assert "v_mfma_f32_32x32x8_f16 " in result.asm
    assert result.kernel().wave_size == 64
    _link_or_skip(result.obj)


def test_wmma_gfx1250() -> None:
    result = toolchain.compile_llvm_ir(WMMA, "gfx1250")
    assert "v_wmma_f32_16x16x32_f16 " in result.asm
    res = result.kernel()
    assert res.wave_size == 32 and res.agprs == 0 and res.vgprs >= 24
    _link_or_skip(result.obj)


def test_code_object_version_flag_merges_with_existing_flags() -> None:
    text = STORE_TID + '\n!llvm.module.flags = !{!0}\n!0 = !{i32 7, !"frame-pointer", i32 0}\n'
    out = toolchain.with_code_object_version(text, 5)
    assert "!llvm.module.flags = !{!0, !1}" in out and 'amdhsa_code_object_version", i32 500' in out
    assert ".amdhsa_code_object_version 5" in toolchain.compile_llvm_ir(text, "gfx950").asm
    assert toolchain.with_code_object_version(out, 6) == out  # a module that chose keeps its choice


def test_parse_error_is_an_internal_error() -> None:
    with pytest.raises(tlxc.InternalCompilerError) as info:
        toolchain.compile_llvm_ir("define amdgpu_kernel void @k( {", "gfx942")
    assert info.value.code == "TLXC-INTERNAL-001" and "does not parse" in str(info.value)


def test_verifier_error_is_an_internal_error() -> None:
    bad = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) {
  %a = add i32 %b, 1
  %b = add i32 %a, 1
  store i32 %a, ptr addrspace(1) %out
  ret void
}
"""
    with pytest.raises(tlxc.InternalCompilerError) as info:
        toolchain.compile_llvm_ir(bad, "gfx950")
    assert "LLVM verifier" in str(info.value) and "dominate" in str(info.value)


def test_unknown_arch_and_wrong_triple() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        toolchain.compile_llvm_ir(STORE_TID, "gfx999")
    assert info.value.code == "TLXC-CLI-001" and "gfx999" in str(info.value)
    with pytest.raises(tlxc.InternalCompilerError, match="nvptx64"):
        toolchain.compile_llvm_ir('target triple = "nvptx64-nvidia-cuda"\n' + STORE_TID, "gfx942")


def test_missing_ld_lld_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    obj = toolchain.compile_llvm_ir(STORE_TID, "gfx942").obj
    monkeypatch.setattr(toolchain, "find_ld_lld", lambda min_version=0: None)
    with pytest.raises(tlxc.CompilationError) as info:
        toolchain.link_hsaco(obj)
    assert info.value.code == "TLXC-TOOL-001" and "ld.lld was not found" in str(info.value)
    assert "apt-get install lld" in str(info.value)


def test_too_old_ld_lld_names_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    obj = toolchain.compile_llvm_ir(STORE_TID, "gfx942").obj
    old = toolchain.Linker("/usr/bin/ld.lld-14", 14)
    monkeypatch.setattr(toolchain, "find_ld_lld", lambda min_version=0: old if min_version <= 14 else None)
    with pytest.raises(tlxc.CompilationError) as info:
        toolchain.link_hsaco(obj)
    assert info.value.code == "TLXC-TOOL-001"
    assert "ld.lld 14" in str(info.value) and "code object v5" in str(info.value) and "LLD 15" in str(info.value)


def test_failing_ld_lld_is_a_clear_error(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "ld.lld"
    fake.write_text("#!/bin/sh\necho 'ld.lld: error: broken object' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(toolchain, "find_ld_lld", lambda min_version=0: toolchain.Linker(str(fake), 19))
    with pytest.raises(tlxc.CompilationError) as info:
        toolchain.link_hsaco(toolchain.compile_llvm_ir(STORE_TID, "gfx950").obj)
    assert info.value.code == "TLXC-TOOL-002" and "broken object" in str(info.value)


def test_not_an_amdgpu_object() -> None:
    with pytest.raises(tlxc.InternalCompilerError, match="not an AMDGPU ELF"):
        toolchain.link_hsaco(b"\x7fELF" + bytes(60))


def test_target_table() -> None:
    assert {a: t.wave_size for a, t in TARGETS.items()} == {"gfx942": 64, "gfx950": 64, "gfx1250": 32}
    assert TARGETS["gfx942"].fp8 == "fnuz" and TARGETS["gfx950"].fp8 == TARGETS["gfx1250"].fp8 == "ocp"
    assert TARGETS["gfx942"].fp8_dtypes == ("fp8e4b8", "fp8e5b16")
    assert TARGETS["gfx950"].lds_bytes == 160 * 1024 and TARGETS["gfx1250"].lds_bytes == 320 * 1024
    assert TARGETS["gfx942"].has_mfma and not TARGETS["gfx942"].has_wmma
    assert TARGETS["gfx1250"].has_wmma and not TARGETS["gfx1250"].has_mfma and TARGETS["gfx1250"].max_agprs == 0
