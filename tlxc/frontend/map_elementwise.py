"""``tl.map_elementwise(fn, *args, pack=1)``: a scalar ``@tlxc.jit`` function applied to
every element of tiles (recent Triton).

Triton builds a region that runs ``fn`` on one element at a time. tlxc inlines ``fn``
once, with its arguments broadcast to their common shape: each operation of a
straight-line body then applies to every element, which is what running it per element
means. Control flow on the elements is where the two differ, and ``MapGenerator`` turns
it into data flow:

* ``if c:`` on a runtime value visits both branches, one after the other, and joins the
  names they assign with ``tl.where(c, then_value, else_value)``;
* ``a if c else b`` is ``tl.where(c, a, b)``;
* ``return v`` under the conditions of the enclosing ifs (the *predicate*) writes ``v``
  into the result where the predicate holds and no earlier return did, and records those
  elements as returned::

      def compare(x, y):          result = where(x < y, -1, where(x == y, 0, 1))
          if x < y:                 (built as: r = -1; done = x < y;
              return -1                        r = where(~done & (x == y), 0, r); ...)
          elif x == y:
              return 0
          else:
              return 1

Both branches run for every element, so this is right only where they have no effects:
every operation built inside ``fn`` must be elementwise and pure (arithmetic, math,
comparisons, selects, casts, pointer arithmetic; constants and loops on values that do
not depend on the elements). Anything else -- loads, stores, atomics, assertions,
reductions, shape changes, a loop or ``while`` whose trip count depends on the element --
is refused at its line, naming it. ``pack`` > 1 hands ``fn`` several elements per call
(``fn`` then takes and returns ``pack`` values per operand); which elements travel
together depends on Triton's register layout, so tlxc refuses it rather than guess.
"""

from __future__ import annotations

import ast
from typing import Any

from ..errors import CompilationError
from ..ir import ops
from ..ir.types import DType, PointerType, TileType
from .function import KernelDef
from .scope import describe_types, has_tensor, same_constant, types_of
from .semantics import arith
from .semantics.base import is_number, to_tensor
from .semantics.shape import broadcast_shapes, broadcast_to_shape
from .values import Tensor, describe, flatten, is_constexpr
from .visitor import CodeGenerator

# Ops that compute each element from the same element of their operands (or build
# constants and splats), and the structured control flow over values that do not depend
# on the elements. Everything in ir/ops/arith.py is elementwise.
_ELEMENTWISE_MODULE = ops.ConstantOp.__module__
_ALLOWED = (ops.SplatOp, ops.BroadcastOp, ops.IfOp, ops.ForOp, ops.WhileOp, ops.YieldOp, ops.ConditionOp,
            ops.ProgramIdOp, ops.NumProgramsOp, ops.MultipleOfOp, ops.MaxContiguousOp, ops.MaxConstancyOp)
_NO_VALUE = ("<nothing returned yet>",)


def map_elementwise(gen: CodeGenerator, node: ast.Call) -> Any:
    """``tl.map_elementwise(fn, *args, pack=1)`` at ``node``, built by ``gen``."""
    args, kwargs = gen.call_args(node), gen.call_kwargs(node)
    pack = kwargs.pop("pack", 1)
    if kwargs:
        raise gen.error(node, "TLXC-CALL-002", f"tl.map_elementwise does not take {', '.join(map(repr, kwargs))}")
    if not args:
        raise gen.error(node, "TLXC-CALL-002", "tl.map_elementwise needs a function and at least one tensor")
    fn, values = args[0], list(args[1:])
    if not isinstance(fn, KernelDef):
        raise gen.error(node, "TLXC-CALL-002", f"tl.map_elementwise maps a @tlxc.jit function, got {describe(fn)}")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
        raise gen.error(node, "TLXC-CONSTEXPR-001", f"pack must be a positive compile-time integer, got "
                        f"{describe(pack)}")
    if pack != 1:
        raise gen.error(node, "TLXC-CALL-002", f"tl.map_elementwise(pack={pack}) is not supported: with pack > 1 "
                        f"{fn.__name__} gets {pack} elements of each tensor per call, and which elements travel "
                        "together is Triton's register layout, which tlxc does not reproduce",
                        "write the function for one element (pack=1)")
    if not values:
        raise gen.error(node, "TLXC-CALL-002", "tl.map_elementwise needs at least one tensor to map over")
    tensors = []
    for i, v in enumerate(values):
        if not (isinstance(v, Tensor) or is_number(v)):
            raise gen.error(node, "TLXC-TYPE-001", f"tl.map_elementwise maps over numbers and tensors; argument "
                            f"{i + 2} is {describe(v)}")
        tensors.append(to_tensor(gen.ctx, v))
    shape: tuple[int, ...] = ()
    for t in tensors:
        shape = broadcast_shapes(shape, t.shape)
    tensors = [broadcast_to_shape(gen.ctx, t, shape) for t in tensors]
    try:
        bound = fn.signature.bind(*tensors)
    except TypeError as e:
        raise gen.error(node, "TLXC-CALL-002", f"tl.map_elementwise: {fn.__name__}(): {e}") from None
    bound.apply_defaults()
    mapper = MapGenerator(fn.source, gen.builder, dict(bound.arguments), gen.inline_depth + 1, gen.used_globals,
                          gen.loops, gen.callees, shape)
    if fn not in gen.callees:
        gen.callees.append(fn)
    with gen.builder.journal_of() as built:
        result = mapper.run(fn)
    for op in built:
        check_elementwise(op, fn, shape)
    if result is None:
        raise gen.error(node, "TLXC-TYPE-002", f"tl.map_elementwise: {fn.__name__} returns nothing; it must return "
                        "one value or a tuple of values per element")
    return result


def check_elementwise(op: Any, fn: KernelDef, shape: tuple[int, ...], what: str = "tl.map_elementwise") -> None:
    allowed = type(op).__module__ == _ELEMENTWISE_MODULE or isinstance(op, _ALLOWED)
    if allowed:
        for r in op.results:
            if isinstance(r.type, TileType) and r.type.shape != shape:
                allowed = False
    if not allowed:
        raise CompilationError("TLXC-CALL-002", f"{what}: '{op.NAME}' in {fn.__name__} is not an "
                               "elementwise operation without effects; tlxc applies the function to whole tiles, "
                               "with both sides of each if computed, so it can hold arithmetic, math, comparisons, "
                               "selects and casts only", op.loc,
                               "do loads, stores, reductions and shape changes outside the mapped function")


class MapGenerator(CodeGenerator):
    """The visitor for a function mapped over elements (see the module docstring):
    ``pred`` holds where the statements being visited run (None: everywhere), ``exited``
    where the function has returned (False: nowhere, True: everywhere) and ``retval``
    what it returned there."""

    def __init__(self, src: Any, builder: Any, scope: dict[str, Any], inline_depth: int, used_globals: Any,
                 loops: Any, callees: Any, shape: tuple[int, ...]) -> None:
        super().__init__(src, builder, scope, inline_depth, used_globals, loops, callees)
        self.shape = shape
        self.pred: Tensor | None = None
        self.exited: Tensor | bool = False
        self.retval: Any = _NO_VALUE
        self.returned_nothing = False
        self.ended = False  # the statement just visited returned on every path

    def run(self, fn: KernelDef) -> Any:
        """Visit the body; the value returned, per element (None if it returns nothing)."""
        self.visit_block(fn.source.tree.body)
        if self.retval is _NO_VALUE:
            return None
        if self.exited is not True or self.returned_nothing:
            end = fn.source.tree.body[-1]
            raise self.error(end, "TLXC-TYPE-002", f"{fn.__name__} returns a value on some paths and nothing on "
                             "others; under tl.map_elementwise (and in Triton) every path must return a value")
        return self.retval

    def callee(self, src: Any, scope: dict[str, Any]) -> CodeGenerator:
        # helpers called from the mapped function are mapped too: their ifs become selects
        return MapGenerator(src, self.builder, scope, self.inline_depth + 1, self.used_globals, self.loops,
                            self.callees, self.shape)

    def inline_result(self, callee: CodeGenerator, fn: KernelDef) -> Any:
        assert isinstance(callee, MapGenerator)
        return callee.run(fn)

    # -- values -------------------------------------------------------------------------------------
    def _full(self, v: Any) -> Any:
        """``v`` with numbers made runtime values and every tensor broadcast to the map's shape."""
        if isinstance(v, tuple):
            return tuple(self._full(x) for x in v)
        if is_number(v):
            v = to_tensor(self.ctx, v)
        if isinstance(v, Tensor):
            return broadcast_to_shape(self.ctx, v, self.shape)
        return v

    def _select(self, node: ast.AST, c: Tensor, a: Any, b: Any, what: str) -> Any:
        """``tl.where(c, a, b)`` over values of the same structure and types."""
        a, b = self._full(a), self._full(b)
        if not has_tensor(a) or not has_tensor(b):
            if same_constant(a, b):
                return a
            raise self.error(node, "TLXC-TYPE-002", f"{what} is {describe(a)} on one side and {describe(b)} on the "
                             "other, under a condition on the elements")
        if types_of(a) != types_of(b):
            raise self.error(node, "TLXC-TYPE-002", f"{what} is {describe_types(types_of(a))} on one side and "
                             f"{describe_types(types_of(b))} on the other")
        ha, rebuild = flatten(a)
        hb, _ = flatten(b)
        out = []
        for x, y in zip(ha, hb):
            if not isinstance(x.type, (DType, PointerType, TileType)):
                raise self.error(node, "TLXC-TYPE-001", f"{what} holds {describe(Tensor(x))}, which a condition on "
                                 "the elements cannot choose")
            out.append(arith.where(self.ctx, c, Tensor(x), Tensor(y)).handle)
        return rebuild(out)

    def _and(self, a: Tensor | None, b: Tensor) -> Tensor:
        return b if a is None else arith.binary(self.ctx, "and", a, b)

    # -- statements -------------------------------------------------------------------------------
    def visit_block(self, stmts: list[ast.stmt]) -> bool:
        """Visit statements; True when every path through them returned (the rest is dead)."""
        for stmt in stmts:
            if self.exited is True:
                return True  # every element has returned
            self.ended = False
            self.visit(stmt)
            if isinstance(stmt, ast.Return) or self.ended:
                if self.pred is None:
                    self.exited = True  # what an if whose branches all returned leaves behind
                self.ended = True
                return True
        return False

    def visit_If(self, node: ast.If) -> None:
        cond = self.visit(node.test)
        if is_constexpr(cond):
            self.visit_block(node.body if cond else node.orelse)
            return
        c = arith.to_bool(self.ctx, cond)
        livein, outer = dict(self.scope), self.pred
        scopes, ended = [], []
        for where, stmts in ((c, node.body), (arith.logical_not(self.ctx, c), node.orelse)):
            self.scope, self.pred = dict(livein), self._and(outer, where)
            ended.append(self.visit_block(stmts))
            scopes.append(self.scope)
        self.scope, self.pred = livein, outer
        self.ended = all(ended)
        then_scope, else_scope = scopes
        for name in [n for n in then_scope if n in else_scope]:  # one path only: not visible after (as in Triton)
            a, b = then_scope[name], else_scope[name]
            if a is b:
                self.scope[name] = a
            else:
                self.scope[name] = self._select(node, c, a, b, f"'{name}'")

    def visit_Return(self, node: ast.Return) -> None:
        if self.loop_depth:
            super().visit_Return(node)  # reports it
        value = self.visit(node.value) if node.value is not None else None
        if value is None or (is_constexpr(value) and not is_number(value) and not isinstance(value, tuple)):
            if value is not None:
                raise self.error(node, "TLXC-TYPE-001", f"a mapped function returns values per element, not "
                                 f"{describe(value)}")
            self.returned_nothing = True
        else:
            value = self._full(value)
            if self.retval is _NO_VALUE:
                self.retval = value  # the elements that have not returned get theirs from a later return
            else:
                live = self.pred if self.exited is False else self._and(
                    self.pred, arith.logical_not(self.ctx, self.exited))  # type: ignore[arg-type]
                self.retval = self._select(node, live, value, self.retval, "the value returned")
        if self.pred is None:
            self.exited = True
        else:
            self.exited = self.pred if self.exited is False else arith.binary(self.ctx, "or", self.exited, self.pred)
        self.ret, self.returned = self.retval, True

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if is_constexpr(cond):
            return self.visit(node.body if cond else node.orelse)
        c = arith.to_bool(self.ctx, cond)
        return self._select(node, c, self.visit(node.body), self.visit(node.orelse), "'a if c else b'")

    def refuse_tile_condition(self, node: ast.AST, c: Tensor, what: str) -> CompilationError:
        return self.error(node, "TLXC-CALL-002", f"tl.map_elementwise: {what} depends on the element "
                          f"({describe(c)}); tlxc maps the function over whole tiles and cannot give each element "
                          "its own number of iterations", "bound the loop by a compile-time value and select the "
                          "result with tl.where, or compute it outside the mapped function")
