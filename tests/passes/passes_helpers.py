"""Helpers of the pass tests: IR text in, IR text out (docs/style.md, "Tests")."""

from __future__ import annotations

import textwrap
from collections import Counter

from tlxc.ir import print_ir
from tlxc.ir.core import Operation
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, run_pipeline
from tlxc.ir.passes.pipeline import CANONICALIZE, Entry


def kernel(body: str, args: str = "") -> str:
    """A module holding one kernel ``k`` with arguments ``args`` and ops ``body``."""
    ops = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return f'module {{\n^():\n  func {{sym_name = "k"}} {{\n  ^({args}):\n{ops}\n  }}\n}}\n'


def parse(text: str) -> Operation:
    module = parse_ir(text)
    assert print_ir(module) == text, "test input is not in printed form"
    return module


def check_use_lists(module: Operation) -> None:
    """Every value's ``uses`` lists exactly the live ops that use it, as often as they do,
    and result and block-argument indices are in order -- what the verifier does not check
    but the passes' IR surgery must keep."""
    used: dict[int, Counter[int]] = {}
    values = {}
    for op in module.walk():
        for v in op.operands:
            used.setdefault(id(v), Counter())[id(op)] += 1
            values[id(v)] = v
        assert [r.index for r in op.results] == list(range(len(op.results))), op
        for region in op.regions:
            for block in region.blocks:
                assert [a.index for a in block.args] == list(range(len(block.args))), op
                values.update((id(a), a) for a in block.args)
        values.update((id(r), r) for r in op.results)
    for key, v in values.items():
        assert Counter(id(u) for u in v.uses) == used.get(key, Counter()), f"stale use list of {v}"


def _after_each_pass(when: str, name: str, module: Operation) -> None:
    if when == "after":
        check_use_lists(module)


def apply(text: str, passes: list[Entry] | None = None, options: PassOptions | None = None) -> str:
    """Parse ``text``, run ``passes`` (default: CANONICALIZE to a fixed point) with the
    verifier after each, and print the result."""
    if passes is None:
        passes = [("canonicalize", CANONICALIZE)]
    module = run_pipeline(parse(text), options, passes, verify_each=True, dump=_after_each_pass)
    return print_ir(module)


def check(body: str, expected: str, args: str = "", passes: list[Entry] | None = None,
          options: PassOptions | None = None) -> None:
    """``body`` (a kernel) after ``passes`` prints as ``expected``."""
    got = apply(kernel(body, args), passes, options)
    want = kernel(expected, args)
    assert got == want, f"\n--- got:\n{got}\n--- want:\n{want}"


def unchanged(body: str, args: str = "", passes: list[Entry] | None = None,
              options: PassOptions | None = None) -> None:
    check(body, body, args, passes, options)
