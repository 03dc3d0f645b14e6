"""Finding NVIDIA's programs: ptxas and nvdisasm in the layouts of NVIDIA's wheels (a fake
site-packages folder here, so no wheel is needed), and ``--emit sass`` end to end where
nvdisasm is installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tlxc.runtime import ptxas as rt_ptxas

from tlxc.codegen.nvptx import toolchain

ROOT = Path(__file__).resolve().parents[2]


def _program(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No NVIDIA program anywhere but in the fake site-packages folder this returns."""
    for var in ("TLXC_PTXAS", "TLXC_NVDISASM", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(rt_ptxas, "SYSTEM_CUDA", str(tmp_path / "no-cuda"))
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    # packages found only in the fake site: a machine's real nvidia wheels or Triton (whose
    # bundled ptxas would be found, and the tools beside it) must not leak in
    monkeypatch.setattr(rt_ptxas, "_package_roots", lambda pkg: [str(site / pkg)] if (site / pkg).is_dir() else [])
    rt_ptxas.find_ptxas.cache_clear()
    rt_ptxas.find_nvidia_tool.cache_clear()
    yield site
    rt_ptxas.find_ptxas.cache_clear()
    rt_ptxas.find_nvidia_tool.cache_clear()


def test_cuda13_wheels(bare: Path) -> None:
    """nvidia-cuda-nvdisasm (CUDA 13) installs nvidia/cu13/bin/nvdisasm, which is not beside
    the CUDA 12 wheel's nvidia/cuda_nvcc/bin/ptxas: it was never found."""
    ptxas = _program(bare / "nvidia" / "cuda_nvcc" / "bin" / "ptxas")
    nvdisasm = _program(bare / "nvidia" / "cu13" / "bin" / "nvdisasm")
    assert toolchain.find_tool("ptxas") == str(ptxas)
    assert toolchain.find_tool("nvdisasm") == str(nvdisasm)


def test_cuda13_nvcc_wheel_ptxas(bare: Path) -> None:
    ptxas = _program(bare / "nvidia" / "cu13" / "bin" / "ptxas")
    assert toolchain.find_tool("ptxas") == str(ptxas)


def test_explicit_path_and_toolkit_folder_come_first(bare: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _program(bare / "nvidia" / "cu13" / "bin" / "nvdisasm")
    toolkit = _program(tmp_path / "toolkit" / "bin" / "nvdisasm")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    assert toolchain.find_tool("nvdisasm") == str(toolkit)
    rt_ptxas.find_nvidia_tool.cache_clear()
    mine = _program(tmp_path / "mine" / "nvdisasm")
    monkeypatch.setenv("TLXC_NVDISASM", str(mine))
    assert toolchain.find_tool("nvdisasm") == str(mine)


def test_nvdisasm_beside_ptxas(bare: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ptxas = _program(tmp_path / "kit" / "ptxas")
    nvdisasm = _program(tmp_path / "kit" / "nvdisasm")
    monkeypatch.setenv("TLXC_PTXAS", str(ptxas))
    assert toolchain.find_tool("nvdisasm") == str(nvdisasm)


def test_not_found(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rt_ptxas, "WHEEL_BIN_DIRS", ())  # hide any wheel installed on this machine
    monkeypatch.setattr(rt_ptxas, "_package_roots", lambda pkg: [])
    assert toolchain.find_tool("ptxas") is None and toolchain.find_tool("nvdisasm") is None


def test_cuda_extra_has_the_wheels() -> None:
    tomllib = pytest.importorskip("tomllib")
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["cuda"]
    names = {d.split(">")[0].split("=")[0].split(";")[0].strip() for d in extra}
    assert {"nvidia-cuda-nvdisasm", "cuda-python"} <= names and names & {"nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12"}


def test_emit_sass(tmp_path: Path) -> None:
    if toolchain.find_tool("ptxas") is None or toolchain.find_tool("nvdisasm") is None:
        pytest.skip("needs ptxas and nvdisasm (pip install nvidia-cuda-nvdisasm)")
    r = subprocess.run([sys.executable, "-m", "tlxc.cli", "compile", "examples/vector_add.py", "--arch", "sm_90a",
                        "--signature", "*fp32:16,*fp32:16,*fp32:16,i32", "-D", "BLOCK=1024", "--emit", "sass"],
                       capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert ".target\tsm_90a" in r.stdout and "add_kernel:" in r.stdout
    assert "LDG.E" in r.stdout and "STG.E" in r.stdout and "EXIT" in r.stdout
