"""TLX kernels that exercise shared-memory buffers, mbarriers, named barriers, fences and
cp.async one feature at a time: the code-generation tests check their PTX (and that
ptxas takes it), the GPU tests run them against numpy, the interpreter gives the
reference semantics. ``roundtrip_smem`` lives in ``tlx_kernels.py``."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def store_load(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, NUM: tl.constexpr, IDX: tl.constexpr):
    """y = x through buffer IDX of NUM (constant index): local_store then local_load."""
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    bufs = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), NUM)
    tlx.local_store(bufs[IDX], x)
    tl.store(y_ptr + offs, tlx.local_load(bufs[IDX]))


@tlxc.jit
def transpose_view(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    """y (C x R) = x (R x C) transposed: store x, read the local_trans view."""
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    bufs = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 1)
    tlx.local_store(bufs[0], x)
    t = tlx.local_load(tlx.local_trans(bufs[0]))
    tl.store(y_ptr + tl.arange(0, C)[:, None] * R + tl.arange(0, R)[None, :], t)


@tlxc.jit
def ring(x_ptr, y_ptr, n_tiles, R: tl.constexpr, C: tl.constexpr, NUM: tl.constexpr):
    """y = 2 * x tile by tile through a ring of NUM buffers picked at run time (i % NUM):
    the hazard pass must separate each store from the load and the next iteration's store."""
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    bufs = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), NUM)
    for i in range(0, n_tiles):
        buf = bufs[i % NUM]
        tlx.local_store(buf, tl.load(x_ptr + i * R * C + offs))
        # read the buffer transposed so every thread reads what others wrote
        t = tlx.local_load(tlx.local_trans(buf))
        tl.store(y_ptr + i * R * C + tl.arange(0, C)[:, None] * R + tl.arange(0, R)[None, :], t * 2)


@tlxc.jit
def slices(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    """y = x with its top and bottom halves swapped, through row slices of one buffer."""
    offs_top = tl.arange(0, R // 2)[:, None] * C + tl.arange(0, C)[None, :]
    bufs = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 1)
    buf = bufs[0]
    tlx.local_store(tlx.local_slice(buf, (0, 0), (R // 2, C)), tl.load(x_ptr + offs_top + (R // 2) * C))
    tlx.local_store(tlx.local_slice(buf, (R // 2, 0), (R // 2, C)), tl.load(x_ptr + offs_top))
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(y_ptr + offs, tlx.local_load(buf))


@tlxc.jit
def slices_runtime(x_ptr, y_ptr, keep, R: tl.constexpr, C: tl.constexpr):
    """Row halves and column halves placed through slices at run-time offsets: y = x
    when ``keep`` is 1; with 0 the row halves and the column halves are both swapped."""
    hr: tl.constexpr = R // 2
    hc: tl.constexpr = C // 2
    bufs = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 1)
    buf = bufs[0]
    rows = tl.arange(0, hr)[:, None] * C
    cols = tl.arange(0, hc)[None, :]
    for i in tl.static_range(2):
        for j in tl.static_range(2):
            src = x_ptr + (rows + i * hr * C) + (cols + j * hc)
            r0 = (i * keep + (1 - i) * (1 - keep)) * hr  # i when keep, 1 - i otherwise
            c0 = (j * keep + (1 - j) * (1 - keep)) * hc
            tlx.local_store(tlx.local_slice(buf, (r0, c0), (hr, hc)), tl.load(src))
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(y_ptr + offs, tlx.local_load(buf))


@tlxc.jit
def reinterpret(x_ptr, y_ptr, N: tl.constexpr):
    """y (int32 bits) = x (float32) seen through local_reinterpret of its buffer."""
    bufs = tlx.local_alloc((N // 32, 32), tl.float32, 1)
    tlx.local_store(bufs[0], tl.load(x_ptr + tl.arange(0, N // 32)[:, None] * 32 + tl.arange(0, 32)[None, :]))
    v = tlx.local_load(tlx.local_reinterpret(bufs[0], tl.int32, (N,)))
    tl.store(y_ptr + tl.arange(0, N), v)


@tlxc.jit
def cp_async_copy(x_ptr, y_ptr, n, R: tl.constexpr, C: tl.constexpr, NUM: tl.constexpr):
    """y = x, then zeros up to a whole number of tiles: cp.async into a ring of NUM buffers,
    NUM - 1 groups in flight, then local_load; the masked tail is zero-filled."""
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    bufs = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), NUM)
    n_tiles = tl.cdiv(n, R * C)
    for i in tl.static_range(NUM - 1):
        tok = tlx.async_load(x_ptr + i * R * C + offs, bufs[i], mask=i * R * C + offs < n)
        tlx.async_load_commit_group([tok])
    for i in range(0, n_tiles):
        tlx.async_load_wait_group(NUM - 2)
        v = tlx.local_load(bufs[i % NUM])
        tl.store(y_ptr + i * R * C + offs, v)  # y is padded to whole tiles: the tail shows the zero fill
        j = i + NUM - 1
        tok = tlx.async_load(x_ptr + j * R * C + offs, bufs[j % NUM], mask=j * R * C + offs < n)
        tlx.async_load_commit_group([tok])
    tlx.async_load_wait_group(0)


@tlxc.jit
def mbarrier_pingpong(x_ptr, y_ptr, n_iters, N: tl.constexpr):
    """y = x + n_iters, one step per phase of an mbarrier: every iteration arrives (the
    CTA once) and waits for the phase, whose parity flips each time; a warp barrier
    (every thread arrives) and an expect-bytes arrival take turns with it."""
    offs = tl.arange(0, N)
    bars = tlx.alloc_barriers(2, arrive_count=1)
    wbar = tlx.alloc_warp_barrier(1, num_warps=4)
    v = tl.load(x_ptr + offs)
    phase = 0
    for i in range(0, n_iters):
        tlx.barrier_arrive(bars[0])
        tlx.barrier_wait(bars[0], phase)
        tlx.barrier_expect_bytes(bars[1], 0)
        tlx.barrier_wait(bars[1], phase)
        tlx.barrier_arrive(wbar[0])
        tlx.barrier_wait(wbar[0], phase)
        tlx.named_barrier_wait(3, 128)
        phase = phase ^ 1
        v = v + 1
    tlx.fence("gpu")
    tl.store(y_ptr + offs, v)


@tlxc.jit
def thread_ids(y_ptr):
    """y = [%tid.x, clock64 went forward]. Scalars are uniform in tlxc (a scalar store is
    thread 0's), so only thread 0's id is observable this way."""
    tid = tlx.thread_id(0)
    t0 = tlx.clock64()
    t1 = tlx.clock64()
    tl.store(y_ptr, tid)
    tl.store(y_ptr + 1, (t1 - t0 >= 0).to(tl.int32))


@tlxc.jit
def thread_branches(y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    """Branches on tlx.thread_id (TLX's store_from_thread_0 pattern): thread 0 stores the
    element it holds of a tile (y[0] = 42 with one element per thread), thread 5 a scalar
    (z[1] = 5), and a loop runs tid % 3 times in each thread (z[2 + tid] = tid % 3 for
    the first 8 threads, each storing its own)."""
    offs = tl.arange(0, BLOCK)
    tid = tlx.thread_id(0)
    if tid == 0:
        tl.store(y_ptr + offs, tl.full((BLOCK,), 42, tl.int32), mask=offs < n)
    if tid == 5:
        tl.store(z_ptr + 1, tid)
    count = 0
    for _ in range(tid % 3):
        count += 1
    if tid < 8:
        tl.store(z_ptr + 2 + tid, count)


@tlxc.jit
def cp_async_other(x_ptr, y_ptr, n, FILL: tl.constexpr, N: tl.constexpr):
    """y = x where i < n, FILL elsewhere: masked-off elements of an async_load get `other`."""
    offs = tl.arange(0, N)
    bufs = tlx.local_alloc((N,), tlx.dtype_of(x_ptr), 1)
    tok = tlx.async_load(x_ptr + offs, bufs[0], mask=offs < n, other=FILL)
    tlx.async_load_wait_group(0, [tlx.async_load_commit_group([tok])])
    tl.store(y_ptr + offs, tlx.local_load(bufs[0]))


@tlxc.jit
def element_views(x_ptr, y_ptr, n, N: tl.constexpr):
    """y[:] = sum(x[:n]) through one-element views: indexing one 1-D buffer, bufs[0][i], is
    the [1]-shaped view of element i (TLX's test_local_index)."""
    offs = tl.arange(0, N)
    bufs = tlx.local_alloc((N,), tl.float32, 1)
    tlx.async_load(x_ptr + offs, bufs[0], mask=offs < n)
    tlx.async_load_wait_group(0, [tlx.async_load_commit_group()])
    s = tl.zeros((1,), dtype=tl.float32)
    for i in range(0, N):
        s += tlx.local_load(bufs[0][i])
    tl.store(y_ptr + offs, tl.broadcast_to(s, (N,)) + tlx.local_load(tlx.local_view(bufs[0], 3)))


@tlxc.jit
def staged_dot(a_ptr, stride_am, stride_ak, b_ptr, stride_bk, stride_bn, c_ptr, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B for one tile, each operand passed through a shared-memory buffer
    (local_store, then local_load) on its way to tl.dot. At 512x512 the result tile is
    larger than shared memory, so its layout conversion must run in rounds."""
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_buf = tlx.local_alloc((BLOCK_M, BLOCK_K), tlx.dtype_of(a_ptr), 1)
    b_buf = tlx.local_alloc((BLOCK_K, BLOCK_N), tlx.dtype_of(b_ptr), 1)
    tlx.local_store(a_buf[0], tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak))
    tlx.local_store(b_buf[0], tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn))
    c = tl.dot(tlx.local_load(a_buf[0]), tlx.local_load(b_buf[0]))
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c.to(tlx.dtype_of(c_ptr)))
