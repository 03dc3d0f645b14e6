"""The ``tlxc`` command line: options, outputs and errors (exit code 1, no traceback)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tlxc.cli import main
from tlxc.diagnostics import CATALOG

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
    "sm_90a": ["multi-cta", "flatten-loops", "loop-unroll", "reassociate-pointers", "rebase-pointers", "fold",
               "cse", "dce",
               "check-target", "decompose-scaled-dot", "software-pipeline", "tma-staging", "split-f32-dot",
               "dot-to-wgmma",
               "buffer-layouts", "layouts", "dce", "smem-alloc", "membar"],
    "gfx950": ["multi-cta", "flatten-loops", "loop-unroll", "reassociate-pointers", "rebase-pointers", "fold",
               "cse", "dce",
               "host-descriptors", "descriptor-pointers", "check-target", "software-pipeline", "buffer-layouts",
               "layouts", "dce", "smem-alloc", "membar"],
}


@pytest.mark.parametrize("arch", sorted(PIPELINES))
def test_print_after_all_shows_every_pass_of_the_target(arch: str, kernel_file: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    assert main(["compile", str(kernel_file), "--arch", arch, "-k", "scale", "--signature", "*fp32:16,*fp32:16,i32",
                 "-D", "BLOCK=256", "--print-after", "all", "--time-passes"]) == 0
    err = capsys.readouterr().err
    dumped = [line.split(" after ")[1].split(" //")[0] for line in err.splitlines()
              if line.startswith("// -----// IR after")]
    # multi-cta, flatten-loops, loop-unroll, reassociate-pointers, rebase-pointers, the canonicalization
    # group (maybe more than one round), then the target's passes, once each
    first_target_pass = dumped.index(PIPELINES[arch][8])
    assert dumped[:5] == ["multi-cta", "flatten-loops", "loop-unroll", "reassociate-pointers", "rebase-pointers"]
    assert set(dumped[5:first_target_pass]) == {"fold", "cse", "dce"}
    assert dumped[first_target_pass:] == PIPELINES[arch][8:]
    # before layouts no tile has one, after it every tile does; smem-alloc writes the kernel's shared bytes
    section = {n: err.split(f"// -----// IR after {n} //----- //")[1].split("// -----//")[0]
               for n in ("buffer-layouts", "layouts", "smem-alloc")}
    assert "ll(register=" not in section["buffer-layouts"]
    tiles = [line for line in section["layouts"].splitlines() if ": tile<" in line]
    assert tiles and all("ll(register=" in line for line in tiles)
    assert "smem_total = 0" in section["smem-alloc"]
    for name in PIPELINES[arch][4:] + ["frontend"]:  # --time-passes has a line for every pass
        assert re.search(rf"^{re.escape(name)} +\d+\.\d+$", err, re.M), name


def test_an_unknown_pass_name_is_an_error_that_lists_the_passes(kernel_file: Path) -> None:
    r = run("compile", str(kernel_file), "--arch", "sm_90a", "-k", "scale", "--signature", "*fp32,*fp32,i32",
            "-D", "BLOCK=64", "--print-after", "layout")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "TLXC-CLI-007" in r.stderr and "'layout'" in r.stderr
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
from tlxc.diagnostics import CATALOG
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


VADD = ["examples/vector_add.py", "--arch", "sm_90a", "--signature", "*fp32:16,*fp32:16,*fp32:16,i32",
        "-D", "BLOCK=256"]


def test_top_level_help_lists_the_commands_options() -> None:
    r = run("--help")
    assert r.returncode == 0
    assert "compile options:" in r.stdout
    for opt in ("--arch ARCH", "--signature SIG", "-D NAME=VALUE", "--emit", "--num-warps N", "--num-stages N",
                "--maxnreg N", "--waves-per-eu N", "--print-before PASS", "-o PATH, --output PATH"):
        assert opt in r.stdout, opt


def test_file_that_cannot_be_loaded(tmp_path: Path) -> None:
    """A folder, a device and a binary file gave an empty message or None:None:None."""
    binary = tmp_path / "k.py"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"x = '\xe9'\n")
    for path, says in ((tmp_path, f"error[TLXC-CLI-004]: {tmp_path} is a directory, not a Python file"),
                       ("/dev/stdin", "error[TLXC-CLI-004]: /dev/stdin is not a regular file (a device, pipe or "
                                      "socket)"),
                       (binary, f"error[TLXC-CLI-004]: {binary} is not a Python source file: it contains NUL bytes"),
                       (latin, f"error[TLXC-CLI-004]: {latin} is not a Python source file: byte 5 is not UTF-8")):
        r = subprocess.run([sys.executable, "-m", "tlxc.cli", "compile", str(path), "--arch", "sm_90a"],
                           capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL)
        assert r.returncode == 1 and r.stderr.startswith(says), r.stderr
        assert "None" not in r.stderr and "Traceback" not in r.stderr


def test_syntax_error_in_file_has_caret(tmp_path: Path) -> None:
    p = tmp_path / "syn.py"
    p.write_text("import tlxc\n\n\ndef f(a, :\n    pass\n")
    r = run("compile", str(p), "--arch", "sm_90a")
    assert r.returncode == 1
    assert r.stderr.splitlines()[:3] == [f"{p}:4:10: error[TLXC-CLI-004]: syntax error: invalid syntax",
                                         "    def f(a, :", "             ^"]


def test_sys_exit_in_file_is_reported(tmp_path: Path) -> None:
    """sys.exit at the top of the file ended tlxc silently, with the file's status."""
    p = tmp_path / "prog.py"
    p.write_text("import sys\n\nimport tlxc\n\n\ndef main():\n    sys.exit(0)\n\n\nmain()\n")
    r = run("compile", str(p), "--arch", "sm_90a")
    assert r.returncode == 1
    assert r.stderr.splitlines()[:3] == [
        f"{p}:7:5: error[TLXC-CLI-004]: {p} called sys.exit(0) while it was loaded, before a kernel could be "
        "compiled", "        sys.exit(0)", "        ^~~~~~~~~~~"]
    p.write_text("import tlxc\n\nSIZES = {}\nBLOCK = SIZES['block']\n")
    r = run("compile", str(p), "--arch", "sm_90a")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0] == f"{p}:4:9: error[TLXC-CLI-004]: cannot load {p}: it raised KeyError: 'block'"


def test_output_that_cannot_be_written(tmp_path: Path) -> None:
    """-o failures said 'cannot load FILE'."""
    for out, why in ((tmp_path / "missing" / "k.ptx", "No such file or directory"), (tmp_path, "Is a directory")):
        r = run("compile", *VADD, "--emit", "ptx", "-o", str(out))
        assert r.returncode == 1 and "cannot load" not in r.stderr
        assert r.stderr.strip() == f"error[TLXC-CLI-005]: cannot write the output file {out}: {why}\n" \
                                   f"help: {CATALOG['TLXC-CLI-005'].help}"


def test_duplicate_define_is_refused() -> None:
    r = run("compile", *VADD, "-D", "BLOCK=512")
    assert r.returncode == 1
    assert r.stderr.startswith("error[TLXC-CLI-006]: -D BLOCK is given twice: -D BLOCK=256 and -D BLOCK=512")


def test_signature_one_means_equal_to_one() -> None:
    """'i32:1' was read as 'no hint'; in Triton's AOT compiler it makes the argument the constant 1."""
    sig = "*fp32:16,*fp32:16,*fp32:16,"
    base = ["compile", "examples/vector_add.py", "--arch", "sm_90a", "-D", "BLOCK=64", "--signature"]
    one, plain = run(*base, sig + "i32:1"), run(*base, sig + "i32")
    assert one.returncode == 0 and plain.returncode == 0, one.stderr + plain.stderr
    assert "splat %n_elements" in plain.stdout and "%n_elements" not in one.stdout.split("\n", 4)[4]
    assert "constant {value = 1} : tile<64xi32>" in one.stdout
    assert run(*base, sig + "1").stdout == one.stdout  # Triton's other spelling
    for bad in ("*fp32:1,*fp32:16,*fp32:16,i32", sig + "fp32:1"):
        r = run(*base, bad)
        assert r.returncode == 1 and "error[TLXC-SIG-001]" in r.stderr
        assert "the specialization ':1' means the argument equals 1, which only an integer argument can be" in r.stderr


def test_compile_options(tmp_path: Path) -> None:
    r = run("compile", *VADD, "--emit", "ptx", "--maxnreg", "72", "--num-stages", "2")
    assert r.returncode == 0 and ".maxnreg 72" in r.stdout, r.stderr
    r = run("compile", *VADD, "--emit", "ptx", "--maxnreg", "8")
    assert r.returncode == 1 and "maxnreg must be a number of registers from 16 to 255, got 8" in r.stderr
    r = run("compile", *VADD, "--num-stages", "0")
    assert r.returncode == 2 and "expected a number of 1 or more, got 0" in r.stderr
    amd = ["compile", "examples/vector_add.py", "--arch", "gfx950", "--signature", "*fp32:16,*fp32:16,*fp32:16,i32",
           "-D", "BLOCK=256", "--emit", "llvm"]
    r = run(*amd, "--waves-per-eu", "3")
    assert r.returncode == 0 and '"amdgpu-waves-per-eu"="3"' in r.stdout, r.stderr
    r = run(*amd, "--waves-per-eu", "99")
    assert r.returncode == 1 and "waves_per_eu=99: a SIMD of gfx950 holds at most" in r.stderr


def test_options_of_the_other_family() -> None:
    r = run("compile", *VADD, "--waves-per-eu", "2")
    assert r.returncode == 1 and "error[TLXC-CLI-006]: --waves-per-eu is an AMD option" in r.stderr
    r = run("compile", "examples/vector_add.py", "--arch", "gfx950", "--signature", "*fp32,*fp32,*fp32,i32",
            "-D", "BLOCK=64", "--maxnreg", "64")
    assert r.returncode == 1 and "error[TLXC-CLI-006]: --maxnreg is an NVIDIA option" in r.stderr


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, 130)])
def test_killed_compile_stops_ptxas_and_removes_its_folder(tmp_path: Path, signum: int, status: int) -> None:
    """SIGTERM ended tlxc at once: ptxas went on running and its temporary folder stayed."""
    pidfile, tmp = tmp_path / "ptxas.pid", tmp_path / "tmp"
    tmp.mkdir()
    fake = tmp_path / "ptxas"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}.part && mv {pidfile}.part {pidfile}\nexec sleep 120\n")
    fake.chmod(0o755)
    env = {**os.environ, "TLXC_PTXAS": str(fake), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tlxc.cli", "compile", *VADD, "--emit", "cubin", "-o",
                             str(tmp_path / "k.cubin")], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        deadline = time.monotonic() + 120
        while not pidfile.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        assert [p.name for p in tmp.iterdir()][0].startswith("tlxc-ptxas-")  # ptxas' folder, while it runs
        proc.send_signal(signum)
        assert proc.wait(60) == status
        time.sleep(0.2)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # killed and reaped
        pid = None
        assert list(tmp.iterdir()) == []
        assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if pid is not None:  # left behind by a failing run: end the fake ptxas this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
