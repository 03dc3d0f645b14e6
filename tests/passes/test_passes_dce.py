"""``dce``: unused pure ops go; side effects, terminators and loops that may not end stay."""

from __future__ import annotations

from passes_helpers import check, unchanged

from tlxc.ir.passes import PassOptions, dce

DCE = [("dce", dce.run)]
ARGS = "%p: ptr<i32>, %x: i32, %y: i32, %c: i1"


def test_dead_chains_go_in_one_run() -> None:
    check("""
          %0 = add %x, %y : i32
          %1 = mul %0, %0 : i32
          %2 = splat %1 : tile<4xi32>
          %3 = constant {value = 3} : i32
          %4 = sub %x, %3 : i32
          store %p, %4
          return
          """, """
          %0 = constant {value = 3} : i32
          %1 = sub %x, %0 : i32
          store %p, %1
          return
          """, args=ARGS, passes=DCE)


def test_side_effects_and_terminators_stay() -> None:
    unchanged("""
              %0 = load %p : i32
              %1 = load %p {volatile = true} : i32
              store %p, %x
              assert %c {message = "x"}
              return
              """, args=ARGS, passes=DCE)


def test_dead_ops_in_nested_regions() -> None:
    check("""
          %0 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %1: i32):
            %2 = mul %i, %i : i32
            store %p, %1
            yield %i
          }
          store %p, %0
          return
          """, """
          %0 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %1: i32):
            store %p, %1
            yield %i
          }
          store %p, %0
          return
          """, args=ARGS, passes=DCE)


def test_unused_pure_if_goes_and_effectful_if_stays() -> None:
    check("""
          %0 = if %c : i32 {
          ^():
            %1 = add %x, %y : i32
            yield %1
          } {
          ^():
            yield %y
          }
          if %c {
          ^():
            store %p, %x
            yield
          } {
          ^():
            yield
          }
          return
          """, """
          if %c {
          ^():
            store %p, %x
            yield
          } {
          ^():
            yield
          }
          return
          """, args=ARGS, passes=DCE)


def test_unused_if_results_are_dropped() -> None:
    check("""
          %0, %1 = if %c : i32, i32 {
          ^():
            %2 = add %x, %y : i32
            store %p, %x
            yield %2, %x
          } {
          ^():
            %3 = mul %x, %y : i32
            yield %y, %3
          }
          store %p, %1
          return
          """, """
          %0 = if %c : i32 {
          ^():
            store %p, %x
            yield %x
          } {
          ^():
            %1 = mul %x, %y : i32
            yield %1
          }
          store %p, %0
          return
          """, args=ARGS, passes=DCE)


def test_unused_loop_carried_values_are_dropped() -> None:
    # slot 0 only passes its value on, slot 1 ignores it: both go; slot 2 is used
    check("""
          %0, %1, %2 = for %x, %y, %x, %x, %y, %x : i32, i32, i32 {
          ^(%i: i32, %3: i32, %4: i32, %5: i32):
            %6 = add %5, %i : i32
            %7 = mul %i, %i : i32
            yield %3, %7, %6
          }
          store %p, %2
          return
          """, """
          %0 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %1: i32):
            %2 = add %1, %i : i32
            yield %2
          }
          store %p, %0
          return
          """, args=ARGS, passes=DCE)


def test_loop_carried_values_that_feed_others_stay() -> None:
    # slot 0 feeds slot 1 and stays; slot 2 only feeds its own slot through an add (a dead
    # cycle, like a pointer advanced every iteration and never read): it goes, add and all
    check("""
          %0, %1, %2 = for %x, %y, %x, %x, %y, %x : i32, i32, i32 {
          ^(%i: i32, %3: i32, %4: i32, %5: i32):
            %6 = add %5, %i : i32
            yield %3, %3, %6
          }
          store %p, %1
          return
          """, """
          %0, %1 = for %x, %y, %x, %x, %y : i32, i32 {
          ^(%i: i32, %2: i32, %3: i32):
            yield %2, %2
          }
          store %p, %1
          return
          """, args=ARGS, passes=DCE)
    # a cycle whose value also leaves through another slot stays
    unchanged("""
              %0, %1 = for %x, %y, %x, %x, %y : i32, i32 {
              ^(%i: i32, %2: i32, %3: i32):
                %4 = add %2, %i : i32
                yield %4, %4
              }
              store %p, %1
              return
              """, args=ARGS, passes=DCE)


def test_a_carried_value_an_if_keeps_or_replaces_goes_when_only_its_slot_reads_it() -> None:
    # flatten-loops' per-tile index: recomputed under `if first`, kept otherwise, read by
    # nothing once the loads moved -- slot 1 goes with the if's result for it; slot 0's
    # if result is read (the store) and stays, with the if
    check("""
          %0, %1 = for %x, %y, %x, %x, %y : i32, i32 {
          ^(%i: i32, %2: i32, %3: i32):
            %4 = cmp %i, %x {predicate = "eq"} : i1
            %5, %6 = if %4 : i32, i32 {
            ^():
              %7 = mul %i, %i : i32
              yield %7, %7
            } {
            ^():
              yield %2, %3
            }
            store %p, %5
            yield %5, %6
          }
          return
          """, """
          %0 = for %x, %y, %x, %x : i32 {
          ^(%i: i32, %1: i32):
            %2 = cmp %i, %x {predicate = "eq"} : i1
            %3 = if %2 : i32 {
            ^():
              %4 = mul %i, %i : i32
              yield %4
            } {
            ^():
              yield %1
            }
            store %p, %3
            yield %3
          }
          return
          """, args=ARGS, passes=DCE)


def test_pure_loop_with_unused_results_goes_when_its_step_is_known() -> None:
    body = """
           %0 = constant {{value = {step}}} : i32
           %1 = for %x, %y, {step_value}, %x : i32 {{
           ^(%i: i32, %2: i32):
             %3 = add %2, %i : i32
             yield %3
           }}
           return
           """
    check(body.format(step="1", step_value="%0"), """
          return
          """, args=ARGS, passes=DCE)
    # a step of 0 (or one not known) may never end, so the loop stays; its dead carried
    # value (it feeds only its own slot) goes
    check(body.format(step="0", step_value="%0"), """
          %0 = constant {value = 0} : i32
          for %x, %y, %0 {
          ^(%i: i32):
            yield
          }
          return
          """, args=ARGS, passes=DCE)
    check(body.format(step="1", step_value="%x"), """
          for %x, %y, %x {
          ^(%i: i32):
            yield
          }
          return
          """, args=ARGS, passes=DCE)


def test_while_stays() -> None:
    unchanged("""
              %0 = while %x : i32 {
              ^(%1: i32):
                %2 = cmp %1, %y {predicate = "lt"} : i1
                condition %2, %1
              } {
              ^(%3: i32):
                %4 = add %3, %3 : i32
                yield %4
              }
              return
              """, args=ARGS, passes=DCE)


def test_region_op_removal_can_be_turned_off() -> None:
    text = """
           %0, %1 = if %c : i32, i32 {
           ^():
             yield %x, %y
           } {
           ^():
             yield %y, %x
           }
           store %p, %0
           return
           """
    unchanged(text, args=ARGS, passes=DCE, options=PassOptions(dce_region_ops=False))
