"""``tl.dot`` kernels on one GPU: the same source compiled by tlxc and by Triton, side by side
in one run, with cuBLAS / cuDNN (through torch) as the anchor.

* matmul: ``examples/matmul.py`` in fp16 and bf16 at 4096³ and 8192³, three tile configs
  (BLOCK_M x BLOCK_N x BLOCK_K, num_warps, num_stages), in TFLOP/s, and tlxc's ratio to
  Triton and to ``torch.matmul``; and ``examples/persistent_matmul.py`` (TMA descriptors,
  one program per SM, ``tl.range(flatten=True)``) at two configs, rows marked "persistent";
* attention: ``examples/attention.py`` forward, fp16, head dim 128, batch 4 x 32 heads,
  4k and 8k tokens, causal and not, in TFLOP/s, vs Triton and torch's
  ``scaled_dot_product_attention`` with the cuDNN backend;
* compile: cold compile (a fresh cache) of one matmul config by each compiler, in seconds.

Each figure is the median over rounds that alternate the providers (each round a
``do_bench``-style median of CUDA-event timings, and each starting with the next
provider), so that a shared machine's drift and the clocks after a heavy kernel affect all
alike. The timed calls are queued behind an untimed one, so the host's launch time
(torch's dispatch, Triton's launcher, tlxc's) is not in the figures. Every tlxc result is
checked against torch before it is timed.

    python bench/dot.py [--only matmul|attention|compile] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core import ROOT, byte_compile, load_source, report  # noqa: E402

MATMUL_CONFIGS = [(128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (64, 128, 64, 4, 4)]
# examples/persistent_matmul.py: TMA descriptors, one program per SM, tl.range(flatten=True)
PERSISTENT_CONFIGS = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4)]
ATTN_CONFIG = (128, 64, 8, 3)  # BLOCK_M, BLOCK_N, num_warps, num_stages


def event_ms(fn: Callable[[], None], reps: int = 20) -> float:
    """Median milliseconds of ``fn`` by CUDA events, over ``reps`` calls after a warm-up.
    The calls are queued behind an untimed one and each other (no synchronization between
    them), so that the host's launch time -- torch's dispatch, Triton's launcher, tlxc's --
    is not part of the figure, only the kernel's."""
    import torch

    fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    fn()  # in flight while the timed calls are queued
    for s, e in events:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def alternate(fns: dict[str, Callable[[], None]], rounds: int) -> dict[str, float]:
    """Median of each provider over ``rounds`` rounds; each round starts with the next
    provider, so that none always runs right after the same one (after cuDNN's kernels, the
    clocks are lower for a while)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    order = list(fns)
    for r in range(rounds):
        for k in order[r % len(order):] + order[:r % len(order)]:
            times[k].append(event_ms(fns[k]))
    return {k: statistics.median(v) for k, v in times.items()}


def measure(row: dict[str, Any], fns: dict[str, Callable[[], Any]], flops: float, error: Callable[[Any], float],
            limit: float, rounds: int) -> dict[str, Any]:
    """Run tlxc once and check it (``error`` of what it returned, at most ``limit``), then
    time every provider in ``fns`` in alternating rounds: the row gets tlxc's error, each
    provider's TFLOP/s and tlxc's ratio to each other one -- or the error that stopped it
    (the other rows go on). Printed, and returned."""
    ms: dict[str, float] = {}
    try:
        err = error(fns["tlxc"]())
        row["tlxc max err"] = round(err, 4)
        if err <= limit:
            ms = alternate(fns, rounds)
        else:
            row["error"] = f"wrong result (max error {err})"
    except Exception as e:  # reported in the row
        row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
    for k, v in ms.items():
        row[f"{k} TFLOP/s"] = round(flops / v / 1e9, 1)
    for k in ms:
        if k != "tlxc":
            row[f"tlxc/{k}"] = round(ms[k] / ms["tlxc"], 3)
    print(row, flush=True)
    return row


def matmul_launcher(mod: Any, a: Any, b: Any, c: Any, cfg: tuple[int, ...]) -> Callable[[], None]:
    bm, bn, bk, w, s = cfg
    M, K = a.shape
    N = b.shape[1]
    grid = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)

    def run() -> None:
        mod.matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=8,
                                num_warps=w, num_stages=s)
    return run


def persistent_launcher(mod: Any, a: Any, b: Any, c: Any, cfg: tuple[int, ...]) -> Callable[[], None]:
    import torch

    bm, bn, bk, w, s = cfg
    M, K = a.shape
    N = b.shape[1]
    sms = torch.cuda.get_device_properties("cuda").multi_processor_count
    grid = (min(sms, ((M + bm - 1) // bm) * ((N + bn - 1) // bn)),)
    descs = mod.descriptors(a, b, c, (bm, bn, bk))

    def run() -> None:
        mod.persistent_matmul_kernel[grid](*descs, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=8,
                                           NUM_SMS=grid[0], num_warps=w, num_stages=s)
    return run


def bench_matmul(results: dict[str, Any], quick: bool) -> None:
    import torch

    examples = {"": (load_source(ROOT / "examples" / "matmul.py", "matmul_tlxc", False),
                     load_source(ROOT / "examples" / "matmul.py", "matmul_triton", True), matmul_launcher,
                     MATMUL_CONFIGS),
                "persistent ": (load_source(ROOT / "examples" / "persistent_matmul.py", "pmatmul_tlxc", False),
                                load_source(ROOT / "examples" / "persistent_matmul.py", "pmatmul_triton", True),
                                persistent_launcher, PERSISTENT_CONFIGS)}
    rows = []
    sizes = [4096] if quick else [4096, 8192]
    for dtype in (torch.float16, torch.bfloat16):
        for n in sizes:
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            b = torch.randn(n, n, device="cuda", dtype=dtype)
            ref = torch.matmul(a, b)
            flops = 2 * n ** 3
            for kind, (ours, theirs, launcher, configs) in examples.items():
                for cfg in configs:
                    c1, c2 = torch.empty_like(ref), torch.empty_like(ref)
                    fns = {"tlxc": launcher(ours, a, b, c1, cfg), "triton": launcher(theirs, a, b, c2, cfg),
                           "cublas": lambda: torch.matmul(a, b)}
                    row: dict[str, Any] = {"dtype": str(dtype).split(".")[-1], "n": n,
                                           "config": kind + "x".join(map(str, cfg[:3])) + f" w{cfg[3]} s{cfg[4]}"}
                    rows.append(measure(row, fns, flops,
                                        lambda _, c1=c1: (c1.float() - ref.float()).abs().max().item(),
                                        0.05 * ref.float().abs().max().item(), 3 if quick else 5))
    results["matmul"] = rows


def bench_attention(results: dict[str, Any], quick: bool) -> None:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ours = load_source(ROOT / "examples" / "attention.py", "attention_tlxc", False)
    theirs = load_source(ROOT / "examples" / "attention.py", "attention_triton", True)
    bm, bn, w, s = ATTN_CONFIG
    rows = []
    Z, H, D = 4, 32, 128
    for n_ctx in ([4096] if quick else [4096, 8192]):
        for causal in (False, True):
            q, k, v = (torch.randn(Z, H, n_ctx, D, device="cuda", dtype=torch.float16) for _ in range(3))
            scale = D ** -0.5

            def launcher(mod: Any, o: Any, m: Any) -> Callable[[], None]:
                grid = ((n_ctx + bm - 1) // bm, Z * H)

                def run() -> None:
                    mod.attn_fwd[grid](q, k, v, o, m, scale, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
                                       *o.stride()[:3], H, n_ctx, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal,
                                       num_warps=w, num_stages=s)
                return run

            o1, o2 = torch.empty_like(q), torch.empty_like(q)
            m1, m2 = (torch.empty(Z, H, n_ctx, device="cuda", dtype=torch.float32) for _ in range(2))

            def cudnn() -> None:
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
            fns = {"tlxc": launcher(ours, o1, m1), "triton": launcher(theirs, o2, m2), "cudnn": cudnn}
            flops = 4 * Z * H * n_ctx * n_ctx * D * (0.5 if causal else 1.0)
            row: dict[str, Any] = {"n_ctx": n_ctx, "causal": causal, "config": f"{bm}x{bn} w{w} s{s}"}

            def error(_: Any, o1: Any = o1) -> float:
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
                return (o1.float() - ref.float()).abs().max().item()
            rows.append(measure(row, fns, flops, error, 0.02, 3 if quick else 5))
    results["attention"] = rows


def bench_compile(results: dict[str, Any]) -> None:
    """Cold compile of one matmul config, each compiler in a fresh process with an empty
    cache (the first launch, minus the launch itself, is what a user waits for)."""
    import subprocess

    byte_compile()
    script = '''
import os, sys, time, torch
sys.path.insert(0, {bench!r})
from core import ROOT, load_source
mod = load_source(ROOT / "examples" / "matmul.py", "mm", {triton})
a = torch.randn(512, 512, device="cuda", dtype=torch.float16); b = torch.randn_like(a); c = torch.empty_like(a)
t0 = time.perf_counter()
mod.matmul_kernel[(16,)](a, b, c, 512, 512, 512, 512, 1, 512, 1, 512, 1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                         GROUP_SIZE_M=8, num_warps=4, num_stages=3)
torch.cuda.synchronize()
print(time.perf_counter() - t0)
'''
    row = {}
    for name, triton in (("tlxc", False), ("triton", True)):
        times = []
        for _ in range(3):
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, TLXC_CACHE_DIR=cache, TRITON_CACHE_DIR=cache)
                out = subprocess.run([sys.executable, "-c", script.format(bench=str(Path(__file__).parent),
                                                                          triton=triton)],
                                     env=env, capture_output=True, text=True)
                if out.returncode:
                    row[name] = f"failed: {out.stderr[-400:]}"
                    break
                times.append(float(out.stdout.strip().splitlines()[-1]))
        if times:
            row[f"{name} s"] = round(statistics.median(times), 3)
    if "tlxc s" in row and "triton s" in row:
        row["tlxc/triton time"] = round(row["tlxc s"] / row["triton s"], 3)
    results["compile"] = row
    print(row, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["matmul", "attention", "compile"])
    ap.add_argument("--quick", action="store_true", help="4096 only, fewer rounds")
    ap.add_argument("--json")
    args = ap.parse_args()
    results: dict[str, Any] = {}
    t0 = time.time()
    if args.only in (None, "matmul"):
        bench_matmul(results, args.quick)
    if args.only in (None, "attention"):
        bench_attention(results, args.quick)
    if args.only in (None, "compile"):
        bench_compile(results)
    results["seconds"] = round(time.time() - t0, 1)
    report(results, args.json)


if __name__ == "__main__":
    main()
