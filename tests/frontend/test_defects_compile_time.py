"""Regression: compile time grew exponentially with the depth of nested loops (each
loop's dry run and real run visited the inner loops, which did the same) and with the
number of ``if c: if d: return`` in a row (the statements after each were copied into
both branches). Both are linear now."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tlxc.frontend.control import ControlFlowMixin


def _nest(depth: int) -> str:
    lines = ["@tlxc.jit", "def k(out, n):", "    acc = 0"]
    indent = "    "
    for d in range(depth):
        lines.append(f"{indent}for i{d} in range(n):")
        indent += "    "
    lines += [f"{indent}acc += 1", "    tl.store(out, acc)"]
    return "\n".join(lines) + "\n"


def test_deep_loop_nest_is_linear(load_kernels: Any, monkeypatch: Any) -> None:
    dry_runs = []
    original = ControlFlowMixin._carried_names

    def counting(self: Any, *args: Any) -> Any:
        dry_runs.append(1)
        return original(self, *args)

    monkeypatch.setattr(ControlFlowMixin, "_carried_names", counting)
    mod = load_kernels(_nest(16))
    start = time.perf_counter()
    ir = mod.k.compile("*i32,i32").asm["ir"]
    assert time.perf_counter() - start < 10.0  # 33 s before; well under 1 s now
    assert len(dry_runs) == 16  # one dry run per loop (it was 2**16 - 1)
    assert ir.count(" = for ") == 16 and ir.count("yield") == 16  # one loop op each, carrying acc


def test_loop_nest_still_carries_and_counts(load_kernels: Any) -> None:
    out = np.zeros(1, np.int32)
    load_kernels(_nest(3)).k.interpret[(1,)](out, 5)
    assert out[0] == 125
