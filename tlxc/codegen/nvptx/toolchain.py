"""Running NVIDIA's tools: ptxas (PTX -> cubin, with the resource figures) and nvdisasm
(cubin -> SASS).

ptxas is found by the runtime's search (``tlxc.runtime.ptxas``: ``TLXC_PTXAS``, PATH,
CUDA_HOME, /usr/local/cuda, the ``nvidia-cuda-nvcc`` wheel); nvdisasm beside it or in the
same places. Missing tools are not an error until a cubin or SASS is asked for.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache

from ...errors import CompilationError


class ToolNotFound(CompilationError):
    def __init__(self, tool: str) -> None:
        super().__init__("TLXC-TOOL-001", f"{tool} was not found",
                         help=f"install the CUDA extra (pip install 'tlxc[cuda]') or a CUDA toolkit with {tool}, "
                              f"or point TLXC_{tool.upper()} at it")


@lru_cache(maxsize=None)
def find_tool(name: str) -> str | None:
    """Path of ``ptxas`` or ``nvdisasm``, or None. ptxas is found the way the runtime
    finds it (one search for both); nvdisasm beside it or in the same places."""
    from ...runtime.ptxas import find_ptxas

    ptxas_path = find_ptxas()
    if name == "ptxas":
        return ptxas_path
    explicit = os.environ.get(f"TLXC_{name.upper()}")
    candidates = [explicit] if explicit else []
    if ptxas_path:
        candidates.append(os.path.join(os.path.dirname(ptxas_path), name))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            candidates.append(os.path.join(os.environ[env], "bin", name))
    candidates += [shutil.which(name) or "", os.path.join("/usr/local/cuda/bin", name)]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


@dataclass(frozen=True)
class PtxasResult:
    cubin: bytes
    registers: int
    spill_stores: int
    spill_loads: int
    shared_bytes: int
    stack_bytes: int
    log: str
    seconds: float


_INFO = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")
_STACK = re.compile(r"(\d+) bytes stack frame")


def ptxas(ptx: str, arch: str, opt_level: int = 3, extra: tuple[str, ...] = ()) -> PtxasResult:
    """Assemble ``ptx`` for ``arch``; a rejected PTX is an internal error (tlxc emitted it)."""
    import time

    exe = find_tool("ptxas")
    if exe is None:
        raise ToolNotFound("ptxas")
    with tempfile.TemporaryDirectory(prefix="tlxc-ptxas-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        cmd = [exe, f"-arch={arch}", f"-O{opt_level}", "-v", *extra, src, "-o", out]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            from ...errors import InternalCompilerError

            raise InternalCompilerError("ptxas", f"ptxas rejected the generated PTX:\n{log.strip()}")
        with open(out, "rb") as f:
            cubin = f.read()

    def num(rx: re.Pattern[str], group: int = 1) -> int:
        m = rx.search(log)
        return int(m.group(group)) if m else 0

    return PtxasResult(cubin, num(_INFO), num(_SPILL, 1), num(_SPILL, 2), num(_SMEM), num(_STACK), log, seconds)


def nvdisasm(cubin: bytes) -> str:
    exe = find_tool("nvdisasm")
    if exe is None:
        raise ToolNotFound("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="tlxc-nvdisasm-") as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        proc = subprocess.run([exe, "-c", "-g", path], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompilationError("TLXC-TOOL-002", f"nvdisasm failed: {proc.stderr.strip()}")
        return proc.stdout
