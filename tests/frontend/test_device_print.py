"""tl.device_print: Triton's lines from the interpreter, vprintf in the PTX, and the errors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from codegen_helpers import filecheck  # noqa: E402


@tlxc.jit
def print_1d(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("x", x)


@tlxc.jit
def print_many(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("", x, x.to(tl.float16))
    tl.device_print("h", x.to(tl.int16), x.to(tl.float32), hex=True)
    print("no arg")
    print("", tl.program_id(0))


@tlxc.jit
def print_2d(X, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.device_print("v ", x > 2, x.to(tl.uint8), x.to(tl.int64))


@pytest.mark.interpreter_only  # capsys sees the interpreter's prints, not the GPU's printf
def test_interpreter_prints_triton_lines(capsys: pytest.CaptureFixture[str]) -> None:
    print_1d.interpret[(2,)](np.array([-1, 0, 7, 12], np.int32), BLOCK=4)
    lines = [f"pid ({p}, 0, 0) idx ({i}) x: {v}" for p in range(2) for i, v in enumerate([-1, 0, 7, 12])]
    assert capsys.readouterr().out.splitlines() == lines


@pytest.mark.interpreter_only  # capsys sees the interpreter's prints, not the GPU's printf
def test_interpreter_operands_hex_scalars_and_no_values(capsys: pytest.CaptureFixture[str]) -> None:
    print_many.interpret[(1,)](np.array([-1, 2], np.int32), BLOCK=2)
    assert capsys.readouterr().out.splitlines() == [
        "pid (0, 0, 0) idx (0): (operand 0) -1",
        "pid (0, 0, 0) idx (1): (operand 0) 2",
        "pid (0, 0, 0) idx (0): (operand 1) -1.000000",
        "pid (0, 0, 0) idx (1): (operand 1) 2.000000",
        "pid (0, 0, 0) idx (0) h: (operand 0) 0xffff",
        "pid (0, 0, 0) idx (1) h: (operand 0) 0x0002",
        "pid (0, 0, 0) idx (0) h: (operand 1) 0xbf800000",
        "pid (0, 0, 0) idx (1) h: (operand 1) 0x40000000",
        "pid (0, 0, 0) no arg",
        "pid (0, 0, 0) idx (): 0",
    ]


@pytest.mark.interpreter_only  # capsys sees the interpreter's prints, not the GPU's printf
def test_interpreter_2d_indices_are_padded_as_triton_pads_them(capsys: pytest.CaptureFixture[str]) -> None:
    x = np.arange(2 * 16, dtype=np.int32).reshape(2, 16) - 1  # dims 2 and 16: widths 1 and 2
    print_2d.interpret[(1,)](x, M=2, N=16)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 * 32
    assert out[0] == "pid (0, 0, 0) idx (0,  0) v: (operand 0) 0"
    assert out[31] == "pid (0, 0, 0) idx (1, 15) v: (operand 0) 1"
    assert out[32] == "pid (0, 0, 0) idx (0,  0) v: (operand 1) 255"
    assert out[64 + 17] == "pid (0, 0, 0) idx (1,  1) v: (operand 2) 16"


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptx_calls_vprintf_per_element(arch: str) -> None:
    ck = print_1d.compile("*i32", constants={"BLOCK": 128}, arch=arch, num_warps=4)
    ptx = ck.asm["ptx"]
    # "pid (%u, %u, %u) idx (%3u) x: %i\n" as bytes, NUL-terminated
    fmt = ", ".join(str(b) for b in b"pid (%u, %u, %u) idx (%3u) x: %i\n\0")
    assert f".global .align 1 .b8 printf_format_0[34] = {{{fmt}}};" in ptx
    filecheck(ptx, test_ptx_calls_vprintf_per_element, arch)
    # CHECK: .extern .func (.param .b32 vprintf_retval) vprintf (.param .b64 vprintf_format, .param .b64 vprintf_args);
    # CHECK-LABEL: .entry print_1d(
    # CHECK: .local .align 8 .b8 __local_buf[20];
    # CHECK: cvta.local.u64 [[BUF:%rd[0-9]+]],
    # CHECK: st.local.u32 [__local_buf+0], {{%r[0-9]+}};
    # CHECK: st.local.u32 [__local_buf+8], {{%r[0-9]+}};
    # CHECK: mov.u64 [[FMT:%rd[0-9]+]], printf_format_0;
    # CHECK: cvta.global.u64 [[FMT]], [[FMT]];
    # CHECK: st.local.u32 [__local_buf+12], {{%r[0-9]+}};
    # CHECK: st.local.u32 [__local_buf+16], {{%r[0-9]+}};
    # CHECK: st.param.b64 [vprintf_param_0], [[FMT]];
    # CHECK: st.param.b64 [vprintf_param_1], [[BUF]];
    # CHECK: call (vprintf_retval_0), vprintf, (vprintf_param_0, vprintf_param_1);
    # CHECK-NOT: call.uni
    assert ptx.count("call (vprintf_retval_0), vprintf") == 1  # 128 elements, 128 threads: one each


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptx_promotes_to_varargs_types(arch: str) -> None:
    ptx = print_2d.compile("*i32", constants={"M": 2, "N": 64}, arch=arch, num_warps=4).asm["ptx"]
    filecheck(ptx, test_ptx_promotes_to_varargs_types, arch)
    # an i1 as 0/1 in 32 bits, a u8 zero-extended, an i64 at offset 24 (8-aligned after pid and 2 indices)
    # CHECK: selp.u32 {{%r[0-9]+}}, 1, 0, {{%p[0-9]+}};
    # CHECK: cvt.u32.u8
    # CHECK: st.local.u64 [__local_buf+24],
    ptx_h = print_many.compile("*i32", constants={"BLOCK": 128}, arch=arch).asm["ptx"]
    assert "cvt.f64.f16" in ptx_h and "cvt.u32.u16" in ptx_h and "mov.b32" in ptx_h
    text = b"pid (%u, %u, %u) idx (%3u) h: (operand 1) 0x%08x\n\0"
    assert ", ".join(str(b) for b in text) in ptx_h
    assert ", ".join(str(b) for b in b"pid (%u, %u, %u) no arg\n\0") in ptx_h


def test_ptx_assembles_with_ptxas() -> None:
    from codegen_helpers import ptxas_or_skip

    ptxas_or_skip()
    for arch in ("sm_90a", "sm_100a"):
        for k, sig, const in ((print_1d, "*i32", {"BLOCK": 128}), (print_many, "*i32", {"BLOCK": 256}),
                              (print_2d, "*i32", {"M": 4, "N": 32})):
            assert k.compile(sig, constants=const, arch=arch).asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.interpreter_only  # capsys sees the interpreter's prints, not the GPU's printf
def test_percent_in_the_prefix_is_printed_literally(capsys: pytest.CaptureFixture[str]) -> None:
    @tlxc.jit
    def pct(X):
        tl.device_print("100%", tl.load(X))

    ptx = pct.compile("*i32", arch="sm_90a").asm["ptx"]
    assert ", ".join(str(b) for b in b" 100%%: %i\n\0") in ptx
    pct.interpret[(1,)](np.array([3], np.int32))
    assert capsys.readouterr().out == "pid (0, 0, 0) idx () 100%: 3\n"


def _error(src_kernel, sig: str, arch: str | None = None, **constants: int) -> tlxc.CompilationError:
    with pytest.raises(tlxc.CompilationError) as info:
        ck = src_kernel.compile(sig, constants=constants, arch=arch or "sm_90a")
        ck.asm["amdgcn" if arch else "ptx"]
    return info.value


def test_prefix_must_be_a_constant_string() -> None:
    @tlxc.jit
    def k(X):
        x = tl.load(X)
        tl.device_print(x, x)

    err = _error(k, "*i32")
    assert err.code == "TLXC-CONSTEXPR-001" and "prefix must be a compile-time constant" in str(err)
    assert "tl.device_print(x, x)" in str(err)


def test_too_many_values() -> None:
    @tlxc.jit
    def k(X):
        x = tl.load(X)
        tl.device_print("x", x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x,
                        x, x, x, x, x)

    err = _error(k, "*i32")
    assert err.code == "TLXC-CALL-002" and "at most 32 values per call, got 33" in str(err)
    assert 'tl.device_print("x", x, x' in str(err)


def test_fp8_cannot_be_printed() -> None:
    @tlxc.jit
    def k(X):
        tl.device_print("x", tl.load(X).to(tl.float8e5))

    err = _error(k, "*fp32")
    assert err.code == "TLXC-TYPE-001" and "cannot print tl.float8e5 values (value 1)" in str(err)
    assert "x.to(tl.float32)" in str(err)


def test_non_ascii_prefix_and_python_print_keywords() -> None:
    @tlxc.jit
    def k(X):
        tl.device_print("é", tl.load(X))

    assert _error(k, "*i32").code == "TLXC-CALL-002"

    @tlxc.jit
    def k2(X):
        print("x", tl.load(X), sep=",")

    err = _error(k2, "*i32")
    assert err.code == "TLXC-CALL-002" and "sep" in str(err)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_amd_targets_print_through_a_record_buffer(arch: str) -> None:
    """On AMD the print becomes records in a buffer passed last (tests/runtime/test_device_print_amd.py)."""
    ck = print_1d.compile("*i32", constants={"BLOCK": 128}, arch=arch)
    ck.asm["amdgcn"]
    assert ck.metadata["params"][-1] == "printbuf"
    assert [s["kind"] for s in ck.metadata["device_print"]] == ["i"]
