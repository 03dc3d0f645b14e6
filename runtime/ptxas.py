"""Finding ptxas and assembling PTX into a cubin.

ptxas is looked for in ``TLXC_PTXAS`` (a path), on ``PATH``, under ``CUDA_HOME`` /
``CUDA_PATH`` and ``/usr/local/cuda``, in NVIDIA's wheels and last in Triton's package,
which carries one. Without any, a PTX module can still be loaded: the driver JIT-compiles it.

NVIDIA's wheels put their programs in ``nvidia/<dir>/bin`` of any site-packages folder:
``cuda_nvcc`` for the CUDA 12 ``nvidia-cuda-nvcc-cu12`` wheel and ``cu13`` for the CUDA 13
wheels (``nvidia-cuda-nvcc``, ``nvidia-cuda-nvdisasm``), the layouts that cuda-python's
``cuda.pathfinder`` searches. ``find_nvidia_tool`` searches them for the other programs
(nvdisasm) the same way.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from .child import run_tool, tool_dir
from .errors import PtxasError

# Where NVIDIA's wheels put their programs, under a site-packages folder's nvidia/ (the
# CUDA 13 layout first, as cuda.pathfinder orders it).
WHEEL_BIN_DIRS = ("cu13/bin", "cuda_nvcc/bin", "cu12/bin")
SYSTEM_CUDA = "/usr/local/cuda"


def _package_roots(pkg: str) -> list[str]:
    """The folders of package ``pkg`` on sys.path (all parts of a namespace package such
    as ``nvidia``), without importing it."""
    try:
        spec = importlib.util.find_spec(pkg)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def wheel_candidates(name: str) -> list[Path]:
    """Where NVIDIA's wheels would hold program ``name``, in search order."""
    return [Path(root) / sub / name for root in _package_roots("nvidia") for sub in WHEEL_BIN_DIRS]


def _candidates(name: str = "ptxas", beside: str | None = None) -> list[Path]:
    out: list[Path] = []
    env = os.environ.get(f"TLXC_{name.upper()}")
    if env:
        out.append(Path(env))
    which = shutil.which(name)
    if which:
        out.append(Path(which))
    if beside:  # a toolkit's programs share one folder
        out.append(Path(beside).parent / name)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            out.append(Path(os.environ[var]) / "bin" / name)
    out.append(Path(SYSTEM_CUDA) / "bin" / name)
    out += wheel_candidates(name)
    if name == "ptxas":
        out += [Path(root) / "backends/nvidia/bin/ptxas" for root in _package_roots("triton")]
    return out


def _first_executable(paths: list[Path]) -> str | None:
    for p in paths:
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


@lru_cache(maxsize=None)
def find_ptxas() -> str | None:
    """The path of a usable ptxas, or None."""
    return _first_executable(_candidates("ptxas"))


@lru_cache(maxsize=None)
def find_nvidia_tool(name: str) -> str | None:
    """The path of NVIDIA program ``name`` (``nvdisasm``, ``cuobjdump``...), or None:
    ``TLXC_<NAME>``, PATH, the folder of the ptxas found, CUDA_HOME / CUDA_PATH,
    /usr/local/cuda, NVIDIA's wheels."""
    if name == "ptxas":
        return find_ptxas()
    return _first_executable(_candidates(name, beside=find_ptxas()))


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
    with tool_dir("tlxc-ptxas-") as d:
        src, dst = Path(d) / "kernel.ptx", Path(d) / "kernel.cubin"
        src.write_text(ptx)
        proc = run_tool([exe, f"-arch={arch}", *options, "-o", str(dst), str(src)])
        if proc.returncode != 0:
            log = (proc.stderr or proc.stdout).replace(str(src), "kernel.ptx").strip()
            raise PtxasError(f"ptxas ({exe}) rejected the PTX for {arch}:\n{log}")
        return dst.read_bytes()
