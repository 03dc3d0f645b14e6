"""``tl.device_print`` on AMD (tlxc/codegen/amdgpu/lower_print.py, runtime/device_print.py):
the kernel appends records to a buffer passed as its last parameter; the launcher resets the
buffer before the launch and prints the records after it.

No AMD GPU runs here: the code is checked on the emitted ISA for every gfx target, the
launcher through the fake HIP (whose launch writes the records the kernel would, at the
address the launch passed), and the host's lines against the interpreter's for the same
values.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from tlxc.runtime.device_print import HEADER_BYTES, format_records, record_bytes

SOURCE = """
@tlxc.jit
def show(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print(" x: ", x, offs)
    tl.device_print(" hello")
"""


class FakeTensor:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr
        self.dtype = np.dtype(np.float32)

    def data_ptr(self) -> int:
        return self.ptr


def _record(site: int, pid: tuple[int, int, int], index: tuple[int, ...], bits: int | None) -> bytes:
    head = struct.pack(f"<4I{len(index)}I", site, *pid, *index)
    if bits is None:
        return head
    size = record_bytes(len(index), True)
    return head + b"\0" * (size - 8 - len(head)) + struct.pack("<Q", bits & (2 ** 64 - 1))


def _f64(v: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", v))[0])


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_each_element_reserves_and_writes_one_record(load_kernels: Any, arch: str) -> None:
    m = load_kernels(SOURCE)
    ck = m.show.compile("*fp32:16", {"BLOCK": 64}, arch=arch)
    asm = ck.asm["amdgcn"]
    wave = 32 if arch == "gfx1250" else 64
    assert ck.metadata["params"] == ("ptr", "printbuf")
    assert ck.metadata["device_print"] == [
        {"prefix": " x: (operand 0) ", "rank": 1, "kind": "f", "widths": [2]},
        {"prefix": " x: (operand 1) ", "rank": 1, "kind": "i", "widths": [2]},
        {"prefix": " hello", "rank": 0, "widths": [], "kind": None}]
    atomic, store = ("global_atomic_add_u64", "global_store_b") if arch == "gfx1250" else \
        ("global_atomic_add_x2", "global_store_dword")
    # 64 elements over 4 waves: one register a lane; one reservation per site and register
    regs = max(1, 64 // (4 * wave))
    assert asm.count(atomic) == 2 * regs + 1
    assert store in asm and ck.metadata["scratch"] == 0
    # the buffer is the last explicit kernel argument, a global pointer, after x_ptr
    from tlxc.runtime.hip import kernarg_layout

    layout = kernarg_layout(asm, "show")
    assert layout.offsets == (0, 8) and layout.sizes == (8, 8) and layout.kinds == ("global_buffer",) * 2


def _needs_ld_lld() -> None:
    """A launch or ``asm["hsaco"]`` links the code object: skipped where no ld.lld is."""
    from tlxc.codegen.amdgpu import toolchain

    if toolchain.find_ld_lld() is None:
        pytest.skip("no ld.lld here to link the AMDGPU code object (CI installs lld)")


def test_the_launch_passes_a_reset_buffer_and_prints_its_records(fake_hip: Any, load_kernels: Any,
                                                                  capsys: pytest.CaptureFixture) -> None:
    _needs_ld_lld()
    m = load_kernels(SOURCE)
    seen: list[tuple[int, int]] = []

    def kernel(fake: Any, launch: dict[str, Any]) -> None:
        (address,) = struct.unpack_from("<Q", launch["kernargs"], 8)  # after x_ptr
        buf, off = fake.at(address, HEADER_BYTES)
        asked, capacity = struct.unpack_from("<QQ", buf, off)
        seen.append((asked, capacity))
        records = (_record(0, (1, 0, 0), (5,), _f64(2.5)) + _record(1, (1, 0, 0), (5,), 5)
                   + _record(2, (1, 0, 0), (), None))
        buf[off + HEADER_BYTES:off + HEADER_BYTES + len(records)] = records
        struct.pack_into("<Q", buf, off, len(records))

    fake_hip.on_launch = kernel
    m.show[(2,)](FakeTensor(0x10000), BLOCK=64)
    m.show[(2,)](FakeTensor(0x10000), BLOCK=64)
    assert seen == [(0, 1 << 20)] * 2  # reset before each launch
    out = capsys.readouterr().out.splitlines()
    assert out == ["pid (1, 0, 0) idx ( 5) x: (operand 0) 2.500000", "pid (1, 0, 0) idx ( 5) x: (operand 1) 5",
                   "pid (1, 0, 0) hello"] * 2


def test_records_that_do_not_fit_are_reported(fake_hip: Any, load_kernels: Any, capsys: pytest.CaptureFixture,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _needs_ld_lld()
    monkeypatch.setenv("TLXC_PRINT_BUFFER_BYTES", "64")
    m = load_kernels(SOURCE)

    def kernel(fake: Any, launch: dict[str, Any]) -> None:
        (address,) = struct.unpack_from("<Q", launch["kernargs"], 8)
        buf, off = fake.at(address, HEADER_BYTES)
        records = b"".join(_record(1, (0, 0, 0), (i,), i) for i in range(2))  # 2 x 32 bytes: full
        buf[off + HEADER_BYTES:off + HEADER_BYTES + 64] = records
        struct.pack_into("<Q", buf, off, 64 + 3 * 32)  # three more lanes asked

    fake_hip.on_launch = kernel
    m.show[(1,)](FakeTensor(0x10000), BLOCK=64)
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["pid (0, 0, 0) idx ( 0) x: (operand 1) 0", "pid (0, 0, 0) idx ( 1) x: (operand 1) 1"]
    assert "96 bytes of device_print records did not fit in the 64-byte buffer" in out[2]


def test_value_kinds_are_printed_as_printf_prints_them() -> None:
    sites = [{"prefix": " v ", "rank": 2, "kind": k, "widths": [1, 2]} for k in ("f", "i", "u", "p", "x4", "x16")]
    values = [_f64(-0.125), -7, 2 ** 63, 0x7F0012345678, 0xBEEF, 0x0123456789ABCDEF]
    data = b"".join(_record(s, (3, 2, 1), (0, 9), v) for s, v in enumerate(values))
    lines, lost = format_records(sites, struct.pack("<QQ", len(data), 4096) + data)
    assert lost == 0
    assert [ln.split(" v ")[1] for ln in lines] == ["-0.125000", "-7", str(2 ** 63), "0x7f0012345678", "0xbeef",
                                                    "0x0123456789abcdef"]
    assert lines[0].startswith("pid (3, 2, 1) idx (0,  9) v ")


def test_the_lines_are_the_interpreters(load_kernels: Any, capfd: pytest.CaptureFixture) -> None:
    """One record per element, made from the values the interpreter prints, decodes to the
    interpreter's lines."""
    m = load_kernels(SOURCE)
    x = np.linspace(-2, 2, 16).astype(np.float32)
    m.show.interpret[(1,)](x, BLOCK=16)
    want = capfd.readouterr().out.splitlines()
    ck = m.show.compile("*fp32:16", {"BLOCK": 16}, arch="gfx942")
    ck.asm["amdgcn"]
    sites = ck.metadata["device_print"]
    data = b"".join(_record(0, (0, 0, 0), (i,), _f64(float(x[i]))) for i in range(16))
    data += b"".join(_record(1, (0, 0, 0), (i,), i) for i in range(16)) + _record(2, (0, 0, 0), (), None)
    lines, _ = format_records(sites, struct.pack("<QQ", len(data), len(data)) + data)
    assert lines == want


KINDS = """
@tlxc.jit
def kinds(xh, xi8, xu16, xi64, BLOCK: tl.constexpr):
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    h = tl.load(xh + r * BLOCK + c)
    tl.device_print("v", h, tl.load(xi8 + c), tl.load(xu16 + c), tl.load(xi64 + c), r < 3, xh + c)
    tl.device_print("x", h, tl.load(xi8 + c), tl.load(xi64 + c), hex=True)
    tl.device_print("s", tl.program_id(0))
"""


def test_sites_describe_each_operands_type(load_kernels: Any) -> None:
    _needs_ld_lld()
    m = load_kernels(KINDS)
    ck = m.kinds.compile("*fp16:16,*i8:16,*u16:16,*i64:16", {"BLOCK": 128}, arch="gfx950")
    ck.asm["hsaco"]  # links
    sites = ck.metadata["device_print"]
    assert [s["kind"] for s in sites] == ["f", "i", "u", "i", "i", "p", "x4", "x2", "x16", "i"]
    assert [s["rank"] for s in sites] == [2] * 9 + [0]
    # Triton's spelling of the prefix: a space before it, ": " after it when values follow
    assert sites[0]["widths"] == [2, 3] and sites[0]["prefix"] == " v: (operand 0) "
    assert sites[-1] == {"prefix": " s: ", "rank": 0, "kind": "i", "widths": []}
    assert record_bytes(2, True) == 32 and record_bytes(0, True) == 24 and record_bytes(0, False) == 16
