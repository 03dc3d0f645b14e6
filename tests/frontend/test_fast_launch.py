"""The fast path of ``kernel[grid](...)`` (tlxc/kernels/launch.py) decides exactly as
the slow path does: the same variant for the same specialization, a new one when an
alignment, a divisibility, a dtype, a constexpr, an option or a module global changes,
and the slow path's errors, pointing at the caller's line, for every wrong call.

Runs on the CPU: ``gpu`` replaces the driver calls (as tests/runtime/conftest.py's
``fake_driver`` does) and records each launch; arrays are ``FakeTensor`` objects, which
speak ``data_ptr()`` and ``dtype`` as torch tensors do. Whether a launch took the slow
path is seen from ``KernelFunction.bind``, which only the slow path calls."""

from __future__ import annotations

import linecache
import struct
from typing import Any, Callable

import numpy as np
import pytest

import tlxc
from tlxc.frontend.callsite import compiler_frames
from tlxc.kernels.launch import Launcher

# these tests drive launches through a fake driver: not meaningful with the real GPU harness
pytestmark = pytest.mark.interpreter_only


class FakeTensor:
    """A GPU array as the launch path sees one: an address and a numpy dtype."""

    def __init__(self, ptr: int, dtype: Any = np.float32) -> None:
        self.ptr = ptr
        self.dtype = np.dtype(dtype)

    def data_ptr(self) -> int:
        return self.ptr


@pytest.fixture
def gpu(fake_driver: Any) -> Any:
    """Driver calls replaced (tests/conftest.py): launches are recorded as (grid, stream, packed arguments)."""
    return fake_driver


SOURCE = """
SCALE = tl.constexpr(2)


@tlxc.jit(do_not_specialize=["m"])
def k(x, y, n, m, BLOCK: tl.constexpr, FLAG: tl.constexpr = 1):
    pass


@tlxc.jit(do_not_specialize=["x"])
def unaligned(x, n):
    pass


@tlxc.jit
def g(out, n):
    tl.store(out, SCALE)


@tlxc.jit
def mixed(x, B: tl.constexpr, n, eps=1.0, C: tl.constexpr = 4):
    pass


@tlxc.jit
def constexprs_only(A: tl.constexpr, B: tl.constexpr = 2):
    pass


@tlxc.jit
def shadowing(type, len, stream, num_warps):
    pass
"""


@pytest.fixture
def mod(load_kernels: Any) -> Any:
    return load_kernels(SOURCE)


def slow_calls(k: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one at each launch of ``k`` that takes the slow path."""
    calls: list[int] = []
    bind = k.bind

    def spy(*args: Any) -> Any:
        calls.append(1)
        return bind(*args)

    monkeypatch.setattr(k, "bind", spy)
    return calls


def both(k: Any, grid: Any, *args: Any, **kwargs: Any) -> Any:
    """The variant that ``k[grid](...)`` launched, checked against the slow path's choice."""
    fast = k[grid](*args, **kwargs)
    assert fast is Launcher(k, grid, False)(*args, **kwargs)
    return fast


X, Y = FakeTensor(0x7F0000000000), FakeTensor(0x7F0000100000)
X4 = FakeTensor(0x7F0000000004)  # 4 bytes past a 16-byte boundary


def test_second_launch_takes_the_fast_path(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = slow_calls(mod.k, monkeypatch)
    a = mod.k[(2,)](X, Y, 64, 3, BLOCK=32)
    assert len(slow) == 1 and a.specialization == "x: *fp32:16, y: *fp32:16, n: i32:16, m: i32, BLOCK=32, FLAG=1"
    b = mod.k[(2,)](X, Y, 64, 5, BLOCK=32)
    assert len(slow) == 1 and b is a
    assert [(grid, st) for grid, st, _ in gpu.launches] == [((2, 1, 1), 0)] * 2
    assert gpu.launches[1][2] == struct.pack("<QQii", X.ptr, Y.ptr, 64, 5)
    mod.k[2](X, Y, 64, 5, BLOCK=32)  # an int grid, and a list (not hashable)
    mod.k[[2, 3]](X, Y, 64, 5, BLOCK=32)
    assert len(slow) == 1 and [grid for grid, _, _ in gpu.launches[2:]] == [(2, 1, 1), (2, 3, 1)]


def test_alignment_change_is_a_new_variant(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    aligned = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32)
    misaligned = both(mod.k, (1,), X4, Y, 64, 0, BLOCK=32)
    assert misaligned is not aligned
    assert str(aligned.signature["x"]) == "*fp32:16" and str(misaligned.signature["x"]) == "*fp32"
    slow = slow_calls(mod.k, monkeypatch)
    assert mod.k[(1,)](X, Y, 64, 0, BLOCK=32) is aligned
    assert mod.k[(1,)](X4, Y, 64, 0, BLOCK=32) is misaligned
    assert not slow
    assert gpu.launches[-1][2][:8] == struct.pack("<Q", X4.ptr)
    # do_not_specialize on a pointer: no alignment assumed, one variant
    u = both(mod.unaligned, (1,), X, 1)
    assert both(mod.unaligned, (1,), X4, 1) is u and str(u.signature["x"]) == "*fp32"


@pytest.mark.parametrize("n,spec", [(64, "i32:16"), (65, "i32"), (0, "i32:16"), (-32, "i32:16"), (-1, "i32"),
                                    (2**31 - 16, "i32:16"), (2**31, "i64:16"), (2**40 + 1, "i64"),
                                    (-(2**31) - 16, "i64:16"), (2**63, "u64:16"), (2**64 - 1, "u64"),
                                    (True, "i1"), (np.int64(48), "i64:16"), (np.int32(7), "i32"),
                                    (np.uint32(16), "u32:16"),
                                    (2.5, "fp32"), (np.float64(1.0), "fp32"), (np.float16(1.0), "fp16")])
def test_scalars_specialize_as_on_the_slow_path(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch,
                                                n: Any, spec: str) -> None:
    ck = both(mod.k, (1,), X, Y, n, 0, BLOCK=32)
    assert str(ck.signature["n"]) == spec
    slow = slow_calls(mod.k, monkeypatch)
    assert mod.k[(1,)](X, Y, n, 0, BLOCK=32) is ck
    assert not slow  # bools and numpy scalars too: their key slot is spec_of's answer


def test_arguments_that_change_kind(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path speculates that each argument keeps the kind of its first launch
    (pointer, int, float); arguments of other kinds take its general code, to the same
    decisions."""
    class OddInt(int):  # an int to spec_of, whatever its data_ptr() and dtype say
        dtype = np.dtype(np.float32)

        def data_ptr(self) -> int:
            return 0

    f16 = FakeTensor(X.ptr, np.float16)
    calls = [(X, Y, 64), (X, Y, 2.5), (X, Y, np.int64(64)), (X, Y, True), (X4, Y, 65), (f16, Y, 64),
             (X, Y, 2**40), (X, 7, 64), (X, Y, np.float32(1.0)), (X, Y, -48), (Y, X4, 2**63), (X, Y, X),
             (X, Y, X4), (OddInt(16), Y, 64), (OddInt(17), Y, 64)]
    first = [both(mod.k, (1,), *args, 0, BLOCK=32) for args in calls]
    # -48 is 64's variant, np.float32 2.5's, np.int64(64) 2**40's
    assert len({id(ck) for ck in first}) == len(mod.k.cache) == len(calls) - 3
    slow = slow_calls(mod.k, monkeypatch)
    for _ in range(2):
        assert [mod.k[(1,)](*args, 0, BLOCK=32) for args in calls] == first
    assert len(slow) == 4  # OddInt (is it a pointer? spec_of says no) takes the slow path, right
    # an array where an int was: never touched by arithmetic (on a GPU tensor, `& 15` launches a kernel)
    class TorchLike(FakeTensor):
        ops: list[str] = []

        def __and__(self, other: Any) -> Any:
            self.ops.append("&")
            return 0

    t = TorchLike(X.ptr)
    assert both(mod.k, (1,), X, Y, t, 0, BLOCK=32) is first[calls.index((X, Y, X))]
    assert mod.k[(1,)](X, Y, t, 0, BLOCK=32) is first[calls.index((X, Y, X))] and not TorchLike.ops
    # a parameter first given a float (eps), then ints
    calls = [(1.0,), (64,), (65,), (np.float16(1.0),), (X,), (X4,)]
    first = [both(mod.mixed, (1,), X, 8, 16, *args) for args in calls]
    assert len({id(ck) for ck in first}) == len(mod.mixed.cache) == len(calls)
    slow = slow_calls(mod.mixed, monkeypatch)
    assert [mod.mixed[(1,)](X, 8, 16, *args) for args in calls] == first
    assert not slow


def test_divisibility_and_do_not_specialize(gpu: Any, mod: Any) -> None:
    div = both(mod.k, (1,), X, Y, 1024, 7, BLOCK=32)
    nodiv = both(mod.k, (1,), X, Y, 1000, 7, BLOCK=32)
    assert div is not nodiv and len(mod.k.cache) == 2
    assert both(mod.k, (1,), X, Y, 1024, 1024, BLOCK=32) is div  # m is not specialized
    assert both(mod.k, (1,), X, Y, 1024, 2**40, BLOCK=32) is not div  # but its type still is (i64)


def test_integer_too_large_is_the_slow_paths_error(gpu: Any, mod: Any) -> None:
    mod.k[(1,)](X, Y, 1, 0, BLOCK=32)
    with pytest.raises(tlxc.CompilationError, match="does not fit in 64 bits") as info:
        mod.k[(1,)](X, Y, 2**64, 0, BLOCK=32)
    assert info.value.code == "TLXC-LAUNCH-003"


def test_constexpr_change_is_a_new_variant(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    b32 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32)
    b64 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=64)
    assert b64 is not b32 and b64.constants == {"BLOCK": 64, "FLAG": 1}
    assert both(mod.k, (1,), X, Y, 64, 0, BLOCK=32, FLAG=0) is not b32
    # the same values in other forms choose the same variant
    assert both(mod.k, (1,), X, Y, 64, 0, 32) is b32
    assert both(mod.k, (1,), X, Y, 64, 0, 32, 1) is b32
    assert both(mod.k, (1,), X, Y, 64, 0, BLOCK=32, FLAG=1) is b32
    assert both(mod.k, (1,), X, Y, 64, 0, BLOCK=tlxc.language.constexpr(32)) is b32
    slow = slow_calls(mod.k, monkeypatch)
    for call in (lambda: mod.k[(1,)](X, Y, 64, 0, 32), lambda: mod.k[(1,)](X, Y, 64, 0, BLOCK=32),
                 lambda: mod.k[(1,)](X, Y, 64, 0, BLOCK=tlxc.language.constexpr(32))):
        assert call() is b32
    assert not slow


def test_dtype_change_is_a_new_variant(gpu: Any, mod: Any) -> None:
    f32 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32)
    f16 = both(mod.k, (1,), FakeTensor(X.ptr, np.float16), Y, 64, 0, BLOCK=32)
    assert f16 is not f32 and str(f16.signature["x"]) == "*fp16:16"
    with pytest.raises(tlxc.CompilationError, match="dtype") as info:
        mod.k[(1,)](FakeTensor(X.ptr, np.complex64), Y, 64, 0, BLOCK=32)
    assert info.value.code == "TLXC-LAUNCH-003"


def test_module_global_change_recompiles(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    first = mod.g[(1,)](X, 1)
    slow = slow_calls(mod.g, monkeypatch)
    assert mod.g[(1,)](X, 1) is first and not slow
    mod.SCALE = mod.tl.constexpr(7)
    second = mod.g[(1,)](X, 1)
    assert second is not first and len(slow) == 1
    assert second.recompile_reason == "module globals changed: " + mod.__name__ + ".SCALE"
    assert mod.g[(1,)](X, 1) is second and len(slow) == 1
    mod.SCALE = mod.tl.constexpr(7)  # another object, the same value: checked once, no recompile
    assert mod.g[(1,)](X, 1) is second and len(slow) == 2
    assert mod.g[(1,)](X, 1) is second and len(slow) == 2
    mod.SCALE.value = 9  # changed in place
    third = mod.g[(1,)](X, 1)
    assert third is not second and third.used_globals == {mod.__name__ + ".SCALE": 9}


def test_cache_writes_empty_the_fast_table(gpu: Any, mod: Any) -> None:
    first = mod.k[(1,)](X, Y, 64, 0, BLOCK=32)
    mod.k.cache.clear()
    second = mod.k[(1,)](X, Y, 64, 0, BLOCK=32)
    assert second is not first and mod.k.last_compiled is second
    mod.k.cache = {}
    assert mod.k[(1,)](X, Y, 64, 0, BLOCK=32) not in (first, second)


def _call_site(fn: Callable[[], Any]) -> tuple[int, int]:
    line = fn.__code__.co_firstlineno
    return line, linecache.getline(__file__, line).index("mod.")


@pytest.mark.parametrize("warm", [False, True])
def test_wrong_calls_raise_the_slow_paths_errors_at_the_callers_line(gpu: Any, mod: Any, warm: bool) -> None:
    if warm:  # the fast table holds a variant: the fast path is the one that sees these calls
        mod.k[(1,)](X, Y, 64, 0, BLOCK=32)
        mod.mixed[(1,)](X, 8, 16)
    cases: list[tuple[str, str, Callable[[], Any]]] = [
        ("TLXC-LAUNCH-001", "missing argument 'm'", lambda: mod.k[(1,)](X, Y, 64, BLOCK=32)),
        ("TLXC-LAUNCH-001", "missing argument 'n'", lambda: mod.k[(1,)](X, Y, m=1, BLOCK=32)),
        ("TLXC-LAUNCH-001", "takes 6 arguments", lambda: mod.k[(1,)](X, Y, 64, 0, 32, 1, 2)),
        ("TLXC-LAUNCH-001", "'x' given twice", lambda: mod.k[(1,)](X, Y, 64, 0, x=X, BLOCK=32)),
        ("TLXC-LAUNCH-001", "'BLOCK' given twice", lambda: mod.k[(1,)](X, Y, 64, 0, 32, BLOCK=32)),
        ("TLXC-LAUNCH-001", "no parameter 'z'", lambda: mod.k[(1,)](X, Y, 64, 0, BLOCK=32, z=1)),
        ("TLXC-LAUNCH-002", "'BLOCK' of k has no value", lambda: mod.k[(1,)](X, Y, 64, 0)),
        ("TLXC-LAUNCH-002", "'BLOCK' of k has no value", lambda: mod.k[lambda meta: (1,)](X, Y, 64, 0)),
        ("TLXC-LAUNCH-002", "'B' of mixed has no value", lambda: mod.mixed[(1,)](X, n=16)),
        ("TLXC-LAUNCH-003", "argument 'n': cannot pass", lambda: mod.k[(1,)](X, Y, "64", 0, BLOCK=32)),
        ("TLXC-LAUNCH-003", "not an integer", lambda: mod.k[("a",)](X, Y, 64, 0, BLOCK=32)),
        ("TLXC-LAUNCH-003", "is negative", lambda: mod.k[lambda meta: (-1,)](X, Y, 64, 0, BLOCK=32)),
        ("TLXC-LAUNCH-003", "1 to 3 integers", lambda: mod.k[lambda meta: (1, 1, 1, 1)](X, Y, 64, 0, BLOCK=32)),
        ("TLXC-LAUNCH-003", "num_warps must be", lambda: mod.k[(1,)](X, Y, 64, 0, BLOCK=32, num_warps=3)),
    ]
    for code, message, call in cases:
        with pytest.raises(tlxc.CompilationError) as info:
            call()
        err = info.value
        assert err.code == code and message in err.message, (message, str(err))
        assert err.loc is not None and err.loc.file == __file__, str(err)
        assert (err.loc.line, err.loc.col) == _call_site(call), str(err)
        inner = compiler_frames(err.__traceback__)
        assert len(inner) <= 1, inner  # the user sees one frame of tlxc at most


def test_grid_callable_receives_meta_once_per_launch(gpu: Any, mod: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    def grid(meta: dict[str, Any]) -> tuple[int, int]:
        seen.append(dict(meta))
        return (tlxc.cdiv(meta["n"], meta["BLOCK"]), 2)

    first = mod.k[grid](X, Y, 100, 7, BLOCK=32)
    slow = slow_calls(mod.k, monkeypatch)
    assert mod.k[grid](X, Y, 100, 7, BLOCK=32) is first and not slow
    assert seen == [{"x": X, "y": Y, "n": 100, "m": 7, "BLOCK": 32, "FLAG": 1}] * 2
    assert [g for g, _, _ in gpu.launches] == [(4, 2, 1)] * 2
    # an empty grid: the variant is compiled and returned, nothing runs
    assert mod.k[lambda meta: (0, 4)](X, Y, 100, 7, BLOCK=32) is first
    assert mod.k[(0,)](X, Y, 100, 7, BLOCK=32) is first
    assert len(gpu.launches) == 2


def test_num_warps_and_stages_make_new_variants(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    w4 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32)
    w8 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32, num_warps=8)
    assert w8 is not w4 and w8.options.num_warps == 8 and w8._loaded.num_warps == 8
    assert both(mod.k, (1,), X, Y, 64, 0, BLOCK=32, num_warps=4) is w4
    s2 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32, num_stages=2)
    assert s2 is not w4 and s2.options.num_stages == 2
    slow = slow_calls(mod.k, monkeypatch)
    assert mod.k[(1,)](X, Y, 64, 0, BLOCK=32, num_warps=8) is w8
    assert not slow
    r128 = both(mod.k, (1,), X, Y, 64, 0, BLOCK=32, num_warps=4, maxnreg=128)
    assert r128 is not w4 and r128.options.maxnreg == 128 and ".maxnreg 128" in r128.asm["ptx"]
    assert ".maxnreg" not in w4.asm["ptx"]


def test_stream_is_passed_through(gpu: Any, mod: Any) -> None:
    mod.k[(1,)](X, Y, 64, 0, BLOCK=32, stream=0x55)  # slow path
    mod.k[(1,)](X, Y, 64, 0, BLOCK=32, stream=0x66)  # fast path
    mod.k[(1,)](X, Y, 64, 0, BLOCK=32)
    mod.k[lambda meta: (1,)](X, Y, 64, 0, BLOCK=32, stream=0x77)
    assert [st for _, st, _ in gpu.launches] == [0x55, 0x66, 0, 0x77]


def test_keyword_call_shapes_take_the_fast_path(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ck = mod.k[(1,)](X, Y, 64, 0, BLOCK=32)
    slow = slow_calls(mod.k, monkeypatch)
    assert mod.k[(1,)](x=X, y=Y, n=64, m=0, BLOCK=32) is ck
    assert mod.k[(1,)](X, Y, m=0, n=64, FLAG=1, BLOCK=32) is ck
    assert mod.k[(1,)](X, Y, 64, 0, 32, FLAG=1) is ck
    assert not slow
    assert all(data == gpu.launches[0][2] for _, _, data in gpu.launches)


def test_constexprs_between_runtime_parameters(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a = both(mod.mixed, (1,), X, 8, 16)
    assert a.specialization == "x: *fp32:16, n: i32:16, eps: fp32, B=8, C=4"
    slow = slow_calls(mod.mixed, monkeypatch)
    for call in (lambda: mod.mixed[(1,)](X, 8, 16), lambda: mod.mixed[(1,)](X, 8, 16, 1.0, 4),
                 lambda: mod.mixed[(1,)](X, B=8, n=16), lambda: mod.mixed[(1,)](X, 8, 16, C=4),
                 lambda: mod.mixed[(1,)](x=X, B=8, n=16, eps=2.0)):
        assert call() is a
    assert not slow
    assert mod.mixed[(1,)](X, 8, 16, C=2) is not a
    assert mod.mixed[(1,)](X, 8, 16, 1) is not a  # eps an int: i32


def test_unusual_signatures(gpu: Any, mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a = both(mod.constexprs_only, (1,), 3)
    assert both(mod.constexprs_only, (1,), A=3, B=2) is a and both(mod.constexprs_only, (1,), 3, 2) is a
    # parameters named like builtins and launch options: they are parameters, not options
    s = both(mod.shadowing, (1,), X, 5, 16, 3)
    assert s.specialization == "type: *fp32:16, len: i32, stream: i32:16, num_warps: i32"
    slow_a, slow_s = slow_calls(mod.constexprs_only, monkeypatch), slow_calls(mod.shadowing, monkeypatch)
    assert mod.constexprs_only[(1,)](3) is a and mod.constexprs_only[(1,)](A=3) is a
    assert mod.shadowing[(1,)](X, 5, 16, 3) is s and mod.shadowing[(1,)](X, 5, stream=16, num_warps=3) is s
    assert not slow_a and not slow_s and [st for _, st, _ in gpu.launches[-4:]] == [0] * 4
    with pytest.raises(tlxc.CompilationError, match="takes 2 arguments"):
        mod.constexprs_only[(1,)](3, 2, 1)


def test_host_array_is_refused_on_every_launch(gpu: Any, mod: Any) -> None:
    from tlxc.runtime import LaunchError

    host = np.zeros(4, np.float32)
    for _ in range(2):
        with pytest.raises(LaunchError, match="host memory"):
            mod.k[(1,)](host, Y, 64, 0, BLOCK=32)
    assert not gpu.launches


def test_interpret_switch_is_read_at_each_subscription(gpu: Any, mod: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = FakeTensor(X.ptr, np.int32)
    mod.g[(1,)](out, 1)
    mod.g[(1,)](out, 1)
    assert len(gpu.launches) == 2
    host = np.zeros(1, np.int32)
    monkeypatch.setenv("TLXC_INTERPRET", "1")
    mod.g[(1,)](host, 1)
    assert host[0] == 2 and len(gpu.launches) == 2
    monkeypatch.setenv("TLXC_INTERPRET", "0")
    mod.g[(1,)](out, 1)
    monkeypatch.delenv("TLXC_INTERPRET")
    mod.g[(1,)](out, 1)
    assert len(gpu.launches) == 4


def test_int_equal_to_one_is_a_constant_as_in_triton(load_kernels) -> None:
    """Triton specializes an int argument equal to 1 as the constant 1 (unit strides make
    accesses provably contiguous); both launch paths agree, and the value is still passed."""
    import numpy as np

    mod = load_kernels("""
@tlxc.jit
def k(x, stride, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs * stride))
""")
    x = np.arange(32, dtype=np.float32)
    out = np.zeros(16, np.float32)
    mod.k.interpret[(1,)](x, 1, out, BLOCK=16)
    np.testing.assert_array_equal(out, x[:16])
    one = mod.k.last_compiled
    assert one.signature["stride"].equals_one and "stride: i32=1" in one.specialization
    assert "splat %stride" not in one.asm["ir"]  # the kernel never reads the argument
    mod.k.interpret[(1,)](x, 2, out, BLOCK=16)
    np.testing.assert_array_equal(out, x[::2])
    assert not mod.k.last_compiled.signature["stride"].equals_one
    assert "stride: i32 -> i32" in mod.k.last_compiled.recompile_reason or mod.k.last_compiled is not one
