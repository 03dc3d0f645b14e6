"""Helpers of the axis-info tests: a kernel as IR text in, the AxisInfo of its named
values out."""

from __future__ import annotations

import textwrap

from tlxc.ir.analysis import AxisInfo, AxisInfoMap, analyze
from tlxc.ir.core import Operation, Value
from tlxc.ir.parser import parse_ir
from tlxc.ir.verifier import verify


def kernel(body: str, args: str = "", divisibility: tuple[int, ...] = ()) -> str:
    """A module holding one kernel ``k`` with arguments ``args``, their
    ``arg_divisibility`` and ops ``body`` (a ``return`` is added)."""
    ops = textwrap.indent(textwrap.dedent(body).strip("\n") + "\nreturn", "    ")
    attrs = 'sym_name = "k"'
    if divisibility:
        attrs += ", arg_divisibility = [" + ", ".join(str(d) for d in divisibility) + "]"
    return f"module {{\n^():\n  func {{{attrs}}} {{\n  ^({args}):\n{ops}\n  }}\n}}\n"


def named_values(op: Operation) -> dict[str, Value]:
    """Every value of ``op`` that has a name in the text (block arguments included)."""
    out: dict[str, Value] = {}
    for o in op.walk():
        for region in o.regions:
            for block in region.blocks:
                out.update((a.name_hint, a) for a in block.args if a.name_hint)
        out.update((r.name_hint, r) for r in o.results if r.name_hint)
    return out


class Analyzed:
    """A parsed, verified kernel and its axis info, looked up by value name."""

    def __init__(self, text: str) -> None:
        self.module = parse_ir(text)
        verify(self.module)
        self.func = self.module.funcs[0]  # type: ignore[attr-defined]
        self.map: AxisInfoMap = analyze(self.func)
        self.values = named_values(self.func)

    def __getitem__(self, name: str) -> AxisInfo:
        return self.map.info(self.values[name])

    def cdk(self, name: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(contiguity, divisibility, constancy) of the value called ``name``."""
        i = self[name]
        return i.contiguity, i.divisibility, i.constancy

    def vector(self, ptr: str, dim: int, elem_bytes: int, mask: str | None = None, max_bytes: int = 16) -> int:
        return self.map.vector_elements(self.values[ptr], dim, elem_bytes, max_bytes,
                                        self.values[mask] if mask else None)


def run(body: str, args: str = "", divisibility: tuple[int, ...] = ()) -> Analyzed:
    return Analyzed(kernel(body, args, divisibility))
