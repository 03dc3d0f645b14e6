"""Drop a CTA barrier that repeats the one before it.

Ops that need every thread to meet emit their own ``bar.sync 0`` (a retiring
``cp.async.wait_group``, a layout conversion through scratch memory before it writes the
scratch), and two of them can end up with nothing between them that touches memory --
attention's epilogue waits for its copies (a barrier) and then converts ``m_i`` through
scratch (another). The second one orders nothing the first did not: every thread passed
the first, and since then each thread only computed in registers. This pass removes it.

What counts as "only computed in registers" is a fixed list of PTX register instructions
(arithmetic, conversions, moves, compares, selects, bit operations, SFU math); any other
line -- a memory access, a fence, another barrier, a vote or shuffle, a label or branch,
a call -- keeps the next barrier. Only the unpredicated ``bar.sync 0`` of the whole CTA
is dropped; named barriers and partition barriers (``bar.sync id, n``) stay.
"""

from __future__ import annotations

import re

CTA_BARRIER = "\tbar.sync 0;"

# opcodes (the text before the first '.', or the whole word) that touch only registers
_REGISTER_ONLY = frozenset((
    "add", "sub", "mul", "mad", "fma", "div", "rem", "neg", "abs", "min", "max", "cvt", "cvta", "mov", "setp",
    "selp", "set", "and", "or", "xor", "not", "cnot", "shl", "shr", "lg2", "ex2", "rcp", "sqrt", "rsqrt", "sin",
    "cos", "tanh", "bfe", "bfi", "prmt", "popc", "clz", "brev", "copysign", "testp", "mul24", "mad24", "sad",
    "fns", "bfind", "dp4a", "dp2a", "lop3", "shf",
))
_OPCODE = re.compile(r"\t(?:@!?%\w+ )?([a-z0-9_]+)")


def _register_only(line: str) -> bool:
    if line.startswith("\t.loc") or line.startswith("\t//") or not line.strip():
        return True
    m = _OPCODE.match(line)
    return m is not None and m.group(1) in _REGISTER_ONLY


def drop_repeated_barriers(lines: list[str]) -> list[str]:
    """``lines`` (a kernel body) without the ``bar.sync 0`` that follow another one with
    only register instructions in between."""
    out: list[str] = []
    covered = False  # a CTA barrier since the last line that was not register-only
    for line in lines:
        if line == CTA_BARRIER:
            if covered:
                continue
            covered = True
        elif not _register_only(line):
            covered = False
        out.append(line)
    return out
