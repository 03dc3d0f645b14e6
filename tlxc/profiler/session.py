"""The profiler's state: sessions, each a tree of scopes and kernel launches with their
metrics, the clocks that time them, and the file a session writes.

A node's time is measured around it: a scope from its entry to its exit, a kernel launch
around the launch. On the GPU the two marks are CUDA events recorded on the stream that
tlxc launches on by default (PyTorch's current stream once PyTorch has initialized CUDA),
so a node's
time is the span of stream work between its marks; the events are read only when the
session is finalized, so that profiling does not synchronize the host with the GPU at
every scope. Without CUDA (the interpreter) the marks are the host's monotonic clock.

Proton times kernels with CUPTI instead and makes a scope's time the sum of its kernels';
for a scope that only launches kernels back to back the two agree, while a span also
counts the gaps between kernels.

The file is a JSON list holding the tree's root, a hatchet "literal" like proton's:
``{"frame": {"name", "type"}, "metrics": {...}, "children": [...]}``. A node's metrics are
exclusive -- ``time (ns)`` is the node's measured time less its children's, ``count`` the
times it was entered, and the user's metrics (``flops16``, ``bytes``...) as given -- so
that a viewer gets a node's inclusive value as the sum over its subtree.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

ROOT_NAME = "ROOT"


class Timer(Protocol):
    """Marks points in time; ``elapsed_ns`` gives the nanoseconds between two marks."""

    def mark(self) -> Any: ...

    def elapsed_ns(self, start: Any, end: Any) -> float: ...


class WallTimer:
    """The host's clock; ``sync`` (if given) runs before each mark so that GPU work
    launched before it is counted (the GPU without PyTorch's events)."""

    def __init__(self, clock: Callable[[], int] = time.perf_counter_ns,
                 sync: Callable[[], None] | None = None) -> None:
        self.clock = clock
        self.sync = sync

    def mark(self) -> int:
        if self.sync is not None:
            self.sync()
        return self.clock()

    def elapsed_ns(self, start: Any, end: Any) -> float:
        return float(end - start)


class CudaEventTimer:
    """CUDA events recorded, through tlxc's runtime, on the stream a launch given no stream
    uses (PyTorch's current stream once PyTorch has initialized CUDA, so that PyTorch's
    own work in a scope is timed too); read when the session is finalized."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def mark(self) -> Any:
        event = self.driver.event_create()
        self.driver.event_record(event, self.driver.default_stream())
        return event

    def elapsed_ns(self, start: Any, end: Any) -> float:
        ms = self.driver.event_elapsed_ms(start, end)
        return ms * 1e6

    def release(self, mark: Any) -> None:
        self.driver.event_destroy(mark)


def default_timer() -> Timer:
    """CUDA events when kernels run on a CUDA GPU; on an AMD GPU the host clock after
    waiting for the GPU; else (the interpreter) the host clock."""
    import os

    if os.environ.get("TLXC_INTERPRET", "0").lower() not in ("", "0", "false", "no", "off"):
        return WallTimer()
    from tlxc.runtime import driver, hip

    if driver.gpu_available():
        return CudaEventTimer(driver)
    if hip.gpu_available():  # no events through the HIP runtime yet: wait for the GPU at each mark
        return WallTimer(sync=hip.synchronize)
    return WallTimer()


@dataclass
class Node:
    """One frame of the tree: a scope or a kernel, keyed by name under its parent."""

    name: str
    kind: str = "function"
    children: dict[str, Node] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    count: int = 0
    time_ns: float = 0.0
    timed: bool = False

    def child(self, name: str, kind: str) -> Node:
        node = self.children.get(name)
        if node is None:
            node = self.children[name] = Node(name, kind)
        return node

    def add_metrics(self, metrics: dict[str, Any]) -> None:
        for key, value in metrics.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                from ..errors import CompilationError

                raise CompilationError("TLXC-PROFILER-001", f"metric {key!r} has the value {value!r}: tlxc.profiler "
                                       "keeps numbers only", None, "give int or float metric values")
            self.metrics[key] = self.metrics.get(key, 0) + value

    def inclusive_ns(self) -> float:
        """The measured time, or for a node never timed (the root) its children's."""
        if self.timed:
            return self.time_ns
        return sum(c.inclusive_ns() for c in self.children.values())

    def to_json(self) -> dict[str, Any]:
        children = [c.to_json() for c in self.children.values()]
        metrics: dict[str, float] = {}
        if self.timed:
            metrics["time (ns)"] = self.time_ns - sum(c.inclusive_ns() for c in self.children.values())
            metrics["count"] = self.count
        metrics.update(self.metrics)
        return {"frame": {"name": self.name, "type": self.kind}, "metrics": metrics, "children": children}


class Session:
    """One ``start``: a tree, a clock, whether it records now, and its kernel hook."""

    def __init__(self, sid: int, name: str, hook: str | None, timer: Timer) -> None:
        self.id = sid
        self.name = name
        self.hook = hook
        self.timer = timer
        self.active = True
        self.root = Node(ROOT_NAME)
        self.pending: list[tuple[Node, Any, Any]] = []  # (node, start mark, end mark), read at finalize

    def node(self, path: list[str], kind: str) -> Node:
        node = self.root
        for name in path:
            node = node.child(name, kind)
        return node

    def resolve(self) -> None:
        release = getattr(self.timer, "release", None)
        for node, start, end in self.pending:
            node.time_ns += self.timer.elapsed_ns(start, end)
            node.timed = True
            if release is not None:
                release(start)
                release(end)
        self.pending.clear()

    def file_name(self) -> str:
        return self.name if self.name.endswith(".hatchet") else f"{self.name}.hatchet"

    def write(self) -> str:
        self.resolve()
        path = self.file_name()
        with open(path, "w") as f:
            json.dump([self.root.to_json()], f, indent=1)
        return path
