"""Kernels for tests/codegen/test_amd_tlx.py: LDS buffers and explicitly scheduled MFMA
chains compiled for the AMD targets (the interpreter kernels of tests/tlx cover the rest)."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def store_two_loads(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    """y = 2 x through one LDS buffer: a store, then two loads (one hazard barrier)."""
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    buf = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 1)
    tlx.local_store(buf[0], tl.load(x_ptr + offs))
    a = tlx.local_load(buf[0])
    b = tlx.local_load(buf[0])
    tl.store(y_ptr + offs, a + b)


@tlxc.jit
def fragments_2x2(a_ptr, b_ptr, c_ptr, K: tl.constexpr, ROLE: tl.constexpr):
    """C [64, 64] = A [64, K] @ B [K, 64] in one wave: 2 x 2 native 32x32 fragments."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[32, 32, 16], transposed=True,
                                            warps_per_cta=[1, 1])
    rm = tl.arange(0, 64)
    rk = tl.arange(0, K)
    a = tlx.require_layout(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tlx.dot_operand_layout(0, mma, 8))
    b = tlx.require_layout(tl.load(b_ptr + rk[:, None] * 64 + rm[None, :]), tlx.dot_operand_layout(1, mma, 8))
    acc = tlx.zeros((64, 64), tl.float32, layout=mma)
    acc = tlx.amd_scheduled_mfma(a, b, acc, accumulator_role=ROLE, initialize=True)
    tl.store(c_ptr + rm[:, None] * 64 + rm[None, :], tlx.amd_mfma_commit(acc))


@tlxc.jit
def misaligned_slice(x_ptr, y_ptr):
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True,
                                            warps_per_cta=[1, 4])
    rows = tl.arange(0, 64)
    cols = tl.arange(0, 64)
    v = tlx.require_layout(tl.load(x_ptr + rows[:, None] * 64 + cols[None, :]), mma)
    part = tlx.extract_slice(v, [64, 16], [0, 16])  # each wave holds 16 of the 64 columns
    tl.store(y_ptr + rows[:, None] * 16 + tl.arange(0, 16)[None, :], part)


@tlxc.jit
def sched_fence(x_ptr, y_ptr):
    offs = tl.arange(0, 256)
    v = tl.load(x_ptr + offs)
    tlx.amd_sched_barrier(0)
    w = tl.load(y_ptr + offs)
    tlx.amd_sched_barrier(0x8)
    tl.store(y_ptr + offs, v * w)


@tlxc.jit
def async_rows(x_ptr, y_ptr):
    """y = x through a direct-to-LDS copy of 16-byte vectors, read back transposed."""
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    bufs = tlx.local_alloc((64, 64), tl.float32, 1)
    tok = tlx.async_load(x_ptr + offs, bufs[0])
    tlx.async_load_commit_group([tok])
    tlx.async_load_wait_group(0)
    v = tlx.local_load(bufs[0])
    tl.store(y_ptr + offs, v)
