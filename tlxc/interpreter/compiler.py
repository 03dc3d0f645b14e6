"""Compile a kernel's IR once into Python closures over a list of value slots.

Every SSA value (block argument or op result) gets an index into one flat list, ``env``;
nested regions use the same list, so they see the values of enclosing blocks for free.
A block becomes a ``CompiledBlock``: the slots of its arguments, a list of steps (one
closure per op, from the rule tables in ``registry``) and the slots its terminator
carries out. Running a program is then a walk over prepared closures, with no lookup by
op class and no attribute access on the IR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import InternalCompilerError
from ..ir.core import Block, Operation, Value
from ..ir.types import DType, PointerType, TileType, Type
from .numerics import storage_dtype
from .registry import Env, LaunchState, Step, lookup


@dataclass
class CompiledBlock:
    """A block ready to run: bind ``arg_slots``, run ``steps``, read ``term_slots``."""

    arg_slots: tuple[int, ...]
    steps: tuple[Step, ...]
    term_slots: tuple[int, ...]
    terminator: Operation | None

    def run(self, env: Env, args: list[Any] | tuple[Any, ...] = ()) -> list[Any]:
        """Run the block with ``args`` bound to its arguments; return the terminator's operands."""
        for slot, value in zip(self.arg_slots, args):
            env[slot] = value
        for step in self.steps:
            step(env)
        return [env[s] for s in self.term_slots]


class Compiler:
    """Assigns slots and turns ops into steps with the registered rules.

    ``check`` wraps every result in a test that it is a numpy array of the IR type's
    dtype and shape (a debugging aid for rules; the test suite turns it on).
    """

    def __init__(self, state: LaunchState, check: bool = False) -> None:
        self.state = state
        self.check = check
        self.slots: dict[Value, int] = {}

    @property
    def num_slots(self) -> int:
        return len(self.slots)

    def slot(self, value: Value) -> int:
        s = self.slots.get(value)
        if s is None:
            s = self.slots[value] = len(self.slots)
        return s

    def block(self, block: Block) -> CompiledBlock:
        args = tuple(self.slot(a) for a in block.args)
        term = block.terminator
        body = block.ops[:-1] if term is not None else block.ops
        steps = tuple(self.op(op) for op in body)
        term_slots = tuple(self.slot(v) for v in term.operands) if term is not None else ()
        return CompiledBlock(args, steps, term_slots, term)

    def op(self, op: Operation) -> Step:
        found = lookup(type(op))
        if found is None:
            raise InternalCompilerError("the interpreter", f"no interpreter rule for op '{op.name}'", op.loc)
        kind, rule = found
        if kind == "exec":
            return rule(op, self)
        fn = rule(op, self.state)
        ins = tuple(self.slot(v) for v in op.operands)
        outs = tuple(self.slot(r) for r in op.results)
        types = [r.type for r in op.results]
        if len(outs) == 1 and isinstance(types[0], (DType, PointerType)):
            fn = _as_array(fn)
        if self.check:
            fn = _checked(fn, op, types)
        return _wire(fn, ins, outs)


def _as_array(fn: Callable[..., Any]) -> Callable[..., Any]:
    """numpy gives scalars for 0-d operations; scalar values are kept as 0-d arrays."""
    asarray = np.asarray

    def wrapped(*args: Any) -> Any:
        return asarray(fn(*args))

    return wrapped


def _checked(fn: Callable[..., Any], op: Operation, types: list[Type]) -> Callable[..., Any]:
    want = [(storage_dtype(t.scalar), t.shape) if isinstance(t, (DType, PointerType, TileType)) else None
            for t in types]

    def wrapped(*args: Any) -> Any:
        out = fn(*args)
        values = [] if not types else [out] if len(types) == 1 else list(out)
        for v, w in zip(values, want):
            if w is None:  # buffers, barriers, tokens, descriptors: the rules' own objects
                continue
            dt, shape = w
            if not isinstance(v, np.ndarray) or v.dtype != dt or v.shape != shape:
                got = f"{type(v).__name__} {getattr(v, 'dtype', '')} {getattr(v, 'shape', '')}"
                raise AssertionError(f"interpreter rule for '{op.name}' at {op.loc} gave {got}, "
                                     f"expected {dt} of shape {shape}")
        return out

    return wrapped


def _wire(fn: Callable[..., Any], ins: tuple[int, ...], outs: tuple[int, ...]) -> Step:
    """A step that reads ``ins``, calls ``fn`` and writes ``outs``; the common arities get
    their own closure because ``*args`` unpacking costs more than the call itself."""
    n = len(ins)
    if len(outs) == 1:
        r = outs[0]
        if n == 0:
            def step(env: Env) -> None:
                env[r] = fn()
        elif n == 1:
            a = ins[0]

            def step(env: Env) -> None:
                env[r] = fn(env[a])
        elif n == 2:
            a, b = ins

            def step(env: Env) -> None:
                env[r] = fn(env[a], env[b])
        elif n == 3:
            a, b, c = ins

            def step(env: Env) -> None:
                env[r] = fn(env[a], env[b], env[c])
        else:
            def step(env: Env) -> None:
                env[r] = fn(*[env[i] for i in ins])
        return step
    if not outs:
        def step(env: Env) -> None:
            fn(*[env[i] for i in ins])
        return step

    def step(env: Env) -> None:
        for s, v in zip(outs, fn(*[env[i] for i in ins])):
            env[s] = v

    return step
