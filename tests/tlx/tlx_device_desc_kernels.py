"""Kernels that build their TMA descriptors on the device (``tl.make_tensor_descriptor``),
shared by the PTX tests (tests/codegen/test_tlx_device_desc_ptx.py), the launch tests and
the GPU tests (tests/gpu/test_tlx_device_desc_gpu.py)."""

from __future__ import annotations

from example_modules import load_example  # tests/example_modules.py

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx

_tma_gemm = load_example("hopper_gemm_tma")


@tlxc.jit
def desc_copy(x_ptr, y_ptr, M, N, stride_x, stride_y, BM: tl.constexpr, BN: tl.constexpr,
              PADDING: tl.constexpr = "zero"):
    """``y = 2 x`` block by block through two device descriptors and a register tile
    (``desc.load`` / ``desc.store``); blocks that stick out of the tensor are clipped."""
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BM, BN],
                                   padding_option=PADDING)
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[stride_y, 1], block_shape=[BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    yd.store([om, on], xd.load([om, on]) * 2)


@tlxc.jit
def desc_load_block(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr):
    """The block of ``x`` at (0, 0), padding included, stored whole to ``out`` (BM x BN)."""
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PADDING)
    offs_m, offs_n = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], xd.load([0, 0]))


@tlxc.jit
def matmul_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr):
    """examples/hopper_gemm_tma.py (its kernel, inlined) with its descriptors made in the
    kernel, as the TLX tutorials make them (the host then calls tlxc.set_allocator)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])
    _tma_gemm.matmul_tma(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES)


@tlxc.jit
def desc_ptr_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """``y = x + 1`` through descriptors made into storage of the kernel's own
    (``tlx.allocate_tensor_descriptor``) and read back with ``reinterpret_tensor_descriptor``."""
    ptrs = tlx.allocate_tensor_descriptor(2)
    tlx.make_tensor_descriptor(desc_ptr=ptrs[0], base=x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tlx.make_tensor_descriptor(desc_ptr=ptrs[1], base=y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    xd = tlx.reinterpret_tensor_descriptor(desc_ptr=ptrs[0], block_shape=[BM, BN], dtype=tlx.dtype_of(x_ptr))
    yd = tlx.reinterpret_tensor_descriptor(desc_ptr=ptrs[1], block_shape=[BM, BN], dtype=tlx.dtype_of(y_ptr))
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    yd.store([om, on], xd.load([om, on]) + 1)


@tlxc.jit
def desc_ptr_copy_1d(input_ptr, output_ptr, SIZE, BLOCK_SIZE: tl.constexpr):
    """The TLX test ``test_make_tensor_descriptor``: 1-D int16 blocks."""
    pid = tl.program_id(0)
    desc_ptrs = tlx.allocate_tensor_descriptor(num=2)
    tlx.make_tensor_descriptor(desc_ptr=desc_ptrs[0], base=input_ptr, shape=[SIZE], strides=[tl.constexpr(1)],
                               block_shape=[BLOCK_SIZE])
    tlx.make_tensor_descriptor(desc_ptr=desc_ptrs[1], base=output_ptr, shape=[SIZE], strides=[tl.constexpr(1)],
                               block_shape=[BLOCK_SIZE])
    desc_in = tlx.reinterpret_tensor_descriptor(desc_ptr=desc_ptrs[0], block_shape=[BLOCK_SIZE], dtype=tl.int16)
    desc_out = tlx.reinterpret_tensor_descriptor(desc_ptr=desc_ptrs[1], block_shape=[BLOCK_SIZE], dtype=tl.int16)
    x = desc_in.load([pid * BLOCK_SIZE])
    desc_out.store([pid * BLOCK_SIZE], x)
