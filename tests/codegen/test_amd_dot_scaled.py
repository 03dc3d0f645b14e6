"""``tl.dot_scaled`` / ``tlx.dot_scaled`` on AMDGPU (``tlxc/codegen/amdgpu/lower_dot_scaled.py``).

No AMD GPU here, so:

* ``replay``: every scaled MFMA / WMMA of a native plan is emulated in numpy with the
  instruction's own operand and scale semantics (products of decoded elements times
  2**(scale - 127), summed; the lane / byte placement of ``lower_dot_scaled``'s
  docstring), fed with exactly the registers and per-lane scale bytes that the plan
  gives each lane, and the result must equal the interpreter's definition of dot_scaled
  on random inputs;
* the generated code: LLVM compiles it for gfx950 / gfx1250 (and the decomposition for
  gfx942), the assembly holds the expected instruction the expected number of times, and
  there is no scratch;
* tiles_per_warp changes the gfx1250 layout and is refused when its period does not fit;
  shapes no instruction takes are refused at the user's line.
"""

from __future__ import annotations

import re
import sys
from itertools import product
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc.codegen.amdgpu.dot_plan import accumulator_tiles, calls
from tlxc.codegen.amdgpu.isa import TARGETS
from tlxc.codegen.amdgpu.lower_dot_scaled import SCALE_BLOCK, choose_scaled, scale_view, unpacked
from tlxc.interpreter.rules.amd import _decode, e8m0
from tlxc.ir.layout.amd import AmdMfma, AmdWmma
from tlxc.ir.layout.common import blocked

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_amd_kernels as K  # noqa: E402

STORAGE = {"e2m1": "u8", "e4m3": "fp8e4nv", "e5m2": "fp8e5", "bf16": "bf16", "fp16": "fp16"}


class Table:
    """Every element of a distributed layout by (register, lane, warp)."""

    def __init__(self, layout) -> None:
        self.rb, self.lb = layout.in_dim_bits("register"), layout.in_dim_bits("lane")
        n = layout.in_dim_size("register") * layout.in_dim_size("lane") * layout.in_dim_size("warp")
        self.coords = [tuple(layout.decode_out(layout.apply_flat(x)).values()) for x in range(n)]

    def __call__(self, register: int = 0, lane: int = 0, warp: int = 0) -> tuple[int, ...]:
        return self.coords[register | lane << self.rb | warp << (self.rb + self.lb)]


# ----------------------------------------------------------------------------- the instruction model
def hw_slot(kind: str, m: int, kb_bytes: int, pack: int, i: int, k: int) -> tuple[int, int, int]:
    """(lane, byte of the lane's operand, nibble) holding row ``i``, value ``k`` of one
    instruction's source. MFMA: lane group ``k // k_base`` holds its k_base values
    contiguously; WMMA: the two lane halves take alternate 16-byte pieces of K."""
    kbyte, nib = divmod(k, pack)
    if kind == "mfma":
        return i + m * (kbyte // kb_bytes), kbyte % kb_bytes, nib
    half = (kbyte // 16) % 2
    return i + 16 * half, (kbyte // 32) * 16 + kbyte % 16, nib


def hw_scale(kind: str, m: int, regs: dict[int, int], i: int, block: int) -> int:
    """The e8m0 byte the instruction applies to row ``i``, K block ``block``, from the
    per-lane scale VGPRs ``regs``: MFMA byte 0 of lane ``i + m * block``; WMMA byte
    ``block`` of lane ``i`` (lanes ``i`` and ``i + 16`` must agree)."""
    if kind == "mfma":
        return regs[i + m * block] & 0xFF
    assert regs[i] == regs[i + 16]
    return (regs[i] >> (8 * block)) & 0xFF


def _random_operand(rng: np.random.Generator, fmt: str, shape: tuple[int, ...]) -> np.ndarray:
    if fmt == "e2m1":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    bits = rng.integers(0, 256, shape, dtype=np.uint8)
    if fmt == "e4m3":
        bits[(bits & 0x7F) == 0x7F] = 0x38  # no NaN
    else:
        bits[(bits & 0x7C) == 0x7C] = 0x3C  # no inf / NaN
    return bits


def replay(arch: str, fa: str, fb: str, M: int, N: int, Kv: int, num_warps: int, seed: int = 0,
           scales: tuple[bool, bool] = (True, True), tpw: tuple[int, int] | None = None) -> int:
    """Emulate the native plan of ``A [M, Kv] @ B [Kv, N]`` lane by lane and compare
    with the interpreter's dot_scaled; returns the instructions issued per wave."""
    pack = 2 if fa == "e2m1" else 1
    a_shape, b_shape = (M, Kv // pack), (Kv // pack, N)
    plan = choose_scaled(arch, fa, fb, a_shape, b_shape, True, True, SCALE_BLOCK, num_warps, tpw)
    assert plan is not None and plan.native, plan
    dot, ins = plan.dot, plan.instr
    wave = TARGETS[arch].wave_size
    rng = np.random.default_rng(seed)
    a, b = _random_operand(rng, fa, a_shape), _random_operand(rng, fb, b_shape)
    sa = rng.integers(118, 136, (M, Kv // SCALE_BLOCK), dtype=np.uint8)
    sb = rng.integers(118, 136, (N, Kv // SCALE_BLOCK), dtype=np.uint8)
    acc = rng.standard_normal((M, N)).astype(np.float32)
    # the interpreter's definition
    x, y = _decode(a, fa, -1).astype(np.float64), _decode(b, fb, -2).astype(np.float64)
    if scales[0]:
        x = x * np.repeat(e8m0(sa), SCALE_BLOCK, axis=1)
    if scales[1]:
        y = y * np.repeat(e8m0(sb), SCALE_BLOCK, axis=1).T
    ref = x @ y + acc
    dec = [_decode(a, fa, -1), _decode(b, fb, -2)]  # values [M, Kv], [Kv, N]

    ops = [Table(dot.operand(i)) for i in (0, 1)]
    shift = (SCALE_BLOCK // pack).bit_length() - 1
    wmma = ins.kind == "wmma"
    views = [Table(scale_view(dot.operand(i), i, shift, wmma)) for i in (0, 1)]
    raw = [sa, sb]
    c_lay = Table(dot.accumulator())
    p = dot.parent
    if isinstance(p, AmdWmma):
        hw = Table(AmdWmma(p.version, False, (1, 1), p.instr_shape).accumulator((ins.m, ins.n)))
    else:
        hw = Table(AmdMfma(p.version, (ins.m, ins.n, dot.instr.k), False, (1, 1)).accumulator((ins.m, ins.n)))
    tiles = accumulator_tiles(dot)
    kb_bytes = dot.instr.k_base
    src_of = (1, 0) if dot.transposed else (0, 1)  # which operand is source 0 / source 1
    issued = calls(dot)
    results: dict[tuple[int, int, int], float] = {}
    for w in range(num_warps):
        state: dict[tuple[int, int], float] = {}
        for call in issued:
            pieces = (call.src0, call.src1)
            # what each lane feeds: its operand values (by byte, nibble) and its scale VGPR
            value = [{}, {}]
            sregs: list[dict[int, int]] = [{}, {}]
            for s, lane in product((0, 1), range(wave)):
                opi = src_of[s]
                for e_, r in enumerate(pieces[s]):
                    coord = ops[opi](register=r, lane=lane, warp=w)
                    for nib in range(pack):
                        row, kk = (coord[0], coord[1]) if opi == 0 else (coord[1], coord[0])
                        value[s][(lane, e_, nib)] = dec[opi][row, kk * pack + nib] if opi == 0 \
                            else dec[opi][kk * pack + nib, row]
                if scales[opi]:
                    row, blk = views[opi](register=pieces[s][0], lane=lane, warp=w)
                    word = raw[opi][row, blk] if not wmma else int.from_bytes(
                        bytes(int(raw[opi][row, blk + j]) for j in range(4)), "little")
                else:
                    word = 0x7F7F7F7F if wmma else 127
                sregs[s][lane] = int(word)
            # the instruction
            for lane, (q, r) in product(range(wave), enumerate(tiles[call.acc])):
                i, j = hw(lane=lane, register=q)
                total = 0.0
                for k in range(ins.k):
                    l0, b0, n0 = hw_slot(ins.kind, ins.m, kb_bytes, pack, i, k)
                    l1, b1, n1 = hw_slot(ins.kind, ins.n, kb_bytes, pack, j, k)
                    s0 = hw_scale(ins.kind, ins.m, sregs[0], i, k // SCALE_BLOCK)
                    s1 = hw_scale(ins.kind, ins.n, sregs[1], j, k // SCALE_BLOCK)
                    total += float(value[0][(l0, b0, n0)]) * float(value[1][(l1, b1, n1)]) \
                        * 2.0 ** (s0 - 127) * 2.0 ** (s1 - 127)
                key = (lane, r)
                if key not in state:
                    state[key] = float(acc[c_lay(register=r, lane=lane, warp=w)])
                state[key] += total
        for (lane, r), v in state.items():
            results[(w, lane, r)] = v
    regs = dot.accumulator().in_dim_size("register")
    assert len(results) == num_warps * wave * regs
    for (w, lane, r), v in results.items():
        elem = c_lay(register=r, lane=lane, warp=w)
        assert v == pytest.approx(ref[elem], rel=1e-12, abs=1e-12), (w, lane, r, elem)
    return len(issued)


REPLAYS = [
    # arch, A format, B format, M, N, K, warps, instructions per wave
    ("gfx950", "e4m3", "e4m3", 32, 32, 64, 1, 1),
    ("gfx950", "e5m2", "e4m3", 32, 32, 128, 1, 2),
    ("gfx950", "e4m3", "e5m2", 16, 16, 128, 1, 1),
    ("gfx950", "e2m1", "e2m1", 32, 32, 64, 1, 1),
    ("gfx950", "e2m1", "e2m1", 16, 32, 256, 2, 2),
    ("gfx1250", "e4m3", "e4m3", 16, 16, 128, 1, 1),
    ("gfx1250", "e5m2", "e4m3", 32, 16, 256, 2, 2),
    ("gfx1250", "e2m1", "e2m1", 16, 16, 128, 1, 1),
    ("gfx1250", "e2m1", "e2m1", 16, 32, 256, 1, 4),
]


@pytest.mark.parametrize("arch, fa, fb, M, N, Kv, warps, count", REPLAYS)
def test_replay_matches_the_interpreter(arch: str, fa: str, fb: str, M: int, N: int, Kv: int, warps: int,
                                        count: int) -> None:
    assert replay(arch, fa, fb, M, N, Kv, warps) == count


@pytest.mark.parametrize("scales", [(False, True), (True, False), (False, False)])
def test_replay_without_scales(scales: tuple[bool, bool]) -> None:
    replay("gfx950", "e4m3", "e4m3", 16, 16, 128, 1, seed=1, scales=scales)
    replay("gfx1250", "e2m1", "e2m1", 16, 16, 128, 1, seed=2, scales=scales)


def test_replay_with_tiles_per_warp() -> None:
    assert replay("gfx1250", "e4m3", "e4m3", 32, 32, 128, 1, seed=3, tpw=(2, 2)) == 4


def test_mfma_lane_holds_one_scale_block() -> None:
    """On MFMA each lane's operand piece is one 32-value K block (so one scale byte)."""
    plan = choose_scaled("gfx950", "e4m3", "e4m3", (32, 128), (128, 32), True, True, 32, 1, None)
    t = Table(plan.dot.operand(0))
    for call, lane in product(calls(plan.dot), range(64)):
        ks = {t(register=r, lane=lane)[1] // 32 for r in call.src1}
        assert len(ks) == 1


# ----------------------------------------------------------------------------- layouts
def test_unpacked_layout_doubles_the_packed_axis() -> None:
    src = blocked((32, 16), [1, 4], [16, 4], [1, 1], [1, 0])
    out = unpacked(src, -1)
    ts, to = Table(src), Table(out)
    for r, lane in product(range(src.in_dim_size("register")), range(64)):
        m, k = ts(register=r, lane=lane)
        assert to(register=2 * r, lane=lane) == (m, 2 * k)
        assert to(register=2 * r + 1, lane=lane) == (m, 2 * k + 1)


def test_decomposition_choices() -> None:
    cases = {
        ("gfx942", "e4m3", "e4m3"): ("v_mfma_f32_32x32x8_bf16", "no scaled MFMA"),
        ("gfx950", "bf16", "e4m3"): ("v_mfma_f32_32x32x16_bf16", "storage class"),
        ("gfx950", "e2m1", "e4m3"): ("v_mfma_f32_32x32x16_bf16", "storage class"),
        ("gfx1250", "fp16", "fp16"): ("v_wmma_f32_16x16x4_f32", "storage class"),
    }
    for (arch, fa, fb), (mnemonic, why) in cases.items():
        a = (64, 32) if fa == "e2m1" else (64, 64)
        plan = choose_scaled(arch, fa, fb, a, (64, 64), True, True, 32, 4, None)
        assert not plan.native and plan.mnemonic == mnemonic and why in plan.why, (arch, fa, fb, plan)
    plan = choose_scaled("gfx950", "e4m3", "e4m3", (64, 64), (64, 64), True, True, 16, 4, None)
    assert not plan.native and "per 16" in plan.why


# ----------------------------------------------------------------------------- code
def compile_scaled(arch: str, fa: str, fb: str, M: int, N: int, Kv: int, *, sa: bool = True, sb: bool = True,
                   tpw=None, warps: int = 4, a_pack: bool = True):
    pa, pb = (2 if fa == "e2m1" else 1), (2 if fb == "e2m1" else 1)
    am, ak = (M, Kv // pa) if a_pack else (M // pa, Kv)
    consts = dict(M=M, N=N, AM=am, AK=ak, BK=Kv // pb, BN=N, SK=Kv // 32, FA=fa, FB=fb, A_SCALE=sa, B_SCALE=sb,
                  ACC=True, TLX=tpw is not None, A_PACK=a_pack, B_PACK=True, TPW=tpw)
    sig = f"*{STORAGE[fa]},*u8,*{STORAGE[fb]},*u8,*fp32"
    return K.scaled.compile(sig, constants=consts, arch=arch, num_warps=warps)


def _mma(asm: str) -> list[str]:
    return re.findall(r"\bv_(?:mfma|wmma)\w*", asm)


COMPILES = [
    # arch, A, B, M, N, K, scales, mnemonic, count (per wave, 4 waves)
    ("gfx950", "e4m3", "e4m3", 64, 64, 128, True, "v_mfma_scale_f32_32x32x64_f8f6f4", 2),
    ("gfx950", "e5m2", "e4m3", 16, 16, 128, False, "v_mfma_scale_f32_16x16x128_f8f6f4", 1),
    ("gfx950", "e2m1", "e2m1", 64, 64, 128, True, "v_mfma_scale_f32_32x32x64_f8f6f4", 2),
    ("gfx950", "e2m1", "e2m1", 16, 16, 256, True, "v_mfma_scale_f32_16x16x128_f8f6f4", 2),
    ("gfx1250", "e4m3", "e5m2", 64, 64, 128, True, "v_wmma_scale_f32_16x16x128_f8f6f4", 4),
    ("gfx1250", "e2m1", "e2m1", 32, 32, 256, True, "v_wmma_scale_f32_16x16x128_f8f6f4", 2),
    ("gfx942", "e4m3", "e5m2", 64, 64, 64, True, "v_mfma_f32_32x32x8_bf16", 8),
    ("gfx942", "e2m1", "e4m3", 32, 32, 64, True, "v_mfma_f32_32x32x8_bf16", 8),
    ("gfx950", "bf16", "e2m1", 32, 32, 64, True, "v_mfma_f32_32x32x16_bf16", 4),
    ("gfx1250", "fp16", "fp16", 32, 32, 32, False, "v_wmma_f32_16x16x4_f32", 8),
]


@pytest.mark.parametrize("arch, fa, fb, M, N, Kv, scales, mnemonic, count", COMPILES)
def test_compiles(arch: str, fa: str, fb: str, M: int, N: int, Kv: int, scales: bool, mnemonic: str,
                  count: int) -> None:
    bf = fa in ("bf16", "fp16")
    k = compile_scaled(arch, fa, fb, M, N, Kv, sa=scales and not bf, sb=scales and fb not in ("bf16", "fp16"))
    mma = _mma(k.asm["amdgcn"])
    assert set(mma) == {mnemonic} and len(mma) == count, mma
    assert k.metadata["scratch"] == 0 and k.metadata["vgpr_spills"] == 0


def test_e2m1_packed_along_m_compiles() -> None:
    mma = _mma(compile_scaled("gfx950", "e2m1", "e4m3", 32, 32, 64, a_pack=False).asm["amdgcn"])
    assert mma and set(mma) == {"v_mfma_f32_32x32x16_bf16"}


def test_tiles_per_warp_changes_the_wmma_layout() -> None:
    a, b = (64, 128), (128, 64)
    plain = choose_scaled("gfx1250", "e4m3", "e4m3", a, b, True, True, 32, 4, None)
    tiled = choose_scaled("gfx1250", "e4m3", "e4m3", a, b, True, True, 32, 4, (2, 2))
    assert plain.dot.accumulator() != tiled.dot.accumulator()
    assert tiled.dot.parent.tiles_per_warp == (2, 2)
    # MFMA ignores it (as Triton and the seed specify)
    m0 = choose_scaled("gfx950", "e4m3", "e4m3", a, b, True, True, 32, 4, None)
    m1 = choose_scaled("gfx950", "e4m3", "e4m3", a, b, True, True, 32, 4, (2, 2))
    assert m0.dot.accumulator() == m1.dot.accumulator()
    k0 = compile_scaled("gfx1250", "e4m3", "e4m3", 64, 64, 128)
    k1 = compile_scaled("gfx1250", "e4m3", "e4m3", 64, 64, 128, tpw=[2, 2])
    assert len(_mma(k0.asm["amdgcn"])) == len(_mma(k1.asm["amdgcn"])) == 4
    assert k1.metadata["scratch"] == 0


@tlxc.jit
def tiled_too_far(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 32)
    rk = tl.arange(0, 128)
    a = tl.load(a_ptr + r[:, None] * 128 + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * 32 + r[None, :])
    c = tlx.dot_scaled(a, None, "e4m3", b, None, "e4m3", tiles_per_warp=[2, 1])  # the tiled dot
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], c)


def test_tiles_per_warp_period_refused_at_the_user_line() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        tiled_too_far.compile(signature="*fp8e4nv,*fp8e4nv,*fp32", arch="gfx1250", num_warps=4).asm["amdgcn"]
    err = info.value
    assert err.code == "TLXC-DOT-001" and "period" in err.message
    assert Path(__file__).read_text().splitlines()[err.line - 1].strip().endswith("# the tiled dot")


@tlxc.jit
def tiny_scaled(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 8)
    rk = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * 8 + r[None, :])
    c = tl.dot_scaled(a, None, "e4m3", b, None, "e4m3")  # the small dot
    tl.store(c_ptr + r[:, None] * 8 + r[None, :], c)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_shape_no_instruction_takes_is_refused(arch: str) -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        tiny_scaled.compile(signature="*fp8e4nv,*fp8e4nv,*fp32", arch=arch, num_warps=1).asm["amdgcn"]
    err = info.value
    assert err.code == "TLXC-CODEGEN-001" and "tl.dot_scaled" in err.message and arch in err.message
    assert Path(__file__).read_text().splitlines()[err.line - 1].strip().endswith("# the small dot")


def test_interpreter_agrees_with_reference_decoder() -> None:
    """Sanity of the numpy helpers the replay uses (ml_dtypes' own fp4 decoding)."""
    bits = np.arange(256, dtype=np.uint8).reshape(1, 256)
    got = _decode(bits, "e2m1", -1)
    lo = (bits & 0xF).astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    assert np.array_equal(got[0, 0::2], lo[0])
