"""The error catalog: every diagnostic code has a negative test that checks the code,
the line and the caret.

Each case is a kernel file in which the line the error must point at carries a
``# ERR <text>`` comment: the caret must sit under the first occurrence of ``<text>`` on
that line. ``run`` is the statement that triggers the error (compile or launch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
from tlxc.diagnostics import CATALOG
from tlxc.frontend.callsite import compiler_frames

CASES: dict[str, list[tuple[str, str]]] = {
    "TLXC-NAME-001": [
        ("""
@tlxc.jit
def k(x):
    tl.store(x, not_defined)  # ERR not_defined
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    tl.store(x, tl.no_such_builtin(1))  # ERR tl.no_such_builtin
""", "k.compile('*fp32')"),
    ],
    "TLXC-SYNTAX-001": [
        ("""
@tlxc.jit
def k(x):
    try:  # ERR try
        pass
    except Exception:
        pass
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    f = lambda v: v  # ERR lambda
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    v = {i for i in range(4)}  # ERR {i
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    with open("f") as f:  # ERR with
        pass
""", "k.compile('*fp32')"),
        ("""
G = 1
@tlxc.jit
def k(x):
    global G  # ERR global
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x, n):
    for i in range(n):
        break  # ERR break
""", "k.compile('*fp32,i32')"),
    ],
    "TLXC-CALL-001": [
        ("""
def plain(v):
    return v
@tlxc.jit
def k(x):
    tl.store(x, plain(1.0))  # ERR plain(
""", "k.compile('*fp32')"),
    ],
    "TLXC-CALL-002": [
        ("""
@tlxc.jit
def k(x):
    tl.store(x, tl.load(x, bogus=1))  # ERR tl.load(
""", "k.compile('*fp32')"),
    ],
    "TLXC-SHAPE-001": [
        ("""
@tlxc.jit
def k(x):
    v = tl.arange(0, 16) + tl.arange(0, 32)  # ERR tl.arange(0, 16)
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    a = tl.zeros([16, 32], dtype=tl.float32)
    b = tl.zeros([16, 16], dtype=tl.float32)
    c = tl.maximum(a, b)  # ERR tl.maximum
""", "k.compile('*fp32')"),
    ],
    "TLXC-SHAPE-002": [
        ("""
@tlxc.jit
def k(x, B: tl.constexpr):
    offs = tl.arange(0, B)  # ERR tl.arange
""", "k.compile('*fp32', {'B': 100})"),
    ],
    "TLXC-SHAPE-003": [
        ("""
@tlxc.jit
def k(x):
    v = tl.reshape(tl.arange(0, 16), [4, 8])  # ERR tl.reshape
""", "k.compile('*fp32')"),
    ],
    "TLXC-CONSTEXPR-001": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x, n):
    bufs = tlx.local_alloc((16, 16), tl.float32, n)  # ERR tlx.local_alloc
""", "k.compile('*fp32,i32')"),
        ("""
@tlxc.jit
def k(x, n):
    offs = tl.arange(0, n)  # ERR tl.arange
""", "k.compile('*fp32,i32')"),
        ("""
@tlxc.jit
def k(x, n):
    for i in tl.static_range(n):  # ERR tl.static_range
        pass
""", "k.compile('*fp32,i32')"),
        ("""
@tlxc.jit
def k(x):
    HALF = 8
    offs = tl.arange(0, HALF)  # ERR tl.arange
""", "k.compile('*fp32')"),
    ],
    "TLXC-TYPE-001": [
        ("""
@tlxc.jit
def k(x):
    v = tl.load(x)
    w = v << 2  # ERR v << 2
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    v = tl.exp(tl.arange(0, 16))  # ERR tl.exp
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    old = tl.atomic_xor(x, 1.0)  # ERR tl.atomic_xor
""", "k.compile('*fp32')"),
        ("""
@tlxc.jit
def k(x):
    old = tl.atomic_add(x, 1, sem="seq_cst")  # ERR tl.atomic_add
""", "k.compile('*i32')"),
    ],
    "TLXC-TYPE-002": [
        ("""
@tlxc.jit
def k(x, n):
    v = tl.load(x)
    if n > 0:  # ERR if
        v = n
    else:
        v = v * 2.0
    tl.store(x, v)
""", "k.compile('*fp32,i32')"),
    ],
    "TLXC-DOT-001": [
        ("""
@tlxc.jit
def k(x):
    a = tl.zeros([32, 16], dtype=tl.float16)
    b = tl.zeros([32, 16], dtype=tl.float16)
    c = tl.dot(a, b)  # ERR tl.dot
""", "k.compile('*fp32')"),
    ],
    "TLXC-DOT-002": [
        ("""
@tlxc.jit
def k(x):
    a = tl.zeros([16, 16], dtype=tl.float16)
    b = tl.zeros([16, 16], dtype=tl.bfloat16)
    c = tl.dot(a, b)  # ERR tl.dot
""", "k.compile('*fp32')"),
    ],
    "TLXC-MEM-001": [
        ("""
@tlxc.jit
def k(x, n):
    tl.store(n, 1)  # ERR tl.store
""", "k.compile('*fp32,i32')"),
    ],
    "TLXC-LOOP-001": [
        ("""
@tlxc.jit
def k(x, n):
    acc = 0
    for i in range(n):
        acc += tl.load(x + i)  # ERR acc +=
    tl.store(x, acc)
""", "k.compile('*fp32,i32')"),
    ],
    "TLXC-LOOP-002": [
        ("""
@tlxc.jit
def k(x, n):
    acc = tl.zeros([16], dtype=tl.float32)
    for i in tl.range(0, n, 16, multi_cta=True):
        acc = tl.maximum(acc, tl.load(x + i + tl.arange(0, 16)))  # ERR tl.maximum
    tl.store(x, tl.sum(acc, axis=0))
""", "k.compile('*fp32,i32', ctas_per_cga=(2, 1, 1))"),
    ],
    "TLXC-ASSERT-001": [
        ("""
@tlxc.jit
def k(x, B: tl.constexpr):
    tl.static_assert(B % 16 == 0, "B must be a multiple of 16")  # ERR tl.static_assert
""", "k.compile('*fp32', {'B': 24})"),
    ],
    "TLXC-LAUNCH-001": [
        ("""
@tlxc.jit
def k(x, n, B: tl.constexpr):
    pass
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32), 4, 8, 9)  # ERR k.interpret
""", "launch()"),
    ],
    "TLXC-LAUNCH-002": [
        ("""
@tlxc.jit
def k(x, n, B: tl.constexpr):
    pass
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32), 4)  # ERR k.interpret
""", "launch()"),
    ],
    "TLXC-LAUNCH-003": [
        ("""
@tlxc.jit
def k(x, n):
    pass
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32), "four")  # ERR k.interpret
""", "launch()"),
    ],
    "TLXC-OPTION-001": [
        ("""
@tlxc.jit(noinline=True)
def h(x):
    return x
@tlxc.jit
def k(x, n):
    h(n)  # ERR h(n)
def launch():
    k.compile("*fp32,i32")
""", "launch()"),
        ("""
@tlxc.jit
def k(x, n):
    pass
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32), 4, num_ctas=9)  # ERR k.interpret
""", "launch()"),
    ],
    "TLXC-SIG-001": [
        ("""
@tlxc.jit
def k(x, n):
    pass
def build():
    return k.compile("*fp32,i31")  # ERR k.compile
""", "build()"),
    ],
    "TLXC-CLI-001": [
        ("""
@tlxc.jit
def k(x):
    pass
def build():
    return k.compile("*fp32", arch="sm_80")  # ERR k.compile
""", "build()"),
    ],
    "TLXC-INTERP-001": [
        ("""
@tlxc.jit
def k(x):
    offs = tl.arange(0, 16)
    tl.store(x + offs, 1.0)  # ERR tl.store
def launch():
    k.interpret[(1,)](np.zeros(8, np.float32))
""", "launch()"),
    ],
    "TLXC-INTERP-002": [
        ("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 4))
    tl.device_assert(v > 0, "values must be positive")  # ERR tl.device_assert
def launch():
    k.interpret[(1,)](np.array([1, 2, -3, 4], np.float32))
""", "launch()"),
    ],
    "TLXC-CODEGEN-001": [
        ("""
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    tl.store(x + tl.arange(0, 16), v.to(tl.float8e4b8).to(tl.float32))  # ERR v.to(tl.float8e4b8)
""", "k.compile('*fp32', arch='sm_90a').asm['ptx']"),
    ],
    "TLXC-RESOURCE-001": [
        ("""
@tlxc.jit
def k(x):  # ERR def
    a = tl.zeros([128, 1024], dtype=tl.float32)
    b = tl.zeros([1024, 128], dtype=tl.float32)
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(x + tl.arange(0, 128)[:, None] * 128 + tl.arange(0, 128)[None, :], c)
""", "k.compile('*fp32', arch='sm_100a').asm['ptx']"),
    ],
    "TLXC-NAME-002": [
        ("""
from tlxc.language.extra import libdevice
@tlxc.jit
def k(x):
    y = libdevice.lgamma(tl.load(x + tl.arange(0, 16)))  # ERR libdevice.lgamma
    tl.store(x + tl.arange(0, 16), y)
def launch():
    k.compile("*fp32")
""", "launch()"),
    ],
    "TLXC-INTERP-008": [
        ("""
@tlxc.jit
def k(x):
    v = tl.inline_asm_elementwise("mov.u32 $0, %clock;", "=r", [], tl.int32, False, 1)  # ERR tl.inline_asm_elementwise
    tl.store(x, v)
def launch():
    k.interpret[(1,)](np.zeros(1, np.int32))
""", "launch()"),
    ],
    "TLXC-INTERP-003": [
        ("""
@tlxc.jit
def k(x, step):
    for i in range(0, 4, step):  # ERR for
        tl.store(x + i, 1.0)
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32), 0)
""", "launch()"),
    ],
    "TLXC-TLX-001": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bufs = tlx.local_alloc((16, 16), tl.float32, 2)
    v = bufs[2]  # ERR bufs[2]
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bufs = tlx.local_alloc((16, 16), tl.float32, 2)
    y = tlx.local_load(bufs)  # ERR tlx.local_load
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bufs = tlx.local_alloc((16,), tl.float32, 1)
    tlx.local_store(bufs[0], tl.zeros((16,), tl.float16))  # ERR tlx.local_store
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec(buffer_size_bytes=1024)
    a = tlx.local_alloc((16, 16), tl.float32, 2, reuse=spec)  # ERR tlx.local_alloc
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec(buffer_size_bytes=3072)
    a = tlx.local_alloc((16, 16), tl.float32, 2, reuse=spec)
    b = tlx.local_alloc((16, 16), tl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=tlx.reuse_group_type.distinct))  # ERR spec.set
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)
    a = tlx.local_alloc((64, 64), tl.float32, 1, tlx.storage_kind.tmem, reuse=spec)  # ERR tlx.local_alloc
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((16, 16), tl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a))
    spec.set_buffer_overlap(tlx.reuse_group(a))  # ERR spec.set_buffer_overlap
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smemCluster)  # ERR tlx.storage_alias_spec
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((16, 16), tl.float32, 2, reuse=spec)
    b = tlx.local_alloc((16, 16), tl.float32, 2)
    spec.set_buffer_overlap(tlx.reuse_group(a, b))  # ERR spec.set_buffer_overlap
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec()
    alpha = tlx.local_alloc((64, 1), tl.float32, 1, reuse=spec)
    p = tlx.local_alloc((64, 64), tl.float16, 1, reuse=spec)  # ERR tlx.local_alloc
    spec.set_buffer_overlap(tlx.reuse_group(alpha, p, group_type=tlx.reuse_group_type.distinct))
    tlx.local_store(p[0], tl.zeros((64, 64), tl.float16))
    tlx.local_store(alpha[0], tl.zeros((64, 1), tl.float32))
""", "k.compile('*fp32', arch='sm_90a').asm['ptx']"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    enc = tlx.nv_mma_shared_layout_encoding((64, 64), [1, 0], tl.float16, [1, 1], [1, 1], [1, 0], True, True)
    a = tlx.local_alloc((64, 64), tl.float16, 1, layout=enc)  # ERR tlx.local_alloc
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    enc = tlx.nv_mma_shared_layout_encoding.make_default((64, 64), tl.float32)
    a = tlx.local_alloc((64, 64), tl.float16, 1, layout=enc)  # ERR tlx.local_alloc
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    enc = tlx.swizzled_shared_layout_encoding(8, 1, 8, [1, 0], [2, 1], [1, 1], [1, 1], [1, 0])
    a = tlx.local_alloc((64, 64), tl.float16, 1, layout=enc)  # ERR tlx.local_alloc
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    a = tlx.local_alloc((64, 64), tl.float16, 1, layout=tlx.storage_kind.smem)  # ERR tlx.local_alloc
""", "k.compile('*fp32')"),
    ],
    "TLXC-TLX-002": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    tlx.named_barrier_wait(9, 100)  # ERR tlx.named_barrier_wait
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    tlx.named_barrier_arrive(9, 256)
    tlx.named_barrier_wait(9, 128)  # ERR tlx.named_barrier_wait
""", "k.compile('*fp32')"),
    ],
    "TLXC-TLX-003": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x, M):
    d = tl.make_tensor_descriptor(x, [M, M], [M, 1], [64, 2])  # ERR tl.make_tensor_descriptor
""", "k.compile('*fp32,i32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x, M):
    d = tl.make_tensor_descriptor(x, [M, M], [M, 1], [4, 512])
    bufs = tlx.local_alloc((4, 512), tl.float16, 1)
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], 4 * 512 * 2)
    tlx.async_descriptor_load(d, bufs[0], [0, 0], bars[0])  # ERR tlx.async_descriptor_load
    tlx.barrier_wait(bars[0], 0)
""", "k.compile('*fp16,i32', arch='sm_90a').asm['ptx']"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x, M):
    d = tl.make_tensor_descriptor(x, [M, M], [M, 1], [64, 64])
    enc = tlx.swizzled_shared_layout_encoding(4, 2, 4, [1, 0], [1, 1], [1, 1], [1, 1], [1, 0])
    bufs = tlx.local_alloc((64, 64), tl.float16, 1, layout=enc)
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], 64 * 64 * 2)
    tlx.async_descriptor_load(d, bufs[0], [0, 0], bars[0])  # ERR tlx.async_descriptor_load
    tlx.barrier_wait(bars[0], 0)
    tl.store(x + tl.arange(0, 64), tl.sum(tlx.local_load(bufs[0]), 0))
""", "k.compile('*fp16,i32', arch='sm_90a').asm['ptx']"),
    ],
    "TLXC-TLX-004": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    a = tlx.local_alloc((32, 16), tl.float16, 1)
    b = tlx.local_alloc((16, 64), tl.float16, 1)
    c = tlx.async_dot(a[0], b[0])  # ERR tlx.async_dot
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    a = tlx.local_alloc((64, 16), tl.float16, 1)
    b = tlx.local_alloc((32, 64), tl.float16, 1)
    c = tlx.async_dot(a[0], b[0])  # ERR tlx.async_dot
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    enc = tlx.swizzled_shared_layout_encoding(4, 2, 4, [1, 0], [1, 1], [1, 1], [1, 1], [1, 0])
    a = tlx.local_alloc((64, 16), tl.float16, 1)
    b = tlx.local_alloc((16, 64), tl.float16, 1, layout=enc)
    tlx.local_store(a[0], tl.zeros((64, 16), tl.float16))
    tlx.local_store(b[0], tl.zeros((16, 64), tl.float16))
    c = tlx.async_dot(a[0], b[0])  # ERR tlx.async_dot
    c = tlx.async_dot_wait(0, c)
    tl.store(x + tl.arange(0, 64), tl.sum(c, 0))
""", "k.compile('*fp32', arch='sm_90a').asm['ptx']"),
    ],
    "TLXC-TLX-008": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bars = tlx.alloc_barriers(1)
    tlx.barrier_arrive(bars[0], remote_cta_rank=1)  # ERR tlx.barrier_arrive
""", "k.compile('*fp32').asm['ptx']"),
    ],
    "TLXC-TLX-005": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.tmem)  # ERR tlx.storage_alias_spec
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bufs = tlx.local_alloc((16, 16), tl.float32, 1)
    row = bufs[0][3]  # ERR bufs[0][3]
""", "k.compile('*fp32')"),
    ],
    "TLXC-TLX-006": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    tlx.amd_sched_barrier(0)  # ERR tlx.amd_sched_barrier
    tl.store(x, 1.0)
""", "k.compile('*fp32', arch='sm_90a').asm['ptx']"),
        ("""
import tlxc.tlx as tlx
from tlxc.codegen import target_ops
@tlxc.jit
def k(x):
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], 1024)  # ERR tlx.barrier_expect_bytes
    tlx.barrier_wait(bars[0], 0)
""", "target_ops.check_amd(k.compile('*fp32', arch='gfx950').func, 'gfx950')"),
    ],
    "TLXC-TLX-007": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 256))
    v = tlx.amd_register_resident(v, registers_per_group=3)  # ERR tlx.amd_register_resident
""", "k.compile('*fp32')"),
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    a = tl.zeros((32, 16), tl.float32)
    b = tl.zeros((16, 32), tl.float32)
    c = tlx.amd_scheduled_mfma(a, b, tl.zeros((32, 32), tl.float32), "transient")  # ERR tlx.amd_scheduled_mfma
""", "k.compile('*fp32')"),
    ],
    "TLXC-INTERP-004": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bars = tlx.alloc_barriers(1)
    tlx.barrier_wait(bars[0], 0)  # ERR tlx.barrier_wait
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32))
""", "launch()"),
    ],
    "TLXC-INTERP-005": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bufs = tlx.local_alloc((4,), tl.float32, 1)
    tl.store(x + tl.arange(0, 4), tlx.local_load(bufs[0]))  # ERR tlx.local_load
def launch():
    k.interpret[(1,)](np.zeros(4, np.float32))
""", "launch()"),
    ],
    "TLXC-INTERP-007": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(y_desc):
    buf = tlx.local_alloc((16, 16), tl.float32, 1)
    for i in range(2):
        tlx.local_store(buf[0], tl.full((16, 16), i, tl.float32))  # ERR tlx.local_store
        tlx.fence_async_shared()
        tlx.async_descriptor_store(y_desc, buf[0], [0, 16 * i])
def launch():
    y = np.zeros((16, 32), np.float32)
    k.interpret[(1,)](tlxc.TensorDescriptor.from_tensor(y, [16, 16]))
""", "launch()"),
    ],
    "TLXC-INTERP-006": [
        ("""
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    tl.store(x, tlx.thread_id(0))  # ERR tlx.thread_id
def launch():
    k.interpret[(1,)](np.zeros(4, np.int32))
""", "launch()"),
    ],
}

_WS = """
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
"""
CASES.update({
    "TLXC-WS-001": [
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1):
            tlx.cluster_barrier()  # ERR tlx.cluster_barrier
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_task(num_warps=1):  # ERR tlx.async_task
        tl.store(x, 1.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():  # ERR tlx.async_tasks
        with tlx.async_task(num_warps=1):
            tl.store(x, 1.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        y = 1  # ERR y
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task("default"):  # ERR tlx.async_task
            tl.store(x, 2.0)
""", "k.compile('*fp32')"),
        (_WS + """    tl.store(x, tlx.async_task_replica_id())  # ERR tlx.async_task_replica_id
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        if tl.program_id(0) == 0:  # ERR tl.program_id(0) == 0
            with tlx.async_task(num_warps=1):
                tl.store(x, 2.0)
""", "k.compile('*fp32')"),
    ],
    "TLXC-WS-002": [
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1, num_regs=20):  # ERR tlx.async_task
            tl.store(x, 2.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1, registers=512):  # ERR tlx.async_task
            tl.store(x, 2.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1, registers=24):
            tl.store(x, 2.0)
        with tlx.async_task(num_warps=2):  # ERR tlx.async_task
            tl.store(x, 3.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks(pipelined=True):  # ERR tlx.async_tasks
        with tlx.async_task("default"):
            tl.store(x, 1.0)
""", "k.compile('*fp32')"),
    ],
    "TLXC-WS-003": [
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1, warp_group_start_id=4):
            tl.store(x, 2.0)
        with tlx.async_task(num_warps=1):  # ERR tlx.async_task
            tl.store(x, 3.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=2, warp_group_start_id=4):
            tl.store(x, 2.0)
        with tlx.async_task(num_warps=1, warp_group_start_id=5):  # ERR tlx.async_task
            tl.store(x, 3.0)
""", "k.compile('*fp32')"),
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1, warp_group_start_id=3):  # ERR tlx.async_task
            tl.store(x, 2.0)
""", "k.compile('*fp32')"),
    ],
    # an error inside a task body is reported at its line (TLX's test_async_tasks_region_error)
    "TLXC-TYPE-001": CASES["TLXC-TYPE-001"] + [
        (_WS + """    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x, 1.0)
        with tlx.async_task(num_warps=1):
            z = 1 / 0  # ERR 1 / 0
""", "k.compile('*fp32')"),
    ],
    "TLXC-WS-004": [
        (_WS + """    offs = tl.arange(0, 32)
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x + offs, 1.0)
        with tlx.async_task(num_warps=1):
            tl.store(x + offs, 2.0)  # ERR x + offs
""", "k.compile('*fp32')"),
    ],
})


# Codes tested elsewhere because they need the command line or a broken compiler:
ELSEWHERE = {
    "TLXC-CLI-002": "tests/test_cli.py::test_no_kernel, test_several_kernels_need_k",
    "TLXC-CLI-003": "tests/test_cli.py::test_not_yet_available_output",
    "TLXC-CLI-007": "tests/test_cli.py::test_an_unknown_pass_name_is_an_error_that_lists_the_passes",
    "TLXC-CLI-004": "tests/test_cli.py::test_file_that_cannot_be_loaded, test_syntax_error_in_file_has_caret, "
                    "test_sys_exit_in_file_is_reported",
    "TLXC-CLI-005": "tests/test_cli.py::test_output_that_cannot_be_written",
    "TLXC-CLI-006": "tests/test_cli.py::test_duplicate_define_is_refused, test_options_of_the_other_family",
    "TLXC-INTERNAL-001": "test_internal_error_points_at_user_line below",
    "TLXC-TOOL-001": "test_missing_ptxas_is_a_clear_error below",
    "TLXC-TOOL-002": "test_failing_nvdisasm_is_a_clear_error below",
    "TLXC-PROFILER-001": "tests/frontend/test_profiler.py::test_what_is_not_implemented_is_an_error_naming_it",
    "TLXC-PROFILER-002": "tests/frontend/test_profiler.py::test_viewer_refuses_what_it_cannot_derive",
}


def _expected(source: str) -> tuple[int, int, str]:
    """(line, column) of the ``# ERR`` marker within the loaded file (3 header lines)."""
    for i, line in enumerate(source.splitlines()):
        if "# ERR " in line:
            code, marker = line.split("# ERR ", 1)
            return i + 4, code.index(marker.strip()), code.rstrip()
    raise AssertionError("case without # ERR marker")


def test_every_code_has_a_negative_test() -> None:
    assert set(CATALOG) == set(CASES) | set(ELSEWHERE)


@pytest.mark.parametrize("code,index", [(c, i) for c, cases in CASES.items() for i in range(len(cases))])
def test_error_points_at_user_line(code: str, index: int, load_kernels: Any) -> None:
    source, run = CASES[code][index]
    mod = load_kernels(source)
    line, col, text = _expected(source)
    with pytest.raises((tlxc.CompilationError, tlxc.InterpreterError)) as info:
        eval(run, vars(mod))
    err = info.value
    assert err.code == code, str(err)
    assert err.loc is not None and err.loc.file == mod.__path_str__
    assert (err.loc.line, err.loc.col) == (line, col), str(err)
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{mod.__path_str__}:{line}:{col + 1}: error[{code}]: ")
    assert rendered[1] == "    " + text.rstrip() or rendered[1].startswith("    " + text.rstrip())
    assert rendered[2].startswith(" " * (4 + col) + "^")
    assert len(compiler_frames(err.__traceback__)) <= 1  # only the public entry point


def test_internal_error_points_at_user_line(load_kernels: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tlxc.frontend.semantics import RULES

    def broken(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setitem(RULES, "program_id", broken)
    source = """
@tlxc.jit
def k(x):
    pid = tl.program_id(0)  # ERR tl.program_id
"""
    mod = load_kernels(source)
    line, col, _ = _expected(source)
    with pytest.raises(tlxc.InternalCompilerError) as info:
        mod.k.compile("*fp32")
    assert info.value.code == "TLXC-INTERNAL-001"
    assert (info.value.loc.line, info.value.loc.col) == (line, col)
    assert "simulated bug" in str(info.value) and "frontend" in str(info.value)


def test_launch_error_has_no_compiler_frames(load_kernels: Any) -> None:
    mod = load_kernels("""
@tlxc.jit
def k(x, B: tl.constexpr):
    pass
""")
    with pytest.raises(tlxc.CompilationError) as info:
        mod.k.interpret[(1,)](np.zeros(4, np.float32))
    inner = compiler_frames(info.value.__traceback__)
    assert len(inner) <= 1, inner  # at most the public entry point that re-raised it


def test_missing_ptxas_is_a_clear_error(load_kernels: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tlxc.codegen.nvptx import toolchain

    mod = load_kernels("""
@tlxc.jit
def k(x):
    tl.store(x, 1.0)
""")
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    compiled = mod.k.compile("*fp32", arch="sm_90a")
    assert ".entry k(" in compiled.asm["ptx"]
    with pytest.raises(KeyError, match="not available"):
        compiled.asm["cubin"]
    with pytest.raises(tlxc.CompilationError) as info:
        toolchain.ptxas(compiled.asm["ptx"], "sm_90a")
    assert info.value.code == "TLXC-TOOL-001" and "ptxas was not found" in str(info.value)


def test_failing_nvdisasm_is_a_clear_error(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tlxc.codegen.nvptx import toolchain

    fake = tmp_path / "nvdisasm"
    fake.write_text("#!/bin/sh\necho 'bad cubin' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(toolchain, "find_tool", lambda name: str(fake))
    with pytest.raises(tlxc.CompilationError) as info:
        toolchain.nvdisasm(b"not a cubin")
    assert info.value.code == "TLXC-TOOL-002" and "bad cubin" in str(info.value)
