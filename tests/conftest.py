"""Shared test fixtures: ``load_kernels`` writes kernel source to a real file (so that
error messages can show its lines) and imports it as a module."""

from __future__ import annotations

import importlib.util
import itertools
import operator
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


# -- a fake CUDA driver: launches run on the CPU and are recorded -------------------------------


class FakeDriver:
    """Records launches instead of making them: ``launches`` holds (grid, stream, packed bytes)."""

    def __init__(self) -> None:
        self.launches: list[tuple[tuple[int, int, int], int, bytes]] = []
        self.results: list[int] = []  # CUresults to return, first to last (then 0)
        self.contexts_made_current = 0


@pytest.fixture
def fake_driver(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    from tlxc.runtime import driver

    fake = FakeDriver()
    dev = driver.Device(0, 0, 0, "Fake GPU", (9, 0), 132, 232448)
    monkeypatch.setattr(driver, "device", lambda: dev)
    monkeypatch.setattr(driver, "load_module", lambda binary: "module")
    monkeypatch.setattr(driver, "get_function", lambda module, name: 0x1234)
    monkeypatch.setattr(driver, "set_dynamic_shared", lambda func, n, name: None)
    monkeypatch.setattr(driver, "function_attribute", lambda func, name: 255)
    monkeypatch.setattr(driver, "stream_object", lambda handle: handle)

    def make_current() -> Any:
        fake.contexts_made_current += 1
        return dev

    monkeypatch.setattr(driver, "make_current", make_current)

    def launch_code(func: Any, block: Any, shared: int, cluster: Any, cooperative: bool,
                    ns: dict[str, Any]) -> tuple[list[str], Any]:
        import ctypes

        plan = ns["_pack_into"].__self__  # the plan's struct.Struct: its size is the buffer's

        def record(gx: int, gy: int, gz: int, st: int, kp: int) -> int:
            for g in (gx, gy, gz):  # as cuda-python converts to unsigned int
                if not 0 <= operator.index(g) < 2**32:
                    raise OverflowError("can't convert negative value to unsigned int")
            if not (gx and gy and gz):
                return driver.CUDA_ERROR_INVALID_VALUE  # as the driver does: nothing launched
            data = b""
            if kp:
                first = ctypes.c_void_p.from_address(kp).value  # the pointer to the first slot
                data = ctypes.string_at(first, plan.size)
            fake.launches.append(((gx, gy, gz), st, data))
            return fake.results.pop(0) if fake.results else 0

        ns["_record"] = record
        if cluster is None and not cooperative:
            return ["r = _record(gx, gy, gz, st, kp)"], None
        # a config per buffer, as for cuLaunchKernelEx: record the grid the config was given
        return ["cfg[:] = [gx, gy, gz]", "r = _record(*cfg, st, kp)"], lambda: [0, 0, 0]

    monkeypatch.setattr(driver, "launch_code", launch_code)
    return fake
