"""``tl.load_tensor_descriptor(desc, offsets)`` and ``tl.store_tensor_descriptor(desc,
offsets, value)``: Triton's function forms of ``desc.load`` / ``desc.store``."""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl


@tlxc.jit
def copy_blocks(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    a = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    b = tl.make_tensor_descriptor(dst, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    tl.store_tensor_descriptor(b, [m, n], tl.load_tensor_descriptor(a, [m, n]) * 2)


def test_function_forms_move_the_blocks() -> None:
    x = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
    y = np.zeros_like(x)
    copy_blocks.interpret[(3, 2)](x, y, 40, 24, BM=16, BN=16)  # ragged on both dims: TMA clips
    np.testing.assert_array_equal(y, 2 * x)


def test_function_forms_compile_to_tma() -> None:
    ptx = copy_blocks.compile("*fp32:16,*fp32:16,i32:16,i32:16", constants=dict(BM=16, BN=16),
                              arch="sm_90a").asm["ptx"]
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
