"""Finding ptxas and assembling PTX into a cubin.

ptxas is looked for in ``TLXC_PTXAS`` (a path), on ``PATH``, under ``CUDA_HOME`` /
``CUDA_PATH`` and ``/usr/local/cuda``, in the ``nvidia-cuda-nvcc`` wheels
(``nvidia/cuda_nvcc/bin``, ``nvidia/cu13/bin``) and last in Triton's package, which
carries one. Without any, a PTX module can still be loaded: the driver JIT-compiles it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from .errors import PtxasError


def _candidates() -> list[Path]:
    out: list[Path] = []
    env = os.environ.get("TLXC_PTXAS")
    if env:
        out.append(Path(env))
    which = shutil.which("ptxas")
    if which:
        out.append(Path(which))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            out.append(Path(os.environ[var]) / "bin" / "ptxas")
    out.append(Path("/usr/local/cuda/bin/ptxas"))
    for pkg, subdirs in (("nvidia", ("cuda_nvcc/bin", "cu13/bin", "cu12/bin")), ("triton", ("backends/nvidia/bin",))):
        try:
            spec = importlib.util.find_spec(pkg)  # finds the package without importing it
        except (ImportError, ValueError):
            spec = None
        for root in (spec.submodule_search_locations or []) if spec else []:
            out += [Path(root) / sub / "ptxas" for sub in subdirs]
    return out


@lru_cache(maxsize=None)
def find_ptxas() -> str | None:
    """The path of a usable ptxas, or None."""
    for p in _candidates():
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


@lru_cache(maxsize=None)
def ptxas_version(path: str) -> tuple[int, int]:
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def ptx_target(ptx: str) -> str | None:
    """The ``.target`` of a PTX module (``sm_90a``), or None."""
    m = re.search(r"^\s*\.target\s+(\w+)", ptx, re.MULTILINE)
    return m.group(1) if m else None


def assemble(ptx: str, arch: str | None = None, ptxas: str | None = None, options: tuple[str, ...] = ()) -> bytes:
    """Assemble PTX text into a cubin for ``arch`` (default: the module's ``.target``).
    ``PtxasError`` carries ptxas' message if it rejects the code."""
    arch = arch or ptx_target(ptx)
    if not arch:
        raise PtxasError("the PTX has no .target line; give arch= (e.g. 'sm_90a')")
    exe = ptxas or find_ptxas()
    if exe is None:
        raise PtxasError("no ptxas found (looked at TLXC_PTXAS, PATH, CUDA_HOME, /usr/local/cuda and the "
                         "nvidia-cuda-nvcc wheel); install it with pip install 'tlxc[cuda]', or load the PTX "
                         "directly and let the driver compile it")
    with tempfile.TemporaryDirectory(prefix="tlxc-ptxas-") as d:
        src, dst = Path(d) / "kernel.ptx", Path(d) / "kernel.cubin"
        src.write_text(ptx)
        proc = subprocess.run([exe, f"-arch={arch}", *options, "-o", str(dst), str(src)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            log = (proc.stderr or proc.stdout).replace(str(src), "kernel.ptx").strip()
            raise PtxasError(f"ptxas ({exe}) rejected the PTX for {arch}:\n{log}")
        return dst.read_bytes()
