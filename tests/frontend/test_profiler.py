"""``tlxc.profiler`` (proton's API as Triton's tutorials 09 and 10 use it) and its viewer,
in the interpreter with an injected clock: scopes nest, metrics and times add up, kernel
launches are recorded under the open scope with their ``launch_metadata``, the file
round-trips through the viewer, and what is not implemented is an error naming it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import tlxc
import tlxc.language as tl
import tlxc.profiler as proton
from tlxc.errors import CompilationError
from tlxc.kernels import launch
from tlxc.profiler import viewer
from tlxc.profiler.session import WallTimer


class Ticks:
    """A clock that advances by the given steps (ns), one per mark, then by 1."""

    def __init__(self, *steps: int) -> None:
        self.now = 0
        self.steps = list(steps)

    def __call__(self) -> int:
        self.now += self.steps.pop(0) if self.steps else 1
        return self.now


@pytest.fixture(autouse=True)
def fresh(tmp_path: Path, monkeypatch: Any) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TLXC_INTERPRET", "1")
    yield
    for sid in list(proton._sessions):  # a failed test must not leave a session recording
        del proton._sessions[sid]
    proton._stack.clear()
    proton._marks.clear()
    launch.LAUNCH_HOOK.clear()


def _ms(ns: float) -> float:
    return ns * 1e-6


def test_scopes_nest_and_their_times_and_metrics_add_up() -> None:
    # marks: outer enter 0->100, inner enter ->110, inner exit ->140, inner again 150/170, outer exit 300
    clock = Ticks(100, 10, 30, 10, 20, 130)
    proton.start("p", timer=WallTimer(clock))
    with proton.scope("outer", {"bytes": 1000}):
        for _ in range(2):
            with proton.scope("inner", {"flops16": 4e9}):
                pass
    proton.finalize()
    root = json.loads(Path("p.hatchet").read_text())[0]
    outer = root["children"][0]
    inner = outer["children"][0]
    assert root["frame"]["name"] == "ROOT" and outer["frame"]["name"] == "outer"
    # inner: (140-110) + (170-150) = 50 ns, entered twice; outer: 300-100 = 200 ns inclusive
    assert inner["metrics"] == {"time (ns)": 50.0, "count": 2, "flops16": 8e9}
    assert outer["metrics"] == {"time (ns)": 150.0, "count": 1, "bytes": 1000}

    tree, cols = viewer.parse(["time/ms", "tflop16/s", "gbyte/s", "count", "time/%"], "p.hatchet")
    assert cols == ["time/ms (inc)", "tflop16/s (inc)", "gbyte/s (inc)", "count", "time/% (inc)"]
    out, inn = tree.children[0], tree.children[0].children[0]
    assert tree.metrics["time/ms (inc)"] == pytest.approx(_ms(200))
    assert out.metrics["time/ms (inc)"] == pytest.approx(_ms(200))
    assert inn.metrics["time/ms (inc)"] == pytest.approx(_ms(50))
    assert inn.metrics["tflop16/s (inc)"] == pytest.approx(8e9 / 50e-9 / 1e12)  # 160000 tflop/s
    assert out.metrics["tflop16/s (inc)"] == pytest.approx(8e9 / 200e-9 / 1e12)
    assert out.metrics["gbyte/s (inc)"] == pytest.approx(1000 / 200e-9 / 1e9)  # 5000 gbyte/s
    assert math.isnan(inn.metrics["gbyte/s (inc)"]) is False and inn.metrics["gbyte/s (inc)"] == 0.0
    assert inn.metrics["count"] == 2 and out.metrics["count"] == 3
    assert inn.metrics["time/% (inc)"] == pytest.approx(25.0)


@tlxc.jit
def add_one(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)


def _meta(grid: tuple, kernel: Any, args: dict) -> dict:
    return {"name": f"{kernel.name} [n={args['n']}, B={args['BLOCK']}, g={grid[0]}]",
            "flops32": float(args["n"]), "bytes": 8 * args["n"]}


@tlxc.jit(launch_metadata=_meta)
def add_one_meta(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)


def test_kernel_launches_are_nodes_under_the_open_scope_named_by_launch_metadata() -> None:
    """hook="tlxc" is hook="triton" as a program renamed wholesale spells it."""
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    proton.start("k", hook="tlxc", timer=WallTimer(Ticks(1, 1, 7, 1, 5, 1000)))
    with proton.scope("bench"):
        add_one_meta[(2,)](x, y, 64, BLOCK=32)
        add_one[(2,)](x, y, 64, BLOCK=32)
    proton.deactivate()
    add_one[(2,)](x, y, 64, BLOCK=32)  # not recorded
    proton.finalize()
    np.testing.assert_array_equal(y, x + 1)
    tree, cols = viewer.parse(["time/ns", "gflop32/s", "count"], "k.hatchet")
    bench = tree.children[0]
    assert bench.name == "bench"
    assert [c.name for c in bench.children] == ["add_one_meta [n=64, B=32, g=2]", "add_one"]
    meta, plain = bench.children
    assert meta.metrics["time/ns (inc)"] == 7 and plain.metrics["time/ns (inc)"] == 5
    assert meta.metrics["gflop32/s (inc)"] == pytest.approx(64 / 7e-9 / 1e9)
    assert meta.metrics["bytes"] == 512 and "bytes" not in plain.metrics
    assert bench.metrics["count"] == 3  # the scope once, each kernel once
    assert launch.LAUNCH_HOOK == []  # finalized: launches are back on their fast path


def test_without_the_triton_hook_launches_are_not_recorded() -> None:
    x = np.arange(8, dtype=np.float32)
    proton.start("nohook", timer=WallTimer(Ticks()))
    assert launch.LAUNCH_HOOK == []
    with proton.scope("s"):
        add_one[(1,)](x, np.zeros_like(x), 8, BLOCK=8)
    proton.finalize()
    tree, _ = viewer.parse(["count"], "nohook.hatchet")
    assert [c.name for c in tree.children] == ["s"] and tree.children[0].children == []


def test_activate_and_deactivate_choose_the_session() -> None:
    a = proton.start("a", timer=WallTimer(Ticks()))
    b = proton.start("b", timer=WallTimer(Ticks()))
    proton.deactivate(a)
    with proton.scope("only_b"):
        pass
    proton.activate(a)
    proton.deactivate()
    with proton.scope("neither"):
        pass
    proton.finalize()
    assert [c.name for c in viewer.read("a.hatchet").children] == []
    assert [c.name for c in viewer.read("b.hatchet").children] == ["only_b"]
    assert (a, b) == (a, a + 1)


def test_the_printed_tree_holds_the_values_and_names() -> None:
    proton.start("t", timer=WallTimer(Ticks(1, 1_000_000, 2_000_000, 1_000_000)))
    with proton.scope("a", {"flops": 4e9}):
        with proton.scope("b"):
            pass
    proton.finalize()
    tree, cols = viewer.parse(["tflop/s", "time/ms"], "t.hatchet")
    # a: 4e9 flops in 4 ms = 1 tflop/s, b: 2 ms of it; the root, never timed itself, has its children's
    text = viewer.format_tree(tree, cols)
    assert text.splitlines() == [
        "1.000 4.000 ROOT",
        "└─ 1.000 4.000 a",
        "   └─ 0.000 2.000 b",
    ]


def test_scope_as_a_decorator_and_enter_exit_scope() -> None:
    proton.start("d", timer=WallTimer(Ticks()))

    @proton.scope("decorated", {"bytes": 3})
    def f() -> int:
        return 5

    assert f() + f() == 10
    proton.enter_scope("manual", metrics={"bytes": 1})
    proton.exit_scope("manual")
    with pytest.raises(CompilationError, match="TLXC-PROFILER-002.*no scope open"):
        proton.exit_scope()
    proton.finalize()
    tree, _ = viewer.parse(["bytes", "count"], "d.hatchet")
    assert {c.name: (c.metrics["bytes"], c.metrics["count"]) for c in tree.children} == \
        {"decorated": (6, 2), "manual": (1, 1)}


@pytest.mark.parametrize("call, named", [
    (lambda: proton.start("x", backend="cupti"), "backend='cupti'"),
    (lambda: proton.start("x", context="python"), "context='python'"),
    (lambda: proton.start("x", data="trace"), "data='trace'"),
    (lambda: proton.start("x", mode="pcsampling"), "mode='pcsampling'"),
    (lambda: proton.start("x", hook="launch"), "hook='launch'"),
    (lambda: proton.cpu_timed_scope, "'cpu_timed_scope'"),
    (lambda: proton.enter_state, "'enter_state'"),
    (lambda: proton.finalize(output_format="chrome_trace"), "output_format='chrome_trace'"),
])
def test_what_is_not_implemented_is_an_error_naming_it(call: Any, named: str) -> None:
    with pytest.raises(CompilationError, match="TLXC-PROFILER-001") as e:
        call()
    assert named in str(e.value)
    assert proton._sessions == {}


def test_viewer_refuses_what_it_cannot_derive(tmp_path: Path) -> None:
    proton.start("v", timer=WallTimer(Ticks()))
    with proton.scope("s", {"bytes": 1}):
        pass
    proton.finalize()
    with pytest.raises(CompilationError, match="TLXC-PROFILER-001.*'util'"):
        viewer.parse(["util"], "v.hatchet")
    with pytest.raises(CompilationError, match="TLXC-PROFILER-002.*'tflop16/s' needs 'flops16'"):
        viewer.parse(["tflop16/s"], "v.hatchet")
    with pytest.raises(CompilationError, match="TLXC-PROFILER-001.*include"):
        viewer.parse(["time/ms"], "v.hatchet", include="s")
    with pytest.raises(CompilationError, match="TLXC-PROFILER-002.*no session 7"):
        proton.activate(7)
