"""``cse``: pure ops merge within their scope, never out of a nested region."""

from __future__ import annotations

from passes_helpers import check, unchanged

from tlxc.ir.passes import cse

CSE = [("cse", cse.run)]
ARGS = "%p: ptr<i32>, %x: i32, %y: i32, %c: i1"


def test_equal_pure_ops_merge() -> None:
    check("""
          %0 = add %x, %y : i32
          %1 = add %x, %y : i32
          %2 = mul %0, %1 : i32
          %3 = mul %1, %0 : i32
          store %p, %2
          store %p, %3
          return
          """, """
          %0 = add %x, %y : i32
          %1 = mul %0, %0 : i32
          store %p, %1
          store %p, %1
          return
          """, args=ARGS, passes=CSE)


def test_commutative_operands_in_either_order() -> None:
    check("""
          %0 = add %x, %y : i32
          %1 = add %y, %x : i32
          %2 = sub %x, %y : i32
          %3 = sub %y, %x : i32
          store %p, %1
          store %p, %2
          store %p, %3
          return
          """, """
          %0 = add %x, %y : i32
          %1 = sub %x, %y : i32
          %2 = sub %y, %x : i32
          store %p, %0
          store %p, %1
          store %p, %2
          return
          """, args=ARGS, passes=CSE)


def test_attributes_and_types_must_match() -> None:
    unchanged("""
              %0 = cmp %x, %y {predicate = "lt"} : i1
              %1 = cmp %x, %y {predicate = "gt"} : i1
              %2 = constant {value = 0.0} : f32
              %3 = constant {value = -0.0} : f32
              %4 = constant {value = 1} : i32
              %5 = constant {value = 1} : u32
              %6 = program_id {axis = 0} : i32
              %7 = program_id {axis = 1} : i32
              return
              """, args=ARGS, passes=CSE)


def test_constants_and_program_ids_merge() -> None:
    check("""
          %0 = constant {value = 1.5} : tile<4xf32>
          %1 = constant {value = 1.5} : tile<4xf32>
          %2 = program_id {axis = 0} : i32
          %3 = program_id {axis = 0} : i32
          %4 = add %0, %1 : tile<4xf32>
          %5 = add %2, %3 : i32
          return
          """, """
          %0 = constant {value = 1.5} : tile<4xf32>
          %1 = program_id {axis = 0} : i32
          %2 = add %0, %0 : tile<4xf32>
          %3 = add %1, %1 : i32
          return
          """, args=ARGS, passes=CSE)


def test_loads_never_merge() -> None:
    unchanged("""
              %0 = load %p : i32
              %1 = load %p : i32
              %2 = add %0, %1 : i32
              store %p, %2
              return
              """, args=ARGS, passes=CSE)


def test_outer_value_replaces_one_in_a_nested_region() -> None:
    check("""
          %0 = mul %x, %y : i32
          %1 = if %c : i32 {
          ^():
            %2 = mul %x, %y : i32
            yield %2
          } {
          ^():
            %3 = mul %y, %x : i32
            yield %3
          }
          %4 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %5: i32):
            %6 = mul %x, %y : i32
            %7 = add %6, %5 : i32
            yield %7
          }
          store %p, %4
          return
          """, """
          %0 = mul %x, %y : i32
          %1 = if %c : i32 {
          ^():
            yield %0
          } {
          ^():
            yield %0
          }
          %2 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %3: i32):
            %4 = add %0, %3 : i32
            yield %4
          }
          store %p, %2
          return
          """, args=ARGS, passes=CSE)


def test_nested_value_never_replaces_one_outside_or_in_a_sibling() -> None:
    unchanged("""
              %0 = if %c : i32 {
              ^():
                %1 = sub %x, %y : i32
                yield %1
              } {
              ^():
                %2 = sub %x, %y : i32
                yield %2
              }
              %3 = sub %x, %y : i32
              store %p, %0
              store %p, %3
              return
              """, args=ARGS, passes=CSE)


def test_ops_with_regions_never_merge() -> None:
    unchanged("""
              %0 = if %c : i32 {
              ^():
                yield %x
              } {
              ^():
                yield %y
              }
              %1 = if %c : i32 {
              ^():
                yield %x
              } {
              ^():
                yield %y
              }
              store %p, %0
              store %p, %1
              return
              """, args=ARGS, passes=CSE)


def test_merging_inside_a_loop_body() -> None:
    check("""
          %0 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %1: i32):
            %2 = add %i, %1 : i32
            %3 = add %1, %i : i32
            %4 = mul %2, %3 : i32
            yield %4
          }
          store %p, %0
          return
          """, """
          %0 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %1: i32):
            %2 = add %i, %1 : i32
            %3 = mul %2, %2 : i32
            yield %3
          }
          store %p, %0
          return
          """, args=ARGS, passes=CSE)
