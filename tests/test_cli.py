"""The ``tlxc`` command line: options, outputs and errors (exit code 1, no traceback)."""

from __future__ import annotations

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


# A meta path finder that makes `import pytest` fail, as on a machine without it.
_NO_PYTEST = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "pytest" or name.startswith(("pytest.", "_pytest")):
            raise ModuleNotFoundError("No module named " + repr(name), name=name)
        return None
sys.meta_path.insert(0, _Block())
for m in [m for m in sys.modules if m == "pytest" or m.startswith(("pytest.", "_pytest"))]:
    del sys.modules[m]
from tlxc.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("example, arch, sig, define", [
    ("vector_add", "sm_90a", "*fp32:16,*fp32:16,*fp32:16,i32", "BLOCK=1024"),
    ("amd_scheduled_mfma_gemm", "gfx950", None, None),
])
def test_compiling_an_example_needs_no_pytest(example: str, arch: str, sig: str | None, define: str | None) -> None:
    """pytest is a test dependency: loading an example (which ends with its tests) to
    compile its kernel must work without it."""
    args = ["compile", f"examples/{example}.py", "--arch", arch]
    args += ["--signature", sig, "-D", define] if sig else []
    r = subprocess.run([sys.executable, "-c", _NO_PYTEST, *args], capture_output=True, text=True, cwd=ROOT)
    if not sig:  # only loading is checked: the file loaded, so the error is about the missing signature
        assert "error[TLXC-SIG-001]: signature has 0 entries" in r.stderr and "pytest" not in r.stderr, r.stderr
        return
    assert r.returncode == 0, r.stderr
    assert 'sym_name = "add_kernel"' in r.stdout
    probe = subprocess.run([sys.executable, "-c", _NO_PYTEST.replace("from tlxc.cli", "import pytest\nfrom tlxc.cli")],
                           capture_output=True, text=True, cwd=ROOT)
    assert "No module named 'pytest'" in probe.stderr  # the blocker works


def test_pytest_is_not_a_runtime_dependency() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("pytest") for d in project["dependencies"])
    assert any(d.startswith("pytest") for d in project["optional-dependencies"]["test"])
