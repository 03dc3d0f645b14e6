"""The direction of dependencies (docs/architecture.md, "Packages and layers"):
frontend -> ir (+ passes) -> codegen/{nvptx,amdgpu} -> runtime. The IR never imports code
generators, the runtime or GPU bindings, and shared passes never test for a particular
target; the two code generators never import each other (what they share lives in
``tlxc/codegen/``); the frontend loads code generators and the runtime only when a kernel
is compiled or launched, never when it is imported; nothing below the JIT layer
(``tlxc/kernels``) imports it. Imports are read from the source
(``ast``), so a test fails on the line that adds one, whether or not it runs."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TLXC = ROOT / "tlxc"
IR = TLXC / "ir"
FORBIDDEN = ("tlxc.codegen", "tlxc.runtime", "runtime", "cuda", "hip", "tlxc.frontend", "tlxc.interpreter")


def _module_name(path: Path) -> tuple[str, ...]:
    """The dotted name of a file under tlxc/ (``tlxc/ir/core.py`` -> tlxc.ir.core); a
    package's ``__init__.py`` is the package itself, so relative imports resolve from it."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] == "runtime":  # installed as tlxc.runtime
        parts = ("tlxc",) + parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _resolve(path: Path, node: ast.ImportFrom) -> list[str]:
    """The modules an ``from ... import ...`` names: the module, and for ``from . import
    x`` or ``from .. import x`` each ``package.x`` (x may be a module)."""
    if not node.level:
        base = node.module or ""
    else:
        parts = _module_name(path)
        package = parts if path.name == "__init__.py" else parts[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ((node.module,) if node.module else ()))
    return [base] + [f"{base}.{a.name}" for a in node.names if a.name != "*"]


def _imports(path: Path, module_level_only: bool = False) -> list[str]:
    """Every module ``path`` imports; with ``module_level_only``, only the imports that run
    when the module is imported (not those inside functions, nor under ``if
    TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text())
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.extend(_resolve(path, node))
        if module_level_only:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                for child in node.orelse:
                    visit(child)
                return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _violations(files: list[Path], forbidden: tuple[str, ...], module_level_only: bool = False) -> list[str]:
    return [f"{f.relative_to(ROOT)} imports {mod}" for f in files for mod in _imports(f, module_level_only)
            for bad in forbidden if mod == bad or mod.startswith(bad + ".")]


def test_ir_does_not_import_targets_or_runtime() -> None:
    files = list(IR.rglob("*.py"))
    assert files
    assert not _violations(files, FORBIDDEN)


def test_ir_never_names_a_target() -> None:
    for f in IR.rglob("*.py"):
        text = f.read_text()
        for word in ("sm_90", "sm_100", "gfx9", "gfx1"):
            assert word not in text, f"{f} mentions {word}: shared code must ask a TargetInfo"


def test_code_generators_do_not_import_each_other() -> None:
    """Code both targets need (layout-conversion plans, target-op checks, math constants)
    lives in ``tlxc/codegen/`` itself, so either code generator can change alone."""
    amd = sorted((TLXC / "codegen" / "amdgpu").rglob("*.py"))
    nvidia = sorted((TLXC / "codegen" / "nvptx").rglob("*.py"))
    assert amd and nvidia
    assert not _violations(amd, ("tlxc.codegen.nvptx",)), "shared code belongs in tlxc/codegen/"
    assert not _violations(nvidia, ("tlxc.codegen.amdgpu",)), "shared code belongs in tlxc/codegen/"


def test_frontend_does_not_import_codegen_or_runtime_when_imported() -> None:
    """Importing the frontend (to define kernels, or to run them in the interpreter) needs
    neither a code generator nor the runtime: those are imported inside the functions that
    compile or launch."""
    files = sorted((TLXC / "frontend").rglob("*.py"))
    assert files
    assert not _violations(files, ("tlxc.codegen", "tlxc.runtime", "runtime"), module_level_only=True)


def test_the_import_reader_sees_what_it_must() -> None:
    """The checks above would pass vacuously if imports were misread: relative imports
    resolve to full names, imports inside functions count only for the whole-file check,
    and ``from .. import x`` names the module ``x``."""
    lower_math = TLXC / "codegen" / "amdgpu" / "lower_math.py"
    assert "tlxc.codegen.math_constants" in _imports(lower_math, module_level_only=True)
    launch = TLXC / "kernels" / "launch.py"
    assert "tlxc.runtime.native_launch" in _imports(launch)
    assert "tlxc.runtime.native_launch" not in _imports(launch, module_level_only=True)
    assert "tlxc.ir.core" in _imports(IR / "printer.py", module_level_only=True)


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
