"""The drop-in host API that TLX and Triton files call: ``tlxc.runtime.driver.active``,
``tlxc.knobs``, ``tlxc.testing.perf_report`` / ``Benchmark``."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pytest
from tlxc.runtime import NoGPUError, driver

import tlxc
import tlxc.language as tl
from tlxc import knobs
from tlxc.testing import Benchmark, perf_report


def test_driver_active_reports_the_device(fake_driver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "_attr", lambda name, dev: {"MAX_REGISTERS_PER_BLOCK": 65536, "WARP_SIZE": 32,
                                                            "CLOCK_RATE": 1980000, "MEMORY_CLOCK_RATE": 2619000,
                                                            "GLOBAL_MEMORY_BUS_WIDTH": 6144}[name])
    target = driver.active.get_current_target()
    assert (target.backend, target.arch, target.warp_size) == ("cuda", 90, 32) and target.is_cuda_backend()
    assert target.tlxc_arch == "sm_90a"
    props = driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] == 132 and props["max_shared_mem"] == 232448
    assert props["max_num_regs"] == 65536 and props["mem_bus_width"] == 6144
    assert driver.active.get_current_device() == 0
    with pytest.raises(Exception, match="cannot describe GPU 1"):
        driver.active.utils.get_device_properties(1)


def test_driver_active_without_a_gpu_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    from tlxc.runtime import hip

    def none() -> Any:
        raise NoGPUError("no GPU here")

    monkeypatch.setattr(driver, "device", none)
    monkeypatch.setattr(hip, "device", none)
    from tlxc.runtime.driver import active  # importing and reaching it touch no GPU

    with pytest.raises(NoGPUError, match="no GPU here"):
        active.get_current_target()
    with pytest.raises(NoGPUError):
        active.utils.get_device_properties()


def test_knobs_are_honoured_or_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("TLXC_CACHE_DIR", os.environ.get("TLXC_CACHE_DIR", ""))
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path)
        assert os.environ["TLXC_CACHE_DIR"] == str(tmp_path) and knobs.cache.dir == str(tmp_path)
    assert os.environ["TLXC_CACHE_DIR"] != str(tmp_path)  # restored
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        assert knobs.compilation.always_compile and os.environ["TLXC_ALWAYS_COMPILE"] == "1"
    assert not knobs.compilation.always_compile
    knobs.nvidia.use_meta_ws = False  # the default: accepted
    with pytest.raises(tlxc.CompilationError, match=r"knob nvidia.use_meta_ws=True is not supported"):
        knobs.nvidia.use_meta_ws = True
    with pytest.raises(tlxc.CompilationError, match="override_arch"):
        knobs.runtime.override_arch = "gfx950"
    with pytest.raises(AttributeError, match="no knob 'frobnicate'"):
        knobs.compilation.frobnicate = 1


@tlxc.jit
def _one(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)


def test_always_compile_skips_the_disk(fake_driver: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from tlxc.kernels import disk

    class T:
        dtype = np.dtype(np.float32)

        def data_ptr(self) -> int:
            return 4096

    monkeypatch.setenv("TLXC_CACHE_DIR", str(tmp_path))
    _one[(1,)](T(), 8, BLOCK=16)
    reads: list[str] = []
    monkeypatch.setattr(disk, "load", lambda *a: reads.append("read"))
    _one.cache.clear()
    _one[(1,)](T(), 8, BLOCK=16)
    assert reads == ["read"]
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        _one.cache.clear()
        ck = _one[(1,)](T(), 8, BLOCK=16)
    assert reads == ["read"] and not getattr(ck, "from_disk", False)


def test_perf_report_prints_a_table(capsys: Any, tmp_path: Any) -> None:
    @perf_report(Benchmark(x_names=["N"], x_vals=[128, 1024], line_arg="provider", line_vals=["a", "b"],
                           line_names=["A", "B"], plot_name="demo", args={"scale": 2}, ylabel="GB/s"))
    def bench(N: int, provider: str, scale: int) -> Any:
        return (N * scale, N, N * 3) if provider == "a" else float(N) / 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no plot is drawn" where matplotlib is missing
        columns, rows = bench.run(print_data=True, save_path=str(tmp_path))
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "demo:"
    assert columns == ["N", "A", "A-min", "A-max", "B"] and rows[1] == [1024, 2048, 1024, 3072, 512.0]
    assert out.splitlines()[1].split() == columns and out.splitlines()[3].split() == ["1024", "2048", "1024", "3072",
                                                                                      "512"]
    assert (tmp_path / "demo.csv").read_text().splitlines()[1] == "128,256,128,384,64.0"
