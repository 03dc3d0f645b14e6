"""``inline_asm`` (``tl.inline_asm_elementwise``): the user's PTX once per element, in a
``{ }`` scope, with ``$i`` replaced by registers -- the results first, then the
operands, as the constraints order them (``ir/ops/inline_asm.py``).

A value whose register class differs from its constraint's (an f32 tile passed as ``r``,
an i32 result written through ``=f``) moves through a register of the constraint's
class with a ``mov`` of the same width. The snippet is emitted for every element, also
for elements that repeat in the layout, unless the user marked it pure.
"""

from __future__ import annotations

import re

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.ops.inline_asm import split_constraints
from .emitter import Emitter, lowers
from .ptx import Reg

_CLASS = {"r": "b32", "l": "b64", "h": "b16", "f": "f32", "d": "f64", "c": "b16"}
_WIDTH = {"b16": 16, "b32": 32, "f32": 32, "b64": 64, "f64": 64}
_OPERAND = re.compile(r"\$(\d+)")


def _in(e: Emitter, op: Operation, r: Reg, want: str) -> Reg:
    """``r`` in a register of class ``want`` (a same-width ``mov`` when it is another class)."""
    if r.cls == want:
        return r
    if r.cls == "pred" or _WIDTH.get(r.cls) != _WIDTH[want]:
        raise CompilationError("TLXC-TYPE-001", f"tl.inline_asm_elementwise: a {r.cls} value cannot be passed as a "
                               f"{want} register operand", op.loc, "convert the operand with .to(...) first")
    t = e.fn.reg(want)
    e.fn.emit(f"mov.b{_WIDTH[want]} {t}, {r}")
    return t


@lowers(ops.InlineAsmOp)
def inline_asm(e: Emitter, op: Operation) -> None:
    cons = split_constraints(op.constraints)
    outs, ins = cons[:len(op.results)], cons[len(op.results):]
    args = [e.get(v).regs for v in op.args]
    results = [e.new_regs(r.type) for r in op.results]
    n = len(results[0])
    done: dict[tuple[str, ...], list[Reg]] = {}
    for i in range(n):
        operands = [regs[i] if len(regs) == n else regs[0] for regs in args]
        key = tuple(r.name for r in operands)
        if op.pure and key in done:
            for res, r in zip(results, done[key]):
                res[i] = r
            continue
        names: list[str] = []
        fixups: list[tuple[Reg, Reg]] = []
        for res, c in zip(results, outs):
            want = _CLASS[c.lstrip("=")]
            dst = res[i]
            if dst.cls == want:
                names.append(dst.name)
            else:
                if dst.cls == "pred" or _WIDTH.get(dst.cls) != _WIDTH[want]:
                    raise CompilationError("TLXC-TYPE-001", f"tl.inline_asm_elementwise: a {dst.cls} result cannot "
                                           f"be written through a {c} register", op.loc)
                t = e.fn.reg(want)
                names.append(t.name)
                fixups.append((dst, t))
        for r, c in zip(operands, ins):
            names.append(_in(e, op, r, _CLASS[c]).name)

        def name(m: re.Match) -> str:
            k = int(m.group(1))
            if k >= len(names):
                raise CompilationError("TLXC-CALL-002", f"tl.inline_asm_elementwise: ${k} names no operand (the "
                                       f"snippet has {len(names)})", op.loc)
            return names[k]
        e.fn.body.append("\t{")
        e.fn.body.append("\t" + _OPERAND.sub(name, op.asm))
        e.fn.body.append("\t}")
        for dst, t in fixups:
            e.fn.emit(f"mov.b{_WIDTH[t.cls]} {dst}, {t}")
        done[key] = [res[i] for res in results]
    for r, regs in zip(op.results, results):
        e.set(r, regs)
