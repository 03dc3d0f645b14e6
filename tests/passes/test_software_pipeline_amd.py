"""``software-pipeline`` on the AMD chips (tlxc/ir/passes/register_prefetch.py): the loads of
iteration k + 1 issued into registers before the dot of iteration k, carried to the next
iteration, which stores them into its slot of a double-buffered LDS ring and reads the
dot's operands back from there.

As for the NVIDIA form (test_software_pipeline.py, whose kernels and helpers these reuse):
the IR after the pass, interpreted, computes what the kernel does (0, 1 and many
iterations, ragged K, a transposed operand); then the structure; then the ISA of gfx942,
gfx950 and gfx1250: the next iteration's global loads come before this iteration's
MFMAs / WMMAs in the loop, one ``s_barrier`` per iteration, no scratch.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_software_pipeline import ANY_K, SIG, _run_matmul, _upto_pass, matmul_kernel, qk_agrees, qk_loop

from tlxc.ir import print_ir
from tlxc.ir.passes import membar

ARCHS = ["gfx942", "gfx950", "gfx1250"]


@pytest.mark.interpreter_only
@pytest.mark.parametrize("arch", ["gfx942", "gfx1250"])
@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("mnk", [(64, 64, 80), (64, 32, 16), (32, 32, 5), (48, 64, 200), (32, 32, 0)])
def test_pipelined_ir_computes_what_the_kernel_does(arch: str, stages: int, mnk: tuple[int, int, int]) -> None:
    """Loops of 0, 1 and many iterations, K tails masked, pointer increments carried."""
    ck = matmul_kernel.compile(ANY_K, constants=dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=2), arch=arch)
    piped = _upto_pass(ck.module, stages, arch)
    assert "local_store" in print_ir(piped)
    np.testing.assert_array_equal(_run_matmul(piped, *mnk), _run_matmul(ck.module, *mnk))


def _loop_text(text: str) -> str:
    return text[text.index("= for"):]


def test_the_loop_gets_a_double_buffer_and_carried_registers() -> None:
    ck = matmul_kernel.compile(SIG, constants=dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=2),
                               arch="gfx942")
    text = print_ir(_upto_pass(ck.module, 3, "gfx942"))  # any num_stages >= 2: two slots, one iteration ahead
    assert "local_alloc : memdesc<32x16xf16, smem, num=2>" in text
    assert "local_alloc : memdesc<16x32xf16, smem, num=2>" in text
    assert "async_load" not in text
    loop = re.search(r"= for [^\n]*: ([^{]*)\{", text)
    assert loop is not None
    # the accumulator, the ahead pointers (B's runtime step: its scalar base, rebase-pointers),
    # iteration k's registers, the slot counter
    assert loop.group(1).split(", ") == ["tile<32x32xf32>", "tile<32x16xptr<f16>>", "ptr<f16>",
                                         "tile<32x16xf16>", "tile<16x32xf16>", "i32 "]
    body = _loop_text(text)
    # in the body: store this iteration's registers, load the next iteration's, read the slot, dot
    stores = [m.start() for m in re.finditer(r"\n\s*local_store ", body)]
    loads = [m.start() for m in re.finditer(r"= load ", body)]
    reads = [m.start() for m in re.finditer(r"= local_load ", body)]
    dot = body.index("= dot ")
    assert len(stores) == 2 and len(loads) == 2 and len(reads) == 2
    assert max(stores) < min(loads) and max(loads) < min(reads) and max(reads) < dot
    # the prologue loads iteration 0, masked off where the loop runs no iteration
    prologue = text[:text.index("= for")]
    assert prologue.count("= load ") == 2


def test_num_stages_one_leaves_the_loop_alone() -> None:
    ck = matmul_kernel.compile(SIG, constants=dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=2),
                               arch="gfx950")
    assert "local_store" not in print_ir(_upto_pass(ck.module, 1, "gfx950"))


@pytest.mark.interpreter_only
def test_a_transposed_operand() -> None:
    ck = qk_loop.compile("*fp16:16,*fp16:16,*fp32:16,i32", constants=dict(BM=64, BN=32, D=64), arch="gfx942")
    piped = _upto_pass(ck.module, 1, "gfx942")  # the kernel's 1 is overridden by tl.range(num_stages=4)
    text = print_ir(piped)
    assert "num=2>" in text and "trans" in _loop_text(text)
    qk_agrees(ck.module, piped, (0, 32, 100, 160))


def test_membar_sees_consecutive_slots_of_a_ring_apart() -> None:
    """The double buffer is worth one barrier: the store of slot k does not wait for the
    reads of slot k - 1 (a ring counter, ``ring_slots``), only the reads for the store."""
    ck = matmul_kernel.compile(SIG, constants=dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=2),
                               arch="gfx942", num_stages=2)
    body = _loop_text(ck.asm["target_ir"])
    body = body[:body.index("yield")]
    assert body.count("named_barrier_wait") == 1
    assert body.index("named_barrier_wait") > body.rindex("local_store ")
    assert body.index("named_barrier_wait") < body.index("= local_load ")
    assert membar._conflict((0, 64, 7, 9, 0), (0, 64, 7, 9, 1)) is False
    assert membar._conflict((0, 64, 7, 9, 0), (0, 64, 7, 9, 0)) is True
    assert membar._conflict((0, 64, 7, 9, 0), (0, 64, 0, 0, 0)) is True  # another access to the ring: any slot


def _loop_body(asm: str) -> list[str]:
    """The instructions of the loop that issues the matrix instructions (from its label to
    the branch back)."""
    lines = asm.splitlines()
    labels = {m.group(1): i for i, ln in enumerate(lines) if (m := re.match(r"^(\.LBB\S+):", ln))}
    for i, ln in enumerate(lines):
        m = re.search(r"s_c?branch\w*\s+(\.LBB\S+)", ln)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            body = [x.split()[0] for x in lines[labels[m.group(1)]:i + 1] if x.startswith("\t") and x.split()]
            if any(x.startswith(("v_mfma", "v_wmma")) for x in body):
                return body
    raise AssertionError("no loop with matrix instructions")


def _compile(arch: str, bm: int, bn: int, bk: int, warps: int, stages: int = 2):
    return matmul_kernel.compile(SIG, constants=dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_SIZE_M=4),
                                 arch=arch, num_warps=warps, num_stages=stages)


def _is_barrier(x: str) -> bool:
    return x == "s_barrier" or x == "s_barrier_wait"  # gfx1250 splits it: s_barrier_signal, s_barrier_wait


@pytest.mark.parametrize("arch", ARCHS)
def test_isa_issues_the_next_loads_before_this_iterations_matrix_instructions(arch: str) -> None:
    """One turn of the loop, from its first LDS store (the top of an iteration: LLVM rotates
    the loop, so the text starts elsewhere): the stores of this iteration's registers, the
    global loads of the next iteration, the one barrier, then the LDS reads and the matrix
    instructions of this iteration."""
    ck = _compile(arch, 128, 128, 64, 8)
    body = _loop_body(ck.asm["amdgcn"])
    top = next(i for i, x in enumerate(body) if x.startswith(("ds_write", "ds_store")))
    turn = body[top:] + body[:top]
    glob = [i for i, x in enumerate(turn) if x.startswith(("global_load", "buffer_load"))]
    mma = [i for i, x in enumerate(turn) if x.startswith(("v_mfma", "v_wmma"))]
    barriers = [i for i, x in enumerate(turn) if _is_barrier(x)]
    assert glob and mma
    assert len(barriers) == 1, (arch, turn)
    assert max(glob) < barriers[0] < min(mma), (arch, turn)
    assert ck.metadata["scratch"] == 0 and ck.metadata["vgpr_spills"] == 0, ck.metadata


# Triton's tutorial 03 on AMD (get_hip_autotune_config): (BLOCK_M, BLOCK_N, BLOCK_K, num_warps), num_stages=2
TUTORIAL = [(128, 128, 64, 8), (256, 128, 64, 8), (256, 256, 64, 8), (128, 256, 16, 4), (64, 128, 32, 4)]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("bm,bn,bk,warps", TUTORIAL)
def test_tutorial_configs_run_without_scratch(arch: str, bm: int, bn: int, bk: int, warps: int) -> None:
    ck = _compile(arch, bm, bn, bk, warps)
    # (gfx1250's f16 WMMA is 16x16x32: BLOCK_K=16 multiplies with FMAs there)
    assert re.search(r"v_mfma|v_wmma", ck.asm["amdgcn"]) or (arch, bk) == ("gfx1250", 16)
    md = ck.metadata
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0, md


@pytest.mark.parametrize("arch,slots,barriers", [("gfx942", 1, 2), ("gfx950", 2, 1)])
def test_a_double_buffer_that_does_not_fit_becomes_one_slot(arch: str, slots: int, barriers: int) -> None:
    """256x128x64 fp16: two slots of both operands are 96 KB; gfx942 has 64 KB of LDS (one
    slot, and a second barrier: the store waits for the previous iteration's reads),
    gfx950 160 KB."""
    ck = _compile(arch, 256, 128, 64, 8)
    text = ck.asm["target_ir"]
    assert text.count(f"memdesc<256x64xf16, smem, num={slots},") == 1
    body = _loop_text(text)
    assert body[:body.index("yield")].count("named_barrier_wait") == barriers
    assert ck.metadata.get("scratch") in (None, 0)


@pytest.mark.parametrize("arch,slots", [("gfx942", 1), ("gfx950", 2)])
def test_a_loop_that_stores_a_tile_keeps_lds_for_its_conversion(arch: str, slots: int) -> None:
    """A flattened persistent matmul (examples/persistent_matmul.py, host descriptors read
    through pointers on AMD) stores its 128x128 result inside the loop, converting it
    through LDS while the ring is live: on gfx942 two 32 KB slots would leave no room for
    that (TLXC-RESOURCE-001 before), so the ring gets one slot; gfx950's 160 KB keeps two."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from persistent_matmul import persistent_matmul_kernel

    sig = ("tensordesc<fp16[128,64]>,tensordesc<fp16[64,128]>,tensordesc<fp16[128,128]>,i32,i32,i32")
    ck = persistent_matmul_kernel.compile(sig, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 8,
                                                "NUM_SMS": 304}, arch=arch, num_warps=8, num_stages=2)
    text = ck.asm["target_ir"]
    assert text.count(f"memdesc<128x64xf16, smem, num={slots},") == 1, text[:3000]
    ck.asm["amdgcn"]
    md = ck.metadata
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0 and md["lds"] <= 65536 * (1 if arch == "gfx942" else 3), md
