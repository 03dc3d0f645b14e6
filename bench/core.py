"""Core-language benchmarks on one GPU, tlxc and Triton side by side in one run.

* launch: ``kernel[grid](...)`` of a tiny kernel (4 tensor args + an int), tlxc vs
  Triton, and the parts and floors under them: the hot variant's native guarded launch
  (what a repeated launch ends in), ``launch_trusted`` (what a key hit ends in: the native
  launch of runtime/native_launch.py), the fast path's key alone and ``kernel[grid]``
  alone (no launch), ``LoadedKernel.launch`` (the runtime's launch with its argument checks),
  the raw ``cuLaunchKernel`` through cuda-python with the arguments packed beforehand,
  and -- where ``nvcc`` is on PATH -- the same driver call in a loop of C, which is what
  the host and driver cost without any Python.
  Median microseconds per launch over interleaved batches.
* compile: cold compile of the matmul example (``examples/matmul.py``) by tlxc and of
  the same source by Triton, split into the time before ptxas and ptxas itself.
* bandwidth: the softmax and layer-norm examples vs the same kernels under Triton, and
  the device's copy bandwidth (``torch`` copy), in GB/s. Each figure is the median over
  rounds that alternate the two compilers (each round a ``do_bench`` median), so that
  the drift of a shared machine affects both alike.

    python bench/core.py [--json out.json] [--only launch|compile|bandwidth]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]


def load_source(path: Path, name: str, to_triton: bool) -> Any:
    """Import an example file, as tlxc or (``to_triton``) with Triton as the compiler."""
    text = path.read_text()
    if to_triton:
        text = text.replace("import tlxc.language as tl", "import triton.language as tl")
        text = text.replace("import tlxc\n", "import triton as tlxc\n")
        text = text.replace("from tlxc.tools.", "from triton.tools.")
    return import_text(text, name)


def import_text(text: str, name: str) -> Any:
    """Import ``text`` as the module ``name`` (from a file of its own, so that the
    compilers can read the kernels' source)."""
    d = Path(tempfile.mkdtemp(prefix="tlxcbench-"))
    f = d / f"{name}.py"
    f.write_text(text)
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def report(results: dict[str, Any], json_path: str | None) -> None:
    """Print ``results`` as JSON, and write them to ``json_path`` if given."""
    text = json.dumps(results, indent=1, default=str)
    print(text)
    if json_path:
        Path(json_path).write_text(text)


def median_us(fns: dict[str, Callable[[], None]], n: int = 200, batches: int = 30) -> dict[str, float]:
    """Median µs per call of each function, over ``batches`` rounds of ``n`` calls in
    which the functions take turns (so that a shared host's drift affects all alike)."""
    import torch

    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(batches):
        for name, fn in fns.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - t0) / n * 1e6)
    return {k: statistics.median(v) for k, v in times.items()}


TINY = '''
import tlxc
import tlxc.language as tl

@tlxc.jit
def tiny(a, b, c, d, n, BLOCK: tl.constexpr):
    pass
'''


def bench_launch(results: dict[str, Any]) -> None:
    import torch

    d = Path(tempfile.mkdtemp(prefix="tlxcbench-"))
    (d / "tiny_tlxc.py").write_text(TINY)
    (d / "tiny_triton.py").write_text(TINY.replace("import tlxc.language", "import triton.language")
                                      .replace("import tlxc\n", "import triton as tlxc\n"))
    sys.path.insert(0, str(d))
    import tiny_tlxc  # noqa: E402

    xs = [torch.empty(1024, device="cuda") for _ in range(4)]
    tiny_tlxc.tiny[(1,)](*xs, 1024, BLOCK=128)
    ck = tiny_tlxc.tiny.last_compiled
    lk = ck._loaded
    from tlxc.runtime import driver
    from tlxc.runtime.native_launch import native_launcher

    drv = driver.bindings()
    lk.plan.packer(lk.device.ordinal)((*xs, 1024))
    kp, f = lk.plan.params_address, lk.function
    fns = {"tlxc kernel[grid]": lambda: tiny_tlxc.tiny[(1,)](*xs, 1024, BLOCK=128),
           "tlxc LoadedKernel.launch": lambda: lk.launch((1, 1, 1), (*xs, 1024)),
           "raw cuLaunchKernel, cuda-python": lambda: drv.cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, None, kp, 0)}
    ptrs = [x.data_ptr() for x in xs]
    fns["tlxc launch_trusted"] = lambda: lk.launch_trusted((1, 1, 1), None, *ptrs, 1024)
    tiny_tlxc.tiny[(1,)](*xs, 1024, BLOCK=128)  # a trusted hit: the variant is hot
    hot = tiny_tlxc.tiny._fast.hot[0]
    if hot is not None:  # the variant's native guarded launch alone (options not given)
        from tlxc.kernels.launch import _MISSING
        from tlxc.kernels.options import KEY_OPTIONS

        fns["tlxc hot guarded launch"] = lambda: hot((1, 1, 1), None, *xs, 1024, 128, *[_MISSING] * len(KEY_OPTIONS))
    fns["tlxc kernel[grid] subscript only"] = lambda: tiny_tlxc.tiny[(1,)]
    speculative = tiny_tlxc.tiny._fast_fns[2] if tiny_tlxc.tiny._fast_fns else None
    if speculative is not None:  # the fast path's key, without the launch (no GPU work)
        fns["tlxc fast-path key only"] = lambda: speculative(*xs, 1024)
    native = native_launcher()
    if native is not None:
        fa = int(f)
        fns["raw cuLaunchKernel, tlxc native builtin"] = lambda: native(fa, 1, 1, 1, 128, 1, 1, 0, 0, kp)
    try:
        import tiny_triton

        tiny_triton.tiny[(1,)](*xs, 1024, BLOCK=128)
        fns["triton kernel[grid]"] = lambda: tiny_triton.tiny[(1,)](*xs, 1024, BLOCK=128)
    except Exception as e:  # pragma: no cover - reported, not fatal
        fns["triton kernel[grid]"] = f"failed: {e}"  # type: ignore[assignment]
    row: dict[str, Any] = median_us({k: v for k, v in fns.items() if callable(v)})
    row.update((k, v) for k, v in fns.items() if not callable(v))
    c_floor = c_launch_floor(d)
    if c_floor is not None:
        row["raw cuLaunchKernel, C loop"] = c_floor
    results["launch_us"] = row


C_LAUNCH = r"""
#include <cuda.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void) {
    const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry tiny(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, .param .u32 n) { ret; }\n";
    CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction fn; CUdeviceptr p;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return 1;
    if (cuModuleLoadData(&mod, ptx) || cuModuleGetFunction(&fn, mod, "tiny") || cuMemAlloc(&p, 4096)) return 1;
    unsigned n = 1024; void *args[] = {&p, &p, &p, &p, &n};
    double best[30];
    for (int b = 0; b < 30; b++) {
        cuCtxSynchronize();
        double t0 = now();
        for (int i = 0; i < 200; i++) cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, 0, args, 0);
        best[b] = (now() - t0) / 200 * 1e6;
    }
    for (int i = 0; i < 30; i++)
        for (int j = i + 1; j < 30; j++)
            if (best[j] < best[i]) { double t = best[i]; best[i] = best[j]; best[j] = t; }
    printf("%f\n", best[15]);
    return 0;
}
"""


def c_launch_floor(workdir: Path) -> float | None:
    """The median µs of ``cuLaunchKernel`` called in a C loop (30 batches of 200), or None
    without nvcc."""
    import shutil

    nvcc = shutil.which("nvcc") or (shutil.which("nvcc", path="/usr/local/cuda/bin"))
    if nvcc is None:
        return None
    src, exe = workdir / "launch.c", workdir / "launch"
    src.write_text(C_LAUNCH)
    try:
        subprocess.run([nvcc, "-O2", "-x", "c", str(src), "-o", str(exe), "-lcuda"], check=True, capture_output=True)
        return float(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
    except (subprocess.CalledProcessError, ValueError):
        return None


# What Triton specializes the warmup launch below on (M = N = K = 512, row-major): sizes and
# leading strides divisible by 16, unit strides equal to 1 -- so both compile the same kernel.
MATMUL_SIG = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1"
MATMUL_CONSTS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_SIZE_M": 8}

COLD_TLXC = f'''
import time, sys
t0 = time.perf_counter()
sys.path.insert(0, "{ROOT / 'examples'}")
import matmul
k = matmul.matmul_kernel.compile("{MATMUL_SIG}", {MATMUL_CONSTS!r}, arch="sm_90a")
k.asm["cubin"]
total = time.perf_counter() - t0
import json
print(json.dumps({{"total_in_process": total, **k.timings}}))
'''


def byte_compile() -> None:
    """Write the .pyc files of tlxc, as ``pip install`` does. A source checkout run with
    PYTHONDONTWRITEBYTECODE (the device machine's default) would otherwise byte-compile
    ~140 modules inside the first compile a cold benchmark times (0.4 s here), which no
    installed tlxc and no installed Triton pays."""
    import compileall

    for pkg in ("tlxc", "runtime"):
        compileall.compile_dir(str(ROOT / pkg), quiet=1)


def bench_compile(results: dict[str, Any]) -> None:
    byte_compile()
    out = subprocess.run([sys.executable, "-c", COLD_TLXC], capture_output=True, text=True, env=dict(os.environ))
    cold = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {"error": out.stderr[-2000:]}
    # warm process: a fresh kernel object each time, so nothing is cached
    import tlxc

    mm = load_source(ROOT / "examples" / "matmul.py", "mm_tlxc", False)
    runs = []
    for _ in range(5):
        fn = tlxc.jit(mm.matmul_kernel.fn)
        t0 = time.perf_counter()
        ck = fn.compile(MATMUL_SIG, MATMUL_CONSTS, arch="sm_90a")
        ck.asm["cubin"]
        total = time.perf_counter() - t0
        ptxas = ck.timings.get("ptxas", 0.0)
        runs.append((total - ptxas, ptxas, total))
    tl_before, tl_ptxas, tl_total = (statistics.median(r[i] for r in runs) for i in range(3))
    row: dict[str, Any] = {"tlxc_cold_process": cold, "tlxc_before_ptxas_s": tl_before, "tlxc_ptxas_s": tl_ptxas,
                           "tlxc_total_s": tl_total}
    try:
        import torch
        import triton

        tmm = load_source(ROOT / "examples" / "matmul.py", "mm_triton", True)
        M = N = K = 512
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        truns = []
        for i in range(5):
            os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tritoncache-")
            fn = triton.jit(tmm.matmul_kernel.fn)
            t0 = time.perf_counter()
            ck = fn.warmup(a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                           c.stride(1), grid=(1,), **MATMUL_CONSTS)
            total = time.perf_counter() - t0
            from tlxc.codegen.nvptx.toolchain import ptxas

            ptx = ck.asm["ptx"]
            t1 = time.perf_counter()
            ptxas(ptx, "sm_90a")
            truns.append((total - (time.perf_counter() - t1), time.perf_counter() - t1, total))
        tr_before, tr_ptxas, tr_total = (statistics.median(r[i] for r in truns) for i in range(3))
        row.update(triton_before_ptxas_s=tr_before, triton_ptxas_s=tr_ptxas, triton_total_s=tr_total,
                   ratio_before_ptxas=tl_before / tr_before, ratio_total=tl_total / tr_total)
    except Exception as e:  # pragma: no cover
        row["triton"] = f"failed: {type(e).__name__}: {e}"
    results["compile"] = row


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def side_by_side(a: Callable[[], None], b: Callable[[], None], rounds: int = 5) -> tuple[float, float]:
    """Median ms of ``a`` and of ``b`` over ``rounds`` alternating ``do_bench`` medians."""
    from triton.testing import do_bench

    ta, tb = [], []
    for _ in range(rounds):
        ta.append(do_bench(a, return_mode="median"))
        tb.append(do_bench(b, return_mode="median"))
    return statistics.median(ta), statistics.median(tb)


def bench_bandwidth(results: dict[str, Any]) -> None:
    import torch
    import triton
    from triton.testing import do_bench

    import tlxc

    sm = load_source(ROOT / "examples" / "fused_softmax.py", "sm_tlxc", False)
    tsm = load_source(ROOT / "examples" / "fused_softmax.py", "sm_triton", True)
    ln = load_source(ROOT / "examples" / "layer_norm.py", "ln_tlxc", False)
    tln = load_source(ROOT / "examples" / "layer_norm.py", "ln_triton", True)
    rows = []
    for M, N in ((4096, 1024), (4096, 4096), (4096, 8192), (16384, 2048)):
        for dtype in (torch.float16, torch.float32):
            x = torch.randn(M, N, device="cuda", dtype=dtype)
            y = torch.empty_like(x)
            nbytes = 2 * x.numel() * x.element_size()
            copy = do_bench(lambda: y.copy_(x), return_mode="median")
            block = triton.next_power_of_2(N)
            f_tl = lambda: sm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), M, N, BLOCK=block)  # noqa: E731
            f_tr = lambda: tsm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), M, N, BLOCK=block,  # noqa: E731
                                                     num_warps=8 if block >= 2048 else 4)
            f_tl8 = lambda: sm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), M, N, BLOCK=block,  # noqa: E731
                                                     num_warps=8 if block >= 2048 else 4)
            f_tl8()
            ok = torch.allclose(y.float(), torch.softmax(x.float(), 1), atol=1e-2)
            t_tl, t_tr = side_by_side(f_tl8, f_tr)
            rows.append({"kernel": "softmax", "M": M, "N": N, "dtype": str(dtype), "tlxc_GBps": gbps(nbytes, t_tl),
                         "triton_GBps": gbps(nbytes, t_tr), "copy_GBps": gbps(nbytes, copy),
                         "tlxc/triton": t_tr / t_tl, "tlxc/copy": copy / t_tl, "correct": ok,
                         "tlxc_4warps_GBps": gbps(nbytes, do_bench(f_tl, return_mode="median"))})
            if dtype == torch.float32:
                w, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
                mean, rstd = torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
                blk = min(4096, block)
                nw = min(max(blk // 256, 1), 8)
                g_tl = lambda: ln.layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5,  # noqa: E731
                                                        BLOCK=blk, num_warps=nw)
                g_tr = lambda: tln.layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), N, 1e-5,  # noqa: E731
                                                         BLOCK=blk, num_warps=nw)
                g_tl()
                ok = torch.allclose(y, torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5), atol=1e-3)
                t_tl, t_tr = side_by_side(g_tl, g_tr)
                rows.append({"kernel": "layer_norm", "M": M, "N": N, "dtype": str(dtype),
                             "tlxc_GBps": gbps(nbytes, t_tl), "triton_GBps": gbps(nbytes, t_tr),
                             "copy_GBps": gbps(nbytes, copy), "tlxc/triton": t_tr / t_tl, "tlxc/copy": copy / t_tl,
                             "correct": ok})
    results["bandwidth"] = rows
    del tlxc


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--only", choices=["launch", "compile", "bandwidth"])
    args = p.parse_args()
    results: dict[str, Any] = {}
    for name, fn in (("launch", bench_launch), ("compile", bench_compile), ("bandwidth", bench_bandwidth)):
        if args.only in (None, name):
            try:
                fn(results)
            except Exception as e:
                import traceback

                results[name] = f"failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
    report(results, args.json)


if __name__ == "__main__":
    main()
