"""``compiled.asm`` of a variant the launch path made (its producer wrapped to store the
binary on disk) lists what it can make, and threads that ask one variant for its binary
at once all get it (TLX's test_async_tasks_thread_safety launches from a thread pool)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.codegen.nvptx.toolchain import find_tool


@tlxc.jit
def _twice(x, y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(y + o, tl.load(x + o) * 2)


def _variant(n: int) -> object:
    x = np.ones(n, np.float32)
    return _twice.warmup(x, np.zeros_like(x), N=n, grid=(1,), arch="sm_90a")


def test_available_outputs_of_a_launch_variant() -> None:
    ck = _variant(32)
    assert {"ir", "ptx", "target_ir"} <= set(ck.asm.available())
    assert ("cubin" in ck.asm.available()) == (find_tool("ptxas") is not None)


def test_threads_asking_one_variant_for_its_binary() -> None:
    key = "cubin" if find_tool("ptxas") is not None else "ptx"
    variants = [_variant(64) for _ in range(4)]
    assert all(v is variants[0] for v in variants)  # one cached variant, no output made yet
    assert key not in variants[0].asm
    with ThreadPoolExecutor(max_workers=4) as pool:
        outs = list(pool.map(lambda v: v.asm[key], variants))
    assert all(o is outs[0] for o in outs) and len(outs[0]) > 0
