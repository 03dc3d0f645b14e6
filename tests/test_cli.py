"""The ``tlxc`` command line: options, outputs and errors (exit code 1, no traceback)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tlxc.cli import main

ROOT = Path(__file__).resolve().parents[1]
KERNEL = """
import tlxc
import tlxc.language as tl

@tlxc.jit
def helper(x):
    return x * 2

@tlxc.jit
def scale(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, helper(tl.load(x + offs, mask=m)), mask=m)
"""


@pytest.fixture
def kernel_file(tmp_path: Path) -> Path:
    p = tmp_path / "scale.py"
    p.write_text(KERNEL)
    return p


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tlxc.cli", *args], capture_output=True, text=True, cwd=ROOT)


def test_version_and_help() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("tlxc ")
    r = run("compile", "--help")
    for opt in ("--arch", "-k", "--signature", "-D", "--emit", "-o", "--print-before", "--print-after",
                "--time-passes", "--num-warps"):
        assert opt in r.stdout


def test_emit_ir_picks_the_kernel_nobody_calls(kernel_file: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["compile", str(kernel_file), "--arch", "sm_90a", "--signature", "*fp32:16,*fp32:16,i32",
                 "-D", "BLOCK=128"]) == 0
    out = capsys.readouterr().out
    assert 'sym_name = "scale"' in out
    assert "arange {start = 0, end = 128} : tile<128xi32>" in out
    assert "arg_divisibility = [16, 16, 1]" in out


def test_output_file_and_pass_dumps(kernel_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "k.ir"
    assert main(["compile", str(kernel_file), "--arch", "gfx950", "-k", "scale", "--signature",
                 "*fp16,*fp16,i32,64", "-o", str(out), "--print-before", "fold", "--time-passes"]) == 0
    text = out.read_text()
    assert "tile<64xf16>" in text
    err = capsys.readouterr().err
    assert "IR before fold" in err and "frontend" in err and "total" in err


PIPELINES = {
    "sm_90a": ["fold", "cse", "dce", "check-target", "tma-staging", "dot-to-wgmma", "buffer-layouts", "layouts",
               "dce", "smem-alloc", "membar"],
    "gfx950": ["fold", "cse", "dce", "descriptor-pointers", "check-target", "buffer-layouts", "layouts", "dce",
               "smem-alloc", "membar"],
}


@pytest.mark.parametrize("arch", sorted(PIPELINES))
def test_print_after_all_shows_every_pass_of_the_target(arch: str, kernel_file: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    assert main(["compile", str(kernel_file), "--arch", arch, "-k", "scale", "--signature", "*fp32:16,*fp32:16,i32",
                 "-D", "BLOCK=256", "--print-after", "all", "--time-passes"]) == 0
    err = capsys.readouterr().err
    dumped = [line.split(" after ")[1].split(" //")[0] for line in err.splitlines()
              if line.startswith("// -----// IR after")]
    # the canonicalization group may take more than one round; then the target's passes, once each
    first_target_pass = dumped.index(PIPELINES[arch][3])
    assert set(dumped[:first_target_pass]) == {"fold", "cse", "dce"}
    assert dumped[first_target_pass:] == PIPELINES[arch][3:]
    # before layouts no tile has one, after it every tile does; smem-alloc writes the kernel's shared bytes
    section = {n: err.split(f"// -----// IR after {n} //----- //")[1].split("// -----//")[0]
               for n in ("buffer-layouts", "layouts", "smem-alloc")}
    assert "ll(register=" not in section["buffer-layouts"]
    tiles = [line for line in section["layouts"].splitlines() if ": tile<" in line]
    assert tiles and all("ll(register=" in line for line in tiles)
    assert "smem_total = 0" in section["smem-alloc"]
    for name in PIPELINES[arch][3:] + ["frontend"]:  # --time-passes has a line for every pass
        assert re.search(rf"^{re.escape(name)} +\d+\.\d+$", err, re.M), name


def test_an_unknown_pass_name_is_an_error_that_lists_the_passes(kernel_file: Path) -> None:
    r = run("compile", str(kernel_file), "--arch", "sm_90a", "-k", "scale", "--signature", "*fp32,*fp32,i32",
            "-D", "BLOCK=64", "--print-after", "layout")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "TLXC-CLI-004" in r.stderr and "'layout'" in r.stderr
    assert "dot-to-wgmma, buffer-layouts, layouts, smem-alloc, membar" in r.stderr


def test_unknown_arch(kernel_file: Path) -> None:
    r = run("compile", str(kernel_file), "--arch", "sm_80", "--signature", "*fp32,*fp32,i32", "-D", "BLOCK=64")
    assert r.returncode == 1
    assert "error[TLXC-CLI-001]" in r.stderr and "sm_80" in r.stderr
    assert "Traceback" not in r.stderr


def test_output_of_the_other_family(kernel_file: Path) -> None:
    r = run("compile", str(kernel_file), "--arch", "gfx950", "--emit", "ptx")
    assert r.returncode == 1 and "not an output of gfx950" in r.stderr


def test_emit_ptx_and_cubin(kernel_file: Path, tmp_path: Path) -> None:
    from tlxc.codegen.nvptx.toolchain import find_tool

    r = run("compile", str(kernel_file), "--arch", "sm_100a", "--signature", "*fp32:16,*fp32:16,i32:16",
            "-D", "BLOCK=256", "--emit", "ptx")
    assert r.returncode == 0, r.stderr
    assert ".target sm_100a" in r.stdout and ".visible .entry scale(" in r.stdout
    if find_tool("ptxas") is None:
        pytest.skip("no ptxas")
    out = tmp_path / "k.cubin"
    r = run("compile", str(kernel_file), "--arch", "sm_90a", "--signature", "*fp32:16,*fp32:16,i32:16",
            "-D", "BLOCK=256", "--emit", "cubin", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_no_kernel(tmp_path: Path) -> None:
    p = tmp_path / "empty.py"
    p.write_text("x = 1\n")
    r = run("compile", str(p), "--arch", "sm_90a")
    assert r.returncode == 1 and "error[TLXC-CLI-002]" in r.stderr and "defines no @tlxc.kernel" in r.stderr
    assert f"{p}:1:1" in r.stderr and "Traceback" not in r.stderr


def test_several_kernels_need_k(tmp_path: Path) -> None:
    p = tmp_path / "two.py"
    p.write_text("import tlxc\n\n@tlxc.jit\ndef a(x):\n    pass\n\n@tlxc.jit\ndef b(x):\n    pass\n")
    r = run("compile", str(p), "--arch", "sm_90a", "--signature", "*fp32")
    assert r.returncode == 1 and "error[TLXC-CLI-002]" in r.stderr and "a (line 4)" in r.stderr
    assert "b (line 8)" in r.stderr and "-k NAME" in r.stderr
    r = run("compile", str(p), "--arch", "sm_90a", "--signature", "*fp32", "-k", "b")
    assert r.returncode == 0 and 'sym_name = "b"' in r.stdout


def test_compile_error_in_kernel_prints_caret(tmp_path: Path) -> None:
    p = tmp_path / "bad.py"
    p.write_text("import tlxc\nimport tlxc.language as tl\n\n@tlxc.jit\ndef k(x):\n"
                 "    a = tl.arange(0, 12)\n")
    r = run("compile", str(p), "--arch", "sm_100a", "--signature", "*fp32")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0] == f"{p}:6:9: error[TLXC-SHAPE-002]: tl.arange(0, 12) has length 12, which is not a power of two"
    assert lines[1] == "        a = tl.arange(0, 12)"
    assert lines[2] == "            ^~~~~~~~~~~~~~~~"
    assert "Traceback" not in r.stderr


def test_readme_main_command_works() -> None:
    r = run("compile", "examples/vector_add.py", "--arch", "sm_90a", "--signature", "*fp32:16,*fp32:16,*fp32:16,i32",
            "-D", "BLOCK=1024", "--emit", "ptx")
    assert r.returncode == 0, r.stderr
    assert ".visible .entry add_kernel(" in r.stdout and "ld.global" in r.stdout and "st.global" in r.stdout
