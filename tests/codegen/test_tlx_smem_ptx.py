"""Shared-memory buffers, mbarriers, named barriers, fences and cp.async in PTX: the
instructions they lower to (FileCheck lines per target), that ptxas assembles them for
sm_90a and sm_100a, the kernel's shared-memory figure, and the errors (too much shared
memory, with a table of the allocations; tensor memory; cp.async with ``other``).
The numerics run on the GPU in tests/gpu/test_tlx_smem_gpu.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_helpers import NVIDIA_ARCHS, filecheck, ptxas_or_skip, ptxas_row

from tlxc import CompilationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_smem_kernels as K  # noqa: E402  (tests/tlx/tlx_smem_kernels.py)
from tlx_kernels import roundtrip_smem  # noqa: E402  (tests/tlx/tlx_kernels.py)

CASES: dict[str, tuple[Any, str, dict[str, int]]] = {
    "roundtrip_smem": (roundtrip_smem, "*fp32:16,*fp32:16", {"BLOCK": 32}),
    "store_load_f32": (K.store_load, "*fp32:16,*fp32:16", {"R": 32, "C": 64, "NUM": 3, "IDX": 2}),
    "store_load_i8": (K.store_load, "*i8:16,*i8:16", {"R": 32, "C": 128, "NUM": 2, "IDX": 1}),
    "transpose_view_f16": (K.transpose_view, "*fp16:16,*fp16:16", {"R": 64, "C": 32}),
    "ring": (K.ring, "*fp32:16,*fp32:16,i32", {"R": 32, "C": 64, "NUM": 2}),
    "slices": (K.slices, "*fp16:16,*fp16:16", {"R": 64, "C": 64}),
    "slices_runtime": (K.slices_runtime, "*fp16:16,*fp16:16,i32", {"R": 64, "C": 128}),
    "reinterpret": (K.reinterpret, "*fp32:16,*i32:16", {"N": 1024}),
    "cp_async_f16": (K.cp_async_copy, "*fp16:16,*fp16:16,i32:16", {"R": 16, "C": 64, "NUM": 3}),
    "cp_async_f32_masked": (K.cp_async_copy, "*fp32:16,*fp32:16,i32", {"R": 32, "C": 32, "NUM": 2}),
    "mbarriers": (K.mbarrier_pingpong, "*fp32:16,*fp32:16,i32", {"N": 128}),
    "thread_ids": (K.thread_ids, "*i32", {}),
    "element_views": (K.element_views, "*fp32:16,*fp32:16,i32", {"N": 64}),
}


def _compile(case: str, arch: str) -> Any:
    kernel, sig, constants = CASES[case]
    return kernel.compile(sig, constants, arch=arch)


def _ptx(case: str, arch: str) -> str:
    return _compile(case, arch).asm["ptx"]


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_ptxas_assembles(case: str, arch: str, record_property: Any) -> None:
    ptxas_or_skip()
    ck = _compile(case, arch)
    assert ck.asm["cubin"]
    record_property("ptxas", ptxas_row(f"tlx-smem:{case}", ck))
    assert ck.metadata["spill_stores"] == 0


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_store_load_vectorized(arch: str) -> None:
    # buffer 2 of 3 32x64 f32 buffers (128-byte swizzle: 1024-byte aligned), 16-byte
    # accesses, one barrier between the store and the load
    # CHECK: .extern .shared .align 1024 .b8 global_smem[];
    # CHECK: mov.u32 [[BASE:%r[0-9]+]], global_smem;
    # CHECK: add.u32 [[BUF:%r[0-9]+]], [[BASE]], 16384;
    # CHECK: st.shared.v4.f32 [{{%r[0-9]+}}+0], {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}};
    # CHECK: st.shared.v4.f32 [{{%r[0-9]+}}+3072]
    # CHECK: bar.sync 0;
    # CHECK-NEXT: add.u32
    # CHECK-NEXT: ld.shared.v4.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, [{{%r[0-9]+}}+0];
    ck = _compile("store_load_f32", arch)
    filecheck(ck.asm["ptx"], test_store_load_vectorized, arch)
    # three buffers of 8 KiB, then the scratch area of the layout conversions
    assert ck.metadata["shared"] >= 3 * 8192


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_bytes_move_in_their_16_bit_registers(arch: str) -> None:
    # CHECK: st.shared.v4.u8
    # CHECK: bar.sync 0;
    # CHECK: ld.shared.v4.s8
    filecheck(_ptx("store_load_i8", arch), test_bytes_move_in_their_16_bit_registers, arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_transposed_view_reads_along_its_contiguous_dim(arch: str) -> None:
    # 64x32 f16 (64-byte swizzle): 8 elements a vector both ways, as 4 packed 32-bit words
    # CHECK: .extern .shared .align 512 .b8 global_smem[];
    # CHECK: mov.b32 %r{{[0-9]+}}, {%h{{[0-9]+}}, %h{{[0-9]+}}};
    # CHECK: st.shared.v4.b32
    # CHECK: bar.sync 0;
    # CHECK-NEXT: add.u32
    # CHECK-NEXT: ld.shared.v4.b32
    filecheck(_ptx("transpose_view_f16", arch), test_transposed_view_reads_along_its_contiguous_dim, arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_ring_index_and_hazards(arch: str) -> None:
    # the runtime buffer index: address = base + (i % 2) * 8192; a barrier before each
    # store (the previous iteration read the buffers) and between store and load
    # CHECK: $_for_head
    # CHECK: mad.lo.u32 [[BUF:%r[0-9]+]], %r{{[0-9]+}}, 8192, %r{{[0-9]+}};
    # CHECK: bar.sync 0;
    # CHECK: st.shared.v4.f32
    # CHECK: bar.sync 0;
    # CHECK: ld.shared
    # CHECK: bra.uni $_for_head
    filecheck(_ptx("ring", arch), test_ring_index_and_hazards, arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_cp_async(arch: str) -> None:
    # 16-byte copies (8 f16, L2 only), zero-filled where masked, groups, waits with a barrier
    # CHECK: selp.u32 [[N:%r[0-9]+]], 16, 0, %p{{[0-9]+}};
    # CHECK: cp.async.cg.shared.global [%r{{[0-9]+}}+0], [%rd{{[0-9]+}}], 16, [[N]];
    # CHECK: cp.async.commit_group;
    # CHECK: cp.async.commit_group;
    # CHECK: $_for_head
    # CHECK: cp.async.wait_group 1;
    # CHECK-NEXT: bar.sync 0;
    # CHECK: ld.shared.v4.b32
    # CHECK: cp.async.cg.shared.global
    # CHECK: cp.async.commit_group;
    # CHECK: cp.async.wait_group 0;
    # CHECK-NEXT: bar.sync 0;
    filecheck(_ptx("cp_async_f16", arch), test_cp_async, arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_cp_async_narrower_than_4_bytes_copies_synchronously(arch: str) -> None:
    # an unaligned mask (n not a multiple of 16): one f32 per copy is still a cp.async of 4 bytes
    # CHECK: cp.async.ca.shared.global [%r{{[0-9]+}}+{{[0-9]+}}], [%rd{{[0-9]+}}], 4, %r{{[0-9]+}};
    # CHECK-NOT: cp.async.cg
    filecheck(_ptx("cp_async_f32_masked", arch), test_cp_async_narrower_than_4_bytes_copies_synchronously, arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_mbarriers_and_named_barriers(arch: str) -> None:
    # init by thread 0, made visible; CTA arrive after a barrier; every thread arrives on
    # a warp barrier; try_wait.parity spin loops; named barrier 3 of 128 threads
    # CHECK: setp.eq.u32 [[T0:%p[0-9]+]], %r{{[0-9]+}}, 0;
    # CHECK: @[[T0]] mbarrier.init.shared::cta.b64 [[[BARS:%r[0-9]+]]+0], 1;
    # CHECK-NEXT: @[[T0]] mbarrier.init.shared::cta.b64 [[[BARS]]+8], 1;
    # CHECK-NEXT: @[[T0]] fence.mbarrier_init.release.cluster;
    # CHECK-NEXT: bar.sync 0;
    # CHECK: mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}+0], 128;
    # CHECK: $_for_head
    # CHECK: bar.sync 0;
    # CHECK-NEXT: @[[T0]] mbarrier.arrive.shared::cta.b64 _, [[[BARS]]];
    # CHECK: mbarrier.try_wait.parity.shared::cta.b64 [[READY:%p[0-9]+]], [[[BARS]]], %r{{[0-9]+}};
    # CHECK-NEXT: @![[READY]] bra $_mbar_wait
    # CHECK: bar.sync 0;
    # CHECK-NEXT: @[[T0]] mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 0;
    # CHECK: mbarrier.try_wait.parity
    # CHECK-NOT: bar.sync 0;
    # CHECK: {{^}}	mbarrier.arrive.shared::cta.b64 _, [%r{{[0-9]+}}];
    # CHECK: mbarrier.try_wait.parity
    # CHECK: bar.sync 3, 128;
    # CHECK: bra.uni $_for_head
    # CHECK: fence.acq_rel.gpu;
    filecheck(_ptx("mbarriers", arch), test_mbarriers_and_named_barriers, arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_thread_id_and_clock(arch: str) -> None:
    # CHECK: mov.u32 %r{{[0-9]+}}, %tid.x;
    # CHECK: mov.u64 %rd{{[0-9]+}}, %clock64;
    # CHECK: mov.u64 %rd{{[0-9]+}}, %clock64;
    filecheck(_ptx("thread_ids", arch), test_thread_id_and_clock, arch)


def test_branches_on_thread_id_are_divergent() -> None:
    """A branch on tlx.thread_id is a divergent ``bra`` (``bra.uni`` would be undefined:
    the threads disagree), and a scalar store under it is done by every thread that gets
    there, not by thread 0 only; uniform branches stay ``bra.uni``."""
    ptx = K.thread_branches.compile("*i32:16,*i32:16,i32", {"BLOCK": 128}, arch="sm_90a").asm["ptx"]
    branches = [ln.split()[1] for ln in ptx.splitlines() if " bra" in ln and "$_else" in ln]
    assert len(branches) == 3 and all(b == "bra" for b in branches), branches
    loop_exit = [ln for ln in ptx.splitlines() if "$_for_exit" in ln and "bra" in ln]
    assert loop_exit and all("bra.uni" not in ln for ln in loop_exit), loop_exit
    stores = [ln.strip() for ln in ptx.splitlines() if "st.global" in ln]
    assert len(stores) == 3 and not any("%p" in st.split()[0] for st in stores[1:]), stores
    uniform = _ptx("ring", "sm_90a")  # a loop over a runtime count: uniform
    assert "bra.uni" in uniform and not [ln for ln in uniform.splitlines() if "\tbra " in ln or "bra $" in ln]


FENCE_KERNEL = """
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    bufs = tlx.local_alloc((64, 64), tl.float16, 1)
    tlx.local_store(bufs[0], tl.zeros((64, 64), tl.float16))
    tlx.fence("async_shared")
    tlx.fence("sys")
    tlx.named_barrier_arrive(5, 64)
    tl.store(x + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], tlx.local_load(bufs[0]))
"""


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_fences(arch: str, load_kernels: Any) -> None:
    # CHECK: st.shared.v4.b32
    # CHECK: fence.proxy.async.shared::cta;
    # CHECK-NEXT: fence.acq_rel.sys;
    # CHECK-NEXT: bar.arrive 5, 64;
    # CHECK: bar.sync 0;
    # CHECK: ld.shared.v4.b32
    ck = load_kernels(FENCE_KERNEL).k.compile("*fp16:16", arch=arch)
    text = "\n".join(line for line in ck.asm["ptx"].splitlines() if ".loc" not in line and "add.u32" not in line)
    filecheck(text, test_fences, arch)
    ptxas_or_skip()
    assert ck.asm["cubin"]


TOO_BIG = """
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    a = tlx.local_alloc((128, 128), tl.float32, 3)
    bars = tlx.alloc_barriers(2)
    b = tlx.local_alloc((64, 128), tl.float16, 4)
    tlx.local_store(a[0], tl.zeros((128, 128), tl.float32))
    tlx.local_store(b[1], tl.zeros((64, 128), tl.float16))
    tlx.barrier_arrive(bars[0])
    tl.store(x + tl.arange(0, 128), tl.sum(tlx.local_load(a[2]), axis=1) + tl.sum(tlx.local_load(b[3]), axis=0))
"""


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_too_much_shared_memory_lists_the_buffers(arch: str, load_kernels: Any) -> None:
    mod = load_kernels(TOO_BIG)
    with pytest.raises(CompilationError) as info:
        mod.k.compile("*fp32:16", arch=arch).asm["ptx"]
    err = info.value
    assert err.code == "TLXC-RESOURCE-001" and f"{arch} allows 232448" in err.message
    name = Path(mod.__path_str__).name
    lines = err.message.splitlines()
    assert any(f"{name}:8" in ln and "128x128" in ln and "f32" in ln and " 3 " in ln and "196608" in ln
               for ln in lines), err.message
    assert any(f"{name}:10" in ln and "64x128" in ln and "f16" in ln and "65536" in ln for ln in lines), err.message
    assert any(f"{name}:9" in ln and "mbarrier" in ln and " 16 " in ln for ln in lines), err.message
    assert err.line == 7  # the kernel's def


TMEM = """
import tlxc.tlx as tlx
@tlxc.jit
def k(x):
    acc = tlx.local_alloc((128, 64), tl.float32, 1, tlx.storage_kind.tmem)
    tl.store(x, 1.0)
"""


@pytest.mark.parametrize("arch,message", [("sm_90a", "tensor memory needs sm_100a"),
                                          ("sm_100a", "not supported by the code generator yet")])
def test_tensor_memory(arch: str, message: str, load_kernels: Any) -> None:
    with pytest.raises(CompilationError, match=message) as info:
        load_kernels(TMEM).k.compile("*fp32", arch=arch).asm["ptx"]
    assert info.value.code == "TLXC-TLX-005" and info.value.line == 8
    assert "tlx.local_alloc((128, 64)" in str(info.value)


OTHER = """
import tlxc.tlx as tlx
@tlxc.jit
def k(x, n):
    bufs = tlx.local_alloc((512,), tl.float32, 1)  # 4 per thread: 16-byte copies
    offs = tl.arange(0, 512)
    tok = tlx.async_load(x + offs, bufs[0], mask=offs < n, other=OTHER)
    tlx.async_load_wait_group(0)
    tl.store(x + offs, tlx.local_load(bufs[0]))
"""


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_async_load_with_other(load_kernels: Any, arch: str) -> None:
    zero = load_kernels(OTHER.replace("OTHER", "0.0")).k.compile("*fp32:16,i32:16", arch=arch).asm["ptx"]
    # zero: cp.async fills masked-off elements itself (src_size 0)
    assert re.search(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16, %r\d+;", zero)
    ck = load_kernels(OTHER.replace("OTHER", "1.0")).k.compile("*fp32:16,i32:16", arch=arch)
    ptx = ck.asm["ptx"]
    # another value: the copy is skipped where the mask is off and the thread stores `other`
    copies = re.findall(r"@(%p\d+) cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16;", ptx)
    fills = re.findall(r"@(%p\d+) st\.shared\.v4\.\w+ \[[^]]+\], \{[^}]+\};", ptx)
    assert copies and len(copies) == len(fills)
    for on, off in zip(copies, fills):
        assert on != off and re.search(rf"not\.pred {off}, ", ptx)  # the fill runs where the copy does not
    ptxas_or_skip()
    assert ck.asm["cubin"]
