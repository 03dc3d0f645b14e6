"""Structured control flow and the kernel itself: module, func, for, while, if, and the
terminators yield, condition and return.

``for`` carries values through ``iter_args``: operands ``lb, ub, step, *inits``, one
region whose block arguments are ``(iv, *iters)`` and which ends in ``yield``; the
results are the values after the last iteration. ``while`` has a ``before`` region that
ends in ``condition(cond, *values)`` and an ``after`` region that ends in ``yield``.
"""

from __future__ import annotations

from typing import Sequence

from ..accessors import Attr, Operand, VariadicOperands
from ..core import Block, Operation, Value, register
from ..types import Type
from .base import fail, is_i1, is_int


def _terminator(op: Operation, region_index: int, name: str) -> Operation:
    block = op.regions[region_index].block
    term = block.ops[-1] if block.ops else None
    if term is None or term.NAME != name:
        fail(op, f"region {region_index} must end in '{name}'")
    return term


def _types(values: Sequence[Value]) -> list[Type]:
    return [v.type for v in values]


@register
class ModuleOp(Operation):
    """The top level: a list of kernels (``func``) compiled from one source file."""

    NAME = "module"
    ATTRS = {"source": ""}
    NUM_RESULTS = 0
    NUM_REGIONS = 1
    PURE = False

    source = Attr[str]()

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def funcs(self) -> list[FuncOp]:
        return [op for op in self.body.ops if isinstance(op, FuncOp)]


@register
class FuncOp(Operation):
    """A kernel. Block arguments are the runtime parameters (constexprs are folded in).

    ``arg_divisibility[i]`` is what the signature promised about argument i: for a
    pointer its byte alignment, for an integer that it is a multiple of that value
    (1 when nothing is known). ``smem_total``: the bytes of shared memory the kernel's
    buffers take, written by the ``smem-alloc`` pass (-1 before it ran); the code
    generator's scratch area comes after them. ``cluster_dims``: the cluster shape the
    kernel is compiled for (empty: no clusters). ``num_ctas``: Triton's option -- each
    program runs on a cluster of that many CTAs (``program_id`` counts clusters); the
    NVIDIA code generator lets the first CTA of each cluster run the program and the
    others leave at entry, so that every side effect happens once.
    """

    NAME = "func"
    ATTRS = {"sym_name": Operation.REQUIRED, "arg_divisibility": (), "num_warps": 4, "smem_total": -1,
             "cluster_dims": (), "num_ctas": 1}
    NUM_RESULTS = 0
    NUM_REGIONS = 1
    PURE = False

    sym_name = Attr[str]()
    arg_divisibility = Attr[tuple[int, ...]]()
    num_warps = Attr[int]()
    smem_total = Attr[int]()
    cluster_dims = Attr[tuple[int, ...]]()
    num_ctas = Attr[int]()

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def verify(self) -> None:
        super().verify()
        args = self.body.args
        div = self.arg_divisibility
        if div and len(div) != len(args):
            fail(self, f"arg_divisibility has {len(div)} entries for {len(args)} arguments")
        _terminator(self, 0, "return")


@register
class ReturnOp(Operation):
    """End of a kernel."""

    NAME = "return"
    OPERANDS = ("*values",)
    NUM_RESULTS = 0
    IS_TERMINATOR = True
    PURE = False

    values = VariadicOperands()


@register
class YieldOp(Operation):
    """End of a ``for``/``if`` region or a ``while`` body: the values carried out."""

    NAME = "yield"
    OPERANDS = ("*values",)
    NUM_RESULTS = 0
    IS_TERMINATOR = True
    PURE = False

    values = VariadicOperands()


@register
class ConditionOp(Operation):
    """End of a ``while`` before-region: continue if ``cond``; ``values`` go on to the
    body (or out of the loop)."""

    NAME = "condition"
    OPERANDS = ("cond", "*values")
    NUM_RESULTS = 0
    IS_TERMINATOR = True
    PURE = False

    cond = Operand()
    values = VariadicOperands()

    def verify(self) -> None:
        super().verify()
        c = self.cond.type
        if not is_i1(c) or c.shape:
            fail(self, f"condition must be a scalar i1, got {c}")


@register
class ForOp(Operation):
    """``for iv in range(lb, ub, step)`` with loop-carried values, iterating exactly like
    Python's ``range`` (a negative step counts down; a zero step is never built).

    ``num_stages``, ``loop_unroll_factor``, ``warp_specialize``, ``multi_cta`` and
    ``flatten`` are the user's ``tl.range`` requests (None when not given); the
    ``multi-cta`` pass consumes ``multi_cta``, ``flatten-loops`` consumes ``flatten`` and
    ``loop-unroll`` consumes ``loop_unroll_factor`` (the tile IR after them has none of
    them).
    """

    NAME = "for"
    OPERANDS = ("lb", "ub", "step", "*inits")
    ATTRS = {"num_stages": None, "loop_unroll_factor": None, "warp_specialize": None, "multi_cta": None,
             "flatten": None}
    NUM_RESULTS = None
    NUM_REGIONS = 1
    PURE = False

    lb = Operand()
    ub = Operand()
    step = Operand()
    inits = VariadicOperands()
    num_stages = Attr[int | None]()
    loop_unroll_factor = Attr[int | None]()
    warp_specialize = Attr[bool | None]()
    multi_cta = Attr[bool | None]()
    flatten = Attr[bool | None]()

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def value_flow(self) -> list[tuple[Value, Value]]:
        # inits and what an iteration yields become the carried arguments; they leave as results
        body = self.body
        carried = body.args[1:]
        return (list(zip(self.inits, carried)) + list(zip(body.ops[-1].operands, carried))
                + list(zip(carried, self.results)))

    def verify(self) -> None:
        super().verify()
        lb, ub, step = self.lb, self.ub, self.step
        if not (lb.type == ub.type == step.type) or lb.type.shape or not is_int(lb.type):
            fail(self, f"bounds must be scalar integers of one type, got {lb.type}, {ub.type}, {step.type}")
        inits = _types(self.inits)
        args = _types(self.body.args)
        if args != [lb.type] + inits:
            fail(self, "block arguments must be (iv, *iter_args) with the init types")
        if _types(self.results) != inits:
            fail(self, "results must have the init types")
        term = _terminator(self, 0, "yield")
        if _types(term.operands) != inits:
            fail(self, "yield must carry the init types: loop-carried values cannot change type")


@register
class WhileOp(Operation):
    """``while`` loop: ``before`` computes the condition from the carried values."""

    NAME = "while"
    OPERANDS = ("*inits",)
    NUM_RESULTS = None
    NUM_REGIONS = 2
    PURE = False

    inits = VariadicOperands()

    def value_flow(self) -> list[tuple[Value, Value]]:
        # inits and the body's yield enter ``before``; what the condition forwards enters
        # the body and leaves as the results
        before, after = self.regions[0].block, self.regions[1].block
        forwarded = before.ops[-1].operands[1:]
        return (list(zip(self.inits, before.args)) + list(zip(after.ops[-1].operands, before.args))
                + list(zip(forwarded, after.args)) + list(zip(forwarded, self.results)))

    def verify(self) -> None:
        super().verify()
        inits = _types(self.inits)
        before, after = self.regions[0].block, self.regions[1].block
        if _types(before.args) != inits:
            fail(self, "before-region arguments must have the init types")
        cond = _terminator(self, 0, "condition")
        forwarded = _types(cond.operands[1:])
        if _types(after.args) != forwarded or _types(self.results) != forwarded:
            fail(self, "body arguments and results must have the types the condition forwards")
        term = _terminator(self, 1, "yield")
        if _types(term.operands) != inits:
            fail(self, "the body must yield the init types: loop-carried values cannot change type")


@register
class IfOp(Operation):
    """``if cond`` with a then- and an else-region, each ending in ``yield``."""

    NAME = "if"
    OPERANDS = ("cond",)
    NUM_RESULTS = None
    NUM_REGIONS = 2
    PURE = False

    cond = Operand()

    def value_flow(self) -> list[tuple[Value, Value]]:
        return [(v, r) for region in self.regions for v, r in zip(region.block.ops[-1].operands, self.results)]

    def verify(self) -> None:
        super().verify()
        c = self.cond.type
        if not is_i1(c) or c.shape:
            fail(self, f"condition must be a scalar i1, got {c}")
        want = _types(self.results)
        for i in (0, 1):
            term = _terminator(self, i, "yield")
            if _types(term.operands) != want:
                fail(self, f"region {i} yields {_types(term.operands)}, results are {want}")


def in_loop(op: Operation) -> bool:
    """Whether ``op`` runs inside a ``for`` or ``while`` (a later iteration runs it again)."""
    parent = op.parent.parent_op if op.parent is not None else None
    while parent is not None:
        if isinstance(parent, (ForOp, WhileOp)):
            return True
        parent = parent.parent.parent_op if parent.parent is not None else None
    return False


def carried_slot(v: Value) -> int | None:
    """The iteration argument (its index among the carried values) that ``v`` becomes: when
    ``v`` is defined at the top level of a ``for`` body and its only use is that body's
    ``yield``, in exactly one slot; None otherwise."""
    op = v.owner
    body = op.parent if isinstance(op, Operation) else None
    if body is None or not isinstance(body.parent_op, ForOp):
        return None
    term = body.ops[-1]
    if v.uses != [term]:
        return None
    slots = [j for j, x in enumerate(term.operands) if x is v]
    return slots[0] if len(slots) == 1 else None
