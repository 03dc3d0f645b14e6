"""Shared test fixtures: ``load_kernels`` writes kernel source to a real file (so that
error messages can show its lines) and imports it as a module."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import settings

# CI machines are small and shared: time limits per example only make tests flaky.
settings.register_profile("tlxc", deadline=None)
settings.load_profile("tlxc")

_counter = itertools.count()


@pytest.fixture
def load_kernels(tmp_path: Path) -> Callable[[str], Any]:
    def load(source: str) -> Any:
        name = f"_tlxc_test_mod_{next(_counter)}"
        path = tmp_path / f"{name}.py"
        header = "import numpy as np\nimport tlxc\nimport tlxc.language as tl\n"
        path.write_text(header + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        module.__path_str__ = str(path)
        return module

    return load
