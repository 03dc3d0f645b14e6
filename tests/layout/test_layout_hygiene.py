"""The layout package stays target-neutral and self-contained (docs/style.md, "Layers", "Hardware facts are data")."""

from __future__ import annotations

import ast
from pathlib import Path

LAYOUT = Path(__file__).resolve().parents[2] / "tlxc" / "ir" / "layout"


def test_layout_code_names_no_architecture() -> None:
    files = sorted(LAYOUT.rglob("*.py"))
    assert files
    for f in files:
        text = f.read_text()
        for word in ("sm_", "gfx"):
            assert word not in text, f"{f.name} mentions {word!r}: hardware facts come in through LayoutTarget"


def test_layout_imports_only_itself_and_the_standard_library() -> None:
    allowed = {"__future__", "collections", "dataclasses", "enum", "functools", "itertools", "re", "typing"}
    for f in sorted(LAYOUT.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{f.name} imports {name}"
