"""``loop-unroll``: ``tl.range(..., loop_unroll_factor=F)`` copies the loop body ``F``
times, as Triton's loop unroller does.

A loop of ``T`` iterations becomes a loop of ``T // F`` iterations whose body is the
original body ``F`` times (copy ``k`` sees the induction variable ``iv + k * step`` and the
values copy ``k - 1`` yields), followed by the original loop for the ``T % F`` iterations
left::

    for iv in range(lb, lb + (T // F) * F * step, F * step) iter_args(x = init):
        x = body(iv, x); x = body(iv + step, x); ...; x = body(iv + (F-1) * step, x)
    for iv in range(lb + (T // F) * F * step, ub, step) iter_args(x):     # num_stages = 1
        x = body(iv, x)

Each iteration computes what it computed before, in the same order, so the numbers do not
change. The unrolled loop keeps the loop's ``num_stages`` (its loads are pipelined like
any others'); the remainder loop, which runs fewer than ``F`` iterations, is not pipelined.
Where the trip count is a compile-time constant, ``fold`` removes a remainder loop that
runs no iteration and inlines an unrolled loop that runs once.

Expects: the tile IR (``for`` ops carry ``loop_unroll_factor`` from ``tl.range``; the
frontend records only factors of 2 and more).
Guarantees: no ``for`` keeps a ``loop_unroll_factor`` attribute.
Refuses: nothing (any step: its sign may be known only at run time).
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..clone import clone
from ..core import Block, Operation, Region, Value
from .options import PassOptions
from .rewrite import trip_count


def run(module: Operation, options: PassOptions) -> Operation:
    for func in module.funcs:
        for loop in [op for op in func.walk() if isinstance(op, ops.ForOp) and op.loop_unroll_factor]:
            factor = loop.loop_unroll_factor
            loop.attrs["loop_unroll_factor"] = None
            if factor is not None and factor >= 2:
                _unroll(loop, factor)
    return module


def _unroll(loop: ops.ForOp, factor: int) -> None:
    t = loop.lb.type
    b = Builder.at(loop)

    def c(v: int) -> Value:
        return b.value(ops.ConstantOp, [], t, value=v)

    trips = trip_count(b, loop.lb, loop.ub, loop.step)
    whole = b.value(ops.MulOp, [b.value(ops.IDivOp, [trips, c(factor)], t), c(factor)], t)
    split = b.value(ops.AddOp, [loop.lb, b.value(ops.MulOp, [whole, loop.step], t)], t)
    big_step = b.value(ops.MulOp, [loop.step, c(factor)], t)
    body = loop.body
    nb = Block([a.type for a in body.args])
    for a, na in zip(body.args, nb.args):
        na.name_hint = a.name_hint
    attrs = dict(loop.attrs)
    main = b.create(ops.ForOp, [loop.lb, split, big_step, *loop.inits], [r.type for r in loop.results], attrs,
                    regions=[Region(nb)])
    iv = nb.args[0]
    current: list[Value] = list(nb.args[1:])
    with Builder(None, loop.loc).at_end(nb) as ib:
        for k in range(factor):
            iv_k = iv if k == 0 else ib.value(
                ops.AddOp, [iv, ib.value(ops.MulOp, [loop.step, ib.value(ops.ConstantOp, [], t, value=k)], t)], t)
            m: dict[int, Value] = {id(body.args[0]): iv_k}
            m.update((id(a), v) for a, v in zip(body.args[1:], current))
            for op in body.ops[:-1]:
                ib.place(clone(op, m))
            current = [m.get(id(v), v) for v in body.ops[-1].operands]
        ib.create(ops.YieldOp, current, [])
    # the original loop runs what is left, from the split on, with what the unrolled one carried
    loop.set_operand(0, split)
    for j, r in enumerate(main.results):
        loop.set_operand(3 + j, r)
    loop.attrs["num_stages"] = 1
