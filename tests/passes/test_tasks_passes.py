"""The passes on warp-specialized kernels (``async_tasks``): CSE keeps partitions apart,
layouts follow each partition's warp count, ``dot-to-wgmma`` needs a warpgroup in the
partition, shared memory used in partitions stays live for the whole region (they run
side by side), and hazard barriers inside a partition span its warps only. The code
generators refuse the op for now (TLXC-CODEGEN-001 at the region's line)."""

from __future__ import annotations

import pytest
import tlxc.language.extra.tlx as tlx

import tlxc
import tlxc.language as tl
from tlxc.ir import ops
from tlxc.ir.core import Operation
from tlxc.ir.layout.common import WARP
from tlxc.ir.ops.tasks import AsyncTasksOp
from tlxc.ir.types import TileType


@tlxc.jit
def _row(ptr, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.load(ptr + offs) * 2.0)


@tlxc.jit
def _helper_in_two(x, y, z, N: tl.constexpr):
    with tlx.async_tasks():
        with tlx.async_task("default"):
            _row(x, y, N)
        with tlx.async_task(num_warps=1):
            _row(x, z, N)


def _tasks(module: Operation) -> AsyncTasksOp:
    return next(op for op in module.walk() if isinstance(op, AsyncTasksOp))


def _warps_of_tiles(block: object) -> set[int]:
    out = set()
    for op in block.ops:  # type: ignore[attr-defined]
        for o in op.walk():
            for r in o.results:
                if isinstance(r.type, TileType) and r.type.layout is not None:
                    out.add(r.type.layout.in_dim_size(WARP))
    return out


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
def test_layouts_follow_each_partitions_warps(arch: str) -> None:
    compiled = _helper_in_two.compile("*fp32,*fp32,*fp32", constants={"N": 1024}, arch=arch, num_warps=4)
    region = _tasks(compiled.lowered())
    default, worker = region.partitions
    assert _warps_of_tiles(default.block) == {4}
    assert _warps_of_tiles(worker.block) == {1}  # a 1-warp task may hold a 1024-element tile


@pytest.mark.parametrize("arch", ["gfx942"])  # NVIDIA: tests/codegen/test_ws_ptx.py
def test_code_generators_refuse_warp_specialization_at_its_line(arch: str) -> None:
    compiled = _helper_in_two.compile("*fp32,*fp32,*fp32", constants={"N": 128}, arch=arch)
    with pytest.raises(tlxc.CompilationError) as info:
        compiled.asm["ptx" if arch.startswith("sm") else "llir"]
    err = info.value
    assert err.code == "TLXC-CODEGEN-001"
    assert f"warp specialization (tlx.async_tasks) is not supported by the {arch} code generator yet" in err.message
    assert err.loc is not None and "with tlx.async_tasks():" in str(err)


@tlxc.jit
def _same_constant_inside_and_out(x, y):
    offs = tl.arange(0, 64)
    tl.store(x + offs, tl.full((64,), 3.0, tl.float32))
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(x + offs, tl.full((64,), 1.0, tl.float32))
        with tlx.async_task(num_warps=1):
            o = tl.arange(0, 64)
            tl.store(y + o, tl.full((64,), 3.0, tl.float32))


def test_cse_does_not_reach_into_worker_partitions() -> None:
    module = _same_constant_inside_and_out.compile("*fp32,*fp32").module
    region = _tasks(module)
    worker = region.partitions[1]
    inside = {id(r) for op in worker.block.ops for o in op.walk() for r in o.results}
    for op in worker.block.ops:
        for o in op.walk():
            for v in o.operands:
                assert id(v) in inside or not isinstance(v.type, TileType), o
    # the worker's arange and constant are its own; outside, the same ones were merged
    assert sum(isinstance(o, ops.ArangeOp) for o in worker.block.ops) == 1
    assert sum(isinstance(o, ops.ConstantOp) and isinstance(o.result.type, TileType) for o in worker.block.ops) == 1


@tlxc.jit
def _buffers_in_partitions(x, y):
    with tlx.async_tasks():
        with tlx.async_task("default"):
            a = tlx.local_alloc((64,), tl.float32, 1)
            tlx.local_store(a[0], tl.load(x + tl.arange(0, 64)))
            tl.store(y + tl.arange(0, 64), tlx.local_load(a[0]))
        with tlx.async_task(num_warps=1):
            b = tlx.local_alloc((64,), tl.float32, 1)
            o = tl.arange(0, 64)
            tlx.local_store(b[0], tl.load(x + o))
            tl.store(y + 64 + o, tlx.local_load(b[0]))


def test_buffers_of_partitions_do_not_share_bytes_and_barriers_span_the_partition() -> None:
    module = _buffers_in_partitions.compile("*fp32,*fp32", arch="sm_90a", num_warps=4).lowered()
    allocs = [op for op in module.walk() if isinstance(op, ops.LocalAllocOp)]
    assert len(allocs) == 2
    (lo_a, lo_b) = sorted(op.attrs["smem_offset"] for op in allocs)
    assert lo_b >= lo_a + 256  # in program order the two never meet, in time they run together
    region = _tasks(module)
    barriers = [[o.attrs["threads"] for op in p.block.ops for o in op.walk() if isinstance(o, ops.NamedBarrierWaitOp)]
                for p in region.partitions]
    assert barriers == [[128], [32]]  # the store -> load hazard, over the partition's own threads


@tlxc.jit
def _two_stores_per_replica(out_desc, BLOCK: tl.constexpr):
    with tlx.async_tasks():
        with tlx.async_task("default"):
            pass
        with tlx.async_task(num_warps=4, replicate=2):
            row = tlx.async_task_replica_id() * 2 * BLOCK
            tile = tl.full((BLOCK, BLOCK), 1.0, tl.float16)
            out_desc.store([row, 0], tile)
            out_desc.store([row + BLOCK, 0], tile * 2)


def test_staging_buffers_share_bytes_within_a_partition_not_across_replicas() -> None:
    # Found by TLX's pingpong GEMM tutorial: its two epilogue stores per consumer got four
    # staging buffers and the kernel needed 262 KB; Triton reuses one per consumer.
    sig = {"out_desc": "tensordesc<fp16[64,64]>"}
    module = _two_stores_per_replica.compile(sig, {"BLOCK": 64}, arch="sm_90a", num_warps=4).lowered()
    region = _tasks(module)
    offsets = [sorted({o.attrs["smem_offset"] for op in p.block.ops for o in op.walk()
                       if isinstance(o, ops.LocalAllocOp)})
               for p in region.partitions]
    assert [len(o) for o in offsets] == [0, 1, 1]  # one 8 KB staging buffer per replica, used twice
    assert abs(offsets[1][0] - offsets[2][0]) >= 64 * 64 * 2  # the replicas run side by side


@tlxc.jit
def _dots(a, b, c, d):
    offs_m = tl.arange(0, 64)
    offs_k = tl.arange(0, 16)
    with tlx.async_tasks():
        with tlx.async_task("default"):
            x = tl.load(a + offs_m[:, None] * 16 + offs_k[None, :])
            w = tl.load(b + offs_k[:, None] * 64 + offs_m[None, :])
            tl.store(c + offs_m[:, None] * 64 + offs_m[None, :], tl.dot(x, w))
        with tlx.async_task(num_warps=1):
            m = tl.arange(0, 64)
            k = tl.arange(0, 16)
            x = tl.load(a + m[:, None] * 16 + k[None, :])
            w = tl.load(b + k[:, None] * 64 + m[None, :])
            tl.store(d + m[:, None] * 64 + m[None, :], tl.dot(x, w))


def test_wgmma_only_where_the_partition_has_a_warpgroup() -> None:
    module = _dots.compile("*fp16,*fp16,*fp32,*fp32", arch="sm_90a", num_warps=4).lowered()
    default, worker = _tasks(module).partitions
    kinds = [sorted({o.NAME for op in p.block.ops for o in op.walk() if o.NAME in ("dot", "async_dot")})
             for p in (default, worker)]
    assert kinds == [["async_dot"], ["dot"]]
