"""``tl.histogram`` and ``tl.gather``: the interpreter against numpy (values out of range
and masks for the histogram; gathers along either axis of 2-D tiles and of 1-D tiles,
with more or fewer index rows than source rows), the PTX for sm_90a assembled by ptxas,
amdgcn for gfx942 compiled and linked, and the mistakes a user can make, each at the
user's line and column.

Under ``TLXC_TEST_ON_GPU=1`` (root ``conftest.py``) the interpreter tests run the
compiled kernels on the GPU instead, which checks the shared-memory lowering's numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ld_lld import skip_without_ld_lld  # tests/ld_lld.py

import tlxc
import tlxc.language as tl
from tlxc.codegen.nvptx.toolchain import find_tool


# -- kernels ---------------------------------------------------------------------------------
@tlxc.jit
def histogram_kernel(x, out, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    h = tl.histogram(v, BINS, mask=offs < n)
    tl.store(out + tl.arange(0, BINS), h)


@tlxc.jit
def histogram_method(x, out, N: tl.constexpr, BINS: tl.constexpr):
    h = tl.load(x + tl.arange(0, N)).histogram(BINS)
    # the result broadcasts like any [BINS] tile (Triton's test does the same)
    both = h[None, :] + tl.full([2, BINS], 1, tl.int32)
    tl.store(out + tl.arange(0, 2)[:, None] * BINS + tl.arange(0, BINS)[None, :], both)


@tlxc.jit
def gather_2d(src, idx, out, R: tl.constexpr, C: tl.constexpr, IR: tl.constexpr, IC: tl.constexpr,
              AXIS: tl.constexpr):
    s = tl.load(src + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    offs = tl.arange(0, IR)[:, None] * IC + tl.arange(0, IC)[None, :]
    i = tl.load(idx + offs)
    tl.store(out + offs, tl.gather(s, i, AXIS))


@tlxc.jit
def gather_1d(src, idx, out, N: tl.constexpr, M: tl.constexpr):
    s = tl.load(src + tl.arange(0, N))
    offs = tl.arange(0, M)
    tl.store(out + offs, s.gather(tl.load(idx + offs), axis=0))


# -- numbers ---------------------------------------------------------------------------------
def _histogram(x: np.ndarray, bins: int, n: int) -> np.ndarray:
    v = x[:n].astype(np.int64)
    return np.bincount(v[(v >= 0) & (v < bins)], minlength=bins).astype(np.int32)


@pytest.mark.parametrize("dtype,N,BINS", [(np.int32, 64, 16), (np.int32, 1024, 512), (np.int8, 256, 64),
                                          (np.uint8, 128, 128), (np.int64, 32, 8), (np.int16, 8, 2)])
def test_histogram_counts_in_range_unmasked_values(dtype: type, N: int, BINS: int) -> None:
    rng = np.random.default_rng(N + BINS)
    info = np.iinfo(dtype)
    # about a quarter of the values fall outside [0, BINS): negative ones and ones past the end
    lo, hi = max(int(info.min), -BINS // 2), min(int(info.max), BINS + BINS // 2)
    x = rng.integers(lo, hi + 1, N).astype(dtype)
    n = N - N // 4
    out = np.full(BINS, -1, np.int32)
    histogram_kernel.interpret[(1,)](x, out, n, N=N, BINS=BINS)
    want = _histogram(x, BINS, n)
    np.testing.assert_array_equal(out, want)
    assert want.sum() > 0 and want.sum() < n  # some values counted, some not


def test_histogram_of_one_bin_and_the_method_form() -> None:
    x = np.array([0, 1, 0, -1, 5, 0, 0, 1], np.int32)
    out = np.zeros(1, np.int32)
    histogram_kernel.interpret[(1,)](x, out, 8, N=8, BINS=1)
    assert out.tolist() == [4]
    out2 = np.zeros((2, 4), np.int32)
    histogram_method.interpret[(1,)](x, out2, N=8, BINS=4)
    assert out2.tolist() == [[5, 3, 1, 1]] * 2


@pytest.mark.parametrize("R,C,IR,IC,axis", [(8, 16, 32, 16, 0), (64, 32, 16, 32, 0), (16, 8, 16, 32, 1),
                                            (32, 64, 32, 4, 1)])
def test_gather_2d(R: int, C: int, IR: int, IC: int, axis: int) -> None:
    rng = np.random.default_rng(R * C + IR)
    src = rng.standard_normal((R, C)).astype(np.float32)
    idx = rng.integers(0, (R, C)[axis], (IR, IC)).astype(np.int32)
    out = np.zeros((IR, IC), np.float32)
    gather_2d.interpret[(1,)](src, idx, out, R=R, C=C, IR=IR, IC=IC, AXIS=axis)
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx, axis))


@pytest.mark.parametrize("N,M,sdt,idt", [(32, 64, np.float16, np.int64), (128, 16, np.int32, np.uint8),
                                         (16, 256, np.float64, np.int16)])
def test_gather_1d(N: int, M: int, sdt: type, idt: type) -> None:
    rng = np.random.default_rng(N + M)
    src = (rng.standard_normal(N) * 100).astype(sdt)
    idx = rng.integers(0, N, M).astype(idt)
    out = np.zeros(M, sdt)
    gather_1d.interpret[(1,)](src, idx, out, N=N, M=M)
    np.testing.assert_array_equal(out, src[idx])


@pytest.mark.interpreter_only
def test_gather_index_out_of_range_is_reported_by_the_interpreter() -> None:
    src = np.arange(16, dtype=np.float32)
    idx = np.arange(16, dtype=np.int32)
    idx[5] = 16
    with pytest.raises(tlxc.InterpreterError) as info:
        gather_1d.interpret[(1,)](src, idx, np.zeros(16, np.float32), N=16, M=16)
    assert info.value.code == "TLXC-INTERP-001"
    assert "tl.gather: index 16 at [5] is outside [0, 16) along axis 0" in str(info.value)


@tlxc.jit
def booleans(x, idx, hist, out, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N)) > 0
    tl.store(hist + tl.arange(0, 2), tl.histogram(v, 2))
    g = tl.gather(v, tl.load(idx + tl.arange(0, N)), 0)
    tl.store(out + tl.arange(0, N), g.to(tl.int32))


def test_boolean_values_count_as_0_and_1_and_gather() -> None:
    x = np.array([1, -1, 2, 0, 3, 0, 0, 5], np.int32)
    hist, out = np.zeros(2, np.int32), np.zeros(8, np.int32)
    booleans.interpret[(1,)](x, np.arange(8, dtype=np.int32)[::-1].copy(), hist, out, N=8)
    assert hist.tolist() == [4, 4]
    assert out.tolist() == [1, 0, 0, 1, 0, 1, 0, 1]


# -- generated code --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ptxas() -> str:
    exe = find_tool("ptxas")
    if exe is None:
        pytest.skip("ptxas not found")
    return exe


def test_histogram_ptx_assembles(ptxas: str) -> None:
    ck = histogram_kernel.compile("*i8,*i32,i32", {"N": 256, "BINS": 64}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    # zero the bins (64 of 128 threads), count with shared atomics, then read the bins back
    assert "setp.lt.u32" in ptx and "st.shared.u32" in ptx
    assert ptx.count("red.shared.add.u32") == 2  # 256 elements over 128 threads
    assert "cvt.s32.s8" in ptx  # an i8 value is sign-extended: a negative one is not counted
    assert ptx.count("bar.sync 0") == 3
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert ck.metadata["shared"] >= 64 * 4


def test_gather_ptx_assembles(ptxas: str) -> None:
    ck = gather_2d.compile("*fp16,*i64,*fp16", {"R": 64, "C": 32, "IR": 16, "IC": 32, "AXIS": 0}, arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert "st.shared.b16" in ptx and "ld.shared.b16" in ptx
    assert "cvt.u32.u64" in ptx and "and.b32" in ptx
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert ck.metadata["shared"] >= 64 * 32 * 2  # the source tile, row-major


@pytest.mark.parametrize("num_warps", [1, 8])
def test_booleans_compile_for_both_targets(ptxas: str, num_warps: int) -> None:
    ptx = booleans.compile("*i32,*i32,*i32,*i32", {"N": 256}, arch="sm_90a", num_warps=num_warps)
    assert "selp.u32" in ptx.asm["ptx"] and "st.shared.u8" in ptx.asm["ptx"]
    assert ptx.asm["cubin"][:4] == b"\x7fELF"
    amd = booleans.compile("*i32,*i32,*i32,*i32", {"N": 256}, arch="gfx942", num_warps=num_warps)
    assert "s_endpgm" in amd.asm["amdgcn"]
    skip_without_ld_lld(amd._amd_object)
    assert amd.asm["hsaco"][:4] == b"\x7fELF"


def test_gfx942_code() -> None:
    hist = histogram_kernel.compile("*i32,*i32,i32", {"N": 1024, "BINS": 512}, arch="gfx942")
    asm = hist.asm["amdgcn"]
    assert asm.count("ds_add_u32") == 4  # 1024 elements over 256 lanes
    assert "s_barrier" in asm
    gat = gather_2d.compile("*fp32,*i32,*fp32", {"R": 16, "C": 8, "IR": 16, "IC": 32, "AXIS": 1}, arch="gfx942")
    asm = gat.asm["amdgcn"]
    assert "ds_write" in asm and "ds_read" in asm
    skip_without_ld_lld(hist._amd_object)  # the code objects link
    assert hist.asm["hsaco"][:4] == b"\x7fELF"
    assert gat.asm["hsaco"][:4] == b"\x7fELF"


# -- mistakes --------------------------------------------------------------------------------
BAD = {
    "float histogram": ("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    h = tl.histogram(v, 8)  # ERR tl.histogram
""", "*fp32", "TLXC-TYPE-001", "tl.histogram needs integers"),
    "bins not a power of two": ("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    h = tl.histogram(v, 12)  # ERR tl.histogram
""", "*i32", "TLXC-SHAPE-003", "tl.histogram's num_bins is 12; it must be a power of two"),
    "bins not a constant": ("""
@tlxc.jit
def k(x, n):
    v = tl.load(x + tl.arange(0, 16))
    h = tl.histogram(v, n)  # ERR tl.histogram
""", "*i32,i32", "TLXC-CONSTEXPR-001", "num_bins must be a compile-time constant"),
    "2-D histogram": ("""
@tlxc.jit
def k(x):
    v = tl.zeros([4, 4], tl.int32)
    h = tl.histogram(v, 4)  # ERR tl.histogram
""", "*i32", "TLXC-SHAPE-003", "tl.histogram needs a 1-D tile"),
    "mask not boolean": ("""
@tlxc.jit
def k(x):
    offs = tl.arange(0, 16)
    h = tl.histogram(offs, 4, mask=offs)  # ERR tl.histogram
""", "*i32", "TLXC-TYPE-001", "tl.histogram's mask must be a boolean (int1) tensor"),
    "gather rank": ("""
@tlxc.jit
def k(x):
    s = tl.zeros([4, 8], tl.float32)
    i = tl.arange(0, 8)
    g = tl.gather(s, i, 0)  # ERR tl.gather
""", "*fp32", "TLXC-SHAPE-001", "tl.gather's index has rank 1 (shape [8]) but the source has rank 2"),
    "gather shape": ("""
@tlxc.jit
def k(x):
    s = tl.zeros([4, 8], tl.float32)
    i = tl.zeros([4, 16], tl.int32)
    g = s.gather(i, 0)  # ERR s.gather
""", "*fp32", "TLXC-SHAPE-001", "the index has shape [4, 16] and the source [4, 8]; they must agree in dimension 1"),
    "gather float index": ("""
@tlxc.jit
def k(x):
    s = tl.zeros([8], tl.float32)
    g = tl.gather(s, s, 0)  # ERR tl.gather
""", "*fp32", "TLXC-TYPE-001", "tl.gather's index must be an integer tile"),
    "gather axis": ("""
@tlxc.jit
def k(x):
    s = tl.zeros([4, 8], tl.float32)
    i = tl.zeros([4, 8], tl.int32)
    g = tl.gather(s, i, 2)  # ERR tl.gather
""", "*fp32", "TLXC-SHAPE-003", "axis 2 is out of range for a tile of rank 2"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_mistakes_are_reported_at_the_users_line(load_kernels: Any, case: str) -> None:
    source, signature, code, message = BAD[case]
    m = load_kernels(source)
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile(signature)
    err = info.value
    assert err.code == code
    assert message in str(err)
    lines = Path(m.__path_str__).read_text().splitlines()
    (line_no,) = [i + 1 for i, text in enumerate(lines) if "# ERR " in text]
    marker = lines[line_no - 1].split("# ERR ")[1]
    assert err.loc is not None and err.loc.line == line_no
    assert err.loc.col == lines[line_no - 1].index(marker)
