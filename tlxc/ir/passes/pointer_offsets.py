"""Loop-carried pointer tiles advanced by one offset for every element become their
initial tile plus a carried scalar offset.

Triton's matmul advances its operand pointers in the loop (``a_ptrs += BLOCK_K *
stride_ak``): the loop carries one 64-bit pointer per element and overwrites those
registers every iteration. A load or asynchronous copy issued from them still holds them
when the next iteration's increment comes, and an asynchronous copy (``cp.async``) reads
its address operands late: the increment then waits on the copy (a long-scoreboard stall
on every pointer of the pipelined 128x256x64 matmul on the H200). Here::

    %r = for ... iter_args(%p = %p0, ...) {          %r = for ... iter_args(%o = 0, ...) {
      ... uses of %p ...                       ->      %p = addptr %p0, splat(%o)
      %n = addptr %p, splat(%s)                        ... uses of %p ...
      yield %n, ...                                    yield %o + sext(%s), ...
    }                                                }
                                                     %r = addptr %p0, splat(%o_final)

so each iteration computes its addresses into fresh registers from the loop-invariant
``%p0`` (the code generator scales a splat offset once: one 64-bit add per element, as
before) and carries one 64-bit scalar. The offset is summed in 64 bits, so it wraps only
where the pointer would. Pointer arithmetic is exact integer arithmetic, so ``p0 + (s0 +
... + sk)`` is the pointer the increments reach.

What is rewritten: a ``for`` loop's carried tile of pointers whose yielded value is
``addptr`` of the carried value itself and a uniform offset -- a ``splat`` of a scalar or
a constant tile of one value -- in the loop's body. Nothing else changes.

Expects: the tile IR, before software pipelining (whose address clones then carry the
scalar). Guarantees: the loop computes the same pointers. Refuses: nothing.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation, Value
from ..types import PointerType, TileType, int64
from . import dce
from .options import PassOptions
from .rewrite import carry_more, constant_of, yield_more


def _uniform_step(v: Value) -> tuple[Value | None, int | None] | None:
    """(scalar, None) for ``splat scalar``, (None, c) for a constant tile of value ``c``;
    None for anything else."""
    src = v.owner
    if isinstance(src, ops.SplatOp):
        return src.x, None
    c = constant_of(v)
    if isinstance(c, int) and not isinstance(c, bool):
        return None, c
    return None


def _candidates(loop: ops.ForOp) -> list[tuple[int, Value | None, int | None]]:
    """(slot, scalar step, constant step) of each carried pointer tile the loop advances by
    a uniform offset."""
    body = loop.body
    term = body.ops[-1]
    out = []
    for j, (arg, y) in enumerate(zip(body.args[1:], term.operands)):
        t = arg.type
        if not (isinstance(t, TileType) and isinstance(t.scalar, PointerType)):
            continue
        src = y.owner
        if not isinstance(src, ops.AddPtrOp) or src.ptr is not arg or src.parent is not body:
            continue
        step = _uniform_step(src.offset)
        if step is None:
            continue
        out.append((j, *step))
    return out


def _rewrite(loop: ops.ForOp) -> ops.ForOp:
    found = _candidates(loop)
    if not found:
        return loop
    with Builder(None, loop.loc).before(loop) as b:
        zeros = [b.value(ops.ConstantOp, [], int64, value=0) for _ in found]
        inits = {j: loop.inits[j] for j, _, _ in found}
        new, offsets = carry_more(loop, b, zeros)
    body = new.body
    term = body.ops[-1]
    nexts = []
    for (j, scalar, c), o in zip(found, offsets):
        arg, t = body.args[1 + j], body.args[1 + j].type
        with Builder(None, new.loc).before(body.ops[0]) as b:
            p = b.value(ops.AddPtrOp, [inits[j], b.value(ops.SplatOp, [o], TileType(t.shape, int64))], t)
        arg.replace_all_uses_with(p)
        with Builder(None, term.loc).before(term) as b:
            if scalar is None:
                step = b.value(ops.ConstantOp, [], int64, value=c)
            elif scalar.type == int64:
                step = scalar
            else:
                step = b.value(ops.ConvertOp, [scalar], int64)
            nexts.append(b.value(ops.AddOp, [o, step], int64))
    yield_more(new, nexts)
    block = new.parent
    assert block is not None
    after = block.ops[block.ops.index(new) + 1]
    for k, (j, _, _) in enumerate(found):
        res = new.results[j]
        if not res.uses:
            continue
        final = new.results[len(new.results) - len(found) + k]
        with Builder(None, new.loc).before(after) as b:
            t = res.type
            p = b.value(ops.AddPtrOp, [inits[j], b.value(ops.SplatOp, [final], TileType(t.shape, int64))], t)
        res.replace_all_uses_with(p)
    return new


def run(module: Operation, options: PassOptions) -> Operation:
    for func in module.funcs:
        for loop in [op for op in func.walk() if isinstance(op, ops.ForOp)]:
            _rewrite(loop)
    return dce.run(module, options)
