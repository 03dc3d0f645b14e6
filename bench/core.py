"""Core-language benchmarks on one GPU, tlxc and Triton side by side in one run.

* launch: ``kernel[grid](...)`` of a tiny kernel (4 tensor args + an int), tlxc vs
  Triton vs the raw driver call (``LoadedKernel.launch`` with packed args is the floor);
  median microseconds per launch over interleaved batches.
* compile: cold compile of the matmul example (``examples/matmul.py``) by tlxc and of
  the same source by Triton, split into the time before ptxas and ptxas itself.
* bandwidth: the softmax and layer-norm examples vs the same kernels under Triton, and
  the device's copy bandwidth (``torch`` copy), in GB/s.

    python bench/core.py [--json out.json]
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
    d = Path(tempfile.mkdtemp(prefix="tlxcbench-"))
    f = d / f"{name}.py"
    f.write_text(text)
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def median_us(fn: Callable[[], None], n: int = 200, batches: int = 30) -> float:
    import torch

    times = []
    for _ in range(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


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
    row = {"tlxc kernel[grid]": median_us(lambda: tiny_tlxc.tiny[(1,)](*xs, 1024, BLOCK=128)),
           "tlxc LoadedKernel.launch": median_us(lambda: lk.launch((1, 1, 1), (*xs, 1024)))}
    try:
        import tiny_triton

        tiny_triton.tiny[(1,)](*xs, 1024, BLOCK=128)
        row["triton kernel[grid]"] = median_us(lambda: tiny_triton.tiny[(1,)](*xs, 1024, BLOCK=128))
    except Exception as e:  # pragma: no cover - reported, not fatal
        row["triton kernel[grid]"] = f"failed: {e}"
    results["launch_us"] = row


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


def bench_compile(results: dict[str, Any]) -> None:
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
            copy = do_bench(lambda: y.copy_(x))
            block = triton.next_power_of_2(N)
            f_tl = lambda: sm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), M, N, BLOCK=block)  # noqa: E731
            f_tr = lambda: tsm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), M, N, BLOCK=block,  # noqa: E731
                                                     num_warps=8 if block >= 2048 else 4)
            f_tl8 = lambda: sm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), M, N, BLOCK=block,  # noqa: E731
                                                     num_warps=8 if block >= 2048 else 4)
            f_tl8()
            ok = torch.allclose(y.float(), torch.softmax(x.float(), 1), atol=1e-2)
            t_tl, t_tr = do_bench(f_tl8), do_bench(f_tr)
            rows.append({"kernel": "softmax", "M": M, "N": N, "dtype": str(dtype), "tlxc_GBps": gbps(nbytes, t_tl),
                         "triton_GBps": gbps(nbytes, t_tr), "copy_GBps": gbps(nbytes, copy),
                         "tlxc/triton": t_tr / t_tl, "tlxc/copy": copy / t_tl, "correct": ok,
                         "tlxc_4warps_GBps": gbps(nbytes, do_bench(f_tl))})
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
                t_tl, t_tr = do_bench(g_tl), do_bench(g_tr)
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
    text = json.dumps(results, indent=1, default=str)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
