"""Shared by the NVIDIA code-generation tests and ``tests/golden/regenerate.py``: the
example cases, compiling them once per session, the golden PTX files, ptxas facts for the
register table, and FileCheck over a test's own ``# SM90A:`` / ``# SM100A:`` lines.

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

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"
NVIDIA_ARCHS = ("sm_90a", "sm_100a")
# the FileCheck prefix of each target's own lines (STYLE rule 12); CHECK lines apply to all
PREFIX = {"sm_90a": "SM90A", "sm_100a": "SM100A"}
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
    _, _, signature, constants = EXAMPLE_CASES[case_id]
    ck = example_kernel(case_id).compile(signature, constants, arch=arch)
    ck.asm["ptx"]
    return ck


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


def golden_name(case_id: str, arch: str) -> str:
    return f"{case_id}.{arch}.ptx"


def golden_texts() -> dict[str, str]:
    """Every golden file's expected content, by file name."""
    return {golden_name(c, a): normalize_ptx(compile_example(c, a).asm["ptx"]) for c, a in EXAMPLE_TARGETS}


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
