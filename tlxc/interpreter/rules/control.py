"""Rules for structured control flow: ``for``, ``while`` and ``if``.

Each compiles its regions into ``CompiledBlock``s once; at run time it binds the block
arguments, runs the steps and reads what the terminator (``yield`` / ``condition``)
carries. Terminators need no rule of their own: ``Compiler.block`` records their operand
slots. ``return`` ends the kernel body, which is always its last op.
"""

from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...ir.core import Operation
from ...ir.ops import control as C
from ..compiler import Compiler
from ..numerics import storage_dtype
from ..registry import Env, Step, executes


@executes(C.ForOp)
def _for(op: Operation, compiler: Compiler) -> Step:
    lb, ub, st = (compiler.slot(v) for v in (op.lb, op.ub, op.step))
    inits = [compiler.slot(v) for v in op.inits]
    outs = [compiler.slot(r) for r in op.results]
    body = compiler.block(op.regions[0].block)
    iv_slot, iter_slots = body.arg_slots[0], body.arg_slots[1:]
    steps, yields = body.steps, body.term_slots
    iv_dtype = storage_dtype(op.lb.type.scalar)
    loc = op.loc

    def run(env: Env) -> None:
        start, stop, step = int(env[lb]), int(env[ub]), int(env[st])
        if step == 0:
            if start < stop:  # the GPU would spin forever; say so instead of hanging
                raise InterpreterError("TLXC-INTERP-003", f"for loop from {start} to {stop} with step 0 never ends",
                                       loc)
            step = 1
        values = [env[s] for s in inits]
        # range() follows scf.for: iv < ub for a positive step, iv > ub for a negative one
        for i in range(start, stop, step):
            env[iv_slot] = np.asarray(i, dtype=iv_dtype)
            for s, v in zip(iter_slots, values):
                env[s] = v
            for f in steps:
                f(env)
            values = [env[s] for s in yields]
        for s, v in zip(outs, values):
            env[s] = v

    return run


@executes(C.WhileOp)
def _while(op: Operation, compiler: Compiler) -> Step:
    inits = [compiler.slot(v) for v in op.operands]
    outs = [compiler.slot(r) for r in op.results]
    before = compiler.block(op.regions[0].block)
    after = compiler.block(op.regions[1].block)

    def run(env: Env) -> None:
        values = [env[s] for s in inits]
        while True:
            cond, *carried = before.run(env, values)
            if not cond:
                break
            values = after.run(env, carried)
        for s, v in zip(outs, carried):
            env[s] = v

    return run


@executes(C.IfOp)
def _if(op: Operation, compiler: Compiler) -> Step:
    cond = compiler.slot(op.cond)
    outs = [compiler.slot(r) for r in op.results]
    then_block = compiler.block(op.regions[0].block)
    else_block = compiler.block(op.regions[1].block)

    def run(env: Env) -> None:
        taken = then_block if env[cond] else else_block
        for s, v in zip(outs, taken.run(env)):
            env[s] = v

    return run
