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


def _returns(reps: int) -> str:
    lines = ["@tlxc.jit", "def k(out, a, b):"]
    for r in range(reps):
        lines += [f"    if a > {r}:", f"        if b > {r * 2}:", "            return",
                  f"        tl.store(out + {2 * r}, a + {r})", f"    tl.store(out + {2 * r + 1}, b - {r})"]
    return "\n".join(lines) + "\n"


def _expected(reps: int, a: int, b: int) -> list[int]:
    out = [0] * (2 * reps)
    for r in range(reps):
        if a > r:
            if b > r * 2:
                return out
            out[2 * r] = a + r
        out[2 * r + 1] = b - r
    return out


def test_repeated_nested_returns_are_linear(load_kernels: Any) -> None:
    sizes = {}
    for reps in (4, 12):
        mod = load_kernels(_returns(reps))
        start = time.perf_counter()
        sizes[reps] = len(mod.k.compile("*i32,i32,i32").asm["ir"].splitlines())
        assert time.perf_counter() - start < 10.0
    per_if = (sizes[12] - sizes[4]) / 8
    assert sizes[12] < 3 * sizes[4], sizes  # was 94k lines for 12 (4096 copies of the tail)
    assert per_if < 60, sizes


def test_repeated_nested_returns_run_right(load_kernels: Any) -> None:
    mod = load_kernels(_returns(5))
    for a, b in [(0, 0), (3, 1), (3, 100), (10, 5), (10, 7), (2, 3)]:
        out = np.zeros(10, np.int32)
        mod.k.interpret[(1,)](out, a, b)
        assert out.tolist() == _expected(5, a, b), (a, b)


def test_repeated_nested_returns_compile_for_both_targets(load_kernels: Any) -> None:
    mod = load_kernels(_returns(12))
    assert ".entry k(" in mod.k.compile("*i32,i32,i32", arch="sm_90a").asm["ptx"]
    assert mod.k.compile("*i32,i32,i32", arch="gfx950").asm["amdgcn"]


def test_values_flow_past_a_flagged_return(load_kernels: Any) -> None:
    mod = load_kernels("""
@tlxc.jit
def k(out, a):
    v = a * 0
    if a > 1:
        v = a + 10
        if a > 5:
            v = 1.5  # another type: dead, since this path returns
            return
        v = v + 1
    tl.store(out, v)
""")
    for a, want in [(0, 0), (3, 14), (7, -1)]:
        out = np.full(1, -1, np.int32)
        mod.k.interpret[(1,)](out, a)
        assert out[0] == want, a
