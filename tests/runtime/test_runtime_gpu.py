"""The runtime on a real GPU (``-m gpu``; skipped without one): hand-written PTX kernels
loaded as cubin and through the driver's JIT, launched with DeviceArray, PyTorch, CuPy
and numba arguments, every scalar width, more than 48 KiB of dynamic shared memory,
non-default streams, clusters, threads, and the errors of bad launches."""

from __future__ import annotations

import struct
import threading
from pathlib import Path

import numpy as np
import pytest
import rt_ptx_kernels as P
from tlxc.runtime import (
    CudaError,
    DeviceArray,
    KernelCache,
    LaunchError,
    LoadedKernel,
    assemble,
    device,
    driver,
    find_ptxas,
    synchronize,
)

pytestmark = pytest.mark.gpu


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


@pytest.fixture(scope="module")
def vadd_cubin() -> bytes:
    if find_ptxas() is None:
        pytest.skip("no ptxas")
    return assemble(P.VADD)


def _vadd(binary: bytes | str) -> LoadedKernel:
    return LoadedKernel(binary, "vadd", P.VADD_SIG, num_warps=4, arg_names=["x", "y", "out", "n"])


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


def test_device() -> None:
    d = device()
    assert d.capability >= (7, 0) and d.multiprocessors > 0 and d.max_shared_per_block > 48 * 1024
    if d.capability == (9, 0):
        assert d.arch == "sm_90a"


def test_vadd_device_arrays(vadd_cubin: bytes) -> None:
    k = _vadd(vadd_cubin)
    n = 1000
    x, y = _data(n)
    dx, dy, out = DeviceArray.from_numpy(x), DeviceArray.from_numpy(y), DeviceArray.zeros(n, np.float32)
    k((cdiv(n, 128),), (dx, dy, out, n))
    np.testing.assert_array_equal(out.numpy(), x + y)
    out2 = DeviceArray.zeros(n, np.float32)
    k[(cdiv(n, 128),)](dx, dy, out2, n)
    np.testing.assert_array_equal(out2.numpy(), x + y)
    assert k.attribute("NUM_REGS") > 0


def test_vadd_ptx_jit() -> None:
    k = _vadd(P.VADD)  # PTX text: the driver JIT-compiles it
    assert k.binary_kind == "ptx"
    n = 777
    x, y = _data(n)
    dx, dy, out = DeviceArray.from_numpy(x), DeviceArray.from_numpy(y), DeviceArray.empty(n, np.float32)
    k((cdiv(n, 128),), (dx, dy, out, n))
    np.testing.assert_array_equal(out.numpy(), x + y)
    k2 = LoadedKernel.from_ptx(P.VADD, "vadd", P.VADD_SIG, use_ptxas=find_ptxas() is not None)
    k2((cdiv(n, 128),), (dx, dy, out, n))
    np.testing.assert_array_equal(out.numpy(), x + y)


def test_vadd_torch(vadd_cubin: bytes) -> None:
    torch = pytest.importorskip("torch")
    k = _vadd(vadd_cubin)
    n = 4096 + 3
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    k((cdiv(n, 128),), (x, y, out, n))
    torch.testing.assert_close(out, x + y)
    # no stream given: PyTorch's current stream, as in Triton
    s = torch.cuda.Stream()
    out2 = torch.zeros_like(x)
    s.wait_stream(torch.cuda.current_stream())  # the zeros (and x, y) are made on the default stream
    with torch.cuda.stream(s):
        k((cdiv(n, 128),), (x, y, out2, n))
    s.synchronize()
    torch.testing.assert_close(out2, x + y)
    out3 = torch.zeros_like(x)
    s.wait_stream(torch.cuda.current_stream())
    k((cdiv(n, 128),), (x, y, out3, n), stream=s)  # a torch.cuda.Stream object
    s.synchronize()
    torch.testing.assert_close(out3, x + y)


def test_vadd_cupy_and_numba(vadd_cubin: bytes) -> None:
    k = _vadd(vadd_cubin)
    n = 2048
    x, y = _data(n)
    ran = 0
    try:
        import cupy
    except Exception:
        cupy = None
    if cupy is not None:
        cx, cy, co = cupy.asarray(x), cupy.asarray(y), cupy.zeros(n, dtype=cupy.float32)
        k((cdiv(n, 128),), (cx, cy, co, n))
        np.testing.assert_array_equal(cupy.asnumpy(co), x + y)
        ran += 1
    try:
        from numba import cuda as ncuda

        nx, ny, no = ncuda.to_device(x), ncuda.to_device(y), ncuda.device_array(n, dtype=np.float32)
    except Exception:
        nx = None
    if nx is not None:
        k((cdiv(n, 128),), (nx, ny, no, n))
        synchronize()
        np.testing.assert_array_equal(no.copy_to_host(), x + y)
        ran += 1
    if not ran:
        pytest.skip("neither CuPy nor numba.cuda is usable")


@pytest.mark.parametrize("use_ptxas", [True, False])
def test_every_scalar_width(use_ptxas: bool) -> None:
    if use_ptxas and find_ptxas() is None:
        pytest.skip("no ptxas")
    k = LoadedKernel.from_ptx(P.SCALARS, "scalars", P.SCALARS_SIG, num_warps=1, use_ptxas=use_ptxas)
    out = DeviceArray.zeros(9, np.uint64)
    k((1,), (out, True, -5, 65535, -7, -(2**40), 1.5, -2.75, 2.5, -3.25))
    got = [int(v) for v in out.numpy()]
    u64 = (1 << 64) - 1
    assert got == [1, -5 & u64, 65535, -7 & u64, -(2**40) & u64,
                   struct.unpack("<H", struct.pack("<e", 1.5))[0], 0xC030,
                   struct.unpack("<I", struct.pack("<f", 2.5))[0], struct.unpack("<Q", struct.pack("<d", -3.25))[0]]


def test_dynamic_shared_memory_above_48k() -> None:
    nbytes = 200 * 1024
    k = LoadedKernel.from_ptx(P.BIGSMEM, "bigsmem", P.BIGSMEM_SIG, num_warps=1, shared_bytes=nbytes)
    out = DeviceArray.zeros(4, np.uint32)
    k((1,), (out, nbytes - 16))
    assert int(out.numpy()[0]) == 12346
    too_big = LoadedKernel.from_ptx(P.BIGSMEM, "bigsmem", P.BIGSMEM_SIG, num_warps=1,
                                    shared_bytes=device().max_shared_per_block + 1024)
    with pytest.raises(LaunchError, match="bytes of dynamic shared memory, more than the"):
        too_big((1,), (out, 0))


def test_non_default_stream(vadd_cubin: bytes) -> None:
    k = _vadd(vadd_cubin)
    n = 1 << 16
    x, y = _data(n)
    dx, dy, out = DeviceArray.from_numpy(x), DeviceArray.from_numpy(y), DeviceArray.zeros(n, np.float32)
    s = driver.stream_create()  # non-blocking: it does not wait for the zeroing on the default stream
    try:
        synchronize()
        k((cdiv(n, 128),), (dx, dy, out, n), stream=s)
        driver.stream_synchronize(s)
        np.testing.assert_array_equal(out.numpy(), x + y)
        out2 = DeviceArray.zeros(n, np.float32)
        synchronize()
        k((cdiv(n, 128),), (dx, dy, out2, n), stream=driver.bindings().CUstream(s))  # a CUstream object
        driver.stream_synchronize(s)
        np.testing.assert_array_equal(out2.numpy(), x + y)
    finally:
        driver.stream_destroy(s)


@pytest.mark.parametrize("cluster", [2, 4])
def test_clusters(cluster: int) -> None:
    k = LoadedKernel.from_ptx(P.CLUSTER, "cluster_rank", P.CLUSTER_SIG, num_warps=1, cluster_dims=(cluster, 1, 1))
    out = DeviceArray.zeros(16, np.uint32)
    k((16,), (out,))
    assert [int(v) for v in out.numpy()] == [100 * cluster + i % cluster for i in range(16)]
    with pytest.raises(LaunchError, match="not a multiple of the cluster dims"):
        k((cluster + 1,), (out,))


def test_driver_launch_error_names_the_call() -> None:
    # 16 blocks per cluster is beyond the portable 8 and needs an attribute the kernel lacks
    k = LoadedKernel.from_ptx(P.CLUSTER, "cluster_rank", P.CLUSTER_SIG, num_warps=1, cluster_dims=(16, 1, 1))
    out = DeviceArray.zeros(16, np.uint32)
    with pytest.raises(CudaError) as e:
        k((16,), (out,))
        synchronize()
    assert e.value.call in ("cuLaunchKernelEx", "cuCtxSynchronize")
    if e.value.call == "cuLaunchKernelEx":
        assert "launching kernel 'cluster_rank' with grid (16, 1, 1)" in str(e.value)


def test_launch_errors(vadd_cubin: bytes) -> None:
    k = _vadd(vadd_cubin)
    n = 64
    x = DeviceArray.zeros(n, np.float32)
    with pytest.raises(LaunchError, match="argument 1 'y' .*host memory, not on the GPU"):
        k((1,), (x, np.zeros(n, np.float32), x, n))
    with pytest.raises(LaunchError, match="argument 0 'x' .*compiled for pointers to fp32"):
        k((1,), (DeviceArray.zeros(n, np.float16), x, x, n))
    with pytest.raises(LaunchError, match="argument 2 'out' .*not 16-byte aligned"):
        k((1,), (x, x, x.ptr + 4, n))
    freed = DeviceArray.zeros(n, np.float32)
    freed.free()
    with pytest.raises(LaunchError, match="was freed"):
        k((1,), (freed, x, x, n))
    with pytest.raises(LaunchError, match="out of range for i32"):
        k((1,), (x, x, x, 2**31))
    torch = pytest.importorskip("torch")
    t = torch.zeros(n, device="cuda")
    with pytest.raises(LaunchError, match="torch tensor on cpu, not on the GPU"):
        k((1,), (t, t.cpu(), t, n))
    with pytest.raises(LaunchError, match="not 16-byte aligned"):
        k((1,), (t[1:], t, t, n - 1))
    with pytest.raises(LaunchError, match=r"torch\.float16 \(fp16\) but this kernel was compiled for pointers to fp32"):
        k((1,), (t, t.half(), t, n))
    k((1,), (t, t, t, n))  # and the fast path still works after those errors
    torch.cuda.synchronize()


def test_module_errors(vadd_cubin: bytes) -> None:
    with pytest.raises(CudaError, match="(?s)cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND.*no kernel named 'nope'"):
        LoadedKernel(vadd_cubin, "nope", P.VADD_SIG).load()
    with pytest.raises(CudaError, match="(?s)cuModuleLoadData failed.*JIT-compile the PTX"):
        LoadedKernel(P.HEADER + ".visible .entry broken( {", "broken", []).load()


def test_other_threads_get_the_context(vadd_cubin: bytes) -> None:
    k = _vadd(vadd_cubin)
    n = 512
    x, y = _data(n)
    dx, dy = DeviceArray.from_numpy(x), DeviceArray.from_numpy(y)
    outs = [DeviceArray.zeros(n, np.float32) for _ in range(4)]
    errors: list[BaseException] = []

    def work(out: DeviceArray) -> None:
        try:
            for _ in range(50):
                k((cdiv(n, 128),), (dx, dy, out, n))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    synchronize()
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), x + y)


def test_ahead_of_time_from_file_and_cache(vadd_cubin: bytes, tmp_path: Path) -> None:
    n = 300
    x, y = _data(n)
    dx, dy, out = DeviceArray.from_numpy(x), DeviceArray.from_numpy(y), DeviceArray.zeros(n, np.float32)
    path = _vadd(vadd_cubin).save(tmp_path / "vadd")
    LoadedKernel.from_file(path)((cdiv(n, 128),), (dx, dy, out, n))
    np.testing.assert_array_equal(out.numpy(), x + y)
    cache = KernelCache(tmp_path / "cache")
    key = KernelCache.key(P.VADD, P.VADD_SIG, arch="sm_90a")
    _vadd(vadd_cubin).to_cache(cache, key)
    out2 = DeviceArray.zeros(n, np.float32)
    LoadedKernel.from_cache(cache, key)((cdiv(n, 128),), (dx, dy, out2, n))
    np.testing.assert_array_equal(out2.numpy(), x + y)


def test_kernel_without_arguments() -> None:
    k = LoadedKernel.from_ptx(P.EMPTY, "empty0", [], num_warps=1)
    for _ in range(10):
        k((4, 2), ())
    k[(1,)]()
    synchronize()
    with pytest.raises(LaunchError, match="takes 0 arguments"):
        k((1,), (1,))


def test_device_array_round_trip() -> None:
    a = np.arange(1000, dtype=np.int64).reshape(10, 100)
    d = DeviceArray.from_numpy(a)
    assert d.shape == (10, 100) and d.nbytes == 8000 and d.sig == "i64"
    assert d.__cuda_array_interface__["typestr"] == "<i8" and d.data_ptr() % 256 == 0
    np.testing.assert_array_equal(d.numpy(), a)
    with DeviceArray.zeros((3, 3), "bfloat16") as z:
        assert z.sig == "bf16" and not z.numpy().astype(np.float32).any()
    assert z.ptr == 0
