"""``fold``: constant folding and algebraic simplification, as IR text in and out.

Most cases run the canonicalization group (fold, cse, dce) so that the constants a fold
leaves behind are gone; the first tests run ``fold`` alone to show where its constants go.
"""

from __future__ import annotations

import pytest
from passes_helpers import check, unchanged

from tlxc.ir.passes import PassOptions, fold

FOLD = [("fold", fold.run)]


def test_fold_alone_places_the_constant_where_the_op_was_with_its_loc() -> None:
    check(
        """
        %0 = constant {value = 3} : i32 loc(1:0)
        %1 = constant {value = 4} : i32 loc(2:0)
        %2 = mul %0, %1 : i32 loc(3:7)
        %3 = add %n, %2 : i32 loc(4:0)
        return loc(5:0)
        """,
        """
        %0 = constant {value = 3} : i32 loc(1:0)
        %1 = constant {value = 4} : i32 loc(2:0)
        %2 = constant {value = 12} : i32 loc(3:7)
        %3 = add %n, %2 : i32 loc(4:0)
        return loc(5:0)
        """,
        args="%n: i32", passes=FOLD)


def _binary(op: str, t: str, a: str, b: str) -> str:
    return f"""
    %0 = constant {{value = {a}}} : {t}
    %1 = constant {{value = {b}}} : {t}
    %2 = {op} %0, %1 : {t}
    store %p, %2
    return
    """


def _stored(t: str, value: str) -> str:
    return f"""
    %0 = constant {{value = {value}}} : {t}
    store %p, %0
    return
    """


@pytest.mark.parametrize("op, t, a, b, want", [
    ("idiv", "i32", "-2147483648", "-1", "-2147483648"),   # INT_MIN / -1 wraps
    ("rem", "i32", "-2147483648", "-1", "0"),
    ("idiv", "i32", "-7", "2", "-3"),                      # truncates toward zero
    ("rem", "i32", "-7", "2", "-1"),
    ("shr", "u32", "4294967288", "1", "2147483644"),       # logical on unsigned
    ("shr", "i32", "-8", "1", "-4"),                       # arithmetic on signed
    ("add", "i8", "127", "1", "-128"),                     # i8 wraps around
    ("mul", "i8", "64", "4", "0"),
    ("sub", "u8", "0", "1", "255"),
    ("shl", "i64", "1", "63", "-9223372036854775808"),
    ("and", "i16", "-1", "255", "255"),
    ("or", "u16", "61440", "15", "61455"),
    ("xor", "i32", "5", "3", "6"),
    ("minimum", "u32", "4294967295", "7", "7"),
    ("maximum", "i32", "-1", "-5", "-1"),
    ("add", "f32", "0.1", "0.2", "0.30000001192092896"),  # rounded once, in f32
    ("add", "f16", "65504.0", "32.0", "inf"),
    ("mul", "bf16", "3.0", "0.5", "1.5"),
    ("sub", "f64", "1.0", "0.25", "0.75"),
    ("div", "f32", "1.0", "4.0", "0.25"),
    ("rem", "f32", "-7.5", "2.0", "-1.5"),
])
def test_binary_of_constants(op: str, t: str, a: str, b: str, want: str) -> None:
    check(_binary(op, t, a, b), _stored(t, want), args=f"%p: ptr<{t}>")


@pytest.mark.parametrize("op, t, a, b", [
    ("idiv", "i32", "7", "0"),          # division by zero stays for the target
    ("rem", "u8", "7", "0"),
    ("shl", "i32", "1", "32"),          # shift by the width or more
    ("shr", "i32", "1", "-1"),
    ("minimum", "f32", "nan", "1.0"),   # NaN without propagate_nan: target's choice
    ("maximum", "f32", "-0.0", "0.0"),
    ("add", "f8e4m3", "1.0", "2.0"),    # no fp8 arithmetic
])
def test_binary_of_constants_refused(op: str, t: str, a: str, b: str) -> None:
    unchanged(_binary(op, t, a, b), args=f"%p: ptr<{t}>")


def test_float_folding_can_be_turned_off() -> None:
    unchanged(_binary("add", "f32", "1.0", "2.0"), args="%p: ptr<f32>",
              options=PassOptions(fold_floats=False))
    check(_binary("add", "i32", "1", "2"), _stored("i32", "3"), args="%p: ptr<i32>",
          options=PassOptions(fold_floats=False))


@pytest.mark.parametrize("op, t, a, want", [
    ("neg", "i32", "-2147483648", "-2147483648"),
    ("neg", "f32", "0.0", "-0.0"),
    ("not", "u8", "15", "240"),
    ("abs", "i8", "-128", "-128"),
    ("abs", "f16", "-2.5", "2.5"),
])
def test_unary_of_constant(op: str, t: str, a: str, want: str) -> None:
    check(f"""
          %0 = constant {{value = {a}}} : {t}
          %1 = {op} %0 : {t}
          store %p, %1
          return
          """, _stored(t, want), args=f"%p: ptr<{t}>")


def test_math_is_not_folded() -> None:
    unchanged("""
              %0 = constant {value = 1.0} : f32
              %1 = exp %0 : f32
              store %p, %1
              return
              """, args="%p: ptr<f32>")


@pytest.mark.parametrize("t, pred, a, b, want", [
    ("i32", "lt", "-1", "0", "true"),
    ("u32", "lt", "4294967295", "0", "false"),   # unsigned by the type
    ("f32", "ne", "nan", "nan", "true"),          # ne is unordered
    ("f32", "eq", "nan", "nan", "false"),
    ("f32", "le", "-0.0", "0.0", "true"),
])
def test_cmp_of_constants(t: str, pred: str, a: str, b: str, want: str) -> None:
    check(f"""
          %0 = constant {{value = {a}}} : {t}
          %1 = constant {{value = {b}}} : {t}
          %2 = cmp %0, %1 {{predicate = "{pred}"}} : i1
          store %p, %2
          return
          """, _stored("i1", want), args="%p: ptr<i1>")


@pytest.mark.parametrize("src, a, dst, want", [
    ("i8", "-1", "i32", "-1"),
    ("u8", "255", "i32", "255"),
    ("i32", "300", "i8", "44"),
    ("i32", "2", "i1", "true"),
    ("i32", "16777216", "f32", "16777216.0"),
    ("f32", "-3.0", "i16", "-3"),
    ("f32", "1.5", "f16", "1.5"),
])
def test_convert_of_constant(src: str, a: str, dst: str, want: str) -> None:
    check(f"""
          %0 = constant {{value = {a}}} : {src}
          %1 = convert %0 : {dst}
          store %p, %1
          return
          """, _stored(dst, want), args=f"%p: ptr<{dst}>")


@pytest.mark.parametrize("src, a, dst", [
    ("i32", "16777217", "f32"),   # not exact in f32
    ("f32", "2.5", "i32"),        # truncation loses the fraction
    ("f32", "1000.0", "i8"),      # would saturate
    ("f32", "0.1", "f16"),        # would round
])
def test_inexact_convert_is_not_folded(src: str, a: str, dst: str) -> None:
    unchanged(f"""
              %0 = constant {{value = {a}}} : {src}
              %1 = convert %0 : {dst}
              store %p, %1
              return
              """, args=f"%p: ptr<{dst}>")


def test_splat_and_shape_ops_of_constants() -> None:
    check("""
          %0 = constant {value = 2} : i32
          %1 = splat %0 : tile<4xi32>
          %2 = expand_dims %1 {axis = 0} : tile<1x4xi32>
          %3 = broadcast %2 : tile<8x4xi32>
          %4 = trans %3 {order = [1, 0]} : tile<4x8xi32>
          %5 = reshape %4 : tile<32xi32>
          %6 = constant {value = 3} : tile<32xi32>
          %7 = mul %5, %6 : tile<32xi32>
          %8 = splat %p : tile<32xptr<i32>>
          store %8, %7
          return
          """, """
          %0 = constant {value = 6} : tile<32xi32>
          %1 = splat %p : tile<32xptr<i32>>
          store %1, %0
          return
          """, args="%p: ptr<i32>")


def test_select() -> None:
    check("""
          %0 = constant {value = false} : i1
          %1 = select %0, %a, %b : i32
          %2 = select %c, %1, %1 : i32
          store %p, %2
          return
          """, """
          store %p, %b
          return
          """, args="%p: ptr<i32>, %a: i32, %b: i32, %c: i1")


def test_select_with_a_splat_constant_condition() -> None:
    check("""
          %0 = constant {value = true} : tile<4xi1>
          %1 = splat %a : tile<4xi32>
          %2 = splat %b : tile<4xi32>
          %3 = select %0, %1, %2 : tile<4xi32>
          %4 = splat %p : tile<4xptr<i32>>
          store %4, %3
          return
          """, """
          %0 = splat %a : tile<4xi32>
          %1 = splat %p : tile<4xptr<i32>>
          store %1, %0
          return
          """, args="%p: ptr<i32>, %a: i32, %b: i32")


@pytest.mark.parametrize("t, op, c, swap", [
    ("i32", "add", "0", False), ("i32", "add", "0", True), ("i32", "sub", "0", False),
    ("i32", "mul", "1", False), ("u8", "mul", "1", True), ("i32", "or", "0", True),
    ("i32", "xor", "0", False), ("i32", "and", "-1", False), ("u16", "and", "65535", True),
    ("i1", "and", "true", False), ("i32", "idiv", "1", False), ("i32", "shl", "0", False),
    ("u32", "shr", "0", False),
    ("f32", "add", "-0.0", True), ("f32", "sub", "0.0", False), ("f32", "mul", "1.0", True),
])
def test_identity_gives_the_other_operand(t: str, op: str, c: str, swap: bool) -> None:
    operands = "%0, %x" if swap else "%x, %0"
    check(f"""
          %0 = constant {{value = {c}}} : {t}
          %1 = {op} {operands} : {t}
          store %p, %1
          return
          """, """
          store %p, %x
          return
          """, args=f"%p: ptr<{t}>, %x: {t}")


@pytest.mark.parametrize("op, c", [("mul", "0"), ("and", "0"), ("or", "-1")])
def test_absorbing_integer_constant(op: str, c: str) -> None:
    check(f"""
          %0 = constant {{value = {c}}} : i32
          %1 = {op} %x, %0 : i32
          store %p, %1
          return
          """, _stored("i32", c), args="%p: ptr<i32>, %x: i32")


@pytest.mark.parametrize("op, c", [
    ("add", "0.0"),     # -0.0 + 0.0 is +0.0
    ("sub", "-0.0"),
    ("mul", "0.0"),     # inf * 0.0 is NaN
    ("sub", "0", ),     # not an identity the other way round: 0 - x
])
def test_non_identities_stay(op: str, c: str) -> None:
    t = "i32" if c == "0" else "f32"
    operands = "%0, %x" if c == "0" else "%x, %0"
    unchanged(f"""
              %0 = constant {{value = {c}}} : {t}
              %1 = {op} {operands} : {t}
              store %p, %1
              return
              """, args=f"%p: ptr<{t}>, %x: {t}")


def test_same_operand_twice() -> None:
    check("""
          %0 = sub %x, %x : i32
          %1 = xor %x, %x : i32
          %2 = and %x, %x : i32
          %3 = maximum %y, %y : f32
          %4 = sub %y, %y : f32
          store %p, %0
          store %p, %1
          store %p, %2
          store %q, %3
          store %q, %4
          return
          """, """
          %0 = constant {value = 0} : i32
          %1 = sub %y, %y : f32
          store %p, %0
          store %p, %0
          store %p, %x
          store %q, %y
          store %q, %1
          return
          """, args="%p: ptr<i32>, %q: ptr<f32>, %x: i32, %y: f32")


def test_addptr_of_zero() -> None:
    check("""
          %0 = constant {value = 0} : tile<4xi32>
          %1 = splat %p : tile<4xptr<f32>>
          %2 = addptr %1, %0 : tile<4xptr<f32>>
          %3 = load %2 : tile<4xf32>
          return
          """, """
          %0 = splat %p : tile<4xptr<f32>>
          %1 = load %0 : tile<4xf32>
          return
          """, args="%p: ptr<f32>")


IF_TEXT = """
%0 = constant {{value = {cond}}} : i1
%1, %2 = if %0 : i32, i32 {{
^():
  %3 = add %x, %x : i32
  store %p, %3
  yield %3, %x
}} {{
^():
  %4 = mul %x, %x : i32
  yield %x, %4
}}
%5 = add %1, %2 : i32
store %p, %5
return
"""


def test_if_with_true_condition_is_inlined() -> None:
    check(IF_TEXT.format(cond="true"), """
          %0 = add %x, %x : i32
          store %p, %0
          %1 = add %0, %x : i32
          store %p, %1
          return
          """, args="%p: ptr<i32>, %x: i32")


def test_if_with_false_condition_is_inlined() -> None:
    check(IF_TEXT.format(cond="false"), """
          %0 = mul %x, %x : i32
          %1 = add %x, %0 : i32
          store %p, %1
          return
          """, args="%p: ptr<i32>, %x: i32")


def test_if_folded_by_fold_alone_keeps_the_taken_ops() -> None:
    check("""
          %0 = constant {value = 1} : i32
          %1 = constant {value = 2} : i32
          %2 = cmp %0, %1 {predicate = "lt"} : i1
          if %2 {
          ^():
            store %p, %x
            yield
          } {
          ^():
            yield
          }
          return
          """, """
          %0 = constant {value = 1} : i32
          %1 = constant {value = 2} : i32
          %2 = constant {value = true} : i1
          store %p, %x
          return
          """, args="%p: ptr<i32>, %x: i32", passes=FOLD)


FOR_TEXT = """
%0 = constant {{value = {lb}}} : i32
%1 = constant {{value = {ub}}} : i32
%2 = constant {{value = {step}}} : i32
%3 = for %0, %1, %2, %x : i32 {{
^(%i: i32, %4: i32):
  store %p, %i
  %5 = add %4, %i : i32
  yield %5
}}
store %p, %3
return
"""


@pytest.mark.parametrize("lb, ub", [("4", "4"), ("5", "-3")])
def test_for_with_zero_trips_gives_its_inits(lb: str, ub: str) -> None:
    check(FOR_TEXT.format(lb=lb, ub=ub, step="1"), """
          store %p, %x
          return
          """, args="%p: ptr<i32>, %x: i32")


@pytest.mark.parametrize("lb, ub, step", [("0", "2", "1"), ("4", "0", "-1"), ("4", "0", "0")])
def test_for_that_may_run_stays(lb: str, ub: str, step: str) -> None:
    unchanged(FOR_TEXT.format(lb=lb, ub=ub, step=step), args="%p: ptr<i32>, %x: i32", passes=FOLD)


@pytest.mark.parametrize("lb, ub, step", [("3", "4", "1"), ("3", "5", "4")])
def test_for_with_one_trip_is_its_body(lb: str, ub: str, step: str) -> None:
    """(what loop-unroll leaves of a loop of constant trips: its unrolled copy runs once)"""
    check(FOR_TEXT.format(lb=lb, ub=ub, step=step), f"""
          %0 = constant {{value = {lb}}} : i32
          store %p, %0
          %1 = add %x, %0 : i32
          store %p, %1
          return
          """, args="%p: ptr<i32>, %x: i32")


def test_folding_inside_nested_regions() -> None:
    check("""
          %0 = constant {value = 0} : i32
          %1 = for %0, %n, %n, %x : i32 {
          ^(%i: i32, %2: i32):
            %3 = constant {value = 5} : i32
            %4 = constant {value = 6} : i32
            %5 = add %3, %4 : i32
            %6 = add %2, %5 : i32
            yield %6
          }
          store %p, %1
          return
          """, """
          %0 = constant {value = 0} : i32
          %1 = for %0, %n, %n, %x : i32 {
          ^(%i: i32, %2: i32):
            %3 = constant {value = 11} : i32
            %4 = add %2, %3 : i32
            yield %4
          }
          store %p, %1
          return
          """, args="%p: ptr<i32>, %x: i32, %n: i32")
