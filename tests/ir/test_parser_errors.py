"""Malformed IR text gives ``IRParseError`` pointing at the line and column at fault."""

from __future__ import annotations

import textwrap

import pytest

from tlxc.ir.parser import IRParseError, parse_ir, parse_type

ARGS = "%p: ptr<f32>, %n: i32, %x: f32, %c: i1, %t: tile<16xf32>, %q: tile<16xptr<f32>>"


def kernel(body: str, args: str = ARGS) -> str:
    """A module with one kernel; the first line of ``body`` is line 5 of the text."""
    ops = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return (f'module {{source = "k.py"}} {{\n^():\n  func {{sym_name = "k"}} {{\n  ^({args}):\n'
            f"{ops}\n    return\n  }}\n}}\n")


def fails(text: str, message: str, line: int, column: int | None = None) -> IRParseError:
    with pytest.raises(IRParseError) as info:
        parse_ir(text)
    error = info.value
    assert message in error.message, str(error)
    assert error.line == line, str(error)
    if column is not None:
        assert error.column == column, str(error)
    assert str(error).startswith(f"line {line}, column {error.column}: ")
    return error


# (body, fragment of the message, line, column); the body starts on line 5, column 5
CASES = {
    "unknown op": ("%0 = ad %n, %n : i32", "unknown op 'ad' (did you mean", 5, 10),
    "undefined value": ("%0 = add %n, %zz : i32", "undefined value '%zz'", 5, 18),
    "value used before its definition": ("%0 = add %1, %n : i32\n%1 = add %n, %n : i32", "undefined value '%1'", 5, 14),
    "value of an inner region": ("for %n, %n, %n {\n^(%i: i32):\n  yield\n}\n%0 = add %i, %i : i32",
                                 "undefined value '%i'", 9, 14),
    "redefinition": ("%0 = add %n, %n : i32\n%0 = add %n, %n : i32", "value '%0' is defined twice", 6, 5),
    "redefinition of an argument": ("%n = add %n, %n : i32", "value '%n' is defined twice", 5, 5),
    "invalid value name": ("%a.b = add %n, %n : i32", "invalid value name '%a.b'", 5, 5),
    "unknown type": ("%0 = add %n, %n : f17", "unknown type 'f17'", 5, 23),
    "tile of tiles": ("%0 = splat %x : tile<4xtile<4xf32>>", "a tile holds scalars or pointers", 5, 28),
    "empty tile dimension": ("%0 = splat %x : tile<0xf32>", "tile dimensions must be positive", 5, 26),
    "bad address space": ("%0 = splat %p : ptr<f32, x>", "unexpected 'x', expected an integer", 5, 30),
    "missing =": ("%0 add %n, %n : i32", "unexpected 'add'", 5, 8),
    "missing comma": ("%0 = add %n %n : i32", "unexpected '%n'", 5, 17),
    "two ops on one line": ("%0 = add %n, %n : i32 %1 = add %n, %n : i32", "unexpected '%1'", 5, 27),
    "stray character": ("%0 = add %n, %n : i32 $", "unexpected character '$'", 5, 27),
    "unterminated string": ('assert %c {message = "oops}', "unexpected character '\"'", 5, 26),
    "bad escape": (r'assert %c {message = "\q"}', "invalid string", 5, 26),
    "unknown attribute value": ("%0 = constant {value = yes} : i32", "unknown attribute value 'yes'", 5, 28),
    "unknown attribute": ("%0 = add %n, %n {fast = true} : i32", "unknown attributes ['fast']", 5, 10),
    "missing attribute": ("%0 = constant : i32", "missing attribute 'value'", 5, 10),
    "attribute twice": ("%0 = constant {value = 1, value = 2} : i32", "attribute 'value' given twice", 5, 31),
    "unknown optional operand": ("%0 = load %q, maks=%c : tile<16xf32>", "'load' has no optional operand 'maks'",
                                 5, 19),
    "optional operand twice": ("%0 = load %q, mask=%c, mask=%c : tile<16xf32>", "optional operand 'mask' given twice",
                               5, 28),
    "more results than types": ("%0, %1 = split %t : f32", "names 2 results but gives 1 result types", 5, 14),
    "types without results": ("store %q, %t : f32", "names 0 results but gives 1 result types", 5, 5),
    "region without block header": ("for %n, %n, %n {\n  yield\n}", "unexpected 'yield', expected '^'", 6, 7),
    "op continues after a region": ("for %n, %n, %n {\n^(%i: i32):\n  yield\n} %0", "unexpected '%0'", 8, 7),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_error(case: str) -> None:
    body, message, line, column = CASES[case]
    fails(kernel(body), message, line, column)


def test_error_is_a_value_error_and_shows_the_line() -> None:
    error = fails(kernel("%0 = add %n, %zz : i32"), "undefined value", 5, 18)
    assert isinstance(error, ValueError)
    assert str(error).splitlines()[1:] == ["        %0 = add %n, %zz : i32", " " * 21 + "^"]


def test_truncated_text() -> None:
    text = kernel("%0 = add %n, %n : i32")
    error = fails(text[: text.index("  }")], "unexpected end of the text", 6, 11)
    assert "expected" in error.message


def test_empty_text() -> None:
    fails("", "unexpected end of the text", 1, 1)


def test_two_top_level_ops() -> None:
    fails("module {\n^():\n}\nmodule {\n^():\n}\n", "unexpected 'module'", 4, 1)


def test_block_header_syntax() -> None:
    fails("module {\n^(%a i32):\n}\n", "unexpected 'i32', expected ':'", 2, 6)


def test_location_syntax() -> None:
    fails(kernel("%0 = add %n, %n : i32 loc(5)"), "unexpected ')', expected ':'", 5, 32)


def test_parse_type_errors() -> None:
    with pytest.raises(IRParseError, match="unknown type 'i33'"):
        parse_type("tile<4xi33>")
    with pytest.raises(IRParseError, match="pointer holds scalars or pointers"):
        parse_type("ptr<tile<4xf32>>")
    with pytest.raises(IRParseError, match="unexpected"):
        parse_type("tile<f32>")
