"""Running NVIDIA's tools: ptxas (PTX -> cubin, with the resource figures) and nvdisasm
(cubin -> SASS).

Both are found by the runtime's search (``tlxc.runtime.ptxas``: ``TLXC_PTXAS`` /
``TLXC_NVDISASM``, PATH, CUDA_HOME, /usr/local/cuda, NVIDIA's wheels: ``nvidia-cuda-nvcc``
for ptxas, ``nvidia-cuda-nvdisasm`` for nvdisasm); nvdisasm also beside the ptxas found.
Missing tools are not an error until a cubin or SASS is asked for.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ...errors import CompilationError
from ...runtime.child import run_tool, tool_dir


class ToolNotFound(CompilationError):
    def __init__(self, tool: str) -> None:
        super().__init__("TLXC-TOOL-001", f"{tool} was not found",
                         help=f"install the CUDA extra (pip install 'tlxc[cuda]') or a CUDA toolkit with {tool}, "
                              f"or point TLXC_{tool.upper()} at it")


def find_tool(name: str) -> str | None:
    """Path of ``ptxas`` or ``nvdisasm``, or None: one search, the runtime's
    (``tlxc.runtime.ptxas.find_nvidia_tool``), for both."""
    from ...runtime.ptxas import find_nvidia_tool

    return find_nvidia_tool(name)


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
    with tool_dir("tlxc-ptxas-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        cmd = [exe, f"-arch={arch}", f"-O{opt_level}", "-v", *extra, src, "-o", out]
        t0 = time.perf_counter()
        proc = run_tool(cmd)
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
    with tool_dir("tlxc-nvdisasm-") as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        proc = run_tool([exe, "-c", "-g", path])
        if proc.returncode != 0:
            raise CompilationError("TLXC-TOOL-002", f"nvdisasm failed: {proc.stderr.strip()}")
        return proc.stdout
