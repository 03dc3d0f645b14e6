"""Kernels of the warp-level op tests (interpreter, PTX and GPU)."""

from __future__ import annotations

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def ballot_rows(x, out, MASK: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    v = tl.load(x + r * C + c)
    tl.store(out + r * C + c, tlx.vote_ballot_sync(MASK, v > 0.5))


@tlxc.jit
def ballot_1d(x, out, R: tl.constexpr):
    r = tl.arange(0, R)
    tl.store(out + r, tlx.vote_ballot_sync(0xFFFFFFFF, tl.load(x + r)))


@tlxc.jit
def ballot_scalar(flag, out):
    tl.store(out, tlx.vote_ballot_sync(0x0F0F0F0F, flag > 0))


@tlxc.jit
def redux_rows(x, out, OP: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    tl.store(out + r * C + c, tlx.warp_redux(tl.load(x + r * C + c), OP))


@tlxc.jit
def ballot_thread_id(out):
    # TLX's own test: lanes 0-15 vote true
    tid = tlx.thread_id(0)
    b = tlx.vote_ballot_sync(0xFFFFFFFF, tid < 16)
    if tid == 0:
        tl.store(out, b)
