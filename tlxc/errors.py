"""Errors that reach the user.

``CompilationError`` carries a stable code from ``tlxc.diagnostics``, the user's
file:line:col and the source line, and renders like a compiler diagnostic::

    kernel.py:7:15: error[TLXC-SHAPE-001]: cannot broadcast shapes (128,) and (64,)
        z = x + y
            ^~~~~
    help: make the shapes equal or 1 in every dimension ...

Compiler frames never reach the user: the public entry points re-raise these errors
with the compiler's traceback removed (``clean``).
"""

from __future__ import annotations

import linecache
from typing import Any

from .ir.core import Location


def source_line(file: str, line: int) -> str:
    return linecache.getline(file, line).rstrip("\n") if line > 0 else ""


def render(loc: Location | None, severity: str, code: str, message: str, help: str = "") -> str:
    head = f"{severity}[{code}]: {message}"
    if loc is None or loc.line <= 0:
        text = head
    else:
        text = f"{loc}: {head}"
        src = source_line(loc.file, loc.line)
        if src:
            width = 1
            if loc.end_col is not None and loc.end_col > loc.col:
                width = loc.end_col - loc.col
            text += f"\n    {src}\n    {' ' * loc.col}^{'~' * (width - 1)}"
    if help:
        text += f"\nhelp: {help}"
    return text


class TlxcError(Exception):
    """Base of all tlxc errors."""


class CompilationError(TlxcError):
    """A mistake in the user's kernel (or in how it is compiled/launched)."""

    def __init__(self, code: str, message: str, loc: Location | None = None, help: str | None = None) -> None:
        from .diagnostics import CATALOG

        self.code = code
        self.message = message
        self.loc = loc
        entry = CATALOG.get(code)
        self.help = help if help is not None else (entry.help if entry else "")
        super().__init__(render(loc, "error", code, message, self.help))

    @property
    def error_message(self) -> str:
        """The message alone (Triton's ``CompilationError.error_message``, which tests read)."""
        return self.message

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def col(self) -> int | None:
        return self.loc.col if self.loc else None

    @property
    def file(self) -> str | None:
        return self.loc.file if self.loc else None

    def __reduce__(self) -> Any:
        return (type(self), (self.code, self.message, self.loc, self.help))


class InternalCompilerError(CompilationError):
    """A failure inside the compiler (a bug in tlxc), reported with the pass and the
    user's line that was being compiled."""

    def __init__(self, where: str, detail: str, loc: Location | None = None) -> None:
        super().__init__(
            "TLXC-INTERNAL-001",
            f"internal compiler error in {where}: {detail}",
            loc,
            "this is a bug in tlxc; please report it with the kernel that triggers it",
        )


class InterpreterError(TlxcError):
    """A fault while interpreting a kernel (out-of-bounds access, failed assert,
    deadlock), reported with the kernel line."""

    def __init__(self, code: str, message: str, loc: Location | None = None) -> None:
        self.code = code
        self.message = message
        self.loc = loc
        super().__init__(render(loc, "error", code, message))


class SemanticError(Exception):
    """Raised by the semantic layer, which does not know where it is in the source;
    the AST visitor turns it into a CompilationError at the current node."""

    def __init__(self, code: str, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.help = help


def clean(err: BaseException) -> BaseException:
    """``err`` without the compiler frames that led to it; public entry points do
    ``raise clean(e) from None`` so that the user sees their own frames only."""
    return err.with_traceback(None)
