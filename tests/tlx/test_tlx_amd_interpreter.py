"""TLX's AMD operations and scaled dot on the CPU interpreter, against numpy (the kernels:
tests/tlx/tlx_amd_kernels.py): the seed's scheduled-MFMA examples, every role and
``initialize``, a runtime K loop, rank 3, the register-class and scheduling ops (the
identity), ``extract_slice``, ``rematerialized_range``, ``tlx.zeros``, ``tl.cat``, and
``tl.dot_scaled`` / ``tlx.dot_scaled`` in every mx format with and without scales.

The dot_scaled reference here decodes with ml_dtypes' own fp4 / e8m0 types, independently
of the interpreter's decoding."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
import tlx_amd_kernels as K  # tests/tlx/tlx_amd_kernels.py

import tlxc.tlx as tlx

# AMD operations have no NVIDIA lowering (tl.dot_scaled's NVIDIA decomposition is checked in
# tests/passes/test_decompose_scaled_dot.py): with TLXC_TEST_ON_GPU=1 (the H200) these stay
# in the interpreter, which is what they check
pytestmark = pytest.mark.interpreter_only

BF16 = ml_dtypes.bfloat16
RNG = np.random.default_rng(7)


def _randn(shape: tuple[int, ...], dtype: object) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def test_seed_independent_subtiles() -> None:
    a, b = _randn((64, 16), BF16), _randn((16, 128), BF16)
    c = np.full((64, 128), np.nan, np.float32)
    K.independent_subtiles.interpret[(1,)](a, b, c)
    np.testing.assert_allclose(c, _mm(a, b), rtol=1e-5, atol=1e-5)


def test_seed_transient_chain() -> None:
    a, b = _randn((16, 32), BF16), _randn((32, 64), BF16)
    c = np.zeros((16, 64), np.float32)
    K.transient_chain.interpret[(1,)](a, b, c, BM=16, BN=64, BK=32)
    np.testing.assert_allclose(c, _mm(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("k_width", [4, 8])
def test_banded_chain(k_width: int) -> None:
    a, b = _randn((16, 256), BF16), _randn((256, 64), BF16)
    c = np.zeros((16, 64), np.float32)
    K.banded_chain.interpret[(1,)](a, b, c, BANDS=8, K_WIDTH=k_width)
    np.testing.assert_allclose(c, _mm(a, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("init", [False, True])
@pytest.mark.parametrize("role,acc_class", [("transient", None), ("persistent", None), ("persistent", "vgpr"),
                                            ("transient", "agpr")])
def test_initialize_and_roles(init: bool, role: str, acc_class: str | None) -> None:
    a, b = _randn((32, 32), np.float16), _randn((32, 64), np.float16)
    c = np.zeros((32, 64), np.float32)
    K.accumulate.interpret[(1,)](a, b, c, INIT=init, ROLE=role, ACC_CLASS=acc_class)
    np.testing.assert_allclose(c, _mm(a, b) + (0 if init else 7), rtol=1e-5, atol=1e-4)


def test_runtime_k_loop() -> None:
    a, b = _randn((32, 128), np.float16), _randn((128, 32), np.float16)
    c = np.zeros((32, 32), np.float32)
    K.k_loop.interpret[(1,)](a, b, c, 128, BK=32)
    np.testing.assert_allclose(c, _mm(a, b), rtol=1e-4, atol=1e-4)


def test_rank_three() -> None:
    a, b = _randn((2, 32, 16), BF16), _randn((2, 16, 32), BF16)
    c = np.zeros((2, 32, 32), np.float32)
    K.batched.interpret[(1,)](a, b, c)
    np.testing.assert_allclose(c, _mm(a, b), rtol=1e-5, atol=1e-5)


def test_register_and_scheduling_ops_are_the_identity() -> None:
    x, h = _randn((1024,), np.float32), _randn((1024,), np.float16)
    y, g = np.zeros_like(x), np.zeros_like(h)
    K.register_ops.interpret[(1,)](x, y, h, g)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(g, h)


def test_rematerialized_range() -> None:
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.zeros_like(x)
    K.remat_copy.interpret[(1,)](x, y, 3)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("row,col", [(0, 0), (32, 64), (224, 0), (96, 64)])
def test_extract_slice(row: int, col: int) -> None:
    x = np.arange(256 * 128, dtype=np.float32).reshape(256, 128).astype(BF16)
    y = np.zeros((32, 64), BF16)
    K.slice_of.interpret[(1,)](x, y, ROW=row, COL=col)
    np.testing.assert_array_equal(y, x[row:row + 32, col:col + 64])


def test_zeros_with_a_layout_argument() -> None:
    y, z = np.zeros((32, 32), np.float32), np.full(32, 5, np.int32)
    mma = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True, warps_per_cta=[2, 2])
    K.zeros_kernel.interpret[(1,)](y, z, LAYOUT=mma)
    np.testing.assert_array_equal(y, np.ones((32, 32), np.float32))
    np.testing.assert_array_equal(z, np.zeros(32, np.int32))


@pytest.mark.parametrize("dim", [0, 1])
def test_cat(dim: int) -> None:
    x, y = _randn((16, 32), np.float32), _randn((16, 32), np.float32)
    out = np.zeros((32, 32) if dim == 0 else (16, 64), np.float32)
    K.cat_kernel.interpret[(1,)](x, y, out, DIM=dim)
    np.testing.assert_array_equal(out, np.concatenate([x, y], axis=dim))


def test_layout_classes_check_their_fields() -> None:
    with pytest.raises(ValueError, match="instr_shape"):
        tlx.amd_mfma_layout(4, [8, 8, 4], True, [2, 2])
    with pytest.raises(ValueError, match="tiles_per_warp"):
        tlx.amd_mfma_layout(4, [16, 16, 32], True, [2, 2], tiles_per_warp=[1])
    with pytest.raises(ValueError, match="operand_index"):
        tlx.dot_operand_layout(2, tlx.amd_mfma_layout(4, [16, 16, 32], True, [2, 2]))
    assert tlx.amd_mfma_layout(4, [16, 16, 32], True, [2, 2]) == tlx.amd_mfma_layout(4, (16, 16, 32), 1, (2, 2))
    assert tlx.amd_wmma_layout().instr_shape == (16, 16, 128)


# -- dot_scaled ------------------------------------------------------------------------------
def _mx_values(fmt: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(the operand as the kernel reads it, its values as float64); e2m1 packs pairs along
    the last dim of ``shape``, which must then be even."""
    if fmt == "e2m1":
        codes = RNG.integers(0, 16, size=shape, dtype=np.uint8)
        vals = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float64)  # one code per byte
        packed = codes[..., 0::2] | (codes[..., 1::2] << 4)
        return packed, vals
    dtype = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "bf16": BF16,
             "fp16": np.float16}[fmt]
    x = (RNG.standard_normal(shape) * 2).astype(dtype)
    return x, x.astype(np.float64)


def _scales(rows: int, groups: int) -> tuple[np.ndarray, np.ndarray]:
    s = RNG.integers(120, 134, size=(rows, groups), dtype=np.uint8)
    return s, s.view(ml_dtypes.float8_e8m0fnu).astype(np.float64)


def _scaled_case(fa: str, fb: str, a_pack: bool = True, b_pack: bool = True, a_scale: bool = True,
                 b_scale: bool = True, acc: bool = False, group: int = 32, use_tlx: bool = False,
                 tpw: tuple[int, int] | None = None, a_bits: bool = False) -> None:
    m, n, k = 32, 32, 64
    sk = k // group
    # the operands' values, [M, K] and [K, N]; e2m1 packs along K or along M / N
    if fa == "e2m1" and not a_pack:
        a_in, av = _mx_values(fa, (k, m))
        a_in, av = np.ascontiguousarray(a_in.T), av.T
    else:
        a_in, av = _mx_values(fa, (m, k))
    if fb == "e2m1" and b_pack:
        b_in, bv = _mx_values(fb, (n, k))
        b_in, bv = np.ascontiguousarray(b_in.T), bv.T
    else:
        b_in, bv = _mx_values(fb, (k, n))
    if a_bits:
        a_in = a_in.view(np.uint8 if a_in.itemsize == 1 else np.uint16)
    sa, sav = _scales(m, sk)
    sb, sbv = _scales(n, sk)
    x = av * (np.repeat(sav, group, axis=1) if a_scale else 1)
    y = bv * (np.repeat(sbv, group, axis=1).T if b_scale else 1)
    c = _randn((m, n), np.float32) if acc else np.zeros((m, n), np.float32)
    want = x @ y + (c if acc else 0)
    K.scaled.interpret[(1,)](a_in, sa, b_in, sb, c, AM=a_in.shape[0], AK=a_in.shape[1], BK=b_in.shape[0],
                             BN=b_in.shape[1], M=m, N=n, SK=sk, FA=fa, FB=fb, A_PACK=a_pack, B_PACK=b_pack,
                             A_SCALE=a_scale, B_SCALE=b_scale, ACC=acc, TLX=use_tlx, TPW=tpw)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-3 * np.abs(want).max())


@pytest.mark.parametrize("fa", ["e2m1", "e4m3", "e5m2", "bf16", "fp16"])
@pytest.mark.parametrize("fb", ["e2m1", "e4m3", "e5m2", "bf16"])
def test_dot_scaled_formats(fa: str, fb: str) -> None:
    _scaled_case(fa, fb)


def test_dot_scaled_e2m1_packed_along_m_and_n() -> None:
    _scaled_case("e2m1", "e2m1", a_pack=False, b_pack=False)


@pytest.mark.parametrize("a_scale,b_scale", [(False, False), (True, False), (False, True)])
def test_dot_scaled_without_scales(a_scale: bool, b_scale: bool) -> None:
    _scaled_case("e4m3", "bf16", a_scale=a_scale, b_scale=b_scale, acc=True)


def test_dot_scaled_group_of_16_and_bits_as_integers() -> None:
    _scaled_case("e5m2", "e2m1", group=16, a_bits=True)
    _scaled_case("bf16", "fp16", a_bits=True, acc=True)


@pytest.mark.parametrize("tpw", [None, (1, 1), (2, 2)])
def test_tlx_dot_scaled_is_tl_dot_scaled(tpw: tuple[int, int] | None) -> None:
    _scaled_case("e4m3", "e2m1", acc=True, use_tlx=True, tpw=tpw)


def test_tlx_dot_scaled_records_tiles_per_warp() -> None:
    def ir(use_tlx: bool, tpw: tuple[int, int] | None) -> str:
        consts = dict(AM=32, AK=64, BK=64, BN=32, M=32, N=32, SK=2, FA="e4m3", FB="e4m3", A_PACK=True,
                      B_PACK=True, A_SCALE=True, B_SCALE=True, ACC=False, TLX=use_tlx, TPW=tpw)
        sig = "*fp8e4nv,*u8,*fp8e4nv,*u8,*fp32"
        return K.scaled.compile(sig, constants=consts, arch="gfx1250").asm["ir"]

    assert "tiles_per_warp = [2, 2]" in ir(True, (2, 2))
    plain = ir(False, None)
    assert "dot_scaled" in plain and "tiles_per_warp" not in plain
    # without tiles_per_warp, exactly tl.dot_scaled (the lines of the two calls differ)
    assert re.sub(r" loc\(\d+:\d+\)", "", ir(True, None)) == re.sub(r" loc\(\d+:\d+\)", "", plain)
