"""``plan_shared_access`` (where each register of a distributed tile lives in a buffer)
and the buffer-view layouts of ``buffer_layouts``, checked by brute force: every
register of every thread against the layouts, and a shared-memory store followed by a
load through a transposed or sliced view, emulated on a byte array with the planned
addresses -- the addresses the PTX lowering emits -- gives the numpy answer."""

from __future__ import annotations

import numpy as np
import pytest

from tlxc.ir.layout import LinearLayout, blocked
from tlxc.ir.layout.linear import LayoutError
from tlxc.ir.layout.nvidia import choose_nvmma_swizzle, nvmma_shared
from tlxc.ir.layout.shared_access import check_access, plan_shared_access
from tlxc.ir.passes.buffer_layouts import (
    default_layout,
    nvmma_swizzle_of,
    plain_layout,
    slice_offset,
    slice_view,
    trans_view,
)
from tlxc.ir.types import MemDescType, float16, float32, int8


def _blocked(shape: tuple[int, int], vec: int, order: tuple[int, int] = (1, 0), warps: int = 4) -> LinearLayout:
    """A blocked layout of 32 lanes and ``warps`` warps, ``vec`` elements per thread
    along ``order[0]``."""
    fast, slow = order
    spt = [1, 1]
    spt[fast] = min(vec, shape[fast])
    tpw = [1, 1]
    tpw[fast] = min(32, max(1, shape[fast] // spt[fast]))
    tpw[slow] = 32 // tpw[fast]
    wpc = [1, 1]
    wpc[slow] = warps
    return blocked(shape, spt, tpw, wpc, list(order))


def _emulate(dist: LinearLayout, shared: LinearLayout, values: np.ndarray, *, store: bool,
             memory: np.ndarray | None = None, base: int = 0) -> np.ndarray:
    """Run the planned accesses of every thread: store ``values`` (the tile) into
    ``memory`` (element-addressed) or load the tile back from it."""
    plan = plan_shared_access(dist, shared, elem_bits=32, max_vector_bytes=16)
    nthreads = dist.in_dim_size("lane") * dist.in_dim_size("warp")
    nreg = dist.in_dim_bits("register")
    out = np.full(values.shape, -1, values.dtype)
    for tid in range(nthreads):
        for runtime, imm, group in plan.groups():
            addr = base + ((runtime ^ plan.thread_at(tid)) + imm)
            for i, r in enumerate(group):
                coords = dist.apply_flat(r | (tid << nreg))
                idx = tuple(dist.decode_out(coords)[d] for d in dist.out_dims)
                if store:
                    if not (tid & plan.copies):
                        memory[addr + i] = values[idx]  # type: ignore[index]
                else:
                    out[idx] = memory[addr + i]  # type: ignore[index]
    return out


SHARED = [
    ("plain", lambda s: plain_layout(s, 32)),
    ("swizzle32", lambda s: nvmma_shared(s, 32, 32)),
    ("swizzle64", lambda s: nvmma_shared(s, 32, 64)),
    ("swizzle128", lambda s: nvmma_shared(s, 32, 128)),
]


@pytest.mark.parametrize("name,make", SHARED)
@pytest.mark.parametrize("shape", [(32, 32), (64, 32), (16, 64)])
@pytest.mark.parametrize("vec,order", [(1, (1, 0)), (4, (1, 0)), (2, (0, 1)), (4, (0, 1))])
def test_every_register_is_at_its_elements_offset(name: str, make, shape: tuple[int, int], vec: int,
                                                  order: tuple[int, int]) -> None:
    shared = make(shape)
    dist = _blocked(shape, vec, order)
    plan = plan_shared_access(dist, shared, elem_bits=32, max_vector_bytes=16)
    check_access(dist, shared, plan, 128)
    # each vector's registers really are consecutive in the buffer, slot by slot
    for runtime, imm, group in plan.groups():
        assert len(group) == plan.vec
        for i, r in enumerate(group):
            assert plan.offsets[r] == (runtime | imm) + i


def test_vector_width_follows_the_buffer() -> None:
    shape = (64, 32)
    rowwise = _blocked(shape, 4, (1, 0))
    assert plan_shared_access(rowwise, nvmma_shared(shape, 32, 128), elem_bits=32, max_vector_bytes=16).vec == 4
    assert plan_shared_access(rowwise, plain_layout(shape, 32), elem_bits=32, max_vector_bytes=16).vec == 4
    # the same registers against a transposed buffer: consecutive registers are a row apart
    transposed = trans_view(nvmma_shared((32, 64), 32, 128), (1, 0))
    assert plan_shared_access(rowwise, transposed, elem_bits=32, max_vector_bytes=16).vec == 1
    colwise = _blocked(shape, 4, (0, 1))
    assert plan_shared_access(colwise, transposed, elem_bits=32, max_vector_bytes=16).vec == 4
    # 16-bit elements: 8 per 16-byte access; the cap holds
    assert plan_shared_access(_blocked(shape, 8), nvmma_shared(shape, 16, 64), elem_bits=16,
                              max_vector_bytes=16).vec == 8
    assert plan_shared_access(_blocked(shape, 8), nvmma_shared(shape, 16, 64), elem_bits=16,
                              max_vector_bytes=16, max_vec=4).vec == 4


def test_broadcast_threads_are_copies() -> None:
    # 64 elements held by 128 threads: warps 2 and 3 repeat warps 0 and 1
    dist = blocked((64,), [1], [32], [4], [0])
    plan = plan_shared_access(dist, plain_layout((64,), 32), elem_bits=32, max_vector_bytes=16)
    assert plan.copies == 1 << 6  # tid bit 6 = warp bit 1
    check_access(dist, plain_layout((64,), 32), plan, 128)


@pytest.mark.parametrize("name,make", SHARED)
@pytest.mark.parametrize("vec", [1, 4])
def test_store_then_load_through_a_transposed_view_gives_the_transpose(name: str, make, vec: int) -> None:
    R, C = 32, 64
    x = np.arange(R * C, dtype=np.int64).reshape(R, C)
    shared = make((R, C))
    memory = np.full(R * C, -1, np.int64)
    _emulate(_blocked((R, C), vec), shared, x, store=True, memory=memory)
    assert sorted(memory.tolist()) == list(range(R * C))  # a permutation: every element once
    view = trans_view(shared, (1, 0))
    for load_vec, order in ((1, (1, 0)), (4, (1, 0)), (4, (0, 1))):
        y = _emulate(_blocked((C, R), load_vec, order), view, np.zeros((C, R), np.int64), store=False, memory=memory)
        np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("name,make", SHARED)
def test_row_slices_are_views_of_one_base(name: str, make) -> None:
    R, C = 64, 32
    x = np.arange(R * C, dtype=np.int64).reshape(R, C)
    shared = make((R, C))
    memory = np.full(R * C, -1, np.int64)
    _emulate(_blocked((R, C), 4), shared, x, store=True, memory=memory)
    for start, rows in ((0, 32), (32, 32), (16, 16), (48, 8)):
        view = slice_view(shared, (rows, C))
        base = slice_offset(shared, (rows, C), (start, 0))
        y = _emulate(_blocked((rows, C), 4), view, np.zeros((rows, C), np.int64), store=False, memory=memory,
                     base=base)
        np.testing.assert_array_equal(y, x[start:start + rows])


def test_column_slices_of_plain_buffers_have_holes() -> None:
    R, C = 16, 64
    shared = plain_layout((R, C), 32)
    view = slice_view(shared, (R, 16))
    # offset bits 4 and 5 (columns 16 and 32) are not the slice's: holes
    assert view.in_bases("offset")[4] == (0, 0) and view.in_bases("offset")[5] == (0, 0)
    x = np.arange(R * C, dtype=np.int64).reshape(R, C)
    memory = x.reshape(-1).copy()
    for c0 in (0, 16, 32, 48):
        base = slice_offset(shared, (R, 16), (0, c0))
        y = _emulate(_blocked((R, 16), 4), view, np.zeros((R, 16), np.int64), store=False, memory=memory, base=base)
        np.testing.assert_array_equal(y, x[:, c0:c0 + 16])


def test_slices_across_a_swizzle_are_refused() -> None:
    with pytest.raises(LayoutError, match="does not cover a block"):
        slice_view(nvmma_shared((64, 64), 16, 128), (64, 32))
    # whole swizzle spans are fine
    slice_view(nvmma_shared((64, 128), 16, 128), (64, 64))


@pytest.mark.parametrize("shape,bits,want", [
    ((64, 64), 16, 128), ((128, 32), 16, 64), ((64, 16), 16, 32), ((64, 8), 16, 0), ((16, 16), 32, 64),
    ((4, 64), 16, 0), ((64,), 32, 0), ((2, 8, 64), 16, 128), ((64, 32), 8, 32),
])
def test_swizzle_choice(shape: tuple[int, ...], bits: int, want: int) -> None:
    assert choose_nvmma_swizzle(shape, bits) == want
    layout = default_layout(shape, bits)
    assert layout.is_bijective()
    dtype = {8: int8, 16: float16, 32: float32}[bits]
    assert nvmma_swizzle_of(MemDescType(shape, dtype, 1, "smem", layout)) == want
    if len(shape) == 2:  # a transposed view is no NVMMA layout of its shape
        assert nvmma_swizzle_of(MemDescType(shape[::-1], dtype, 0, "smem", trans_view(layout, (1, 0)))) in (None,
                                                                                                           want)
