"""Dependencies point one way: the IR never imports code generators, the runtime or GPU
bindings; nothing below the JIT layer (``tlxc/kernels``) imports it; shared passes never
test for a particular target."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IR = ROOT / "tlxc" / "ir"
FORBIDDEN = ("tlxc.codegen", "tlxc.runtime", "runtime", "cuda", "hip", "tlxc.frontend", "tlxc.interpreter")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                rel = path.relative_to(ROOT)
                if rel.parts[0] == "runtime":  # installed as tlxc.runtime
                    rel = Path("tlxc", *rel.parts)
                parts = rel.with_suffix("").parts[:-node.level]
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


# Everything the JIT layer builds on: the frontend, the compile driver, the IR, the code
# generators, the interpreter, the language and the runtime (installed as tlxc.runtime).
BELOW_JIT = [ROOT / "tlxc" / d for d in ("frontend", "ir", "codegen", "interpreter", "language", "tlx")] + \
    [ROOT / "tlxc" / "compiler.py", ROOT / "runtime"]


def test_nothing_below_imports_the_jit_layer() -> None:
    files = [f for p in BELOW_JIT for f in ([p] if p.is_file() else p.rglob("*.py"))]
    assert len(files) > 50
    for f in files:
        for mod in _imports(f):
            assert not (mod == "tlxc.kernels" or mod.startswith("tlxc.kernels.")), f"{f} imports {mod}"
            assert mod != "tlxc" or f.name != "compiler.py", f"{f} imports the tlxc package"


def test_layering_check_sees_relative_imports() -> None:
    """The check resolves ``from ..kernels import x`` in a frontend file to tlxc.kernels."""
    f = ROOT / "tlxc" / "frontend" / "calls.py"
    assert "tlxc.frontend.function" in _imports(f)
