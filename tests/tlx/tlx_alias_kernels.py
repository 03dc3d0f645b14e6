"""TLX kernels for storage aliasing (``storage_alias_spec``, ``reuse_group``,
``set_buffer_overlap``) and pinned shared layouts (``local_alloc(layout=...)``): the
interpreter tests check what they compute, the code-generation tests their allocation
offsets and that ptxas takes their PTX."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def shared_overlap(x_ptr, y_ptr, B: tl.constexpr):
    """Two f16 arrays in a shared group alias each other: y = x written through a[1] and
    read through b[1]."""
    offs = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((B, B), tl.float16, 2, reuse=spec)
    b = tlx.local_alloc((B, B), tl.float16, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.shared))
    tlx.local_store(a[1], tl.load(x_ptr + offs))
    tl.store(y_ptr + offs, tlx.local_load(b[1]))


@tlxc.jit
def distinct_overlap(x_ptr, y_ptr, raw_ptr, B: tl.constexpr):
    """Distinct arrays keep their data (y = [x, 2x]); ``raw`` reads the store as one
    array of four buffers through a third alias: a0|b0|a1|b1."""
    offs = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((B, B), tl.float32, 2, reuse=spec)
    b = tlx.local_alloc((B, B), tl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    raw = tlx.local_alloc((B, B), tl.float32, 4, reuse=spec)
    x = tl.load(x_ptr + offs)
    for i in tl.static_range(2):
        tlx.local_store(a[i], x + i * 10)
        tlx.local_store(b[i], x + i * 10 + 100)
    tl.store(y_ptr + offs, tlx.local_load(a[1]))
    tl.store(y_ptr + B * B + offs, tlx.local_load(b[0]))
    for j in tl.static_range(4):
        tl.store(raw_ptr + j * B * B + offs, tlx.local_load(raw[j]))


@tlxc.jit
def nested_group_size(x_ptr, p_ptr, alpha_ptr, B: tl.constexpr):
    """shared(qk f32 [2], distinct(reuse_group(p f16 [4], group_size=2), alpha f32 (B, 1)
    [2])): p[2i] and p[2i+1] overlay qk[i]; alpha[i] sits after them in qk[i]. Writes qk,
    reads the others back (the test works out the bytes with numpy). The buffers are
    pinned to the plain row-major layout: reading bytes through another buffer than the
    one that wrote them is only defined when both lay their elements out alike (with the
    default NVMMA swizzles a GPU would give other bytes than the interpreter)."""
    offs = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    spec = tlx.storage_alias_spec()
    plain = tlx.swizzled_shared_layout_encoding.make_default(2)
    qk = tlx.local_alloc((B, B), tl.float32, 2, reuse=spec, layout=plain)
    p = tlx.local_alloc((B, B // 2), tl.float16, 4, reuse=spec, layout=plain)
    alpha = tlx.local_alloc((B, 1), tl.float32, 2, reuse=spec, layout=plain)
    spec.set_buffer_overlap(tlx.reuse_group(
        qk,
        tlx.reuse_group(tlx.reuse_group(p, group_size=2), alpha, group_type=tlx.reuse_group_type.distinct),
        group_type=tlx.reuse_group_type.shared))
    for i in tl.static_range(2):
        tlx.local_store(qk[i], tl.load(x_ptr + i * B * B + offs))
    offs_p = tl.arange(0, B)[:, None] * (B // 2) + tl.arange(0, B // 2)[None, :]
    for j in tl.static_range(4):
        tl.store(p_ptr + j * B * (B // 2) + offs_p, tlx.local_load(p[j]))
    offs_a = tl.arange(0, B)[:, None] + tl.arange(0, 1)[None, :]
    for i in tl.static_range(2):
        tl.store(alpha_ptr + i * B + offs_a, tlx.local_load(alpha[i]))


@tlxc.jit
def runtime_index_alias(x_ptr, y_ptr, n, B: tl.constexpr):
    """A distinct pair indexed at run time in a loop: y[i] = x[i] + x[i] through a[i % 2]
    and b[i % 2]."""
    offs = tl.arange(0, B)
    spec = tlx.storage_alias_spec(buffer_size_bytes=4 * B * 4)
    a = tlx.local_alloc((B,), tl.float32, 2, reuse=spec)
    b = tlx.local_alloc((B,), tl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))
    for i in range(0, n):
        x = tl.load(x_ptr + i * B + offs)
        tlx.local_store(a[i % 2], x)
        tlx.local_store(b[i % 2], x)
        tl.store(y_ptr + i * B + offs, tlx.local_load(a[i % 2]) + tlx.local_load(b[i % 2]))


@tlxc.jit
def pinned_store_load(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, KIND: tl.constexpr):
    """y = x through a buffer with a pinned layout: KIND 0 the NVMMA default, 1 a
    swizzled layout (vec 8, perPhase 1, maxPhase 8: the same bytes as NVMMA's 128-byte
    swizzle for f16 rows of 64), 2 NVMMA unswizzled, 3 the transposed (column-major)
    NVMMA layout, 4 a swizzled layout no NVMMA layout matches (vec 4, perPhase 2,
    maxPhase 4)."""
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    if KIND == 0:
        buf = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 2,
                              layout=tlx.nv_mma_shared_layout_encoding.make_default((R, C), tlx.dtype_of(x_ptr)))
    elif KIND == 1:
        buf = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 2,
                              layout=tlx.swizzled_shared_layout_encoding(8, 1, 8, [1, 0], [1, 1], [1, 1], [1, 1],
                                                                         [1, 0]))
    elif KIND == 2:
        buf = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 2,
                              layout=tlx.nv_mma_shared_layout_encoding((R, C), [1, 0], tlx.dtype_of(x_ptr),
                                                                       [1, 1], [1, 1], [1, 0], False, False))
    elif KIND == 3:
        buf = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 2,
                              layout=tlx.nv_mma_shared_layout_encoding((R, C), [0, 1], tlx.dtype_of(x_ptr),
                                                                       [1, 1], [1, 1], [0, 1], False, True))
    else:
        buf = tlx.local_alloc((R, C), tlx.dtype_of(x_ptr), 2,
                              layout=tlx.swizzled_shared_layout_encoding(4, 2, 4, [1, 0]))
    tlx.local_store(buf[1], x)
    tl.store(y_ptr + offs, tlx.local_load(buf[1]))


@tlxc.jit
def pinned_from_argument(x_ptr, y_ptr, L: tl.constexpr):
    """y = x through a 64x64 buffer whose layout the caller passes (a tl.constexpr)."""
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    buf = tlx.local_alloc((64, 64), tlx.dtype_of(x_ptr), 1, layout=L)
    tlx.local_store(buf[0], tl.load(x_ptr + offs))
    tl.store(y_ptr + offs, tlx.local_load(buf[0]))
