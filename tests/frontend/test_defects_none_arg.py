"""Regression: ``None`` as a kernel argument. Triton specializes a None argument as the
constant None: it is not a parameter of the compiled kernel, ``if x is None:`` folds,
and the variant differs from the one with a tensor. tlxc refused it at every entry
(TLXC-LAUNCH-003 "cannot pass an argument of type NoneType"); now the launch paths (slow,
fast, interpreter), ``warmup`` and ``compile`` (Triton's ``constexpr`` signature entry
with the value None) take it."""

from __future__ import annotations

import struct
import sys
import types
from typing import Any

import numpy as np
import pytest

import tlxc

SOURCE = """
@tlxc.jit
def k(x, bias, out, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    v = tl.load(x + offs, mask=offs < n)
    if bias is not None:
        v += tl.load(bias + offs, mask=offs < n)
    if bias is None:
        v = v * 2
    tl.store(out + offs, v, mask=offs < n)
"""


def test_interpreter_folds_none_and_keeps_two_variants(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    x, b = np.arange(16, dtype=np.float32), np.full(16, 0.5, np.float32)
    out = np.zeros(16, np.float32)
    none = m.k.interpret[(1,)](x, None, out, 16, B=16)
    np.testing.assert_array_equal(out, x * 2)
    with_bias = m.k.interpret[(1,)](x, b, out, 16, B=16)
    np.testing.assert_array_equal(out, x + 0.5)
    assert none is not with_bias and len(m.k.cache) == 2
    assert none.specialization == "x: *fp32:16, out: *fp32:16, n: i32:16, bias=None, B=16"
    assert m.k.interpret[(1,)](x, None, out, 16, B=16) is none  # the cached variant
    # bias is no parameter of the None variant, and its branch is gone
    assert len(none.func.body.args) == 3 and len(with_bias.func.body.args) == 4
    assert none.asm["ir"].count(" = load ") == 1 and with_bias.asm["ir"].count(" = load ") == 2
    assert with_bias.recompile_reason == "bias: None -> *fp32:16"


def test_is_none_on_a_runtime_value_folds(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def k(out, n):
    if n is None:
        tl.store(out, 1)
    else:
        tl.store(out, 2 if n is not None else 3)
""")
    out = np.zeros(1, np.int32)
    m.k.interpret[(1,)](out, 7)
    assert out[0] == 2
    m.k.interpret[(1,)](out, None)
    assert out[0] == 1


@pytest.mark.parametrize("signature,constants", [
    ("*fp32,None,*fp32,i32", {"B": 16}),  # runtime parameters only, None in place
    ("*fp32,None,*fp32,i32,16", {}),  # every parameter
    ("*fp32,constexpr,*fp32,i32,16", {"bias": None}),  # Triton's spelling, the value in the constants
    ("*fp32,*fp32,i32", {"B": 16, "bias": None}),  # the typed parameters only
    ({"x": "*fp32", "bias": "constexpr", "out": "*fp32", "n": "i32"}, {"B": 16, "bias": None}),  # ASTSource's form
    ({"x": "*fp32", "out": "*fp32", "n": "i32"}, {"B": 16, "bias": None}),
])
def test_compile_ahead_of_time_with_none(load_kernels: Any, signature: Any, constants: dict[str, Any]) -> None:
    m = load_kernels(SOURCE)
    ck = m.k.compile(signature, constants)
    assert ck.specialization == "x: *fp32, out: *fp32, n: i32, bias=None, B=16"
    assert ck.asm["ir"].count(" = load ") == 1
    assert m.k.compile("*fp32,None,*fp32,i32", {"B": 16}) is ck  # one variant, by the same key


@pytest.mark.parametrize("signature,constants,words", [
    ("*fp32,constexpr,*fp32,i32,16", {}, "the signature makes the runtime parameter 'bias' a constexpr, but the "
                                         "constants give it no value"),
    ("*fp32,*fp32,*fp32,i32", {"B": 16, "bias": None}, "'bias' has the type *fp32 in the signature and the value "
                                                       "None in the constants"),
    ("*fp32,*fp32,*fp32,i32", {"B": 16, "n": 3}, "'n' is not a tl.constexpr parameter of k; constants= can give a "
                                                 "runtime parameter the value None only"),
    ("*fp32,*fp32,i32", {"B": 16}, "signature has 3 entries"),
])
def test_compile_refuses_what_it_cannot_read(load_kernels: Any, signature: Any, constants: dict[str, Any],
                                             words: str) -> None:
    m = load_kernels(SOURCE)
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile(signature, constants)
    assert words in info.value.message
    assert info.value.loc is not None and info.value.loc.file == __file__


def test_ptx_of_the_none_variant_has_no_parameter_for_it(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    ptx = m.k.compile("*fp32:16,None,*fp32:16,i32", {"B": 16}).asm["ptx"]
    entry = ptx[ptx.index(".entry"):ptx.index(")")]
    assert entry.count(".param") == 3 and entry.count(".param .u64") == 2 and ".param .s32 k_param_2" in entry


def test_warmup_with_none(load_kernels: Any) -> None:
    m = load_kernels(SOURCE)
    x, out = np.zeros(16, np.float32), np.zeros(16, np.float32)
    ck = m.k.warmup(x, None, out, 16, B=16, arch="sm_90a", grid=(1,))
    assert ck.constants["bias"] is None and "bias" not in ck.signature
    assert m.k.warmup(x, None, out, 16, B=16, arch="sm_90a") is ck


# -- the launch path on a GPU, with the fake driver of tests/conftest.py ------------------------------

class _DType:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


_DType.__module__ = "torch"


@pytest.fixture
def torch(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A stand-in for torch whose Tensor speaks what the trusted launch path reads."""
    mod = types.ModuleType("torch")
    mod.float32 = _DType("float32")

    class Tensor:
        def __init__(self, ptr: int) -> None:
            self.ptr, self.dtype, self.is_cuda = ptr, mod.float32, True
            self.device = types.SimpleNamespace(type="cuda", index=0)

        def data_ptr(self) -> int:
            return self.ptr

        def get_device(self) -> int:
            return 0

    mod.Tensor = Tensor
    mod.cuda = types.SimpleNamespace(is_initialized=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


def _slow_calls(k: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    bind = k.bind

    def spy(*args: Any) -> Any:
        calls.append(1)
        return bind(*args)

    monkeypatch.setattr(k, "bind", spy)
    return calls


@pytest.mark.interpreter_only
@pytest.mark.parametrize("first_with_none", [False, True])
def test_gpu_launches_with_none(fake_driver: Any, torch: Any, load_kernels: Any, monkeypatch: pytest.MonkeyPatch,
                                first_with_none: bool) -> None:
    m = load_kernels(SOURCE)
    x, b, out = (torch.Tensor(0x7F0000000000 + i * 0x100000) for i in range(3))
    order = [None, b] if first_with_none else [b, None]
    variants = {id(v): m.k[(2,)](x, v, out, 64, B=16) for v in order}
    slow = _slow_calls(m.k, monkeypatch)
    none = m.k[(2,)](x, None, out, 64, B=16)
    assert none is variants[id(None)] and none.constants["bias"] is None
    assert m.k[(2,)](x, None, out, 64, B=16) is none
    with_b = m.k[(2,)](x, b, out, 64, B=16)
    assert with_b is variants[id(b)] and with_b is not none
    assert not slow  # repeated launches, with None or not, hit the fast table
    # the speculation and the hot variant come from launches without None
    assert m.k._fast_kinds == ("ptr", "ptr", "ptr", "int") and m.k._fast_trusted
    packed = [data for _, _, data in fake_driver.launches]
    assert packed[-3] == packed[-2] == struct.pack("<QQi", x.ptr, out.ptr, 64)  # no slot for bias
    assert packed[-1] == struct.pack("<QQQi", x.ptr, b.ptr, out.ptr, 64)
