"""The special-instruction builders (tlxc/codegen/nvptx/instructions.py) and the NVIDIA
MMA table (mma_table.py): exact texts, the argument checks, ptxas accepting a kernel that
uses every builder, and every wgmma N of the table assembled by ptxas and produced by the
emitter."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from codegen_helpers import ptxas_or_skip

from tlxc.codegen.nvptx import instructions as insn
from tlxc.codegen.nvptx.instructions import PtxOperandError
from tlxc.codegen.nvptx.mma_table import (
    MMA_SYNC,
    PTX_ISA,
    WGMMA_TYPES,
    check_wgmma_shape,
    legal_wgmma_shapes,
    wgmma_instr_k,
)
from tlxc.codegen.nvptx.ptx import Reg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_wgmma_kernels as W  # noqa: E402  (tests/tlx/tlx_wgmma_kernels.py)


def r(name: str) -> Reg:
    return Reg(name, "b32")


# -- exact texts -----------------------------------------------------------------------------------
def test_texts() -> None:
    bar = r("%r1")
    assert insn.mbarrier_init(insn.offset_address(bar, 8), 1) == "mbarrier.init.shared::cta.b64 [%r1+8], 1"
    assert insn.mbarrier_arrive(bar) == "mbarrier.arrive.shared::cta.b64 _, [%r1]"
    assert insn.mbarrier_arrive(bar, 3) == "mbarrier.arrive.shared::cta.b64 _, [%r1], 3"
    assert insn.mbarrier_arrive(bar, space="shared::cluster") == "mbarrier.arrive.shared::cluster.b64 _, [%r1]"
    assert insn.mbarrier_arrive(bar, space="shared::cluster", cluster_release=True) == \
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1]"
    assert insn.mbarrier_arrive_expect_tx(bar, 16384) == "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 16384"
    assert insn.mbarrier_try_wait_parity("%p1", bar, r("%r2")) == \
        "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2"
    assert insn.mbarrier_try_wait_parity("%p1", bar, 0, 50000) == \
        "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0, 50000"
    assert insn.vote_sync_ballot("%r3", "%p1") == "vote.sync.ballot.b32 %r3, %p1, 0xffffffff"
    assert insn.redux_sync("add", "s32", "%r3", "%r4") == "redux.sync.add.s32 %r3, %r4, 0xffffffff"
    assert insn.redux_sync("max", "f32", "%f3", "%f4", absolute=True) == "redux.sync.max.abs.f32 %f3, %f4, 0xffffffff"
    assert insn.mbarrier_test_wait_parity("%p1", bar, 1) == "mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], 1"
    assert insn.mbarrier_inval(bar) == "mbarrier.inval.shared::cta.b64 [%r1]"
    assert insn.cp_async_bulk_tensor_load(2, "%r3+1024", "%rd1", ["%r4", "%r5"], bar) == (
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[%r3+1024], [%rd1, {%r4, %r5}], [%r1]")
    assert insn.cp_async_bulk_tensor_load(1, "%r3", "%rd1", ["%r4"], bar, multicast_mask="%h1") == (
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%r3], [%rd1, {%r4}], [%r1], %h1")
    assert insn.cp_async_bulk_tensor_store(2, "%rd1", ["%r4", "%r5"], "%r3") == \
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r4, %r5}], [%r3]"
    assert insn.cp_async_bulk_tensor_store(2, "%rd1", ["%r4", "%r5"], "%r3", reduce="add") == \
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r4, %r5}], [%r3]"
    assert insn.cp_async_bulk_wait_group(0, read=True) == "cp.async.bulk.wait_group.read 0"
    assert insn.cp_async("%r3+0", "%rd2", 16) == "cp.async.cg.shared.global [%r3+0], [%rd2], 16"
    assert insn.cp_async("%r3+0", "%rd2", 4, src_size="%r9") == "cp.async.ca.shared.global [%r3+0], [%rd2], 4, %r9"
    assert insn.cp_async_wait_group(2) == "cp.async.wait_group 2"
    assert insn.setmaxnreg("inc", 240) == "setmaxnreg.inc.sync.aligned.u32 240"
    assert insn.setmaxnreg("dec", 24) == "setmaxnreg.dec.sync.aligned.u32 24"
    assert insn.elect_sync("%p2") == "elect.sync _|%p2, 0xffffffff"
    assert insn.ldmatrix([r("%r1"), r("%r2")], "%r7+32", trans=True) == \
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r1, %r2}, [%r7+32]"
    assert insn.stmatrix("%r7", [r("%r1")]) == "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r7], {%r1}"
    assert insn.bar_sync() == "bar.sync 0"
    assert insn.bar_sync(3, 256) == "bar.sync 3, 256"
    assert insn.bar_arrive(3, 256) == "bar.arrive 3, 256"
    assert insn.fence_proxy_async() == "fence.proxy.async.shared::cta"
    assert insn.fence_acq_rel("gpu") == "fence.acq_rel.gpu"
    assert insn.tensormap_replace("box_dim", "%r1", 64, 0) == \
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r1], 0, 64"
    assert insn.tensormap_replace("global_address", "%r1", "%rd4") == \
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd4"


def test_wgmma_text_follows_the_instruction() -> None:
    f16 = check_wgmma_shape(64, 16, 16, "f16", b_major="MN")
    d = [f"%f{i}" for i in range(8)]
    assert insn.wgmma_mma_async(f16, d, "%rd1", "%rd2", "%p1") == (
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, %rd1, %rd2, "
        "%p1, 1, 1, 0, 1")
    regs_a = check_wgmma_shape(64, 8, 16, "bf16", a_in_registers=True)
    assert insn.wgmma_mma_async(regs_a, d[:4], ["%r1", "%r2", "%r3", "%r4"], "%rd2", "%p1").endswith(
        "{%f0, %f1, %f2, %f3}, {%r1, %r2, %r3, %r4}, %rd2, %p1, 1, 1, 0")
    i8 = check_wgmma_shape(64, 8, 32, "i8")
    assert insn.wgmma_mma_async(i8, d[:4], "%rd1", "%rd2", "%p1").endswith("%rd1, %rd2, %p1")
    tf32 = check_wgmma_shape(64, 8, 8, "f32")
    assert insn.wgmma_mma_async(tf32, d[:4], "%rd1", "%rd2", "%p1", scale_b=-1).endswith("%p1, 1, -1")


# -- argument checks -------------------------------------------------------------------------------
@pytest.mark.parametrize("call,match", [
    (lambda: insn.setmaxnreg("inc", 20), r"in \[24, 256\]"),
    (lambda: insn.setmaxnreg("inc", 264), r"in \[24, 256\]"),
    (lambda: insn.setmaxnreg("inc", 100), "multiple of 8"),
    (lambda: insn.setmaxnreg("up", 240), "inc, dec"),
    (lambda: insn.wgmma_wait_group(-1), "wgmma.wait_group N"),
    (lambda: insn.cp_async_wait_group(True), "cp.async.wait_group N"),
    (lambda: insn.cp_async_bulk_wait_group(1.5), "cp.async.bulk.wait_group N"),
    (lambda: insn.mbarrier_init("%r1", 0), "count"),
    (lambda: insn.mbarrier_init("%r1", 1 << 20), "count"),
    (lambda: insn.mbarrier_arrive_expect_tx("%r1", 1 << 20), "byte count"),
    (lambda: insn.mbarrier_arrive("%r1", space="global"), "state space"),
    (lambda: insn.mbarrier_arrive("%r1", space="shared::cluster", state="%rd1"), "no state"),
    (lambda: insn.mbarrier_try_wait_parity("%p1", "%r1", 2), "0 or 1"),
    (lambda: insn.cp_async_bulk_tensor_load(2, "%r1", "%rd1", ["%r2"], "%r3"), "takes 2 coordinates"),
    (lambda: insn.cp_async_bulk_tensor_load(6, "%r1", "%rd1", ["%r2"] * 6, "%r3"), "tensor rank"),
    (lambda: insn.cp_async_bulk_tensor_store(1, "%rd1", ["%r2"], "%r1", reduce="mul"), "reduction"),
    (lambda: insn.cp_async("%r1", "%rd1", 2), "size"),
    (lambda: insn.cp_async("%r1", "%rd1", 8, cache="cg"), "16 bytes"),
    (lambda: insn.ldmatrix(["%r1"] * 3, "%r2"), "matrix count"),
    (lambda: insn.stmatrix("%r2", []), "matrix count"),
    (lambda: insn.bar_sync(16), "barrier id"),
    (lambda: insn.bar_arrive(1, 48), "multiple of 32"),
    (lambda: insn.fence_acq_rel("block"), "fence scope"),
    (lambda: insn.tensormap_replace("box_dim", "%r1", 64), "takes ordinal"),
    (lambda: insn.tensormap_replace("rank", "%r1", 1, 0), "has no ordinal"),
    (lambda: insn.tensormap_replace("box_dim", "%r1", 64, 5), "ordinal"),
    (lambda: insn.elect_sync("%p1", membermask=0), "member mask"),
    (lambda: insn.mbarrier_try_wait_parity("%p1", "%r1", 0, -5), "suspendTimeHint"),
    (lambda: insn.vote_sync_ballot("%r1", "%p1", 0), "member mask"),
    (lambda: insn.redux_sync("add", "f32", "%f1", "%f2"), "f32 operation"),
    (lambda: insn.redux_sync("xor", "s32", "%r1", "%r2"), "redux.sync.xor type"),
    (lambda: insn.redux_sync("max", "u32", "%r1", "%r2", absolute=True), ".abs applies to .f32"),
    (lambda: insn.wgmma_mma_async(check_wgmma_shape(64, 16, 16, "f16"), ["%f0"] * 7, "%rd1", "%rd2", "%p1"),
     "takes 8 accumulator registers"),
    (lambda: insn.wgmma_mma_async(check_wgmma_shape(64, 8, 16, "f16"), ["%f0"] * 4, ["%r1"] * 4, "%rd2", "%p1"),
     "planned with A in shared memory"),
    (lambda: insn.wgmma_mma_async(check_wgmma_shape(64, 8, 16, "f16"), ["%f0"] * 4, "%rd1", "%rd2", "%p1",
                                  scale_a=2), "imm-scale-a"),
    (lambda: insn.mma_sync("wgmma.mma_async", [], [], [], []), "not an mma.sync form"),
])
def test_argument_checks(call, match: str) -> None:
    with pytest.raises(PtxOperandError, match=match):
        call()


# -- ptxas -------------------------------------------------------------------------------------------
def _kernel(lines: list[str]) -> str:
    body = "\n".join(f"\t{x};" for x in lines)
    return f""".version 8.4
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry k(.param .align 64 .b8 map[128], .param .u64 out)
{{
\t.reg .pred %p<4>;
\t.reg .b16 %h<4>;
\t.reg .b32 %r<240>;
\t.reg .b64 %rd<8>;
\t.reg .f32 %f<140>;
\tmov.u32 %r1, smem;
\tmov.u64 %rd1, map;
\tld.param.u64 %rd2, [out];
\tmov.u32 %r2, 0;
\tmov.u16 %h1, 3;
\tmov.u64 %rd3, 0;
\tsetp.eq.u32 %p1, %r2, 0;
{body}
\tret;
}}
"""


def _assemble(ptx: str) -> None:
    from tlxc.codegen.nvptx.toolchain import ptxas

    ptxas(ptx, "sm_90a")  # raises with ptxas's log when it rejects the PTX


def test_ptxas_accepts_every_builder() -> None:
    ptxas_or_skip()
    bar, buf = "%r1", insn.offset_address("%r1", 1024)
    f16 = check_wgmma_shape(64, 16, 16, "f16", b_major="MN")
    lines = [
        insn.mbarrier_init(bar, 1), insn.fence_mbarrier_init(), insn.bar_sync(), insn.bar_sync(1, 128),
        insn.bar_arrive(2, 64), insn.bar_warp_sync(), insn.mbarrier_arrive_expect_tx(bar, 256),
        insn.cp_async_bulk_tensor_load(2, buf, "%rd1", ["%r2", "%r2"], bar),
        insn.cp_async_bulk_tensor_load(1, buf, "%rd1", ["%r2"], bar, multicast_mask="%h1"),
        insn.mbarrier_arrive(bar), insn.mbarrier_arrive(bar, 2), insn.mbarrier_arrive(bar, space="shared::cluster"),
        insn.mbarrier_try_wait_parity("%p2", bar, "%r2"), insn.mbarrier_test_wait_parity("%p2", bar, 0),
        insn.fence_proxy_async(), insn.fence_proxy_async(None), insn.fence_acq_rel("gpu"), insn.fence_sc("cta"),
        insn.membar("gl"),
        insn.cp_async_bulk_tensor_store(2, "%rd1", ["%r2", "%r2"], buf),
        insn.cp_async_bulk_tensor_store(2, "%rd1", ["%r2", "%r2"], buf, reduce="add"),
        insn.cp_async_bulk_commit_group(), insn.cp_async_bulk_wait_group(0, read=True),
        insn.cp_async_bulk_wait_group(1), insn.cp_async(insn.offset_address(bar, 2048), "%rd2", 16),
        insn.cp_async("%r1+2064", "%rd2", 4, src_size="%r2"),
        insn.cp_async(buf, "%rd2", 8, src_size=4), insn.cp_async_commit_group(), insn.cp_async_wait_group(0),
        insn.cp_async_wait_all(),
        insn.ldmatrix(["%r3", "%r4", "%r5", "%r6"], buf), insn.ldmatrix(["%r3"], buf, trans=True),
        insn.stmatrix(buf, ["%r3", "%r4"]), insn.stmatrix(buf, ["%r3", "%r4", "%r5", "%r6"], trans=True),
        insn.mma_sync(MMA_SYNC[("f16", "f32")].text(), ["%f1", "%f2", "%f3", "%f4"], ["%r3", "%r4", "%r5", "%r6"],
                      ["%r3", "%r4"], ["%f1", "%f2", "%f3", "%f4"]),
        insn.wgmma_fence(),
        insn.wgmma_mma_async(f16, [f"%f{i}" for i in range(10, 18)], "%rd3", "%rd3", "%p1"),
        insn.wgmma_commit_group(), insn.wgmma_wait_group(0),
        insn.elect_sync("%p3"), insn.elect_sync("%p3", "%r7"),
        insn.setmaxnreg("dec", 40), insn.setmaxnreg("inc", 232),
        insn.barrier_cluster_arrive(), insn.barrier_cluster_arrive(relaxed=True), insn.barrier_cluster_wait(),
        insn.tensormap_replace("global_address", buf, "%rd2"), insn.tensormap_replace("rank", buf, 1),
        insn.tensormap_replace("box_dim", buf, 64, 0), insn.tensormap_replace("global_stride", buf, "%rd3", 0),
        insn.tensormap_replace("swizzle_mode", buf, 3), insn.tensormap_cp_fenceproxy("%rd2", buf),
        insn.fence_proxy_tensormap_acquire("%rd2"), insn.mbarrier_inval(bar),
    ]
    _assemble(_kernel(lines))


def test_ptxas_takes_every_wgmma_shape_of_the_table() -> None:
    """One instruction per (operand type, N) of the table, A from shared memory and, for
    the float types, from registers; the accumulator of the largest N is 128 registers."""
    ptxas_or_skip()
    f32 = [f"%f{i}" for i in range(128)]
    ints = [f"%r{i}" for i in range(100, 228)]
    lines = [insn.wgmma_fence()]
    for name, t in WGMMA_TYPES.items():
        for acc in t.accumulators:
            for m, n, k in legal_wgmma_shapes(name):
                b_major = "MN" if t.transposable else "K"
                instr = check_wgmma_shape(m, n, k, name, b_major=b_major, acc_type=acc)
                d = (ints if acc in ("i32", "f16") else f32)[:instr.accumulator_registers]
                lines.append(insn.wgmma_mma_async(instr, d, "%rd3", "%rd3", "%p1"))
                if acc != "i32" and n in (8, 256):
                    regs = check_wgmma_shape(m, n, k, name, a_in_registers=True, acc_type=acc)
                    lines.append(insn.wgmma_mma_async(regs, d, ["%r3", "%r4", "%r5", "%r6"], "%rd3", "%p1"))
    lines += [insn.wgmma_commit_group(), insn.wgmma_wait_group(0)]
    assert sum("mma_async" in x for x in lines) > 7 * 20
    _assemble(_kernel(lines))


def test_float_n_values_and_int_n_values() -> None:
    assert [n for _, n, _ in legal_wgmma_shapes("f16")] == list(range(8, 257, 8))
    assert {k for _, _, k in legal_wgmma_shapes("bf16")} == {16}
    assert [n for _, n, _ in legal_wgmma_shapes("u8")] == [8, 16, 24] + list(range(32, 257, 16))
    assert (wgmma_instr_k("f16"), wgmma_instr_k("f32"), wgmma_instr_k("f8e5m2"), wgmma_instr_k("f64")) == (16, 8, 32,
                                                                                                          None)
    for t in WGMMA_TYPES.values():
        assert t.section.startswith(PTX_ISA + "#") and t.k * t.bits == 256  # 32 bytes of K per instruction


@pytest.mark.parametrize("n", [8, 16, 32, 64, 128, 256])
def test_emitter_produces_the_table_instruction(n: int) -> None:
    """The N the code generator picks for a 64 x N tile is the table's, spelled as the
    table's instruction."""
    case = W.Case("once", BN=n, BK=16)
    ptx = case.kernel.compile(case.signature, case.constants, arch="sm_90a", num_warps=4).asm["ptx"]
    want = check_wgmma_shape(64, n, 16, "f16", b_major="MN").mnemonic + " {"
    assert ptx.count(want) == 1, [x for x in ptx.splitlines() if "mma_async" in x]
