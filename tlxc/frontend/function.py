"""``KernelDef``: what the frontend needs of a ``@tlxc.kernel`` function -- the Python
function, its parsed source, its parameters and which of them are constexprs.

The kernel object that users launch (``tlxc.kernels.function.KernelFunction``) extends
it with specialization, compiled variants and launching; the frontend only ever sees
this base, so that it can inline calls to other kernels and build a kernel's IR
without importing the layer above it (the JIT layer imports the frontend, never the
other way round).
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable

from ..errors import CompilationError
from ..language.core import constexpr
from .source import FunctionSource, parse_function, parse_text


def _is_const_annotation(ann: Any) -> bool:
    from ..language.core import const

    return ann is const or (isinstance(ann, str) and ann.replace(" ", "").split(".")[-1] == "const")


def _is_constexpr_annotation(ann: Any) -> bool:
    if ann is constexpr:
        return True
    return isinstance(ann, str) and ann.replace(" ", "").split(".")[-1] == "constexpr"


class KernelDef:
    """A kernel, or a helper that kernels call (which is inlined). ``noinline``: Triton's
    request to keep calls to it as real calls, which tlxc cannot honour (it inlines every
    call); the frontend refuses such calls instead of inlining them quietly."""

    def __init__(self, fn: Callable[..., Any], noinline: bool = False) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.noinline = bool(noinline)
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)
        self.constexpr_params = {n for n, p in self.signature.parameters.items()
                                 if _is_constexpr_annotation(p.annotation)}
        # `x: tl.const`: read-only pointers (the frontend refuses stores through them)
        self.const_params = {n for n, p in self.signature.parameters.items() if _is_const_annotation(p.annotation)}
        self._source: FunctionSource | None = None
        self._src: str | None = None  # source text set by _unsafe_update_src

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            try:
                self._source = parse_function(self.fn)
            except (OSError, TypeError) as e:
                raise CompilationError("TLXC-SYNTAX-001", f"cannot read the source of {self.__name__}: {e}",
                                       None, "kernels must be defined in a .py file") from None
        return self._source

    @property
    def src(self) -> str:
        """The kernel's source text (Triton's ``JITFunction.src``): the rewritten one after
        ``_unsafe_update_src``."""
        if self._src is not None:
            return self._src
        try:
            return textwrap.dedent(inspect.getsource(self.fn))
        except (OSError, TypeError) as e:
            raise CompilationError("TLXC-SYNTAX-001", f"cannot read the source of {self.__name__}: {e}") from None

    def _unsafe_update_src(self, text: str) -> None:
        """Compile ``text`` instead of the function's own source from now on (Triton's
        name: the caller promises the signature is unchanged). Variants compiled before are
        dropped; the on-disk cache keys on the new text."""
        try:
            self._source = parse_text(self.fn, text)
        except SyntaxError as e:
            raise CompilationError("TLXC-SYNTAX-001", f"the new source of {self.__name__} does not parse: {e}")
        self._src = text
        self._source_changed()

    def _source_changed(self) -> None:
        """What depends on the source: nothing here (the JIT layer drops its variants)."""

    @property
    def runtime_params(self) -> list[str]:
        return [p for p in self.params if p not in self.constexpr_params]
