"""Launch overhead from Python: the time one launch of an empty kernel costs the host.

Each variant issues N back-to-back launches (the GPU is drained before each batch, so
the launch queue never fills) and the per-launch time of a batch is its wall time / N;
the figure printed is the median over the batches, in microseconds. The batches of all
variants are interleaved, so that the machine's drift during the run (large on shared
and virtualized hosts) does not favour one variant.

Variants: the raw driver call through cuda-python and through ctypes, with the
arguments packed once beforehand (the floor); tlxc's ``LoadedKernel`` in its usual
forms (DeviceArray or PyTorch arguments, explicit stream or the current one); and
Triton on an equivalent empty ``@triton.jit`` kernel, when Triton and PyTorch are
importable.

    python bench/launch_overhead.py [--batches 50] [--n 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any, Callable

EMPTY_PTX = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry empty0()
{
    ret;
}

.visible .entry empty4(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
    ret;
}
"""
SIG4 = ["*fp32:16", "*fp32:16", "*fp32:16", "i32"]


Variant = tuple[str, Callable[[int], None], Callable[[], None]]


def measure_all(variants: list[Variant], n: int, batches: int) -> dict[str, float]:
    """Median µs per launch of each variant. Batches of the variants are interleaved
    (round-robin, in a rotating order) so that drift of the machine during the run affects
    them alike; the GPU is drained before each batch, so the launch queue never fills."""
    for _, batch, sync in variants:  # warm-up (Triton compiles here)
        for _ in range(3):
            batch(n)
        sync()
    samples: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    for r in range(batches):
        for j in range(len(variants)):
            name, batch, sync = variants[(r + j) % len(variants)]
            sync()
            t0 = time.perf_counter_ns()
            batch(n)
            samples[name].append((time.perf_counter_ns() - t0) / n / 1000)
    for _, _, sync in variants:
        sync()
    return {name: statistics.median(v) for name, v in samples.items()}


def micro(torch: Any, t: Any) -> None:
    """What the pieces of a launch cost on this machine, in ns (timeit, best of 5)."""
    import timeit

    from tlxc.runtime import driver

    env = {"t": t, "torch": torch, "threading": __import__("threading"), "ds": driver.default_stream,
           "pi": __import__("struct").Struct("<QQQi").pack_into, "buf": bytearray(32), "sys": sys}
    setup = "lock = threading.Lock(); pool = [1]; pop, push = pool.pop, pool.append"
    print("  pieces (ns):")
    for stmt in ["pass", "with lock: pass", "s = pop(); push(s)", "pi(buf, 0, 1, 2, 3, 4)", "t.dtype", "t.is_cuda",
                 "t.get_device()", "t.data_ptr()", "ds()", "'torch' in sys.modules"]:
        n = 200000
        best = min(timeit.repeat(stmt, setup, number=n, repeat=5, globals=env)) / n * 1e9
        print(f"    {stmt:<40} {best:7.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="launches per batch")
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--micro", action="store_true", help="also time the pieces of a launch (ns)")
    opts = ap.parse_args()

    import ctypes

    from tlxc.runtime import DeviceArray, LoadedKernel, NoGPUError, assemble, device, driver, find_ptxas, synchronize

    try:
        dev = device()
    except NoGPUError as e:
        sys.exit(f"launch_overhead: {e}")
    binary: bytes | str = assemble(EMPTY_PTX) if find_ptxas() else EMPTY_PTX
    k4 = LoadedKernel(binary, "empty4", SIG4, num_warps=4).load()
    k0 = LoadedKernel(binary, "empty0", [], num_warps=4).load()
    kcl = LoadedKernel(binary, "empty4", SIG4, num_warps=4, cluster_dims=(2, 1, 1)).load()
    x, y, z = (DeviceArray.zeros(1024, "float32") for _ in range(3))
    n4 = 1024
    variants: list[Variant] = []

    def run(name: str, batch: Callable[[int], None], sync: Callable[[], None] = synchronize) -> None:
        variants.append((name, batch, sync))

    print(f"{dev.name} ({dev.arch}); {'cubin' if isinstance(binary, bytes) else 'PTX (driver JIT)'}; "
          f"Python {sys.version.split()[0]}; median of {opts.batches} batches of {opts.n} launches")

    # -- the floor: the driver call alone, arguments packed beforehand -------------------------------
    drv = driver.bindings()
    k4.plan.packer(dev.ordinal)((x, y, z, n4))
    kp = k4.plan.params_address

    def raw_bindings(n: int) -> None:
        launch, f = drv.cuLaunchKernel, k4.function
        for _ in range(n):
            launch(f, 1, 1, 1, 128, 1, 1, 0, None, kp, 0)

    run("raw cuLaunchKernel, cuda-python (prepacked args)", raw_bindings)
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        lib = None
    if lib is not None:
        vp, u = ctypes.c_void_p, ctypes.c_uint
        lib.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
        lib.cuLaunchKernel.restype = ctypes.c_int

        def raw_ctypes(n: int) -> None:
            launch, f, p = lib.cuLaunchKernel, ctypes.c_void_p(int(k4.function)), ctypes.c_void_p(kp)
            for _ in range(n):
                launch(f, 1, 1, 1, 128, 1, 1, 0, 0, p, None)

        run("raw cuLaunchKernel, ctypes (prepacked args)", raw_ctypes)

    # -- tlxc -------------------------------------------------------------------------------------------
    def ours(kernel: LoadedKernel, args: tuple[Any, ...], stream: Any, call: str = "launch",
             g: tuple[int, ...] = (1,)) -> Callable[[int], None]:
        def batch(n: int) -> None:
            launch = kernel.launch if call == "launch" else kernel
            if not args:
                for _ in range(n):
                    launch(g, (), stream)
            else:
                a, b, c, m = args
                for _ in range(n):
                    launch(g, (a, b, c, m), stream)
        return batch

    run("tlxc LoadedKernel.launch, 4 args (DeviceArray), stream=0", ours(k4, (x, y, z, n4), 0))
    run("tlxc LoadedKernel.launch, 4 args (DeviceArray), stream=None", ours(k4, (x, y, z, n4), None))
    run("tlxc LoadedKernel(...), 4 args (DeviceArray), stream=None", ours(k4, (x, y, z, n4), None, "call"))
    run("tlxc LoadedKernel.launch, 0 args, stream=None", ours(k0, (), None))
    run("tlxc LoadedKernel.launch, 4 args, cluster (2,1,1) (cuLaunchKernelEx)", ours(kcl, (x, y, z, n4), 0, g=(2,)))

    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        tx, ty, tz = (torch.zeros(1024, device="cuda") for _ in range(3))
        tsync = torch.cuda.synchronize
        run("tlxc LoadedKernel.launch, 4 args (torch), stream=None", ours(k4, (tx, ty, tz, n4), None), tsync)
        run("tlxc LoadedKernel.launch, 4 args (torch), stream=0", ours(k4, (tx, ty, tz, n4), 0), tsync)
        run("tlxc LoadedKernel(...), 4 args (torch), stream=None", ours(k4, (tx, ty, tz, n4), None, "call"), tsync)
        run("tlxc LoadedKernel.launch, 0 args, stream=None (torch imported)", ours(k0, (), None), tsync)
        try:
            import triton
        except ImportError:
            triton = None
        if triton is not None:
            @triton.jit
            def empty4(a, b, c, n):
                pass

            @triton.jit
            def empty0():
                pass

            def triton4(n: int) -> None:
                g = (1,)
                for _ in range(n):
                    empty4[g](tx, ty, tz, n4)

            def triton0(n: int) -> None:
                g = (1,)
                for _ in range(n):
                    empty0[g]()

            run(f"Triton {triton.__version__}, 4 args (torch)", triton4, tsync)
            run(f"Triton {triton.__version__}, 0 args", triton0, tsync)
        else:
            print("  (Triton not importable: skipped)")
    else:
        torch = None
        print("  (PyTorch with CUDA not importable: torch and Triton variants skipped)")

    results = measure_all(variants, opts.n, opts.batches)
    for name, us in results.items():
        print(f"  {name:<66} {us:7.2f} µs")
    if opts.micro and torch is not None:
        micro(torch, tx)

    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"device": dev.name, "n": opts.n, "batches": opts.batches, "median_us": results}, f, indent=1)


if __name__ == "__main__":
    main()
