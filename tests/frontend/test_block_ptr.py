"""Block pointers: ``tl.make_block_ptr``, ``tl.advance`` and ``tl.load`` / ``tl.store`` with
``boundary_check`` and ``padding_option`` (tlxc/frontend/block_ptr.py), in the
interpreter against numpy, compiled for every target, and their bad input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def add_one(x, y, M, N, sxm, sxn, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    src = tl.make_block_ptr(x, (M, N), (sxm, sxn), (pm * BM, pn * BN), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
    v = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
    tl.store(dst, v + 1.0, boundary_check=(0, 1))


@tlxc.jit
def padded_block(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr, CHECK: tl.constexpr):
    """The block at (-2, N - 3): what the padding gives outside the tensor, stored whole."""
    src = tl.make_block_ptr(x, (M, N), (N, 1), (-2, N - 3), (BM, BN), (1, 0))
    if CHECK == 1:
        v = tl.load(src, boundary_check=(0,), padding_option=PAD)
    else:
        v = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
    tl.store(y + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], v)


@tlxc.jit
def row_sums(x, out, M, K, BM: tl.constexpr, BK: tl.constexpr):
    p = tl.make_block_ptr(x, (M, K), (K, 1), (tl.program_id(0) * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM,), tl.float32)
    for _ in range(0, K, BK):
        acc += tl.sum(tl.load(p, boundary_check=(0, 1)), 1)
        p = tl.advance(p, (0, BK))
    o = tl.make_block_ptr(out, (M,), (1,), (tl.program_id(0) * BM,), (BM,), (0,))
    tl.store(o, acc, boundary_check=(0,))


@tlxc.jit
def matmul_bp(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Triton's block-pointer matmul: both operands advance along K in the loop."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    pa = tl.make_block_ptr(a, (M, K), (K, 1), (pm * BM, 0), (BM, BK), (1, 0))
    pb = tl.make_block_ptr(b, (K, N), (N, 1), (0, pn * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(pa, boundary_check=(0, 1)), tl.load(pb, boundary_check=(0, 1)))
        pa = tl.advance(pa, (0, BK))
        pb = tl.advance(pb, (BK, 0))
    pc = tl.make_block_ptr(c, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(pc, acc.to(tl.float16), boundary_check=(0, 1))


@pytest.mark.parametrize("pad", ["", "zero", "nan"])
def test_copy_with_ragged_edges(pad: str) -> None:
    m, n = 37, 50
    x = np.random.default_rng(1).random((m, n)).astype(np.float32)
    y = np.zeros_like(x)
    add_one.interpret[(3, 4)](x, y, m, n, n, 1, BM=16, BN=16, PAD=pad)
    np.testing.assert_array_equal(y, x + 1)


def test_a_transposed_view_through_strides() -> None:
    x = np.random.default_rng(2).random((20, 12)).astype(np.float32)
    xt = x.T  # strides (1, 12) in elements over the same memory
    y = np.zeros((12, 20), np.float32)
    add_one.interpret[(1, 2)](x, y, 12, 20, 1, 12, BM=16, BN=16, PAD="zero")
    np.testing.assert_array_equal(y, xt + 1)


@pytest.mark.parametrize("pad,check", [("zero", 2), ("nan", 2), ("zero", 1)])
def test_padding_outside_the_tensor(pad: str, check: int) -> None:
    m, n, bm, bn = 6, 8, 4, 8
    x = np.arange(m * n, dtype=np.float32).reshape(m, n) + 1
    y = np.full((bm, bn), -7.0, np.float32)
    if check == 1:  # columns unchecked: read only those inside the row bounds
        x_pad = np.concatenate([x, np.zeros((1, n), np.float32)]).ravel()  # the kernel may read past row 5
        padded_block.interpret[(1,)](x_pad, y, m, n, BM=bm, BN=bn, PAD=pad, CHECK=check)
        assert np.isnan(y[:2]).all() if pad == "nan" else (y[:2] == 0).all()
        return
    padded_block.interpret[(1,)](x, y, m, n, BM=bm, BN=bn, PAD=pad, CHECK=check)
    want = np.full((bm, bn), np.nan if pad == "nan" else 0.0, np.float32)
    want[2:4, 0:3] = x[0:2, n - 3:n]
    np.testing.assert_array_equal(y, want)


@tlxc.jit
def cast_to_element(src, dst, N, B: tl.constexpr):
    bp = tl.make_block_ptr(base=src, shape=(N,), strides=(1,), offsets=(0,), block_shape=(B,), order=(0,))
    v = tl.load(bp, boundary_check=(0,), padding_option="zero").to(tl.float32).to(bp.dtype.element_ty)
    tl.store(dst + tl.arange(0, B), v)


def test_dtype_of_a_block_pointer() -> None:
    """``bp.dtype.element_ty`` (Triton's test_block_ptr_dtype); was TLXC-NAME-001."""
    x = np.arange(5, dtype=np.float16) + 0.5
    y = np.full(8, 7, np.float16)
    cast_to_element.interpret[(1,)](x, y, 5, B=8)
    assert y.tolist() == [0.5, 1.5, 2.5, 3.5, 4.5, 0.0, 0.0, 0.0]
    ir = cast_to_element.compile("*fp16,*fp16,i32", {"B": 8}).asm["ir"]
    assert "f32" in ir and "f16" in ir


def test_advance_in_a_loop() -> None:
    x = np.random.default_rng(3).random((37, 70)).astype(np.float32)
    out = np.zeros(37, np.float32)
    row_sums.interpret[(3,)](x, out, 37, 70, BM=16, BK=32)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5)


@tlxc.jit
def row_sums_method(x, out, M, K, BM: tl.constexpr, BK: tl.constexpr):
    """``row_sums`` with Triton's method form ``p.advance(offsets)``."""
    p = tl.make_block_ptr(x, (M, K), (K, 1), (tl.program_id(0) * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM,), tl.float32)
    for _ in range(0, K, BK):
        acc += tl.sum(tl.load(p, boundary_check=(0, 1)), 1)
        p = p.advance((0, BK))
    o = tl.make_block_ptr(out, (M + BM,), (1,), (tl.program_id(0) * BM,), (BM,), (0,)).advance((BM,))
    tl.store(o, acc, boundary_check=(0,))


def test_advance_as_a_method() -> None:
    """``bp.advance(offsets)`` was TLXC-NAME-001 ("has no attribute 'advance'")."""
    x = np.random.default_rng(3).random((37, 70)).astype(np.float32)
    out = np.zeros(37 + 16, np.float32)
    row_sums_method.interpret[(3,)](x, out, 37, 70, BM=16, BK=32)
    np.testing.assert_allclose(out[16:], x.sum(1), rtol=1e-5)  # the output block starts one block later
    assert not out[:16].any()


def test_matmul_with_block_pointers() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((40, 72)).astype(np.float16)
    b = rng.standard_normal((72, 48)).astype(np.float16)
    c = np.zeros((40, 48), np.float16)
    matmul_bp.interpret[(3, 3)](a, b, c, 40, 48, 72, BM=16, BN=16, BK=32)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942", "gfx950", "gfx1250"])
def test_every_target_compiles_them(arch: str) -> None:
    ck = matmul_bp.compile("*fp16,*fp16,*fp16,i32,i32,i32", {"BM": 64, "BN": 64, "BK": 32}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm_") else "amdgcn"]


BAD = """
@tlxc.jit
def k(x):
    p = tl.make_block_ptr(x, {shape}, {strides}, {offsets}, {block}, {order})
    {use}
"""
GOOD = dict(shape="(16, 16)", strides="(16, 1)", offsets="(0, 0)", block="(16, 16)", order="(1, 0)",
            use="v = tl.load(p)")


@pytest.mark.parametrize("change,message", [
    ({"strides": "(16,)"}, "block_shape has rank 2 but strides has 1 entries"),
    ({"block": "(16, 12)"}, "block_shape entries must be constant powers of two"),
    ({"order": "(0, 0)"}, "order must be a permutation of 0..1"),
    ({"use": "p = tl.advance(p, (1,))"}, "tl.advance: the block pointer has rank 2 but offsets has 1 entries"),
    ({"use": "p = p.advance((1,))"}, "tl.advance: the block pointer has rank 2 but offsets has 1 entries"),
    ({"use": "p = p.retreat((1, 1))"}, "has no attribute 'retreat'"),
    ({"use": "v = tl.load(p, other=1.0)"}, "takes boundary_check and padding_option, not mask and other"),
    ({"use": "v = tl.load(p, boundary_check=(2,))"}, "boundary_check entries must be dimensions of the block"),
    ({"use": "v = tl.load(p, boundary_check=(0,), padding_option='inf')"}, "padding_option must be 'zero' or 'nan'"),
    ({"use": "tl.store(p, tl.zeros((8, 16), tl.float32))"}, "got a tile of float32 with shape [8, 16]"),
    ({"use": "v = tl.load(x, boundary_check=(0,))"}, "boundary_check and padding_option apply to block pointers"),
])
def test_bad_block_pointers_are_errors_at_the_line(load_kernels: Any, change: dict, message: str) -> None:
    m = load_kernels(BAD.format(**{**GOOD, **change}))
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    assert message in str(info.value), str(info.value)
    assert info.value.loc is not None and info.value.loc.line in (7, 8)
