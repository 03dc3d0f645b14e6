"""Repository-wide pytest setup: tests marked ``gpu`` are skipped, with the reason, when no
CUDA GPU can be used (no cuda-python, no driver, or no device)."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def _no_gpu_reason() -> str | None:
    from tlxc.runtime import no_gpu_reason

    return no_gpu_reason()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        reason = _no_gpu_reason()
        if reason is not None:
            pytest.skip(f"no usable GPU: {reason.splitlines()[0]}")
