"""The TLX Hopper GEMM examples against cuBLAS (``torch.matmul``), side by side in one run.

For each dtype (fp16, bf16; fp8 e4m3 against ``torch._scaled_mm``, the warp-specialized
GEMM only) and size (4096^3, 8192^3 by default) it times the TMA + mbarrier GEMM
(``examples/hopper_gemm_tma.py``) in a few tile configurations, the
persistent warp-specialized GEMM (``examples/hopper_gemm_ws.py``), the cp.async
GEMM (``examples/hopper_gemm_cp_async.py``) and ``torch.matmul``, each as the median of
CUDA-event timings over several rounds (kernels interleaved per round, each round starting
with the next one, so that clocks and thermals hit all alike; the timed calls queue behind
an untimed one, so that no host launch time is in a figure), checks each result against
cuBLAS, and prints TFLOP/s and the ratio to cuBLAS.

    python bench/tlx_gemm.py [--sizes 4096 8192] [--dtypes float16 bfloat16 float8_e4m3fn] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from example_modules import load_example  # noqa: E402  (tests/example_modules.py)

import tlxc  # noqa: E402

TMA_CONFIGS = [  # (BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, num_warps)
    (128, 128, 64, 4, 8),
    (128, 256, 64, 3, 8),
    (128, 128, 64, 4, 4),
]
CP_CONFIGS = [(128, 128, 64, 3, 8)]
CLUSTER_CONFIGS = [  # (BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, num_warps): examples/hopper_gemm_cluster.py, 2 CTAs
    (128, 256, 64, 3, 8),
    (128, 128, 64, 4, 8),
]
# examples/hopper_gemm_ws.py: (BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, consumers, GROUP_M, EPI_SPLIT, CLUSTER)
WS_CONFIGS = [
    (128, 256, 64, 3, 2, 8, 1, 1),
    (128, 256, 64, 4, 2, 8, 2, 1),
    (128, 256, 64, 3, 2, 8, 2, 1),
    (128, 256, 64, 4, 2, 8, 2, 2),
    (128, 256, 64, 3, 2, 8, 2, 2),
]
FP8_CONFIGS = [  # the same, for fp8 e4m3 (B given as B^T, a bf16 result)
    (128, 256, 128, 4, 2, 8, 2, 1),
    (128, 256, 128, 3, 2, 8, 1, 1),
    (128, 256, 128, 4, 2, 8, 2, 2),
    (128, 256, 128, 3, 2, 8, 2, 2),
]


def timed(fn: Callable[[], None], reps: int) -> float:
    """Milliseconds per call of ``reps`` back-to-back calls. One untimed call runs first, so
    that the timed ones are queued behind it: the time of the host's launch (which differs
    between providers: torch's dispatch, Triton's, tlxc's) is then not in the figure."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def fp8_runs(M: int, N: int, K: int) -> dict[str, Callable[[], Any]]:
    """fp8 e4m3 GEMM: cuBLAS through ``torch._scaled_mm`` (unit scales, bf16 out) and the
    warp-specialized example with B given K-major."""
    import torch

    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    bt = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)  # B^T, K contiguous
    one = torch.ones((), device="cuda")
    runs: dict[str, Callable[[], Any]] = {
        "cublas": lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}
    ws = load_example("hopper_gemm_ws")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for bm, bn, bk, st, nc, gm, split, cl in FP8_CONFIGS:
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)

        def run_ws(c=c, bm=bm, bn=bn, bk=bk, st=st, nc=nc, gm=gm, split=split, cl=cl) -> Any:
            return ws.launch(a, bt, c, block=(bm, bn, bk), stages=st, consumers=nc, num_sms=sms, group_m=gm,
                             epi_split=split, b_kmajor=True, cluster=cl)
        runs[f"tlxc ws {bm}x{bn}x{bk} s{st} c{nc} g{gm} e{split}" + (f" cluster{cl}" if cl > 1 else "")] = run_ws
    return runs


def gemm_runs(M: int, N: int, K: int, dtype: str) -> dict[str, Callable[[], Any]]:
    import torch

    if dtype == "float8_e4m3fn":
        return fp8_runs(M, N, K)
    dt = getattr(torch, dtype)
    a = torch.randn(M, K, device="cuda", dtype=dt)
    b = torch.randn(K, N, device="cuda", dtype=dt)
    tma = load_example("hopper_gemm_tma").matmul_tma
    cp = load_example("hopper_gemm_cp_async").matmul_cp_async
    runs: dict[str, Callable[[], Any]] = {"cublas": lambda: torch.matmul(a, b)}
    cl = load_example("hopper_gemm_cluster")
    for bm, bn, bk, st, nw in CLUSTER_CONFIGS:
        c = torch.empty(M, N, device="cuda", dtype=dt)

        def run_cl(c=c, bm=bm, bn=bn, bk=bk, st=st, nw=nw) -> Any:
            return cl.launch(a, b, c, block=(bm, bn, bk), stages=st, num_warps=nw)
        runs[f"tlxc cluster2 {bm}x{bn}x{bk} s{st} w{nw}"] = run_cl
    ws = load_example("hopper_gemm_ws")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for bm, bn, bk, st, nc, gm, split, ncl in WS_CONFIGS:
        c = torch.empty(M, N, device="cuda", dtype=dt)

        def run_ws(c=c, bm=bm, bn=bn, bk=bk, st=st, nc=nc, gm=gm, split=split, ncl=ncl) -> Any:
            return ws.launch(a, b, c, block=(bm, bn, bk), stages=st, consumers=nc, num_sms=sms, group_m=gm,
                             epi_split=split, cluster=ncl)
        runs[f"tlxc ws {bm}x{bn}x{bk} s{st} c{nc} g{gm} e{split}" + (f" cluster{ncl}" if ncl > 1 else "")] = run_ws
    for bm, bn, bk, st, nw in TMA_CONFIGS:
        c = torch.empty(M, N, device="cuda", dtype=dt)
        ad = tlxc.TensorDescriptor.from_tensor(a, [bm, bk])
        bd = tlxc.TensorDescriptor.from_tensor(b, [bk, bn])
        cd = tlxc.TensorDescriptor.from_tensor(c, [bm, bn])
        grid = (tlxc.cdiv(M, bm), tlxc.cdiv(N, bn))

        def run(ad=ad, bd=bd, cd=cd, grid=grid, bm=bm, bn=bn, bk=bk, st=st, nw=nw, c=c) -> Any:
            tma[grid](ad, bd, cd, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=st, num_warps=nw)
            return c
        runs[f"tlxc tma {bm}x{bn}x{bk} s{st} w{nw}"] = run
    if dtype == "float16":
        for bm, bn, bk, st, nw in CP_CONFIGS:
            c = torch.empty(M, N, device="cuda", dtype=dt)
            grid = (tlxc.cdiv(M, bm), tlxc.cdiv(N, bn))

            def run_cp(c=c, grid=grid, bm=bm, bn=bn, bk=bk, st=st, nw=nw) -> Any:
                cp[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                         c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_STAGES=st, num_warps=nw)
                return c
            runs[f"tlxc cp.async {bm}x{bn}x{bk} s{st} w{nw}"] = run_cp
    return runs


def bench(M: int, N: int, K: int, dtype: str, rounds: int = 7) -> dict[str, Any]:

    runs = gemm_runs(M, N, K, dtype)
    ref = runs["cublas"]().float()
    out: dict[str, Any] = {}
    for name, fn in runs.items():
        err = (fn().float() - ref).abs().max().item()
        out[name] = {"max_abs_err_vs_cublas": err, "ms": []}
    reps = max(3, int(2e11 / (2 * M * N * K)))
    names = list(runs)
    for r in range(rounds):  # each round starts with the next kernel: none always follows the same one
        for name in names[r % len(names):] + names[:r % len(names)]:
            out[name]["ms"].append(timed(runs[name], reps))
    base = statistics.median(out["cublas"]["ms"])
    for name, row in out.items():
        ms = statistics.median(row.pop("ms"))
        row.update(ms=ms, tflops=2 * M * N * K / ms / 1e9, vs_cublas=base / ms)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--dtypes", nargs="*", default=["float16", "bfloat16", "float8_e4m3fn"])
    ap.add_argument("--json")
    args = ap.parse_args()
    import torch

    results = {"device": torch.cuda.get_device_name(), "gemm": {}}
    for dtype in args.dtypes:
        for s in args.sizes:
            rows = bench(s, s, s, dtype)
            results["gemm"][f"{dtype} {s}^3"] = rows
            print(f"\n{dtype} {s}x{s}x{s}")
            for name, r in rows.items():
                print(f"  {name:34s} {r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s  {r['vs_cublas']:5.2f}x cuBLAS"
                      f"  (max |err| {r['max_abs_err_vs_cublas']:.3g})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
