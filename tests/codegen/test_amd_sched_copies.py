"""Register copies in the loop of an explicitly scheduled MFMA GEMM (``lower_amd_tlx.py``,
``amd_mfma_commit``): accumulators carried around a runtime K loop, several native K bands
per iteration, must not be copied between register sets each iteration.

A single ``"a"`` inline-asm constraint in the kernel (the commit once put every
results-only boundary in AGPRs) makes LLVM select all MFMAs in their AGPR form, and an
AGPR-form chain carried around a loop costs a ``v_accvgpr_mov`` per accumulator register per
iteration (256 in the loop of ``examples/amd_scheduled_mfma_gemm.py``). Transient chains
now commit in VGPRs, so LLVM keeps them in one register set across iterations."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx

sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))

import amd_scheduled_mfma_gemm as E  # noqa: E402

MFMA = {"gfx942": dict(VERSION=3, INSTR_K=8), "gfx950": dict(VERSION=4, INSTR_K=16)}
SIGNATURE = "*bf16,*bf16,*fp32,i32"


@tlxc.jit
def banded_loop(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                VERSION: tl.constexpr, INSTR_K: tl.constexpr, ROLE: tl.constexpr, ACC_CLASS: tl.constexpr):
    """acc += A[:, k:k+BK] @ B[k:k+BK, :] per iteration, one scheduled MFMA per native K band."""
    mma: tl.constexpr = tlx.amd_mfma_layout(version=VERSION, instr_shape=[32, 32, INSTR_K], transposed=True,
                                            warps_per_cta=[2, 2])
    dot_a: tl.constexpr = tlx.dot_operand_layout(0, mma, k_width=INSTR_K // 2)
    dot_b: tl.constexpr = tlx.dot_operand_layout(1, mma, k_width=INSTR_K // 2)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tlx.zeros((BM, BN), tl.float32, layout=mma)
    for k in range(0, K, BK):
        a = tlx.require_layout(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]), dot_a)
        b = tlx.require_layout(tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :]), dot_b)
        for band in tl.static_range(BK // INSTR_K):
            acc = tlx.amd_scheduled_mfma(tlx.extract_slice(a, [BM, INSTR_K], [0, band * INSTR_K]),
                                         tlx.extract_slice(b, [INSTR_K, BN], [band * INSTR_K, 0]), acc,
                                         accumulator_role=ROLE, accumulator_register_class=ACC_CLASS)
    acc = tlx.amd_mfma_commit(acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def loop_bodies(asm: str) -> list[list[str]]:
    """The instructions of each loop of ``asm`` that issues MFMAs: from a label to the
    last branch back to it."""
    lines = asm.splitlines()
    labels = {m.group(1): i for i, ln in enumerate(lines) if (m := re.match(r"^(\.LBB\S+):", ln))}
    ends: dict[str, int] = {}
    for i, ln in enumerate(lines):
        m = re.search(r"s_c?branch\w*\s+(\.LBB\S+)", ln)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            ends[m.group(1)] = i
    bodies = []
    for label, end in ends.items():
        body = [x.split()[0] for x in lines[labels[label]:end + 1] if x.startswith("\t") and x.split()]
        if any(x.startswith("v_mfma") for x in body):
            bodies.append(body)
    return bodies


def copies(body: list[str]) -> dict[str, int]:
    return {k: sum(1 for x in body if x.startswith(f"v_accvgpr_{k}")) for k in ("mov", "read", "write")}


def compile_loop(arch: str, role: str = "transient", acc_class: str | None = None, BM: int = 128, BN: int = 128,
                 BK: int = 32):
    return banded_loop.compile(SIGNATURE, constants=dict(BM=BM, BN=BN, BK=BK, ROLE=role, ACC_CLASS=acc_class,
                                                         **MFMA[arch]), arch=arch, num_warps=4)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_example_loop_has_no_accumulator_copies(arch: str) -> None:
    """examples/amd_scheduled_mfma_gemm.py: 16 chains of 32x32 fragments (128 fp32
    registers per lane), 2 (gfx950) or 4 (gfx942) bands per iteration. Before: 256
    v_accvgpr_mov per iteration and 256 AGPRs + 164 VGPRs; now none, and 216 VGPRs."""
    k = E.compile_for(arch)
    (body,) = loop_bodies(k.asm["amdgcn"])
    assert body.count("v_mfma_f32_32x32x16_bf16" if arch == "gfx950" else "v_mfma_f32_32x32x8_bf16") == \
        {"gfx950": 16, "gfx942": 32}[arch]
    assert copies(body) == {"mov": 0, "read": 0, "write": 0}
    md = k.metadata
    assert md["agprs"] == 0 and md["vgprs"] <= 224, md
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("BM, BN, BK", [(64, 64, 32), (128, 128, 32), (128, 128, 64)])
def test_transient_chains_stay_in_place_across_iterations(arch: str, BM: int, BN: int, BK: int) -> None:
    k = compile_loop(arch, BM=BM, BN=BN, BK=BK)
    (body,) = loop_bodies(k.asm["amdgcn"])
    fragments = BM * BN // (32 * 32 * 4)
    assert sum(x.startswith("v_mfma") for x in body) == fragments * BK // MFMA[arch]["INSTR_K"]
    assert copies(body) == {"mov": 0, "read": 0, "write": 0}
    assert k.metadata["agprs"] == 0
    # the results-only commit keeps a transient chain in VGPRs: no "a" constraint anywhere
    assert re.search(r'asm sideeffect "", "=v', k.asm["llir"]) and '"=a' not in k.asm["llir"]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_persistent_vgpr_chains_stay_in_place(arch: str) -> None:
    k = compile_loop(arch, role="persistent", acc_class="vgpr")
    (body,) = loop_bodies(k.asm["amdgcn"])
    assert copies(body) == {"mov": 0, "read": 0, "write": 0}
    assert k.metadata["agprs"] == 0


def test_persistent_agpr_chains_commit_in_agprs() -> None:
    """A persistent chain is pinned to AGPRs (``auto``) and its commit keeps it there. LLVM
    (22) still carries an AGPR chain around a loop through 32-bit VGPR-class values, which
    costs AGPR-to-AGPR copies: 128 per iteration here (64 fp32 accumulator registers per
    lane, two bands), never a VGPR round trip. Fewer is better; more is a regression."""
    k = compile_loop("gfx950", role="persistent")
    assert '"=a' in k.asm["llir"]
    (body,) = loop_bodies(k.asm["amdgcn"])
    got = copies(body)
    assert got["read"] == 0 and got["write"] == 0 and got["mov"] <= 128, got
    assert all(x.startswith("v_mfma") for x in body if "mfma" in x)
    assert k.metadata["agprs"] >= 64
