"""What ``kernel[grid](...)`` costs in Python above the ``LoadedKernel.launch`` it ends in.

Runs on the CPU: the driver is replaced by a fake one (as tests/runtime/conftest.py's
``fake_driver`` does) whose launch statement does nothing, and the arguments are
``DeviceArray`` objects at made-up addresses, so that ``LoadedKernel.launch`` runs its
real argument checks and packing and nothing else. Each variant issues N back-to-back
launches of an empty kernel ``tiny(a, b, c, d, n, BLOCK: constexpr)``; the figure is the
median over batches (interleaved round-robin, so that the drift of a shared machine
affects all alike) of wall time / N, in microseconds, and the overhead is that minus
the median of ``LoadedKernel.launch`` with the same arguments.

"slow path" is the full launch path that every ``kernel[grid](...)`` took before the
fast path existed (``Launcher`` of launch.py: bind, grid, spec_of per argument,
compile options, variant cache lookup with the module-globals check, launch); the
fast-path variants are the call shapes users write. The script also runs on a tree
without the fast path, e.g. the last commit's::

    git archive HEAD tlxc runtime | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before python bench/launch_python_overhead.py

    python bench/launch_python_overhead.py [--n 2000] [--batches 30] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

TINY = '''
import tlxc
import tlxc.language as tl


@tlxc.jit
def tiny(a, b, c, d, n, BLOCK: tl.constexpr):
    pass
'''


def fake_driver() -> None:
    """Driver calls replaced so that launches run on the CPU and reach no GPU."""
    import itertools

    import tlxc.runtime as rt
    from tlxc.runtime import driver

    dev = driver.Device(0, 0, 0, "Fake GPU", (9, 0), 132, 232448)
    addresses = itertools.count(0x7F0000000000, 1 << 20)
    patches: dict[str, Callable[..., Any]] = {
        "device": lambda: dev, "load_module": lambda binary: "module", "get_function": lambda module, name: 0x1234,
        "set_dynamic_shared": lambda func, n, name: None, "stream_object": lambda handle: handle,
        "mem_alloc": lambda n: next(addresses), "mem_free": lambda ptr: None,
        "launch_code": lambda func, block, shared, cluster, coop, ns: (["r = 0"], None),
    }
    for name, fn in patches.items():
        setattr(driver, name, fn)
    rt.device = driver.device


def measure(variants: dict[str, tuple[Callable[[int], None], int]], batches: int) -> dict[str, float]:
    """Median µs per call of each variant; ``(batch, n)``: batch(n) makes n calls."""
    for batch, n in variants.values():
        batch(max(n // 10, 1))
    samples: dict[str, list[float]] = {k: [] for k in variants}
    names = list(variants)
    for r in range(batches):
        for j in range(len(names)):
            name = names[(r + j) % len(names)]
            batch, n = variants[name]
            t0 = time.perf_counter_ns()
            batch(n)
            samples[name].append((time.perf_counter_ns() - t0) / n / 1000)
    return {k: statistics.median(v) for k, v in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="launches per batch (the slow path makes n/50)")
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--json", help="also write the results to this file")
    opts = ap.parse_args()

    fake_driver()
    from tlxc.runtime import DeviceArray

    import tlxc
    from tlxc.kernels.launch import Launcher  # the slow path

    d = Path(tempfile.mkdtemp(prefix="tlxcbench-"))
    (d / "tiny_launch_bench.py").write_text(TINY)
    sys.path.insert(0, str(d))
    import tiny_launch_bench

    k = tiny_launch_bench.tiny
    x, y, z, w = (DeviceArray.empty(1024, "float32") for _ in range(4))
    k[(1,)](x, y, z, w, 1024, BLOCK=128)  # compiles (codegen and ptxas on the CPU)
    lk = k.last_compiled._loaded
    slow = Launcher(k, (1,), False)
    g3 = (1, 1, 1)

    def grid(meta: dict[str, Any]) -> tuple[int]:
        return (tlxc.cdiv(meta["n"], meta["BLOCK"]),)

    def loaded(n: int) -> None:
        for _ in range(n):
            lk.launch(g3, (x, y, z, w, 1024))

    def fast(n: int) -> None:
        for _ in range(n):
            k[(1,)](x, y, z, w, 1024, BLOCK=128)

    def fast_positional(n: int) -> None:
        for _ in range(n):
            k[(1,)](x, y, z, w, 1024, 128)

    def fast_grid_fn(n: int) -> None:
        for _ in range(n):
            k[grid](x, y, z, w, 1024, BLOCK=128)

    def fast_options(n: int) -> None:
        for _ in range(n):
            k[(1,)](x, y, z, w, 1024, BLOCK=128, num_warps=4, stream=0)

    def fast_keywords(n: int) -> None:
        for _ in range(n):
            k[(1,)](a=x, b=y, c=z, d=w, n=1024, BLOCK=128)

    def slow_path(n: int) -> None:
        for _ in range(n):
            slow(x, y, z, w, 1024, BLOCK=128)

    n = opts.n
    variants = {
        "LoadedKernel.launch": (loaded, n),
        "kernel[(1,)](x, y, z, w, 1024, BLOCK=128)": (fast, n),
        "kernel[(1,)](x, y, z, w, 1024, 128)": (fast_positional, n),
        "kernel[grid_fn](..., BLOCK=128)": (fast_grid_fn, n),
        "kernel[(1,)](..., BLOCK=128, num_warps=4, stream=0)": (fast_options, n),
        "kernel[(1,)](a=x, ..., n=1024, BLOCK=128)": (fast_keywords, n),
        "slow path (before)": (slow_path, max(n // 50, 1)),
    }
    res = measure(variants, opts.batches)
    base = res["LoadedKernel.launch"]
    print(f"Python {sys.version.split()[0]}; median of {opts.batches} batches; µs per launch, and above "
          "LoadedKernel.launch")
    for name, us in res.items():
        print(f"  {name:<55} {us:9.2f}   {'' if name == 'LoadedKernel.launch' else f'+{us - base:.2f}'}")
    assert len(k.cache) == 1, "the benchmark compiled more than one variant"
    if opts.json:
        out = {name: {"us": us, "overhead_us": us - base} for name, us in res.items()}
        Path(opts.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
