"""Structured control flow. Scalars are uniform across the CTA, so branches on them are
``bra.uni`` -- except those that depend on ``tlx.thread_id`` or ``tlx.clock64``
(``Emitter.divergent``): those branch with ``bra``, and the code under them knows that
only some threads run it (``Emitter.divergent_depth``). Region results and loop-carried
values get their own registers, written by parallel copies at ``yield`` / ``condition``."""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation, Value
from ...ir.types import Kind
from .emitter import Emitter, TileRegs, lowers, num_regs
from .ptx import Reg


def _mov(e: Emitter, dst: Reg, src: Reg) -> None:
    if dst.cls == "pred":
        e.fn.emit(f"mov.pred {dst}, {src}")
    else:
        e.fn.emit(f"mov.{dst.cls if dst.cls.startswith('f') else 'b' + dst.cls[1:]} {dst}, {src}")


def parallel_copy(e: Emitter, dsts: list[list[Reg]], srcs: list[list[Reg]]) -> None:
    """dst_i := src_i for all i at once (sources are read before any destination is written)."""
    pairs = [(d, s) for ds, ss in zip(dsts, srcs) for d, s in zip(ds, ss) if d.name != s.name]
    written = {d.name for d, _ in pairs}
    temps = {}
    for _, s in pairs:
        if s.name in written and s.name not in temps:
            t = e.fn.reg(s.cls)
            _mov(e, t, s)
            temps[s.name] = t
    for d, s in pairs:
        _mov(e, d, temps.get(s.name, s))


def fresh(e: Emitter, values: list[Value]) -> list[list[Reg]]:
    out = []
    for v in values:
        regs = e.new_regs(v.type)
        e.set(v, regs)
        out.append(regs)
    return out


def carried_regs(e: Emitter, arg: Value, yielded: Value) -> list[Reg]:
    """Registers of a loop-carried value: packed when the loop yields a packed value (an
    fp16 MMA accumulator still in flight at the end of an iteration must not be unpacked)."""
    if not e.produces_packed(yielded):
        return fresh(e, [arg])[0]
    regs = [e.fn.reg("b32") for _ in range(num_regs(arg.type) // 2)]
    e.values[id(arg)] = TileRegs(regs, arg.type.layout, packed=True)  # type: ignore[attr-defined]
    return regs


def sources(e: Emitter, dsts: list[Value], srcs: list[Value]) -> list[list[Reg]]:
    """The registers of ``srcs`` for copying into ``dsts``: packed (or packed here) where
    the destination is."""
    out = []
    for d, s in zip(dsts, srcs):
        if e.get(d, packed_ok=True).packed:
            got = e.get(s, packed_ok=True)
            out.append(got.regs if got.packed else e.pack16(got.regs))
        else:
            out.append(e.get(s).regs)
    return out


@lowers(ops.ForOp)
def for_loop(e: Emitter, op: Operation) -> None:
    lb, ub, step = (e.get(v).regs[0] for v in (op.lb, op.ub, op.step))
    iv_t = op.lb.type
    body = op.regions[0].block
    iv = e.new_regs(iv_t)[0]
    e.set(body.args[0], [iv])
    term = body.ops[-1]
    carried = [carried_regs(e, a, y) for a, y in zip(body.args[1:], term.operands)]
    parallel_copy(e, [[iv]] + carried, [[lb]] + sources(e, list(body.args[1:]), list(op.inits)))
    head, exit_ = e.fn.label("for_head"), e.fn.label("for_exit")
    sfx = ("s" if iv_t.kind == Kind.INT else "u") + str(max(16, iv_t.bits))
    step_op = op.step.owner
    step_name = getattr(step_op, "NAME", "")
    positive = (step_name == "constant" and step_op.value > 0) or step_name == "num_programs"
    e.fn.place(head)
    done = e.fn.reg("pred")
    if positive:
        e.fn.emit(f"setp.ge.{sfx} {done}, {iv}, {ub}")
    else:  # the step's sign decides the direction (Python's range)
        up, a, b = e.fn.reg("pred"), e.fn.reg("pred"), e.fn.reg("pred")
        e.fn.emit(f"setp.gt.{sfx} {up}, {step}, 0")
        e.fn.emit(f"setp.ge.{sfx} {a}, {iv}, {ub}")
        e.fn.emit(f"setp.le.{sfx} {b}, {iv}, {ub}")
        e.fn.emit(f"and.pred {a}, {a}, {up}")
        e.fn.emit(f"not.pred {up}, {up}")
        e.fn.emit(f"and.pred {b}, {b}, {up}")
        e.fn.emit(f"or.pred {done}, {a}, {b}")
    diverges = any(e.divergent(v) for v in (op.lb, op.ub, op.step))
    bra = "bra" if diverges else "bra.uni"
    e.fn.emit(f"{bra} {exit_}", done)
    e.divergent_depth += diverges
    e.block(body)
    e.divergent_depth -= diverges
    e.fn.emit(f"add.{sfx} {iv}, {iv}, {step}")
    parallel_copy(e, carried, sources(e, list(body.args[1:]), list(term.operands)))
    e.fn.emit(f"{bra} {head}")
    e.fn.place(exit_)
    for res, arg in zip(op.results, body.args[1:]):
        e.values[id(res)] = e.get(arg, packed_ok=True)


@lowers(ops.YieldOp, ops.ConditionOp, ops.ReturnOp)
def terminator(e: Emitter, op: Operation) -> None:
    """Handled by the op that owns the region (the copies depend on where control goes)."""
    return None


@lowers(ops.IfOp)
def if_op(e: Emitter, op: Operation) -> None:
    (cond,) = e.get(op.cond).regs
    results = fresh(e, list(op.results))
    else_, end = e.fn.label("else"), e.fn.label("endif")
    diverges = e.divergent(op.cond)
    bra = "bra" if diverges else "bra.uni"
    e.fn.emit(f"{bra} {else_}", cond, negate=True)
    e.divergent_depth += diverges
    for i, region in enumerate(op.regions):
        if i == 1:
            e.fn.place(else_)
        e.block(region.block)
        term = region.block.ops[-1]
        parallel_copy(e, results, [e.get(v).regs for v in term.operands])
        if i == 0:
            e.fn.emit(f"bra.uni {end}")
    e.divergent_depth -= diverges
    e.fn.place(end)


@lowers(ops.WhileOp)
def while_loop(e: Emitter, op: Operation) -> None:
    before, after = op.regions[0].block, op.regions[1].block
    args = fresh(e, list(before.args))
    parallel_copy(e, args, [e.get(v).regs for v in op.operands])
    head, exit_ = e.fn.label("while_head"), e.fn.label("while_exit")
    results = fresh(e, list(op.results))
    body_args = fresh(e, list(after.args))
    e.fn.place(head)
    e.block(before)
    cond_op = before.ops[-1]
    forwarded = [e.get(v).regs for v in cond_op.values]
    parallel_copy(e, results, forwarded)
    (c,) = e.get(cond_op.cond).regs
    diverges = e.divergent(cond_op.cond)
    bra = "bra" if diverges else "bra.uni"
    e.fn.emit(f"{bra} {exit_}", c, negate=True)
    parallel_copy(e, body_args, results)
    e.divergent_depth += diverges
    e.block(after)
    e.divergent_depth -= diverges
    term = after.ops[-1]
    parallel_copy(e, args, [e.get(v).regs for v in term.operands])
    e.fn.emit(f"{bra} {head}")
    e.fn.place(exit_)

