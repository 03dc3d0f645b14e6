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


# -- perf_report: benchmark tables, as triton.testing's ------------------------------------------

class Benchmark:
    """One benchmark of ``perf_report``: the function is called for each value of
    ``x_vals`` (given to the arguments ``x_names``) and each value of ``line_vals`` (given
    to ``line_arg``), with ``args`` besides; each line is a column named by
    ``line_names``. The function returns a number, or a tuple (value, min, max)."""

    def __init__(self, x_names: Sequence[str], x_vals: Sequence[Any], line_arg: str, line_vals: Sequence[Any],
                 line_names: Sequence[str], plot_name: str, args: dict[str, Any] | None = None, xlabel: str = "",
                 ylabel: str = "", x_log: bool = False, y_log: bool = False,
                 styles: Sequence[tuple[str, str]] | None = None, color: Any = None) -> None:
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        if len(self.line_names) != len(self.line_vals):
            raise ValueError(f"Benchmark {plot_name!r}: {len(self.line_vals)} line_vals but "
                             f"{len(self.line_names)} line_names")
        self.plot_name = plot_name
        self.args = dict(args or {})
        self.xlabel, self.ylabel = xlabel, ylabel
        self.x_log, self.y_log = x_log, y_log
        self.styles = styles


class Mark:
    """A function decorated by ``perf_report``: ``run(...)`` measures and reports it."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | Sequence[Benchmark]) -> None:
        self.fn = fn
        self.benchmarks = benchmarks

    def _table(self, bench: Benchmark, **kwargs: Any) -> tuple[list[str], list[list[Any]]]:
        columns = [bench.x_names[0]] + [f"{n}{s}" for n in bench.line_names for s in ("", "-min", "-max")]
        rows = []
        for x in bench.x_vals:
            xs = dict.fromkeys(bench.x_names, x) if not isinstance(x, (tuple, list)) else dict(zip(bench.x_names, x))
            row: list[Any] = [x]
            for line in bench.line_vals:
                r = self.fn(**xs, **{bench.line_arg: line}, **bench.args, **kwargs)
                value, lo, hi = (tuple(r) + (None, None))[:3] if isinstance(r, (tuple, list)) else (r, None, None)
                row += [value, lo, hi]
            rows.append(row)
        return columns, rows

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "",
            return_df: bool = False, **kwargs: Any) -> Any:
        """Measure every benchmark; ``print_data`` prints each table, ``save_path`` writes
        ``<plot_name>.csv`` (and ``.png`` when matplotlib is installed) there,
        ``show_plots`` shows the plots (matplotlib), ``return_df`` returns the tables as
        pandas DataFrames (pandas), else as ``(columns, rows)``."""
        import os
        import warnings

        benches = [self.benchmarks] if isinstance(self.benchmarks, Benchmark) else list(self.benchmarks)
        out = []
        for bench in benches:
            columns, rows = self._table(bench, **kwargs)
            shown = [c for c in columns if not all(r[columns.index(c)] is None for r in rows)]
            picked = [[r[columns.index(c)] for c in shown] for r in rows]
            if print_data:
                print(f"{bench.plot_name}:")
                print(format_table(shown, picked))
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w") as f:
                    f.write(",".join(shown) + "\n")
                    f.writelines(",".join("" if v is None else str(v) for v in r) + "\n" for r in picked)
            if show_plots or save_path:
                try:
                    import matplotlib.pyplot as plt
                except ImportError:
                    warnings.warn("perf_report: matplotlib is not installed, so no plot is drawn", stacklevel=2)
                else:
                    _plot(plt, bench, columns, rows, show_plots, save_path)
            if return_df:
                try:
                    import pandas as pd
                except ImportError:
                    raise ImportError("perf_report(...).run(return_df=True) needs pandas") from None
                out.append(pd.DataFrame(picked, columns=shown))
            else:
                out.append((shown, picked))
        return out[0] if isinstance(self.benchmarks, Benchmark) else out


def _plot(plt: Any, bench: Benchmark, columns: list[str], rows: list[list[Any]], show: bool, save_path: str) -> None:
    import os

    fig, ax = plt.subplots()
    xs = [r[0] for r in rows]
    for i, name in enumerate(bench.line_names):
        col = 1 + 3 * i
        style = bench.styles[i] if bench.styles and i < len(bench.styles) else None
        kw = {"color": style[0], "ls": style[1]} if style else {}
        ax.plot(xs, [r[col] for r in rows], label=name, **kw)
    ax.legend()
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    if bench.x_log:
        ax.set_xscale("log")
    if bench.y_log:
        ax.set_yscale("log")
    if save_path:
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    if show:
        plt.show()
    plt.close(fig)


def format_table(columns: list[str], rows: list[list[Any]]) -> str:
    """A plain text table, numbers right-aligned."""
    def cell(v: Any) -> str:
        return "" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)

    cells = [[cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def perf_report(benchmarks: Benchmark | Sequence[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """Decorator, as ``triton.testing.perf_report``: ``@perf_report(Benchmark(...))`` on a
    function that measures one point; ``f.run(print_data=True)`` prints the table."""
    return lambda fn: Mark(fn, benchmarks)
