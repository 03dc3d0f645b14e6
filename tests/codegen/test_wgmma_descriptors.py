"""wgmma's shared-memory operands and instruction shapes: the descriptor encoding and the
fields ``wgmma_smem_operand`` finds, against an independent model of the hardware's
addressing, and the shape / type rules of ``mma_table`` (PTX ISA sections in
``tlxc/codegen/nvptx/mma_table.py``).

The descriptor values in ``GPU_CHECKED`` were also run on an H200: a kernel loaded the
buffers' bytes into shared memory, issued ``wgmma.mma_async`` with exactly these
descriptors (and the A register fragments of ``wgmma_operand_a``), and every accumulator
register matched ``A @ B`` placed by ``wgmma_accumulator``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tlxc.codegen.nvptx.mma_table import check_wgmma_shape, decode_descriptor, encode_descriptor, legal_wgmma_shapes
from tlxc.codegen.nvptx.wgmma_smem import wgmma_smem_operand
from tlxc.ir.layout import (
    LayoutError,
    LinearLayout,
    blocked,
    nvmma_shared,
    operand_major,
    smem_byte_offset,
    swizzled_shared,
    tma_swizzle_of,
)


def coords(layout: LinearLayout, **ins: int) -> tuple[int, int]:
    c = layout.apply(ins)
    return c["dim0"], c["dim1"]


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


def test_tma_swizzle_of_refuses_the_unswizzled_core_matrix_layout() -> None:
    assert tma_swizzle_of(interleaved((64, 32), 16, 1)) is None


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
