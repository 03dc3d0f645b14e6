"""STYLE rules 1 and 6: the IR never imports code generators, the runtime or GPU
bindings, and shared passes never test for a particular target."""

from __future__ import annotations

import ast
from pathlib import Path

IR = Path(__file__).resolve().parents[1] / "tlxc" / "ir"
FORBIDDEN = ("tlxc.codegen", "tlxc.runtime", "runtime", "cuda", "hip", "tlxc.frontend", "tlxc.interpreter")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = path.relative_to(IR.parent.parent).with_suffix("").parts[:-node.level]
                out.append(".".join(parts + ((node.module,) if node.module else ())))
            else:
                out.append(node.module or "")
    return out


def test_ir_does_not_import_targets_or_runtime() -> None:
    files = list(IR.rglob("*.py"))
    assert files
    for f in files:
        for mod in _imports(f):
            for bad in FORBIDDEN:
                assert not (mod == bad or mod.startswith(bad + ".")), f"{f} imports {mod}"


def test_ir_never_names_a_target() -> None:
    for f in IR.rglob("*.py"):
        text = f.read_text()
        for word in ("sm_90", "sm_100", "gfx9", "gfx1"):
            assert word not in text, f"{f} mentions {word}: shared code must ask a TargetInfo"
