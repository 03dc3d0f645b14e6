"""What Triton's tutorials use beyond kernels, as a new user meets it with the module
renamed: ``driver.active`` under ``TLXC_INTERPRET=1`` on a machine without a GPU (a
stand-in sm_90a device on the CPU), CPU torch tensors as interpreter arguments, and
the ``CompiledKernel`` surface of tutorial 02 (``warmup``, ``n_regs``, ``compiled[grid](...)``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def scale(x, y, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n) * s, mask=offs < n)


@pytest.fixture
def interpreting(monkeypatch: Any) -> None:
    monkeypatch.setenv("TLXC_INTERPRET", "1")


def test_driver_active_describes_a_stand_in_device_when_interpreting(interpreting: None, monkeypatch: Any) -> None:
    from tlxc.runtime import driver, hip
    from tlxc.runtime.errors import NoGPUError

    def no_gpu() -> Any:
        raise NoGPUError("no GPU here")

    monkeypatch.setattr(driver, "device", no_gpu)
    monkeypatch.setattr(hip, "device", no_gpu)
    a = tlxc.runtime.driver.active
    t = a.get_current_target()
    assert (t.backend, t.arch, t.warp_size) == ("cuda", 90, 32) and t.is_cuda_backend()
    props = a.utils.get_device_properties(0)
    assert props["multiprocessor_count"] == 132 and props["max_shared_mem"] == 232448 and props["warpSize"] == 32
    assert a.get_current_device() == 0 and a.get_current_stream() == 0
    monkeypatch.setenv("TLXC_INTERPRET", "0")  # not interpreting: the missing GPU is an error again
    with pytest.raises(NoGPUError):
        a.get_current_target()


@pytest.mark.interpreter_only  # CPU torch tensors are interpreter arguments by design
def test_cpu_torch_tensors_are_interpreter_arguments() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(100, dtype=torch.float32)
    y = torch.zeros(100)
    scale.interpret[(2,)](x, y, 100, 2.0, BLOCK=64)
    assert torch.equal(y, x * 2)
    xb = torch.arange(64, dtype=torch.bfloat16)
    yb = torch.zeros(64, dtype=torch.bfloat16)
    scale.interpret[(1,)](xb, yb, 64, 0.5, BLOCK=64)
    assert torch.equal(yb, xb * 0.5)


def test_compiled_kernel_grid_launch_takes_every_argument(interpreting: None) -> None:
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    ck = scale.warmup(x, y, 100, 3.0, BLOCK=64, grid=(2,))
    assert ck.n_regs > 0 if "cubin" in ck.asm.available() else True
    ck[(2, 1, 1)](x, y, 100, 3.0, 64)  # constexprs positional too, as tutorial 02 passes them
    np.testing.assert_array_equal(y, x * 3)
    with pytest.raises(tlxc.CompilationError, match="launched without n, s"):
        ck[(2,)](x, y)


def test_src_and_unsafe_update_src_rewrite_a_kernel(interpreting: None) -> None:
    """Triton's test_core patches kernels this way: take ``.src``, replace a placeholder,
    ``_unsafe_update_src``; the new text is what compiles (the old variants are dropped)."""
    k = tlxc.JITFunction(scale.fn)
    assert "tl.store(y + offs, tl.load(x + offs, mask=offs < n) * s, mask=offs < n)" in k.src
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    k[(1,)](x, y, 64, 2.0, BLOCK=64)
    np.testing.assert_array_equal(y, x * 2)
    k._unsafe_update_src(k.src.replace("* s", "+ s"))
    k[(1,)](x, y, 64, 2.0, BLOCK=64)
    np.testing.assert_array_equal(y, x + 2)
    with pytest.raises(tlxc.CompilationError, match="does not parse"):
        k._unsafe_update_src("def broken(:")


def test_interpreter_error_under_triton_spelling() -> None:
    from tlxc.runtime.errors import InterpreterError

    assert InterpreterError is tlxc.InterpreterError


def test_reinterpret_passes_a_tensor_as_another_element_type() -> None:
    """``tlxc.reinterpret(t, tl.uint32)``: the kernel's pointer is *u32 over t's bytes (a
    logical shift of -2 gives 2**31 - 1), in the interpreter and in the signature."""
    x = np.array([-2, -4, 8, 16] * 4, np.int32)
    y = np.zeros(16, np.int32)

    @tlxc.jit
    def halve(x, y, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(y + offs, tl.load(x + offs) >> 1)

    halve.interpret[(1,)](tlxc.reinterpret(x, tl.uint32), tlxc.reinterpret(y, tl.uint32), N=16)
    assert y[:4].tolist() == [2 ** 31 - 1, 2 ** 31 - 2, 4, 8]
    halve.interpret[(1,)](x, y, N=16)
    assert y[:4].tolist() == [-1, -2, 4, 8]
    ck = halve.warmup(tlxc.reinterpret(x, tl.uint32), y, N=16, arch="sm_90a")
    assert str(ck.signature["x"]).startswith("*u32")
    with pytest.raises(ValueError, match="keeps the element size"):
        tlxc.reinterpret(x, tl.uint8)
