"""The PTX and the amdgcn of every example case are kept under tests/golden/: a refactor
shows zero diff there; an intended change regenerates the files on purpose with
``python tests/golden/regenerate.py`` and the diff goes into review.

The stored PTX is ``compiled.asm["ptx"]`` with the checkout's path taken out of the
``.file`` directives (``codegen_helpers.normalize_ptx``), the stored amdgcn is
``compiled.asm["amdgcn"]`` for gfx942, gfx950 and gfx1250 (no file where the chip refuses
the kernel with TLXC-TLX-006); everything must come out byte for byte the same in any
process, which the last test checks with another process, hash seed and working
directory. Each case is compiled once per process (``codegen_helpers``' caches, shared
with tests/codegen/test_amd_examples.py).

The amdgcn is LLVM's: under another LLVM than the one in ``amdgcn.llvm-version`` those
comparisons skip (the PTX ones still run), and regenerating under the new LLVM is a
change to review like any other.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codegen_helpers import (
    AMD_EXAMPLE_TARGETS,
    EXAMPLE_TARGETS,
    GOLDEN,
    LLVM_VERSION_FILE,
    REGENERATE,
    REPO,
    TARGET_LACKS_OPERATION,
    amd_golden_text,
    compile_amd_example,
    compile_example,
    golden_files,
    golden_name,
    llvm_version,
    normalize_amdgcn,
    normalize_ptx,
)


def _diff(stored: str, fresh: str, name: str, limit: int = 80) -> str:
    lines = list(difflib.unified_diff(stored.splitlines(), fresh.splitlines(), f"stored/{name}", f"fresh/{name}",
                                      lineterm="", n=2))
    more = f"\n... {len(lines) - limit} more diff lines" if len(lines) > limit else ""
    return "\n".join(lines[:limit]) + more


@pytest.mark.parametrize("case_id,arch", EXAMPLE_TARGETS)
def test_ptx_matches_golden(case_id: str, arch: str) -> None:
    name = golden_name(case_id, arch)
    path = GOLDEN / name
    fresh = normalize_ptx(compile_example(case_id, arch).asm["ptx"])
    if not path.is_file():
        pytest.fail(f"tests/golden/{name} is missing: run `{REGENERATE}` and commit the new file", pytrace=False)
    stored = path.read_text()
    if fresh != stored:
        pytest.fail(f"the PTX of {case_id} for {arch} differs from tests/golden/{name}.\nIf the change is "
                    f"intended, run `{REGENERATE}` and commit the updated files; if not, the diff shows what "
                    f"the change did to the generated code:\n{_diff(stored, fresh, name)}", pytrace=False)


@pytest.mark.parametrize("case_id,arch", AMD_EXAMPLE_TARGETS)
def test_amdgcn_matches_golden(case_id: str, arch: str) -> None:
    stamp = GOLDEN / LLVM_VERSION_FILE
    made_with = stamp.read_text().strip() if stamp.is_file() else "(unknown)"
    if made_with != llvm_version():
        pytest.skip(f"tests/golden's amdgcn was made with LLVM {made_with}, llvmlite here has LLVM "
                    f"{llvm_version()}: run `{REGENERATE}` to compare, and review the diff")
    name = golden_name(case_id, arch)
    path = GOLDEN / name
    fresh = amd_golden_text(case_id, arch)
    if fresh is None:
        if path.is_file():
            pytest.fail(f"{case_id} is now refused on {arch} ({TARGET_LACKS_OPERATION}) but tests/golden/{name} "
                        f"exists; run `{REGENERATE}` if the refusal is intended", pytrace=False)
        return  # the chip lacks an operation of the kernel: no golden file, as it should be
    if not path.is_file():
        pytest.fail(f"tests/golden/{name} is missing: run `{REGENERATE}` and commit the new file", pytrace=False)
    stored = path.read_text()
    if fresh != stored:
        pytest.fail(f"the amdgcn of {case_id} for {arch} differs from tests/golden/{name}.\nIf the change is "
                    f"intended, run `{REGENERATE}` and commit the updated files; if not, the diff shows what "
                    f"the change did to the generated code:\n{_diff(stored, fresh, name)}", pytrace=False)


def test_no_stale_golden_files() -> None:
    expected = {golden_name(c, a) for c, a in EXAMPLE_TARGETS}
    expected |= {golden_name(c, a) for c, a in AMD_EXAMPLE_TARGETS if amd_golden_text(c, a) is not None}
    stale = sorted(p.name for p in golden_files() if p.name not in expected)
    assert not stale, f"golden files without an example case: {stale}; run `{REGENERATE}` to remove them"


def test_golden_ptx_names_no_checkout_path() -> None:
    """tlxc writes absolute ``.file`` paths; normalization must leave repository-relative ones."""
    ptx = normalize_ptx(compile_example("vector_add-0", "sm_90a").asm["ptx"])
    assert '\n.file 1 "examples/vector_add.py"\n' in ptx
    assert str(REPO) not in ptx and str(REPO.resolve()) not in ptx


def test_golden_amdgcn_names_no_checkout_path() -> None:
    """Whatever paths the assembly may name (none today) are relative to the repository."""
    asm = compile_amd_example("vector_add-0", "gfx942").asm["amdgcn"]
    assert normalize_amdgcn(asm + f'\n.file "{REPO}/examples/vector_add.py"\n').endswith(
        '\n.file "examples/vector_add.py"\n')
    assert str(REPO) not in normalize_amdgcn(asm) and "add_kernel:" in asm


def test_code_is_the_same_in_another_process(tmp_path: Path) -> None:
    """Nothing in code generation may depend on the hash seed (set order), ids, the working
    directory or the order kernels are compiled in: another interpreter, with another hash
    seed, started elsewhere, compiling the cases in order, agrees with the stored files,
    which test_ptx_matches_golden and test_amdgcn_matches_golden compare with this
    process's. (This one failing alone means the code differs between processes.)"""
    stamp = GOLDEN / LLVM_VERSION_FILE
    if not stamp.is_file() or stamp.read_text().strip() != llvm_version():
        pytest.skip(f"the golden amdgcn was made with another LLVM than {llvm_version()}")
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "1" if env.get("PYTHONHASHSEED") != "1" else "2"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, str(GOLDEN / "regenerate.py"), "--check"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (f"`{REGENERATE} --check` with PYTHONHASHSEED={env['PYTHONHASHSEED']} in "
                                  f"{tmp_path}:\n{proc.stdout}{proc.stderr}")
