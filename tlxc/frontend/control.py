"""Control flow for the AST visitor: ``if``/``elif``/``else`` (folded when the
condition is a constant), ``a if c else b``, ``for`` over ``range``/``tl.range``
(a loop in the IR) or ``tl.static_range`` and constant tuples (unrolled here),
``while``, and ``return`` anywhere outside loops.

Variables that a branch or a loop body changes flow out through the region's results,
as in Triton: a variable assigned in a loop and live before it is loop-carried and must
keep its type; one assigned in both branches of an ``if`` (or in one and live before)
is yielded by both. An ``if`` containing ``return`` is handled by moving the statements
that follow it into both branches, so that each branch ends the function; its results
are then the function's return values. Where both branches may fall through, that copy
would repeat for every such ``if`` that follows: a return flag (and the value returned)
flows out of the ``if`` instead, and what follows runs once, under ``if not flag``.
"""

from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Any

from ..errors import CompilationError
from ..ir import ops
from ..ir.core import Block, Region
from ..ir.types import DType, Kind, PointerType, TileType, int32, int64
from ..language import core as tl
from .scope import contains_return, describe_types, has_tensor, same_constant, types_of
from .semantics import arith
from .semantics.base import constant, is_number, to_tensor
from .semantics.misc import WhileCondition
from .semantics.tlx_tasks import kernel_facts
from .values import Tensor, describe, flatten, is_constexpr, remake, unwrap

if TYPE_CHECKING:  # pragma: no cover
    from .visitor import CodeGenerator as _Base
else:
    _Base = object

# tl.range's scheduling requests: positive integers, recorded on the loop op (the
# software pipeline reads num_stages; the loop-unroll pass consumes loop_unroll_factor).
_RANGE_OPTIONS = ("num_stages", "loop_unroll_factor")
# Requests that are a yes/no. ``warp_specialize`` asks Triton to split the loop into
# producer and consumer warps by itself; tlxc records the request on the loop but does not
# split loops automatically yet (explicit ``tlx.async_tasks`` do that), so the loop runs
# unspecialized and computes the same numbers. ``multi_cta`` splits the loop's iterations
# over the CTAs of the cluster and sums what the loop accumulated across them (the
# ``multi-cta`` pass, ``tlxc/ir/passes/multi_cta.py``). ``flatten`` fuses the loop with the
# loop nested in it, so that a persistent kernel's pipeline runs on from tile to tile (the
# ``flatten-loops`` pass, ``tlxc/ir/passes/flatten_loops.py``).
_RANGE_FLAGS = ("warp_specialize", "multi_cta", "flatten")
# A performance hint of Triton's that changes no result, accepted and not recorded:
# ``disallow_acc_multi_buffer`` (tlxc never multi-buffers an accumulator: always true).
_RANGE_HINTS = ("disallow_acc_multi_buffer",)


class ControlSignal(Exception):
    """Raised through the visitor to undo a way of building control flow and try another:
    never a user error nor a compiler bug, so ``CodeGenerator.visit`` lets it pass."""


# The scope entries of the return flag and of the value returned (no Python name can
# clash with them), and the value that stands for "nothing returned yet".
_EXIT = "<returned>"
_RETVAL = "<return value>"
_NO_VALUE = ("<no return value yet>",)


class _Unflaggable(ControlSignal):
    """A value returned under the return flag that no placeholder can stand for on the
    paths that have not returned (a buffer, a descriptor, a string...): the if is built
    again the other way (the statements after it copied into its branches)."""


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in a return (as far as syntax tells)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            return True
        if isinstance(stmt, ast.If) and always_returns(stmt.body) and always_returns(stmt.orelse):
            return True
    return False


def valueless_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every ``return`` in ``stmts`` returns nothing (``return`` or ``return None``)."""
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Return) and n.value is not None and not (
                    isinstance(n.value, ast.Constant) and n.value.value is None):
                return False
    return True


class ControlFlowMixin(_Base):
    exit_flag = False  # statements are under a return flag (_if_with_return_flagged)

    # -- statement lists and return ---------------------------------------------------------------
    def visit_block(self, stmts: list[ast.stmt]) -> bool:
        """Visit statements in order; True when they ended the function (a return)."""
        if self.exit_flag:
            return self._visit_block_flagged(stmts)
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.If) and contains_return(stmt):
                self.if_with_return(stmt, stmts[i + 1:])
                return True
            self.visit(stmt)
            if isinstance(stmt, ast.Return):
                return True
        return False

    def visit_Return(self, node: ast.Return) -> None:
        if self.loop_depth:
            raise self.error(node, "TLXC-SYNTAX-001", "return inside a loop is not supported",
                             "carry the result in a variable and return after the loop")
        value = self.visit(node.value) if node.value is not None else None
        self.ret = value
        self.returned = True

    def if_with_return(self, node: ast.If, rest: list[ast.stmt]) -> None:
        if self.loop_depth:
            raise self.error(node, "TLXC-SYNTAX-001", "return inside a loop is not supported",
                             "carry the result in a variable and return after the loop")
        cond = self.visit(node.test)
        then_stmts, else_stmts = list(node.body) + rest, list(node.orelse) + rest
        if is_constexpr(cond):
            self.visit_block(then_stmts if cond else else_stmts)
            self.returned = True
            return
        c = arith.to_bool(self.ctx, cond)
        if rest and not always_returns(node.body) and not always_returns(node.orelse):
            if valueless_returns([node] + rest):
                return self._if_with_return_flagged(node, c, rest)
            saved = dict(self.scope)
            try:
                with self.builder.journal_of() as built:
                    return self._if_with_return_flagged(node, c, rest, values=True)
            except _Unflaggable:
                for op in reversed(built):  # what the attempt built, in blocks left unattached too
                    op.erase()
                self.scope, self.exit_flag = saved, False
        self._if_with_return_copied(node, c, rest)

    def _if_with_return_copied(self, node: ast.If, c: Tensor, rest: list[ast.stmt]) -> None:
        """The statements after the if copied into both branches, each then ending the function."""
        then_stmts, else_stmts = list(node.body) + rest, list(node.orelse) + rest
        saved = dict(self.scope)
        results = []
        blocks = []
        for stmts in (then_stmts, else_stmts):
            block = Block()
            self.scope = dict(saved)
            self.ret, self.returned = None, False
            with self.builder.at_end(block):
                self.visit_block(stmts)
                ret = self.sanitize_yield(self.ret)
            results.append(ret)
            blocks.append(block)
        self.scope = saved
        a, b = results
        if not has_tensor(a) and not has_tensor(b):
            if not same_constant(a, b):
                raise self.error(node, "TLXC-TYPE-002", "the branches return different compile-time values "
                                 f"({a!r} and {b!r}) under a runtime condition")
            # the branches still hold the work done before returning (stores...)
            self._build_if(node, c, blocks, [(), ()])
            self.ret, self.returned = a, True
            return
        if types_of(a) != types_of(b):
            raise self.error(node, "TLXC-TYPE-002", "the branches return different types: "
                             f"{describe_types(types_of(a))} and {describe_types(types_of(b))}")
        self._same_constness(node, a, b, _RETURNS_BOTH)
        self.ret = self._build_if(node, c, blocks, [a, b])
        _keep_constness(a, self.ret)
        self.returned = True

    def _same_constness(self, node: ast.AST, a: Any, b: Any, what: str) -> None:
        """A tl.const pointer and a writable one are different types where a runtime
        condition joins them (``what``: Triton's wording for the join, with ours)."""
        if _constness(a) != _constness(b):
            raise self.error(node, "TLXC-TYPE-002", f"{what} a tl.const pointer on one path and a writable pointer "
                             "on the other", "annotate both pointers alike")

    # Copying the statements after an ``if`` into both of its branches is exponential when
    # both branches may fall through to them and they hold such ifs again (``if c: if d:
    # return``, n times: 2**n copies). There a flag tells whether the function has
    # returned: a return sets it, the if yields it, and the statements that follow run
    # once, under ``if not flag``. A returned value travels beside the flag (``values``):
    # the if yields it too, a placeholder of its type standing for it on the paths that
    # have not returned (the flag says it is never read there), and the function's value
    # is the if's result: what the statements after it return, or the value carried.
    def _if_with_return_flagged(self, node: ast.If, c: Tensor, rest: list[ast.stmt], values: bool = False) -> None:
        self.scope[_EXIT] = False
        if values:
            self.scope[_RETVAL] = _NO_VALUE
        self.exit_flag = True
        try:
            self._runtime_if(node, c)
        finally:
            self.exit_flag = False
        flag = self.scope.pop(_EXIT)
        carried = self.scope.pop(_RETVAL, _NO_VALUE)
        self.ret = None
        if is_constexpr(flag):  # every return was in a branch folded away, or every path returned
            if flag:
                self.ret = None if carried is _NO_VALUE else carried
            else:
                self.visit_block(rest)
            self.returned = True
            return
        block = Block()
        saved = dict(self.scope)
        self.ret = None
        with self.builder.at_end(block):
            self.visit_block(rest)
            value = self.ret
            if carried is not _NO_VALUE:
                value = self._returned_value(node, value, carried)
        self.scope = saved
        if carried is _NO_VALUE:
            self._build_if(node, arith.logical_not(self.ctx, flag), [block, Block()], [(), ()])
            self.ret = None
        else:
            self.ret = self._build_if(node, arith.logical_not(self.ctx, flag), [block, Block()], [value, carried])
        self.returned = True

    def _returned_value(self, node: ast.AST, value: Any, carried: Any) -> Any:
        """What the statements after a flagged if return, checked against the value an
        earlier return carries (the two results of the if that joins them)."""
        if value is None or not (has_tensor(value) or is_number(value) or isinstance(value, tuple)):
            raise self.error(node, "TLXC-TYPE-002", f"the function returns {describe(carried)} on one path and "
                             f"{'nothing' if value is None else describe(value)} on another")
        value = self.sanitize_yield(value)
        if types_of(value) != types_of(carried):
            raise self.error(node, "TLXC-TYPE-002", "the function returns different types on different paths: "
                             f"{describe_types(types_of(carried))} and {describe_types(types_of(value))}")
        self._same_constness(node, carried, value, _RETURNS_BOTH)
        return value

    def _placeholder(self, v: Any) -> Any:
        """A value of ``v``'s types (zeros, null pointers) for the paths of a flagged if
        that have not returned: never read, since the flag tells them apart."""
        if not has_tensor(v):
            raise _Unflaggable()
        handles, rebuild = flatten(v)
        out = []
        for h in handles:
            t = h.type
            scalar = t.scalar if isinstance(t, (DType, PointerType, TileType)) else None
            shape = t.shape if isinstance(t, TileType) else ()
            if isinstance(scalar, DType):
                out.append(constant(self.ctx, 0, scalar, shape).handle)
            elif isinstance(scalar, PointerType):
                zero = constant(self.ctx, 0, int64, shape).handle
                out.append(self.builder.value(ops.IntToPtrOp, [zero], t))
            else:
                raise _Unflaggable()
        return rebuild(out)

    def _visit_block_flagged(self, stmts: list[ast.stmt]) -> bool:
        """Statements in a branch under a return flag: a return sets the flag; what follows
        an ``if`` that may have returned runs under ``if not flag``."""
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                if self.loop_depth:
                    self.visit_Return(stmt)  # reports it
                if _RETVAL in self.scope:
                    value = self.visit(stmt.value) if stmt.value is not None else None
                    if value is None or not (has_tensor(value) or is_number(value) or isinstance(value, tuple)):
                        raise _Unflaggable()  # nothing, or a constant that no branch can yield
                    self.scope[_RETVAL] = self.sanitize_yield(value)
                self.scope[_EXIT] = True
                return False
            self.visit(stmt)
            if i + 1 < len(stmts) and contains_return(stmt):
                flag = self.scope[_EXIT]
                if is_constexpr(flag):
                    if flag:
                        return False
                    continue
                guard = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=_EXIT, ctx=ast.Load())),
                               body=stmts[i + 1:], orelse=[])
                self.visit_If(ast.copy_location(guard, stmts[i + 1]))
                return False
        return False

    def sanitize_yield(self, v: Any) -> Any:
        """Numbers that leave a runtime region become runtime values."""
        if isinstance(v, tuple):
            return remake(v, (self.sanitize_yield(x) for x in v))
        return to_tensor(self.ctx, v) if is_number(v) else v

    def _build_if(self, node: ast.AST, cond: Tensor, blocks: list[Block], values: list[Any]) -> Any:
        rebuild = None
        for block, v in zip(blocks, values):
            handles, rebuild = flatten(v)
            with self.builder.at_end(block):
                self.builder.create(ops.YieldOp, handles)
        op = self.builder.create(ops.IfOp, [cond.handle], [h.type for h in flatten(values[0])[0]], {},
                                 [Region(b) for b in blocks])
        assert rebuild is not None
        return rebuild(list(op.results))

    # -- if / ternary -------------------------------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        cond = self.visit(node.test)
        if is_constexpr(cond):
            self.visit_block(node.body if cond else node.orelse)
            return
        c = arith.to_bool(self.ctx, cond)
        self._runtime_if(node, c)

    def _runtime_if(self, node: ast.If, c: Tensor) -> None:
        if c.shape and c.numel == 1:  # a one-element tile is its element (Triton's test_unsplat)
            c = Tensor(self.ctx.b.value(ops.ReshapeOp, [c.handle], c.dtype))
        if c.shape:
            raise self.error(node.test, "TLXC-TYPE-001", f"an if condition must be a scalar, got {describe(c)}",
                             "use tl.where for elementwise choices")
        livein = dict(self.scope)
        scopes, blocks = [], []
        for stmts in (node.body, node.orelse):
            block = Block()
            self.scope = dict(livein)
            with self.builder.at_end(block):
                self.visit_block(stmts)
            if self.exit_flag and self.scope.get(_EXIT) is True:
                # what a branch that returned assigned is dead, but for the value it returned
                self.scope = {**livein, _EXIT: True, **({_RETVAL: self.scope[_RETVAL]} if _RETVAL in livein else {})}
            scopes.append(self.scope)
            blocks.append(block)
        self.scope = livein
        names, pairs = [], []
        then_scope, else_scope = scopes
        for name in list(then_scope) + [n for n in else_scope if n not in then_scope]:
            if name not in then_scope or name not in else_scope:
                continue  # defined on one path only: not visible after the if (as in Triton)
            a, b = then_scope[name], else_scope[name]
            if a is livein.get(name) and b is livein.get(name):
                continue
            if name == _RETVAL:  # a value returned on one side only: a placeholder on the other
                if a is _NO_VALUE:
                    with self.builder.at_end(blocks[0]):
                        a = self._placeholder(b)
                elif b is _NO_VALUE:
                    with self.builder.at_end(blocks[1]):
                        b = self._placeholder(a)
                if not has_tensor(a) or not has_tensor(b):
                    raise _Unflaggable()
            if not has_tensor(a) and not has_tensor(b):
                if same_constant(a, b):
                    self.scope[name] = a
                    continue
                if not (is_number(a) or isinstance(a, tuple)) or not (is_number(b) or isinstance(b, tuple)):
                    raise self.error(node, "TLXC-TYPE-002", f"'{name}' has different compile-time values in the "
                                     f"two branches of a runtime if ({a!r} and {b!r})")
            names.append(name)
            pairs.append((a, b))
        yields: list[list[Any]] = [[], []]
        for name, (a, b) in zip(names, pairs):
            with self.builder.at_end(blocks[0]):
                a = self.sanitize_yield(a)
            with self.builder.at_end(blocks[1]):
                b = self.sanitize_yield(b)
            if types_of(a) != types_of(b):
                if name == _RETVAL:
                    raise self.error(node, "TLXC-TYPE-002", "the branches return different types: "
                                     f"{describe_types(types_of(a))} and {describe_types(types_of(b))}")
                raise self.error(node, "TLXC-TYPE-002", f"'{name}' is {describe_types(types_of(a))} after the "
                                 f"then-branch but {describe_types(types_of(b))} after the else-branch")
            self._same_constness(node, a, b, _RETURNS_BOTH if name == _RETVAL else f"Mismatched type for {name}: "
                                 "it is")
            yields[0].append(a)
            yields[1].append(b)
        result = self._build_if(node, c, blocks, [tuple(yields[0]), tuple(yields[1])])
        for name, v, a in zip(names, result, yields[0]):
            self.scope[name] = v
            _keep_constness(a, v)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if is_constexpr(cond):
            return self.visit(node.body if cond else node.orelse)
        c = arith.to_bool(self.ctx, cond)
        if c.shape:  # Triton builds an scf.if on it, which its verifier refuses
            raise self.error(node.test, "TLXC-TYPE-001", f"the condition of 'a if c else b' must be a scalar, got "
                             f"{describe(c)}", "use tl.where(c, a, b) to choose elementwise")
        values, blocks = [], []
        for expr in (node.body, node.orelse):
            block = Block()
            with self.builder.at_end(block):
                values.append(self.sanitize_yield(self.visit(expr)))
            blocks.append(block)
        a, b = values
        if not has_tensor(a) and not has_tensor(b):
            if same_constant(a, b):
                return a
            raise self.error(node, "TLXC-TYPE-002", f"a runtime condition chooses between {a!r} and {b!r}")
        if types_of(a) != types_of(b):
            raise self.error(node, "TLXC-TYPE-002", f"the two sides have different types: "
                             f"{describe_types(types_of(a))} and {describe_types(types_of(b))}")
        self._same_constness(node, a, b, "Ternary expression with dynamic condition has inconsistent type:")
        out = self._build_if(node, c, blocks, [a, b])
        _keep_constness(a, out)
        return out

    # -- loops ------------------------------------------------------------------------------------
    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.error(node, "TLXC-SYNTAX-001", "for ... else is not supported in kernels")
        if contains_return(node):
            raise self.error(node, "TLXC-SYNTAX-001", "return inside a loop is not supported",
                             "carry the result in a variable and return after the loop")
        it = node.iter
        if isinstance(it, ast.Call):
            fn = self.visit(it.func)
            if fn is builtins.range or fn is tl.range or fn is tl.static_range:
                args = self.call_args(it)
                kwargs = self.call_kwargs(it)
                if fn is tl.static_range:
                    return self._static_for(node, self._static_range(it, args, kwargs))
                return self._dynamic_for(node, it, args, kwargs, fn is tl.range)
            iterable = self.call_value(it, fn)
        else:
            iterable = self.visit(it)
        if isinstance(iterable, tuple) or isinstance(iterable, (builtins.range, enumerate, zip)):
            return self._static_for(node, list(iterable))
        raise self.error(it, "TLXC-SYNTAX-001", f"cannot loop over {describe(iterable)}",
                         "loop over range(...), tl.range(...), tl.static_range(...) or a constant tuple")

    def _static_items(self, it: ast.expr) -> list[Any]:
        """The members of a comprehension's source: a tuple, or ``range`` / ``tl.range`` /
        ``tl.static_range`` of compile-time bounds (also ``enumerate`` / ``zip`` of those)."""
        if isinstance(it, ast.Call):
            fn = self.visit(it.func)
            if fn is tl.static_range or fn is builtins.range or fn is tl.range:
                args, kwargs = self.call_args(it), self.call_kwargs(it)
                if fn is not tl.static_range and (kwargs or not all(isinstance(unwrap(a), int) for a in args)):
                    raise self.error(it, "TLXC-CONSTEXPR-001", "a comprehension in a kernel is unrolled: its range "
                                     "needs compile-time bounds")
                return self._static_range(it, [unwrap(a) for a in args], kwargs)
            v = self.call_value(it, fn)
        else:
            v = self.visit(it)
        if isinstance(v, (tuple, range, enumerate, zip)):
            return list(v)
        raise self.error(it, "TLXC-CONSTEXPR-001", "a comprehension in a kernel is unrolled: it needs a compile-time "
                         f"iterable (a tuple, or range / tl.static_range of constants), got {describe(v)}")

    def _static_range(self, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> list[int]:
        # Triton's signature: static_range(arg1, arg2=None, step=None)
        names = ("arg1", "arg2", "step")
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise self.error(node, "TLXC-CALL-002", f"tl.static_range got an unexpected keyword argument "
                                                    f"'{unknown[0]}'", "its parameters are arg1, arg2 and step")
        given: list[Any] = list(args) + [None] * (3 - len(args))
        for i, name in enumerate(names):
            if name in kwargs:
                if i < len(args):
                    raise self.error(node, "TLXC-CALL-002", f"tl.static_range got '{name}' twice")
                given[i] = unwrap(kwargs[name])
        if not 1 <= len(args) + len(kwargs) <= 3 or given[0] is None:
            raise self.error(node, "TLXC-CALL-002",
                             "tl.static_range takes 1 to 3 arguments (arg1, arg2=None, step=None)")
        if given[2] is not None and given[1] is None:  # static_range(n, step=s): from 0 to n
            given[0], given[1] = 0, given[0]
        args = [a for a in given if a is not None]
        for a in args:
            if not isinstance(a, int) or isinstance(a, bool):
                raise self.error(node, "TLXC-CONSTEXPR-001",
                                 f"tl.static_range bounds must be compile-time integers, got {describe(a)}")
        if len(args) == 3 and args[2] == 0:
            raise self.error(node, "TLXC-TYPE-001", "tl.static_range step must not be zero")
        return list(builtins.range(*args))

    def _static_for(self, node: ast.For, values: list[Any]) -> None:
        for v in values:
            self.assign(node.target, v)
            self.visit_block(node.body)

    def _loop_bounds(self, node: ast.Call, args: list[Any]) -> list[Tensor]:
        if not 1 <= len(args) <= 3:
            raise self.error(node, "TLXC-CALL-002", "range takes 1 to 3 arguments")
        lb, ub, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1) if len(args) == 2 else args
        if isinstance(step, int) and step == 0:
            raise self.error(node, "TLXC-TYPE-001", "range step must not be zero")
        bounds = []
        for v in (lb, ub, step):
            if is_number(v) and not isinstance(v, (bool, float)):
                v = to_tensor(self.ctx, v)
            if isinstance(v, Tensor) and v.shape:
                raise self.refuse_tile_condition(node, v, "a bound of a range loop")
            if not isinstance(v, Tensor) or not v.dtype.is_int() or v.dtype.kind == Kind.BOOL:
                raise self.error(node, "TLXC-TYPE-001", f"range bounds must be integer scalars, got {describe(v)}")
            bounds.append(v)
        t = bounds[0].dtype
        for b in bounds[1:]:
            t = arith.integer_promote(t, b.dtype)
        if t.bits < 32:
            t = int32
        return [arith.cast(self.ctx, b, t) for b in bounds]

    def _dynamic_for(self, node: ast.For, it: ast.Call, args: list[Any], kwargs: dict[str, Any],
                     is_tl_range: bool) -> None:
        attrs: dict[str, Any] = {}
        for k, v in kwargs.items():
            if not is_tl_range or k not in _RANGE_OPTIONS + _RANGE_FLAGS + _RANGE_HINTS:
                allowed = ", ".join(_RANGE_OPTIONS + _RANGE_FLAGS + _RANGE_HINTS) if is_tl_range else "none"
                raise self.error(it, "TLXC-CALL-002", f"{'tl.range' if is_tl_range else 'range'} does not take "
                                 f"'{k}' (supported options: {allowed})")
            if k in _RANGE_FLAGS + _RANGE_HINTS:
                if v is not None and not isinstance(v, bool):
                    raise self.error(it, "TLXC-CONSTEXPR-001", f"{k} must be a compile-time bool, got "
                                     f"{describe(v)}")
                if v is not None and k in _RANGE_FLAGS:
                    attrs[k] = v
                continue
            low = 0 if k == "loop_unroll_factor" else 1
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < low):
                raise self.error(it, "TLXC-CONSTEXPR-001", f"{k} must be a {'non-negative' if low == 0 else 'positive'}"
                                 f" compile-time integer, got {describe(v)}")
            if k == "loop_unroll_factor" and v is not None and v <= 1:
                continue  # as in Triton, 0 and 1 ask for no unrolling: nothing to record
            attrs[k] = v
        lb, ub, step = self._loop_bounds(it, args)
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "TLXC-SYNTAX-001", "the loop variable of a range loop must be a name")
        iv_name = node.target.id
        livein = dict(self.scope)
        carried = self._loop_carried(node, livein, [lb.type], lambda blk: {iv_name: Tensor(blk.args[0])},
                                     node.body)
        inits = self._loop_inits(carried, livein)
        init_handles, rebuilds = self._flatten_all(inits)
        if self.loops.dry:
            return self._dry_loop_exit(livein, carried, init_handles, rebuilds)
        body = Block([lb.type] + [h.type for h in init_handles], [iv_name] + self._hints(carried, rebuilds))
        self.scope = dict(livein)
        self.scope[iv_name] = Tensor(body.args[0])
        self._bind_carried(carried, rebuilds, body.args[1:])
        self.loop_depth += 1
        with self.builder.at_end(body):
            self.visit_block(node.body)
            self._yield_carried(node, carried, inits)
        self.loop_depth -= 1
        op = self.builder.create(ops.ForOp, [lb.handle, ub.handle, step.handle] + init_handles,
                                 [h.type for h in init_handles], attrs, [Region(body)])
        self.scope = livein
        self._bind_carried(carried, rebuilds, list(op.results))

    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.error(node, "TLXC-SYNTAX-001", "while ... else is not supported in kernels")
        if contains_return(node):
            raise self.error(node, "TLXC-SYNTAX-001", "return inside a loop is not supported")
        livein = dict(self.scope)
        if self.loops.dry and self._constant_false_condition(node.test, livein):
            return None  # the loop never runs: what the real visit below finds too
        carried = self._loop_carried(node, livein, [], lambda blk: {}, node.body)
        inits = self._loop_inits(carried, livein)
        init_handles, rebuilds = self._flatten_all(inits)
        if self.loops.dry:
            return self._dry_loop_exit(livein, carried, init_handles, rebuilds)
        types = [h.type for h in init_handles]
        before = Block(types, self._hints(carried, rebuilds))
        self.scope = dict(livein)
        self._bind_carried(carried, rebuilds, before.args)
        with self.builder.at_end(before):
            cond = self._while_condition(node.test)
            if is_constexpr(cond):
                if cond:
                    raise self.error(node.test, "TLXC-SYNTAX-001", "a while loop whose condition is always true "
                                     "never ends (break is not supported)")
                self.scope = livein
                return
            c = arith.to_bool(self.ctx, cond)
            if c.shape:
                raise self.refuse_tile_condition(node.test, c, "the condition of a while loop")
            self.builder.create(ops.ConditionOp, [c.handle] + list(before.args))
        after = Block(types, self._hints(carried, rebuilds))
        self.scope = dict(livein)
        self._bind_carried(carried, rebuilds, after.args)
        self.loop_depth += 1
        with self.builder.at_end(after):
            self.visit_block(node.body)
            self._yield_carried(node, carried, inits)
        self.loop_depth -= 1
        op = self.builder.create(ops.WhileOp, init_handles, types, {}, [Region(before), Region(after)])
        self.scope = livein
        self._bind_carried(carried, rebuilds, list(op.results))

    def refuse_tile_condition(self, node: ast.AST, c: Tensor, what: str) -> CompilationError:
        """The error for a tile where a loop needs one value (a condition, a bound)."""
        return self.error(node, "TLXC-TYPE-001", f"{what} must be a scalar, got {describe(c)}")

    # -- loop helpers -------------------------------------------------------------------------------
    # Which names a loop carries is found by a dry run of its body (below). Done naively, a
    # loop nested d deep is visited 2**d times: each enclosing loop's dry run and real run
    # visit it, and each of those visits runs its own dry run. Two rules keep it linear:
    # inside a dry run a loop is visited once (its dry run) and leaves fresh values of the
    # carried types, which is all an enclosing dry run needs; and the answer is remembered
    # per loop and per scope it starts in (types, constants, which names share a value), so
    # the real visit that follows finds it without a second dry run.
    def _loop_carried(self, node: ast.AST, livein: dict[str, Any], arg_types: list, bind: Any,
                      body: list[ast.stmt]) -> list[str]:
        key = self.loops.key(node, livein)
        if key is not None and key in self.loops.carried:
            return self.loops.carried[key]
        names = self._carried_names(node, livein, arg_types, bind, body)
        if key is not None:
            self.loops.carried[key] = names
        return names

    def _dry_loop_exit(self, livein: dict[str, Any], carried: list[str], init_handles: list, rebuilds: list) -> None:
        """A loop met inside an enclosing loop's dry run: its carried names get fresh values of
        their types, as the results of the real loop op would be."""
        self.scope = livein
        self._bind_carried(carried, rebuilds, Block([h.type for h in init_handles]).args)

    def _while_condition(self, test: ast.expr) -> Any:
        """A while loop's condition, unwrapped from ``tl.condition(c, disable_licm)``."""
        cond = self.visit(test)
        return cond.value if isinstance(cond, WhileCondition) else cond

    def _constant_false_condition(self, test: ast.expr, livein: dict[str, Any]) -> bool:
        self.scope = dict(livein)
        with self.builder.at_end(Block()):
            cond = self._while_condition(test)
        self.scope = livein
        return is_constexpr(cond) and not cond

    def _carried_names(self, node: ast.AST, livein: dict[str, Any], arg_types: list, bind: Any,
                       body: list[ast.stmt]) -> list[str]:
        """Names the body reassigns that are live before the loop (found by a dry run whose
        IR is thrown away, as Triton does)."""
        dry = Block(arg_types)
        self.scope = dict(livein)
        self.scope.update(bind(dry))
        self.loop_depth += 1
        self.loops.dry += 1
        try:
            with self.builder.at_end(dry):
                self.visit_block(body)
        finally:
            self.loop_depth -= 1
            self.loops.dry -= 1
        after = self.scope
        self.scope = dict(livein)
        for op in reversed(list(dry.ops)):
            op.erase()
        bound = set(bind(Block(arg_types)))
        names = [n for n in after if n in livein and n not in bound and after[n] is not livein[n]]
        for n in names:
            before, now = livein[n], after[n]
            if not has_tensor(before) and not has_tensor(now) and same_constant(before, now):
                continue
            if not (has_tensor(before) or is_number(before) or isinstance(before, tuple)):
                raise self.error(node, "TLXC-LOOP-001", f"'{n}' is reassigned in the loop but holds "
                                 f"{describe(before)}, which cannot be carried through a loop")
            with self.builder.at_end(Block()):
                t_before = types_of(self.sanitize_yield(before))
                t_now = types_of(self.sanitize_yield(now)) if (has_tensor(now) or is_number(now)
                                                                or isinstance(now, tuple)) else None
            if t_now != t_before:
                now_desc = describe_types(t_now) if t_now is not None else describe(now)
                raise self.error(self.def_locs.get(n, node), "TLXC-LOOP-001",
                                 f"loop-carried variable '{n}' changes type in the loop: "
                                 f"{describe_types(t_before)} before, {now_desc} after one iteration")
        return [n for n in names if has_tensor(after[n]) or has_tensor(livein[n])
                or not same_constant(livein[n], after[n])]

    def _loop_inits(self, names: list[str], livein: dict[str, Any]) -> list[Any]:
        return [self.sanitize_yield(livein[n]) for n in names]

    @staticmethod
    def _flatten_all(values: list[Any]) -> tuple[list, list]:
        handles, rebuilds = [], []
        for v in values:
            hs, rb = flatten(v)
            handles.extend(hs)
            rebuilds.append((len(hs), rb))
        return handles, rebuilds

    @staticmethod
    def _hints(names: list[str], rebuilds: list) -> list[str | None]:
        """Value names for the printed IR: the variable's name where it is one value."""
        out: list[str | None] = []
        for name, (n, _) in zip(names, rebuilds):
            out += [name] if n == 1 else [None] * n
        return out

    def _bind_carried(self, names: list[str], rebuilds: list, values: list) -> None:
        i = 0
        for name, (n, rb) in zip(names, rebuilds):
            self.scope[name] = rb(list(values[i:i + n]))
            i += n

    def _yield_carried(self, node: ast.AST, names: list[str], inits: list[Any]) -> None:
        handles = []
        for name, init in zip(names, inits):
            v = self.sanitize_yield(self.scope[name])
            if types_of(v) != types_of(init):
                raise self.error(node, "TLXC-LOOP-001", f"loop-carried variable '{name}' changes type in the "
                                 f"loop: {describe_types(types_of(init))} before, "
                                 f"{describe_types(types_of(v))} after one iteration")
            handles.extend(flatten(v)[0])
        self.builder.create(ops.YieldOp, handles)


_RETURNS_BOTH = "Return type mismatch: the function returns"


def _constness(v: Any) -> tuple[bool, ...]:
    """Which of the IR values in ``v`` (a value or a tuple) are ``tl.const`` pointers."""
    read_only = kernel_facts().const_pointers
    return tuple(id(h) in read_only for h in flatten(v)[0])


def _keep_constness(before: Any, after: Any) -> None:
    """A value merged from the branches of an if is read-only where both branches' were."""
    read_only = kernel_facts().const_pointers
    for was, now in zip(flatten(before)[0], flatten(after)[0]):
        if id(was) in read_only:
            read_only.add(id(now))


__all__ = ["ControlFlowMixin", "CompilationError"]
