"""Valid TLX forms that were refused: a one-element mbarrier array given to
async_descriptor_load (TLX takes its element), local_reinterpret of a whole
multi-buffered allocation, and TMA blocks wider than the 256-element box (the NVIDIA
lowering splits them into one message per 256 elements)."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import numpy as np
import pytest

import tlxc
from tlxc.codegen.nvptx.toolchain import find_tool

SOURCE = """
import tlxc.tlx as tlx

@tlxc.jit
def rows_through_one_block(src, dst, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    # ROWS buffers of one row each, filled by one TMA load of ROWS * COLS elements
    start = tl.program_id(0) * ROWS * COLS
    din = tl.make_tensor_descriptor(src, shape=[1, n], strides=[n, 1], block_shape=[1, ROWS * COLS])
    dout = tl.make_tensor_descriptor(dst, shape=[1, n], strides=[n, 1], block_shape=[1, ROWS * COLS])
    rows = tlx.local_alloc((1, COLS), tl.float16, ROWS)
    out = tlx.local_alloc((1, COLS), tl.float16, ROWS)
    bar = tlx.alloc_barriers(num_barriers=1)
    tlx.barrier_expect_bytes(bar[0], ROWS * COLS * 2)
    tlx.async_descriptor_load(din, tlx.local_reinterpret(rows, tl.float16, [1, ROWS * COLS]), [0, start], bar)
    tlx.barrier_wait(bar[0], 0)
    for r in range(ROWS):
        tlx.local_store(out[r], tlx.local_load(rows[ROWS - 1 - r]) * 2.0)
    tlx.fence_async_shared()
    tlx.async_descriptor_store(dout, tlx.local_reinterpret(out, tl.float16, [1, ROWS * COLS]), [0, start])
    tlx.async_descriptor_store_wait(0)

@tlxc.jit
def tall(src, dst, n, BLOCK: tl.constexpr):
    d_in = tl.make_tensor_descriptor(src, shape=[n, 64], strides=[64, 1], block_shape=[BLOCK, 64])
    d_out = tl.make_tensor_descriptor(dst, shape=[n, 64], strides=[64, 1], block_shape=[BLOCK, 64])
    buf = tlx.local_alloc((BLOCK, 64), tl.float16, 1)
    bar = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bar[0], BLOCK * 64 * 2)
    tlx.async_descriptor_load(d_in, buf[0], [tl.program_id(0) * BLOCK, 0], bar)
    tlx.barrier_wait(bar[0], 0)
    tlx.async_descriptor_store(d_out, buf[0], [tl.program_id(0) * BLOCK, 0])
    tlx.async_descriptor_store_wait(0)

@tlxc.jit
def wide_rows(src, dst, n, R: tl.constexpr, C: tl.constexpr):
    d = tl.make_tensor_descriptor(src, shape=[n, C], strides=[C, 1], block_shape=[R, C])
    buf = tlx.local_alloc((R, C), tl.float16, 1)
    bar = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bar[0], R * C * 2)
    tlx.async_descriptor_load(d, buf[0], [0, 0], bar)
    tlx.barrier_wait(bar[0], 0)

@tlxc.jit
def no_shape(x):
    bufs = tlx.local_alloc((1, 64), tl.float16, 4)
    v = tlx.local_reinterpret(bufs, tl.float32)
"""

SIG = "*fp16:16,*fp16:16,i32"


@pytest.fixture
def mod(load_kernels: Any) -> Any:
    return load_kernels(textwrap.dedent(SOURCE))


def _expected(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    return (x.reshape(-1, rows, cols)[:, ::-1, :] * np.float16(2)).reshape(x.shape)


def test_interpreter(mod: Any) -> None:
    x = (np.arange(2 * 64 * 128) % 251).astype(np.float16)[None]
    y = np.zeros_like(x)
    mod.rows_through_one_block.interpret[(2,)](x, y, x.size, ROWS=64, COLS=128)
    np.testing.assert_array_equal(y, _expected(x, 64, 128))
    a = np.arange(1024 * 64, dtype=np.float16).reshape(1024, 64)
    b = np.zeros_like(a)
    mod.tall.interpret[(2,)](a, b, 1024, BLOCK=512)
    np.testing.assert_array_equal(b, a)


def test_one_row_block_of_8192_is_32_messages(mod: Any) -> None:
    k = mod.rows_through_one_block.compile(SIG, {"ROWS": 64, "COLS": 128}, arch="sm_90a")
    ptx = k.asm["ptx"]
    loads = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\S* \[(%r\d+)(?:\+(\d+))?\]", ptx)
    stores = re.findall(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group \[[^]]*\], \[(%r\d+)"
                        r"(?:\+(\d+))?\]", ptx)
    assert len(loads) == len(stores) == 32
    assert [int(off or 0) for _, off in loads] == [512 * i for i in range(32)]  # 256 fp16 per message
    assert [int(off or 0) for _, off in stores] == [512 * i for i in range(32)]
    # each descriptor's box is 256 x 1
    assert ptx.count("tensormap.replace.tile.box_dim.shared::cta.b1024.b32") == 4
    assert len(re.findall(r"box_dim\S* \[%r\d+\], 0, 256;", ptx)) == 2
    assert ptx.count("cp.async.bulk.commit_group") == 1
    if find_tool("ptxas") is not None:
        assert k.asm["cubin"][:4] == b"\x7fELF"


def test_tall_block_is_two_messages(mod: Any) -> None:
    k = mod.tall.compile(SIG, {"BLOCK": 512}, arch="sm_90a")
    ptx = k.asm["ptx"]
    loads = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\S* \[%r\d+(?:\+(\d+))?\]", ptx)
    assert [int(o or 0) for o in loads] == [0, 256 * 64 * 2]  # rows 0-255, then rows 256-511


@pytest.mark.interpreter_only  # the interpreter runs what the NVIDIA code generator refuses
def test_split_that_would_miscopy_is_refused(mod: Any) -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        mod.wide_rows.compile(SIG, {"R": 4, "C": 512}, arch="sm_90a").asm["ptx"]
    assert info.value.code == "TLXC-TLX-003"
    assert "TMA block [4, 512]: dimension 1 is over the hardware's 256 elements per message" in str(info.value)
    x = np.arange(8 * 512, dtype=np.float16).reshape(8, 512)
    mod.wide_rows.interpret[(1,)](x, x, 8, R=4, C=512)  # the interpreter has no box limit


def test_reinterpret_of_an_array_needs_a_shape(mod: Any) -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        mod.no_shape.compile("*fp32", arch="sm_90a")
    assert "local_reinterpret of an array of 4 buffers needs the shape of the whole allocation" in str(info.value)


def test_one_barrier_array_for_a_tma_load(mod: Any) -> None:
    """tlx.alloc_barriers(1) passed whole to async_descriptor_load (block within the box limit)."""
    a = np.arange(256 * 64, dtype=np.float16).reshape(256, 64)
    b = np.zeros_like(a)
    mod.tall.interpret[(2,)](a, b, 256, BLOCK=128)
    np.testing.assert_array_equal(b, a)
    ptx = mod.tall.compile(SIG, {"BLOCK": 128}, arch="sm_90a").asm["ptx"]
    assert ptx.count("mbarrier::complete_tx::bytes") == 1


AMD_SOURCE = """
@tlxc.jit
def plus_one(x, y, n, BLOCK: tl.constexpr):
    d = tl.make_tensor_descriptor(x, shape=[n], strides=[1], block_shape=[BLOCK])
    e = tl.make_tensor_descriptor(y, shape=[n], strides=[1], block_shape=[BLOCK])
    e.store([tl.program_id(0) * BLOCK], d.load([tl.program_id(0) * BLOCK]) + 1)
"""


def test_amd_descriptor_has_no_box_limit(load_kernels: Any) -> None:
    """On gfx1250 a descriptor becomes masked pointer accesses: NVIDIA's 256-element box
    limit refused BLOCK=1024 there."""
    mod = load_kernels(AMD_SOURCE)
    k = mod.plus_one.compile("*fp32:16,*fp32:16,i32", {"BLOCK": 1024}, arch="gfx1250")
    asm = k.asm["amdgcn"]
    assert "global_load" in asm and "global_store" in asm and "tensormap" not in asm
    x = np.arange(3000, dtype=np.float32)
    y = np.zeros_like(x)
    mod.plus_one.interpret[(3,)](x, y, 3000, BLOCK=1024)
    np.testing.assert_array_equal(y, x + 1)
