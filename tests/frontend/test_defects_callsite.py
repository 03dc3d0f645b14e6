"""Regression: errors point at the user's line and hide the compiler's frames also when
the user's files live under a folder named ``tlxc`` (a clone at ``~/src/tlxc/repo``):
what is a compiler frame is decided by the module, not by a piece of the path."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tlxc
from tlxc.frontend.callsite import caller_location, compiler_frames, is_compiler_frame

SOURCE = """
import tlxc
import tlxc.language as tl


@tlxc.jit
def k(x, B: tl.constexpr):
    pass


def launch_without_b(x):
    k.interpret[(1,)](x)  # LAUNCH


def where_am_i():
    from tlxc.frontend.callsite import caller_location
    return caller_location()
"""


def _load_under_tlxc_folder(tmp_path: Path) -> Any:
    folder = tmp_path / "tlxc" / "repo" / "tlxc_tests"
    folder.mkdir(parents=True)
    path = folder / "user_kernels.py"
    path.write_text(textwrap.dedent(SOURCE))
    spec = importlib.util.spec_from_file_location("_user_kernels_in_tlxc_folder", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.interpreter_only  # the TLXC_TEST_ON_GPU shim in conftest.py is a user frame between
def test_user_frames_under_a_folder_named_tlxc_are_the_users(tmp_path: Path) -> None:
    mod = _load_under_tlxc_folder(tmp_path)
    with pytest.raises(tlxc.CompilationError) as info:
        mod.launch_without_b(np.zeros(4, np.float32))
    err = info.value
    assert err.code == "TLXC-LAUNCH-002"
    line = SOURCE.splitlines().index("    k.interpret[(1,)](x)  # LAUNCH") + 1
    assert err.loc is not None and err.loc.file == mod.__file__ and err.loc.line == line
    inner = compiler_frames(err.__traceback__)
    assert len(inner) <= 1, inner
    assert all(f.filename != mod.__file__ for f in inner)
    assert "/tlxc/" in mod.__file__  # the substring test that these files would have failed


def test_is_compiler_frame_goes_by_module() -> None:
    here = sys._getframe()
    assert not is_compiler_frame(here)  # this test's file is inside the repository, not the package
    loc = caller_location()
    assert loc is not None and loc.file == __file__


def test_caller_location_skips_only_tlxc_modules(tmp_path: Path) -> None:
    mod = _load_under_tlxc_folder(tmp_path)
    loc = mod.where_am_i()
    assert loc is not None and loc.file == mod.__file__
