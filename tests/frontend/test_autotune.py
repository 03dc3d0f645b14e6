"""``tlxc.Config``, ``@tlxc.autotune`` and ``@tlxc.heuristics`` (tlxc/kernels/autotune.py),
on the CPU: GPU launches go through the fake driver (tests/conftest.py) and timings come
from an injected ``do_bench``; the interpreter runs the numerics."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import tlxc
from tlxc import testing

pytestmark = pytest.mark.interpreter_only

SOURCE = """
@tlxc.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@tlxc.jit
def with_desc(d, x, n, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, 16), tl.arange(0, 16) + n)


@tlxc.jit
def scaled(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out + offs, tl.load(x + offs) * 2)
    else:
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) * 2, mask=m)
"""


class FakeTensor:
    """A GPU tensor as launches and the autotuner's hooks see one: an address, a dtype,
    and host values that ``zero_``/``clone``/``copy_`` act on; ``bump`` adds one to the
    values whenever a launch reads the address (a kernel writing its argument)."""

    def __init__(self, ptr: int, values: Any = (0.0,), dtype: Any = np.float32, bump: bool = False) -> None:
        self.ptr = ptr
        self.dtype = np.dtype(dtype)
        self.host = np.array(values, dtype=self.dtype)
        self.bump = bump

    def data_ptr(self) -> int:
        if self.bump:
            self.host += 1
        return self.ptr

    def zero_(self) -> None:
        self.host[...] = 0

    def clone(self) -> "FakeTensor":
        return FakeTensor(self.ptr, self.host.copy(), self.dtype)

    def copy_(self, other: "FakeTensor") -> None:
        self.host[...] = other.host


def tensors(dtype: Any = np.float32) -> tuple[FakeTensor, FakeTensor, FakeTensor]:
    return FakeTensor(0x10000, dtype=dtype), FakeTensor(0x20000, dtype=dtype), FakeTensor(0x30000, dtype=dtype)


def fake_bench(times: dict[int, float], seen: list[int]) -> Callable[..., Any]:
    """A ``do_bench`` that runs the kernel call once and reports the time of the BLOCK
    that the config's pre_hook recorded in ``seen``."""

    def bench(fn: Callable[[], Any], quantiles: Any) -> list[float]:
        fn()
        t = times[seen[-1]]
        return [t, t * 0.9, t * 1.1]

    bench.calls = 0  # type: ignore[attr-defined]
    return bench


def configs(blocks: list[int], seen: list[int], **options: Any) -> list[tlxc.Config]:
    return [tlxc.Config({"BLOCK": b}, pre_hook=lambda nargs: seen.append(nargs["BLOCK"]), **options)
            for b in blocks]


def test_config() -> None:
    c = tlxc.Config({"BLOCK_M": 128, "BLOCK_N": 256}, num_warps=8, num_stages=3)
    assert (c.num_warps, c.num_stages, c.num_ctas, c.maxnreg, c.pre_hook) == (8, 3, 1, None, None)
    assert c.all_kwargs() == {"BLOCK_M": 128, "BLOCK_N": 256, "num_warps": 8, "num_ctas": 1, "num_stages": 3}
    assert str(c) == "BLOCK_M: 128, BLOCK_N: 256, num_warps: 8, num_ctas: 1, num_stages: 3, maxnreg: None"
    assert tlxc.Config({"B": 1}, maxnreg=128).all_kwargs()["maxnreg"] == 128
    assert tlxc.Config({"B": 1}) == tlxc.Config({"B": 1}) and len({tlxc.Config({"B": 1}), tlxc.Config({"B": 1})}) == 1
    assert tlxc.Config({}, ctas_per_cga=(2, 1, 1)).all_kwargs()["ctas_per_cga"] == (2, 1, 1)
    with pytest.raises(TypeError, match="unknown options"):
        tlxc.Config({}, num_warp=4)


def test_decorator_checks(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    with pytest.warns(UserWarning, match=r"names \['N'\], which are not parameters"):  # Triton ignores it
        loose = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 16})], key=["N", "n"])(m.add)
    assert loose.tuning_key({"n": 7}, {}) == (7,)
    with pytest.raises(ValueError, match="reset_to_zero"):
        tlxc.autotune(configs=[], key=["n"], reset_to_zero=["c_ptr"])(m.add)
    with pytest.raises(TypeError, match="@tlxc.jit"):
        tlxc.autotune(configs=[], key=[])(lambda x: x)
    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 16})], key=["n"])(m.add)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        tuned.interpret[(1,)](*tensors(), 16, BLOCK=32)
    with pytest.raises(RuntimeError, match="launch it with"):
        tuned(1)


def test_selects_fastest_and_caches_per_key(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    seen: list[int] = []
    bench = fake_bench({16: 3.0, 32: 1.0, 64: 2.0}, seen)
    tuned = tlxc.autotune(configs=configs([16, 32, 64], seen), key=["n"], do_bench=bench)(m.add)
    metas: list[dict[str, Any]] = []

    def grid(meta: dict[str, Any]) -> tuple[int]:
        metas.append(dict(meta))
        return (tlxc.cdiv(meta["n"], meta["BLOCK"]),)

    x, y, out = tensors()
    tuned[grid](x, y, out, 256)
    assert seen == [16, 32, 64, 32]  # each config timed once, then the launch with the best
    assert tuned.best_config.kwargs == {"BLOCK": 32} and tuned.cache == {(256, "float32", "float32", "float32"):
                                                                          tuned.best_config}
    assert [t[0] for t in tuned.configs_timings.values()] == [3.0, 1.0, 2.0]
    assert [meta["BLOCK"] for meta in metas] == [16, 32, 64, 32]  # the grid sees each config's kwargs
    assert fake_driver.launches[-1][0] == (8, 1, 1)
    # the same key: no timing
    seen.clear()
    tuned[grid](x, y, out, 256)
    assert seen == [32] and fake_driver.launches[-1][0] == (8, 1, 1)
    # a new key value, and a new dtype: timed again
    seen.clear()
    tuned[grid](x, y, out, 1024)
    assert seen == [16, 32, 64, 32]
    seen.clear()
    tuned[grid](*tensors(np.float16), 1024)
    assert seen == [16, 32, 64, 32] and len(tuned.cache) == 3


def test_launch_options_reach_the_compile(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    seen: list[int] = []
    cfgs = [tlxc.Config({"BLOCK": 64}, num_warps=8, num_stages=2, pre_hook=lambda a: seen.append(a["BLOCK"])),
            tlxc.Config({"BLOCK": 128}, num_warps=2, pre_hook=lambda a: seen.append(a["BLOCK"]))]
    tuned = tlxc.autotune(configs=cfgs, key=["n"], do_bench=fake_bench({64: 1.0, 128: 2.0}, seen))(m.add)
    ck = tuned[(4,)](*tensors(), 256)  # the variant launched
    assert ck.constants["BLOCK"] == 64 and m.add.last_compiled.options.num_warps == 2  # compiled while timing
    assert ck.metadata["num_warps"] == 8 and ck.options.num_warps == 8 and ck.options.num_stages == 2
    variants = {(k[1], k[2].num_warps) for k in m.add.cache}
    assert variants == {((("BLOCK", 64),), 8), ((("BLOCK", 128),), 2)}


def test_pruning(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    seen: list[int] = []
    calls: list[tuple] = []

    def early(cfgs: list[tlxc.Config], named: dict[str, Any], **kwargs: Any) -> list[tlxc.Config]:
        calls.append((sorted(named), kwargs))
        return [c for c in cfgs if c.kwargs["BLOCK"] <= named["n"]]

    def perf_model(**kw: Any) -> float:
        assert kw["n"] == 64 and "x" in kw and "num_warps" in kw
        return -kw["BLOCK"]  # bigger looks faster

    tuned = tlxc.autotune(configs=configs([16, 32, 64, 128], seen), key=["n"],
                          prune_configs_by={"early_config_prune": early, "perf_model": perf_model, "top_k": 2},
                          do_bench=fake_bench({16: 1.0, 32: 1.0, 64: 1.0, 128: 1.0}, seen))(m.add)
    tuned[(1,)](*tensors(), 64)
    assert calls == [(["n", "out", "x", "y"], {})]
    assert seen == [64, 32, 64]  # 128 pruned early, 16 by the model; ties: the first timed
    with pytest.raises(ValueError, match="left no config"):
        tuned[(1,)](*tensors(), 8)


def test_reset_to_zero_and_restore_value(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    x = FakeTensor(0x10000, [1.0, 2.0])
    y = FakeTensor(0x20000, [5.0, 5.0])
    out = FakeTensor(0x30000, [3.0, 4.0], bump=True)  # the kernel "writes" out
    during: list[tuple] = []

    def bench(fn: Callable[[], Any], quantiles: Any) -> float:
        y.host[...] = 9  # left by an earlier run: zeroed before the next
        fn()
        during.append((y.host.tolist(), out.host.tolist()))
        return 1.0

    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 16}), tlxc.Config({"BLOCK": 32})], key=["n"],
                          reset_to_zero=["y"], restore_value=["out"], do_bench=bench)(m.add)
    tuned[(1,)](x, y, out, 2)
    assert during == [([0.0, 0.0], [3.0, 4.0])] * 2  # zeroed before each run, restored after it
    assert y.host.tolist() == [0.0, 0.0]  # zeroed once more before the real launch
    assert out.host[0] > 3.0  # the real launch is not undone (a launch reads data_ptr() once or more)


def test_failing_configs_are_skipped(load_kernels: Any, fake_driver: Any, capsys: Any,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    m = load_kernels(SOURCE)
    seen: list[int] = []
    tuned = tlxc.autotune(configs=configs([3, 32, 48], seen), key=["n"],
                          do_bench=fake_bench({3: 0.1, 32: 1.0, 48: 0.5}, seen))(m.add)
    monkeypatch.setenv("TLXC_PRINT_AUTOTUNING", "1")
    tuned[(1,)](*tensors(), 64)
    assert tuned.best_config.kwargs == {"BLOCK": 32}
    timings = {c.kwargs["BLOCK"]: t[0] for c, t in tuned.configs_timings.items()}
    assert timings == {3: float("inf"), 32: 1.0, 48: float("inf")}
    printed = capsys.readouterr().out
    assert "Autotuning kernel add with config BLOCK: 3, num_warps: 4" in printed
    assert "Autotuning failed with" in printed
    assert "best config selected: BLOCK: 32, num_warps: 4, num_ctas: 1, num_stages: 3, maxnreg: None;" in printed


def test_all_configs_failing_raise_the_first_error(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    seen: list[int] = []
    tuned = tlxc.autotune(configs=configs([3, 48], seen), key=["n"], do_bench=fake_bench({}, seen))(m.add)
    with pytest.raises(tlxc.CompilationError) as info:
        tuned[(1,)](*tensors(), 64)
    assert "3" in str(info.value) and "48" not in info.value.message
    assert tuned.cache == {}


def test_other_errors_propagate(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)

    def bench(fn: Callable[[], Any], quantiles: Any) -> float:
        raise KeyError("broken timer")

    tuned = tlxc.autotune(configs=configs([16, 32], []), key=["n"], do_bench=bench)(m.add)
    with pytest.raises(KeyError, match="broken timer"):
        tuned[(1,)](*tensors(), 64)


def test_interpreter_numerics_and_no_timing(load_kernels: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    m = load_kernels(SOURCE)

    def bench(fn: Callable[[], Any], quantiles: Any) -> float:
        raise AssertionError("the interpreter does not time configs")

    def early(cfgs: list[tlxc.Config], named: dict[str, Any], **kwargs: Any) -> list[tlxc.Config]:
        return [c for c in cfgs if c.kwargs["BLOCK"] != 16]

    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": b}) for b in (16, 32, 64)], key=["n"],
                          prune_configs_by={"early_config_prune": early}, do_bench=bench)(m.add)
    n = 100
    x, y = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    out = np.zeros(n, np.float32)
    tuned.interpret[lambda META: (tlxc.cdiv(n, META["BLOCK"]),)](x, y, out, n)
    np.testing.assert_array_equal(out, x + y)
    assert tuned.best_config.kwargs == {"BLOCK": 32}  # the first config that survives pruning
    compiled = sorted(ck.constants["BLOCK"] for ck in m.add.cache.values())
    assert compiled == [32, 64]  # every config left by pruning is compiled, none timed
    monkeypatch.setenv("TLXC_INTERPRET", "1")
    out[:] = 0
    tuned[lambda META: (tlxc.cdiv(n, META["BLOCK"]),)](x, y, out, n)
    np.testing.assert_array_equal(out, x + y)


def test_pre_hook_sets_descriptor_block_shape(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    hooked: list[dict[str, Any]] = []

    def set_block(nargs: dict[str, Any]) -> None:
        hooked.append(dict(nargs))
        nargs["d"].block_shape = [nargs["BLOCK"], nargs["BLOCK"]]

    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 16}, num_warps=8, pre_hook=set_block)], key=["n"])(
        m.with_desc)
    a = np.zeros((64, 32), np.float16)
    desc = tlxc.TensorDescriptor(a, [64, 32], [32, 1], [1, 1])
    x = np.zeros(16, np.int32)
    ck = tuned.interpret[(1,)](desc, x, 3)
    assert str(ck.signature["d"]) == "tensordesc<fp16[16,16]>"  # sm_90a (TMA): sizes not specialized
    assert sorted(hooked[0]) == ["BLOCK", "d", "n", "num_ctas", "num_stages", "num_warps", "x"]
    assert hooked[0]["d"] is desc and hooked[0]["num_warps"] == 8
    np.testing.assert_array_equal(x, np.arange(16) + 3)


def test_interpreter_runs_each_configs_pre_hook_before_compiling_it(load_kernels: Any) -> None:
    """Regression (tutorial 09's TMA matmul): with several configs the interpreter compiled
    each without its pre_hook, so a descriptor kept its [1, 1] placeholder block shape and
    every config failed with TLXC-TLX-003."""
    m = load_kernels(SOURCE)
    hooked: list[int] = []

    def set_block(nargs: dict[str, Any]) -> None:
        hooked.append(nargs["BLOCK"])
        nargs["d"].block_shape = [nargs["BLOCK"], nargs["BLOCK"]]

    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 16}, pre_hook=set_block),
                                   tlxc.Config({"BLOCK": 32}, pre_hook=set_block)], key=["n"])(m.with_desc)
    desc = tlxc.TensorDescriptor(np.zeros((64, 32), np.float16), [64, 32], [32, 1], [1, 1])
    x = np.zeros(16, np.int32)
    ck = tuned.interpret[(1,)](desc, x, 3)
    assert hooked == [16, 32, 16]  # each compile, then the chosen config's launch
    assert str(ck.signature["d"]) == "tensordesc<fp16[16,16]>"  # sm_90a (TMA): sizes not specialized
    np.testing.assert_array_equal(x, np.arange(16) + 3)


def test_heuristics_under_autotune(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": 32}), tlxc.Config({"BLOCK": 64})], key=["n"])(
        tlxc.heuristics(values={"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(m.scaled))
    assert tuned.base_fn is m.scaled
    for n in (64, 70):
        x = np.arange(128, dtype=np.float32)
        out = np.zeros(128, np.float32)
        tuned.interpret[lambda META: (tlxc.cdiv(n, META["BLOCK"]),)](x, out, n)
        np.testing.assert_array_equal(out[:n], 2 * x[:n])
        assert m.scaled.last_compiled.constants["EVEN"] == (n == 64)


def test_do_bench_with_a_fake_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    runs = [0]

    class Timer:
        def synchronize(self) -> None: ...
        def clear_l2(self) -> None: ...
        def event(self) -> list[float]:
            return [0.0]

        def record(self, e: list[float]) -> None:
            e[0] = clock[0]

        def elapsed(self, s: list[float], e: list[float]) -> float:
            return e[0] - s[0]

        def close(self) -> None: ...

    def fn() -> None:
        runs[0] += 1
        clock[0] += 2.0 if runs[0] % 2 else 1.0  # 2 ms and 1 ms in turn

    monkeypatch.setattr(testing, "_timer", Timer)
    med, lo, hi = testing.do_bench(fn, warmup=3, rep=10, quantiles=(0.5, 0.0, 1.0))
    assert (lo, hi) == (1.0, 2.0) and 1.0 <= med <= 2.0
    assert testing.summarize([1.0, 2.0, 3.0], None, "median") == 2.0
    assert testing.summarize([1.0, 3.0], (0.5,), "mean") == 2.0
    with pytest.raises(ValueError, match="return_mode"):
        testing.do_bench(fn, return_mode="p90")


def test_interpreter_compiles_every_config_and_skips_those_that_fail(load_kernels: Any, capsys: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    m = load_kernels(SOURCE)
    monkeypatch.setenv("TLXC_PRINT_AUTOTUNING", "1")
    tuned = tlxc.autotune(configs=[tlxc.Config({"BLOCK": b}) for b in (3, 48, 32, 64)], key=["n"])(m.add)
    n = 64
    x, y, out = np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    tuned.interpret[lambda META: (tlxc.cdiv(n, META["BLOCK"]),)](x, y, out, n)
    np.testing.assert_array_equal(out, x + 1)
    assert tuned.best_config.kwargs == {"BLOCK": 32}  # 3 and 48 are not powers of two: they do not compile
    printed = capsys.readouterr().out
    assert "config BLOCK: 3," in printed and "does not compile" in printed
    assert "2 of 4 configs compile; config selected: BLOCK: 32," in printed
    bad = tlxc.autotune(configs=[tlxc.Config({"BLOCK": b}) for b in (3, 48)], key=["n"])(m.add)
    with pytest.raises(tlxc.CompilationError) as ei:  # none compiles: the first config's error
        bad.interpret[(1,)](x, y, out, n)
    assert ei.value.code == "TLXC-SHAPE-002"


def test_cache_results_keeps_the_choice_for_another_process(load_kernels: Any, fake_driver: Any) -> None:
    m = load_kernels(SOURCE)
    seen: list[int] = []
    cfgs = [16, 32, 64]
    first = tlxc.autotune(configs=configs(cfgs, seen), key=["n"], cache_results=True,
                          do_bench=fake_bench({16: 3.0, 32: 2.0, 64: 1.0}, seen))(m.add)
    first[(4,)](*tensors(), 256)
    assert first.best_config.kwargs == {"BLOCK": 64} and seen == [16, 32, 64, 64]

    def no_bench(fn: Callable[[], Any], quantiles: Any) -> Any:
        raise AssertionError("the stored choice is used, nothing is timed")

    # a new autotuner, as in another process: the choice comes from the disk
    second = tlxc.autotune(configs=configs(cfgs, []), key=["n"], cache_results=True, do_bench=no_bench)(m.add)
    second[(4,)](*tensors(), 256)
    assert second.best_config.kwargs == {"BLOCK": 64}
    again: list[int] = []
    third = tlxc.autotune(configs=configs(cfgs, again), key=["n"],
                          do_bench=fake_bench({16: 1.0, 32: 2.0, 64: 3.0}, again))(m.add)
    third[(4,)](*tensors(), 256)  # without cache_results: timed again
    assert third.best_config.kwargs == {"BLOCK": 16}
