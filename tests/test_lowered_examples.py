"""The examples' own tests, run on the IR each target's pipeline leaves.

Under ``TLXC_INTERPRET_LOWERED=ARCH`` (``tlxc/kernels/launch.py``) an interpreted launch
runs the IR after ``ARCH``'s passes -- the ``cp.async`` and TMA rings of
``software-pipeline``, wgmma and MFMA ops, the layouts and their conversions, the
flattened persistent loop with its carried tiles, shared-memory offsets, hazard barriers,
warp-specialized partitions and clusters -- instead of the tile IR. Every example checks
its numbers against numpy, so a target pass that changes what a kernel computes fails
here, on a machine with no GPU. Each target runs the examples written for it (the Hopper
ones use TMA and wgmma, the AMD ones MFMA shapes of their chips).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
PORTABLE = [e for e in EXAMPLES if not e.startswith(("amd_", "hopper_", "tma_"))]
NVIDIA = [e for e in EXAMPLES if not e.startswith("amd_")]
RUNS = {
    "sm_90a": NVIDIA,
    "sm_100a": NVIDIA,
    "gfx942": PORTABLE + ["amd_gemm_pipelined.py"],
    "gfx950": PORTABLE + ["amd_gemm_pipelined.py", "amd_scheduled_mfma_gemm.py"],
    "gfx1250": PORTABLE + ["amd_gemm_pipelined.py"],
}


def test_the_runs_cover_every_example() -> None:
    assert set(EXAMPLES) == {e for files in RUNS.values() for e in files}
    assert "matmul.py" in PORTABLE and "hopper_gemm_ws.py" in NVIDIA


@pytest.mark.parametrize("arch", sorted(RUNS))
def test_the_examples_compute_their_numbers_after_the_targets_passes(arch: str, tmp_path: Path) -> None:
    env = dict(os.environ, TLXC_INTERPRET_LOWERED=arch, TLXC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TLXC_TEST_ON_GPU", None)
    files = [f"examples/{e}" for e in RUNS[arch]]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not gpu",
                           *files], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_an_unknown_target_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    import tlxc
    import tlxc.language as tl

    @tlxc.jit
    def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))

    monkeypatch.setenv("TLXC_INTERPRET_LOWERED", "sm_80")
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(tlxc.CompilationError, match="TLXC_INTERPRET_LOWERED='sm_80' names no target"):
        copy.interpret[(1,)](x, np.zeros_like(x), BLOCK=16)
    monkeypatch.setenv("TLXC_INTERPRET_LOWERED", "gfx942")
    y = np.zeros_like(x)
    copy.interpret[(1,)](x, y, BLOCK=16)
    np.testing.assert_array_equal(y, x)
