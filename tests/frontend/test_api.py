"""The user-facing API of a kernel: launching in the interpreter, the variant cache and
specialization, AOT compile, grids, and the TLXC_INTERPRET switch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc

SOURCE = """
@tlxc.jit(do_not_specialize=["m"])
def scale(x, out, n, m, FACTOR: tl.constexpr, BLOCK: tl.constexpr = 64):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * FACTOR + m, mask=mask)
"""


@pytest.fixture
def mod(load_kernels: Any) -> Any:
    return load_kernels(SOURCE)


def test_interpret_and_cache(mod: Any) -> None:
    k = mod.scale
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    k.interpret[(2,)](x, out, 100, 32, FACTOR=3)
    np.testing.assert_array_equal(out, x * 3 + 32)
    assert len(k.cache) == 1
    first = k.last_compiled
    assert first.specialization.startswith("x: *fp32:16, out: *fp32:16, n: i32, m: i32")
    out[:] = 0
    k.interpret[(2,)](x, out, 100, 48, FACTOR=3)  # m is not specialized: same variant
    np.testing.assert_array_equal(out, x * 3 + 48)
    assert len(k.cache) == 1
    x2, out2 = np.arange(112, dtype=np.float32), np.zeros(112, np.float32)
    k.interpret[(7,)](x2, out2, 112, 48, FACTOR=3, BLOCK=16)  # n=112 is a multiple of 16
    np.testing.assert_array_equal(out2, x2 * 3 + 48)
    assert len(k.cache) == 2
    assert k.last_compiled.recompile_reason == "n: i32 -> i32:16, BLOCK=64 -> 16"
    k.interpret[(2,)](x.astype(np.float16), out.astype(np.float16), 100, 0, FACTOR=2)
    assert "x: *fp32:16 -> *fp16:16" in k.last_compiled.recompile_reason


def test_grid_callable_gets_meta(mod: Any) -> None:
    x = np.ones(130, dtype=np.float32)
    out = np.zeros_like(x)
    seen = {}

    def grid(meta: dict[str, Any]) -> tuple[int]:
        seen.update(meta)
        return (tlxc.cdiv(meta["n"], meta["BLOCK"]),)

    mod.scale.interpret[grid](x, out, 130, 1, FACTOR=2, BLOCK=32)
    np.testing.assert_array_equal(out, np.full(130, 3, np.float32))
    assert seen["BLOCK"] == 32 and seen["FACTOR"] == 2


def test_env_switch_runs_the_interpreter(mod: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    monkeypatch.setenv("TLXC_INTERPRET", "1")
    mod.scale[(1,)](x, out, 10, 0, FACTOR=5, BLOCK=16)
    np.testing.assert_array_equal(out, x * 5)
    monkeypatch.setenv("TLXC_INTERPRET", "0")
    from tlxc.runtime import gpu_available

    if not gpu_available():  # without a GPU the launch says so clearly
        from tlxc.runtime import NoGPUError

        with pytest.raises(NoGPUError):
            mod.scale[(1,)](x, out, 10, 0, FACTOR=5, BLOCK=16)


def test_aot_compile_forms(mod: Any) -> None:
    a = mod.scale.compile("*fp16:16,*fp16:16,i32:16,i32", {"FACTOR": 2}, arch="gfx1250")
    b = mod.scale.compile({"x": "*fp16:16", "out": "*fp16:16", "n": "i32:16", "m": "i32", "FACTOR": 2})
    c = mod.scale.compile("*fp16:16, *fp16:16, i32:16, i32, 2, 64")
    assert a.asm["ir"] == b.asm["ir"] == c.asm["ir"]
    assert "arg_divisibility = [16, 16, 16, 1]" in a.asm["ir"]
    with pytest.raises(KeyError, match="'ptx' is not an output of gfx1250: NVIDIA targets give it"):
        a.asm["ptx"]


def test_kernel_called_directly_is_an_error(mod: Any) -> None:
    with pytest.raises(RuntimeError, match=r"scale\[grid\]"):
        mod.scale(1, 2, 3, 4)


def test_module_global_change_recompiles(load_kernels: Any) -> None:
    m = load_kernels("""
SCALE = tl.constexpr(2)
@tlxc.jit
def k(out):
    tl.store(out, SCALE)
""")
    out = np.zeros(1, np.int32)
    m.k.interpret[(1,)](out)
    assert out[0] == 2
    m.SCALE = tl_constexpr = m.tl.constexpr(7)  # noqa: F841
    m.k.interpret[(1,)](out)
    assert out[0] == 7
    assert "module globals changed" in m.k.last_compiled.recompile_reason


def test_asm_get_in_and_keys_agree(mod: Any) -> None:
    """asm.get produces on demand like asm[...] (it returned None for a linkable hsaco);
    `in` and keys() show what has been produced so far, available() what [] can give."""
    from ld_lld import skip_without_ld_lld  # tests/ld_lld.py

    from tlxc.codegen.amdgpu.toolchain import find_ld_lld

    k = mod.scale.compile("*fp32,*fp32,i32,i32", constants={"FACTOR": 2}, arch="gfx950")
    assert "hsaco" not in k.asm and "llir" not in k.asm and list(k.asm.keys()) == ["ir"]
    assert k.asm.get("ptx") is None and k.asm.get("ptx", "none") == "none"  # the other family's output
    assert k.asm.get("bogus", 7) == 7
    amdgcn = k.asm.get("amdgcn")
    assert isinstance(amdgcn, str) and "s_endpgm" in amdgcn and "amdgcn" in k.asm
    assert ("hsaco" in k.asm.available()) == (find_ld_lld(0) is not None)  # listed only where a linker is
    skip_without_ld_lld(k._amd_object)  # no ld.lld (or one too old): get raises the tool's error
    assert k.asm.available() == ["amdgcn", "hsaco", "ir", "llir", "target_ir"]
    hsaco = k.asm.get("hsaco")
    assert isinstance(hsaco, bytes) and hsaco[:4] == b"\x7fELF"
    assert "hsaco" in k.asm and k.asm["hsaco"] is hsaco
    assert sorted(k.asm) == ["amdgcn", "hsaco", "ir", "llir"]


def test_triton_error_names_catch_compilation_errors(load_kernels: Any) -> None:
    """Triton's tests catch ``triton.TritonError`` and ``triton.compiler.errors.CompilationError``;
    with the module renamed both names exist and catch tlxc's errors."""
    import tlxc.compiler

    m = load_kernels("""
@tlxc.jit
def bad(x):
    tl.store(x, tl.no_such_thing(1))
""")
    assert tlxc.compiler.errors.CompilationError is tlxc.CompilationError
    with pytest.raises(tlxc.TritonError) as info:
        m.bad.interpret[(1,)](np.zeros(1, np.float32))
    assert isinstance(info.value, tlxc.compiler.errors.CompilationError)
    assert "no_such_thing" in str(info.value)
