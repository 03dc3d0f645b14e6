"""``with`` statements for the AST visitor: TLX's warp specialization, the only ``with``
kernels may contain.

``with tlx.async_tasks(...):`` holds ``with tlx.async_task(...):`` blocks, or
compile-time ``if``/``else`` around them. The visitor resolves those ``if``s, reads each
task's options (``semantics/tlx_tasks.py`` checks them and places partitions on warps),
then builds one region per partition -- a task with ``replicate=R`` is visited R times,
each time with its replica id as the value of ``tlx.async_task_replica_id()`` -- and
wraps them in one ``async_tasks`` op (``ir/ops/tasks.py``). Each body starts from the
scope before the region and its names do not leak out of it (what a task computes never
reaches the code after the region except through memory).

If the default task is the only one left (and has one replica), its body is visited in
place, with no region: there is nothing to run beside it. A register tile defined outside
the region and used in a task is refused (TLX passes captures through shared memory and
cannot do it for tiles); each task recomputes its own offsets.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from ..errors import CompilationError, SemanticError
from ..ir import ops
from ..ir.core import Block, Region, Value
from ..ir.ops.tasks import AsyncTasksOp
from ..ir.types import TileType
from .scope import contains_return
from .semantics.tlx_tasks import (
    CAPTURE,
    STRUCTURE,
    Frame,
    Misplaced,
    TaskSpec,
    kernel_facts,
    place,
    region_options,
    task_spec,
)
from .values import Tensor, is_constexpr

if TYPE_CHECKING:  # pragma: no cover
    from .visitor import CodeGenerator as _Base
else:
    _Base = object

_TASKS_HELP = ("write `with tlx.async_tasks():` around `with tlx.async_task('default'):` and "
               "`with tlx.async_task(num_warps=N):` blocks")


class TaskMixin(_Base):
    def visit_With(self, node: ast.With) -> None:
        kind, call = self._with_kind(node)
        if kind is None or call is None:
            raise self.error(node, "TLXC-SYNTAX-001", "with statements are not supported in kernels, except "
                             "`with tlx.async_tasks():` and the `with tlx.async_task(...):` blocks in it")
        if kind == "async_task":
            raise self.error(call, STRUCTURE, "tlx.async_task(...) is only valid directly inside "
                             "`with tlx.async_tasks():`", _TASKS_HELP)
        self._async_tasks(node, call)

    def _with_kind(self, node: ast.With) -> tuple[str | None, ast.Call | None]:
        """("async_tasks" | "async_task", the call) for TLX's context managers, else (None, None)."""
        if len(node.items) != 1 or not isinstance(node.items[0].context_expr, ast.Call):
            return None, None
        item = node.items[0]
        call = item.context_expr
        assert isinstance(call, ast.Call)
        try:
            fn = self.visit(call.func)
        except CompilationError:
            return None, None  # `with open(...)`: not ours, and refused as a with statement
        kind = getattr(fn, "_tlxc_with", None) if isinstance(fn, type) else None
        if kind is None:
            return None, None
        if item.optional_vars is not None:
            raise self.error(item.optional_vars, STRUCTURE, f"`with tlx.{kind}(...) as NAME` binds nothing in a "
                             "kernel", "leave out `as NAME`")
        return kind, call

    def _semantic(self, node: ast.AST, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` with a ``SemanticError`` reported at ``node``."""
        try:
            return fn(*args)
        except SemanticError as e:
            raise CompilationError(e.code, e.message, self.loc(node), e.help) from None

    # -- the region ---------------------------------------------------------------------------
    def _async_tasks(self, node: ast.With, call: ast.Call) -> None:
        facts = kernel_facts()
        if facts.frames and not facts.frames[-1].inline:
            raise self.error(call, STRUCTURE, "tlx.async_tasks cannot be nested inside an async_task",
                             "split the work into more tasks of one async_tasks region")
        options = self._semantic(call, region_options, self.call_args(call), self.call_kwargs(call))
        tasks = self._task_statements(node.body)
        specs: list[TaskSpec] = [self._semantic(c, task_spec, self.call_args(c), self.call_kwargs(c))
                                 for _, c in tasks]
        defaults = [i for i, s in enumerate(specs) if s.default]
        if len(defaults) != 1:
            where: ast.AST = tasks[defaults[1]][1] if len(defaults) > 1 else call
            raise self.error(where, STRUCTURE, f"tlx.async_tasks needs exactly one default task, found "
                             f"{len(defaults)}" + (" (after resolving constexpr ifs)" if len(defaults) > 1 else ""),
                             "mark the task that runs on the kernel's own warps with async_task('default')")
        for w, _ in tasks:
            for stmt in w.body:
                if contains_return(stmt) or isinstance(stmt, ast.Return):
                    ret = next(n for n in ast.walk(stmt) if isinstance(n, ast.Return))
                    raise self.error(ret, STRUCTURE, "return inside an async_task is not supported",
                                     "let the task body end instead")
        d = specs[defaults[0]]
        if len(specs) == 1 and d.replicate == 1:
            # nothing runs beside the default task: its body is the kernel's code, in place
            facts.frames.append(Frame(0, inline=True))
            try:
                self.visit_block(tasks[0][0].body)
            finally:
                facts.frames.pop()
            return
        if self.loops.dry:
            return  # a loop's dry run looks for reassigned names; a region assigns none outside
        placed = place(specs, facts.num_warps)
        if isinstance(placed, Misplaced):
            raise self.error(tasks[placed.spec_index][1], placed.code, placed.message)
        livein, def_locs = dict(self.scope), dict(self.def_locs)
        regions = []
        for p in placed:
            with_node = tasks[p.spec_index][0]
            block = Block()
            self.scope = dict(livein)
            facts.frames.append(Frame(p.replica, num_warps=p.record["num_warps"]))
            try:
                with self.builder.at_end(block):
                    self.visit_block(with_node.body)
                    self.builder.loc = self.loc(with_node)
                    self.builder.create(ops.YieldOp, [])
            finally:
                facts.frames.pop()
            if not p.record["default"]:  # the default task runs on the warps that hold the registers
                self._check_captures(block, livein)
            regions.append(Region(block))
        self.scope, self.def_locs = livein, def_locs
        self._check_cluster_barriers(regions)
        self.builder.create(AsyncTasksOp, [], [], {
            "partitions": tuple(p.record for p in placed), "exclusive": options.exclusive,
            "no_ending_cluster_sync": options.no_ending_cluster_sync,
            "mbarrier_try_wait_suspend_ns": options.suspend_ns}, regions, loc=self.loc(node))

    @staticmethod
    def _check_cluster_barriers(regions: list[Region]) -> None:
        """A ``cluster_barrier`` waits for every thread of every CTA of the cluster, so a
        task that never reaches one leaves the others waiting forever: either every task
        of the region has one or none has (TLX's rule; each task's own count is its
        business)."""
        found = [[o for top in r.blocks[0].ops for o in top.walk() if isinstance(o, ops.ClusterBarrierOp)]
                 for r in regions]
        if any(found) and not all(found):
            first = next(bars[0] for bars in found if bars)
            raise CompilationError(STRUCTURE, "tlx.cluster_barrier in only some tasks of an async_tasks region: every "
                                              "warp of every CTA must reach a cluster barrier, or the others wait "
                                              "forever", first.loc,
                                   "call tlx.cluster_barrier() in every task of the region, the default included, or "
                                   "outside the region")

    def _task_statements(self, stmts: list[ast.stmt]) -> list[tuple[ast.With, ast.Call]]:
        """The ``with tlx.async_task(...)`` blocks of a region's body, constexpr ifs resolved."""
        out: list[tuple[ast.With, ast.Call]] = []
        for s in stmts:
            if isinstance(s, ast.With):
                kind, call = self._with_kind(s)
                if kind == "async_task" and call is not None:
                    out.append((s, call))
                    continue
                if kind == "async_tasks":
                    raise self.error(s, STRUCTURE, "tlx.async_tasks cannot be nested", _TASKS_HELP)
            elif isinstance(s, ast.If):
                cond = self.visit(s.test)
                if not is_constexpr(cond):
                    raise self.error(s.test, STRUCTURE, "an if around async_task blocks needs a compile-time "
                                     "condition (a tl.constexpr)", "branch inside the task instead")
                out += self._task_statements(s.body if cond else s.orelse)
                continue
            elif isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                             and isinstance(s.value.value, str)):
                continue
            raise self.error(s, STRUCTURE, "only `with tlx.async_task(...)` blocks, or a constexpr if around them, "
                             "may stand directly in `with tlx.async_tasks():`",
                             "move this statement into a task, or before the region")
        return out

    def _check_captures(self, block: Block, livein: dict[str, Any]) -> None:
        """Refuse a register tile defined outside the region and used in ``block``."""
        inside: set[int] = set()
        for op in block.ops:
            for o in op.walk():
                inside.update(id(r) for r in o.results)
                for r in o.regions:
                    for b in r.blocks:
                        inside.update(id(a) for a in b.args)
        for op in block.ops:
            for o in op.walk():
                for v in o.operands:
                    if id(v) not in inside and isinstance(v.type, TileType):
                        name = _name_of(v, livein)
                        what = f"'{name}'" if name else "a value"
                        raise CompilationError(
                            CAPTURE, f"{what} is a register tensor ({v.type}) defined outside tlx.async_tasks; "
                                     "a task cannot use the registers of another task's warps", o.loc,
                            "compute it inside the task (each task recomputes its own offsets), or pass it "
                            "through a shared-memory buffer")


def _name_of(v: Value, scope: dict[str, Any]) -> str | None:
    for name, value in scope.items():
        items = value if isinstance(value, tuple) else (value,)
        if any(isinstance(x, Tensor) and x.handle is v for x in items):
            return name
    return None


__all__ = ["TaskMixin"]
