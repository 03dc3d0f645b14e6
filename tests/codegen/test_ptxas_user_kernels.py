"""Every kernel of the "new user" tests (tests/frontend/test_user_kernels.py) compiles
ahead of time for sm_90a and sm_100a and ptxas assembles it.

Those tests launch their kernels on the interpreter with concrete arguments, which is
where the signatures come from: this file runs each of them once more (on a private copy
of the module, so that its kernels' caches are apart from the ones pytest collects) with
``KernelFunction.get_compiled`` wrapped to record every variant launched, then compiles
each variant for both targets. Parametrizing by the user test's name keeps collection
static (the same under every xdist worker); the ids name the test that launched the
kernels.

A kernel that the NVIDIA code generator cannot compile yet must be listed in
``EXPECTED_UNSUPPORTED`` with the TLXC-CODEGEN-001 message it gives; any other failure,
an internal compiler error or ptxas rejecting the PTX, fails the test, and so does a
listed kernel that compiles (remove it from the list).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from typing import Any, Callable

import pytest
from codegen_helpers import NVIDIA_ARCHS, REPO, load_file, ptxas_or_skip, ptxas_row

from tlxc import CompilationError
from tlxc.compiler import CompiledKernel, compile_kernel
from tlxc.errors import InternalCompilerError
from tlxc.kernels.function import KernelFunction

USER_TESTS = REPO / "tests" / "frontend" / "test_user_kernels.py"

# kernel name -> the part of its TLXC-CODEGEN-001 message that names what is missing
EXPECTED_UNSUPPORTED: dict[str, str] = {
}


def _user_test_names() -> list[str]:
    tree = ast.parse(USER_TESTS.read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


TEST_NAMES = _user_test_names()

Variant = tuple[KernelFunction, CompiledKernel]
_launched: dict[str, list[Variant]] = {}
_assembled: dict[Any, CompiledKernel | CompilationError] = {}
_OUTCOMES = (Exception, pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception)


def launched_variants(test_name: str, request: pytest.FixtureRequest) -> list[Variant]:
    """The variants that user test ``test_name`` compiles, in launch order, each once
    (recorded the first time it is asked for in this process)."""
    if test_name in _launched:
        return _launched[test_name]
    module = load_file(USER_TESTS, "_tlxc_codegen_user_kernels")
    fn = getattr(module, test_name)
    seen: dict[Any, Variant] = {}
    original = KernelFunction.get_compiled

    def recording(self: KernelFunction, specs: Any, consts: Any, options: Any, **more: Any) -> Any:
        ck = original(self, specs, consts, options, **more)
        seen.setdefault((id(self), id(ck)), (self, ck))
        return ck

    # the user test's own fixtures (load_kernels, tmp_path...) come from the conftest files
    kwargs = {name: request.getfixturevalue(name) for name in inspect.signature(fn).parameters}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(KernelFunction, "get_compiled", recording)
        try:
            fn(**kwargs)
        except _OUTCOMES:
            pass  # its own failures are tests/frontend's to report; what it launched still counts
    _launched[test_name] = list(seen.values())
    return _launched[test_name]


def variant_name(kernel: KernelFunction, ck: CompiledKernel) -> str:
    parts = [str(s) for s in ck.signature.values()] + [repr(v) for v in ck.constants.values()]
    return f"{kernel.__name__}({','.join(parts)})"


def assemble(kernel: KernelFunction, ck: CompiledKernel, arch: str) -> CompiledKernel:
    """``ck``'s variant compiled for ``arch`` and assembled by ptxas, once per process."""
    options = dataclasses.replace(ck.options, arch=arch)
    key = (id(kernel), tuple(ck.signature.items()), tuple(ck.constants.items()), options)
    if key not in _assembled:
        try:
            out = compile_kernel(kernel, ck.signature, ck.constants, options)
            out.asm["cubin"]
            _assembled[key] = out
        except CompilationError as e:
            _assembled[key] = e
    result = _assembled[key]
    if isinstance(result, CompilationError):
        raise result
    return result


def test_expected_unsupported_names_user_kernels() -> None:
    source = USER_TESTS.read_text()
    for name in EXPECTED_UNSUPPORTED:
        assert f"def {name}(" in source, f"{name} is no longer a kernel of {USER_TESTS.name}"


@pytest.mark.interpreter_only  # collects the kernels that interpreted launches compile
@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("test_name", TEST_NAMES)
def test_user_kernels_assemble(test_name: str, arch: str, request: pytest.FixtureRequest,
                               record_property: Callable[[str, object], None]) -> None:
    ptxas_or_skip()
    variants = launched_variants(test_name, request)
    assert variants, f"{test_name} launched no kernel: nothing to compile ahead of time"
    for kernel, ck in variants:
        name = variant_name(kernel, ck)
        expected = EXPECTED_UNSUPPORTED.get(kernel.__name__)
        try:
            out = assemble(kernel, ck, arch)
        except CompilationError as e:
            if isinstance(e, InternalCompilerError) or e.code != "TLXC-CODEGEN-001" or expected is None \
                    or expected not in e.message:
                pytest.fail(f"{name} does not compile for {arch}"
                            + (f" (expected TLXC-CODEGEN-001 '{expected}')" if expected else "")
                            + f":\n{e}", pytrace=False)
            continue
        assert expected is None, (f"{kernel.__name__} compiles for {arch} now: remove it from "
                                  f"EXPECTED_UNSUPPORTED")
        record_property("ptxas", ptxas_row(name, out))
        md = out.metadata
        assert out.asm["cubin"][:4] == b"\x7fELF"
        assert (md["spill_stores"], md["spill_loads"]) == (0, 0), (
            f"{name} spills on {arch}: {md['spill_stores']}/{md['spill_loads']} bytes with {md['registers']} "
            f"registers")
