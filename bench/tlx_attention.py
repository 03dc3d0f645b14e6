"""The warp-specialized FlashAttention example against cuDNN (``scaled_dot_product_attention``
with the cuDNN backend) and PyTorch's flash backend, side by side in one run.

For fp16, head dim 128, batch 4 x 32 heads and each sequence length (4096, 8192 by
default), causal and not, it times ``examples/hopper_fa_ws.py`` in a few configurations
and the two SDPA backends, each as the median of CUDA-event timings over rounds that
interleave the kernels (``tlx_gemm.timed``: each round starts with the next kernel, and no
host launch time is in a figure), checks each result against cuDNN's, and prints TFLOP/s and the
ratio to cuDNN (FLOPs: 4 B H N^2 D, half of it when causal).

    python bench/tlx_attention.py [--seqs 4096 8192] [--json out.json]
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
from tlx_gemm import timed  # noqa: E402  (bench/tlx_gemm.py: CUDA-event timing)

WS_CONFIGS = [  # (BLOCK_M, BLOCK_N, NUM_STAGES, consumers, ping-pong, persistent)
    (128, 128, 2, 2, False, False),
    (128, 128, 2, 2, True, False),
    (128, 128, 2, 2, False, True),
    (128, 128, 2, 2, True, True),
]


def runs(Z: int, H: int, N: int, D: int, causal: bool) -> dict[str, Callable[[], Any]]:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
    scale = D ** -0.5

    def backend(which: Any) -> Callable[[], Any]:
        def run() -> Any:
            with sdpa_kernel(which):
                return sdpa(q, k, v, is_causal=causal, scale=scale)
        return run

    out: dict[str, Callable[[], Any]] = {"cudnn": backend(SDPBackend.CUDNN_ATTENTION),
                                         "flash": backend(SDPBackend.FLASH_ATTENTION)}
    fa = load_example("hopper_fa_ws")
    sms = torch.cuda.get_device_properties("cuda").multi_processor_count
    for bm, bn, st, nc, pp, persistent in WS_CONFIGS:
        o = torch.empty_like(q)

        def run_ws(o=o, bm=bm, bn=bn, st=st, nc=nc, pp=pp, persistent=persistent) -> Any:
            return fa.launch(q, k, v, o, scale, causal, block=(bm, bn), stages=st, consumers=nc, pingpong=pp,
                             num_sms=sms if persistent else None)
        name = f"tlxc ws {bm}x{bn} s{st} c{nc}{' pingpong' if pp else ''}{' persistent' if persistent else ''}"
        out[name] = run_ws
    return out


def bench(Z: int, H: int, N: int, D: int, causal: bool, rounds: int = 7) -> dict[str, Any]:
    fns = runs(Z, H, N, D, causal)
    ref = fns["cudnn"]().float()
    rows: dict[str, Any] = {}
    for name, fn in fns.items():
        try:
            err = (fn().float() - ref).abs().max().item()
        except Exception as e:  # a configuration that does not compile or launch: reported, not fatal
            print(f"  {name}: {type(e).__name__}: {str(e).splitlines()[0]}")
            continue
        rows[name] = {"max_abs_err_vs_cudnn": err, "ms": []}
    names = list(rows)
    for r in range(rounds):  # each round starts with the next kernel: none always follows the same one
        for name in names[r % len(names):] + names[:r % len(names)]:
            rows[name]["ms"].append(timed(fns[name], 5))
    flops = 4 * Z * H * N * N * D / (2 if causal else 1)
    base = statistics.median(rows["cudnn"]["ms"])
    for row in rows.values():
        ms = statistics.median(row.pop("ms"))
        row.update(ms=ms, tflops=flops / ms / 1e9, vs_cudnn=base / ms)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", type=int, nargs="*", default=[4096, 8192])
    ap.add_argument("--json")
    args = ap.parse_args()
    import torch

    results: dict[str, Any] = {"device": torch.cuda.get_device_name(), "attention": {}}
    for n in args.seqs:
        for causal in (False, True):
            rows = bench(4, 32, n, 128, causal)
            key = f"fp16 d128 B4 H32 N{n} {'causal' if causal else 'full'}"
            results["attention"][key] = rows
            print(f"\n{key}")
            for name, r in rows.items():
                print(f"  {name:28s} {r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s  {r['vs_cudnn']:5.2f}x cuDNN"
                      f"  (max |err| {r['max_abs_err_vs_cudnn']:.3g})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
