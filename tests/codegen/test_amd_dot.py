"""``tl.dot`` on AMDGPU (``tlxc/codegen/amdgpu/dot_plan.py``, ``lower_dot.py``).

Without an AMD GPU, correctness is shown in three layers:

* the plan, replayed lane by lane (``replay``): every MFMA / WMMA the plan issues is
  executed symbolically with the hardware's own operand and result formulas, and every
  accumulator register must end up summing exactly its own row of A times its own column
  of B, over all of K, once each;
* the LDS staging: the addresses are the layouts' (a constant per register XOR a value
  per lane), the reads are ``k_width``-element vectors and conflict-free;
* the generated code: LLVM compiles it for gfx942 / gfx950 / gfx1250, the assembly holds
  the expected instructions in the expected numbers, and the example GEMM needs no
  scratch and spills nothing.
"""

from __future__ import annotations

import re
import sys
from itertools import product
from pathlib import Path

import pytest
from codegen_helpers import PREFIX, filecheck

import tlxc
import tlxc.language as tl
from tlxc.codegen.amdgpu.dot_plan import (
    DotPlan,
    accumulator_tiles,
    calls,
    choose,
    choose_k_width,
    intrinsic_signature,
    warps_per_cta,
)
from tlxc.codegen.amdgpu.isa import TARGETS
from tlxc.codegen.amdgpu.lower_dot import offset_map
from tlxc.ir.layout import LayoutTarget
from tlxc.ir.layout.amd import AmdMfma, AmdWmma, mfma_layout, wmma_layout
from tlxc.ir.layout.amd_lds import lds_bank_conflicts
from tlxc.ir.layout.common import blocked

REPO = Path(__file__).resolve().parents[2]
ARCHS = ("gfx942", "gfx950", "gfx1250")
for _arch in ARCHS:  # FileCheck prefixes of the AMD targets
    PREFIX.setdefault(_arch, _arch.upper())


def at(layout, **kw) -> tuple[int, ...]:
    c = layout.apply({"register": 0, "lane": 0, "warp": 0, "block": 0, **kw})
    return tuple(c[d] for d in layout.out_dims)


class Table:
    """Every element of a distributed layout, by (register, lane, warp), computed once."""

    def __init__(self, layout) -> None:
        self.rb, self.lb = layout.in_dim_bits("register"), layout.in_dim_bits("lane")
        self.coords = [tuple(layout.decode_out(layout.apply_flat(x)).values())
                       for x in range(layout.in_dim_size("register") * layout.in_dim_size("lane")
                                      * layout.in_dim_size("warp"))]

    def __call__(self, register: int = 0, lane: int = 0, warp: int = 0) -> tuple[int, ...]:
        return self.coords[register | lane << self.rb | warp << (self.rb + self.lb)]


# ----------------------------------------------------------------------------- the plan
def replay(plan: DotPlan, num_warps: int) -> int:
    """Run the plan's instructions lane by lane on symbolic tiles; returns the number of
    instructions per wave.

    Hardware model of one instruction (m x n x k, ``k_base`` elements per lane): lane
    ``l`` feeds element ``e`` of its first source as row ``l % m``, K slot
    ``(l // m) * k_base + e``, and of its second source as column ``l % n``, the same K
    slot formula; result register ``i`` of lane ``l`` is the (row, column) of the
    non-transposed one-instruction accumulator layout (``amd.py``, checked there against
    AMD's formulas). The real K slot order differs between instructions, but it is the
    same function for both sources on every MFMA and WMMA, and any such order gives the
    same sums: this model stands for all of them.
    """
    wave = TARGETS[plan.arch].wave_size
    c_layout = plan.accumulator()
    a_lay, b_lay, c_lay = Table(plan.operand(0)), Table(plan.operand(1)), Table(c_layout)
    p, ins = plan.parent, plan.instr
    if isinstance(p, AmdWmma):
        hw = Table(AmdWmma(p.version, False, (1, 1), p.instr_shape).accumulator((ins.m, ins.n)))
    else:
        hw = Table(AmdMfma(p.version, (ins.m, ins.n, ins.k), False, (1, 1)).accumulator((ins.m, ins.n)))
    m, n, kb, K = ins.m, ins.n, ins.k_base, plan.a_shape[-1]
    tiles = accumulator_tiles(plan)
    src0, src1 = (b_lay, a_lay) if plan.transposed else (a_lay, b_lay)
    sums: dict[tuple[int, int, int], list[int]] = {}
    issued = calls(plan)
    for w, call in product(range(num_warps), issued):
        assert len(call.src0) == len(call.src1) == kb
        for lane, (i, r) in product(range(wave), enumerate(tiles[call.acc])):
            row, col = hw(lane=lane, register=i)
            elem = c_lay(register=r, lane=lane, warp=w)
            for s in range(ins.k):
                x = src0(register=call.src0[s % kb], lane=row + m * (s // kb), warp=w)
                y = src1(register=call.src1[s % kb], lane=col + n * (s // kb), warp=w)
                if plan.transposed:  # D^T = B^T A^T: x is an element of B, y one of A
                    (k1, j), (i0, k2) = x[-2:], y[-2:]
                else:
                    (i0, k1), (k2, j) = x[-2:], y[-2:]
                assert k1 == k2 and x[:-2] == y[:-2] == elem[:-2], (call, lane, s)
                assert (i0, j) == elem[-2:], (call, lane, r)
                sums.setdefault((w, lane, r), []).append(k1)
    regs = c_layout.in_dim_size("register")
    assert len(sums) == num_warps * wave * len({c_lay(register=r) for r in range(regs)})
    for key, ks in sums.items():
        assert sorted(ks) == list(range(K)), key
    return len(issued)


PLANS = [
    # arch, operand dtype, acc dtype, precision, A shape, B shape, warps, mnemonic, warps_per_cta, k_width
    ("gfx942", "f16", "f32", "ieee", (64, 32), (32, 64), 4, "v_mfma_f32_32x32x8_f16", (2, 2), 8),
    ("gfx942", "f16", "f32", "ieee", (128, 32), (32, 128), 4, "v_mfma_f32_32x32x8_f16", (2, 2), 8),
    ("gfx942", "f16", "f32", "ieee", (32, 16), (16, 32), 4, "v_mfma_f32_32x32x8_f16", (4, 1), 8),
    ("gfx942", "bf16", "f32", "ieee", (16, 32), (32, 16), 4, "v_mfma_f32_16x16x16_bf16", (4, 1), 8),
    ("gfx942", "bf16", "f32", "ieee", (16, 64), (64, 64), 4, "v_mfma_f32_16x16x16_bf16", (1, 4), 8),
    ("gfx942", "f8e4m3fnuz", "f32", "ieee", (64, 32), (32, 64), 4, "v_mfma_f32_32x32x16_fp8_fp8", (2, 2), 16),
    ("gfx942", "f8e5m2fnuz", "f32", "ieee", (64, 64), (64, 64), 4, "v_mfma_f32_32x32x16_bf8_bf8", (2, 2), 16),
    ("gfx942", "f8e4m3fnuz", "f32", "ieee", (16, 16), (16, 16), 1, "v_mfma_f32_16x16x16_f16", (1, 1), 4),
    ("gfx942", "f32", "f32", "tf32", (64, 32), (32, 64), 4, "v_mfma_f32_32x32x4_xf32", (2, 2), 4),
    ("gfx942", "f32", "f32", "ieee", (64, 32), (32, 64), 4, "v_mfma_f32_32x32x2_f32", (2, 2), 4),
    ("gfx942", "i8", "i32", "ieee", (64, 64), (64, 32), 4, "v_mfma_i32_32x32x16_i8", (2, 2), 16),
    ("gfx942", "f16", "f32", "ieee", (2, 32, 16), (2, 16, 32), 4, "v_mfma_f32_32x32x8_f16", (2, 2, 1), 8),
    ("gfx950", "f16", "f32", "ieee", (64, 32), (32, 64), 4, "v_mfma_f32_32x32x16_f16", (2, 2), 8),
    ("gfx950", "bf16", "f32", "ieee", (128, 32), (32, 128), 4, "v_mfma_f32_32x32x16_bf16", (2, 2), 8),
    ("gfx950", "bf16", "f32", "ieee", (16, 32), (32, 16), 2, "v_mfma_f32_16x16x32_bf16", (2, 1), 8),
    ("gfx950", "f8e4m3", "f32", "ieee", (64, 128), (128, 64), 4, "v_mfma_f32_32x32x64_f8f6f4", (2, 2), 16),
    ("gfx950", "f8e5m2", "f32", "ieee", (64, 32), (32, 64), 4, "v_mfma_f32_32x32x16_bf8_bf8", (2, 2), 16),
    ("gfx950", "i8", "i32", "ieee", (64, 64), (64, 64), 4, "v_mfma_i32_32x32x32_i8", (2, 2), 16),
    ("gfx950", "f32", "f32", "tf32", (32, 16), (16, 32), 2, "v_mfma_f32_32x32x2_f32", (2, 1), 4),
    ("gfx1250", "f16", "f32", "ieee", (64, 32), (32, 64), 4, "v_wmma_f32_16x16x32_f16", (2, 2), 8),
    ("gfx1250", "bf16", "f32", "ieee", (128, 64), (64, 128), 4, "v_wmma_f32_16x16x32_bf16", (2, 2), 8),
    ("gfx1250", "f8e4m3", "f32", "ieee", (64, 128), (128, 64), 4, "v_wmma_f32_16x16x128_fp8_fp8", (2, 2), 16),
    ("gfx1250", "f8e5m2", "f32", "ieee", (64, 64), (64, 64), 4, "v_wmma_f32_16x16x64_bf8_bf8", (2, 2), 16),
    ("gfx1250", "f8e4m3", "f32", "ieee", (64, 32), (32, 64), 4, "v_wmma_f32_16x16x32_f16", (2, 2), 16),
    ("gfx1250", "i8", "i32", "ieee", (32, 64), (64, 32), 4, "v_wmma_i32_16x16x64_iu8", (2, 2), 16),
    ("gfx1250", "f32", "f32", "ieee", (32, 16), (16, 32), 4, "v_wmma_f32_16x16x4_f32", (2, 2), 4),
    ("gfx1250", "f16", "f32", "ieee", (4, 32, 32), (4, 32, 16), 8, "v_wmma_f32_16x16x32_f16", (4, 2, 1), 8),
]


@pytest.mark.parametrize("arch, a, acc, prec, a_shape, b_shape, warps, mnemonic, wpc, kw", PLANS,
                         ids=[f"{p[0]}-{p[1]}-{'x'.join(map(str, p[4] + p[5][-1:]))}" for p in PLANS])
def test_plan_replays_to_the_product(arch, a, acc, prec, a_shape, b_shape, warps, mnemonic, wpc, kw) -> None:
    plan = choose(arch, a, acc, prec, a_shape, b_shape, warps)
    assert plan is not None
    assert (plan.instr.mnemonic, plan.parent.warps_per_cta, plan.k_width) == (mnemonic, wpc, kw)
    n_calls = replay(plan, warps)
    # (M/m)(N/n)(K/k) per wave, with the wave's share of M and N (and of the batch)
    # (warps beyond the tile hold copies: a wave's share is at least one instruction tile)
    shape, ins = plan.c_shape, plan.instr
    tiles_m = max(1, shape[-2] // wpc[-2] // ins.m)
    tiles_n = max(1, shape[-1] // wpc[-1] // ins.n)
    batch = max(1, shape[0] // wpc[0]) if len(shape) == 3 else 1
    assert n_calls == batch * tiles_m * tiles_n * (a_shape[-1] // ins.k)


@pytest.mark.parametrize("arch, version", [("gfx942", 3), ("gfx950", 4)])
def test_mfma_accumulator_is_the_versioned_transposed_layout(arch: str, version: int) -> None:
    plan = choose(arch, "f16", "f32", "ieee", (128, 32), (32, 128), 4)
    m = plan.instr.m
    assert plan.accumulator() == mfma_layout((128, 128), version, (m, m), True, (2, 2))


def test_wmma_accumulator_is_version_3_transposed() -> None:
    plan = choose("gfx1250", "bf16", "f32", "ieee", (64, 32), (32, 64), 4)
    assert plan.accumulator() == wmma_layout((64, 64), 3, True, (2, 2), (16, 16, 32))


def test_warps_per_cta_follows_triton() -> None:
    assert warps_per_cta((64, 64), 4, 32, 32) == (2, 2)
    assert warps_per_cta((128, 128), 8, 32, 32) == (2, 4)
    assert warps_per_cta((256, 32), 4, 32, 32) == (4, 1)
    assert warps_per_cta((32, 256), 4, 32, 32) == (1, 4)
    assert warps_per_cta((32, 32), 4, 32, 32) == (4, 1)  # N overshot: swapped, as Triton does
    assert warps_per_cta((4, 64, 64), 8, 32, 32) == (4, 1, 2)
    assert warps_per_cta((16, 64, 64), 4, 32, 32) == (4, 1, 1)


def test_k_width_widens_to_one_b128_read_when_k_allows() -> None:
    f16 = choose("gfx942", "f16", "f32", "ieee", (64, 32), (32, 64), 4).instr  # 32x32x8, k_base 4
    assert choose_k_width(f16, 16, 32, 64) == 8
    assert choose_k_width(f16, 16, 8, 64) == 4
    wmma = choose("gfx1250", "f16", "f32", "ieee", (64, 32), (32, 64), 4).instr  # 16 halves per lane
    assert choose_k_width(wmma, 16, 32, 32) == 8


@pytest.mark.parametrize("arch, a, acc, prec, a_shape, b_shape", [
    ("gfx942", "f64", "f64", "ieee", (64, 16), (16, 64)),         # no f64 entries in the table
    ("gfx942", "u8", "i32", "ieee", (64, 32), (32, 64)),          # MFMA i8 is signed only
    ("gfx942", "f16", "f16", "ieee", (64, 32), (32, 64)),         # fp16 accumulator
    ("gfx942", "i8", "i32", "ieee", (16, 16), (16, 16)),          # K below the i8 instructions' 32
    ("gfx1250", "f16", "f32", "ieee", (64, 16), (16, 64)),        # K below 32
])
def test_fma_fallback(arch, a, acc, prec, a_shape, b_shape) -> None:
    assert choose(arch, a, acc, prec, a_shape, b_shape, 4) is None


def test_intrinsic_signature_types() -> None:
    plan = choose("gfx942", "bf16", "f32", "ieee", (64, 32), (32, 64), 4)
    ret, types, args = intrinsic_signature(plan.instr)
    assert str(ret) == "<16 x float>" and [str(t) for t in types[:3]] == ["<4 x i16>", "<4 x i16>", "<16 x float>"]
    assert args[:3] == ["a", "b", "c"] and [str(a) for a in args[3:]] == ["i32 0"] * 3
    plan = choose("gfx1250", "f16", "f32", "ieee", (64, 32), (32, 64), 4)
    ret, types, args = intrinsic_signature(plan.instr)
    assert str(ret) == "<8 x float>" and str(types[1]) == "<16 x half>" and args[1] == "a"


# ----------------------------------------------------------------------------- LDS staging
def _layout_target(arch: str) -> LayoutTarget:
    t = TARGETS[arch]
    return LayoutTarget(t.wave_size, t.lds_banks, t.lds_bank_bytes, 16)


@pytest.mark.parametrize("p", PLANS, ids=[f"{p[0]}-{p[1]}-{'x'.join(map(str, p[4] + p[5][-1:]))}" for p in PLANS])
def test_operand_reads_are_whole_vectors_and_conflict_free(p) -> None:
    arch, a, acc, prec, a_shape, b_shape, warps = p[:7]
    plan = choose(arch, a, acc, prec, a_shape, b_shape, warps)
    target = _layout_target(arch)
    for i in (0, 1):
        op_layout, shared = plan.operand(i), plan.shared(i, target.num_banks)
        m = offset_map(op_layout, shared)
        assert m.vector(plan.k_width) == plan.k_width
        if len(a_shape) == 2 and not plan.widen:  # widened fp8 reads 4 bytes, off the swizzle's design
            cost = lds_bank_conflicts(op_layout, shared, elem_bits=plan.elem_bits, vec=plan.k_width, target=target)
            assert cost.wavefronts == cost.ideal, (i, cost)


def test_offsets_split_into_a_lane_xor_and_an_added_constant() -> None:
    """The emitter computes (lane part XOR the register's low part) + its high part: the
    same offset as the layout, for every register, lane and wave."""
    plan = choose("gfx950", "f16", "f32", "ieee", (128, 64), (64, 128), 4)
    src = blocked((64, 128), (1, 8), (8, 8), (4, 1), (1, 0))  # B as a global load gives it
    for lay, shared in ((plan.operand(0), plan.shared(0, 64)), (src, plan.shared(1, 64))):
        m = offset_map(lay, shared)
        inv = shared.sublayout(["offset"], shared.out_dims).invert()
        for lane, warp in product(range(64), range(4)):
            t = m.layout.apply({"lane": lane, "warp": warp})["offset"]
            assert t & ~m.thread_mask == 0
            for r in range(lay.in_dim_size("register")):
                lo, hi = m.split(r)
                want = inv.apply(dict(zip(lay.out_dims, at(lay, register=r, lane=lane, warp=warp))))["offset"]
                assert (t ^ lo) + hi == want


def test_store_vector_follows_the_source_layout() -> None:
    plan = choose("gfx942", "f16", "f32", "ieee", (64, 32), (32, 64), 4)
    a_src = blocked((64, 32), (1, 8), (16, 4), (4, 1), (1, 0))   # 8 K-consecutive halves per lane
    b_src = blocked((32, 64), (1, 8), (4, 16), (4, 1), (1, 0))   # N-consecutive: B^T is K-contiguous
    assert offset_map(a_src, plan.shared(0, 32)).vector(8) == 8
    assert offset_map(b_src, plan.shared(1, 32)).vector(8) == 1


# ----------------------------------------------------------------------------- generated code
@tlxc.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
    c = tl.dot(a, b, input_precision=PREC)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c)


@tlxc.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ob = tl.arange(0, B)[:, None, None]
    om = tl.arange(0, M)[None, :, None]
    on = tl.arange(0, N)[None, None, :]
    a = tl.load(a_ptr + ob * M * K + om * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + ob * K * N + tl.arange(0, K)[None, :, None] * N + on)
    tl.store(c_ptr + ob * M * N + om * N + on, tl.dot(a, b))


def _count(asm: str, prefix: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in re.findall(rf"^\s+({prefix}\w*)", asm, re.M):
        out[name] = out.get(name, 0) + 1
    return out


def _compile(kernel, sig: str, arch: str, num_warps: int = 4, **constants):
    k = kernel.compile(signature=sig, constants=constants, arch=arch, num_warps=num_warps)
    return k, k.asm["amdgcn"]


DOTS = [
    # arch, a dtype, c dtype, M, N, K, precision, {instruction: count per wave}
    ("gfx942", "fp16", "fp32", 64, 64, 32, "ieee", {"v_mfma_f32_32x32x8_f16": 4}),
    ("gfx942", "bf16", "fp32", 64, 64, 32, "ieee", {"v_mfma_f32_32x32x8_bf16": 4}),
    ("gfx942", "fp16", "fp32", 32, 64, 32, "ieee", {"v_mfma_f32_32x32x8_f16": 8}),  # warps (4, 1): copies
    ("gfx942", "fp8e4b8", "fp32", 64, 64, 32, "ieee", {"v_mfma_f32_32x32x16_fp8_fp8": 2}),
    ("gfx942", "i8", "i32", 64, 64, 64, "ieee", {"v_mfma_i32_32x32x16_i8": 4}),
    ("gfx942", "fp32", "fp32", 64, 64, 32, "tf32", {"v_mfma_f32_32x32x4_xf32": 8}),
    ("gfx950", "fp16", "fp32", 64, 64, 32, "ieee", {"v_mfma_f32_32x32x16_f16": 2}),
    ("gfx950", "bf16", "fp32", 64, 64, 32, "ieee", {"v_mfma_f32_32x32x16_bf16": 2}),
    ("gfx950", "fp8e4nv", "fp32", 64, 64, 32, "ieee", {"v_mfma_f32_32x32x16_fp8_fp8": 2}),
    ("gfx950", "fp8e5", "fp32", 64, 64, 128, "ieee", {"v_mfma_f32_32x32x64_f8f6f4": 2}),
    ("gfx950", "i8", "i32", 64, 64, 64, "ieee", {"v_mfma_i32_32x32x32_i8": 2}),
    ("gfx950", "fp32", "fp32", 64, 64, 32, "tf32", {"v_mfma_f32_32x32x2_f32": 16}),
    ("gfx1250", "fp16", "fp32", 64, 64, 32, "ieee", {"v_wmma_f32_16x16x32_f16": 4}),
    ("gfx1250", "bf16", "fp32", 64, 64, 32, "ieee", {"v_wmma_f32_16x16x32_bf16": 4}),
    ("gfx1250", "fp8e4nv", "fp32", 64, 64, 128, "ieee", {"v_wmma_f32_16x16x128_fp8_fp8": 4}),
    ("gfx1250", "fp8e5", "fp32", 64, 64, 64, "ieee", {"v_wmma_f32_16x16x64_bf8_bf8": 4}),
    ("gfx1250", "i8", "i32", 64, 64, 64, "ieee", {"v_wmma_i32_16x16x64_iu8": 4}),
    ("gfx1250", "fp32", "fp32", 64, 64, 32, "ieee", {"v_wmma_f32_16x16x4_f32": 32}),
]


@pytest.mark.parametrize("arch, a, c, M, N, K, prec, want", DOTS,
                         ids=[f"{d[0]}-{d[1]}-{d[3]}x{d[4]}x{d[5]}-{d[6]}" for d in DOTS])
def test_dot_instructions(arch, a, c, M, N, K, prec, want) -> None:
    k, asm = _compile(dot_kernel, f"*{a},*{a},*{c}", arch, M=M, N=N, K=K, PREC=prec)
    prefix = "v_wmma" if arch == "gfx1250" else "v_mfma"
    assert _count(asm, prefix) == want
    reads = _count(asm, "ds_load_b" if arch == "gfx1250" else "ds_read_b")
    assert any(name.endswith(("b64", "b128")) for name in reads), reads
    assert k.metadata["scratch"] == 0 and k.metadata["vgpr_spills"] == 0


def test_batched_dot() -> None:
    for arch, want in (("gfx942", {"v_mfma_f32_32x32x8_f16": 4}), ("gfx950", {"v_mfma_f32_32x32x16_f16": 2}),
                       ("gfx1250", {"v_wmma_f32_16x16x32_f16": 2})):
        k, asm = _compile(batched_dot_kernel, "*fp16,*fp16,*fp32", arch, B=2, M=32, N=32, K=32)
        assert _count(asm, "v_wmma" if arch == "gfx1250" else "v_mfma") == want, arch
        assert k.metadata["scratch"] == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_fma_fallback_compiles(arch: str) -> None:
    """fp64 (and fp16 tiles of K=16 on gfx1250, whose WMMA needs 32) run the FMA loop."""
    k, asm = _compile(dot_kernel, "*fp64,*fp64,*fp64", arch, M=16, N=16, K=16, PREC="ieee")
    assert "v_fma_f64" in asm or "v_fmac_f64" in asm
    assert not _count(asm, "v_mfma") and not _count(asm, "v_wmma")
    assert k.metadata["scratch"] == 0


def test_fp8_with_short_k_widens_to_fp16_on_gfx1250() -> None:
    k, asm = _compile(dot_kernel, "*fp8e4nv,*fp8e4nv,*fp32", "gfx1250", M=64, N=64, K=32, PREC="ieee")
    assert _count(asm, "v_wmma") == {"v_wmma_f32_16x16x32_f16": 4}


@pytest.mark.parametrize("arch", ARCHS)
def test_dot_isa_golden(arch: str) -> None:
    # GFX942: s_barrier
    # GFX942: ds_read_b128
    # GFX942: v_mfma_f32_32x32x8_f16
    # GFX942: v_mfma_f32_32x32x8_f16
    # GFX950: s_barrier
    # GFX950: ds_read_b128
    # GFX950: v_mfma_f32_32x32x16_f16
    # GFX950: v_mfma_f32_32x32x16_f16
    # GFX1250: s_barrier_wait
    # GFX1250: ds_load_b128
    # GFX1250: v_wmma_f32_16x16x32_f16
    # GFX1250: v_wmma_f32_16x16x32_f16
    # CHECK: .private_segment_fixed_size: 0
    # CHECK: .vgpr_spill_count: 0
    _, asm = _compile(dot_kernel, "*fp16,*fp16,*fp32", arch, M=64, N=64, K=16 if arch == "gfx942" else 32,
                      PREC="ieee")
    filecheck(asm, test_dot_isa_golden, arch)


# ----------------------------------------------------------------------------- the example GEMM
sys.path.insert(0, str(REPO / "examples"))
FP8 = {"gfx942": "fp8e4b8", "gfx950": "fp8e4nv", "gfx1250": "fp8e4nv"}
# the instruction each chip runs the example with, for (dtype, BLOCK_K = 32)
EXAMPLE_MMA = {
    ("gfx942", "fp16"): "v_mfma_f32_32x32x8_f16", ("gfx942", "bf16"): "v_mfma_f32_32x32x8_bf16",
    ("gfx942", "fp8"): "v_mfma_f32_32x32x16_fp8_fp8",
    ("gfx950", "fp16"): "v_mfma_f32_32x32x16_f16", ("gfx950", "bf16"): "v_mfma_f32_32x32x16_bf16",
    ("gfx950", "fp8"): "v_mfma_f32_32x32x16_fp8_fp8",
    ("gfx1250", "fp16"): "v_wmma_f32_16x16x32_f16", ("gfx1250", "bf16"): "v_wmma_f32_16x16x32_bf16",
    ("gfx1250", "fp8"): "v_wmma_f32_16x16x32_f16",  # its fp8 WMMA needs K = 64: widened to fp16
}


@pytest.mark.parametrize("block", [64, 128])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp8"])
@pytest.mark.parametrize("arch", ARCHS)
def test_matmul_example_zero_scratch(arch: str, dtype: str, block: int) -> None:
    import matmul as example  # examples/matmul.py

    a = FP8[arch] if dtype == "fp8" else dtype
    c = "fp16" if dtype == "fp8" else dtype
    k = example.matmul_kernel.compile(signature=f"*{a},*{a},*{c}," + ",".join(["i32"] * 9),
                                      constants={"BLOCK_M": block, "BLOCK_N": block, "BLOCK_K": 32,
                                                 "GROUP_SIZE_M": 8}, arch=arch, num_warps=4)
    asm = k.asm["amdgcn"]
    md = k.metadata
    assert md["scratch"] == 0 and md["vgpr_spills"] == 0 and md["sgpr_spills"] == 0, md
    mma = EXAMPLE_MMA[(arch, dtype)]
    m = n = 16 if arch == "gfx1250" else 32
    kk = int(re.search(r"x(\d+)_", mma[len("v_mfma_f32_"):]).group(1))
    per_wave = (block // 2 // m) * (block // 2 // n) * (32 // kk)  # 2 x 2 waves
    assert _count(asm, mma[:6]) == {mma: per_wave}


# ----------------------------------------------------------------------------- errors
@tlxc.jit
def fp8_dot(a_ptr, b_ptr, c_ptr):
    offs = tl.arange(0, 32)
    a = tl.load(a_ptr + offs[:, None] * 32 + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * 32 + offs[None, :])
    c = tl.dot(a, b)  # the dot
    tl.store(c_ptr + offs[:, None] * 32 + offs[None, :], c)


@pytest.mark.parametrize("arch, dtype, has", [
    ("gfx942", "fp8e4nv", "float8e4b8, float8e5b16"),
    ("gfx942", "fp8e5", "float8e4b8, float8e5b16"),
    ("gfx950", "fp8e4b8", "float8e4nv, float8e5"),
    ("gfx1250", "fp8e5b16", "float8e4nv, float8e5"),
])
def test_fp8_flavour_the_chip_lacks(arch: str, dtype: str, has: str) -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        fp8_dot.compile(signature=f"*{dtype},*{dtype},*fp32", arch=arch).asm["amdgcn"]
    err = info.value
    assert err.code == "TLXC-TYPE-001"
    assert has in err.message and arch in err.message
    assert "c = tl.dot(a, b)  # the dot" in str(err) and "^" in str(err)
    lines = Path(__file__).read_text().splitlines()
    assert lines[err.line - 1].strip() == "c = tl.dot(a, b)  # the dot"
