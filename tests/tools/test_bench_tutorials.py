"""bench/tutorials.py turns Triton's tutorial files into what a new user runs under tlxc."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import tutorials  # noqa: E402

SOURCE = '''import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor
DEVICE = triton.runtime.driver.active.get_active_torch_device()
triton_output = matmul(a, b)
print("Triton and Torch match")
benchmark.run(show_plots=True, print_data=True)
'''


def test_the_module_name_is_swapped_and_nothing_else(tmp_path: Path) -> None:
    out = tutorials.to_tlxc(SOURCE).splitlines()
    assert out[:4] == ["import tlxc", "import tlxc.language as tl",
                       "from tlxc.tools.tensor_descriptor import TensorDescriptor",
                       "DEVICE = tlxc.runtime.driver.active.get_active_torch_device()"]
    assert out[4] == "triton_output = matmul(a, b)" and out[5] == 'print("Triton and Torch match")'


def test_an_example_becomes_triton_with_its_tools(tmp_path: Path) -> None:
    """bench/dot.py's examples under Triton: the module, the language and ``tools`` imports."""
    import core

    f = tmp_path / "ex.py"
    f.write_text("import tlxc\nimport tlxc.language as tl\nfrom tlxc.tools.tensor_descriptor import TensorDescriptor\n"
                 "name = TensorDescriptor.__module__\n")
    pytest.importorskip("triton")
    mod = core.load_source(f, "ex_as_triton", True)
    assert mod.tlxc.__name__ == "triton" and mod.name.startswith("triton.")


def test_load_drops_the_top_level_benchmark_run(tmp_path: Path) -> None:
    f = tmp_path / "t.py"
    f.write_text("ran = []\nclass B:\n    @staticmethod\n    def run(**kw):\n        ran.append(kw)\n"
                 "benchmark = B()\nbenchmark.run(show_plots=True, print_data=True)\n")
    mod = tutorials.load(f, "tutorial_load_probe", "triton")
    assert mod.ran == []


def test_measure_checks_then_times_every_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    import dot

    monkeypatch.setattr(dot, "alternate", lambda fns, rounds: {"tlxc": 2.0, "triton": 3.0, "cublas": 1.0})
    fns = {"tlxc": lambda: 5.0, "triton": lambda: None, "cublas": lambda: None}
    row = dot.measure({"n": 1}, fns, 4e9, lambda out: out - 5.0, 0.0, 3)
    assert row == {"n": 1, "tlxc max err": 0.0, "tlxc TFLOP/s": 2.0, "triton TFLOP/s": 1.3, "cublas TFLOP/s": 4.0,
                   "tlxc/triton": 1.5, "tlxc/cublas": 0.5}
    wrong = dot.measure({}, fns, 4e9, lambda out: 0.5, 0.25, 3)
    assert wrong == {"tlxc max err": 0.5, "error": "wrong result (max error 0.5)"}

    def broken() -> None:
        raise RuntimeError("launch failed")
    failed = dot.measure({}, {**fns, "tlxc": broken}, 4e9, lambda out: 0.0, 0.0, 3)
    assert failed == {"error": "RuntimeError: launch failed"}
