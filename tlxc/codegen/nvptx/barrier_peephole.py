"""Drop a barrier that repeats the one before it.

Ops that need every thread to meet emit their own ``bar.sync 0`` (a retiring
``cp.async.wait_group``, a layout conversion through scratch memory before it writes the
scratch), and two of them can end up with nothing between them that touches memory --
attention's epilogue waits for its copies (a barrier) and then converts ``m_i`` through
scratch (another). The second one orders nothing the first did not: every thread passed
the first, and since then each thread only computed in registers. This pass removes it.

What counts as "only computed in registers" is a fixed list of PTX register instructions
(arithmetic, conversions, moves, compares, selects, bit operations, SFU math); any other
line -- a memory access, a fence, another barrier, a vote or shuffle, a label or branch,
a call -- keeps the next barrier. The same holds for a partition's own barrier
(``bar.sync id, n``, which its leader-based arrives and hazard barriers use: a consumer
that releases a stage on its own CTA's barrier and then on a peer's syncs its warps
once): a barrier line is dropped when it is exactly the line of the last barrier, with
only register instructions since. Predicated barriers are never dropped.

An mbarrier *arrive* (``mbarrier.arrive...``, with or without ``expect_tx``) between the
two does not keep the second: the first already ordered every thread's earlier work before
it, and no thread's later work needs to follow another thread's arrive (an arrive
releases what came before it; it acquires nothing).
"""

from __future__ import annotations

import re

CTA_BARRIER = "\tbar.sync 0;"
_BARRIER = re.compile(r"\tbar\.sync \d+(, \d+)?;$")  # unpredicated: the whole CTA, or a partition

# opcodes (the text before the first '.', or the whole word) that touch only registers
_REGISTER_ONLY = frozenset((
    "add", "sub", "mul", "mad", "fma", "div", "rem", "neg", "abs", "min", "max", "cvt", "cvta", "mov", "setp",
    "selp", "set", "and", "or", "xor", "not", "cnot", "shl", "shr", "lg2", "ex2", "rcp", "sqrt", "rsqrt", "sin",
    "cos", "tanh", "bfe", "bfi", "prmt", "popc", "clz", "brev", "copysign", "testp", "mul24", "mad24", "sad",
    "fns", "bfind", "dp4a", "dp2a", "lop3", "shf", "mapa",
))
_OPCODE = re.compile(r"\t(?:@!?%\w+ )?([a-z0-9_]+)")


def _orders_nothing(line: str) -> bool:
    """No other thread's later work needs to follow ``line`` (see the module's docstring)."""
    if line.startswith("\t.loc") or line.startswith("\t//") or not line.strip():
        return True
    m = _OPCODE.match(line)
    if m is None:
        return False
    return m.group(1) in _REGISTER_ONLY or line[m.end(1):].startswith(".arrive") and m.group(1) == "mbarrier"


def drop_repeated_barriers(lines: list[str]) -> list[str]:
    """``lines`` (a kernel body) without the barriers (``bar.sync 0``, ``bar.sync id, n``)
    that repeat the last one with only register instructions in between."""
    out: list[str] = []
    last: str | None = None  # the barrier since the last line that was not register-only
    for line in lines:
        if _BARRIER.match(line):
            if line == last:
                continue
            last = line
        elif not _orders_nothing(line):
            last = None
        out.append(line)
    return out
