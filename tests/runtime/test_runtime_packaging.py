"""runtime/ installs as tlxc.runtime and never as a top-level module ``runtime``; every
package folder is listed in pyproject.toml (a package-dir mapping rules out packages.find)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _listed_packages() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^packages = \[(.*?)\]", text, re.MULTILINE | re.DOTALL)
    assert block, "pyproject.toml lists no packages under [tool.setuptools]"
    return set(re.findall(r'"([^"]+)"', block.group(1)))


def test_every_package_is_listed() -> None:
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tlxc").rglob("__init__.py")}
    found |= {".".join(("tlxc",) + p.parent.relative_to(ROOT).parts)
              for p in (ROOT / "runtime").rglob("__init__.py")}
    missing = found - _listed_packages()
    assert not missing, f"add {sorted(missing)} to packages in pyproject.toml, or a non-editable install lacks them"
    assert 'package-dir = {"tlxc.runtime" = "runtime"}' in (ROOT / "pyproject.toml").read_text()


def test_installed_as_tlxc_runtime_only() -> None:
    code = ("import importlib.util, tlxc.runtime, pathlib; "
            "print(pathlib.Path(tlxc.runtime.__file__).parent.name); "
            "print(importlib.util.find_spec('runtime'))")
    # as installed: a source checkout on PYTHONPATH would make its own runtime/ folder findable
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True,
                         env=env).stdout
    assert out.split() == ["runtime", "None"]
