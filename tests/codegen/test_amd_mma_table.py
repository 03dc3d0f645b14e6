"""The MFMA / WMMA table against LLVM 22: every intrinsic compiles on its chip and the
assembly holds the expected instruction; the chooser follows its documented rule.

One module per chip holds one kernel per entry. Each module is compiled in a child
process, because LLVM ends the process on an instruction it cannot select (see
``toolchain.py``): a bad entry then fails this test instead of killing pytest.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tlxc.codegen.amdgpu.mma_table import TABLE, MmaInstr, choose_mma, entries

_SCRIPT = """
import json, sys
from tlxc.codegen.amdgpu.toolchain import compile_llvm_ir
obj = compile_llvm_ir(sys.stdin.read(), sys.argv[1])
print(json.dumps(obj.asm))
"""


def _module(table: tuple[MmaInstr, ...]) -> str:
    decls = sorted({e.declaration() for e in table})
    body = []
    for i, e in enumerate(table):
        scale = "i64" if ".scale16." in e.intrinsic else "i32"
        body.append(f"""define amdgpu_kernel void @k{i}(ptr addrspace(1) %p, {scale} %sa, {scale} %sb) {{
  %a = load {e.a_type}, ptr addrspace(1) %p
  %pb = getelementptr i8, ptr addrspace(1) %p, i64 256
  %b = load {e.b_type}, ptr addrspace(1) %pb
  %pc = getelementptr i8, ptr addrspace(1) %p, i64 512
  %c = load {e.c_type}, ptr addrspace(1) %pc
  %r = {e.call('%a', '%b', '%c', f'{scale} %sa', f'{scale} %sb')}
  store {e.c_type} %r, ptr addrspace(1) %p
  ret void
}}""")
    return "\n".join(decls) + "\n\n" + "\n\n".join(body) + "\n"


def _kernels(asm: str) -> dict[str, str]:
    parts = re.split(r"^(k\d+):", asm, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.parametrize("arch", sorted(TABLE))
def test_every_entry_compiles_to_its_instruction(arch: str) -> None:
    table = TABLE[arch]
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, arch], input=_module(table), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kernels = _kernels(json.loads(proc.stdout))
    for i, e in enumerate(table):
        text = kernels[f"k{i}"]
        assert re.search(rf"\b{e.mnemonic}\b", text), f"{arch} {e.intrinsic}: no {e.mnemonic} in\n{text[:2000]}"


def test_table_facts_are_consistent() -> None:
    for arch, table in TABLE.items():
        wave = 64 if arch != "gfx1250" else 32
        for e in table:
            if e.blocks == 1:  # the lane groups of one instruction split K in k_base pieces
                assert e.k_base * (wave // e.m) == e.k, e
            acc = int(re.match(r"<(\d+) x", e.c_type).group(1))
            assert acc * wave == e.m * e.n * e.blocks, e
    # fp8 flavours are the chip's own
    assert {e.a_dtype for e in entries("gfx942")} >= {"fp8e4b8", "fp8e5b16"}
    assert not {e.a_dtype for e in entries("gfx942")} & {"fp8e4nv", "fp8e5"}
    for arch in ("gfx950", "gfx1250"):
        assert not {e.a_dtype for e in entries(arch)} & {"fp8e4b8", "fp8e5b16"}
    assert not entries("gfx942", scaled=True)
    assert {e.mnemonic for e in entries("gfx950", scaled=True)} == {"v_mfma_scale_f32_16x16x128_f8f6f4",
                                                                    "v_mfma_scale_f32_32x32x64_f8f6f4"}
    assert {e.mnemonic for e in entries("gfx1250", scaled=True)} == {"v_wmma_scale_f32_16x16x128_f8f6f4"}


@pytest.mark.parametrize("arch, a, acc, M, N, K, want", [
    ("gfx942", "fp16", "fp32", 128, 128, 64, "v_mfma_f32_32x32x8_f16"),
    ("gfx942", "fp16", "fp32", 16, 64, 64, "v_mfma_f32_16x16x16_f16"),
    ("gfx942", "bf16", "fp32", 64, 64, 32, "v_mfma_f32_32x32x8_bf16"),
    ("gfx942", "fp8e4b8", "fp32", 64, 64, 64, "v_mfma_f32_32x32x16_fp8_fp8"),
    ("gfx942", "int8", "int32", 32, 32, 64, "v_mfma_i32_32x32x16_i8"),
    ("gfx942", "tf32", "fp32", 32, 32, 32, "v_mfma_f32_32x32x4_xf32"),
    ("gfx942", "fp32", "fp32", 32, 32, 32, "v_mfma_f32_32x32x2_f32"),
    ("gfx950", "fp16", "fp32", 128, 128, 64, "v_mfma_f32_32x32x16_f16"),
    ("gfx950", "fp16", "fp32", 128, 128, 8, "v_mfma_f32_32x32x8_f16"),
    ("gfx950", "bf16", "fp32", 16, 16, 64, "v_mfma_f32_16x16x32_bf16"),
    ("gfx950", "fp8e4nv", "fp32", 64, 64, 128, "v_mfma_f32_32x32x64_f8f6f4"),
    ("gfx950", "fp8e4nv", "fp32", 64, 64, 32, "v_mfma_f32_32x32x16_fp8_fp8"),
    ("gfx950", "int8", "int32", 16, 16, 64, "v_mfma_i32_16x16x64_i8"),
    ("gfx1250", "fp16", "fp32", 128, 128, 64, "v_wmma_f32_16x16x32_f16"),
    ("gfx1250", "fp8e5", "fp32", 64, 64, 128, "v_wmma_f32_16x16x128_bf8_bf8"),
    ("gfx1250", "fp8e4nv", "fp32", 64, 64, 64, "v_wmma_f32_16x16x64_fp8_fp8"),
    ("gfx1250", "int8", "int32", 16, 16, 64, "v_wmma_i32_16x16x64_iu8"),
])
def test_choose_mma(arch: str, a: str, acc: str, M: int, N: int, K: int, want: str) -> None:
    e = choose_mma(arch, a, a, acc, M, N, K)
    assert e is not None and e.mnemonic == want and not e.scaled


def test_choose_mma_refuses() -> None:
    assert choose_mma("gfx942", "fp8e4nv", "fp8e4nv", "fp32", 64, 64, 64) is None  # OCP fp8 on gfx942
    assert choose_mma("gfx950", "fp8e4b8", "fp8e4b8", "fp32", 64, 64, 64) is None  # fnuz on gfx950
    assert choose_mma("gfx950", "tf32", "tf32", "fp32", 64, 64, 64) is None        # no xf32 on CDNA4
    assert choose_mma("gfx942", "fp16", "fp16", "fp32", 8, 64, 64) is None          # M below 16
    assert choose_mma("gfx1250", "fp16", "fp16", "fp32", 64, 64, 16) is None        # K below one WMMA
