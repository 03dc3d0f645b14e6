"""``pytest`` for files that end with their tests, such as ``examples/*.py``.

An example is both a program and a test module: its kernels are compiled from the
command line (``tlxc compile examples/vector_add.py ...``) by importing it, and its test
functions run under pytest. Decorating those functions (``@pytest.mark.parametrize``)
happens at import, so a plain ``import pytest`` made pytest a dependency of compiling a
kernel. ``from tlxc.optional_pytest import pytest`` gives the real module where it is
installed and otherwise a stand-in whose marks return the function unchanged; anything
else on it says that running the tests needs pytest.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["pytest"]

_INSTALL = "pip install 'tlxc[test]'"


class _Mark:
    """``pytest.mark.NAME``, used bare (``@pytest.mark.gpu``), called
    (``@pytest.mark.parametrize(...)``) or assigned (``pytestmark = pytest.mark.gpu``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return self

    def __getattr__(self, name: str) -> "_Mark":
        if name.startswith("__"):
            raise AttributeError(name)
        return _Mark()


class _PytestStandIn:
    """The part of pytest that a module uses while it is imported; the rest is only
    reached by running a test, which needs the real pytest."""

    __name__ = "pytest (not installed)"
    mark = _Mark()

    @staticmethod
    def fixture(*args: Any, **kwargs: Any) -> Callable[..., Any]:
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return lambda fn: fn

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ModuleNotFoundError(f"pytest.{name}: running the tests of this file needs pytest ({_INSTALL})",
                                  name="pytest")


try:
    import pytest
except ModuleNotFoundError:
    pytest = _PytestStandIn()  # type: ignore[assignment]
