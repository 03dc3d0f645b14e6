"""Triton's own tutorials on one GPU, compiled by tlxc and by Triton side by side in one run.

The tutorial files are Triton's (``python/tutorials`` of a Triton checkout, which this
repository does not ship): each is imported twice, once as it is and once with the module
name swapped to tlxc as a new user would, with the benchmark runs at the bottom of the
file dropped. The same host wrapper of the tutorial then runs the kernel under each
compiler; each one autotunes over the tutorial's own configs. (For Triton, the newer
``target.is_cuda_backend()`` spelling is read as ``target.backend == "cuda"``, so that
tutorials a little newer than the installed Triton still load.)

* 03 matrix multiplication: ``matmul(a, b)``, fp16, 4096³ and 8192³;
* 06 fused attention, forward: ``attention(q, k, v, causal, sm_scale)``, fp16, head dim
  128, batch 4 x 32 heads, 4k and 8k tokens, causal and not;
* 09 persistent matmul: ``matmul``, ``matmul_persistent``, ``matmul_tma``,
  ``matmul_tma_persistent`` and ``matmul_descriptor_persistent``, fp16, 8192³.

Figures are TFLOP/s and tlxc's ratio to Triton: medians over rounds that alternate the
two (``bench/dot.py``'s ``alternate``). Every tlxc result is checked against torch
before it is timed; a failure is reported in its row and the others go on.

    python bench/tutorials.py --dir PATH/TO/triton/python/tutorials [--only 03|06|09] [--json out.json]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core import import_text, report  # noqa: E402
from dot import measure  # noqa: E402

FILES = {"03": "03-matrix-multiplication.py", "06": "06-fused-attention.py", "09": "09-persistent-matmul.py"}


def to_tlxc(text: str) -> str:
    """The tutorial as a new user runs it under tlxc: the module name swapped."""
    text = re.sub(r"^(\s*)import triton\b", r"\1import tlxc", text, flags=re.M)
    text = re.sub(r"^(\s*)from triton\b", r"\1from tlxc", text, flags=re.M)
    text = re.sub(r"(?<![\w.])triton\.(?=[A-Za-z_])", "tlxc.", text)
    # Triton's native library (tutorial 09 reaches cuBLAS through it) is not the compiler
    return text.replace("tlxc._C.", "triton._C.")


def load(path: Path, name: str, compiler: str) -> Any:
    """Import a tutorial (its top-level benchmark ``.run(...)`` calls dropped) for ``compiler``."""
    text = re.sub(r"^(\w+\.run\(.*\))\s*$", r"pass  # \1", path.read_text(), flags=re.M)
    if compiler == "tlxc":
        text = to_tlxc(text)
    else:  # tutorials newer than the installed Triton ask the target in a newer way
        for kind in ("cuda", "hip"):
            text = text.replace(f".is_{kind}_backend()", f'.backend == "{kind}"')
    return import_text(text, name)


def _off(ref: Any) -> Callable[[Any], float]:
    """The largest difference of a tutorial's result from ``ref``."""
    return lambda out: (out.float() - ref.float()).abs().max().item()


def bench_03(mods: dict[str, Any], rounds: int) -> list[dict[str, Any]]:
    import torch

    rows = []
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        fns = {k: (lambda m=m: m.matmul(a, b)) for k, m in mods.items()}
        rows.append(measure({"tutorial": "03 matmul", "n": n}, fns, 2 * n ** 3, _off(torch.matmul(a, b)), 0.5, rounds))
    return rows


def bench_06(mods: dict[str, Any], rounds: int) -> list[dict[str, Any]]:
    import torch

    rows = []
    Z, H, D = 4, 32, 128
    for n_ctx in (4096, 8192):
        for causal in (False, True):
            q, k, v = (torch.randn(Z, H, n_ctx, D, device="cuda", dtype=torch.float16) for _ in range(3))
            scale = D ** -0.5
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
            fns = {name: (lambda m=m: m.attention(q, k, v, causal, scale, False)) for name, m in mods.items()}
            flops = 4 * Z * H * n_ctx * n_ctx * D * (0.5 if causal else 1.0)
            rows.append(measure({"tutorial": "06 attention fwd", "n_ctx": n_ctx, "causal": causal}, fns, flops,
                                _off(ref), 0.02, rounds))
    return rows


def bench_09(mods: dict[str, Any], rounds: int) -> list[dict[str, Any]]:
    import torch

    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    ref = torch.matmul(a, b)
    bt = b.T.contiguous()  # the tutorial's layout: B stored N x K; its pointer kernels take bt.T
    rows = []
    variants: dict[str, Callable[[Any], Any]] = {
        "matmul": lambda m: m.matmul(a, bt.T),
        "matmul_persistent": lambda m: m.matmul_persistent(a, bt.T),
        "matmul_tma": lambda m: m.matmul_tma(a, bt, False),
        "matmul_tma_persistent": lambda m: m.matmul_tma_persistent(a, bt, False),
        "matmul_descriptor_persistent": lambda m: m.matmul_descriptor_persistent(a, bt, False),
    }
    for name, call in variants.items():
        fns = {k: (lambda m=m, call=call: call(m)) for k, m in mods.items()}
        rows.append(measure({"tutorial": f"09 {name}", "n": n}, fns, 2 * n ** 3, _off(ref), 0.5, rounds))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="Triton's python/tutorials folder")
    ap.add_argument("--only", choices=sorted(FILES))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    results: dict[str, Any] = {}
    for key, fname in FILES.items():
        if args.only and key != args.only:
            continue
        path = Path(args.dir) / fname
        mods = {c: load(path, f"t{key}_{c}", c) for c in ("tlxc", "triton")}
        results[key] = globals()[f"bench_{key}"](mods, args.rounds)
    report(results, args.json)


if __name__ == "__main__":
    main()
