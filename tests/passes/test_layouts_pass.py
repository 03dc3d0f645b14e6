"""Layout assignment (``tlxc/ir/passes/layouts.py``) as IR text in, IR text out.

Each test writes a kernel without layouts, runs the pass with one target's facts and
compares the printed result: exactly where the text is short, else with FileCheck lines
whose layouts come from the named constructors (``blocked``, ``slice_layout``,
``mma_v2_accumulator``, ``AmdMfma``), so a test says *which* layout a tile must get, not
only that it prints some ``ll(...)``. Every result also parses back and prints the same
(layouts on tile types round-trip through the text form).
"""

from __future__ import annotations

import io
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from passes_helpers import kernel, parse  # tests/passes/passes_helpers.py

from tlxc.ir import print_ir
from tlxc.ir.layout.amd import AmdMfma
from tlxc.ir.layout.common import blocked, slice_layout
from tlxc.ir.layout.linear import LinearLayout
from tlxc.ir.layout.nvidia import mma_v2_accumulator
from tlxc.ir.layout.shape_ops import permute
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, dce, layouts
from tlxc.ir.verifier import verify


def _options_for(arch: str) -> PassOptions:
    """The options the code generator of ``arch`` runs its passes with: its
    ``TargetInfo`` (``tlxc.codegen.targets.backend``)."""
    from tlxc.codegen.targets import backend

    return PassOptions(target=backend(arch).info)


def assign(body: str, args: str, arch: str, func_attrs: str = "") -> str:
    """The kernel ``body`` (4 warps) after layout assignment for ``arch`` and the dead code
    elimination that the code generators run right after it (the pass leaves the
    originals of what it computed again in another layout), printed; it verifies, and
    parses back to the same text."""
    text = kernel(body, args)
    if func_attrs:
        text = text.replace('{sym_name = "k"}', f'{{sym_name = "k", {func_attrs}}}')
    options = _options_for(arch)
    module = dce.run(layouts.run(parse(text), options), options)
    verify(module)
    text = print_ir(module)
    again = parse_ir(text)
    verify(again)
    assert print_ir(again) == text, "the layout pass's output does not print back identically"
    return text


def filecheck(text: str, checks: str, **layouts_by_name: LinearLayout) -> None:
    """``FileCheck`` the IR ``text`` against ``checks``, with ``[[NAME]]`` standing for
    ``str(layouts_by_name[NAME])`` (as ``-D NAME=...``)."""
    pytest.importorskip("filecheck", reason="the filecheck package (the 'test' extra) is not installed")
    from filecheck.matcher import Matcher
    from filecheck.options import Options

    with tempfile.TemporaryDirectory(prefix="tlxc-filecheck-") as d:
        check_file, input_file = Path(d) / "checks", Path(d) / "ir"
        check_file.write_text(checks)
        input_file.write_text(text)
        err = io.StringIO()
        with redirect_stdout(err), redirect_stderr(err):
            rc = Matcher.from_opts(Options(match_filename=str(check_file), input_file=str(input_file),
                                           variables={k: str(v) for k, v in layouts_by_name.items()})).run()
    if rc != 0:
        pytest.fail(f"FileCheck failed:\n{err.getvalue()}\n--- IR ---\n{text}", pytrace=False)


# -- an elementwise chain: one blocked layout ------------------------------------------------------

CHAIN = """
    %0 = arange {start = 0, end = 256} : tile<256xi32>
    %1 = splat %x : tile<256xptr<f32>>
    %2 = addptr %1, %0 : tile<256xptr<f32>>
    %3 = load %2 : tile<256xf32>
    %4 = add %3, %3 : tile<256xf32>
    store %2, %4
    return
"""


@pytest.mark.parametrize("arch,lanes", [("sm_90a", 32), ("gfx942", 64)])
def test_elementwise_chain_gets_one_blocked_layout(arch: str, lanes: int) -> None:
    """Every tile of a load / add / store chain gets the one canonical layout: one
    element per thread (the pointer's alignment is unknown), the lanes of a warp (32
    on NVIDIA, 64 on a CDNA wave) then the 4 warps along the tile, wrapping in registers;
    no conversion."""
    L = blocked([256], [1], [lanes], [4], [0])
    assert assign(CHAIN, "%x: ptr<f32>", arch) == kernel(f"""
        %0 = arange {{start = 0, end = 256}} : tile<256xi32, {L}>
        %1 = splat %x : tile<256xptr<f32>, {L}>
        %2 = addptr %1, %0 : tile<256xptr<f32>, {L}>
        %3 = load %2 : tile<256xf32, {L}>
        %4 = add %3, %3 : tile<256xf32, {L}>
        store %2, %4
        return
    """, "%x: ptr<f32>")


@pytest.mark.parametrize("divisibility,per_thread", [(1, 1), (4, 1), (16, 4)])
def test_vector_width_follows_pointer_alignment(divisibility: int, per_thread: int) -> None:
    """The canonical layout's elements per thread are the widest access the axis analysis
    proves: a 16-byte aligned f32 pointer gives 4 consecutive elements (one 16-byte
    access) per thread; a 4-byte aligned one a single element."""
    # the kernel's argument attribute, as the frontend writes it from the signature (*fp32:16)
    attrs = f"arg_divisibility = [{divisibility}]" if divisibility > 1 else ""
    out = assign(CHAIN.replace("256", "1024"), "%x: ptr<f32>", "sm_90a", attrs)
    L = blocked([1024], [per_thread], [32], [4], [0])
    assert out.count(f"tile<1024xf32, {L}>") == 2 and out.count(f"tile<1024xptr<f32>, {L}>") == 2, out


# -- a reduction: the slice of its operand's layout -------------------------------------------------

ROWS = """
    %r = arange {start = 0, end = 64} : tile<64xi32>
    %c = arange {start = 0, end = 128} : tile<128xi32>
    %r1 = expand_dims %r {axis = 1} : tile<64x1xi32>
    %k = constant {value = 128} : tile<64x1xi32>
    %r2 = mul %r1, %k : tile<64x1xi32>
    %c1 = expand_dims %c {axis = 0} : tile<1x128xi32>
    %rb = broadcast %r2 : tile<64x128xi32>
    %cb = broadcast %c1 : tile<64x128xi32>
    %off = add %rb, %cb : tile<64x128xi32>
    %ps = splat %p : tile<64x128xptr<f32>>
    %pp = addptr %ps, %off : tile<64x128xptr<f32>>
    %x = load %pp : tile<64x128xf32>
    %m = reduce %x {axis = 1, kind = "max"} : tile<64xf32>
    %m1 = expand_dims %m {axis = 1} : tile<64x1xf32>
    %mb = broadcast %m1 : tile<64x128xf32>
    %y = sub %x, %mb : tile<64x128xf32>
    store %pp, %y
    return
"""


def test_reduction_takes_the_slice_of_its_operand_layout() -> None:
    """``x - max(x, 1)[:, None]``: the row maximum lives in the slice of the loaded
    tile's layout (each row's value where that row's threads are), ``expand_dims`` and
    the broadcast back to 64x128 re-index registers only, and the subtraction meets
    ``x`` in its own layout: no ``convert_layout`` anywhere."""
    P = blocked([64, 128], [1, 1], [1, 32], [4, 1], [1, 0])
    out = assign(ROWS, "%p: ptr<f32>", "sm_90a")
    filecheck(out, """
CHECK: %x = load %pp : tile<64x128xf32, [[P]]>
CHECK-NEXT: %m = reduce %x {axis = 1, kind = "max"} : tile<64xf32, [[SLICE]]>
CHECK-NEXT: %m1 = expand_dims %m {axis = 1} : tile<64x1xf32, [[EXPANDED]]>
CHECK-NEXT: %mb = broadcast %m1 : tile<64x128xf32, [[P]]>
CHECK-NEXT: %y = sub %x, %mb : tile<64x128xf32, [[P]]>
CHECK-NEXT: store %pp, %y
""", P=P, SLICE=slice_layout(P, 1), EXPANDED=blocked([64, 1], [1, 1], [1, 32], [4, 1], [1, 0]))
    assert "convert_layout" not in out


# -- gather and histogram: through shared memory, so their sources keep their layouts ------------

INDEXED = """
    %r = arange {start = 0, end = 8} : tile<8xi32>
    %c = arange {start = 0, end = 16} : tile<16xi32>
    %r1 = expand_dims %r {axis = 1} : tile<8x1xi32>
    %c1 = expand_dims %c {axis = 0} : tile<1x16xi32>
    %rb = broadcast %r1 : tile<8x16xi32>
    %cb = broadcast %c1 : tile<8x16xi32>
    %o = add %rb, %cb : tile<8x16xi32>
    %sp = splat %p : tile<8x16xptr<f32>>
    %pp = addptr %sp, %o : tile<8x16xptr<f32>>
    %src = load %pp : tile<8x16xf32>
    %t = trans %src {order = [1, 0]} : tile<16x8xf32>
    %ix = constant {value = 3} : tile<16x8xi32>
    %g = gather %t, %ix {axis = 1} : tile<16x8xf32>
    %m = cmp %c, %c {predicate = "lt"} : tile<16xi1>
    %h = histogram %c, mask=%m : tile<64xi32>
    return
"""


def test_gather_follows_its_index_and_histogram_takes_the_canonical_layout() -> None:
    """``gather`` reads its source from shared memory in whatever layout the source has
    (the transposed load is not converted) and gives its result in the index's layout;
    ``histogram``'s result is the canonical layout of its shape and its mask follows the
    values."""
    P = blocked([8, 16], [1, 1], [2, 16], [4, 1], [1, 0])
    module = layouts.run(parse(kernel(INDEXED, "%p: ptr<f32>")), _options_for("sm_90a"))  # no DCE: nothing is used
    verify(module)
    out = print_ir(module)
    index = blocked([16, 8], [1, 1], [4, 8], [4, 1], [1, 0])
    filecheck(out, """
CHECK: %src = load %pp : tile<8x16xf32, [[P]]>
CHECK-NEXT: %t = trans %src {order = [1, 0]} : tile<16x8xf32, [[T]]>
CHECK-NEXT: %ix = constant {value = 3} : tile<16x8xi32, [[INDEX]]>
CHECK-NEXT: %g = gather %t, %ix {axis = 1} : tile<16x8xf32, [[INDEX]]>
CHECK: %h = histogram %c, mask=%m : tile<64xi32, [[BINS]]>
""", P=P, T=permute(P, (1, 0)), INDEX=index, BINS=blocked([64], [1], [32], [4], [0]))
    assert "convert_layout" not in out


# -- a dot: the accumulator layout of the matrix instruction, a conversion where layouts meet --------

DOT = """
    %ra = arange {start = 0, end = 64} : tile<64xi32>
    %ka = arange {start = 0, end = 32} : tile<32xi32>
    %r1 = expand_dims %ra {axis = 1} : tile<64x1xi32>
    %k1 = expand_dims %ka {axis = 0} : tile<1x32xi32>
    %rb = broadcast %r1 : tile<64x32xi32>
    %kb = broadcast %k1 : tile<64x32xi32>
    %oa = add %rb, %kb : tile<64x32xi32>
    %sa = splat %a : tile<64x32xptr<f16>>
    %pa = addptr %sa, %oa : tile<64x32xptr<f16>>
    %x = load %pa : tile<64x32xf16>
    %y = trans %x {order = [1, 0]} : tile<32x64xf16>
    %z = constant {value = 0.0} : tile<64x64xf32>
    %d = dot %x, %y, %z : tile<64x64xf32>
    %e = reduce %d {axis = 1, kind = "max"} : tile<64xf32>
    %sc = splat %c : tile<64xptr<f32>>
    %pc = addptr %sc, %ra : tile<64xptr<f32>>
    store %pc, %e
    return
"""
DOT_ARGS = "%a: ptr<f16>, %c: ptr<f32>"
# the dot's accumulator on each target: mma.sync m16n8 with the 4 warps on M (NVIDIA);
# gfx942's 32x32x8 MFMA, transposed for vector stores, with 2x2 warps
DOT_ACCUMULATOR = {
    "sm_90a": mma_v2_accumulator([64, 64], [4, 1]),
    "sm_100a": mma_v2_accumulator([64, 64], [4, 1]),
    "gfx942": AmdMfma(3, (32, 32, 8), True, (2, 2)).accumulator((64, 64)),
}
LANES = {"sm_90a": 32, "sm_100a": 32, "gfx942": 64}


@pytest.mark.parametrize("arch", DOT_ACCUMULATOR)
def test_dot_gets_its_accumulator_layout_and_a_conversion_where_layouts_meet(arch: str) -> None:
    """The fp16 dot's result, and the zero accumulator created for it (an anchored
    constant: made in that layout, not converted to it), get the layout of
    the target's matrix instruction; its row maximum gets the slice of that layout; the
    store's pointers are in the canonical 1-D layout, so the maximum is converted once,
    right before the store. The row indices ``%ra`` feed both the pointers and (through
    expand_dims) the loads, in two layouts: being cheap index arithmetic, they are
    computed again in the second layout, not converted."""
    C = DOT_ACCUMULATOR[arch]
    out = assign(DOT, DOT_ARGS, arch)
    filecheck(out, """
CHECK: %ra = arange {start = 0, end = 64} : tile<64xi32, [[STORE]]>
CHECK-NEXT: %[[RA2:[0-9]+]] = arange {start = 0, end = 64} : tile<64xi32, {{.*}}>
CHECK: expand_dims %[[RA2]] {axis = 1}
CHECK: %z = constant {value = 0.0} : tile<64x64xf32, [[ACC]]>
CHECK-NEXT: %d = dot %x, %y, %z : tile<64x64xf32, [[ACC]]>
CHECK-NEXT: %e = reduce %d {axis = 1, kind = "max"} : tile<64xf32, [[ROWMAX]]>
CHECK: %pc = addptr %sc, %ra : tile<64xptr<f32>, [[STORE]]>
CHECK-NEXT: %[[E2:[0-9]+]] = convert_layout %e : tile<64xf32, [[STORE]]>
CHECK-NEXT: store %pc, %[[E2]]
""", ACC=C, ROWMAX=slice_layout(C, 1), STORE=blocked([64], [1], [LANES[arch]], [4], [0]))
    assert out.count("convert_layout") == 1


ROW_MAX = """    %e = reduce %d {axis = 1, kind = "max"} : tile<64xf32>"""
MASKED = DOT.replace(ROW_MAX, """    %c1 = expand_dims %ra {axis = 0} : tile<1x64xi32>
    %rr = broadcast %r1 : tile<64x64xi32>
    %cc = broadcast %c1 : tile<64x64xi32>
    %m = cmp %rr, %cc {predicate = "ge"} : tile<64x64xi1>
    %zero = constant {value = 0.0} : tile<64x64xf32>
    %big = constant {value = -1000000.0} : tile<64x64xf32>
    %w = select %m, %zero, %big : tile<64x64xf32>
    %q = add %d, %w : tile<64x64xf32>
    %e = reduce %q {axis = 1, kind = "max"} : tile<64xf32>""")


@pytest.mark.parametrize("arch", DOT_ACCUMULATOR)
def test_a_causal_mask_select_is_rebuilt_in_the_accumulator_layout(arch: str) -> None:
    """``qk + tl.where(rows >= cols, 0, -1e6)`` (attention's causal mask): the select
    between two constants is as cheap to rebuild as its mask, so it is made in the
    accumulator's layout instead of being converted to it (a 64x64 fp32 conversion
    through shared memory per iteration, and its scratch)."""
    C = DOT_ACCUMULATOR[arch]
    out = assign(MASKED, DOT_ARGS, arch)
    filecheck(out, """
CHECK: = select %{{[0-9a-z]+}}, %{{[0-9a-z]+}}, %{{[0-9a-z]+}} : tile<64x64xf32, [[ACC]]>
CHECK: %q = add %d, %{{[0-9a-z]+}} : tile<64x64xf32, [[ACC]]>
""", ACC=C)
    assert out.count("convert_layout") == 1  # the row maximum before its store, as without the mask


def test_fp32_dot_without_tf32_stays_in_the_canonical_layout() -> None:
    """An fp32 dot (``input_precision="ieee"``, the default) has no mma.sync form: it runs
    as the FMA loop, in the canonical blocked layout of its shape (the target's hook
    answers None)."""
    out = assign(DOT.replace("f16", "f32"), "%a: ptr<f32>, %c: ptr<f32>", "sm_90a")
    acc = blocked([64, 64], [1, 1], [1, 32], [4, 1], [1, 0])
    filecheck(out, """
CHECK: %z = constant {value = 0.0} : tile<64x64xf32, [[ACC]]>
CHECK-NEXT: %d = dot %x, %y, %z : tile<64x64xf32, [[ACC]]>
CHECK-NEXT: %e = reduce %d {axis = 1, kind = "max"} : tile<64xf32, [[ROWMAX]]>
""", ACC=acc, ROWMAX=slice_layout(acc, 1))


# -- control flow: a loop-carried tile keeps one layout ---------------------------------------------

LOOP = """
    %0 = arange {start = 0, end = 128} : tile<128xi32>
    %1 = splat %x : tile<128xptr<f32>>
    %2 = addptr %1, %0 : tile<128xptr<f32>>
    %3 = constant {value = 0.0} : tile<128xf32>
    %4 = constant {value = 0} : i32
    %5 = constant {value = 1} : i32
    %6 = for %4, %n, %5, %3 : tile<128xf32> {
    ^(%i: i32, %acc: tile<128xf32>):
      %7 = load %2 : tile<128xf32>
      %8 = add %acc, %7 : tile<128xf32>
      yield %8
    }
    store %2, %6
    return
"""


def test_loop_carried_tile_keeps_one_layout() -> None:
    """The accumulator, the loop's block argument, the value yielded and the loop's
    result all have the same layout, so the loop needs no conversion."""
    L = blocked([128], [1], [32], [4], [0])
    out = assign(LOOP, "%x: ptr<f32>, %n: i32", "sm_90a")
    filecheck(out, """
CHECK: %[[ACC0:[0-9]+]] = constant {value = 0.0} : tile<128xf32, [[L]]>
CHECK: = for %{{[0-9]+}}, %n, %{{[0-9]+}}, %[[ACC0]] : tile<128xf32, [[L]]> {
CHECK-NEXT: ^(%i: i32, %acc: tile<128xf32, [[L]]>):
CHECK-NEXT: load {{.*}} : tile<128xf32, [[L]]>
CHECK-NEXT: = add %acc, {{.*}} : tile<128xf32, [[L]]>
CHECK-NEXT: yield
CHECK-NOT: convert_layout
""", L=L)


# -- whole kernels: every layout the pass and the buffer pass write round-trips ----------------------

EXAMPLE_KERNELS = [
    ("hopper_gemm_cp_async", "matmul_cp_async",
     "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1",
     {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "NUM_STAGES": 3}, "sm_90a"),
    ("amd_gemm_pipelined", "gemm_lds_pipelined",
     "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,1,i32:16,1,i32:16,1",
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 4, "NUM_STAGES": 2}, "gfx950"),
]


@pytest.mark.parametrize("example,name,signature,constants,arch", EXAMPLE_KERNELS, ids=[k[0] for k in EXAMPLE_KERNELS])
def test_example_kernel_layouts_round_trip(example: str, name: str, signature: str, constants: dict,
                                           arch: str) -> None:
    """An example's IR after buffer layouts and layout assignment (matrix-instruction
    layouts, slices, shared-memory buffers with their swizzled or padded layouts) prints,
    parses back and prints the same, and verifies."""
    from example_modules import load_example  # tests/example_modules.py

    from tlxc.ir.passes import buffer_layouts

    ir = getattr(load_example(example), name).compile(signature, constants, arch=arch).asm["ir"]
    options = _options_for(arch)
    module = dce.run(layouts.run(buffer_layouts.run(parse_ir(ir), options), options), options)
    text = print_ir(module)
    assert text.count("ll(") > 50 and "memdesc<" in text
    again = parse_ir(text)
    verify(again)
    assert print_ir(again) == text


SOFTMAX = """
    %ra = arange {start = 0, end = 64} : tile<64xi32>
    %ka = arange {start = 0, end = 32} : tile<32xi32>
    %r1 = expand_dims %ra {axis = 1} : tile<64x1xi32>
    %k1 = expand_dims %ka {axis = 0} : tile<1x32xi32>
    %rb = broadcast %r1 : tile<64x32xi32>
    %kb = broadcast %k1 : tile<64x32xi32>
    %oa = add %rb, %kb : tile<64x32xi32>
    %sa = splat %a : tile<64x32xptr<f16>>
    %pa = addptr %sa, %oa : tile<64x32xptr<f16>>
    %x = load %pa : tile<64x32xf16>
    %y = trans %x {order = [1, 0]} : tile<32x64xf16>
    %z = constant {value = 0.0} : tile<64x64xf32>
    %d = dot %x, %y, %z : tile<64x64xf32>
    %c1 = expand_dims %ra {axis = 0} : tile<1x64xi32>
    %cb = broadcast %c1 : tile<64x64xi32>
    %rw = broadcast %r1 : tile<64x64xi32>
    %keep = cmp %cb, %rw {predicate = "le"} : tile<64x64xi1>
    %neg = constant {value = -1000000.0} : tile<64x64xf32>
    %s = select %keep, %d, %neg : tile<64x64xf32>
    %m0 = constant {value = -1000000.0} : tile<64xf32>
    %mx = reduce %s {axis = 1, kind = "max"} : tile<64xf32>
    %m = maximum %m0, %mx : tile<64xf32>
    %m1 = expand_dims %m {axis = 1} : tile<64x1xf32>
    %mb = broadcast %m1 : tile<64x64xf32>
    %p = sub %s, %mb : tile<64x64xf32>
    %q = exp2 %p : tile<64x64xf32>
    %l = reduce %q {axis = 1, kind = "sum"} : tile<64xf32>
    %l0 = constant {value = 0.0} : tile<64xf32>
    %l2 = add %l0, %l : tile<64xf32>
    %t = add %l2, %m : tile<64xf32>
    %sc = splat %c : tile<64xptr<f32>>
    %pc = addptr %sc, %ra : tile<64xptr<f32>>
    store %pc, %t
    return
"""


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
def test_a_masked_softmax_of_a_dot_stays_in_the_accumulator_layout(arch: str) -> None:
    """Anchors: the causal mask (index arithmetic, rebuilt through its broadcasts), the
    ``tl.where`` constant, and the row state ``m_i`` / ``l_i`` created for the dot's
    rows all take the accumulator's layout (or its slice) -- nothing converts but the
    row sums for the store, where the canonical blocked layouts would send the
    accumulator through shared memory."""
    C = DOT_ACCUMULATOR[arch]
    out = assign(SOFTMAX, DOT_ARGS, arch)
    assert out.count("convert_layout") == 1, out
    filecheck(out, """
CHECK: %d = dot %x, %y, %z : tile<64x64xf32, [[ACC]]>
CHECK: %s = select {{%[0-9a-z]+}}, %d, %neg : tile<64x64xf32, [[ACC]]>
CHECK: %m0 = constant {value = -1000000.0} : tile<64xf32, [[ROW]]>
CHECK: %q = exp2 %p : tile<64x64xf32, [[ACC]]>
CHECK: %l0 = constant {value = 0.0} : tile<64xf32, [[ROW]]>
CHECK: convert_layout %t
CHECK-NEXT: store %pc
""", ACC=C, ROW=slice_layout(C, 1))


@pytest.mark.parametrize("arch,lanes", [("sm_90a", 32), ("gfx942", 64)])
def test_scan_gets_the_axis_within_a_warp(arch: str, lanes: int) -> None:
    from tlxc.ir.passes.layouts import scan_layout

    out = assign("""
        %0 = load %q : tile<256xf32>
        %1 = scan %0 {axis = 0} : tile<256xf32> {
        ^(%a: f32, %b: f32):
          %2 = add %a, %b : f32
          yield %2
        }
        store %q, %1
        return
    """, "%q: tile<256xptr<f32>>", arch)
    want = scan_layout((256,), 0, lanes, 4)
    # the loaded tile is converted into the scan's layout and the result back to the store's
    scan_line = next(line for line in out.splitlines() if " = scan " in line)
    assert f"tile<256xf32, {want}>" in scan_line
    assert out.count("convert_layout") == 2
    # each thread holds 256 / lanes consecutive positions; warps hold copies
    assert list(want.in_bases("register"))[0] == (1,)
    assert all(b == (0,) for b in want.in_bases("warp"))
