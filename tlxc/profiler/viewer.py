"""``tlxc.profiler.viewer``: reads the file a session writes and prints its tree with the
metrics asked for, as proton's viewer does (without hatchet or pandas).

``parse(metric_names, file_name)`` returns ``(tree, columns)``: the tree's nodes carry the
inclusive sums of the file's exclusive metrics and one column per name asked for, named
as proton names them (``"time/ms (inc)"``...); ``print_tree(tree, columns)`` prints it.

Metric names, case as proton writes them:
- ``time/s``, ``time/ms``, ``time/us``, ``time/ns``; ``avg_time/<unit>`` (time / count);
- ``flop/s``, ``gflop/s``, ``tflop/s`` from the metric ``flops``; ``flop<W>/s``,
  ``gflop<W>/s``, ``tflop<W>/s`` from ``flops<W>`` (W in 8, 16, 32, 64);
- ``byte/s``, ``gbyte/s``, ``tbyte/s`` from ``bytes``;
- ``<metric>/%``: a node's share of the root's;
- any metric of the file by name (``count``, ``bytes``...).
A rate over a node without time is NaN. ``util`` (which needs the device's peak rates) and
``cpu_time`` are ``TLXC-PROFILER-001``; so are parse's ``include``/``exclude``/
``threshold`` and print_tree's ``format``.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import CompilationError

FLOPS_WIDTHS = (8, 16, 32, 64)
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_RATE_PREFIX = {"": 1.0, "g": 1e9, "t": 1e12}


def _refuse(what: str, help: str) -> CompilationError:
    return CompilationError("TLXC-PROFILER-001", f"{what} is not implemented by tlxc.profiler.viewer", None, help)


@dataclass
class Tree:
    """One node of a parsed profile: its name, its inclusive metrics (``"time (ns)"``,
    ``"count"``, the user's, then the derived columns) and its children."""

    name: str
    metrics: dict[str, float] = field(default_factory=dict)
    children: list[Tree] = field(default_factory=list)

    def walk(self) -> list[Tree]:
        out = [self]
        for c in self.children:
            out.extend(c.walk())
        return out


def _build(frame: dict[str, Any]) -> Tree:
    node = Tree(frame["frame"]["name"], dict(frame.get("metrics", {})),
                [_build(c) for c in frame.get("children", [])])
    for child in node.children:  # the file's metrics are exclusive: make them inclusive
        for key, value in child.metrics.items():
            node.metrics[key] = node.metrics.get(key, 0) + value
    return node


def read(file_name: str) -> Tree:
    with open(file_name) as f:
        database = json.load(f)
    if not isinstance(database, list) or not database or "frame" not in database[0]:
        raise CompilationError("TLXC-PROFILER-002", f"{file_name} is not a profile written by tlxc.profiler "
                               "(a json list whose first item is the root frame)")
    return _build(database[0])


def _rate_source(metric: str) -> tuple[str, float] | None:
    """For a rate name (``tflop16/s``, ``gbyte/s``) the metric it divides by time and the
    unit's factor; else None."""
    if not metric.endswith("/s"):
        return None
    base = metric[:-2]
    for prefix, factor in _RATE_PREFIX.items():
        if base == f"{prefix}byte":
            return "bytes", factor
        if base == f"{prefix}flop":
            return "flops", factor
        for w in FLOPS_WIDTHS:
            if base == f"{prefix}flop{w}":
                return f"flops{w}", factor
    return None


def _div(a: float, b: float) -> float:
    return a / b if b else math.nan


def _derive(tree: Tree, metric: str) -> str:
    """Add the column for ``metric`` to every node; returns its name."""
    nodes = tree.walk()
    available = set().union(*(n.metrics for n in nodes))
    head, _, unit = metric.partition("/")
    if metric == "util" or head in ("cpu_time", "avg_cpu_time"):
        raise _refuse(f"the metric {metric!r}", "tlxc.profiler measures device time only and has no device peak "
                      "rates; ask for time/<unit>, <t|g>flop<W>/s or <t|g>byte/s")
    if head in ("time", "avg_time") and unit in TIME_UNITS:
        column = f"{metric} (inc)"
        for n in nodes:
            seconds = n.metrics.get("time (ns)", 0.0) * 1e-9
            if head == "avg_time":
                seconds = _div(seconds, n.metrics.get("count", 0))
            n.metrics[column] = seconds / TIME_UNITS[unit]
        return column
    rate = _rate_source(metric)
    if rate is not None:
        source, factor = rate
        if source not in available:
            raise CompilationError("TLXC-PROFILER-002", f"the metric {metric!r} needs {source!r}, which the "
                                   f"profile does not have (it has {sorted(available)})")
        column = f"{metric} (inc)"
        for n in nodes:
            n.metrics[column] = _div(n.metrics.get(source, 0.0), n.metrics.get("time (ns)", 0.0) * 1e-9) / factor
        return column
    if unit == "%":
        source = "time (ns)" if head == "time" else head
        if source not in available:
            raise CompilationError("TLXC-PROFILER-002", f"the metric {metric!r} needs {source!r}, which the "
                                   f"profile does not have (it has {sorted(available)})")
        total = tree.metrics.get(source, 0.0)
        column = f"{metric} (inc)"
        for n in nodes:
            n.metrics[column] = _div(n.metrics.get(source, 0.0), total) * 100.0
        return column
    if unit:
        raise _refuse(f"the metric {metric!r}", "the units are time/<s|ms|us|ns>, avg_time/<unit>, "
                      "[g|t]flop[W]/s, [g|t]byte/s and <metric>/%")
    for name in available:
        if name.lower() == metric.lower() or name.split("(")[0].strip().lower() == metric.lower():
            return name
    raise CompilationError("TLXC-PROFILER-002", f"the metric {metric!r} is not in the profile (it has "
                           f"{sorted(available)})")


def parse(metrics: list[str] | str, file_name: str, include: Any = None, exclude: Any = None,
          threshold: Any = None) -> tuple[Tree, list[str]]:
    """The profile in ``file_name`` with a column per name in ``metrics``."""
    for option, value in (("include", include), ("exclude", exclude), ("threshold", threshold)):
        if value is not None:
            raise _refuse(f"parse({option}=...)", "filter the tree yourself: it is a plain Tree of nodes")
    tree = read(file_name)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    return tree, [_derive(tree, m) for m in names]


def _key(value: float) -> float:
    return -math.inf if value != value else value  # NaN (no time) sorts last


def _fmt(value: float) -> str:
    return "nan" if value != value else f"{value:.3f}"


def format_tree(tree: Tree, metrics: list[str], depth: int = 100) -> str:
    """The tree as proton prints it: a node's values, then its name, indented."""
    lines: list[str] = []

    def visit(node: Tree, prefix: str, branch: str, level: int) -> None:
        values = " ".join(_fmt(node.metrics.get(m, math.nan)) for m in metrics)
        lines.append(f"{prefix}{branch}{values} {node.name}")
        if level >= depth:
            return
        inner = prefix + ("" if not branch else ("   " if branch == "└─ " else "│  "))
        for i, child in enumerate(node.children):
            visit(child, inner, "└─ " if i == len(node.children) - 1 else "├─ ", level + 1)

    visit(tree, "", "", 0)
    return "\n".join(lines)


def print_tree(tree: Tree, metrics: list[str], depth: int = 100, format: str | None = None,
               print_sorted: bool = False) -> None:
    if format is not None:
        raise _refuse(f"print_tree(format={format!r})", "frame names are printed as they were recorded")
    print(format_tree(tree, metrics, depth))
    if print_sorted:
        print(f"Sorted kernels by metric {metrics[0]}")
        nodes = sorted(tree.walk()[1:], key=lambda n: _key(n.metrics.get(metrics[0], math.nan)), reverse=True)
        for n in nodes:
            name = n.name[:100] + ("..." if len(n.name) > 100 else "")
            print(f"{name:105} {_fmt(n.metrics.get(metrics[0], math.nan))}")


def main(argv: list[str] | None = None) -> None:
    """``python -m tlxc.profiler.viewer -m time/ms,tflop16/s FILE``."""
    ap = argparse.ArgumentParser(description="Print a tlxc.profiler profile as a tree.")
    ap.add_argument("-m", "--metrics", default="time/s", help="comma-separated metric names")
    ap.add_argument("-d", "--depth", type=int, default=100)
    ap.add_argument("--print-sorted", action="store_true")
    ap.add_argument("file")
    a = ap.parse_args(argv)
    tree, columns = parse(a.metrics.split(","), a.file)
    print_tree(tree, columns, a.depth, print_sorted=a.print_sorted)


if __name__ == "__main__":
    main()
