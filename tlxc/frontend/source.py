"""The source of a kernel function: its AST with positions in the user's file, and
where its names come from (globals, closure)."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from ..ir.core import Location


@dataclass
class FunctionSource:
    """A parsed ``def`` with the offsets that map AST positions to the user's file."""

    fn: Callable[..., Any]
    tree: ast.FunctionDef
    file: str
    indent: int
    globals: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.tree.name

    def loc(self, node: ast.AST) -> Location:
        line = getattr(node, "lineno", self.tree.lineno)
        col = getattr(node, "col_offset", 0) + self.indent
        end_line = getattr(node, "end_lineno", line)
        end_col = getattr(node, "end_col_offset", None)
        end = end_col + self.indent if end_col is not None and end_line == line else None
        return Location(self.file, line, col, end)


def parse_text(fn: Callable[..., Any], text: str) -> FunctionSource:
    """``text`` -- the source of ``fn`` as a user rewrote it (Triton's
    ``_unsafe_update_src``) -- parsed in ``fn``'s place: its file, first line and globals."""
    try:
        _, start = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError):
        start, file = 1, f"<source of {getattr(fn, '__name__', 'kernel')}>"
    text = textwrap.dedent(text)
    module = ast.parse(text)
    tree = next(n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    ast.increment_lineno(module, start - 1)
    return FunctionSource(fn, tree, file, 0, fn.__globals__)  # type: ignore[attr-defined]


def parse_function(fn: Callable[..., Any]) -> FunctionSource:
    """Parse ``fn``'s source. Raises OSError when the source is not available."""
    lines, start = inspect.getsourcelines(fn)
    indent = min((len(s) - len(s.lstrip()) for s in lines if s.strip()), default=0)
    text = "".join(s[indent:] if s.strip() else "\n" for s in lines)
    module = ast.parse(text)
    tree = next(n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    ast.increment_lineno(module, start - 1)
    file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    closure: dict[str, Any] = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    return FunctionSource(fn, tree, file, indent, fn.__globals__, closure)  # type: ignore[arg-type]
