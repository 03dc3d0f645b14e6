"""tl.device_print on a GPU: CUDA's printf writes to the process's stdout file descriptor
when the launch is synchronized, so the launch runs in a subprocess whose stdout is read."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

WORKER = '''
import torch
import tlxc
import tlxc.language as tl


@tlxc.jit
def k(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("x", x)
    tl.device_print("", x.to(tl.float16), x.to(tl.int64), hex=False)
    tl.device_print("h", x.to(tl.int16), hex=True)


x = torch.arange(128, dtype=torch.int32, device="cuda") - 3
k[(2,)](x, BLOCK=128, num_warps=4)
torch.cuda.synchronize()
'''


def test_device_print_lines_from_a_launch(tmp_path: Path) -> None:
    (tmp_path / "worker.py").write_text(WORKER)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    p = subprocess.run([sys.executable, str(tmp_path / "worker.py")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    want: Counter[str] = Counter()
    for pid in range(2):
        for i in range(128):
            v = i - 3
            want[f"pid ({pid}, 0, 0) idx ({i:3}) x: {v}"] += 1
            want[f"pid ({pid}, 0, 0) idx ({i:3}): (operand 0) {v:f}"] += 1
            want[f"pid ({pid}, 0, 0) idx ({i:3}): (operand 1) {v}"] += 1
            want[f"pid ({pid}, 0, 0) idx ({i:3}) h: 0x{v & 0xFFFF:04x}"] += 1
    # 128 elements over 128 threads: each line once, in no particular order
    assert Counter(line for line in p.stdout.splitlines() if line) == want
