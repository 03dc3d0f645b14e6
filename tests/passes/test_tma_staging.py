"""``tma_staging`` turns the register forms of TMA (``desc.load`` / ``desc.store``) into
shared-memory staging with explicit TMA copies; the staged kernel computes the same
result in the interpreter."""

from __future__ import annotations

import numpy as np

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
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


@tlxc.jit
def _scale_rows(x_desc, y_desc, R, BM: tl.constexpr):
    for row in tl.range(tl.program_id(0) * BM, R, 2 * BM):
        y_desc.store([row, 0], x_desc.load([row, 0]) * 3)


def test_a_store_in_a_loop_waits_before_it_writes_its_buffer_again() -> None:
    """The TMA engine reads one iteration's staging buffer while the next runs: the buffer
    is allocated before the loop, the wait sits before the next write into it, and after
    the loop; the staged kernel computes the same numbers."""
    ck = _scale_rows.compile("tensordesc<fp32[16,32]>,tensordesc<fp32[16,32]>,i32", {"BM": 16})
    module = tma_staging.run(parse_ir(ck.asm["ir"]), PassOptions(target=backend("sm_90a").info))
    verify(module)
    (func,) = module.funcs
    top = [op.name for op in func.body.ops]
    loop = next(op for op in func.body.ops if op.name == "for")
    body = [op.name for op in loop.body.ops]
    assert body.index("tma_store_wait") < body.index("local_store") < body.index("tma_store")
    assert body.count("tma_store_wait") == 1 and top[top.index("for") + 1] == "tma_store_wait"
    allocs = [op for op in func.walk() if op.name == "local_alloc" and op.result.type.buf_shape == (16, 32)]
    store_buf = [a for a in allocs if a.parent is func.body]
    assert len(store_buf) == 1  # the store's staging buffer, before the loop
    x = np.arange(80 * 32, dtype=np.float32).reshape(80, 32)
    y = np.zeros_like(x)
    args = [tlxc.TensorDescriptor.from_tensor(x, [16, 32]), tlxc.TensorDescriptor.from_tensor(y, [16, 32]), 80]
    run_kernel(func, (2, 1, 1), args)
    np.testing.assert_array_equal(y, 3 * x)


def test_sm90a_a_loop_of_stores_does_not_wait_for_each() -> None:
    ptx = _scale_rows.compile("tensordesc<fp32[16,32]>,tensordesc<fp32[16,32]>,i32", {"BM": 16},
                              arch="sm_90a").asm["ptx"]
    loop = ptx[ptx.index("$_for_head"):ptx.index("bra.uni $_for_head")]
    # the wait for the previous store comes before this one's writes into the buffer
    assert loop.index("cp.async.bulk.wait_group.read 0") < loop.index("st.shared")
    assert loop.index("st.shared") < loop.index("cp.async.bulk.tensor.2d.global.shared::cta")
    after = ptx[ptx.index("bra.uni $_for_head"):]
    assert "cp.async.bulk.wait_group.read 0" in after


@tlxc.jit
def _ws_scale_rows(x_desc, y_desc, R, BM: tl.constexpr):
    """A persistent consumer partition (two replicas) stores a tile per trip."""
    with tlx.async_tasks():
        with tlx.async_task("default"):
            pass
        with tlx.async_task(num_warps=4, replicate=2):
            g = tlx.async_task_replica_id()
            for row in tl.range((tl.program_id(0) * 2 + g) * BM, R, 4 * BM):
                y_desc.store([row, 0], x_desc.load([row, 0]) * 3)


def test_a_store_in_a_partitions_loop_waits_before_it_writes_its_buffer_again() -> None:
    """Inside a warp-specialized partition the staging buffer lives across the partition's
    own loop (each replica its own), the wait before the next write and after the loop,
    all inside the partition; the numbers stay right."""
    ck = _ws_scale_rows.compile("tensordesc<fp32[16,32]>,tensordesc<fp32[16,32]>,i32", {"BM": 16})
    module = tma_staging.run(parse_ir(ck.asm["ir"]), PassOptions(target=backend("sm_90a").info))
    verify(module)
    (func,) = module.funcs
    loop = next(op for op in func.walk() if op.name == "for")
    region = loop.parent
    body = [op.name for op in loop.body.ops]
    assert body.index("tma_store_wait") < body.index("local_store") < body.index("tma_store")
    around = [op.name for op in region.ops]
    assert around[around.index("for") + 1] == "tma_store_wait"
    assert any(op.name == "local_alloc" and op.result.type.buf_shape == (16, 32) for op in region.ops)
    x = np.arange(96 * 32, dtype=np.float32).reshape(96, 32)
    y = np.zeros_like(x)
    args = [tlxc.TensorDescriptor.from_tensor(x, [16, 32]), tlxc.TensorDescriptor.from_tensor(y, [16, 32]), 96]
    run_kernel(func, (2, 1, 1), args)
    np.testing.assert_array_equal(y, 3 * x)
    ptx = _ws_scale_rows.compile("tensordesc<fp32[16,32]>,tensordesc<fp32[16,32]>,i32", {"BM": 16},
                                 arch="sm_90a").asm["ptx"]
    head = ptx.index("$_for_head")
    loop_text = ptx[head:ptx.index("bra.uni $_for_head", head)]
    assert loop_text.count("cp.async.bulk.wait_group.read 0") == 1
    assert loop_text.index("cp.async.bulk.wait_group.read 0") < loop_text.index("st.shared")
