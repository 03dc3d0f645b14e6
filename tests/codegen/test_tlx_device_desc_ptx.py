"""TMA descriptors built on the device (``tl.make_tensor_descriptor``) in PTX: the hidden
global-scratch parameter, the CUtensorMap filled field by field with
``tensormap.replace`` in shared memory, copied to this program's slot with
``tensormap.cp_fenceproxy`` and acquired with ``fence.proxy.tensormap``; TMA copies
through the slot's address; the metadata that makes the launch allocate the scratch;
ptxas accepts it for sm_90a and sm_100a; and the errors (two swizzles, a descriptor
through a loop-carried value). The GPU runs are in tests/gpu/test_tlx_device_desc_gpu.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_helpers import NVIDIA_ARCHS, filecheck, ptxas_or_skip, ptxas_row

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc import CompilationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_device_desc_kernels as D  # noqa: E402  (tests/tlx/tlx_device_desc_kernels.py)

COPY_SIG = "*fp16:16,*fp16:16,i32,i32,i32:16,i32:16"
GEMM_SIG = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:16,i32:16"
GEMM = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_STAGES": 3}


def _copy(arch: str, padding: str = "zero") -> Any:
    return D.desc_copy.compile(COPY_SIG, {"BM": 16, "BN": 64, "PADDING": padding}, arch=arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_descriptor_is_built_in_this_programs_slot(arch: str) -> None:
    # the scratch pointer is a hidden parameter after the kernel's own; the copy to global
    # memory is tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned
    # CHECK: .param .s32 desc_copy_param_5,
    # CHECK-NEXT: .param .u64 desc_copy_param_scratch
    # CHECK-NEXT: )
    # slots of this program: scratch + linear block id * 256 (two descriptors)
    # CHECK: mad.lo.u32 [[PID:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
    # CHECK: ld.param.u64 [[SLOTS:%rd[0-9]+]], [desc_copy_param_scratch];
    # CHECK-NEXT: mad.wide.u32 [[SLOTS]], [[PID]], 256, [[SLOTS]];
    # a 128-byte aligned template in the shared scratch area
    # CHECK: and.b32 [[TMPL:%r[0-9]+]], [[TMPL]], 0xffffff80;
    # the row stride of x in bytes
    # CHECK: mul.wide.s32 [[STRIDE:%rd[0-9]+]], {{%r[0-9]+}}, 2;
    # CHECK: st.shared.u32
    # CHECK-NEXT: bar.warp.sync -1;
    # CHECK-NEXT: @[[T0:%p[0-9]+]] tensormap.replace.tile.global_address.shared::cta.b1024.b64 [[[TMPL]]], %rd0;
    # CHECK-NEXT: @[[T0]] tensormap.replace.tile.rank.shared::cta.b1024.b32 [[[TMPL]]], 1;
    # the 16x64 fp16 block is one 128-byte swizzled box, dimensions innermost first
    # CHECK-NEXT: tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [[[TMPL]]], 0, 64;
    # CHECK-NEXT: tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [[[TMPL]]], 1, 16;
    # CHECK-NEXT: tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [[[TMPL]]], 0, %r1;
    # CHECK-NEXT: tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [[[TMPL]]], 1, %r0;
    # CHECK-NEXT: tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [[[TMPL]]], 0, [[STRIDE]];
    # CHECK-NEXT: tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [[[TMPL]]], 0, 1;
    # CHECK-NEXT: tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [[[TMPL]]], 1, 1;
    # FLOAT16, no interleave, 128-byte swizzle, NaN fill
    # CHECK-NEXT: tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [[[TMPL]]], 6;
    # CHECK-NEXT: tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [[[TMPL]]], 0;
    # CHECK-NEXT: tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [[[TMPL]]], 3;
    # CHECK-NEXT: tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [[[TMPL]]], 1;
    # CHECK-NEXT: bar.warp.sync -1;
    # CHECK-NEXT: @[[W0:%p[0-9]+]] tensormap.cp_fenceproxy.global.{{.*}}.sync.aligned [[[SLOTS]]], [[[TMPL]]], 128;
    # CHECK-NEXT: @[[W0]] fence.proxy.tensormap::generic.acquire.gpu [[[SLOTS]]], 128;
    # CHECK-NEXT: bar.sync 0;
    # the second descriptor (y) is slot 1, zero fill
    # CHECK: add.u64 [[Y:%rd[0-9]+]], [[SLOTS]], 128;
    # CHECK: tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [[[TMPL]]], 0;
    # CHECK: tensormap.cp_fenceproxy.global.shared::cta.{{.*}}.release.gpu.sync.aligned [[[Y]]], [[[TMPL]]], 128;
    # TMA reads the descriptors at their slots
    # CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{{%r[0-9]+}}], [[[SLOTS]], {
    # CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [[[Y]], {
    ck = _copy(arch, "nan")
    filecheck(ck.asm["ptx"], test_descriptor_is_built_in_this_programs_slot, arch)
    assert ck.metadata["global_scratch"] == {"size": 256, "align": 128}
    assert ck.metadata["params"][-1] == "u64" and ck.metadata["tma_params"] == []


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_the_descriptor_type_records_its_swizzle(arch: str) -> None:
    # a 16x32 fp16 block has 64-byte rows: the IR after code generation says so
    from tlxc.codegen.nvptx import compile as nvptx
    from tlxc.ir.parser import parse_ir
    from tlxc.ir.printer import print_ir

    ck = D.desc_copy.compile(COPY_SIG, {"BM": 16, "BN": 32}, arch=arch)
    module = parse_ir(ck.asm["ir"])
    nvptx.generate(module, arch)
    assert "tensordesc<16x32xf16, swizzle=64>" in print_ir(module)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_ptxas_assembles_device_descriptors(arch: str, record_property: Any) -> None:
    ptxas_or_skip()
    for padding in ("zero", "nan"):
        ck = _copy(arch, padding)
        assert ck.asm["cubin"]
    record_property("ptxas", ptxas_row("device-desc:copy", ck))
    assert ck.metadata["spill_stores"] == 0


def test_ptxas_assembles_the_gemm_with_device_descriptors(record_property: Any) -> None:
    ptxas_or_skip()
    ck = D.matmul_device_desc.compile(GEMM_SIG, GEMM, arch="sm_90a", num_warps=8)
    assert ck.asm["cubin"]
    record_property("ptxas", ptxas_row("device-desc:gemm", ck))
    assert ck.metadata["global_scratch"]["size"] == 3 * 128
    ptx = ck.asm["ptx"]
    assert ptx.count("tensormap.cp_fenceproxy") == 3 and ptx.count("fence.proxy.tensormap::generic.acquire") == 3
    assert "wgmma.mma_async" in ptx


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_kernels_without_device_descriptors_have_no_scratch(arch: str) -> None:
    from tlx_kernels import roundtrip_smem  # tests/tlx/tlx_kernels.py

    ck = roundtrip_smem.compile("*fp32:16,*fp32:16", {"BLOCK": 32}, arch=arch)
    assert "param_scratch" not in ck.asm["ptx"] and "tensormap" not in ck.asm["ptx"]
    assert ck.metadata["global_scratch"] == {"size": 0, "align": 128}


def test_old_ptxas_gets_strides_in_16_byte_units(monkeypatch: pytest.MonkeyPatch) -> None:
    # ptxas before CUDA 12.8 reads global_stride in 16-byte units (Triton's workaround)
    from tlxc.codegen.nvptx import lower_tensormap

    monkeypatch.setattr(lower_tensormap, "strides_in_16_byte_units", lambda: True)
    # constants no other test compiles: a fresh variant
    ptx = D.desc_copy.compile(COPY_SIG, {"BM": 8, "BN": 64}, arch="sm_90a").asm["ptx"]
    assert ptx.count("shr.s64") == 2


@tlxc.jit
def _two_swizzles(x_ptr, M, N):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[16, 64])
    a = tlx.local_alloc((16, 64), tl.float16, 1)
    b = tlx.local_alloc((32, 32), tl.float16, 1)
    bars = tlx.alloc_barriers(2)
    tlx.barrier_expect_bytes(bars[0], 2048)
    tlx.async_descriptor_load(d, a[0], [0, 0], bars[0])
    tlx.barrier_expect_bytes(bars[1], 2048)
    tlx.async_descriptor_load(d, b[0], [0, 0], bars[1])  # ERR
    tlx.barrier_wait(bars[0], 0)
    tlx.barrier_wait(bars[1], 0)


@tlxc.jit
def _carried(x_ptr, y_ptr, M, N, BM: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BM])
    for i in range(2):
        d.store([i * BM, 0], tl.zeros((BM, BM), tl.float32))  # ERR
        d = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BM])


def _err_line(fn: Any) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(lines) if "# ERR" in ln)


def test_one_descriptor_has_one_swizzle() -> None:
    with pytest.raises(CompilationError) as info:
        _two_swizzles.compile("*fp16:16,i32,i32:16", {}, arch="sm_90a").asm["ptx"]
    e = info.value
    assert e.code == "TLXC-TLX-003" and "64-byte swizzle here and with a 128-byte swizzle" in e.message
    assert e.loc.line == _err_line(_two_swizzles)


def test_a_descriptor_through_a_loop_carried_value_is_refused() -> None:
    with pytest.raises(CompilationError) as info:
        _carried.compile("*fp32:16,*fp32:16,i32,i32:16", {"BM": 16}, arch="sm_90a").asm["ptx"]
    e = info.value
    assert e.code == "TLXC-TLX-005" and "loop-carried" in e.message and e.loc.line == _err_line(_carried)


# -- descriptors in storage of the kernel's own (tlx.allocate_tensor_descriptor) -------------------


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_descriptors_made_into_and_read_from_their_storage(arch: str) -> None:
    # the allocation is this program's two slots; ptrs[i] is 128 bytes further per index
    # CHECK: mad.wide.u32 [[SLOTS:%rd[0-9]+]], {{%r[0-9]+}}, 256, [[SLOTS]];
    # CHECK: mad.wide.s32 [[P0:%rd[0-9]+]], {{%r[0-9]+}}, 128, [[SLOTS]];
    # 16x32 fp32 blocks: 128-byte rows, the 128-byte swizzle of the buffers that the reinterpreted
    # descriptors copy
    # CHECK: tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [{{%r[0-9]+}}], 3;
    # CHECK: tensormap.cp_fenceproxy.global.shared::cta.{{.*}}.release.gpu.sync.aligned [[[P0]]], [{{%r[0-9]+}}], 128;
    # CHECK: mad.wide.s32 [[P1:%rd[0-9]+]], {{%r[0-9]+}}, 128, [[SLOTS]];
    # CHECK: tensormap.cp_fenceproxy.global.shared::cta.{{.*}}.release.gpu.sync.aligned [[[P1]]], [{{%r[0-9]+}}], 128;
    # CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{{%r[0-9]+}}], [[[P0]], {
    # CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [[[P1]], {
    ck = D.desc_ptr_copy.compile("*fp32:16,*fp32:16,i32,i32:16", {"BM": 16, "BN": 32}, arch=arch)
    filecheck(ck.asm["ptx"], test_descriptors_made_into_and_read_from_their_storage, arch)
    assert ck.metadata["global_scratch"] == {"size": 256, "align": 128}
    ptxas_or_skip()
    assert ck.asm["cubin"]


@tlxc.jit
def _storage_misuse(x_ptr, i, M, N, CASE: tl.constexpr):
    ptrs = tlx.allocate_tensor_descriptor(3)
    if CASE == 0:  # read back for another block
        tlx.make_tensor_descriptor(ptrs[0], x_ptr, [M, N], [N, 1], [16, 32])
        d = tlx.reinterpret_tensor_descriptor(ptrs[0], [32, 32], tl.float32)  # ERR0
        d.store([0, 0], tl.zeros((32, 32), tl.float32))
    elif CASE == 1:  # read storage that nothing in the kernel writes
        tlx.make_tensor_descriptor(ptrs[0], x_ptr, [M, N], [N, 1], [16, 32])
        d = tlx.reinterpret_tensor_descriptor(ptrs[1], [16, 32], tl.float32)  # ERR1
        d.store([0, 0], tl.zeros((16, 32), tl.float32))
    else:  # a runtime index may be any slot: every slot is one descriptor, with one swizzle
        tlx.make_tensor_descriptor(ptrs[0], x_ptr, [M, N], [N, 1], [16, 32])
        tlx.make_tensor_descriptor(ptrs[1], x_ptr, [M, N], [N, 1], [16, 32])
        d = tlx.reinterpret_tensor_descriptor(ptrs[i], [16, 32], tl.float32)
        d.store([0, 0], tl.zeros((16, 32), tl.float32))
        e = tlx.reinterpret_tensor_descriptor(ptrs[1], [16, 32], tl.float32)
        buf = tlx.local_alloc((32, 16), tl.float32, 1)  # 64-byte rows
        tlx.local_store(buf[0], tl.zeros((32, 16), tl.float32))
        tlx.async_descriptor_store(e, buf[0], [0, 0])  # ERR2
        tlx.async_descriptor_store_wait(0)


@pytest.mark.parametrize("case, message", [
    (0, "used for blocks of f32[32, 32] but made at line"),
    (1, "no make_tensor_descriptor of this kernel writes the descriptor"),
    (2, "64-byte swizzle here and with a 128-byte swizzle")])
def test_storage_misuse_is_refused(case: int, message: str) -> None:
    with pytest.raises(CompilationError) as info:
        _storage_misuse.compile("*fp32:16,i32,i32,i32:16", {"CASE": case}, arch="sm_90a").asm["ptx"]
    e = info.value
    assert e.code == "TLXC-TLX-003" and message in e.message, e.message
    import inspect

    lines, start = inspect.getsourcelines(_storage_misuse)
    assert e.loc.line == start + next(i for i, ln in enumerate(lines) if f"# ERR{case}" in ln)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_one_dimensional_blocks(arch: str) -> None:
    # TLX's test_make_tensor_descriptor copies 1-D blocks: rank 1 (field value 0), no swizzle,
    # one 1-D message each way (was TLXC-TLX-003, "layout is not one TMA can copy")
    # CHECK: tensormap.replace.tile.rank.shared::cta.b1024.b32 [{{%r[0-9]+}}], 0;
    # CHECK: tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [{{%r[0-9]+}}], 0, 64;
    # CHECK: tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [{{%r[0-9]+}}], 0;
    # CHECK: cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes
    # CHECK: cp.async.bulk.tensor.1d.global.shared::cta.bulk_group
    k = D.desc_ptr_copy_1d.compile("*i16:16,*i16:16,i32", {"BLOCK_SIZE": 64}, arch=arch)
    filecheck(k.asm["ptx"], test_one_dimensional_blocks, arch)
    ptxas_or_skip()
    assert k.asm["cubin"]
