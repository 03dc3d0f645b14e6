"""bench/tutorials.py turns Triton's tutorial files into what a new user runs under tlxc."""

from __future__ import annotations

import sys
from pathlib import Path

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


def test_load_drops_the_top_level_benchmark_run(tmp_path: Path) -> None:
    f = tmp_path / "t.py"
    f.write_text("ran = []\nclass B:\n    @staticmethod\n    def run(**kw):\n        ran.append(kw)\n"
                 "benchmark = B()\nbenchmark.run(show_plots=True, print_data=True)\n")
    mod = tutorials.load(f, "tutorial_load_probe", "triton")
    assert mod.ran == []
