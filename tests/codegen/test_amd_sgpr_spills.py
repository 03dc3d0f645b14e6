"""SGPR spills (into VGPR lanes) of AMD kernels, from the code object metadata.

Kernels that load a large tile held in a dot-operand layout issue one load per element,
and each constant offset past the instruction's immediate field becomes a 64-bit SGPR
base (pointer + constant). LLVM's default scheduler computes them all ahead of the
loads, so they are all live at once and spill past 102 SGPRs. ``toolchain.compile_llvm_ir``
then schedules the kernel again (``"amdgpu-sched-strategy"``) and keeps a schedule without
SGPR spills that costs no occupancy, scratch or VGPR spills (``metadata["sched_strategy"]``
names it). The kernels here have the shapes of the public TLX-AMD tests that spilled:
``_extract_slice_dot1_kernel`` (42 spills before) and
``_amd_scheduled_mfma_interleaved_chains_kernel`` with 8 bands (39 before)."""

from __future__ import annotations

import pytest

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.codegen.amdgpu import toolchain


@tlxc.jit
def slice_of_dot_operand(x_ptr, y_ptr, ROW: tl.constexpr, COL: tl.constexpr):
    """A 256 x 128 bf16 tile loaded straight into a B-operand layout (no MFMA: the kernel
    only moves data), and a 32 x 64 fragment of it stored."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True,
                                            warps_per_cta=[1, 4])
    dot1: tl.constexpr = tlx.dot_operand_layout(1, mma, k_width=8)
    rows = tl.arange(0, 256)
    cols = tl.arange(0, 128)
    values = tlx.require_layout(tl.load(x_ptr + rows[:, None] * 128 + cols[None, :]), dot1, pin=False)
    band = tlx.extract_slice(values, [32, 64], [ROW, COL])
    band_rows = tl.arange(0, 32)
    band_cols = tl.arange(0, 64)
    out = tlx.require_layout(y_ptr + band_rows[:, None] * 64 + band_cols[None, :], dot1, pin=False)
    tl.store(out, band)


@tlxc.jit
def interleaved_chains(a_ptr, b_ptr, out_ptr, BANDS: tl.constexpr):
    """Two accumulator chains over BANDS bands of a 16 x 256 x 128 product, B resident in
    AGPRs, committed together."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=4, instr_shape=[16, 16, 32], transposed=True,
                                            warps_per_cta=[1, 4])
    dot0: tl.constexpr = tlx.dot_operand_layout(0, mma, k_width=8)
    dot1: tl.constexpr = tlx.dot_operand_layout(1, mma, k_width=8)
    rows = tl.arange(0, 16)
    red = tl.arange(0, 256)
    cols = tl.arange(0, 128)
    a = tlx.require_layout(tl.load(a_ptr + rows[:, None] * 256 + red[None, :]), dot0, pin=False)
    b = tlx.require_layout(tl.load(b_ptr + red[:, None] * 128 + cols[None, :]), dot1, pin=False)
    b = tlx.amd_register_resident(b, register_class="agpr", registers_per_group=32)
    acc0 = tlx.zeros((16, 64), tl.float32, layout=mma)
    acc1 = tlx.zeros((16, 64), tl.float32, layout=mma)
    for band in tl.static_range(BANDS):
        a_band = tlx.extract_slice(a, [16, 32], [0, band * 32])
        acc0 = tlx.amd_scheduled_mfma(a_band, tlx.extract_slice(b, [32, 64], [band * 32, 0]), acc0,
                                      resident_operand=1, accumulator_role="transient", initialize=band == 0)
        acc1 = tlx.amd_scheduled_mfma(a_band, tlx.extract_slice(b, [32, 64], [band * 32, 64]), acc1,
                                      resident_operand=1, accumulator_role="transient", initialize=band == 0)
    acc0, acc1 = tlx.amd_mfma_commit((acc0, acc1))
    half = tl.arange(0, 64)
    out0 = tlx.require_layout(out_ptr + rows[:, None] * 128 + half[None, :], mma, pin=False)
    out1 = tlx.require_layout(out_ptr + rows[:, None] * 128 + 64 + half[None, :], mma, pin=False)
    tl.store(out0, acc0)
    tl.store(out1, acc1)


@tlxc.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


CASES = {
    "slice_of_dot_operand": (slice_of_dot_operand, "*bf16,*bf16", {"ROW": 96, "COL": 64}),
    "interleaved_chains": (interleaved_chains, "*bf16,*bf16,*fp32", {"BANDS": 8}),
}


def compiled(case: str):
    fn, sig, constants = CASES[case]
    k = fn.compile(sig, constants=constants, arch="gfx950", num_warps=4)
    k.asm["amdgcn"]
    return k


@pytest.mark.parametrize("case, default_spills", [("slice_of_dot_operand", 42), ("interleaved_chains", 39)])
def test_no_sgpr_spills(case: str, default_spills: int) -> None:
    k = compiled(case)
    md = k.metadata
    assert md["sgpr_spills"] == 0 and md["sgprs"] <= 64, md
    assert md["vgpr_spills"] == 0 and md["scratch"] == 0
    assert md["sched_strategy"] in toolchain.SGPR_SPILL_STRATEGIES
    assert "v_readlane_b32" not in k.asm["amdgcn"] and "v_writelane_b32" not in k.asm["amdgcn"]
    # LLVM's default schedule of the same module spills: the retry is what removes them
    plain = toolchain.compile_llvm_ir(k.asm["llir"], "gfx950", sgpr_spill_retry=False).kernel()
    assert plain.sgpr_spills == default_spills and plain.sgprs == 106 and plain.sched_strategy == ""
    # and it costs no occupancy
    assert toolchain.occupancy("gfx950", md["vgprs"]) >= toolchain.occupancy("gfx950", plain.vgprs)


def test_kernels_without_spills_keep_the_default_schedule() -> None:
    k = add.compile("*fp32,*fp32,*fp32,i32", constants={"BLOCK": 1024}, arch="gfx950")
    k.asm["amdgcn"]
    assert k.metadata["sgpr_spills"] == 0 and k.metadata["sched_strategy"] == ""


def test_strategy_attribute_text() -> None:
    text = ('define amdgpu_kernel void @"k"(ptr addrspace(1) %0) #3 {\n  ret void\n}\n\n'
            'attributes #3 = { nounwind "amdgpu-flat-work-group-size"="1,256" }\n')
    got = toolchain._with_sched_strategy(text, "max-ilp")
    assert got is not None and 'attributes #3 = { "amdgpu-sched-strategy"="max-ilp" nounwind' in got
    assert toolchain._with_sched_strategy(got, "max-ilp") is None  # already named


def test_object_is_emitted_on_demand() -> None:
    k = compiled("slice_of_dot_operand")
    obj = k._amd_object
    assert obj[:4] == b"\x7fELF" and k._amd_object is obj  # emitted once


def test_occupancy() -> None:
    assert toolchain.occupancy("gfx950", 128) == 4 and toolchain.occupancy("gfx950", 129) == 3
    assert toolchain.occupancy("gfx950", 24) == 8 and toolchain.occupancy("gfx1250", 64) == 16
