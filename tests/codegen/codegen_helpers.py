"""Shared by the code-generation tests and ``tests/golden/regenerate.py``: the example
cases, compiling them once per process for the NVIDIA and the AMD targets, the golden PTX
and amdgcn files, ptxas facts for the register table, and FileCheck over a test's own
``# SM90A:`` / ``# GFX942:`` ... lines.

The example cases are the ``CASES`` of ``tests/ir/test_examples_roundtrip.py`` (one list
of what a user compiles ahead of time), named ``<example>-<n>`` with ``n`` counting the
cases of that example: ``matmul-0``, ``matmul-1``.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import io
import re
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

from example_modules import load_example  # tests/example_modules.py

from tlxc import CompilationError

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
NVIDIA_ARCHS = ("sm_90a", "sm_100a")
AMD_ARCHS = ("gfx942", "gfx950", "gfx1250")
# the FileCheck prefix of each target's own lines; CHECK lines apply to all
PREFIX = {"sm_90a": "SM90A", "sm_100a": "SM100A", "gfx942": "GFX942", "gfx950": "GFX950", "gfx1250": "GFX1250"}
REGENERATE = "python tests/golden/regenerate.py"


def load_file(path: Path, name: str) -> Any:
    """Import ``path`` as module ``name`` (once). The tests folders are not packages, and
    a private name keeps this copy apart from the one pytest collects."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


_roundtrip = load_file(REPO / "tests" / "ir" / "test_examples_roundtrip.py", "_tlxc_codegen_example_cases")


def _case_ids() -> dict[str, tuple[str, str, str, dict[str, Any]]]:
    out: dict[str, tuple[str, str, str, dict[str, Any]]] = {}
    seen: dict[str, int] = {}
    for case in _roundtrip.CASES:
        n = seen.get(case[0], 0)
        seen[case[0]] = n + 1
        out[f"{case[0]}-{n}"] = case
    return out


# "matmul-0" -> (example, kernel, signature, constants)
EXAMPLE_CASES = _case_ids()
HOPPER_ONLY = _roundtrip.HOPPER_ONLY
AMD_ONLY = _roundtrip.AMD_ONLY
# every (case, NVIDIA arch) the examples compile for
EXAMPLE_TARGETS = [(c, a) for c in EXAMPLE_CASES for a in NVIDIA_ARCHS
                   if EXAMPLE_CASES[c][0] not in AMD_ONLY
                   and (a == "sm_90a" or EXAMPLE_CASES[c][0] not in HOPPER_ONLY)]


def example_kernel(case_id: str) -> Any:
    example, kernel, _, _ = EXAMPLE_CASES[case_id]
    return getattr(load_example(example), kernel)


@functools.lru_cache(maxsize=None)
def compile_example(case_id: str, arch: str) -> Any:
    """The example case compiled for ``arch`` with its PTX made (and its cubin, when ptxas
    is there), once per test process: the ptxas, golden and FileCheck tests share it."""
    example, _, signature, constants = EXAMPLE_CASES[case_id]
    ck = example_kernel(case_id).compile(signature, constants, arch=arch, **_roundtrip.OPTIONS.get(example, {}))
    ck.asm["ptx"]
    return ck


# the example's own launch width on AMD where it is not the default 4 waves
AMD_NUM_WARPS = {"amd_gemm_pipelined": 8}
# the code a target cannot run is refused with this code at the user's line (an NVIDIA-only
# TLX operation on AMD, MFMA scheduling on gfx1250): such a case has no AMD golden file
TARGET_LACKS_OPERATION = "TLXC-TLX-006"


def amd_constants(case_id: str, arch: str) -> dict[str, Any]:
    """The case's constants for ``arch``: an example may choose per-chip parameters with a
    module-level ``mfma_config(arch)`` (the MFMA shape of amd_scheduled_mfma_gemm); a chip
    it has no entry for (KeyError: gfx1250, which has no MFMA) keeps the case's own."""
    example, _, _, constants = EXAMPLE_CASES[case_id]
    per_chip = getattr(load_example(example), "mfma_config", None)
    try:
        return {**constants, **per_chip(arch)} if per_chip is not None else constants
    except KeyError:
        return constants


@functools.lru_cache(maxsize=None)
def _amd_outcome(case_id: str, arch: str) -> Any:
    example, _, signature, _ = EXAMPLE_CASES[case_id]
    try:
        ck = example_kernel(case_id).compile(signature, amd_constants(case_id, arch), arch=arch,
                                             num_warps=AMD_NUM_WARPS.get(example, 4))
        ck.asm["amdgcn"]
    except CompilationError as err:
        return err
    return ck


def compile_amd_example(case_id: str, arch: str) -> Any:
    """The example case compiled for the AMD target ``arch`` down to AMDGPU assembly, once
    per test process: the AMD example tests and the golden files share it. A refusal is
    kept too and raised again on every call."""
    out = _amd_outcome(case_id, arch)
    if isinstance(out, CompilationError):
        raise out
    return out


# -- golden files ------------------------------------------------------------------------------

_FILE = re.compile(r'^(\.file\s+\d+\s+")([^"]*)(")', re.MULTILINE)


def normalize_ptx(ptx: str) -> str:
    """PTX as stored under tests/golden: ``.file`` paths inside the repository become
    relative to it. tlxc writes the absolute path of the kernel's source (what cuda-gdb
    and Nsight need), which differs between checkouts; nothing else in the PTX does."""
    roots = {str(REPO), str(REPO.resolve())}

    def rel(m: re.Match[str]) -> str:
        path = m.group(2)
        for root in roots:
            if path.startswith(root + "/"):
                path = path[len(root) + 1:]
                break
        return m.group(1) + path + m.group(3)

    return _FILE.sub(rel, ptx)


def normalize_amdgcn(asm: str) -> str:
    """AMDGPU assembly as stored under tests/golden: paths inside the repository become
    relative to it. tlxc emits no debug information for AMD today, so there are none; this
    keeps the files the same in every checkout if some appear."""
    for root in sorted({str(REPO), str(REPO.resolve())}, key=len, reverse=True):
        asm = asm.replace(root + "/", "")
    return asm


def golden_name(case_id: str, arch: str) -> str:
    return f"{case_id}.{arch}.{'amdgcn' if arch in AMD_ARCHS else 'ptx'}"


# every (case, AMD chip); the cases a chip refuses have no golden file (amd_golden_text)
AMD_EXAMPLE_TARGETS = [(c, a) for c in EXAMPLE_CASES for a in AMD_ARCHS]
# the amdgcn is LLVM's output: another LLVM (a newer llvmlite) schedules and allocates
# registers differently, so the version the files were made with is stored beside them
LLVM_VERSION_FILE = "amdgcn.llvm-version"


def llvm_version() -> str:
    import llvmlite.binding as llvm

    return ".".join(map(str, llvm.llvm_version_info))


def amd_golden_text(case_id: str, arch: str) -> str | None:
    """The golden amdgcn of the case on ``arch``, or None where the chip lacks an operation
    the kernel uses (refused with ``TARGET_LACKS_OPERATION``); any other error is raised."""
    try:
        ck = compile_amd_example(case_id, arch)
    except CompilationError as err:
        if err.code == TARGET_LACKS_OPERATION:
            return None
        raise
    return normalize_amdgcn(ck.asm["amdgcn"])


def golden_texts() -> dict[str, str]:
    """Every golden file's expected content, by file name: the PTX and amdgcn files and the
    LLVM version stamp of the amdgcn ones."""
    out = {golden_name(c, a): normalize_ptx(compile_example(c, a).asm["ptx"]) for c, a in EXAMPLE_TARGETS}
    for c, a in AMD_EXAMPLE_TARGETS:
        text = amd_golden_text(c, a)
        if text is not None:
            out[golden_name(c, a)] = text
    out[LLVM_VERSION_FILE] = llvm_version() + "\n"
    return out


def golden_files(folder: Path = GOLDEN) -> list[Path]:
    """The generated-code files stored in ``folder`` now (each of some case, or stale)."""
    return sorted(p for ext in ("ptx", "amdgcn") for p in folder.glob(f"*.{ext}"))


# -- ptxas -------------------------------------------------------------------------------------


def ptxas_or_skip() -> str:
    from tlxc.codegen.nvptx.toolchain import find_tool

    exe = find_tool("ptxas")
    if exe is None:
        import pytest

        pytest.skip("ptxas not found (install the nvidia-cuda-nvcc-cu12 wheel, the 'test' extra, or a CUDA "
                    "toolkit, or set TLXC_PTXAS)")
    return exe


def ptxas_row(name: str, ck: Any) -> tuple[str, str, int, int, int]:
    """One row of the register table that tests/codegen/conftest.py prints: (variant,
    arch, registers, spill store bytes, spill load bytes)."""
    md = ck.metadata
    return (name, ck.options.arch, md["registers"], md["spill_stores"], md["spill_loads"])


# -- FileCheck ---------------------------------------------------------------------------------

_CHECK_LINE = re.compile(r"#\s*([A-Z][A-Z0-9_]*)(-[A-Z0-9-]+)?:")


def filecheck(text: str, test_fn: Callable[..., Any], arch: str, **variables: str | int) -> None:
    """Match ``text`` against the FileCheck lines in ``test_fn``'s own source: the ``CHECK``
    lines and those of ``arch``'s prefix (``SM90A`` / ``SM100A``), in source order, as
    ``FileCheck --check-prefixes=CHECK,SM90A -D NAME=VALUE`` would. A failure names the
    line of the test file."""
    import pytest

    pytest.importorskip("filecheck", reason="the filecheck package (the 'test' extra) is not installed")
    from filecheck.matcher import Matcher
    from filecheck.options import Options

    prefixes = ["CHECK", PREFIX[arch]]
    lines, start = inspect.getsourcelines(test_fn)
    if not any(m.group(1) in prefixes for m in map(_CHECK_LINE.search, lines) if m):
        pytest.fail(f"{test_fn.__name__} has no check lines for {arch} (prefixes {', '.join(prefixes)})")
    source = Path(inspect.getsourcefile(test_fn) or "checks.py")
    with tempfile.TemporaryDirectory(prefix="tlxc-filecheck-") as d:
        # the test's lines at their own line numbers, so FileCheck's messages point into the test file
        checks = Path(d) / source.name
        checks.write_text("\n" * (start - 1) + "".join(lines))
        inp = Path(d) / f"{arch}.ptx"
        inp.write_text(text)
        err = io.StringIO()
        with redirect_stdout(err), redirect_stderr(err):
            rc = Matcher.from_opts(Options(match_filename=str(checks), input_file=str(inp),
                                           check_prefixes=prefixes, variables=dict(variables))).run()
    if rc != 0:
        msg = err.getvalue().replace(str(checks), str(source)).replace(str(inp), f"<{arch} ptx>")
        pytest.fail(f"FileCheck --check-prefixes={','.join(prefixes)} failed for {arch}:\n{msg}", pytrace=False)
