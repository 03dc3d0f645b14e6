"""The on-disk cache of ``kernel[grid]`` (tlxc/kernels/disk.py), across processes: a
second process that launches the same kernel does not compile it; a change to the kernel
or to a kernel it calls, another cache folder, or a corrupt entry compiles again.

Each process is a fresh Python (``WORKER``) that launches through a stand-in for the
CUDA driver and reports how many times the compile driver ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.interpreter_only

ROOT = Path(__file__).resolve().parents[2]

WORKER = textwrap.dedent('''
    import json, sys
    import numpy as np
    from tlxc.runtime import driver

    dev = driver.Device(0, 0, 0, "Fake GPU", (9, 0), 132, 232448)
    driver.device = lambda: dev
    driver.load_module = lambda binary: "module"
    driver.get_function = lambda module, name: 0x1234
    driver.set_dynamic_shared = lambda func, n, name: None
    driver.function_attribute = lambda func, name: 255
    driver.stream_object = lambda handle: handle
    driver.native_trusted = lambda *a, **k: None
    driver.launch_code = lambda func, block, shared, cluster, coop, ns: (["r = 0"], None)

    import tlxc.compiler
    compiles = []
    original = tlxc.compiler.compile_kernel
    def counting(kernel, *args, **kwargs):
        compiles.append(kernel.__name__)
        return original(kernel, *args, **kwargs)
    tlxc.compiler.compile_kernel = counting

    class FakeTensor:
        dtype = np.dtype(np.float32)
        def data_ptr(self):
            return 4096

    sys.path.insert(0, sys.argv[1])
    import kernels_under_test as m
    ck = m.outer[(2,)](FakeTensor(), 100, BLOCK=64)
    print(json.dumps({"compiles": compiles, "from_disk": getattr(ck, "from_disk", False),
                      "ptx": ck.asm["ptx"].count("ld.global"), "has_cubin": "cubin" in ck.asm}))
''')

KERNELS = '''
import tlxc
import tlxc.language as tl


@tlxc.jit
def inner(x, offs, n):
    return tl.load(x + offs, mask=offs < n) + {VALUE}


@tlxc.jit
def outer(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, inner(x, offs, n), mask=offs < n)
'''


def _run(folder: Path, cache: Path) -> dict[str, Any]:
    env = dict(os.environ, TLXC_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(folder / "worker.py"), str(folder)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "worker.py").write_text(WORKER)
    (tmp_path / "kernels_under_test.py").write_text(KERNELS.replace("{VALUE}", "1.0"))
    return tmp_path


def test_a_second_process_loads_the_variant_instead_of_compiling(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _run(project, cache)
    assert first["compiles"] == ["outer"] and first["from_disk"] is False
    second = _run(project, cache)
    assert second["compiles"] == [] and second["from_disk"] is True
    assert second["ptx"] == first["ptx"] > 0 and second["has_cubin"] == first["has_cubin"]
    other = _run(project, tmp_path / "another-cache")  # TLXC_CACHE_DIR decides where entries live
    assert other["compiles"] == ["outer"]


def test_a_changed_callee_misses(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _run(project, cache)["compiles"] == ["outer"]
    (project / "kernels_under_test.py").write_text(KERNELS.replace("{VALUE}", "2.0"))  # only inner changes
    changed = _run(project, cache)
    assert changed["compiles"] == ["outer"] and changed["from_disk"] is False
    assert _run(project, cache)["compiles"] == []  # and the new variant is stored in turn


def test_a_corrupt_entry_is_compiled_again(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _run(project, cache)
    blobs = [p for p in cache.rglob("*") if p.is_file() and p.name in ("ptx", "cubin")]
    assert blobs
    for p in blobs:
        p.write_bytes(p.read_bytes()[:-7] + b"garbage")
    again = _run(project, cache)
    assert again["compiles"] == ["outer"] and again["from_disk"] is False
    assert _run(project, cache)["compiles"] == []


def test_an_edited_compiler_misses(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key covers the compiler's own files: after a change to tlxc (an editable install
    being worked on), the variant is compiled again rather than read back."""
    from tlxc.kernels import disk

    stamp = disk.compiler_stamp()
    assert len(stamp) == 16 and disk.compiler_stamp() is stamp  # taken once per process
    cache = tmp_path / "cache"
    assert _run(project, cache)["compiles"] == ["outer"]
    worker = project / "worker.py"
    worker.write_text("import tlxc.kernels.disk as d\nd.compiler_stamp = lambda: 'edited'\n" + WORKER)
    assert _run(project, cache)["compiles"] == ["outer"]
    assert _run(project, cache)["compiles"] == []  # the edited compiler's own entry
