"""``tlxc.testing.do_bench``: GPU time of a function, as ``triton.testing.do_bench``
(the autotuner's default timer).

Each run is timed with a pair of CUDA events around it, after the L2 cache is cleared by
writing a 256 MiB buffer (so that a kernel is not timed on data left in L2 by the run
before). The events come from ``torch.cuda.Event`` where PyTorch is imported and has a
GPU (they then time PyTorch's current stream, where tlxc launches by default), else from
the CUDA driver through ``tlxc.runtime.driver`` (the legacy default stream). Importing
this module imports neither.
"""

from __future__ import annotations

import statistics
import sys
from typing import Any, Callable, Sequence

_L2_BYTES = 256 * 1024 * 1024


class _TorchTimer:
    """Events and the L2-clearing buffer of PyTorch."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.cache = torch.empty(_L2_BYTES, dtype=torch.int8, device="cuda")

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def clear_l2(self) -> None:
        self.cache.zero_()

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, event: Any) -> None:
        event.record()

    def elapsed(self, start: Any, end: Any) -> float:
        return float(start.elapsed_time(end))

    def close(self) -> None:
        pass


class _DriverTimer:
    """Events of the CUDA driver (cuda-python), on the legacy default stream."""

    def __init__(self) -> None:
        from .runtime import driver

        self.driver = driver
        self.cache = driver.mem_alloc(_L2_BYTES)
        self.events: list[Any] = []

    def synchronize(self) -> None:
        self.driver.synchronize()

    def clear_l2(self) -> None:
        self.driver.memset_d8(self.cache, 0, _L2_BYTES)

    def event(self) -> Any:
        e = self.driver.event_create()
        self.events.append(e)
        return e

    def record(self, event: Any) -> None:
        self.driver.event_record(event, 0)

    def elapsed(self, start: Any, end: Any) -> float:
        return self.driver.event_elapsed_ms(start, end)

    def close(self) -> None:
        for e in self.events:
            self.driver.event_destroy(e)
        self.driver.mem_free(self.cache)


def _timer() -> Any:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return _TorchTimer(torch)
    return _DriverTimer()


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Sequence[Any] | None = None,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> Any:
    """Milliseconds that ``fn`` takes on the GPU: ``fn`` runs for about ``warmup`` ms,
    then about ``rep`` ms of runs are timed one by one. Returns the ``quantiles`` of the
    times (a list; ``(0.5,)`` is the median) when given, else by ``return_mode``: ``mean``,
    ``median``, ``min``, ``max`` or ``all`` (the list of times). ``grad_to_none``: tensors
    whose ``.grad`` is reset before each run, as in Triton."""
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be min, max, mean, median or all, got {return_mode!r}")
    t = _timer()
    try:
        fn()
        t.synchronize()
        # estimate the time of one run from five
        start, end = t.event(), t.event()
        t.record(start)
        for _ in range(5):
            t.clear_l2()
            fn()
        t.record(end)
        t.synchronize()
        estimate = max(t.elapsed(start, end) / 5, 1e-6)
        n_warmup = max(1, int(warmup / estimate))
        n_repeat = max(1, int(rep / estimate))
        starts = [t.event() for _ in range(n_repeat)]
        ends = [t.event() for _ in range(n_repeat)]
        for _ in range(n_warmup):
            fn()
        for i in range(n_repeat):
            for x in grad_to_none or ():
                x.grad = None
            t.clear_l2()
            t.record(starts[i])
            fn()
            t.record(ends[i])
        t.synchronize()
        times = [t.elapsed(s, e) for s, e in zip(starts, ends)]
    finally:
        t.close()
    return summarize(times, quantiles, return_mode)


def summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> Any:
    """The quantiles of ``times`` (linear interpolation, as ``torch.quantile``), or the
    statistic ``return_mode``."""
    if quantiles is not None:
        s = sorted(times)
        out = []
        for q in quantiles:
            pos = q * (len(s) - 1)
            lo = int(pos)
            hi = min(lo + 1, len(s) - 1)
            out.append(s[lo] + (s[hi] - s[lo]) * (pos - lo))
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)


def do_bench_cudagraph(fn: Callable[[], Any], rep: float = 20, grad_to_none: Sequence[Any] | None = None,
                       quantiles: Sequence[float] | None = None, return_mode: str = "mean") -> Any:
    """Milliseconds that one run of ``fn`` takes on the GPU, timed as a CUDA graph that
    replays about ``rep`` ms of runs (as ``triton.testing.do_bench_cudagraph``): launch
    overhead leaves the figure, which is what short kernels need. The graph is captured
    with PyTorch (``torch.cuda.CUDAGraph``) on a side stream; tlxc launches on PyTorch's
    current stream, so they are captured. Needs PyTorch with a GPU."""
    from .errors import CompilationError

    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be min, max, mean, median or all, got {return_mode!r}")
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        raise CompilationError("TLXC-OPTION-001", "option use_cuda_graph: timing with CUDA graphs needs PyTorch "
                               "with a GPU (torch.cuda.CUDAGraph)", None,
                               "install PyTorch with CUDA, or autotune with use_cuda_graph=False")

    def timed(graph: Any, runs: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        return float(start.elapsed_time(end)) / runs

    with torch.cuda.stream(torch.cuda.Stream()):
        fn()  # compiles and loads outside the capture
        torch.cuda.synchronize()
        one = torch.cuda.CUDAGraph()
        with torch.cuda.graph(one):
            fn()
        torch.cuda.synchronize()
        runs = max(1, int(rep / max(timed(one, 1), 1e-6)))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(runs):
                for x in grad_to_none or ():
                    x.grad = None
                fn()
        torch.cuda.synchronize()
        times = [timed(graph, runs) for _ in range(10)]
    return summarize(times, quantiles, return_mode)
