"""The kernels of tlx_alias_kernels.py in the interpreter: aliases of a
storage_alias_spec really share bytes (a write through one is read through another),
distinct groups do not overlap (index-interleaved a0|b0|a1|b1), group_size subtiles,
and pinned layouts give the same results as the compiler's (layouts only move bytes on
the GPU)."""

from __future__ import annotations

import numpy as np
import pytest
import tlx_alias_kernels as K  # tests/tlx/tlx_alias_kernels.py

B = 16


def test_shared_group_aliases_share_bytes() -> None:
    x = np.arange(B * B, dtype=np.float16).reshape(B, B)
    y = np.zeros_like(x)
    K.shared_overlap.interpret[(1,)](x, y, B=B)
    np.testing.assert_array_equal(y, x)


def test_distinct_group_is_index_interleaved() -> None:
    x = np.arange(B * B, dtype=np.float32).reshape(B, B)
    y = np.zeros((2, B, B), np.float32)
    raw = np.zeros((4, B, B), np.float32)
    K.distinct_overlap.interpret[(1,)](x, y, raw, B=B)
    np.testing.assert_array_equal(y[0], x + 10)   # a[1] kept its data
    np.testing.assert_array_equal(y[1], x + 100)  # b[0] too
    for j, add in enumerate([0, 100, 10, 110]):   # a0 | b0 | a1 | b1
        np.testing.assert_array_equal(raw[j], x + add)


def test_nested_groups_and_group_size() -> None:
    x = np.random.default_rng(1).random((2, B, B)).astype(np.float32)
    p = np.zeros((4, B, B // 2), np.float16)
    alpha = np.zeros((2, B, 1), np.float32)
    K.nested_group_size.interpret[(1,)](x, p, alpha, B=B)
    raw = x.reshape(-1).view(np.uint8)
    slot = B * B * 4
    for j in range(4):  # p[2i], p[2i+1] overlay the two halves of qk[i]
        np.testing.assert_array_equal(p[j].reshape(-1).view(np.uint8), raw[j * slot // 2:j * slot // 2 + B * B])
    for i in range(2):  # alpha[i] follows p[2i+1]'s bytes (3/4 of the way into qk[i])
        start = i * slot + 3 * slot // 4
        np.testing.assert_array_equal(alpha[i].reshape(-1), raw[start:start + 4 * B].view(np.float32))


def test_runtime_indices_into_a_distinct_pair() -> None:
    x = np.random.default_rng(2).random((5, B)).astype(np.float32)
    y = np.zeros_like(x)
    K.runtime_index_alias.interpret[(1,)](x, y, 5, B=B)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("kind", range(5))
def test_pinned_layouts_store_and_load(kind: int) -> None:
    x = np.arange(32 * 64, dtype=np.float16).reshape(32, 64)
    y = np.zeros_like(x)
    K.pinned_store_load.interpret[(1,)](x, y, R=32, C=64, KIND=kind)
    np.testing.assert_array_equal(y, x)


def test_a_layout_can_be_a_constexpr_argument() -> None:
    import tlxc.language as tl
    import tlxc.tlx as tlx

    x = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    for layout in (tlx.swizzled_shared_layout_encoding.make_default(2),
                   tlx.nv_mma_shared_layout_encoding.make_default([64, 64], tl.float16)):
        y = np.zeros_like(x)
        K.pinned_from_argument.interpret[(1,)](x, y, L=layout)
        np.testing.assert_array_equal(y, x)
