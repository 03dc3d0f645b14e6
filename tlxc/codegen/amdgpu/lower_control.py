"""Structured control flow as basic blocks. Scalars are uniform across the work-group, so
a branch on one is uniform too. Region results and loop-carried values are phi nodes:
a loop's header has one phi per carried register (incoming from before the loop and from
the end of the body), an ``if`` joins its branches in a block with one phi per result
register; the rules of other ops never see one."""

from __future__ import annotations

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import Kind
from .emitter import Emitter, lowers


@lowers(ops.ForOp)
def for_loop(e: Emitter, op: Operation) -> None:
    lb, ub, step = (e.get(v).vals[0] for v in (op.lb, op.ub, op.step))
    iv_t = op.lb.type
    body = op.regions[0].block
    term = body.ops[-1]
    inits = [e.get(v) for v in op.inits]
    head = e.fn.append_basic_block("for.head")
    loop = e.fn.append_basic_block("for.body")
    exit_ = e.fn.append_basic_block("for.exit")
    before = e.b.block
    e.b.branch(head)

    e.b.position_at_end(head)
    iv = e.b.phi(lb.type, name="iv")
    iv.add_incoming(lb, before)
    e.set(body.args[0], [iv])
    carried = []
    for arg, init in zip(body.args[1:], inits):
        phis = []
        for x in init.vals:
            p = e.b.phi(x.type)
            p.add_incoming(x, before)
            phis.append(p)
        e.set(arg, phis, init.layout)
        carried.append(phis)
    signed = iv_t.kind == Kind.INT
    less = e.b.icmp_signed if signed else e.b.icmp_unsigned
    step_op = op.step.owner
    if getattr(step_op, "NAME", "") == "constant" and step_op.value > 0:
        go = less("<", iv, ub)
    else:  # the step's sign decides the direction (Python's range)
        up = e.b.icmp_signed(">", step, ir.Constant(step.type, 0))
        go = e.b.select(up, less("<", iv, ub), less(">", iv, ub))
    e.b.cbranch(go, loop, exit_)

    e.b.position_at_end(loop)
    e.block(body)
    latch = e.b.block
    iv.add_incoming(e.b.add(iv, step), latch)
    for phis, y in zip(carried, term.operands):
        for p, x in zip(phis, e.get(y).vals):
            p.add_incoming(x, latch)
    e.b.branch(head)

    e.b.position_at_end(exit_)
    for res, arg in zip(op.results, body.args[1:]):
        e.values[id(res)] = e.get(arg)


@lowers(ops.YieldOp, ops.ConditionOp, ops.ReturnOp)
def terminator(e: Emitter, op: Operation) -> None:
    """Handled by the op that owns the region (the phis depend on where control goes)."""
    return None


@lowers(ops.IfOp)
def if_op(e: Emitter, op: Operation) -> None:
    (cond,) = e.get(op.cond).vals
    arms = [e.fn.append_basic_block("if.then"), e.fn.append_basic_block("if.else")]
    join = e.fn.append_basic_block("if.end")
    e.b.cbranch(cond, arms[0], arms[1])
    incoming: list[tuple[ir.Block, list[list[ir.Value]]]] = []
    for i, bb in enumerate(arms):
        e.b.position_at_end(bb)
        if i < len(op.regions):
            region = op.regions[i]
            e.block(region.block)
            term = region.block.ops[-1]
            incoming.append((e.b.block, [e.get(v).vals for v in term.operands]))
        e.b.branch(join)
    e.b.position_at_end(join)
    for k, res in enumerate(op.results):
        first = incoming[0][1][k]
        vals = []
        for j, x in enumerate(first):
            p = e.b.phi(x.type)
            for block, yielded in incoming:
                p.add_incoming(yielded[k][j], block)
            vals.append(p)
        e.set(res, vals)


@lowers(ops.WhileOp)
def while_loop(e: Emitter, op: Operation) -> None:
    before_r, after_r = op.regions[0].block, op.regions[1].block
    head = e.fn.append_basic_block("while.head")
    loop = e.fn.append_basic_block("while.body")
    exit_ = e.fn.append_basic_block("while.exit")
    entry = e.b.block
    inits = [e.get(v) for v in op.operands]
    e.b.branch(head)

    e.b.position_at_end(head)
    carried = []
    for arg, init in zip(before_r.args, inits):
        phis = []
        for x in init.vals:
            p = e.b.phi(x.type)
            p.add_incoming(x, entry)
            phis.append(p)
        e.set(arg, phis, init.layout)
        carried.append(phis)
    e.block(before_r)
    cond_op = before_r.ops[-1]
    assert isinstance(cond_op, ops.ConditionOp)  # the verifier checked the terminator
    forwarded = [e.get(v) for v in cond_op.values]
    (c,) = e.get(cond_op.cond).vals
    e.b.cbranch(c, loop, exit_)

    e.b.position_at_end(loop)
    for arg, f in zip(after_r.args, forwarded):
        e.set(arg, f.vals, f.layout)
    e.block(after_r)
    latch = e.b.block
    term = after_r.ops[-1]
    for phis, y in zip(carried, term.operands):
        for p, x in zip(phis, e.get(y).vals):
            p.add_incoming(x, latch)
    e.b.branch(head)

    e.b.position_at_end(exit_)
    for res, f in zip(op.results, forwarded):
        e.set(res, f.vals, f.layout)


@lowers(ops.AsyncTasksOp)
def _async_tasks(e: Emitter, op: Operation) -> None:
    # The IR, its passes and the interpreter handle partitions; dispatching warps to them,
    # partition-scoped barriers and setmaxnreg are this code generator's part, still to come.
    raise CompilationError("TLXC-CODEGEN-001", f"warp specialization (tlx.async_tasks) is not supported by the "
                           f"{e.target.arch} code generator yet", op.loc,
                           "run the kernel in the interpreter, or write it without tlx.async_tasks")
