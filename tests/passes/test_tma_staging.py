"""``tma_staging`` turns the register forms of TMA (``desc.load`` / ``desc.store``) into
shared-memory staging with explicit TMA copies; the staged kernel computes the same
result in the interpreter."""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
from tlxc.codegen.targets import backend
from tlxc.interpreter import run_kernel
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, tma_staging
from tlxc.ir.verifier import verify


@tlxc.jit
def _scale_block(x_desc, y_desc, BM: tl.constexpr):
    row = tl.program_id(0) * BM
    y_desc.store([row, 0], x_desc.load([row, 0]) * 3)


def test_staged_kernel_matches() -> None:
    ck = _scale_block.compile("tensordesc<fp32[16,32]>,tensordesc<fp32[16,32]>", {"BM": 16})
    module = tma_staging.run(parse_ir(ck.asm["ir"]), PassOptions(target=backend("sm_90a").info))
    verify(module)
    names = [op.name for op in module.walk()]
    assert "descriptor_load" not in names and "descriptor_store" not in names
    assert names.count("tma_load") == 1 and names.count("tma_store") == 1
    i = names.index
    assert i("barrier_expect") < i("tma_load") < i("barrier_wait") < i("local_load")
    assert i("local_store") < i("tma_store") < i("tma_store_wait")
    x = np.arange(40 * 32, dtype=np.float32).reshape(40, 32)
    y = np.zeros_like(x)
    args = [tlxc.TensorDescriptor.from_tensor(x, [16, 32]), tlxc.TensorDescriptor.from_tensor(y, [16, 32])]
    (func,) = module.funcs
    run_kernel(func, (3, 1, 1), args)
    np.testing.assert_array_equal(y, 3 * x)
