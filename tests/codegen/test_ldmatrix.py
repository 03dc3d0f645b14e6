"""``mma.sync`` operands through ``ldmatrix`` (tlxc/codegen/nvptx/mma_operands.py).

* Emulation: for random source layouts (blocked, any vector and order) and the
  dot-operand layouts of random mma layouts, the plan's stores fill the buffer with every
  element once, and an emulated ``ldmatrix`` -- written here from the PTX ISA's words,
  not from the layouts under test -- reading at the addresses the lowering computes
  hands every thread exactly the elements its operand registers hold; the accesses are
  free of bank conflicts where the planner says so.
* PTX: f16/bf16, 8-bit and tf32 dots load their fragments with ``ldmatrix`` (``.trans``
  where the B tile arrives with N contiguous), and ptxas accepts them for both targets.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from codegen_helpers import NVIDIA_ARCHS, filecheck, ptxas_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

import tlxc
import tlxc.language as tl
from tlxc.codegen.nvptx.lower_convert import SharedSide
from tlxc.codegen.nvptx.mma_operands import LdmatrixPlan, instruction_groups, plan_ldmatrix, plan_ldmatrix_as
from tlxc.codegen.nvptx.target_info import target_info
from tlxc.ir.layout import LANE, REGISTER, WARP, LinearLayout, MmaV2, bank_cost, blocked

TARGET = target_info("sm_90a").layout_target


# -- the emulation ----------------------------------------------------------------------------
def _element(layout: LinearLayout, reg: int, tid: int) -> int:
    return layout.apply_flat(layout.encode_in({REGISTER: reg, LANE: tid & 31, WARP: tid >> 5}))


def _store(memory: dict[int, int], side: SharedSide, src: LinearLayout, copies: int) -> None:
    """Every thread's vector stores, at the offsets the lowering computes."""
    for tid in range(32 * src.in_dim_size(WARP)):
        if tid & copies:
            continue
        slot = side.slot_thread.at(tid)
        for runtime, imm, regs in side.groups():
            off = (runtime ^ side.address_thread.at(tid)) + imm
            assert off % side.vec == 0, "misaligned vector store"
            for i in range(len(regs)):
                elem = _element(src, regs[i ^ slot], tid)
                assert memory.setdefault(off + i, elem) == elem, "two elements at one offset"


def ldmatrix(memory: dict[int, int], addresses: list[int], elem_bits: int, trans: bool,
             matrices: int) -> list[list[list[int]]]:
    """What each thread receives: ``[thread][destination register][element]``, given the
    element offset each lane addresses (PTX ISA, "ldmatrix"; 16 bytes a row, thread ``t``
    gets bytes ``4*(t % 4)`` .. of row ``t // 4``, or with ``.trans`` (16-bit) column
    ``t // 4`` of rows ``2*(t % 4)`` and ``2*(t % 4) + 1``)."""
    per_word = 32 // elem_bits
    for lane in range(8 * matrices):
        assert addresses[lane] * elem_bits % 128 == 0, "a row address is not 16-byte aligned"
    out = []
    for t in range(32):
        words = []
        for i in range(matrices):
            if trans:
                words.append([memory[addresses[8 * i + 2 * (t % 4) + h] + t // 4] for h in range(2)])
            else:
                row = addresses[8 * i + t // 4]
                words.append([memory[row + per_word * (t % 4) + h] for h in range(per_word)])
        out.append(words)
    return out


def emulate(plan: LdmatrixPlan, src: LinearLayout, dst: LinearLayout, elem_bits: int) -> None:
    move, a = plan.move, plan.address
    memory: dict[int, int] = {}
    _store(memory, move.store, src, move.copies)
    assert len(memory) == move.size, "the stores do not fill the buffer"
    groups = move.load.groups()
    per_word = 32 // elem_bits
    delivered: dict[tuple[int, int], int] = {}
    for warp in range(dst.in_dim_size(WARP)):
        for instruction, g in instruction_groups(plan).items():
            runtime, imm, _ = groups[g]
            addresses = [(runtime ^ move.load.address_thread.at(32 * warp + lane)) + imm for lane in range(32)]
            got = ldmatrix(memory, addresses, elem_bits, a.trans, a.matrices)
            for t in range(32):
                for i in range(a.matrices):
                    for h in range(per_word):
                        reg = a.dst_register(instruction, i, h)
                        delivered[(32 * warp + t, reg)] = got[t][i][h]
    for tid in range(32 * dst.in_dim_size(WARP)):
        for reg in range(dst.in_dim_size(REGISTER)):
            assert delivered[(tid, reg)] == _element(dst, reg, tid), (tid, reg)


@st.composite
def operand_pairs(draw: st.DrawFn) -> tuple[LinearLayout, LinearLayout, int]:
    """(a blocked source, a dot-operand destination, element bits) of one random dot."""
    elem_bits = draw(st.sampled_from([8, 16, 32]))
    word = 32 // elem_bits
    op_idx = draw(st.sampled_from([0, 1]))
    num_warps = draw(st.sampled_from([1, 2, 4, 8]))
    wm = draw(st.sampled_from([w for w in (1, 2, 4, 8) if w <= num_warps]))
    warps = (wm, num_warps // wm)
    m = 16 * wm << draw(st.integers(0, 2))
    n = 8 * warps[1] << draw(st.integers(0, 2))
    k = (256 // elem_bits) << draw(st.integers(0, 1))
    shape = (m, k) if op_idx == 0 else (k, n)
    dst = MmaV2(warps).operand(shape, op_idx, word)
    order = draw(st.sampled_from([(1, 0), (0, 1)]))
    vec = draw(st.sampled_from([1, 2, 4, 8, 16]))
    vec = min(vec, shape[order[0]], 128 // elem_bits)
    spt = [1, 1]
    spt[order[0]] = vec
    lanes_fast = min(32, max(1, shape[order[0]] // vec))
    tpw = [1, 1]
    tpw[order[0]] = lanes_fast
    tpw[order[1]] = 32 // lanes_fast
    wpc = [1, 1]
    wpc[draw(st.sampled_from([0, 1]))] = num_warps
    src = blocked(shape, spt, tpw, wpc, order)
    return src, dst, elem_bits


@settings(max_examples=60, deadline=None)
@given(operand_pairs())
def test_ldmatrix_delivers_the_operand_registers(pair: tuple[LinearLayout, LinearLayout, int]) -> None:
    src, dst, elem_bits = pair
    plan = plan_ldmatrix(src, dst, elem_bits=elem_bits, target=TARGET)
    assert plan is not None, "no ldmatrix plan for a dot operand"
    emulate(plan, src, dst, elem_bits)


@settings(max_examples=30, deadline=None)
@given(operand_pairs())
def test_both_16_bit_forms_deliver(pair: tuple[LinearLayout, LinearLayout, int]) -> None:
    """``.trans`` and plain are both correct for 16-bit operands, whichever the
    planner would pick; the load side (whole 16-byte rows) is free of bank conflicts."""
    src, dst, elem_bits = pair
    if elem_bits != 16:
        return
    for trans in (False, True):
        plan = plan_ldmatrix_as(src, dst, elem_bits=16, target=TARGET, trans=trans)
        assert plan is not None, f"no ldmatrix plan with trans={trans}"
        emulate(plan, src, dst, 16)
        cost = bank_cost(plan.address.layout, plan.move.shared, elem_bits=16, vec=8, target=TARGET)
        assert cost.conflicts == 1


def test_vectorized_operands_store_whole_rows() -> None:
    """A tile held 8 f16 to a thread along K (A) or N (B) stores 16-byte vectors: plain
    ldmatrix for A, ``.trans`` for B (its rows run along N)."""
    a_src = blocked((128, 32), [1, 8], [8, 4], [4, 1], [1, 0])
    b_src = blocked((32, 128), [1, 8], [2, 16], [4, 1], [1, 0])
    mma = MmaV2((4, 1))
    for src, idx, trans in ((a_src, 0, False), (b_src, 1, True)):
        dst = mma.operand(src.out_shape, idx, 2)
        plan = plan_ldmatrix(src, dst, elem_bits=16, target=TARGET)
        assert plan is not None
        assert (plan.address.trans, plan.address.matrices, plan.move.store.vec) == (trans, 4, 8)
        assert plan.move.load.vec == 8
        emulate(plan, src, dst, 16)


# -- PTX -----------------------------------------------------------------------------------------
@tlxc.jit
def aligned_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


SIG = {"f16": "*fp16:16,*fp16:16,*fp32:16", "bf16": "*bf16:16,*bf16:16,*fp32:16",
       "i8": "*i8:16,*i8:16,*i32:16", "e4m3": "*fp8e4nv:16,*fp8e4nv:16,*fp32:16", "f32": "*fp32:16,*fp32:16,*fp32:16"}


def _ptx(ty: str, arch: str, m: int = 64, n: int = 64, k: int = 64) -> str:
    return aligned_dot.compile(SIG[ty], {"M": m, "N": n, "K": k}, arch=arch).asm["ptx"]


per_arch = pytest.mark.parametrize("arch", NVIDIA_ARCHS)
# 16-bit 64x64x64 dots with 4 warps run on wgmma on sm_90a (tlxc/ir/passes/dot_to_wgmma.py):
# their ldmatrix path is checked on the target that keeps mma.sync for them
mma_sync_16_bit = pytest.mark.parametrize("arch", [a for a in NVIDIA_ARCHS if a != "sm_90a"])


@mma_sync_16_bit
def test_f16_dot_loads_fragments_with_ldmatrix(arch: str) -> None:
    """64x64x64 f16, 4 warps on M: per warp one 16-row A strip (4 x4 loads over K) and
    all of B (8 .trans x4 loads); each 16-byte vector of a thread's loads is stored as
    one st.shared.v4; no 32-bit fragment loads remain."""
    filecheck(_ptx("f16", arch), test_f16_dot_loads_fragments_with_ldmatrix, arch)
    # CHECK-LABEL: .visible .entry aligned_dot(
    # CHECK:       st.shared.v4.b32
    # CHECK:       bar.sync 0;
    # CHECK-NOT:   ld.shared.b32
    # CHECK:       ldmatrix.sync.aligned.m8n8.x4{{(.trans)?}}.shared.b16
    # CHECK-SAME:  {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}+{{[0-9]+}}];
    # CHECK-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    # CHECK-NOT:   mma.sync
    # CHECK:       ret;


@mma_sync_16_bit
@pytest.mark.parametrize("ty", ["f16", "bf16"])
def test_16_bit_dot_ldmatrix_counts(arch: str, ty: str) -> None:
    ptx = _ptx(ty, arch)
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4  # A: one strip, 4 K steps
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 16  # B: 8 n8 tiles x 4 K steps x 2 / 4
    # between the dot's stores and its last MMA, no fragment loads besides ldmatrix
    first = ptx.index("ldmatrix.sync")
    assert "ld.shared" not in ptx[ptx.rindex("bar.sync", 0, first):ptx.rindex("mma.sync")]


@per_arch
@pytest.mark.parametrize("ty", ["i8", "e4m3"])
def test_8_bit_dot_packs_bytes_and_loads_with_ldmatrix(arch: str, ty: str) -> None:
    """8-bit operands: 16-byte vectors of A store as 4 words of 4 bytes (``prmt``), and
    ``ldmatrix`` without ``.trans`` loads their fragments (4 bytes of K per register)."""
    ptx = _ptx(ty, arch)
    assert "prmt.b32" in ptx
    assert "st.shared.v4.b32" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert ".trans" not in ptx


@per_arch
def test_tf32_dot_loads_f32_fragments_with_ldmatrix(arch: str) -> None:
    ptx = _ptx("f32", arch, k=32)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%f" in ptx
    assert ".trans" not in ptx
    assert "cvt.rna.tf32.f32" in ptx


@per_arch
@pytest.mark.parametrize("ty", list(SIG))
def test_ldmatrix_dots_assemble(arch: str, ty: str) -> None:
    ptxas_or_skip()
    ck = aligned_dot.compile(SIG[ty], {"M": 64, "N": 64, "K": 64}, arch=arch)
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert (ck.metadata["spill_stores"], ck.metadata["spill_loads"]) == (0, 0)


# -- results (interpreter; the GPU under TLXC_TEST_ON_GPU=1) -------------------------------------------
def _operand(ty: str, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    if ty == "i8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    dt = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "f32": np.float32}[ty]
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("ty,m,n,k", [("f16", 64, 64, 64), ("bf16", 32, 128, 32), ("i8", 64, 32, 64),
                                      ("e4m3", 32, 64, 64), ("f32", 64, 32, 32)])
def test_aligned_dot_results(ty: str, m: int, n: int, k: int) -> None:
    """The vectorized shapes of the PTX tests above (16-byte stores, ``.trans`` for B,
    packed bytes, f32 fragments), computed: on the GPU these check ``ldmatrix``'s
    fragments against numpy."""
    rng = np.random.default_rng(11)
    a, b = _operand(ty, (m, k), rng), _operand(ty, (k, n), rng)
    c = np.zeros((m, n), np.int32 if ty == "i8" else np.float32)
    aligned_dot.interpret[(1,)](a, b, c, M=m, N=n, K=k)
    if ty == "i8":
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
        return
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    # fp32 operands take tf32 (tl.dot's default precision): 10 mantissa bits
    rel = 2.0 ** -9 if ty == "f32" else 1e-5
    np.testing.assert_array_less(np.abs(c - a64 @ b64), rel * scale + 1e-6)
