"""Kernels with ``tl.range(..., multi_cta=True)`` loops (tests/tlx/test_multi_cta.py): a
row sum (1-D accumulator reduced to a scalar), a block of rows (2-D accumulator reduced
along axis 1), a scalar accumulator with a non-zero start, and a layer norm written
like Triton's tutorial 15."""

from __future__ import annotations

import tlxc
import tlxc.language as tl


@tlxc.jit
def row_sum(X, Out, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK, multi_cta=True):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + row * stride + cols, mask=cols < N, other=0.)
    tl.store(Out + row, tl.sum(acc, axis=0))


@tlxc.jit
def block_row_sum(X, Out, stride, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for off in tl.range(0, N, BN, multi_cta=True):
        cols = off + tl.arange(0, BN)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(X + rows[:, None] * stride + cols[None, :], mask=mask, other=0.)
    tl.store(Out + rows, tl.sum(acc, axis=1), mask=rows < M)


@tlxc.jit
def count_from(Out, N, START):
    # a scalar accumulator that starts at START: counted once over the cluster
    total = START
    for i in tl.range(0, N, 1, multi_cta=True):
        total += i
    tl.store(Out + tl.program_id(0), total)


@tlxc.jit
def layer_norm(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    _mean = tl.zeros([BLOCK], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK, multi_cta=True):
        cols = off + tl.arange(0, BLOCK)
        _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK, multi_cta=True):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    rstd = 1 / tl.sqrt(tl.sum(_var, axis=0) / N + eps)
    for off in tl.range(0, N, BLOCK, multi_cta=True):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        y = (x - mean) * rstd * tl.load(W + cols, mask=mask) + tl.load(B + cols, mask=mask)
        tl.store(Y + cols, y, mask=mask)


@tlxc.jit
def row_sum_in_loop(X, Out, stride, N, REPS: tl.constexpr, BLOCK: tl.constexpr):
    # the combine inside an outer loop: its buffer is written again in each round
    row = tl.program_id(0)
    for r in range(REPS):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in tl.range(0, N, BLOCK, multi_cta=True):
            cols = off + tl.arange(0, BLOCK)
            acc += tl.load(X + (row * REPS + r) * stride + cols, mask=cols < N, other=0.)
        tl.store(Out + row * REPS + r, tl.sum(acc, axis=0))
