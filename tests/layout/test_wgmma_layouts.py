"""Hopper wgmma layouts: register fragments against the PTX ISA's formulas, shared-memory
descriptors against an independent model of the hardware's addressing, and the shape rules.

The descriptor values in ``GPU_CHECKED`` were also run on an H200: a kernel loaded the
buffers' bytes into shared memory, issued ``wgmma.mma_async`` with exactly these
descriptors (and the A register fragments of ``wgmma_operand_a``), and every accumulator
register matched ``A @ B`` placed by ``wgmma_accumulator``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_helpers import all_inputs, owners

from tlxc.ir.layout import (
    LayoutError,
    LinearLayout,
    blocked,
    check_wgmma_shape,
    choose_nvmma_swizzle,
    decode_descriptor,
    encode_descriptor,
    instruction_operands,
    legal_wgmma_shapes,
    nvmma_default,
    nvmma_shared,
    operand_major,
    smem_byte_offset,
    swizzled_shared,
    tma_swizzle_of,
    wgmma_accumulator,
    wgmma_accumulator_slots,
    wgmma_operand_a,
    wgmma_operand_a_slots,
    wgmma_smem_operand,
)

FAST = settings(max_examples=40, deadline=None)


def coords(layout: LinearLayout, **ins: int) -> tuple[int, int]:
    c = layout.apply(ins)
    return c["dim0"], c["dim1"]


# ---------------------------------------------------------------- accumulator
def ptx_d(warp: int, lane: int, i: int) -> tuple[int, int]:
    """PTX ISA, "WGMMA .m64nNk16 register fragment layout for accumulator matrix D"."""
    g, t = lane >> 2, lane % 4
    return 16 * (warp % 4) + g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)


def test_accumulator_m64n16_table() -> None:
    lay = wgmma_accumulator((64, 16), (4, 1), 16)
    assert lay.in_dims == ("register", "lane", "warp", "block")
    # lane 0 / lane 5 of warp 0, lane 31 of warp 3: d0..d7
    assert [coords(lay, register=i, lane=0) for i in range(8)] == [
        (0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    assert [coords(lay, register=i, lane=5) for i in range(8)] == [
        (1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]
    assert [coords(lay, register=i, lane=31, warp=3) for i in range(8)] == [
        (55, 6), (55, 7), (63, 6), (63, 7), (55, 14), (55, 15), (63, 14), (63, 15)]
    for x in all_inputs(lay):
        assert coords(lay, **x) == ptx_d(x["warp"], x["lane"], x["register"])
    assert lay.is_bijective()


@pytest.mark.parametrize("shape,warps,instr_n", [((128, 64), (4, 1), 64), ((256, 128), (8, 1), 128),
                                                  ((128, 256), (4, 2), 64), ((64, 32), (4, 1), 8)])
def test_accumulator_repeats_follow_the_documented_order(shape, warps, instr_n) -> None:
    lay = wgmma_accumulator(shape, warps, instr_n)
    wg_m, wn = warps[0] // 4, warps[1]
    half = instr_n // 2
    n_chunks = shape[1] // (instr_n * wn)
    for x in all_inputs(lay):
        w, r = x["warp"], x["register"]
        i, rest = r % half, r // half
        n_chunk, m_rep = rest % n_chunks, rest // n_chunks
        gm, gn = (w // 4) % wg_m, w // warps[0]
        row, col = ptx_d(w, x["lane"], i)
        want = (64 * (m_rep * wg_m + gm) + row, instr_n * (n_chunk * wn + gn) + col)
        assert coords(lay, **x) == want
    assert lay.is_bijective()


def test_accumulator_slots_and_operands() -> None:
    slots = wgmma_accumulator_slots((128, 64), (4, 1), 32)
    assert len(slots) == 64
    for r, s in enumerate(slots):
        assert (s.m_rep, s.rep, s.slot, s.part) == (r // 32, (r // 16) % 2, r % 16, 0)
    ops = instruction_operands(slots)
    assert sorted(ops) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert ops[(1, 1)] == tuple((48 + j,) for j in range(16))
    # f16 accumulators: d_{2j} (low half) and d_{2j+1} share .f16x2 register j
    ops16 = instruction_operands(wgmma_accumulator_slots((64, 16), (4, 1), 16, acc_bits=16))
    assert ops16 == {(0, 0): ((0, 1), (2, 3), (4, 5), (6, 7))}


@given(st.integers(0, 2), st.integers(0, 1), st.integers(0, 2), st.integers(3, 6), st.integers(0, 2))
@FAST
def test_accumulator_properties(log_wgm: int, log_wn: int, log_mrep: int, log_n: int, log_chunks: int) -> None:
    wg_m, wn, instr_n = 1 << log_wgm, 1 << log_wn, 1 << log_n
    shape = (64 * wg_m << log_mrep, instr_n * wn << log_chunks)
    lay = wgmma_accumulator(shape, (4 * wg_m, wn), instr_n)
    assert lay.is_bijective()  # every element exactly once
    # warpgroup split: each warpgroup owns whole 64-row slices, and its 4 warps 16 rows each
    for w in range(4 * wg_m * wn):
        rows = {coords(lay, register=r, lane=t, warp=w)[0] for r in (0, 2) for t in range(0, 32, 4)}
        base = 64 * ((w // 4) % wg_m) + 16 * (w % 4)
        assert rows == set(range(base, base + 16))
    slots = wgmma_accumulator_slots(shape, (4 * wg_m, wn), instr_n)
    ops = instruction_operands(slots)
    assert len(ops) == (1 << log_mrep) * (1 << log_chunks)
    assert all(len(v) == instr_n // 2 for v in ops.values())


# ---------------------------------------------------------------- A in registers
def ptx_a(warp: int, lane: int, e: int, p: int) -> tuple[int, int]:
    """PTX ISA, "WGMMA .m64nNk{8,16,32} register fragment layout for matrix A"
    (``p`` elements per 32-bit register: 1 tf32, 2 f16/bf16, 4 8-bit)."""
    g, t = lane >> 2, lane % 4
    return 16 * (warp % 4) + g + 8 * ((e // p) & 1), p * t + e % p + 4 * p * (e // (2 * p))


@pytest.mark.parametrize("bits", [16, 8, 32])
def test_operand_a_matches_ptx(bits: int) -> None:
    p = 32 // bits
    k = 8 * p
    lay = wgmma_operand_a((64, k), (4, 1), bits)
    for x in all_inputs(lay):
        assert coords(lay, **x) == ptx_a(x["warp"], x["lane"], x["register"], p)
    assert lay.is_bijective()


def test_operand_a_f16_table() -> None:
    lay = wgmma_operand_a((64, 16), (4, 1), 16)
    # a0..a7 of lane 6 (g=1, t=2), warp 2: {a0,a1} {a2,a3} {a4,a5} {a6,a7} as .f16x2
    assert [coords(lay, register=e, lane=6, warp=2) for e in range(8)] == [
        (33, 4), (33, 5), (41, 4), (41, 5), (33, 12), (33, 13), (41, 12), (41, 13)]
    ops = instruction_operands(wgmma_operand_a_slots((64, 16), (4, 1), 16))
    assert ops == {(0, 0): ((0, 1), (2, 3), (4, 5), (6, 7))}


def test_operand_a_repeats_and_broadcast_warps() -> None:
    lay = wgmma_operand_a((128, 64), (4, 2), 16)  # 2 M-repeats, 4 K-steps, 2 N-warpgroups
    assert lay.bases["warp"] == ((16, 0), (32, 0), (0, 0))
    for x in all_inputs(lay):
        r = x["register"]
        e, k_step, m_rep = r % 8, (r // 8) % 4, r // 32
        row, col = ptx_a(x["warp"], x["lane"], e, 2)
        assert coords(lay, **x) == (64 * m_rep + row, 16 * k_step + col)
    for holders in owners(lay).values():
        assert len(holders) == 2  # both N-warpgroups
    slots = wgmma_operand_a_slots((128, 64), (4, 2), 16)
    assert slots[8 * 5 + 3] == slots[43]
    assert (slots[43].m_rep, slots[43].rep, slots[43].slot, slots[43].part) == (1, 1, 1, 1)
    ops8 = instruction_operands(wgmma_operand_a_slots((64, 64), (4, 1), 8))
    assert ops8[(0, 1)] == ((16, 17, 18, 19), (20, 21, 22, 23), (24, 25, 26, 27), (28, 29, 30, 31))


def test_register_layout_errors() -> None:
    with pytest.raises(LayoutError, match="whole warpgroups"):
        wgmma_accumulator((64, 64), (2, 2), 64)
    with pytest.raises(LayoutError, match="multiple of 64"):
        wgmma_accumulator((64, 64), (8, 1), 64)
    with pytest.raises(LayoutError, match="instr_n"):
        wgmma_accumulator((64, 512), (4, 1), 512)
    with pytest.raises(LayoutError, match="not 4-bit ones"):
        wgmma_operand_a((64, 16), (4, 1), 4)


# ---------------------------------------------------------------- descriptors
def test_encode_descriptor_fields() -> None:
    # start 0x400 -> 0x40, LBO 16 -> 1, SBO 1024 -> 64, 128B swizzle -> mode 1 in bits 62-63
    assert encode_descriptor(0x400, 16, 1024, 128) == 0x40 | 1 << 16 | 64 << 32 | 1 << 62 == 0x4000004000010040
    assert encode_descriptor(0x1230, 8192, 1024, 64) == 0x123 | 512 << 16 | 64 << 32 | 2 << 62
    assert encode_descriptor(0x3FFF0, 2048, 256, 32) == 0x3FFF | 128 << 16 | 16 << 32 | 3 << 62
    assert encode_descriptor(0x80, 128, 512, 0) == 0x8 | 8 << 16 | 32 << 32
    assert encode_descriptor(0, 16, 16, 0, base_offset=5) == 1 << 16 | 1 << 32 | 5 << 49
    d = encode_descriptor(0x1230, 8192, 1024, 64)
    assert decode_descriptor(d) == {"start_address": 0x1230, "lbo": 8192, "sbo": 1024, "base_offset": 0,
                                    "swizzle": 64}
    with pytest.raises(LayoutError, match="multiple of 16"):
        encode_descriptor(0x408, 16, 1024, 128)
    with pytest.raises(LayoutError, match="256 KiB"):
        encode_descriptor(1 << 18, 16, 1024, 128)
    with pytest.raises(LayoutError, match="swizzle"):
        encode_descriptor(0, 16, 16, 16)


def canonical_offset(major: str, swizzle: int, elem_bits: int, lbo: int, sbo: int, mn: int, k: int) -> int:
    """Where one wgmma reads operand element (mn, k), before the swizzle, from the
    canonical layouts of the PTX ISA (as CUTLASS writes them, in 16-byte units of
    u = 128 // elem_bits elements, W = swizzle / 16)::

        K-major  swizzled ((8,m),(u,2)):((W*u,SBO),(1,u))      none ((8,m),(u,2)):((u,SBO),(1,LBO))
        MN-major swizzled ((u,W,m),(8,2)):((1,u,LBO),(W*u,SBO))  none ((u,m),(8,2)):((1,SBO),(u,LBO))
    """
    u = 128 // elem_bits
    w = max(1, swizzle // 16)
    eb = elem_bits // 8
    if major == "K":
        k_chunk, k_in = divmod(k, u)
        return (mn % 8) * w * 16 + (mn // 8) * sbo + k_in * eb + (k_chunk * 16 if swizzle else k_chunk * lbo)
    mn_chunk, mn_in = divmod(mn, u)
    if swizzle:
        return mn_in * eb + (mn_chunk % w) * 16 + (mn_chunk // w) * lbo + (k % 8) * w * 16 + (k // 8) * sbo
    return mn_in * eb + mn_chunk * sbo + (k % 8) * 16 + (k // 8) * lbo


def swizzle_address(addr: int, swizzle: int) -> int:
    """Swizzle<b,4,3> of a byte address: bits [4, 4+b) ^= bits [7, 7+b), b = log2(swizzle / 16)."""
    b = max(1, swizzle // 16).bit_length() - 1
    return addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)


def interleaved(shape: tuple[int, int], elem_bits: int, contig: int) -> LinearLayout:
    """The no-swizzle core-matrix layout: 16-byte column blocks, each holding every row."""
    u = 128 // elem_bits
    rows, cols = (shape[0], shape[1]) if contig == 1 else (shape[1], shape[0])

    def at(r: int, c: int) -> tuple[int, int]:
        return (r, c) if contig == 1 else (c, r)

    bases = [at(0, 1 << i) for i in range(u.bit_length() - 1)]
    bases += [at(1 << i, 0) for i in range(rows.bit_length() - 1)]
    bases += [at(0, u << i) for i in range((cols // u).bit_length() - 1)]
    return LinearLayout({"offset": bases, "block": []}, {"dim0": shape[0], "dim1": shape[1]})


def check_against_model(layout: LinearLayout, plan, operand: str, warpgroups: int = 1) -> None:
    """Every element of every instruction: the model's byte == where the layout puts it."""
    where = {coords(layout, offset=o): o * plan.elem_bits // 8 for o in range(layout.in_dim_size("offset"))}
    for g in range(warpgroups):
        for i in range(plan.mn_reps):
            for j in range(plan.k_steps):
                start = plan.warpgroup_offsets[g] + plan.offsets[i][j]
                mn0, k0 = plan.instr_mn * (i * warpgroups + g), plan.instr_k * j
                for mn in range(plan.instr_mn):
                    for k in range(plan.instr_k):
                        x = (mn0 + mn, k0 + k) if operand == "A" else (k0 + k, mn0 + mn)
                        pre = canonical_offset(plan.major, plan.swizzle_bytes, plan.elem_bits, plan.lbo, plan.sbo,
                                               mn, k)
                        assert swizzle_address(start + pre, plan.swizzle_bytes) == where[x], x


# (name, layout, elem bits, operand, instr_mn, instr_k, warpgroups) -> (major, swizzle, LBO, SBO, offsets)
GPU_CHECKED = [
    ("f16 A K sw128", nvmma_shared((64, 64), 16, 128), 16, "A", 64, 16, 1,
     ("K", 128, 16, 1024, ((0, 32, 64, 96),))),
    ("f16 B MN sw128", nvmma_shared((64, 64), 16, 128), 16, "B", 64, 16, 1,
     ("MN", 128, 16, 1024, ((0, 2048, 4096, 6144),))),
    ("f16 A K sw64 m-repeat", nvmma_shared((128, 32), 16, 64), 16, "A", 64, 16, 1,
     ("K", 64, 16, 512, ((0, 32), (4096, 4128)))),
    ("f16 A M-major sw64", nvmma_shared((128, 32), 16, 64, transposed=True), 16, "A", 64, 16, 1,
     ("MN", 64, 2048, 512, ((0, 1024), (4096, 5120)))),
    ("f16 B N-major sw32", nvmma_shared((32, 64), 16, 32), 16, "B", 64, 16, 1,
     ("MN", 32, 1024, 256, ((0, 512),))),
    ("f16 B N-major sw128 n256", nvmma_shared((64, 256), 16, 128), 16, "B", 256, 16, 1,
     ("MN", 128, 8192, 1024, ((0, 2048, 4096, 6144),))),
    ("f16 B N-major sw0 n8", nvmma_shared((16, 8), 16, 0), 16, "B", 8, 16, 1, ("MN", 0, 128, 16, ((0,),))),
    ("f16 A K interleaved", interleaved((64, 32), 16, 1), 16, "A", 64, 16, 1,
     ("K", 0, 1024, 128, ((0, 2048),))),
    ("f16 B N interleaved", interleaved((32, 32), 16, 1), 16, "B", 32, 16, 1,
     ("MN", 0, 128, 512, ((0, 256),))),
    ("f16 B K interleaved", interleaved((32, 32), 16, 0), 16, "B", 32, 16, 1,
     ("K", 0, 512, 128, ((0, 1024),))),
    ("bf16 A K sw128 two M-warpgroups", nvmma_shared((128, 64), 16, 128), 16, "A", 64, 16, 2,
     ("K", 128, 16, 1024, ((0, 32, 64, 96),))),
    ("tf32 A K sw128", nvmma_shared((64, 32), 32, 128), 32, "A", 64, 8, 1,
     ("K", 128, 16, 1024, ((0, 32, 64, 96),))),
    ("tf32 A K sw64", nvmma_shared((128, 16), 32, 64), 32, "A", 64, 8, 1, ("K", 64, 16, 512, ((0, 32), (4096, 4128)))),
    ("e4m3 B K sw128", nvmma_shared((128, 64), 8, 128, transposed=True), 8, "B", 64, 32, 1,
     ("K", 128, 16, 1024, ((0, 32, 64, 96),))),
    ("i8 A K sw32", nvmma_shared((64, 64), 8, 32), 8, "A", 64, 32, 1, ("K", 32, 16, 256, ((0, 2048),))),
]


@pytest.mark.parametrize("case", GPU_CHECKED, ids=[c[0] for c in GPU_CHECKED])
def test_descriptor_fields(case) -> None:
    _, layout, bits, operand, instr_mn, instr_k, wgs, want = case
    plan = wgmma_smem_operand(layout, elem_bits=bits, operand=operand, instr_mn=instr_mn, instr_k=instr_k,
                              warpgroups=wgs)
    assert (plan.major, plan.swizzle_bytes, plan.lbo, plan.sbo, plan.offsets) == want
    assert plan.trans == int(plan.major == "MN")
    assert plan.base_alignment == max(16, 8 * plan.swizzle_bytes)
    check_against_model(layout, plan, operand, wgs)
    # the k-step / m-repeat offsets are where the layout puts each instruction's first element
    for i, row in enumerate(plan.offsets):
        for j, off in enumerate(row):
            mn, k = instr_mn * i * wgs, instr_k * j
            assert off == smem_byte_offset(layout, bits, (mn, k) if operand == "A" else (k, mn))
    d = plan.descriptor(0x2000, plan.mn_reps - 1, plan.k_steps - 1, wgs - 1)
    fields = decode_descriptor(d)
    assert fields["start_address"] == 0x2000 + plan.warpgroup_offsets[-1] + plan.offsets[-1][-1]
    assert (fields["lbo"], fields["sbo"], fields["swizzle"]) == (plan.lbo, plan.sbo, plan.swizzle_bytes)
    assert plan.template == encode_descriptor(0, plan.lbo, plan.sbo, plan.swizzle_bytes)


def test_warpgroup_offsets() -> None:
    plan = wgmma_smem_operand(nvmma_shared((256, 64), 16, 128), elem_bits=16, operand="A", instr_mn=64,
                              instr_k=16, warpgroups=2)
    # rows 64*(rep*2 + g): warpgroup 1 starts 64 rows (64 * 128 bytes) in, repeats 128 rows apart
    assert plan.warpgroup_offsets == (0, 8192)
    assert [row[0] for row in plan.offsets] == [0, 16384]
    plan_b = wgmma_smem_operand(nvmma_shared((32, 128), 16, 128), elem_bits=16, operand="B", instr_mn=32,
                                instr_k=16, warpgroups=2)
    assert plan_b.warpgroup_offsets == (0, 64)  # columns 32..63: the next 64 bytes of the swizzled row
    assert [row[0] for row in plan_b.offsets] == [0, 4096]


@given(st.sampled_from([8, 16, 32]), st.sampled_from([32, 64, 128]), st.booleans(), st.sampled_from(["A", "B"]),
       st.integers(0, 1), st.integers(0, 2), st.integers(0, 1))
@settings(max_examples=40, deadline=None)
def test_nvmma_layouts_always_feed_wgmma(bits, swizzle, transposed, operand, log_reps, log_steps, log_wg) -> None:
    instr_k = 256 // bits
    k = instr_k << log_steps
    k_major = (operand == "A") != transposed
    if not k_major and bits != 16:
        transposed = not transposed  # only 16-bit operands may be MN-major
        k_major = True
    contig_k = k if k_major else None
    span = swizzle * 8 // bits
    if contig_k is not None and contig_k < span:
        k = span
    instr_mn = 64 if operand == "A" else 32
    mn = instr_mn << (log_reps + log_wg)
    if not k_major and mn < span:
        return
    shape = (mn, k) if operand == "A" else (k, mn)
    layout = nvmma_shared(shape, bits, swizzle, transposed)
    plan = wgmma_smem_operand(layout, elem_bits=bits, operand=operand, instr_mn=instr_mn, instr_k=instr_k,
                              warpgroups=1 << log_wg)
    assert plan.swizzle_bytes == swizzle
    assert plan.major == ("K" if k_major else "MN")
    check_against_model(layout, plan, operand, 1 << log_wg)


def test_descriptor_errors_name_the_legal_layouts() -> None:
    fp8_n_major = nvmma_shared((64, 64), 8, 64)  # B [K, N] with N contiguous
    with pytest.raises(LayoutError, match="must be K-major") as e:
        wgmma_smem_operand(fp8_n_major, elem_bits=8, operand="B", instr_mn=64, instr_k=32)
    assert "transposed=True" in str(e.value)
    row_major = nvmma_shared((64, 64), 16, 0)  # 128-byte rows without a swizzle: no core matrices
    with pytest.raises(LayoutError, match="cannot read this 16-bit K-major A buffer") as e:
        wgmma_smem_operand(row_major, elem_bits=16, operand="A", instr_mn=64, instr_k=16)
    msg = str(e.value)
    assert "nvmma_shared(shape, 16, swizzle_bytes, transposed=False)" in msg and "128-byte swizzle" in msg
    padded = swizzled_shared((64, 64), 8, 2, 4, (1, 0))  # 128-byte rows with a 64-byte pattern: no atom
    with pytest.raises(LayoutError, match="cannot read"):
        wgmma_smem_operand(padded, elem_bits=16, operand="A", instr_mn=64, instr_k=16)
    with pytest.raises(LayoutError, match="not a shared-memory layout"):
        wgmma_smem_operand(blocked((64, 64), (1, 8), (8, 4), (4, 1), (1, 0)), elem_bits=16, operand="A",
                           instr_mn=64, instr_k=16)
    with pytest.raises(LayoutError, match="whole number"):
        wgmma_smem_operand(nvmma_shared((64, 64), 16, 128), elem_bits=16, operand="A", instr_mn=64, instr_k=16,
                           warpgroups=2)
    with pytest.raises(LayoutError, match="aligned to 1024"):
        wgmma_smem_operand(nvmma_shared((64, 64), 16, 128), elem_bits=16, operand="A", instr_mn=64,
                           instr_k=16).descriptor(0x200)


def test_operand_major_and_tile() -> None:
    assert operand_major(nvmma_shared((64, 64), 16, 128), "A") == "K"
    assert operand_major(nvmma_shared((64, 64), 16, 128), "B") == "MN"
    assert operand_major(nvmma_shared((64, 64), 16, 128, transposed=True), "B") == "K"
    # a sub-tile at the origin: K = 64 of a 128-wide K-major buffer
    plan = wgmma_smem_operand(nvmma_shared((64, 128), 16, 128), elem_bits=16, operand="A", instr_mn=64,
                              instr_k=16, tile=(64, 64))
    assert plan.offsets == ((0, 32, 64, 96),)
    assert smem_byte_offset(nvmma_shared((64, 128), 16, 128), 16, (0, 64)) == 64 * 128


# ---------------------------------------------------------------- NVMMA choice and TMA
def test_choose_nvmma_swizzle() -> None:
    assert choose_nvmma_swizzle((128, 64), 16) == 128
    assert choose_nvmma_swizzle((128, 32), 16) == 64
    assert choose_nvmma_swizzle((128, 16), 16) == 32
    assert choose_nvmma_swizzle((128, 8), 16) == 0
    assert choose_nvmma_swizzle((64, 128), 8) == 128
    assert choose_nvmma_swizzle((32, 8), 32) == 32
    assert choose_nvmma_swizzle((4, 64), 16) == 0  # fewer than 8 rows
    assert choose_nvmma_swizzle((16, 128), 16, transposed=True) == 32  # dim 0 (16 x 2 bytes) is contiguous
    assert nvmma_default((128, 64), 16) == nvmma_shared((128, 64), 16, 128)
    assert nvmma_default((64, 32), 16, transposed=True) == nvmma_shared((64, 32), 16, 128, transposed=True)


@pytest.mark.parametrize("bits", [8, 16, 32])
@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
@pytest.mark.parametrize("transposed", [False, True])
def test_tma_swizzle_of(bits: int, swizzle: int, transposed: bool) -> None:
    lay = nvmma_shared((128, 128), bits, swizzle, transposed)
    assert tma_swizzle_of(lay, bits) == swizzle
    assert tma_swizzle_of(lay) == swizzle  # the width is read off the pattern


def test_tma_swizzle_of_refuses_other_layouts() -> None:
    assert tma_swizzle_of(swizzled_shared((64, 64), 8, 2, 4, (1, 0))) is None
    assert tma_swizzle_of(swizzled_shared((64, 64), 8, 1, 8, (1, 0))) == 128  # the same bytes as 128B, fp16
    assert tma_swizzle_of(blocked((64, 64), (1, 8), (8, 4), (4, 1), (1, 0))) is None
    assert tma_swizzle_of(interleaved((64, 32), 16, 1)) is None
    assert tma_swizzle_of(nvmma_shared((64, 4), 16, 0), 16) is None  # 8-byte rows: below the 16-byte granule


# ---------------------------------------------------------------- shapes
def test_legal_shapes() -> None:
    f16 = legal_wgmma_shapes("f16")
    assert f16[0] == (64, 8, 16) and f16[-1] == (64, 256, 16) and len(f16) == 32
    assert legal_wgmma_shapes(16, True) == f16
    assert legal_wgmma_shapes("f32")[0] == (64, 8, 8)
    assert legal_wgmma_shapes(8, True)[0] == (64, 8, 32)
    ints = [n for _, n, _ in legal_wgmma_shapes("i8")]
    assert ints[:5] == [8, 16, 24, 32, 48] and 40 not in ints and ints[-1] == 256
    with pytest.raises(LayoutError, match="no 16-bit integer"):
        legal_wgmma_shapes(16, False)


def test_check_wgmma_shape() -> None:
    ins = check_wgmma_shape(128, 128, 64, "f16", b_major="MN")
    assert (ins.shape_name, ins.m_reps, ins.k_steps, ins.trans_a, ins.trans_b) == ("m64n128k16", 2, 4, 0, 1)
    assert ins.ptx_types == "f32.f16.f16" and ins.accumulator_registers == 64 and ins.takes_trans
    assert check_wgmma_shape(64, 64, 64, "f16", acc_type="f16").accumulator_registers == 16
    assert check_wgmma_shape(64, 32, 64, "e4m3", b_type="e5m2").ptx_types == "f32.e4m3.e5m2"
    assert check_wgmma_shape(64, 32, 64, "e4m3", acc_type="f16").ptx_types == "f16.e4m3.e4m3"
    assert check_wgmma_shape(64, 32, 32, "f32").shape_name == "m64n32k8"
    i8 = check_wgmma_shape(64, 48, 64, "i8", b_type="u8")
    assert (i8.ptx_types, i8.acc_type) == ("s32.s8.u8", "i32")
    assert check_wgmma_shape(64, 64, 16, "bf16", a_in_registers=True, a_major="MN").trans_a == 0


@pytest.mark.parametrize("args,kwargs,match", [
    ((96, 64, 64, "f16"), {}, "M=96 is not a multiple of 64"),
    ((64, 12, 64, "f16"), {}, "N=12"),
    ((64, 512, 64, "f16"), {}, "N=512"),
    ((64, 40, 64, "i8"), {}, "N=40"),
    ((64, 64, 24, "f16"), {}, "K=24 is not a multiple of 16"),
    ((64, 64, 16, "e4m3"), {}, "K=16 is not a multiple of 32"),
    ((64, 64, 64, "e4m3"), {"b_major": "MN"}, "f8e4m3 operands must be K-major"),
    ((64, 64, 64, "f32"), {"a_major": "MN"}, "tf32 operands must be K-major"),
    ((64, 64, 64, "bf16"), {"acc_type": "f16"}, "f16 accumulator is not available for bf16"),
    ((64, 64, 64, "i8"), {"acc_type": "f32"}, "use i32"),
    ((64, 64, 64, "f16"), {"b_type": "bf16"}, "operand types must match"),
    ((64, 64, 64, "f64"), {}, "does not take 'f64'"),
])
def test_check_wgmma_shape_errors(args, kwargs, match) -> None:
    with pytest.raises(LayoutError, match=match) as e:
        check_wgmma_shape(*args, **kwargs)
    if "does not take" not in match:
        assert "legal: M a multiple of 64" in str(e.value)
