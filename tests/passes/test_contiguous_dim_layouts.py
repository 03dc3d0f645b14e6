"""Pointer tiles contiguous along a dim other than the last (``contiguous_layouts``):
a ``[K, N]`` B tile of a K-contiguous matrix (tutorial 09 passes ``b.T``: ``stride_bk = 1``)
and an ``[M, K]`` A tile of an M-contiguous one. The layout pass vectorizes their pointer
tiles along dim 0, ``buffer-layouts`` makes the ``cp.async`` ring they fill contiguous
along dim 0 (the transposed NVMMA layout: K-major B, MN-major A), and the copies are
16-byte ``cp.async`` with no ``ld.global`` / ``st.shared`` fallback. The normal
(row-major) strides keep the layouts they had."""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tlxc.codegen import access
from tlxc.codegen.nvptx.toolchain import find_tool
from tlxc.ir import ops
from tlxc.ir.layout.nvidia import nvmma_shared
from tlxc.ir.layout.shared_access import check_access, plan_shared_access
from tlxc.ir.layout.wgmma import operand_major
from tlxc.ir.passes.contiguous_layouts import blocked_in_order

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from matmul import matmul_kernel  # noqa: E402

# a_ptr, b_ptr, c_ptr, M, N, K, then stride_am, stride_ak, stride_bk, stride_bn; ':1' = equal to 1
STRIDES = {
    "row-major": "i32:16,i32:1,i32:16,i32:1",  # A [M, K] K-contiguous, B [K, N] N-contiguous
    "b-k-contiguous": "i32:16,i32:1,i32:1,i32:16",  # B = b_nt.T
    "a-m-contiguous": "i32:1,i32:16,i32:16,i32:1",  # A = a_t.T
}


@cache
def compiled(strides: str, arch: str = "sm_90a", bn: int = 128, warps: int = 4) -> Any:
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16," + STRIDES[strides] + ",i32:16,i32:1"
    return matmul_kernel.compile(sig, constants=dict(BLOCK_M=128, BLOCK_N=bn, BLOCK_K=64, GROUP_SIZE_M=8),
                                 arch=arch, num_warps=warps, num_stages=3)


def async_loads(strides: str, arch: str = "sm_90a") -> dict[tuple[int, ...], list[ops.AsyncLoadOp]]:
    """The lowered kernel's ``async_load`` ops by tile shape ([128, 64] A, [64, 128] B)."""
    out: dict[tuple[int, ...], list[ops.AsyncLoadOp]] = {}
    for op in compiled(strides, arch).lowered().funcs[0].walk():
        if isinstance(op, ops.AsyncLoadOp):
            out.setdefault(op.ptr.type.shape, []).append(op)
    return out


def test_blocked_in_order_along_dim0() -> None:
    layout = blocked_in_order((64, 128), 8, [0, 1], 32, 4)
    assert list(layout.in_bases("register")[:3]) == [(1, 0), (2, 0), (4, 0)]
    assert list(layout.in_bases("lane")) == [(8, 0), (16, 0), (32, 0), (0, 1), (0, 2)]
    assert list(layout.in_bases("warp")) == [(0, 4), (0, 8)]
    assert access.vector_dim(layout) == 0
    canonical = blocked_in_order((64, 128), 8, [1, 0], 32, 4)
    assert list(canonical.in_bases("register")[:3]) == [(0, 1), (0, 2), (0, 4)]
    assert access.vector_dim(canonical) == 1


@pytest.mark.parametrize("strides, shape, operand, dim, major", [
    ("b-k-contiguous", (64, 128), "B", 0, "K"),
    ("a-m-contiguous", (128, 64), "A", 0, "MN"),
    ("row-major", (64, 128), "B", 1, "MN"),
    ("row-major", (128, 64), "A", 1, "K"),
])
def test_pointer_and_ring_layouts(strides: str, shape: tuple[int, int], operand: str, dim: int, major: str) -> None:
    loads = async_loads(strides)[shape]
    assert len(loads) == 3  # two prologue copies and the loop's (num_stages=3)
    transposed = dim == 0
    want = nvmma_shared(shape, 16, 128, transposed=transposed)
    for op in loads:
        ptr = op.ptr.type.layout
        step = (1, 0) if dim == 0 else (0, 1)
        assert list(ptr.in_bases("register")[:3]) == [tuple(c * k for c in step) for k in (1, 2, 4)]
        assert access.vector_dim(ptr) == dim
        buf = op.buf.type.layout
        assert buf == want
        assert operand_major(buf, operand) == major


@pytest.mark.parametrize("strides", list(STRIDES))
def test_copy_offsets_match_the_ring_layout(strides: str) -> None:
    """Every register of every thread lands at the buffer offset that holds its element, in
    16-byte vectors: what the ``async_load`` lowering's addresses are computed from."""
    for loads in async_loads(strides).values():
        for op in loads:
            dist, buf = op.ptr.type.layout, op.buf.type.layout
            plan = plan_shared_access(dist, buf, elem_bits=16, max_vector_bytes=16)
            assert plan.vec == 8
            check_access(dist, buf, plan, 128)


def _cp_async_sizes(ptx: str) -> list[str]:
    return re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\d+)", ptx)


@pytest.mark.parametrize("strides", ["b-k-contiguous", "a-m-contiguous"])
@pytest.mark.parametrize("bn, warps, copies", [(128, 4, 48), (256, 8, 36)])
def test_sm90a_ptx_copies_16_bytes(strides: str, bn: int, warps: int, copies: int) -> None:
    ck = compiled(strides, "sm_90a", bn, warps)
    ptx = ck.asm["ptx"]
    # 3 stages x (A + B) tiles of 16 KiB (or 16 + 32 KiB) over 128 (256) threads, 16 bytes each
    assert _cp_async_sizes(ptx) == ["16"] * copies
    assert "ld.global" not in ptx
    assert "wgmma.wait_group.sync.aligned 1;" in ptx
    assert ptx.count("st.shared") == 16  # the epilogue's conversion of C only
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert ck.metadata["spill_stores"] == 0 and ck.metadata["spill_loads"] == 0


@pytest.mark.parametrize("strides", ["b-k-contiguous", pytest.param("a-m-contiguous", marks=pytest.mark.xfail(
    strict=True, reason="mma.sync at 128x128, 4 warps, needs 255 registers with or without rebase-pointers; since "
    "that pass, ptxas spills 40 bytes here (the Blackwell issue replaces this path with tcgen05)"))])
def test_sm100a_mma_sync_copies_16_bytes(strides: str) -> None:
    ck = compiled(strides, "sm_100a")
    ptx = ck.asm["ptx"]
    assert "wgmma" not in ptx and "mma.sync" in ptx
    assert _cp_async_sizes(ptx) == ["16"] * 48
    assert "ld.global" not in ptx
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found")
    assert ck.metadata["spill_stores"] == 0 and ck.metadata["spill_loads"] == 0


@pytest.mark.parametrize("strides", ["b-k-contiguous", "a-m-contiguous"])
def test_unpipelined_operand_stores_16_bytes(strides: str) -> None:
    # num_stages=1: no ring; dot-to-wgmma stores the loaded tile into its own buffer, which
    # takes the same transposed layout as the load's vectors (16-byte st.shared, not one
    # 2-byte store per element)
    sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16," + STRIDES[strides] + ",i32:16,i32:1"
    ck = matmul_kernel.compile(sig, constants=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_SIZE_M=8),
                               arch="sm_90a", num_warps=4, num_stages=1)
    stores = re.findall(r"st\.shared(\.[a-z0-9]+)*", ck.asm["ptx"])
    loop = re.split(r"\$_for_exit\d+:", re.split(r"\$_for_head\d+:", ck.asm["ptx"])[1])[0]
    assert re.findall(r"st\.shared[.a-z0-9]*", loop) == ["st.shared.v4.b32"] * 16  # A and B: 32 KiB / 128 threads
    assert stores  # the epilogue's too
