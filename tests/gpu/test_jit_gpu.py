"""The JIT layer on a real GPU: clusters (``ctas_per_cga``) and cooperative launches reach
``cuLaunchKernelEx``, ``driver.active`` reports the device, a second process loads its
variant from the on-disk cache, and autotuning with CUDA graphs times configs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tlxc.runtime import driver

import tlxc
import tlxc.language as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu


@tlxc.jit
def ids(out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, offs + tl.program_id(0) * 0, mask=offs < n)


@pytest.mark.parametrize("options", [{"ctas_per_cga": (2, 1, 1)}, {"ctas_per_cga": (4, 1, 1)},
                                     {"launch_cooperative_grid": True}])
def test_cluster_and_cooperative_launches(options: dict) -> None:
    n = 8 * 128
    out = torch.full((n,), -1, dtype=torch.int32, device="cuda")
    ck = ids[(8,)](out, n, BLOCK=128, **options)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.arange(n, dtype=torch.int32))
    lk = ck._loaded
    assert lk.cluster_dims == tuple(options.get("ctas_per_cga", (1, 1, 1))) or lk.cluster_dims is None
    assert lk.cooperative == options.get("launch_cooperative_grid", False)


def test_driver_active_on_the_gpu() -> None:
    target = driver.active.get_current_target()
    cap = torch.cuda.get_device_capability()
    assert (target.backend, target.arch, target.warp_size) == ("cuda", cap[0] * 10 + cap[1], 32)
    props = driver.active.utils.get_device_properties(torch.cuda.current_device())
    assert props["multiprocessor_count"] == torch.cuda.get_device_properties(0).multi_processor_count
    assert props["max_shared_mem"] >= 100 * 1024 and props["warpSize"] == 32
    assert driver.active.get_active_torch_device() == torch.device("cuda", 0)


WORKER = textwrap.dedent('''
    import json, sys, torch
    import tlxc.compiler
    compiles = []
    original = tlxc.compiler.compile_kernel
    def counting(kernel, *args, **kwargs):
        compiles.append(kernel.__name__)
        return original(kernel, *args, **kwargs)
    tlxc.compiler.compile_kernel = counting
    sys.path.insert(0, sys.argv[1])
    import gpu_kernels as m
    out = torch.zeros(1000, device="cuda")
    ck = m.fill[(8,)](out, 1000, 2.5, BLOCK=128)
    torch.cuda.synchronize()
    print(json.dumps({"compiles": compiles, "from_disk": getattr(ck, "from_disk", False),
                      "ok": bool((out == 2.5).all().item())}))
''')

KERNELS = '''
import tlxc
import tlxc.language as tl


@tlxc.jit
def fill(out, n, v, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.zeros([BLOCK], tl.float32) + v, mask=offs < n)
'''


def test_a_second_process_runs_the_variant_from_disk(tmp_path: Path) -> None:
    (tmp_path / "worker.py").write_text(WORKER)
    (tmp_path / "gpu_kernels.py").write_text(KERNELS)
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, TLXC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(root))
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, str(tmp_path / "worker.py"), str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert runs[0] == {"compiles": ["fill"], "from_disk": False, "ok": True}
    assert runs[1] == {"compiles": [], "from_disk": True, "ok": True}


def test_autotune_with_cuda_graphs() -> None:
    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 128}), tlxc.Config({"BLOCK": 512})], key=["n"],
                          use_cuda_graph=True)(ids)
    n = 1 << 16
    out = torch.zeros(n, dtype=torch.int32, device="cuda")
    tuned[lambda META: (tlxc.cdiv(n, META["BLOCK"]),)](out, n)
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.arange(n, dtype=torch.int32))
    assert all(0 < t[0] < 1.0 for t in tuned.configs_timings.values())  # milliseconds per launch
    ms = tlxc.testing.do_bench_cudagraph(lambda: ids[(n // 128,)](out, n, BLOCK=128), rep=5)
    assert 0 < ms < 1.0

