"""Axis info, rule by rule: a kernel as IR text in, the contiguity, divisibility and
constancy of its named values out. ``M`` stands for ``MAX_DIVISIBILITY`` (what 0 gets)."""

from __future__ import annotations

import pytest
from axis_helpers import run

from tlxc.ir.analysis import MAX_DIVISIBILITY as M
from tlxc.ir.analysis import AxisInfo, analyze

# pid * 1024 + arange(0, 1024), the offsets of a program (vector add with BLOCK=1024)
OFFSETS = """
%pid = program_id {axis = 0} : i32
%block = constant {value = 1024} : i32
%base = mul %pid, %block : i32
%r = arange {start = 0, end = 1024} : tile<1024xi32>
%s = splat %base : tile<1024xi32>
%offs = add %s, %r : tile<1024xi32>
"""


def offsets(body: str, args: str = "", divisibility: tuple[int, ...] = ()):
    return run(OFFSETS + body, args, divisibility)


# -- sources ----------------------------------------------------------------------------
def test_arange_is_one_run_divisible_by_its_start() -> None:
    a = run("""
        %r = arange {start = 0, end = 128} : tile<128xi32>
        %r8 = arange {start = 8, end = 72} : tile<64xi32>
        %r3 = arange {start = 3, end = 7} : tile<4xi32>
    """)
    assert a.cdk("r") == ((128,), (M,), (1,))
    assert a.cdk("r8") == ((64,), (8,), (1,))
    assert a.cdk("r3") == ((4,), (1,), (1,))
    assert a["r"].non_negative


def test_constants_are_constant_along_every_dimension() -> None:
    a = run("""
        %c48 = constant {value = 48} : i32
        %neg = constant {value = -12} : i32
        %z = constant {value = 0} : tile<4x8xi32>
        %t = constant {value = true} : tile<16xi1>
    """)
    assert a.cdk("c48") == ((1,), (16,), (1,))
    assert a["c48"].constant == 48
    assert a.cdk("neg") == ((1,), (4,), (1,))
    assert not a["neg"].non_negative
    assert a.cdk("z") == ((1, 1), (M, M), (4, 8))
    assert a.cdk("t") == ((1,), (1,), (16,))
    assert a["t"].constant == 1


def test_arguments_take_the_signature_promise_and_pointers_their_natural_alignment() -> None:
    a = run("", "%x: ptr<f32>, %y: ptr<f16>, %z: ptr<f64>, %n: i32, %m: i64, %w: i32", (16, 1, 1, 16, 1, 24))
    assert a.cdk("x") == ((1,), (16,), (1,))
    assert a.cdk("y") == ((1,), (2,), (1,))
    assert a.cdk("z") == ((1,), (8,), (1,))
    assert a.cdk("n") == ((1,), (16,), (1,))
    assert a.cdk("m") == ((1,), (1,), (1,))
    assert a.cdk("w") == ((1,), (8,), (1,))  # a multiple of 24 is a multiple of 8
    assert not a["n"].non_negative  # an argument's sign is never assumed


# -- shapes -----------------------------------------------------------------------------
def test_splat_broadcast_expand_dims_in_two_dimensions() -> None:
    a = run("""
        %r = arange {start = 0, end = 64} : tile<64xi32>
        %col = expand_dims %r {axis = 0} : tile<1x64xi32>
        %row = expand_dims %r {axis = 1} : tile<64x1xi32>
        %b = broadcast %col : tile<32x64xi32>
        %bt = broadcast %row : tile<64x32xi32>
        %s = splat %n : tile<32x64xi32>
    """, "%n: i32", (16,))
    assert a.cdk("col") == ((1, 64), (1, M), (1, 1))  # along the new dim every element counts
    assert a.cdk("row") == ((64, 1), (M, 1), (1, 1))
    assert a.cdk("b") == ((1, 64), (1, M), (32, 1))
    assert a.cdk("bt") == ((64, 1), (M, 1), (1, 32))
    assert a.cdk("s") == ((1, 1), (16, 16), (32, 64))


def test_trans_permutes_and_reshape_keeps_what_row_major_order_keeps() -> None:
    a = run("""
        %r = arange {start = 0, end = 64} : tile<64xi32>
        %col = expand_dims %r {axis = 0} : tile<1x64xi32>
        %b = broadcast %col : tile<32x64xi32>
        %t = trans %b {order = [1, 0]} : tile<64x32xi32>
        %sq = reshape %col : tile<64xi32>
        %m = reshape %r : tile<8x8xi32>
        %f = reshape %m : tile<64xi32>
        %any = reshape %r {can_reorder = true} : tile<8x8xi32>
        %k = reshape %b : tile<2048xi32>
    """)
    assert a.cdk("t") == ((64, 1), (M, 1), (1, 32))
    assert a.cdk("sq") == ((64,), (M,), (1,))  # only a dimension of size 1 went away
    assert a.cdk("m") == ((1, 8), (1, 8), (1, 1))  # rows 0..7, 8..15, ...: runs of 8
    assert a.cdk("f") == ((8,), (8,), (1,))  # runs never cross a row, so they stay 8 long
    assert a.cdk("any") == ((1, 1), (1, 1), (1, 1))
    assert a.cdk("k") == ((64,), (M,), (1,))


def test_join_and_split() -> None:
    a = run("""
        %r = arange {start = 0, end = 64} : tile<64xi32>
        %c = constant {value = 32} : tile<64xi32>
        %mixed = join %r, %c : tile<64x2xi32>
        %r2 = add %r, %c : tile<64xi32>
        %j = join %r, %r2 : tile<64x2xi32>
        %lo, %hi = split %j : tile<64xi32>, tile<64xi32>
        %four = constant {value = 4} : tile<64xi32>
        %jj = join %four, %four : tile<64x2xi32>
        %x = constant {value = 8} : i32
        %pair = join %x, %x : tile<2xi32>
        %e0, %e1 = split %pair : i32, i32
    """)
    assert a.cdk("mixed") == ((1, 1), (1, 1), (1, 1))  # a run or a constant: the meet
    assert a.cdk("j") == ((64, 1), (32, 1), (1, 1))  # runs from 0 and from 32
    assert a.cdk("lo") == ((64,), (32,), (1,))
    assert a.cdk("jj") == ((1, 1), (4, 4), (64, 2))
    assert a.cdk("pair") == ((1,), (8,), (2,))
    assert a.cdk("e1") == ((1,), (8,), (1,))
    assert a["e1"].constant == 8


# -- add, sub, mul ----------------------------------------------------------------------
def test_offsets_of_a_program_are_one_run_divisible_by_the_block() -> None:
    a = offsets("")
    assert a.cdk("base") == ((1,), (1024,), (1,))
    assert a.cdk("s") == ((1,), (1024,), (1024,))
    assert a.cdk("offs") == ((1024,), (1024,), (1,))
    assert a["offs"].non_negative


def test_add_of_a_run_and_short_constant_chunks_divides_inner_run_starts() -> None:
    # [0,1,2,3] + [0,0,4,4] = [0,1,6,7]: runs of 2 starting at 0 and 6, so divisibility 2
    # (taking the gcd of the operands' divisibilities would claim 4)
    a = run("""
        %r = arange {start = 0, end = 4} : tile<4xi32>
        %two = constant {value = 2} : tile<4xi32>
        %four = constant {value = 4} : tile<4xi32>
        %h = idiv %r, %two : tile<4xi32>
        %q = mul %h, %four : tile<4xi32>
        %sum = add %r, %q : tile<4xi32>
    """)
    assert a.cdk("h") == ((1,), (1,), (2,))
    assert a.cdk("q") == ((1,), (4,), (2,))
    assert a.cdk("sum") == ((2,), (2,), (1,))


def test_sub_counts_down_unless_a_run_minus_a_constant() -> None:
    a = run("""
        %r = arange {start = 0, end = 64} : tile<64xi32>
        %r8 = arange {start = 8, end = 72} : tile<64xi32>
        %c = constant {value = 16} : tile<64xi32>
        %down = sub %c, %r : tile<64xi32>
        %up = sub %r, %c : tile<64xi32>
        %same = sub %r, %r8 : tile<64xi32>
    """)
    assert a.cdk("down") == ((1,), (1,), (1,))
    assert a.cdk("up") == ((64,), (16,), (1,))
    assert a.cdk("same") == ((1,), (1,), (64,))  # -8 everywhere, value unknown to the rule
    assert not a["up"].non_negative


def test_mul_multiplies_divisibility_and_ends_runs() -> None:
    a = run("""
        %r = arange {start = 0, end = 64} : tile<64xi32>
        %four = constant {value = 4} : tile<64xi32>
        %one = constant {value = 1} : tile<64xi32>
        %zero = constant {value = 0} : tile<64xi32>
        %s = splat %n : tile<64xi32>
        %eight = constant {value = 8} : tile<64xi32>
        %r4 = mul %r, %four : tile<64xi32>
        %r1 = mul %one, %r : tile<64xi32>
        %r0 = mul %r, %zero : tile<64xi32>
        %n8 = mul %s, %eight : tile<64xi32>
    """, "%n: i32", (16,))
    assert a.cdk("r4") == ((1,), (4,), (1,))
    assert a.cdk("r1") == ((64,), (M,), (1,))
    assert a.cdk("r0") == ((1,), (M,), (64,))
    assert a["r0"].constant == 0
    assert a.cdk("n8") == ((1,), (128,), (64,))


# -- idiv, rem ----------------------------------------------------------------------------
def test_idiv_by_a_power_of_two_gives_constant_chunks_for_non_negative_dividends() -> None:
    a = offsets("""
        %c16 = constant {value = 16} : tile<1024xi32>
        %q = idiv %offs, %c16 : tile<1024xi32>
        %c32 = constant {value = 32} : tile<1024xi32>
        %shifted = sub %offs, %c32 : tile<1024xi32>
        %qn = idiv %shifted, %c32 : tile<1024xi32>
        %c4 = constant {value = 4} : i32
        %nq = idiv %n, %c4 : i32
    """, "%n: i32", (16,))
    assert a.cdk("q") == ((1,), (1,), (16,))
    # offs - 32 may be negative: -32 // 32 = -1 but -31 // 32 = 0 (truncation)
    assert a.cdk("qn") == ((1,), (1,), (1,))
    assert a.cdk("nq") == ((1,), (4,), (1,))  # exact division of a multiple of 16


def test_rem_by_a_power_of_two_keeps_runs_of_that_length() -> None:
    a = offsets("""
        %c64 = constant {value = 64} : tile<1024xi32>
        %m = rem %offs, %c64 : tile<1024xi32>
        %c48 = constant {value = 48} : tile<1024xi32>
        %m48 = rem %offs, %c48 : tile<1024xi32>
        %c32 = constant {value = 32} : tile<1024xi32>
        %shifted = sub %offs, %c32 : tile<1024xi32>
        %mn = rem %shifted, %c64 : tile<1024xi32>
    """)
    assert a.cdk("m") == ((64,), (M,), (1,))  # 0..63 over and over: every run starts at 0
    assert a["m"].non_negative
    # runs of 16 starting at multiples of 16: t % 48 is 0, 16 or 32
    assert a.cdk("m48") == ((16,), (16,), (1,))
    # may be negative (-64 % 64 = 0 but -63 % 64 = -63): runs only under assumption (4),
    # which the code generator checks, so the op is listed; the provable ones are not
    assert a.cdk("mn") == ((32,), (32,), (1,))
    assert a["mn"].non_negative
    assert [op.result.name_hint for op in a.map.assumed_non_negative] == ["mn"]


def test_rem_of_a_dividend_of_unknown_sign_is_not_assumed_where_it_gains_nothing() -> None:
    a = offsets("""
        %sm = splat %m : tile<1024xi32>
        %shifted = sub %offs, %sm : tile<1024xi32>
        %c3 = constant {value = 3} : tile<1024xi32>
        %odd = rem %shifted, %c3 : tile<1024xi32>
    """, "%m: i32")
    assert a.cdk("odd") == ((1,), (1,), (1,))
    assert not a["odd"].non_negative
    assert not a.map.assumed_non_negative


def test_rem_by_an_argument_breaks_runs_unless_its_divisibility_is_known() -> None:
    a = offsets("""
        %sm = splat %m : tile<1024xi32>
        %bad = rem %offs, %sm : tile<1024xi32>
        %sk = splat %k : tile<1024xi32>
        %good = rem %offs, %sk : tile<1024xi32>
    """, "%m: i32, %k: i32", (1, 16))
    assert a.cdk("bad") == ((1,), (1,), (1,))
    assert a.cdk("good") == ((16,), (16,), (1,))


# -- bitwise ----------------------------------------------------------------------------
def test_and_with_masks() -> None:
    a = offsets("""
        %low = constant {value = 63} : tile<1024xi32>
        %lo = and %offs, %low : tile<1024xi32>
        %high = constant {value = -16} : tile<1024xi32>
        %hi = and %offs, %high : tile<1024xi32>
        %sn = splat %n : tile<1024xi32>
        %any = and %sn, %offs : tile<1024xi32>
        %c32 = constant {value = 32} : tile<1024xi32>
        %shifted = sub %offs, %c32 : tile<1024xi32>
        %lo_neg = and %shifted, %low : tile<1024xi32>
    """, "%n: i32", (16,))
    assert a.cdk("lo") == ((64,), (M,), (1,))  # offs % 64
    assert a.cdk("hi") == ((1,), (16,), (16,))  # offs rounded down to a multiple of 16
    assert a.cdk("any") == ((1,), (16,), (1,))  # n's low zero bits survive
    # masking is a floored modulo: unlike rem it needs no sign; runs start at 0 or 32
    assert a.cdk("lo_neg") == ((32,), (32,), (1,))
    assert a["lo_neg"].non_negative


def test_shifts() -> None:
    a = offsets("""
        %two = constant {value = 2} : tile<1024xi32>
        %four = constant {value = 4} : tile<1024xi32>
        %l = shl %offs, %two : tile<1024xi32>
        %rs = shr %offs, %four : tile<1024xi32>
        %c2 = constant {value = 2} : i32
        %nr = shr %n, %c2 : i32
        %c32 = constant {value = 32} : tile<1024xi32>
        %shifted = sub %offs, %c32 : tile<1024xi32>
        %rn = shr %shifted, %four : tile<1024xi32>
        %sn = splat %n : tile<1024xi32>
        %unknown = shl %offs, %sn : tile<1024xi32>
    """, "%n: i32", (16,))
    assert a.cdk("l") == ((1,), (4,), (1,))
    assert a.cdk("rs") == ((1,), (1,), (16,))
    assert a.cdk("nr") == ((1,), (4,), (1,))
    assert a.cdk("rn") == ((1,), (1,), (16,))  # an arithmetic shift rounds down: no sign needed
    assert a.cdk("unknown") == ((1,), (1,), (1,))


def test_or_and_xor_keep_the_common_low_zeros() -> None:
    a = run("""
        %s = splat %n : tile<64xi32>
        %c = constant {value = 4} : tile<64xi32>
        %o = or %s, %c : tile<64xi32>
        %z = constant {value = 0} : tile<64xi32>
        %r = arange {start = 0, end = 64} : tile<64xi32>
        %x = xor %r, %z : tile<64xi32>
    """, "%n: i32", (16,))
    assert a.cdk("o") == ((1,), (4,), (64,))
    assert a.cdk("x") == ((64,), (M,), (1,))


# -- comparisons and choices ----------------------------------------------------------------
@pytest.mark.parametrize("pred,lhs_offs,div,constancy", [
    ("lt", True, 16, 16),   # offs < n: a mask for 16 elements at a time when 16 | n
    ("lt", True, 1, 1),     # n unknown: any lane may be the last
    ("ge", True, 16, 16),
    ("le", True, 16, 1),    # offs <= n flips after n, which may start a chunk
    ("eq", True, 16, 1),
    ("gt", False, 16, 16),  # n > offs
    ("le", False, 16, 16),  # n <= offs
    ("lt", False, 16, 1),
])
def test_masks_are_constant_over_aligned_chunks(pred: str, lhs_offs: bool, div: int, constancy: int) -> None:
    lhs, rhs = ("%offs", "%sn") if lhs_offs else ("%sn", "%offs")
    a = offsets(f"""
        %sn = splat %n : tile<1024xi32>
        %mask = cmp {lhs}, {rhs} {{predicate = "{pred}"}} : tile<1024xi1>
    """, "%n: i32", (div,))
    assert a.cdk("mask") == ((1,), (1,), (constancy,))


def test_select_min_max() -> None:
    a = offsets("""
        %c2048 = constant {value = 2048} : tile<1024xi32>
        %far = add %offs, %c2048 : tile<1024xi32>
        %sn = splat %n : tile<1024xi32>
        %mask = cmp %offs, %sn {predicate = "lt"} : tile<1024xi1>
        %sel = select %mask, %offs, %far : tile<1024xi32>
        %lo = minimum %offs, %far : tile<1024xi32>
        %cap = minimum %offs, %sn : tile<1024xi32>
        %t = constant {value = true} : tile<1024xi1>
        %pick = select %t, %far, %offs : tile<1024xi32>
    """, "%n: i32", (16,))
    assert a.cdk("sel") == ((16,), (16,), (1,))  # the choice changes only between chunks of 16
    assert a.cdk("lo") == ((1024,), (1024,), (1,))  # two runs differ by a constant: one wins
    assert a.cdk("cap") == ((1,), (1,), (1,))
    assert a.cdk("pick") == ((1024,), (1024,), (1,))


def test_convert_keeps_integers_and_makes_masks() -> None:
    a = offsets("""
        %wide = convert %offs : tile<1024xi64>
        %c64 = constant {value = 64} : tile<1024xi32>
        %q = idiv %offs, %c64 : tile<1024xi32>
        %b = convert %q : tile<1024xi1>
        %f = convert %offs : tile<1024xf32>
        %back = convert %f : tile<1024xi32>
    """)
    assert a.cdk("wide") == ((1024,), (1024,), (1,))
    assert a["wide"].non_negative
    assert a.cdk("b") == ((1,), (1,), (64,))
    assert a.cdk("back") == ((1,), (1,), (1,))  # through a float: nothing known


# -- pointers -----------------------------------------------------------------------------
def test_addptr_aligns_in_bytes_and_runs_in_elements() -> None:
    a = offsets("""
        %px = splat %x : tile<1024xptr<f32>>
        %p = addptr %px, %offs : tile<1024xptr<f32>>
        %py = splat %y : tile<1024xptr<f32>>
        %q = addptr %py, %offs : tile<1024xptr<f32>>
        %ph = splat %h : tile<1024xptr<f16>>
        %two = constant {value = 2} : tile<1024xi32>
        %even = mul %offs, %two : tile<1024xi32>
        %strided = addptr %ph, %even : tile<1024xptr<f16>>
        %zero = constant {value = 0} : tile<1024xi32>
        %same = addptr %px, %zero : tile<1024xptr<f32>>
    """, "%x: ptr<f32>, %y: ptr<f32>, %h: ptr<f16>", (16, 1, 16))
    assert a.cdk("p") == ((1024,), (16,), (1,))
    assert a.cdk("q") == ((1024,), (4,), (1,))  # natural alignment only
    assert a.cdk("strided") == ((1,), (4,), (1,))  # every other half: 4-byte steps
    assert a.cdk("same") == ((1,), (16,), (1024,))
    assert a.vector("p", 0, 4) == 4
    assert a.vector("q", 0, 4) == 1
    assert a.vector("p", 0, 4, max_bytes=8) == 2
    assert a.vector("strided", 0, 2) == 1


def test_pointer_casts_count_in_new_units() -> None:
    a = offsets("""
        %px = splat %x : tile<1024xptr<f32>>
        %p = addptr %px, %offs : tile<1024xptr<f32>>
        %asint = bitcast %p : tile<1024xptr<i32>>
        %ashalf = bitcast %p : tile<1024xptr<f16>>
        %addr = ptrtoint %p : tile<1024xi64>
        %pb = splat %b : tile<1024xptr<i8>>
        %bytes = addptr %pb, %offs : tile<1024xptr<i8>>
        %baddr = ptrtoint %bytes : tile<1024xi64>
        %back = inttoptr %baddr : tile<1024xptr<i8>>
    """, "%x: ptr<f32>, %b: ptr<i8>", (16, 16))
    assert a.cdk("asint") == ((1024,), (16,), (1,))
    assert a.cdk("ashalf") == ((1,), (4,), (1,))
    assert a.cdk("addr") == ((1,), (4,), (1,))
    assert a.cdk("baddr") == ((1024,), (16,), (1,))
    assert a.cdk("back") == ((1024,), (16,), (1,))


def test_two_dimensional_pointer_tile() -> None:
    # p + rows[:, None] * stride + cols[None, :] with stride:16
    a = run("""
        %rows = arange {start = 0, end = 32} : tile<32xi32>
        %cols = arange {start = 0, end = 64} : tile<64xi32>
        %r2 = expand_dims %rows {axis = 1} : tile<32x1xi32>
        %ss = splat %stride : tile<32x1xi32>
        %ro = mul %r2, %ss : tile<32x1xi32>
        %c2 = expand_dims %cols {axis = 0} : tile<1x64xi32>
        %rb = broadcast %ro : tile<32x64xi32>
        %cb = broadcast %c2 : tile<32x64xi32>
        %o = add %rb, %cb : tile<32x64xi32>
        %pp = splat %p : tile<32x64xptr<f16>>
        %ptrs = addptr %pp, %o : tile<32x64xptr<f16>>
    """, "%p: ptr<f16>, %stride: i32", (16, 16))
    assert a.cdk("ro") == ((1, 1), (16, 16), (1, 1))
    assert a.cdk("o") == ((1, 64), (1, 16), (1, 1))
    assert a.cdk("ptrs") == ((1, 64), (2, 16), (1, 1))
    assert a.vector("ptrs", 1, 2) == 8  # 16 bytes of f16 along the rows
    assert a.vector("ptrs", 0, 2) == 1


# -- hints --------------------------------------------------------------------------------
def test_hints_promise_what_cannot_be_proved() -> None:
    a = offsets("""
        %sm = splat %m : tile<1024xi32>
        %wrapped = rem %offs, %sm : tile<1024xi32>
        %mo = multiple_of %wrapped {values = [64]} : tile<1024xi32>
        %mc = max_contiguous %mo {values = [64]} : tile<1024xi32>
        %px = splat %x : tile<1024xptr<f16>>
        %p = addptr %px, %mc : tile<1024xptr<f16>>
        %weak = multiple_of %offs {values = [4]} : tile<1024xi32>
        %nm = multiple_of %n {values = [24]} : i32
        %pa = multiple_of %y {values = [16]} : ptr<f32>
    """, "%m: i32, %n: i32, %x: ptr<f16>, %y: ptr<f32>", (1, 1, 16, 1))
    assert a.cdk("wrapped") == ((1,), (1,), (1,))
    assert a.cdk("mo") == ((1,), (64,), (1,))
    assert a.cdk("mc") == ((64,), (64,), (1,))
    assert a.cdk("p") == ((64,), (16,), (1,))
    assert a.vector("p", 0, 2) == 8
    assert a.cdk("weak") == ((1024,), (1024,), (1,))  # a hint never forgets a proof
    assert a.cdk("nm") == ((1,), (8,), (1,))
    assert a.cdk("pa") == ((1,), (16,), (1,))  # bytes, for a pointer


def test_max_constancy_promises_runs_of_equal_values() -> None:
    # tl.max_constancy(x, 8): runs of 8 equal elements (a row index broadcast in disguise)
    a = offsets("""
        %sm = splat %m : tile<1024xi32>
        %wrapped = rem %offs, %sm : tile<1024xi32>
        %k = max_constancy %wrapped {values = [8]} : tile<1024xi32>
        %strong = max_constancy %sm {values = [8]} : tile<1024xi32>
    """, "%m: i32", (1,))
    assert a.cdk("wrapped") == ((1,), (1,), (1,))
    assert a.cdk("k") == ((1,), (1,), (8,))
    assert a.cdk("strong") == ((1,), (1,), (1024,))  # a hint never forgets a proof (a splat is all equal)


# -- control flow -------------------------------------------------------------------------
def test_for_induction_variable_is_a_multiple_of_lb_and_step() -> None:
    a = run("""
        %c0 = constant {value = 0} : i32
        %c1 = constant {value = 1} : i32
        %c16 = constant {value = 16} : i32
        %c32 = constant {value = 32} : i32
        for %c0, %n, %c16 {
        ^(%i: i32):
          yield
        }
        for %n, %m, %c32 {
        ^(%j: i32):
          yield
        }
        for %c1, %n, %c16 {
        ^(%k: i32):
          yield
        }
    """, "%n: i32, %m: i32", (16, 1))
    assert a.cdk("i") == ((1,), (16,), (1,))
    assert a["i"].non_negative
    assert a.cdk("j") == ((1,), (16,), (1,))
    assert not a["j"].non_negative
    assert a.cdk("k") == ((1,), (1,), (1,))


LOOP = """
%r = arange {start = 0, end = 64} : tile<64xi32>
%px = splat %x : tile<64xptr<f32>>
%p0 = addptr %px, %r : tile<64xptr<f32>>
%c0 = constant {value = 0} : i32
%c1 = constant {value = 1} : i32
%pend = for %c0, %n, %c1, %p0 : tile<64xptr<f32>> {
^(%i: i32, %p: tile<64xptr<f32>>):
  %inc = splat %step : tile<64xi32>
  %next = addptr %p, %inc : tile<64xptr<f32>>
  yield %next
}
"""


@pytest.mark.parametrize("step_div,alignment", [(16, 16), (4, 16), (2, 8), (1, 4)])
def test_loop_carried_pointers_keep_the_alignment_their_increment_keeps(step_div: int, alignment: int) -> None:
    a = run(LOOP, "%x: ptr<f32>, %n: i32, %step: i32", (16, 1, step_div))
    assert a.cdk("p") == ((64,), (alignment,), (1,))
    assert a.cdk("next") == ((64,), (alignment,), (1,))
    assert a.cdk("pend") == ((64,), (alignment,), (1,))


def test_loop_carried_integers_reach_a_fixed_point() -> None:
    a = run("""
        %c0 = constant {value = 0} : i32
        %c1 = constant {value = 1} : i32
        %c4 = constant {value = 4} : i32
        %c64 = constant {value = 64} : i32
        %a, %b, %d = for %c0, %n, %c1, %c0, %c0, %c64 : i32, i32, i32 {
        ^(%i: i32, %x: i32, %y: i32, %z: i32):
          %x1 = add %x, %c64 : i32
          %y1 = add %y, %c1 : i32
          %z1 = mul %z, %c4 : i32
          yield %x1, %y1, %z1
        }
    """, "%n: i32")
    assert a.cdk("x") == ((1,), (64,), (1,))  # 0, 64, 128...
    assert a.cdk("y") == ((1,), (1,), (1,))  # 0, 1, 2...
    assert a.cdk("z") == ((1,), (64,), (1,))  # 64, 256, 1024...
    assert a["a"].constant is None and a["x"].non_negative
    assert a.cdk("d") == ((1,), (64,), (1,))


def test_if_results_are_the_meet_of_both_branches() -> None:
    a = offsets("""
        %c16 = constant {value = 16} : tile<1024xi32>
        %c0 = constant {value = 0} : i32
        %cond = cmp %n, %c0 {predicate = "gt"} : i1
        %v = if %cond : tile<1024xi32> {
        ^():
          yield %offs
        } {
        ^():
          %moved = add %offs, %c16 : tile<1024xi32>
          yield %moved
        }
        %t = constant {value = true} : i1
        %w = if %t : tile<1024xi32> {
        ^():
          yield %offs
        } {
        ^():
          yield %c16
        }
    """, "%n: i32")
    assert a.cdk("v") == ((1024,), (16,), (1,))
    assert a.cdk("w") == ((1024,), (1024,), (1,))  # the condition is known


def test_while_loop_carries_the_meet() -> None:
    a = run("""
        %c0 = constant {value = 0} : i32
        %c32 = constant {value = 32} : i32
        %out = while %c0 : i32 {
        ^(%x: i32):
          %go = cmp %x, %n {predicate = "lt"} : i1
          condition %go, %x
        } {
        ^(%y: i32):
          %y1 = add %y, %c32 : i32
          yield %y1
        }
    """, "%n: i32")
    assert a.cdk("x") == ((1,), (32,), (1,))
    assert a.cdk("y1") == ((1,), (32,), (1,))
    assert a.cdk("out") == ((1,), (32,), (1,))


# -- unknowns and the API -------------------------------------------------------------------
def test_loads_reductions_and_floats() -> None:
    a = offsets("""
        %px = splat %x : tile<1024xptr<i32>>
        %p = addptr %px, %offs : tile<1024xptr<i32>>
        %v = load %p : tile<1024xi32>
        %sum = reduce %offs {axis = 0, kind = "sum"} : i32
        %am = reduce %v {axis = 0, kind = "argmax"} : i32
        %f = convert %offs : tile<1024xf32>
    """, "%x: ptr<i32>", (16,))
    assert a.cdk("v") == ((1,), (1,), (1,))
    assert a.cdk("sum") == ((1,), (1,), (1,))
    assert a["am"].non_negative
    assert a["f"] == AxisInfo.unknown(1)  # floats are not tracked


def test_axis_info_prints_its_facts() -> None:
    a = offsets("")
    assert str(a["offs"]) == "contiguity=[1024] divisibility=[1024] constancy=[1] non_negative"
    assert str(a["block"]) == "contiguity=[1] divisibility=[1024] constancy=[1] constant=1024 non_negative"


def test_api_errors() -> None:
    a = offsets("", "%x: ptr<f32>", (16,))
    with pytest.raises(TypeError, match="needs pointers"):
        a.vector("offs", 0, 4)
    with pytest.raises(ValueError, match="powers of two"):
        a.vector("x", 0, 3)
    with pytest.raises(ValueError, match="out of range"):
        a.vector("x", 1, 4)
    with pytest.raises(TypeError, match="takes a 'func'"):
        analyze(a.module)
    stranger = run("%z = constant {value = 1} : i32").values["z"]
    with pytest.raises(KeyError, match="not a value of the analyzed function"):
        a.map.info(stranger)
