"""The generated launch function, on the CPU: the driver calls are replaced by the
``fake_driver`` fixture, which records each launch's grid, stream and packed arguments."""

from __future__ import annotations

import struct
import threading
from pathlib import Path
from typing import Any as FakeDriver  # the fixture's class lives in tests/conftest.py

import pytest
from test_runtime_args import FakeCudaArray
from tlxc.runtime import CudaError, KernelCache, LaunchError, LoadedKernel

SIG = ["*fp32:16", "*fp32:16", "i32"]


def kernel(**kw: object) -> LoadedKernel:
    return LoadedKernel(b"\x7fELF fake cubin", "k", SIG, arg_names=["x", "y", "n"], **kw)  # type: ignore[arg-type]


def test_launch_packs_and_launches(fake_driver: FakeDriver) -> None:
    k = kernel()
    x, y = FakeCudaArray(0x10000), FakeCudaArray(0x20000)
    k((3,), (x, y, 100))
    k((2, 5), (x, y, 7), stream=0x55)
    k[(4, 1, 2)](x, y, 9)
    assert [(g, s) for g, s, _ in fake_driver.launches] == [((3, 1, 1), 0), ((2, 5, 1), 0x55), ((4, 1, 2), 0)]
    assert fake_driver.launches[0][2] == struct.pack("<QQi", 0x10000, 0x20000, 100)
    assert fake_driver.launches[1][2] == struct.pack("<QQi", 0x10000, 0x20000, 7)
    assert "def launch(grid, args, stream=None)" in k.launch_source


def test_grid_forms(fake_driver: FakeDriver) -> None:
    k = kernel(metadata={"constants": {"BLOCK": 64}})
    x = FakeCudaArray(0x10000)
    k(7, (x, x, 1))
    k([2, 3], (x, x, 1))
    k(lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],), (x, x, 1000))
    assert [g for g, _, _ in fake_driver.launches] == [(7, 1, 1), (2, 3, 1), (16, 1, 1)]
    k((0,), (x, x, 1))  # an empty grid launches nothing, as in Triton (the fast path leaves it to the driver)
    k((4, 0), (x, x, 1))
    assert len(fake_driver.launches) == 3
    k((3, 0, 1), (x, x, 1))
    assert len(fake_driver.launches) == 3
    for bad, msg in [((1, 2, 3, 4), "1 to 3 integers"), ((-1,), "from 0 to"), (("a",), "not an integer"),
                     ((1, 70000), "from 0 to 65535"), ((1, 1, -2), "dimension 2 is -2"),
                     ((1.5, 1, 1), "not an integer")]:
        with pytest.raises(LaunchError, match=msg):
            k(bad, (x, x, 1))


def test_streams(fake_driver: FakeDriver) -> None:
    class TorchLikeStream:
        cuda_stream = 0x77

    class ProtocolStream:
        def __cuda_stream__(self) -> tuple[int, int]:
            return (0, 0x88)

    k = kernel()
    x = FakeCudaArray(0x10000)
    for s in (TorchLikeStream(), ProtocolStream(), 0x99):
        k((1,), (x, x, 1), stream=s)
    assert [s for _, s, _ in fake_driver.launches] == [0x77, 0x88, 0x99]
    with pytest.raises(LaunchError, match="cannot use a str as a CUDA stream"):
        k((1,), (x, x, 1), stream="fast")


def test_argument_errors_name_the_argument(fake_driver: FakeDriver) -> None:
    import numpy as np

    k = kernel()
    x = FakeCudaArray(0x10000)
    with pytest.raises(LaunchError, match="argument 1 'y' .*host memory, not on the GPU"):
        k((1,), (x, np.ones(3, np.float32), 1))
    with pytest.raises(LaunchError, match="argument 2 'n' .*out of range for i32"):
        k((1,), (x, x, 2**31))
    with pytest.raises(LaunchError, match="argument 0 'x' .*not 16-byte aligned"):
        k((1,), (FakeCudaArray(0x10008), x, 1))
    with pytest.raises(LaunchError, match="takes 3 arguments"):
        k((1,), (x, x))
    assert fake_driver.launches == []


def test_cluster_grid_must_hold_whole_clusters(fake_driver: FakeDriver) -> None:
    k = kernel(cluster_dims=(2, 1, 1))
    x = FakeCudaArray(0x10000)
    k((4,), (x, x, 1))
    with pytest.raises(LaunchError, match="not a multiple of the cluster dims"):
        k((3,), (x, x, 1))
    assert kernel(cluster_dims=(1, 1, 1)).cluster_dims is None


def test_driver_failures_are_cuda_errors(fake_driver: FakeDriver) -> None:
    from tlxc.runtime import driver

    k = kernel()
    x = FakeCudaArray(0x10000)
    fake_driver.results = [driver.CUDA_ERROR_INVALID_VALUE]
    with pytest.raises(CudaError) as e:
        k((1,), (x, x, 1))
    assert e.value.call == "cuLaunchKernel" and e.value.result == 1
    assert "launching kernel 'k' with grid (1, 1, 1), block (128, 1, 1)" in str(e.value)
    # a thread without the runtime's context: made current, and the launch is retried once
    fake_driver.results = [driver.CUDA_ERROR_INVALID_CONTEXT, 0]
    k((1,), (x, x, 1))
    assert fake_driver.contexts_made_current == 1 and len(fake_driver.launches) == 3


def test_threads_share_a_kernel(fake_driver: FakeDriver) -> None:
    k = kernel()
    arrays = [FakeCudaArray(0x10000 * (i + 1)) for i in range(8)]

    def work(i: int) -> None:
        for _ in range(200):
            k((1,), (arrays[i], arrays[i], i))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fake_driver.launches) == 1600
    for _, _, data in fake_driver.launches:  # every launch saw one thread's arguments, never a mix
        x, y, n = struct.unpack("<QQi", data)
        assert x == y == 0x10000 * (n + 1)


def test_threads_share_a_cluster_kernel(fake_driver: FakeDriver) -> None:
    k = kernel(cluster_dims=(2, 1, 1))  # cuLaunchKernelEx: the grid goes through a config object
    x = FakeCudaArray(0x10000)

    def work(i: int) -> None:
        for _ in range(200):
            k((2 * (i + 1),), (x, x, i))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fake_driver.launches) == 1600
    for grid, _, data in fake_driver.launches:  # each launch's grid and arguments come from one thread
        assert grid == (2 * (struct.unpack("<QQi", data)[2] + 1), 1, 1)


def test_save_and_load(tmp_path: Path, fake_driver: FakeDriver) -> None:
    k = kernel(num_warps=8, shared_bytes=65536, cluster_dims=(2,), metadata={"arch": "sm_90a", "constants": {"B": 1}})
    path = k.save(tmp_path / "aot" / "k")
    assert path == tmp_path / "aot" / "k.json" and (tmp_path / "aot" / "k.cubin").read_bytes() == k.binary
    k2 = LoadedKernel.from_file(path)
    assert (k2.name, k2.plan.signature, k2.plan.names, k2.num_warps, k2.shared_bytes, k2.cluster_dims, k2.metadata) == \
        ("k", SIG, ("x", "y", "n"), 8, 65536, (2, 1, 1), {"arch": "sm_90a", "constants": {"B": 1}})
    k2((2,), (FakeCudaArray(0x10000), None, 3))
    ptx = LoadedKernel(".version 8.0\n.target sm_90a\n", "k", SIG)
    assert LoadedKernel.from_file(ptx.save(tmp_path / "p")).binary == ptx.binary


def test_cache_round_trip(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    key = KernelCache.key("src", SIG, arch="sm_90a")
    assert LoadedKernel.from_cache(cache, key) is None
    kernel(num_warps=2).to_cache(cache, key)
    k = LoadedKernel.from_cache(cache, key)
    assert k is not None and k.binary == b"\x7fELF fake cubin" and k.num_warps == 2 and k.plan.signature == SIG


@pytest.mark.parametrize("native", [True, False])
def test_trusted_launch_packs_what_launch_packs(fake_driver: FakeDriver, monkeypatch, native: bool) -> None:
    """``launch_trusted`` (the fast path's, after its key checked the arguments) takes
    addresses for pointers and packs the same bytes; a nonzero answer means nothing ran.
    Native: the builtin of runtime/native_launch.py over a recording ``cuLaunchKernel``;
    else the generated Python function."""
    from tlxc.runtime import driver

    if not native:
        monkeypatch.setattr(driver, "native_trusted", lambda *a, **kw: None)
    k = kernel()
    x, y = FakeCudaArray(0x10000), FakeCudaArray(0x20000)
    assert k.launch_trusted((1, 1, 1), None, 0x10000, 0x20000, 5) == -1  # not loaded yet: "use launch"
    k((3,), (x, y, 100))
    assert k.launch_trusted((3, 1, 1), None, 0x10000, 0x20000, 100) == 0
    assert k.launch_trusted((2, 4, 1), 0x55, 0x10000, 0x30000, 7) == 0
    assert k.launch_trusted((5,), 0x55, 0x10000, 0x30000, 7) == 0  # a grid function's (n,)
    assert fake_driver.launches.pop()[0] == (5, 1, 1)
    assert fake_driver.launches[1:] == [((3, 1, 1), 0, fake_driver.launches[0][2]),
                                        ((2, 4, 1), 0x55, struct.pack("<QQi", 0x10000, 0x30000, 7))]
    assert k.launch_trusted((1, 1, 1), None, 0x10000, 0x20000, 2**40) == -1  # cannot pack: "use launch"
    fake_driver.results.append(700)
    assert k.launch_trusted((1, 1, 1), None, 0x10000, 0x20000, 1) == 700  # the driver's answer, not raised
    if native:
        assert "native" in k.launch_trusted_source and type(k.launch_trusted) is type(len)
    else:
        assert "def launch_trusted(g3, stream, a0, a1, a2)" in k.launch_trusted_source
        assert "data_ptr" not in k.launch_trusted_source


def test_no_trusted_launch_for_clusters_or_several_gpus(fake_driver: FakeDriver, monkeypatch) -> None:
    from tlxc.runtime import driver

    x = FakeCudaArray(0x10000)
    k = kernel(cluster_dims=(2, 1, 1))
    k((2,), (x, x, 1))
    assert k.launch_trusted((2, 1, 1), None, 0x10000, 0x10000, 1) == -1
    monkeypatch.setattr(driver, "device", lambda: driver.Device(0, 0, 0, "Fake GPU", (9, 0), 132, 232448, 2))
    k2 = kernel()
    k2((1,), (x, x, 1))
    assert k2.launch_trusted((1, 1, 1), None, 0x10000, 0x10000, 1) == -1
