"""TLX kernels shared by the TLX tests: a cp.async + wgmma pipelined GEMM and small
kernels that exercise one feature each."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def gemm_cp_async(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    bufs_a = tlx.local_alloc((BLOCK_M, BLOCK_K), tlx.dtype_of(a_ptr), NUM_STAGES)
    bufs_b = tlx.local_alloc((BLOCK_K, BLOCK_N), tlx.dtype_of(b_ptr), NUM_STAGES)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for i in tl.static_range(NUM_STAGES - 1):
        ka = tlx.async_load(a_ptrs + i * BLOCK_K * stride_ak, bufs_a[i], mask=offs_k[None, :] < K - i * BLOCK_K)
        kb = tlx.async_load(b_ptrs + i * BLOCK_K * stride_bk, bufs_b[i], mask=offs_k[:, None] < K - i * BLOCK_K)
        tlx.async_load_commit_group([ka, kb])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_tiles):
        s = k % NUM_STAGES
        tlx.async_load_wait_group(NUM_STAGES - 2)
        acc = tlx.async_dot(bufs_a[s], bufs_b[s], acc)
        acc = tlx.async_dot_wait(1, acc)
        nk = k + NUM_STAGES - 1
        ns = nk % NUM_STAGES
        ka = tlx.async_load(a_ptrs + nk * BLOCK_K * stride_ak, bufs_a[ns], mask=offs_k[None, :] < K - nk * BLOCK_K)
        kb = tlx.async_load(b_ptrs + nk * BLOCK_K * stride_bk, bufs_b[ns], mask=offs_k[:, None] < K - nk * BLOCK_K)
        tlx.async_load_commit_group([ka, kb])
    acc = tlx.async_dot_wait(0, acc)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tlx.dtype_of(c_ptr)), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@tlxc.jit
def gemm_tma(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             NUM_STAGES: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    dtype = tlx.dtype_of(a_desc)
    bufs_a = tlx.local_alloc((BLOCK_M, BLOCK_K), dtype, NUM_STAGES)
    bufs_b = tlx.local_alloc((BLOCK_K, BLOCK_N), dtype, NUM_STAGES)
    bars = tlx.alloc_barriers(NUM_STAGES, arrive_count=1)
    nbytes: tl.constexpr = (BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * tlx.size_of(dtype)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for i in tl.static_range(NUM_STAGES - 1):
        if i < k_tiles:
            tlx.barrier_expect_bytes(bars[i], nbytes)
            tlx.async_descriptor_load(a_desc, bufs_a[i], [off_m, i * BLOCK_K], bars[i])
            tlx.async_descriptor_load(b_desc, bufs_b[i], [i * BLOCK_K, off_n], bars[i])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_tiles):
        s = k % NUM_STAGES
        tlx.barrier_wait(bars[s], (k // NUM_STAGES) & 1)
        acc = tlx.async_dot(bufs_a[s], bufs_b[s], acc)
        acc = tlx.async_dot_wait(1, acc)
        nk = k + NUM_STAGES - 1
        if nk < k_tiles:
            ns = nk % NUM_STAGES
            tlx.barrier_expect_bytes(bars[ns], nbytes)
            tlx.async_descriptor_load(a_desc, bufs_a[ns], [off_m, nk * BLOCK_K], bars[ns])
            tlx.async_descriptor_load(b_desc, bufs_b[ns], [nk * BLOCK_K, off_n], bars[ns])
    acc = tlx.async_dot_wait(0, acc)
    c_buf = tlx.local_alloc((BLOCK_M, BLOCK_N), tlx.dtype_of(c_desc), 1)
    tlx.local_store(c_buf[0], acc.to(tlx.dtype_of(c_desc)))
    tlx.fence_async_shared()
    tlx.async_descriptor_store(c_desc, c_buf[0], [off_m, off_n])
    tlx.async_descriptor_store_wait(0)


@tlxc.jit
def roundtrip_smem(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """y = x transposed, through a buffer: local_store, local_trans view, local_load."""
    offs_r = tl.arange(0, BLOCK)
    offs_c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs_r[:, None] * BLOCK + offs_c[None, :])
    bufs = tlx.local_alloc((BLOCK, BLOCK), tlx.dtype_of(x_ptr), 2)
    tlx.local_store(bufs[1], x)
    t = tlx.local_load(tlx.local_trans(bufs[1]))
    tl.store(y_ptr + offs_r[:, None] * BLOCK + offs_c[None, :], t)
