"""Reading the tile IR's text form back into ops.

Every pass is tested as IR text in, IR text out (docs/style.md, "Tests"), so the parser reads
exactly what ``printer.print_ir`` writes and ``print_ir(parse_ir(print_ir(m))) ==
print_ir(m)`` holds for every module ``m``. The grammar is ``ir.lark``; this module walks
its parse tree and builds ops through their registered classes (``core.OP_REGISTRY``).

What the parser checks is what it needs to build the IR: known op names and types, values
defined before their use in an enclosing scope, attribute names the op declares. Whether
the IR makes sense (operand types, terminators...) is the verifier's job
(``verifier.verify``); the parser never calls it, so tests can build invalid IR from text.

Scoping follows MLIR: a value is visible after its definition in its block and in the
regions nested there; names may repeat in sibling regions (the printer never does that).
Value names that are not numbers become the values' ``name_hint``, so they print back
the same; numbered values are renumbered by the printer in order of definition, which is
the order they had.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ops as _ops  # noqa: F401  (registers every op)
from . import types as T
from .core import OP_REGISTRY, Block, Location, Operation, Region, Value, VerificationError


def _token(child: Tree | Token | None) -> Token:
    """A child that the grammar makes a token (a name, number, string or dims)."""
    assert isinstance(child, Token), f"the grammar gives a token here, not {child!r}"
    return child


__all__ = ["IRParseError", "parse_ir", "parse_type"]


class IRParseError(ValueError):
    """Malformed IR text; ``line`` and ``column`` (both 1-based) point into the text."""

    def __init__(self, message: str, line: int, column: int, text: str | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        rendered = f"line {line}, column {column}: {message}"
        lines = text.splitlines() if text is not None else []
        if 0 < line <= len(lines):
            src = lines[line - 1]
            rendered += f"\n    {src}\n    {' ' * max(column - 1, 0)}^"
        super().__init__(rendered)


@functools.cache
def _lark() -> Lark:
    """The LALR parser, built once: building takes ~0.1 s, parsing a kernel milliseconds."""
    grammar = (Path(__file__).parent / "ir.lark").read_text()
    return Lark(grammar, parser="lalr", start=["start", "type_text"], maybe_placeholders=True)


def parse_ir(text: str, source: str | None = None) -> Operation:
    """Build the op (usually a ``module``) that ``text`` describes, without verifying it.

    ``source`` is the file that short locations ``loc(L:C)`` name. By default it is what
    ``print_ir`` assumed when it wrote them: the ``source`` attribute of a top-level
    module, or ``""`` for any other top-level op.
    """
    tree = _parse(text, "start")
    return _Reader(text, source).op(tree.children[0], top=True)


def parse_type(text: str) -> T.Type:
    """The type spelled ``text`` (``i32``, ``ptr<f16, 3>``, ``tile<64x64xf32>``)."""
    tree = _parse(text, "type_text")
    return _Reader(text, None).type(tree.children[0])


def _parse(text: str, start: str) -> Tree:
    try:
        return _lark().parse(text, start=start)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None


# How the terminals of ir.lark read in an error message.
_TERMINALS = {
    "VALUE": "a value (%name)", "NAME": "a name", "INT": "an integer", "FLOAT": "a float",
    "STRING": "a string", "DIMS": "tile dimensions (4x8x)", "_NL": "a new line",
    "$END": "the end of the text",
}


_UNEXPECTED = {"_NL": "end of line", "$END": "end of the text"}


def _describe_terminal(name: str) -> str:
    if name in _TERMINALS:
        return _TERMINALS[name]
    try:
        return repr(_lark().get_terminal(name).pattern.value)
    except KeyError:
        return name


def _syntax_error(e: UnexpectedInput, text: str) -> IRParseError:
    line, column = e.line, e.column
    if not isinstance(line, int) or line < 1:
        # the end of the text: point just past its last character
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    if isinstance(e, UnexpectedCharacters):
        message = f"unexpected character {e.char!r}"
    elif isinstance(e, UnexpectedToken):
        token = e.token
        what = _UNEXPECTED.get(token.type) or repr(str(token))
        # ``accepts`` also lists keywords (ptr, tile) that ``expected`` folds into NAME
        expected = sorted({_describe_terminal(t) for t in (e.accepts or e.expected)})
        message = f"unexpected {what}, expected {' or '.join(expected)}"
    elif isinstance(e, UnexpectedEOF):
        message = "unexpected end of the text"
    else:  # pragma: no cover - lark has no other kinds today
        message = str(e)
    return IRParseError(message, line, column, text)


def _first_token(tree: Tree | Token) -> Token | None:
    if isinstance(tree, Token):
        return tree
    return next(tree.scan_values(lambda v: isinstance(v, Token)), None)


_NAMED_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "none": None, "inf": math.inf, "nan": math.nan}


class _Reader:
    """Walks one parse tree, building ops and resolving value names scope by scope."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.source = source
        self.file = source if source is not None else ""
        # one dict per enclosing block (innermost last): value name -> value
        self.scopes: list[dict[str, Value]] = [{}]

    def error(self, message: str, at: Tree | Token) -> IRParseError:
        token = _first_token(at)
        line, column = (token.line or 0, token.column or 0) if token is not None else (0, 0)
        return IRParseError(message, line, column, self.text)

    # -- ops -----------------------------------------------------------------------------
    def op(self, tree: Tree, top: bool = False) -> Operation:
        results, name, operands, attr_dict, type_list, regions, loc = tree.children
        cls = OP_REGISTRY.get(str(name))
        if cls is None:
            close = difflib.get_close_matches(str(name), OP_REGISTRY, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self.error(f"unknown op '{name}'{hint}", name)
        plain, optional = self.operands(cls, operands)
        attrs = self.attrs(attr_dict)
        if top and self.source is None and cls.NAME == "module":
            # print_ir writes locations in the module's own file without the file name
            self.file = attrs.get("source", cls.ATTRS.get("source", ""))
        result_types = [self.type(t) for t in type_list.children] if type_list is not None else []
        result_names = list(results.children) if results is not None else []
        if len(result_names) != len(result_types):
            raise self.error(f"'{name}' names {len(result_names)} results but gives {len(result_types)} "
                             "result types", name)
        body = [self.region(b) for b in regions.children] if regions is not None else []
        try:
            op = cls(plain, result_types, attrs, body, self.loc(loc), optional)
        except (VerificationError, TypeError, ValueError) as e:
            raise self.error(str(e), name) from None
        for token, result in zip(result_names, op.results):
            self.define(token, result)
        return op

    def operands(self, cls: type[Operation], tree: Tree | None) -> tuple[list[Value], dict[str, Value | None]]:
        plain: list[Value] = []
        optional: dict[str, Value | None] = {}
        allowed = [s[1:] for s in cls.OPERANDS if s.startswith("?")]
        for item in tree.children if tree is not None else []:
            if isinstance(item, Token):
                plain.append(self.lookup(item))
                continue
            key, value = item.children
            if key not in allowed:
                names = ", ".join(allowed) or "none"
                raise self.error(f"'{cls.NAME}' has no optional operand '{key}' (it has: {names})", key)
            if key in optional:
                raise self.error(f"optional operand '{key}' given twice", key)
            optional[str(key)] = self.lookup(_token(value))
        return plain, optional

    def region(self, tree: Tree) -> Region:
        block = Block()
        self.scopes.append({})
        try:
            for item in tree.children:
                if item is None:
                    continue
                if item.data == "block_arg":
                    token, type_tree = item.children
                    self.define(_token(token), block.add_arg(self.type(type_tree)))
                else:
                    block.append(self.op(item))
        finally:
            self.scopes.pop()
        return Region(block)

    def loc(self, tree: Tree | None) -> Location | None:
        if tree is None:
            return None
        file, line, col = tree.children
        name = self.file if file is None else self.string(_token(file))
        return Location(name, int(_token(line)), int(_token(col)))

    # -- values --------------------------------------------------------------------------
    def define(self, token: Token, value: Value) -> None:
        name = token[1:]
        if not name.isdigit():
            if not name.isidentifier():
                raise self.error(f"invalid value name '{token}': use a number or an identifier", token)
            value.name_hint = name
        if any(name in scope for scope in self.scopes):
            raise self.error(f"value '{token}' is defined twice", token)
        self.scopes[-1][name] = value

    def lookup(self, token: Token) -> Value:
        name = token[1:]
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise self.error(f"undefined value '{token}' (values must be defined above their use, "
                         "in the same block or an enclosing one)", token)

    # -- attributes ----------------------------------------------------------------------
    def attrs(self, tree: Tree | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in tree.children if tree is not None else []:
            if item is None:
                continue
            key, value = item.children
            if key in out:
                raise self.error(f"attribute '{key}' given twice", key)
            out[str(key)] = self.attr_value(value)
        return out

    def attr_value(self, tree: Tree) -> Any:
        match tree.data:
            case "int_attr":
                return int(_token(tree.children[0]))
            case "float_attr":
                return float(_token(tree.children[0]))
            case "neg_inf_attr":
                return -math.inf
            case "str_attr":
                return self.string(_token(tree.children[0]))
            case "name_attr":
                word = str(tree.children[0])
                if word in _NAMED_CONSTANTS:
                    return _NAMED_CONSTANTS[word]
                if word in T.BY_NAME:
                    return T.BY_NAME[word]
                raise self.error(f"unknown attribute value '{word}' (not a type, true, false, none, inf "
                                 "or nan)", tree)
            case "list_attr":
                # attributes are immutable: lists read back as tuples, as the ops store them
                return tuple(self.attr_value(v) for v in tree.children if v is not None)
            case "dict_attr":
                # a record (a user's layout): keys in the written order, as the op built it
                return self.attrs(tree)
            case _:
                return self.type(tree)

    def string(self, token: Token) -> str:
        try:
            return json.loads(token)
        except json.JSONDecodeError as e:
            raise self.error(f"invalid string {token}: {e.msg}", token) from None

    # -- types ---------------------------------------------------------------------------
    def type(self, tree: Tree) -> T.Type:
        match tree.data:
            case "scalar_type":
                word = str(tree.children[0])
                if word == "token":
                    return T.token
                if word == "alias_spec":
                    return T.alias_spec
                if word not in T.BY_NAME:
                    close = difflib.get_close_matches(word, T.BY_NAME, n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                    raise self.error(f"unknown type '{word}'{hint}", tree)
                return T.BY_NAME[word]
            case "ptr_type":
                _, pointee_tree, space = tree.children
                pointee = self.element(pointee_tree, "a pointer")
                return T.pointer(pointee, int(_token(space)) if space is not None else 1)
            case "tile_type":
                _, dims, element_tree, layout_text = tree.children
                shape = tuple(int(d) for d in _token(dims).split("x")[:-1])
                if any(d <= 0 for d in shape):
                    raise self.error(f"tile dimensions must be positive, got {shape}", dims)
                layout = None
                if layout_text is not None:
                    from .layout.linear import LayoutError, LinearLayout

                    try:
                        layout = LinearLayout.parse(str(layout_text))
                    except (LayoutError, ValueError) as e:
                        raise self.error(f"bad layout: {e}", layout_text) from None
                return T.TileType(shape, self.element(element_tree, "a tile"), layout)
            case "memdesc_type":
                _, dims, element_tree, *items = tree.children
                shape = tuple(int(d) for d in _token(dims).split("x")[:-1])
                words, ints, layout = self.type_items(items, {"smem", "tmem"}, {"num"})
                storage = next(iter(words), "smem")
                element = self.element(element_tree, "a memdesc")
                if not isinstance(element, T.DType):
                    raise self.error("a memdesc holds scalars", element_tree)
                return T.MemDescType(shape, element, ints.get("num", 0), storage, layout)
            case "barrier_type":
                _, num, *items = tree.children
                words, _, _ = self.type_items(items, {"warp"}, set())
                return T.BarrierType(int(_token(num)), "warp" in words)
            case "tensordesc_type":
                _, dims, element_tree, *items = tree.children
                shape = tuple(int(d) for d in _token(dims).split("x")[:-1])
                _, ints, _ = self.type_items(items, set(), {"swizzle"})
                element = self.element(element_tree, "a tensordesc")
                if not isinstance(element, T.DType):
                    raise self.error("a tensordesc holds scalars", element_tree)
                return T.TensorDescType(shape, element, ints.get("swizzle"))
            case "descptr_type":
                _, num = tree.children
                if int(_token(num)) < 1:
                    raise self.error(f"a tensordesc_ptr holds at least one descriptor, got {num}", num)
                return T.DescPtrType(int(_token(num)))
        raise self.error(f"not a type: {tree.data}", tree)  # pragma: no cover - grammar forbids

    def type_items(self, items: list[Tree], words: set[str], keys: set[str]) -> tuple[list[str], dict[str, int], Any]:
        """The ``, word``, ``, key=int`` and ``, ll(...)`` items of a TLX type."""
        found: list[str] = []
        ints: dict[str, int] = {}
        layout = None
        for item in items:
            if item.data == "item_word":
                word = str(item.children[0])
                if word not in words:
                    raise self.error(f"unexpected '{word}' in a type (expected one of {sorted(words)})", item)
                found.append(word)
            elif item.data == "item_int":
                key, value = str(item.children[0]), int(_token(item.children[1]))
                if key not in keys:
                    raise self.error(f"unexpected '{key}=' in a type (expected one of {sorted(keys)})", item)
                ints[key] = value
            else:
                from .layout.linear import LayoutError, LinearLayout

                try:
                    layout = LinearLayout.parse(str(item.children[0]))
                except (LayoutError, ValueError) as e:
                    raise self.error(f"bad layout: {e}", item) from None
        return found, ints, layout

    def element(self, tree: Tree, what: str) -> T.DType | T.PointerType:
        t = self.type(tree)
        if not isinstance(t, (T.DType, T.PointerType)):
            raise self.error(f"{what} holds scalars or pointers, not {t}", tree)
        return t
