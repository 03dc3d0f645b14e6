"""The hot variant of the fast path (tlxc/kernels/launch.py, ``FastTable.hot``): after a
trusted launch, the next launch first tries that variant's native guarded launch
(runtime/native_launch.py), which checks in C what the speculative key would hold and
launches. These tests check that it launches exactly when the key's way would launch the
same variant, with the same bytes, and steps aside otherwise.

Runs on the CPU: the driver is the fake one of tests/conftest.py (whose ``cuLaunchKernel``
is a recording stand-in under the real native code), and ``torch`` is a stand-in module
whose ``Tensor`` speaks ``data_ptr()``, ``is_cuda``, ``dtype`` and ``device`` (the trusted
path is taken for ``torch.Tensor`` arguments only)."""

from __future__ import annotations

import struct
import sys
import types
from typing import Any

import pytest

pytestmark = pytest.mark.interpreter_only  # a fake driver: not meaningful with the real GPU harness


class DType:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


DType.__module__ = "torch"


class Device:
    def __init__(self, kind: str) -> None:
        self.type, self.index = kind, 0 if kind == "cuda" else None

    def __str__(self) -> str:
        return f"{self.type}:0" if self.type == "cuda" else self.type


@pytest.fixture
def torch(monkeypatch: pytest.MonkeyPatch) -> Any:
    mod = types.ModuleType("torch")
    mod.float32, mod.float16 = DType("float32"), DType("float16")

    class Tensor:
        def __init__(self, ptr: int, dtype: DType = mod.float32, cuda: bool = True) -> None:
            self.ptr, self.dtype, self.is_cuda, self.device = ptr, dtype, cuda, Device("cuda" if cuda else "cpu")

        def data_ptr(self) -> int:
            return self.ptr

        def get_device(self) -> int:
            return 0 if self.is_cuda else -1

    mod.Tensor = Tensor
    mod.cuda = types.SimpleNamespace(is_initialized=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


SOURCE = """
@tlxc.jit
def k(x, y, n, s, BLOCK: tl.constexpr):
    pass
"""


def hot_calls(kernel: Any) -> list[Any]:
    """Wrap the hot variant's guarded launch: a list of its answers."""
    answers: list[Any] = []
    real = kernel._fast.hot[0]
    assert real is not None, "no hot variant"

    def spy(*args: Any) -> Any:
        r = real(*args)
        answers.append(r)
        return r

    kernel._fast.hot[0] = spy
    return answers


def test_hot_variant_launches_the_same_bytes(fake_driver: Any, torch: Any, load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    first = m.k[(3,)](x, y, 64, 0.5, BLOCK=32)  # the slow path: compiles, remembers
    assert m.k._fast_trusted and m.k._fast.hot[0] is not None
    answers = hot_calls(m.k)
    assert m.k[(3,)](x, y, 64, 0.5, BLOCK=32) is first
    assert answers == [first]
    assert [launch[0] for launch in fake_driver.launches] == [(3, 1, 1)] * 2
    assert fake_driver.launches[0][2] == fake_driver.launches[1][2] == struct.pack("<QQif", x.ptr, y.ptr, 64, 0.5)
    m.k[(5, 2)](x, y, 64, 0.25, BLOCK=32, stream=0x77)  # a 2-D grid, a stream
    assert answers[-1] is first and fake_driver.launches[-1][:2] == ((5, 2, 1), 0x77)
    assert fake_driver.launches[-1][2] == struct.pack("<QQif", x.ptr, y.ptr, 64, 0.25)


@pytest.mark.parametrize("change", ["align", "dtype", "divisibility", "one", "wide", "constexpr", "option",
                                    "float_type"])
def test_what_the_hot_variant_does_not_take_goes_the_key_way(fake_driver: Any, torch: Any, load_kernels: Any,
                                                              change: str) -> None:
    """Each change makes another variant (or another path): the guarded launch answers
    None, and the launch is the one the slow path would make."""
    from tlxc.kernels.launch import Launcher

    m = load_kernels(SOURCE)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    first = m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    answers = hot_calls(m.k)
    args: list[Any] = [x, y, 64, 0.5]
    kw: dict[str, Any] = {"BLOCK": 32}
    if change == "align":
        args[0] = torch.Tensor(0x7F0000000004)
    elif change == "dtype":
        args[1] = torch.Tensor(0x7F0000100000, torch.float16)
    elif change == "divisibility":
        args[2] = 65
    elif change == "one":
        args[2] = 1
    elif change == "wide":
        args[2] = 2**33
    elif change == "constexpr":
        kw["BLOCK"] = 64
    elif change == "option":
        kw["num_warps"] = 8
    elif change == "float_type":
        args[3] = 2  # an int where a float was: another signature
    got = m.k[(1,)](*args, **kw)
    # an option is not a call shape the native entry takes: it goes straight to the key's way
    assert answers == ([] if change == "option" else [None])
    assert got is not first and got is Launcher(m.k, (1,), False)(*args, **kw)


def test_a_cpu_tensor_is_refused_by_the_hot_variant_and_reported(fake_driver: Any, torch: Any,
                                                                 load_kernels: Any) -> None:
    from tlxc.runtime import LaunchError

    m = load_kernels(SOURCE)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    answers = hot_calls(m.k)
    n = len(fake_driver.launches)
    with pytest.raises(LaunchError, match="not on the GPU"):
        m.k[(1,)](torch.Tensor(0x1000, cuda=False), y, 64, 0.5, BLOCK=32)
    assert answers == [None] and len(fake_driver.launches) == n


def test_the_hot_variant_follows_the_last_trusted_hit(fake_driver: Any, torch: Any, load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    a = m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    b = m.k[(1,)](x, y, 65, 0.5, BLOCK=32)  # b becomes hot
    hot_b = m.k._fast.hot[0]
    assert m.k[(1,)](x, y, 64, 0.5, BLOCK=32) is a  # a key hit: a is hot again
    assert m.k._fast.hot[0] is not hot_b
    answers = hot_calls(m.k)
    assert m.k[(1,)](x, y, 64, 0.5, BLOCK=32) is a and answers == [a]
    assert m.k[(1,)](x, y, 65, 0.5, BLOCK=32) is b and answers == [a, None]


def test_emptying_the_cache_or_unloading_forgets_the_hot_variant(fake_driver: Any, torch: Any, load_kernels: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from tlxc.runtime import driver

    from tlxc.kernels.launch import _MISSING
    from tlxc.kernels.options import KEY_OPTIONS

    monkeypatch.setattr(driver, "unload_module", lambda module: None)
    m = load_kernels(SOURCE)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    a = m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    hot = m.k._fast.hot[0]
    options = [_MISSING] * len(KEY_OPTIONS)  # none of the options that choose the variant given
    n = len(fake_driver.launches)
    assert hot((1,), None, x, y, 64, 0.5, 32, *options) is a and len(fake_driver.launches) == n + 1
    a._loaded.unload()
    assert hot((1,), None, x, y, 64, 0.5, 32, *options) is None and len(fake_driver.launches) == n + 1
    assert m.k[(1,)](x, y, 64, 0.5, BLOCK=32) is a  # loads again through launch
    assert len(fake_driver.launches) == n + 2
    m.k.cache.clear()
    assert m.k._fast.hot[0] is None


# -- the native entry of kernel[grid](...) (native_launch.make_dispatcher) --------------------------------

SHAPES = """
@tlxc.jit
def k(x, y, n, s, BLOCK: tl.constexpr, FLAG: tl.constexpr = 1):
    pass


@tlxc.jit
def mid(x, B: tl.constexpr, n, eps=1.0, C: tl.constexpr = 4):
    pass
"""


@pytest.mark.parametrize("call", [
    lambda k, x, y: k[(1,)](x, y, 64, 0.5, BLOCK=32),
    lambda k, x, y: k[(1,)](x, y, 64, 0.5, 32),
    lambda k, x, y: k[(1,)](x, y, 64, 0.5, 32, 1),
    lambda k, x, y: k[(1,)](x, y, 64, 0.5, 32, FLAG=1),
    lambda k, x, y: k[(1,)](x, y, 64, 0.5, FLAG=1, BLOCK=32),
])
def test_the_native_entry_takes_the_usual_call_shapes(fake_driver: Any, torch: Any, load_kernels: Any,
                                                      call: Any) -> None:
    m = load_kernels(SHAPES)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    first = m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    answers = hot_calls(m.k)
    assert call(m.k, x, y) is first
    assert answers == [first]
    assert fake_driver.launches[-1][2] == fake_driver.launches[0][2]


@pytest.mark.parametrize("call,error", [
    (lambda k, x, y: k[(1,)](x, y, 64, 0.5, 32, BLOCK=32), "BLOCK"),  # given twice
    (lambda k, x, y: k[(1,)](x, y, 64, 0.5), "BLOCK"),  # missing
    (lambda k, x, y: k[(1,)](x, y, 64, 0.5, BLOCK=32, WIDTH=2), "WIDTH"),  # unknown
    (lambda k, x, y: k[(1,)](x, y, 64, 0.5, 32, 1, 7), "arguments"),  # too many
])
def test_the_native_entry_leaves_wrong_calls_to_the_slow_path(fake_driver: Any, torch: Any, load_kernels: Any,
                                                              call: Any, error: str) -> None:
    import tlxc

    m = load_kernels(SHAPES)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    answers = hot_calls(m.k)
    n = len(fake_driver.launches)
    with pytest.raises(tlxc.CompilationError, match=error):
        call(m.k, x, y)
    assert answers == [] and len(fake_driver.launches) == n


def test_other_shapes_launch_through_the_generated_function(fake_driver: Any, torch: Any, load_kernels: Any) -> None:
    """A keyword for a parameter before the constexprs, or a constexpr among the runtime
    parameters with a runtime default after it: not the native entry's shapes; the same
    variant all the same."""
    m = load_kernels(SHAPES)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    first = m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    answers = hot_calls(m.k)
    assert m.k[(1,)](x, y, 64, s=0.5, BLOCK=32) is first
    assert m.k[(1,)](x, y=y, n=64, s=0.5, BLOCK=32) is first
    assert answers == []
    a = m.mid[(2,)](x, 8, 16)
    assert m.mid[(2,)](x, 8, 16) is a and m.mid[(2,)](x, 8, 16, 1.0) is a and m.mid[(2,)](x, 8, 16, 1.0, 4) is a
    assert m.mid[(2,)](x, 8, 16, C=4) is a
    assert m.mid[(2,)](x, 8, 16, 2.0, C=8) is not a


def test_native_paths_keep_reference_counts(fake_driver: Any, torch: Any, load_kernels: Any) -> None:
    """A thousand launches through the native entry (hot hits, declines and the key's
    way) leave every object's reference count as it was: no leak, no early free."""
    m = load_kernels(SHAPES)
    x, y = torch.Tensor(0x7F0000000000), torch.Tensor(0x7F0000100000)
    x4 = torch.Tensor(0x7F0000000004)
    a = m.k[(1,)](x, y, 64, 0.5, BLOCK=32)
    b = m.k[(1,)](x4, y, 64, 0.5, BLOCK=32)
    m.k[(1,)](x, y, 64, 0.5, BLOCK=32)  # a is hot
    g3 = m.k[(1,)].args[0].g3  # the grid the launcher holds
    watched = [x, y, x4, x.ptr, y.ptr, x4.ptr, a, b, 0.5, 64, 32, m.k._fast.hot[0], g3, torch.float32]

    def rounds() -> list[int]:
        for _ in range(1000):
            assert m.k[(1,)](x, y, 64, 0.5, BLOCK=32) is a  # a hot hit
            assert m.k[(1,)](x4, y, 64, 0.5, 32) is b  # a decline, then a key hit that makes b hot
            assert m.k[(1,)](x, y, 64, 0.5, BLOCK=32) is a  # declined by b, a key hit
        return [sys.getrefcount(o) for o in watched] + [sys.getrefcount(None) // 1000]  # None: 3000 per round

    import collections
    import tracemalloc

    fake_driver.launches = collections.deque(maxlen=1)  # the fake driver's record would grow
    first = rounds()  # the first round may fill caches
    tracemalloc.start()
    try:
        second = rounds()
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert second == first
    assert size < 100_000, size  # no object left behind per launch (a leaked address int is 32 bytes)


MANY = """
@tlxc.jit
def k(x, n, A: tl.constexpr, B: tl.constexpr = 2, C: tl.constexpr = 3):
    pass
"""


def test_the_native_entry_picks_the_slow_paths_variant_for_any_call_shape(fake_driver: Any, torch: Any,
                                                                          load_kernels: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Random call shapes (trailing constexprs by position, by keyword in any order, or
    left to their defaults; values that change the variant or not) launch, through the
    native entry, exactly the variant the slow path picks, with the same bytes."""
    import random

    from tlxc.kernels import launch
    from tlxc.kernels.launch import Launcher

    hits: list[Any] = []
    real = launch._guarded_launch

    def counting(*a: Any) -> Any:  # every hot variant made counts its launches
        hot = real(*a)
        return None if hot is None else (lambda *args: (r := hot(*args)) is not None and hits.append(r) or r)

    monkeypatch.setattr(launch, "_guarded_launch", counting)
    m = load_kernels(MANY)
    x = torch.Tensor(0x7F0000000000)
    rng = random.Random(5)
    for _ in range(300):
        n = rng.choice([16, 17, 1])
        values = {"A": rng.choice([1, 2]), "B": rng.choice([2, 4]), "C": rng.choice([3, 5])}
        by_position = rng.randint(0, 3)
        names = ["A", "B", "C"]
        args = [x, n] + [values[c] for c in names[:by_position]]
        rest = [c for c in names[by_position:] if c == "A" or values[c] != {"B": 2, "C": 3}[c] or rng.random() < 0.5]
        rng.shuffle(rest)
        kw = {c: values[c] for c in rest}
        got = m.k[(2,)](*args, **kw)
        data = fake_driver.launches[-1][2]
        before = len(hits)
        assert m.k[(2,)](*args, **kw) is got  # the same call again: the hot variant's now
        assert len(hits) == before + 1 and hits[-1] is got, (args, kw)
        want = Launcher(m.k, (2,), False)(*args, **kw)
        assert got is want, (args, kw)
        assert fake_driver.launches[-1][2] == data
