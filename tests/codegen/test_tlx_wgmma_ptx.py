"""Hopper ``tlx.async_dot`` (wgmma) and TMA in PTX: every variant of
tests/tlx/tlx_wgmma_kernels.py compiles for sm_90a and ptxas assembles it without spills;
the GEMM-style loops keep ptxas's wgmma pipeline (no "wgmma ... serialized" warning);
the accumulator goes through reductions and shape ops without layout conversions; and
FileCheck lines pin down the instructions of each feature and of the TLX examples. The
numerics run on the interpreter (tests/tlx/test_tlx_wgmma_interpreter.py) and on the
GPU (tests/gpu/test_tlx_wgmma_gpu.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from codegen_helpers import NVIDIA_ARCHS, compile_example, filecheck, ptxas_or_skip, ptxas_row

import tlxc
from tlxc.ir import ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_wgmma_kernels as W  # noqa: E402  (tests/tlx/tlx_wgmma_kernels.py)

ARCH = "sm_90a"


def _compile(name: str, arch: str = ARCH) -> Any:
    c = W.CASES[name]
    return c.kernel.compile(c.signature, c.constants, arch=arch, num_warps=c.num_warps)


def _ptx(name: str) -> str:
    return _compile(name).asm["ptx"]


def _ptxas_log(ptx: str) -> str:
    """ptxas's own report (``-v``) on ``ptx``: performance advisories included."""
    from tlxc.codegen.nvptx.toolchain import ptxas

    return ptxas(ptx, ARCH).log


# -- ptxas ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(W.CASES))
def test_ptxas_assembles(name: str, record_property: Any) -> None:
    ptxas_or_skip()
    ck = _compile(name)
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    record_property("ptxas", ptxas_row(f"tlx-wgmma:{name}", ck))
    assert (ck.metadata["spill_stores"], ck.metadata["spill_loads"]) == (0, 0)


@pytest.mark.parametrize("name", W.LOOPS + ["example:hopper_gemm_tma-0", "example:hopper_gemm_cp_async-0",
                                  "example:matmul-0", "example:attention-0", "example:attention-1"])
def test_wgmma_pipeline_is_not_serialized(name: str) -> None:
    # ptxas serializes the wgmma pipeline (and says "Potential Performance Loss:
    # wgmma.mma_async instructions are serialized due to ...") when non-wgmma
    # instructions touch accumulator registers while an MMA is in flight, or when the
    # accumulator vector is not distinct registers
    ptxas_or_skip()
    ptx = compile_example(name.split(":")[1], ARCH).asm["ptx"] if name.startswith("example:") else _ptx(name)
    log = _ptxas_log(ptx)
    assert "serialized" not in log and "Performance Loss" not in log, log


def test_async_dot_is_a_clear_error_on_sm_100a() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        _compile("once_f16", "sm_100a").asm["ptx"]
    assert info.value.code == "TLXC-TLX-005" and "wgmma" in info.value.message
    assert info.value.loc is not None and info.value.loc.file.endswith("tlx_wgmma_kernels.py")


@pytest.mark.parametrize("dtype,acc", [("e4m3", "fp32"), ("e5m2", "fp32"), ("fp32", "fp32"), ("i8", "i32")])
def test_mn_major_b_needs_16_bit_operands(dtype: str, acc: str) -> None:
    # B as a plain [K, N] buffer (N contiguous) is MN-major: wgmma reads that for
    # fp16/bf16 only, and the error says how to make it K-major
    c = W.Case("loop", dtype, BK=32 if dtype == "fp32" else 64, acc=acc)
    with pytest.raises(tlxc.CompilationError) as info:
        c.kernel.compile(c.signature, c.constants, arch=ARCH).asm["ptx"]
    err = info.value
    assert err.code == "TLXC-TLX-004" and "B is MN-major" in err.message and "local_trans" in err.message
    assert "tlx.async_dot(a_buf[0], b, acc" in str(err)


# -- layouts: the accumulator is converted only to be stored -------------------------------------


def _accumulator_conversions(name: str, monkeypatch: Any) -> list[str]:
    """The ``convert_layout`` ops on values computed from an ``async_dot_wait`` result that
    feed anything but a store (what the layout pass decided, in the IR the target's
    pipeline leaves)."""
    module = _compile(name).lowered()
    derived: set[int] = set()
    bad = []
    for op in module.walk():
        if isinstance(op, ops.AsyncDotWaitOp) or any(id(v) in derived for v in op.operands):
            derived.update(id(r) for r in op.results)
            if isinstance(op, ops.ConvertLayoutOp):
                users = {type(u).__name__ for u in op.result.uses}
                if not users <= {"StoreOp", "LocalStoreOp"}:
                    bad.append(f"{op.operands[0].type} -> {op.result.type} for {sorted(users)} at {op.loc}")
    return bad


@pytest.mark.parametrize("name", ["reduce", "reduce_wg_split_n", "softmax", "softmax_wg_split_n", "shapes",
                                  "shapes_wg_split_n", "once_f16_out_f16", "loop_f16_acc_f16"])
def test_accumulator_is_converted_only_for_stores(name: str, monkeypatch: Any) -> None:
    # reductions take a slice of the wgmma layout, tl.where / exp2 / .to keep it,
    # reshape / split / join / permute re-index registers, and x - tl.max(x, 1)[:, None]
    # broadcasts back into x's layout
    assert _accumulator_conversions(name, monkeypatch) == []


def test_row_sum_shuffles_within_the_quad() -> None:
    # the row sum of a wgmma accumulator: registers, then lanes 1 and 2 apart (the 4
    # threads of a row); the column max: lanes 4..16 apart, then across the warps
    # CHECK: wgmma.wait_group.sync.aligned 0;
    # CHECK-NOT: st.shared
    # CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 1, 31, -1;
    # CHECK-NOT: st.shared
    # CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 2, 31, -1;
    # CHECK-NOT: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 4,
    # CHECK: st.global
    # CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 4, 31, -1;
    # CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 16, 31, -1;
    # CHECK: bar.sync 0;
    filecheck(_ptx("reduce"), test_row_sum_shuffles_within_the_quad, ARCH)


# -- the instructions of each variant -------------------------------------------------------------


def test_runtime_use_acc_is_scale_d_of_the_first_k_step() -> None:
    # use_acc=k > 0 is the scale-d predicate of the first instruction; the next K-step
    # accumulates (a predicate set to true once); the accumulator is updated in place
    # CHECK: setp.eq.u32 [[TRUE:%p[0-9]+]], [[TID:%r[0-9]+]], [[TID]];
    # CHECK: $_for_head
    # CHECK: setp.gt.s32 [[USE:%p[0-9]+]],
    # CHECK: wgmma.fence.sync.aligned;
    # CHECK-NEXT: wgmma.{{.*}}m64n64k16.f32.f16.f16 {[[D0:%f[0-9]+]], {{.*}}}, {{%rd.*}}, [[USE]], 1, 1, 0, 1;
    # CHECK: wgmma.{{.*}}m64n64k16.f32.f16.f16 {[[D0]], {{.*}}}, {{%rd.*}}, [[TRUE]], 1, 1, 0, 1;
    # CHECK-NEXT: wgmma.commit_group.sync.aligned;
    # CHECK-NEXT: .loc
    # CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
    # CHECK-NOT: mov.f32
    # CHECK: bra.uni $_for_head
    filecheck(_ptx("loop_f16"), test_runtime_use_acc_is_scale_d_of_the_first_k_step, ARCH)


def test_descriptor_start_address_is_the_14_bit_field() -> None:
    """A shared address's bits 4..17 make the descriptor's start-address field; the rest
    are masked off. In a cluster launch a CTA's shared addresses carry its rank in the high
    bits: shifted unmasked they spilled into the leading-byte offset, and on an H200 rank 1
    read the second swizzle atom of an MN-major B from the wrong place (NaNs in half its
    columns, rank 0 correct)."""
    # CHECK: bfe.u32 [[LO:%r[0-9]+]], {{%r[0-9]+}}, 4, 14;
    # CHECK-NEXT: cvt.u64.u32 [[D:%rd[0-9]+]], [[LO]];
    # CHECK-NEXT: or.b64 [[D]], [[D]], {{[0-9]+}};
    # CHECK-NOT: shr.u32 {{%r[0-9]+}}, {{%r[0-9]+}}, 4;
    # CHECK: wgmma.mma_async
    filecheck(_ptx("loop_f16"), test_descriptor_start_address_is_the_14_bit_field, ARCH)


def test_operand_types_and_transposes() -> None:
    # tf32, fp8 and int8 take K-major operands only (no imm-trans; int8 no scales either);
    # B as local_trans of an [N, K] buffer is K-major: imm-trans-b 0
    # CHECK: mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{{.*}}}, %rd{{[0-9]+, %rd[0-9]+}}, %p{{[0-9]+}}, 1, 1;
    ptx = _ptx("loop_tf32_bT")
    # CHECK: mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{{.*}}}, %rd{{[0-9]+, %rd[0-9]+}}, %p{{[0-9]+}}, 1, 1;
    ptx += _ptx("loop_e4m3_bT")
    # CHECK: mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {{{.*}}}, %rd{{[0-9]+, %rd[0-9]+}}, %p{{[0-9]+}}, 1, 1;
    ptx += _ptx("loop_e5m2_bT")
    # CHECK: mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%r{{[0-9]+}}, {{.*}}}, %rd{{[0-9]+, %rd[0-9]+}}, %p{{[0-9]+}};
    ptx += _ptx("loop_i8_bT")
    # CHECK: wgmma.{{.*}}m64n64k16.f32.bf16.bf16 {{{.*}}}, {{%rd.*}}, %p{{[0-9]+}}, 1, 1, 0, 0;
    ptx += _ptx("loop_bf16_bT")
    filecheck(ptx, test_operand_types_and_transposes, ARCH)


def test_register_a_operands() -> None:
    # A from registers: {a0..a3} of packed pairs (16-bit) or of four bytes gathered with
    # prmt (8-bit), written before the fence; no imm-trans-a
    # CHECK: mov.b32 %r{{[0-9]+}}, {%h{{[0-9]+}}, %h{{[0-9]+}}};
    # CHECK-NEXT: mov.b32 %r{{[0-9]+}}, {%h{{[0-9]+}}, %h{{[0-9]+}}};
    # CHECK: wgmma.fence.sync.aligned;
    # CHECK-NEXT: wgmma.{{.*}}m64n64k16.f32.f16.f16 {{{.*}}}, {%r{{[0-9]+(, %r[0-9]+)+}}}, {{.*}}, 1, 1, 1;
    ptx = _ptx("loop_f16_aregs")
    # CHECK: prmt.b32 [[B0:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}, 0x6420;
    # CHECK: wgmma.fence.sync.aligned;
    # CHECK-NEXT: wgmma.{{.*}}m64n64k32.f32.e4m3.e4m3 {{{.*}}}, {[[B0]]{{(, %r[0-9]+)+}}}, {{.*}}, 1, 1;
    ptx += _ptx("loop_e4m3_aregs_bT")
    # CHECK: wgmma.{{.*}}m64n64k8.f32.tf32.tf32 {{{.*}}}, {%r{{[0-9]+(, %r[0-9]+)+}}}, {{%rd[0-9]+, %p[0-9]+}}, 1, 1;
    ptx += _ptx("loop_tf32_aregs_bT")
    filecheck(ptx, test_register_a_operands, ARCH)


def test_fp16_accumulator_stays_packed_through_the_loop() -> None:
    # .f16x2 accumulator registers, packed once before the loop, updated in place while
    # async_dot_wait(1) keeps an MMA in flight (nothing else touches them in the loop),
    # unpacked after the last wait
    # CHECK: $_for_head
    # CHECK: wgmma.{{.*}}m64n128k16.f16.f16.f16 {[[D0:%r[0-9]+]], {{.*}}, [[D31:%r[0-9]+]]}, {{.*}}, 1, 1, 0, 1;
    # CHECK-NEXT: add.s64
    # CHECK-NEXT: add.s64
    # CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16 {[[D0]], {{.*}}, [[D31]]},
    # CHECK: wgmma.wait_group.sync.aligned 1;
    # CHECK-NOT: [[D0]]
    # CHECK: bra.uni $_for_head
    # CHECK: wgmma.wait_group.sync.aligned 0;
    # CHECK: mov.b32 {%h{{[0-9]+}}, %h{{[0-9]+}}}, [[D0]];
    ptx = _ptx("pipelined_f16_acc_f16")
    filecheck(ptx, test_fp16_accumulator_stays_packed_through_the_loop, ARCH)
    d0 = re.search(r"f16\.f16\.f16 \{(%r\d+),", ptx).group(1)  # type: ignore[union-attr]
    head = ptx.index("$_for_head")
    assert re.search(rf"mov\.b32 {d0}, %r\d+;", ptx[:head])  # the packed zeros, copied in before the loop
    loop = ptx[head:ptx.index("$_for_exit")].splitlines()
    assert [ln for ln in loop if re.search(rf"{d0}\b", ln)] == [ln for ln in loop if "wgmma.mma_async" in ln]


def test_no_accumulator_is_scale_d_false() -> None:
    # acc=None: zeroed registers (defined, never read) and scale-d false
    # CHECK: setp.ne.u32 [[FALSE:%p[0-9]+]], [[TID:%r[0-9]+]], [[TID]];
    # CHECK: mov.f32 [[D0:%f[0-9]+]], 0f00000000;
    # CHECK: wgmma.{{.*}}m64n64k16.f32.f16.f16 {[[D0]], {{.*}}}, {{%rd.*}}, [[FALSE]], 1, 1, 0, 1;
    filecheck(_ptx("once_f16"), test_no_accumulator_is_scale_d_false, ARCH)


def test_warpgroups_split_n() -> None:
    # 8 warps on a 64x256 tile: each warpgroup computes 128 columns; its B descriptor
    # starts at its own column block (warpgroup = warp >> 2); two K-steps of m64n128k16
    # CHECK: shr.u32 [[WARP:%r[0-9]+]], %r{{[0-9]+}}, 5;
    # CHECK: shr.u32 [[GN:%r[0-9]+]], [[WARP]], 2;
    # CHECK: mad.lo.u32 [[BADDR:%r[0-9]+]], [[GN]], {{[0-9]+}}, %r{{[0-9]+}};
    # CHECK-NEXT: bfe.u32 %r{{[0-9]+}}, [[BADDR]], 4, 14;
    # CHECK: wgmma.fence.sync.aligned;
    # CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
    # CHECK-NEXT: add.s64
    # CHECK-NEXT: add.s64
    # CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
    # CHECK-NEXT: wgmma.commit_group.sync.aligned;
    filecheck(_ptx("once_f16_n256_wg_split_n"), test_warpgroups_split_n, ARCH)


def test_tma_store_reduce_add() -> None:
    # the buffer was written by TMA (the async proxy): no proxy fence before the store
    # CHECK: mbarrier.try_wait.parity.shared::cta.b64
    # CHECK-NOT: fence.proxy.async
    # CHECK: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [{{.*}}], [{{%r[0-9]+}}];
    # CHECK-NEXT: cp.async.bulk.commit_group;
    # CHECK: cp.async.bulk.wait_group.read 0;
    filecheck(_ptx("tma_store_add_f32"), test_tma_store_reduce_add, ARCH)


def test_descriptor_load_and_store_are_staged() -> None:
    # desc.load: a one-shot barrier, a TMA load, a wait and a read of the staging buffer;
    # desc.store: the value written to a staging buffer, a barrier and a proxy fence, a TMA
    # store and its wait
    # CHECK: mbarrier.init.shared::cta.b64
    # CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 4096;
    # CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
    # CHECK: mbarrier.try_wait.parity.shared::cta.b64
    # CHECK: ld.shared
    # CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
    # CHECK: wgmma.wait_group.sync.aligned 0;
    # CHECK: st.shared
    # CHECK: fence.proxy.async.shared::cta;
    # CHECK: bar.sync 0;
    # CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
    # CHECK: cp.async.bulk.wait_group.read 0;
    filecheck(_ptx("desc_load_f16"), test_descriptor_load_and_store_are_staged, ARCH)


# -- the TLX examples --------------------------------------------------------------------------


def test_example_tma_gemm() -> None:
    # descriptors by value in .param space, made generic for cp.async.bulk.tensor; barriers
    # initialized by thread 0; B's 128-column block is two 64-column (128-byte swizzle)
    # messages; a 128-row tile on one warpgroup is two M-repeats per K-step; one MMA stays
    # in flight (wait_group 1); the epilogue fences the generic-proxy writes before the
    # TMA store reads them
    # CHECK: .param .align 64 .b8 matmul_tma_param_0[128],
    # CHECK-COUNT-3: cvta.param.u64
    # CHECK: @[[T0:%p[0-9]+]] mbarrier.init.shared::cta.b64 [{{%r[0-9]+}}+0], 1;
    # CHECK: fence.mbarrier_init.release.cluster;
    # CHECK: @[[T0]] mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 32768;
    # CHECK: @[[T0]] cp.async.bulk.tensor.2d.shared::cluster.global{{.*}} [{{%r[0-9]+}}], [%rd0, {{.*}}}], [%r{{.*}}];
    # CHECK: @[[T0]] cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd1,
    # CHECK-NEXT: add.s32
    # CHECK-NEXT: @[[T0]] cp.async.bulk.tensor.2d.shared::cluster.global{{.*}} [%r{{[0-9]+}}+8192], [%rd1,
    # CHECK: $_for_head
    # CHECK: mbarrier.try_wait.parity.shared::cta.b64 [[READY:%p[0-9]+]], [%r{{[0-9]+}}], %r{{[0-9]+}};
    # CHECK-NEXT: @![[READY]] bra $_mbar_wait
    # CHECK: wgmma.fence.sync.aligned;
    # CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {[[M0:%f[0-9]+]],
    # CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {[[M1:%f[0-9]+]],
    # CHECK-COUNT-6: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
    # CHECK-NEXT: wgmma.commit_group.sync.aligned;
    # CHECK-NEXT: .loc
    # CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
    # CHECK: bra.uni $_for_head
    # CHECK: wgmma.wait_group.sync.aligned 0;
    # CHECK: cvt.rn.f16x2.f32 %r{{[0-9]+}}, %f{{[0-9]+}}, [[M0]];
    # CHECK: st.shared.b32
    # CHECK: fence.proxy.async.shared::cta;
    # CHECK-NEXT: .loc
    # CHECK-NEXT: bar.sync 0;
    # CHECK-NEXT: @[[T0]] cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd2, {{{.*}}}], [{{%r[0-9]+}}];
    # CHECK: @[[T0]] cp.async.bulk.commit_group;
    # CHECK: @[[T0]] cp.async.bulk.wait_group.read 0;
    # CHECK-NEXT: bar.sync 0;
    filecheck(compile_example("hopper_gemm_tma-0", ARCH).asm["ptx"], test_example_tma_gemm, ARCH)


def test_example_cp_async_gemm() -> None:
    # cp.async copies into the stages, waited for with a barrier; wgmma then reads them
    # with no proxy fence (a MEMBAR.ALL.CTA every iteration, as CUTLASS's and Triton's
    # cp.async + wgmma pipelines know)
    # CHECK: cp.async.cg.shared.global [%r{{[0-9]+}}+0], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
    # CHECK: cp.async.commit_group;
    # CHECK: $_for_head
    # CHECK: cp.async.wait_group 1;
    # CHECK-NEXT: bar.sync 0;
    # CHECK-NOT: fence.proxy.async
    # CHECK: wgmma.fence.sync.aligned;
    # CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
    # CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
    # CHECK-NEXT: wgmma.commit_group.sync.aligned;
    # CHECK: wgmma.wait_group.sync.aligned 1;
    # CHECK: cp.async.cg.shared.global
    # CHECK: cp.async.commit_group;
    # CHECK: bra.uni $_for_head
    # CHECK: wgmma.wait_group.sync.aligned 0;
    filecheck(compile_example("hopper_gemm_cp_async-0", ARCH).asm["ptx"], test_example_cp_async_gemm, ARCH)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_example_tma_transpose(arch: str) -> None:
    # the same TMA code on both targets (PTX 8.4 / 8.6)
    # SM90A: .target sm_90a
    # SM100A: .target sm_100a
    # CHECK: .param .align 64 .b8 transpose_kernel_param_0[128],
    # CHECK: cvta.param.u64 %rd0, %rd0;
    # CHECK: cvta.param.u64 %rd1, %rd1;
    # CHECK: @[[T0:%p[0-9]+]] mbarrier.init.shared::cta.b64 [[[BAR:%r[0-9]+]]+0], 1;
    # CHECK: @[[T0]] mbarrier.arrive.expect_tx.shared::cta.b64 _, [[[BAR]]], {{[0-9]+}};
    # CHECK: @[[T0]] cp.async.bulk.tensor.2d.shared::cluster.global{{.*}} [{{%r[0-9]+}}], [%rd0, {{{.*}}}], [[[BAR]]];
    # CHECK: mbarrier.try_wait.parity.shared::cta.b64 %p{{[0-9]+}}, [[[BAR]]], %r{{[0-9]+}};
    # CHECK: fence.proxy.async.shared::cta;
    # CHECK: bar.sync 0;
    # CHECK-NEXT: @[[T0]] cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {{{.*}}}], [{{%r[0-9]+}}];
    # CHECK-NEXT: @[[T0]] cp.async.bulk.commit_group;
    # CHECK: @[[T0]] cp.async.bulk.wait_group.read 0;
    filecheck(compile_example("tma_transpose-0", arch).asm["ptx"], test_example_tma_transpose, arch)
