"""The examples' own tests, and the interpreter suites, run on the IR a target's pipeline leaves.

Under ``TLXC_INTERPRET_LOWERED=ARCH`` (``tlxc/kernels/launch.py``) an interpreted launch
runs the IR after ``ARCH``'s passes -- the ``cp.async`` and TMA rings of
``software-pipeline``, wgmma and MFMA ops, the layouts and their conversions, the
flattened persistent loop with its carried tiles, shared-memory offsets, hazard barriers,
warp-specialized partitions and clusters -- instead of the tile IR. Every example checks
its numbers against numpy, so a target pass that changes what a kernel computes fails
here, on a machine with no GPU. Each target runs the examples written for it (the Hopper
ones use TMA and wgmma, the AMD ones MFMA shapes of their chips).

The frontend, interpreter and TLX suites -- some thousand kernels: reductions, scans,
sorts, atomics, gathers, warp-specialized rings, clusters -- run likewise on sm_90a and
(less their NVIDIA-only features) on gfx950, each leaving out the tests that exist to
check something of the tile IR or of another target.

What this does not check is the code generators' own lowering of each op to PTX or LLVM
IR (the layouts' register maps, shuffles, shared-memory conversions): the GPU tests and
the ISA checks do.
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


SUITES = {
    "sm_90a": (["tests/frontend", "tests/interpreter", "tests/tlx"],
               ["tests/tlx/test_tlx_amd_interpreter.py"]),  # AMD ops
    "gfx950": (["tests/frontend", "tests/interpreter"], [
        # clusters, TMA descriptors, libdevice, %smid: NVIDIA features, refused on AMD
        "tests/frontend/test_autotune.py::test_interpreter_numerics_and_no_timing",
        "tests/frontend/test_autotune.py::test_pre_hook_sets_descriptor_block_shape",
        "tests/frontend/test_autotune.py::test_interpreter_runs_each_configs_pre_hook_before_compiling_it",
        "tests/frontend/test_launch_options.py::test_num_ctas_makes_each_program_a_cluster",
        "tests/frontend/test_launch_options.py::test_ctas_per_cga_launches_clusters",
        "tests/frontend/test_launch_options.py::test_extern_libs_names_the_libraries_tlxc_implements",
        "tests/frontend/test_small_builtins.py::test_smid_and_globaltimer",
        "tests/interpreter/test_descriptors.py::test_host_descriptor_arguments",
        # what the interpreter itself compiles for (sm_90a), and the NVIDIA variants
        "tests/frontend/test_small_builtins.py::test_target_info_in_the_interpreter_is_sm_90a",
        "tests/interpreter/test_descriptors.py::test_descriptor_sizes_do_not_split_nvidia_variants",
    ]),
}


@pytest.mark.parametrize("arch", sorted(SUITES))
def test_the_interpreter_suites_after_the_targets_passes(arch: str, tmp_path: Path) -> None:
    paths, left_out = SUITES[arch]
    env = dict(os.environ, TLXC_INTERPRET_LOWERED=arch, TLXC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TLXC_TEST_ON_GPU", None)
    deselect = [a for t in left_out for a in ("--deselect", t)]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not gpu",
                           *deselect, *paths], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
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
