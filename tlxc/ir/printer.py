"""The textual form of the tile IR.

One op per line::

    %5, %6 = split %4 : tile<64xf32>, tile<64xf32> loc(12:9)
    %7 = load %3, mask=%2, other=%1 {cache = ".cg"} : tile<1024xf32> loc(14:8)

that is: results, the op name, operands (optional ones as ``name=%v``), attributes that
differ from their defaults in ``{}``, result types after ``:``, regions in braces (each
opens with its block arguments ``^(%a: i32):``) and the source location. Values are
numbered in order of definition, kernel arguments keep their names. ``parser.py`` reads
this back, and printing what it reads gives the same text.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .core import Block, Location, Operation, Value
from .types import Type


def format_attr(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if any(c in r for c in ".e") else r + ".0"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, Type):
        return str(v)
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    if isinstance(v, dict):  # a record such as a user's layout: {kind = "amd_mfma", version = 4}
        return "{" + ", ".join(f"{k} = {format_attr(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot print attribute value {v!r}")


class Printer:
    def __init__(self, source: str = "") -> None:
        self.names: dict[int, str] = {}
        self.counter = 0
        self.source = source
        self.lines: list[str] = []
        self.used: set[str] = set()

    def name(self, v: Value) -> str:
        n = self.names.get(id(v))
        if n is None:
            raise ValueError(f"value used before its definition: {v!r}")
        return n

    def define(self, v: Value) -> str:
        hint = v.name_hint
        if hint and hint.isidentifier() and hint not in self.used and not hint[0].isdigit():
            n = "%" + hint
            self.used.add(hint)
        else:
            n = f"%{self.counter}"
            self.counter += 1
        self.names[id(v)] = n
        return n

    def loc(self, loc: Location | None) -> str:
        if loc is None or loc.line == 0:
            return ""
        if loc.file == self.source:
            return f" loc({loc.line}:{loc.col})"
        return f" loc({json.dumps(loc.file)}:{loc.line}:{loc.col})"

    def op(self, op: Operation, indent: int) -> None:
        pad = "  " * indent
        parts = []
        if op.results:
            parts.append(", ".join(self.define(r) for r in op.results) + " =")
        parts.append(op.NAME)
        text = " ".join(parts)
        operands = self.operand_text(op)
        if operands:
            text += " " + operands
        # An attribute is left out when its text is the default's text: the parser fills
        # the default back in, so comparing texts (not values) keeps the round trip exact
        # where values differ but print alike ([] and the default ()).
        attrs = []
        for k, v in op.attrs.items():
            value = format_attr(v)
            if op.ATTRS[k] is Operation.REQUIRED or value != format_attr(op.ATTRS[k]):
                attrs.append(f"{k} = {value}")
        if attrs:
            text += " {" + ", ".join(attrs) + "}"
        if op.results:
            text += " : " + ", ".join(str(r.type) for r in op.results)
        if not op.regions:
            self.lines.append(pad + text + self.loc(op.loc))
            return
        self.lines.append(pad + text + " {")
        for i, region in enumerate(op.regions):
            if i:
                self.lines.append(pad + "} {")
            self.block(region.block, indent)
        self.lines.append(pad + "}" + self.loc(op.loc))

    def operand_text(self, op: Operation) -> str:
        optional = [s[1:] for s in op.OPERANDS if s.startswith("?")]
        n_opt = sum(op.present.get(n, False) for n in optional)
        plain = op.operands[: len(op.operands) - n_opt]
        out = [self.name(v) for v in plain]
        opt_values = op.operands[len(op.operands) - n_opt:]
        i = 0
        for n in optional:
            if op.present.get(n):
                out.append(f"{n}={self.name(opt_values[i])}")
                i += 1
        return ", ".join(out)

    def block(self, block: Block, indent: int) -> None:
        args = ", ".join(f"{self.define(a)}: {a.type}" for a in block.args)
        self.lines.append("  " * indent + f"^({args}):")
        for op in block.ops:
            self.op(op, indent + 1)


def print_ir(op: Operation) -> str:
    """Text of ``op`` (usually a ``module``), ending in a newline."""
    source = op.attrs.get("source", "") if op.NAME == "module" else ""
    p = Printer(source)
    p.op(op, 0)
    return "\n".join(p.lines) + "\n"
