"""Kernels for the AMDGPU reduction / layout-conversion / barrier tests (core ops and the
small TLX builtins only)."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def reduce_2d(X, Out, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, KIND: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    if KIND == "sum":
        r = tl.sum(x, axis=AXIS)
    elif KIND == "max":
        r = tl.max(x, axis=AXIS)
    elif KIND == "min":
        r = tl.min(x, axis=AXIS)
    elif KIND == "argmax":
        r = tl.argmax(x, axis=AXIS)
    elif KIND == "argmin":
        r = tl.argmin(x, axis=AXIS)
    else:
        r = tl.xor_sum(x, axis=AXIS)
    if AXIS == 0:
        tl.store(Out + rn, r)
    else:
        tl.store(Out + rm, r)


@tlxc.jit
def reduce_1d(X, Out, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Out, tl.sum(x, axis=0))


@tlxc.jit
def transpose(X, Out, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    tl.store(Out + rn[:, None] * M + rm[None, :], tl.trans(x))


@tlxc.jit
def row_bias(X, B, Out, M: tl.constexpr, N: tl.constexpr):
    """A reduction over rows whose result meets a tile in another layout: the slice of
    the reduced tile is converted to the layout of the bias load."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    s = tl.sum(x, axis=0) + tl.load(B + rn)
    tl.store(Out + rn, s)


@tlxc.jit
def named_barrier(X, BAR: tl.constexpr, THREADS: tl.constexpr):
    tlx.named_barrier_wait(BAR, THREADS)
    tl.store(X, 1.0)


@tlxc.jit
def named_arrive(X):
    tlx.named_barrier_arrive(9, 128)
    tl.store(X, 1.0)


@tlxc.jit
def fence_async(X):
    tlx.fence_async_shared()
    tl.store(X, 1.0)


@tlxc.jit
def fence_gpu(X):
    tl.store(X, 1.0)
    tlx.fence("gpu")
    tl.store(X + 1, 2.0)


@tlxc.jit
def asserts(X, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.device_assert(x > 0, "x must be positive")
    tl.store(X + tl.arange(0, N), x + 1)


@tlxc.jit
def clock_and_tid(Out):
    t0 = tlx.clock64()
    tid = tlx.thread_id(0)
    t1 = tlx.clock64()
    tl.store(Out + tid, t1 - t0)
