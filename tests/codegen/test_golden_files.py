"""The PTX of every example case is kept under tests/golden/ (STYLE rule 14): a refactor
shows zero diff there; an intended change regenerates the files on purpose with
``python tests/golden/regenerate.py`` and the diff goes into review.

The stored PTX is ``compiled.asm["ptx"]`` with the checkout's path taken out of the
``.file`` directives (``codegen_helpers.normalize_ptx``); everything else must come out
byte for byte the same in any process, which the last test checks with another process,
hash seed and working directory.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from codegen_helpers import (
    EXAMPLE_TARGETS,
    GOLDEN,
    REGENERATE,
    REPO,
    compile_example,
    golden_name,
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


def test_no_stale_golden_files() -> None:
    expected = {golden_name(c, a) for c, a in EXAMPLE_TARGETS}
    stale = sorted(p.name for p in GOLDEN.glob("*.ptx") if p.name not in expected)
    assert not stale, f"golden files without an example case: {stale}; run `{REGENERATE}` to remove them"


def test_golden_ptx_names_no_checkout_path() -> None:
    """tlxc writes absolute ``.file`` paths; normalization must leave repository-relative ones."""
    ptx = normalize_ptx(compile_example("vector_add-0", "sm_90a").asm["ptx"])
    assert '\n.file 1 "examples/vector_add.py"\n' in ptx
    assert str(REPO) not in ptx and str(REPO.resolve()) not in ptx


def test_ptx_is_the_same_in_another_process(tmp_path: Path) -> None:
    """Nothing in code generation may depend on the hash seed (set order), ids, the working
    directory or the order kernels are compiled in: another interpreter, with another hash
    seed, started elsewhere, compiling the cases in order, agrees with the stored files,
    which test_ptx_matches_golden compares with this process's. (This one failing alone
    means the PTX differs between processes.)"""
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "1" if env.get("PYTHONHASHSEED") != "1" else "2"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, str(GOLDEN / "regenerate.py"), "--check"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (f"`{REGENERATE} --check` with PYTHONHASHSEED={env['PYTHONHASHSEED']} in "
                                  f"{tmp_path}:\n{proc.stdout}{proc.stderr}")
