"""The named pipeline: fixed point, hooks for --print-before/--print-after/--time-passes,
verification after each pass and internal errors that name the pass."""

from __future__ import annotations

import io

import pytest
from passes_helpers import check, kernel, parse

from tlxc.errors import CompilationError, InternalCompilerError
from tlxc.ir import print_ir
from tlxc.ir.core import Operation
from tlxc.ir.passes import (
    CANONICALIZE,
    TILE_PIPELINE,
    PassOptions,
    canonicalize,
    evaluate,
    flatten_loops,
    fold,
    format_timings,
    ir_dumper,
    loop_unroll,
    multi_cta,
    reassociate_pointers,
    rebase_pointers,
    run_pipeline,
)
from tlxc.ir.passes.options import DEFAULT_OPTIONS

ARGS = "%p: ptr<i32>, %n: i32"
# fold finds nothing; cse makes %3 and %4 one value; only then can fold see x - x
NEEDS_TWO_ROUNDS = """
%0 = constant {value = 1} : i32
%1 = constant {value = 1} : i32
%2 = add %n, %0 : i32 loc(3:8)
%3 = add %n, %1 : i32
%4 = sub %2, %3 : i32 loc(4:8)
store %p, %4
return
"""


def test_the_pipeline_is_one_named_list() -> None:
    assert [name for name, _ in CANONICALIZE] == ["fold", "cse", "dce"]
    assert TILE_PIPELINE == [("multi-cta", multi_cta.run), ("flatten-loops", flatten_loops.run),
                             ("loop-unroll", loop_unroll.run), ("reassociate-pointers", reassociate_pointers.run),
                             ("rebase-pointers", rebase_pointers.run), ("canonicalize", CANONICALIZE)]


def test_canonicalize_runs_to_a_fixed_point() -> None:
    check(NEEDS_TWO_ROUNDS, """
          %0 = constant {value = 0} : i32 loc(4:8)
          store %p, %0
          return
          """, args=ARGS)
    module = canonicalize(parse(kernel(NEEDS_TWO_ROUNDS, ARGS)))
    assert print_ir(module) == kernel("""
        %0 = constant {value = 0} : i32 loc(4:8)
        store %p, %0
        return
        """, ARGS)


def test_the_number_of_rounds_is_bounded() -> None:
    check(NEEDS_TWO_ROUNDS, """
          %0 = constant {value = 1} : i32
          %1 = add %n, %0 : i32 loc(3:8)
          %2 = sub %1, %1 : i32 loc(4:8)
          store %p, %2
          return
          """, args=ARGS, options=PassOptions(max_iterations=1))


def test_a_fixed_point_is_a_fixed_point() -> None:
    once = print_ir(canonicalize(parse(kernel(NEEDS_TWO_ROUNDS, ARGS))))
    assert print_ir(canonicalize(parse(once))) == once


def test_timings_are_recorded_per_pass() -> None:
    timings: dict[str, float] = {}
    run_pipeline(parse(kernel(NEEDS_TWO_ROUNDS, ARGS)), PassOptions(), timings=timings)
    assert set(timings) == {"multi-cta", "flatten-loops", "loop-unroll", "reassociate-pointers", "rebase-pointers",
                            "fold", "cse", "dce"}
    assert all(isinstance(t, float) and t >= 0.0 for t in timings.values())
    report = format_timings(timings)
    assert "fold" in report and "total" in report


def test_dump_hook_sees_every_pass_before_and_after() -> None:
    calls: list[tuple[str, str]] = []
    texts: list[str] = []

    def dump(when: str, name: str, module: Operation) -> None:
        calls.append((when, name))
        texts.append(print_ir(module))

    run_pipeline(parse(kernel(NEEDS_TWO_ROUNDS, ARGS)), None, dump=dump)
    one_round = [(w, n) for n in ("fold", "cse", "dce") for w in ("before", "after")]
    # multi-cta, flatten-loops, loop-unroll, reassociate-pointers and rebase-pointers first (no loop
    # they apply to: nothing to do), then canonicalize: round 1 changes the IR, round 2 folds x - x, round 3 finds
    # nothing new
    firsts = [(w, n) for n in ("multi-cta", "flatten-loops", "loop-unroll", "reassociate-pointers",
                                    "rebase-pointers")
              for w in ("before", "after")]
    assert calls == firsts + one_round * 3
    assert texts[0] == kernel(NEEDS_TWO_ROUNDS, ARGS)


def test_ir_dumper_prints_the_named_passes() -> None:
    out = io.StringIO()
    run_pipeline(parse(kernel(NEEDS_TWO_ROUNDS, ARGS)), None,
                 dump=ir_dumper(before=["cse"], after=["all"], stream=out))
    text = out.getvalue()
    assert text.count("// -----// IR Dump Before cse //----- //") == 3
    assert text.count("// -----// IR Dump After fold //----- //") == 3
    assert "IR Dump Before fold" not in text
    assert "sub %2, %3" in text


def test_a_crash_in_a_pass_is_an_internal_error_with_the_users_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(evaluate, "eval_binary", broken)
    text = kernel("""
        %0 = constant {value = 1} : i32
        %1 = add %0, %0 : i32 loc(7:4)
        store %p, %1
        return
        """, ARGS)
    with pytest.raises(InternalCompilerError) as info:
        run_pipeline(parse(text))
    err = info.value
    assert err.code == "TLXC-INTERNAL-001"
    assert "pass 'fold'" in err.message and "ZeroDivisionError: boom" in err.message
    assert (err.loc.line, err.loc.col) == (7, 4)


def test_user_errors_pass_through_unchanged() -> None:
    def user_error(module: Operation, options: PassOptions) -> Operation:
        raise CompilationError("TLXC-INTERNAL-001", "a diagnostic raised on purpose")

    with pytest.raises(CompilationError) as info:
        run_pipeline(parse(kernel("return", ARGS)), None, [("check", user_error)])
    assert not isinstance(info.value, InternalCompilerError)


def test_invalid_ir_after_a_pass_is_caught_by_verify_each() -> None:
    from tlxc.ir import types as T

    def breaks_types(module: Operation, options: PassOptions) -> Operation:
        for op in module.walk():
            if op.NAME == "add":
                op.results[0].type = T.int64  # no longer the operand type
        return module

    text = kernel("""
        %0 = add %n, %n : i32 loc(9:1)
        return
        """, ARGS)
    run_pipeline(parse(text), None, [("breaks", breaks_types)])  # not checked without verify_each
    with pytest.raises(InternalCompilerError) as info:
        run_pipeline(parse(text), None, [("breaks", breaks_types)], verify_each=True)
    assert "pass 'breaks'" in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 9


def test_a_pass_must_return_the_module() -> None:
    with pytest.raises(InternalCompilerError, match="pass 'lost'"):
        run_pipeline(parse(kernel("return", ARGS)), None, [("lost", lambda m, o: None)])  # type: ignore


def test_options_are_frozen_and_checked() -> None:
    with pytest.raises(Exception):
        DEFAULT_OPTIONS.max_iterations = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        PassOptions(max_iterations=0)


def test_passes_can_run_alone() -> None:
    module = parse(kernel(NEEDS_TWO_ROUNDS, ARGS))
    assert fold.run(module, DEFAULT_OPTIONS) is module
