"""The AST visitor: walks a kernel's Python syntax and builds tile IR.

This layer knows Python's structure only (names, expressions, statements, scopes); what
an operation means is the semantic layer's business (``semantics/``). Control flow lives
in ``control.py``, calls (builtins, inlining) in ``calls.py`` and ``with`` (warp
specialization) in ``tasks.py``; ``CodeGenerator``
combines them. Constant expressions are evaluated here in Python, as Triton does, and
follow Python's semantics; runtime values follow the IR's.
"""

from __future__ import annotations

import ast
import builtins
import operator
import types
from typing import Any

from ..errors import CompilationError, InternalCompilerError, SemanticError
from ..ir.builder import Builder
from ..ir.core import Location
from ..ir.types import AliasSpecType, MemDescType, TensorDescType
from ..language.core import Builtin, NotYetDType, constexpr
from .block_ptr import BlockPointer
from .calls import BoundMethod, CallMixin
from .control import ControlFlowMixin, ControlSignal
from .scope import LoopMemo
from .semantics import TENSOR_METHODS, Ctx, arith, shape
from .semantics.base import is_number, to_tensor
from .source import FunctionSource
from .tasks import TaskMixin
from .values import Handle, KeptConstant, Tensor, describe, is_constexpr, remake, type_of, unwrap

_BINOPS: dict[type, tuple[str, Any]] = {
    ast.Add: ("add", operator.add), ast.Sub: ("sub", operator.sub), ast.Mult: ("mul", operator.mul),
    ast.Div: ("truediv", operator.truediv), ast.FloorDiv: ("floordiv", operator.floordiv),
    ast.Mod: ("mod", operator.mod), ast.BitAnd: ("and", operator.and_), ast.BitOr: ("or", operator.or_),
    ast.BitXor: ("xor", operator.xor), ast.LShift: ("lshift", operator.lshift),
    ast.RShift: ("rshift", operator.rshift), ast.Pow: ("pow", operator.pow), ast.MatMult: ("matmul", None),
}
_CMPOPS: dict[type, tuple[str, Any]] = {
    ast.Eq: ("eq", operator.eq), ast.NotEq: ("ne", operator.ne), ast.Lt: ("lt", operator.lt),
    ast.LtE: ("le", operator.le), ast.Gt: ("gt", operator.gt), ast.GtE: ("ge", operator.ge),
    ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
    ast.In: ("in", lambda a, b: a in b), ast.NotIn: ("not in", lambda a, b: a not in b),
}
UNSUPPORTED = {
    ast.Try: "try statements", ast.Lambda: "lambda expressions",
    ast.SetComp: "set comprehensions", ast.DictComp: "dict comprehensions", ast.AsyncWith: "async with",
    ast.Global: "global declarations", ast.Nonlocal: "nonlocal declarations", ast.Break: "break",
    ast.Continue: "continue", ast.Raise: "raise", ast.Import: "import", ast.ImportFrom: "import",
    ast.Delete: "del", ast.ClassDef: "class definitions", ast.FunctionDef: "nested function definitions",
    ast.AsyncFunctionDef: "async functions", ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
    ast.Dict: "dict literals", ast.Set: "set literals", ast.NamedExpr: "the walrus operator :=",
    ast.AsyncFor: "async for",
}
if hasattr(ast, "Match"):
    UNSUPPORTED[ast.Match] = "match statements"
if hasattr(ast, "TryStar"):
    UNSUPPORTED[ast.TryStar] = "try statements"


class CodeGenerator(ControlFlowMixin, CallMixin, TaskMixin, ast.NodeVisitor):
    """Builds the IR of one function body (a kernel, or a function being inlined)."""

    def __init__(self, src: FunctionSource, builder: Builder, scope: dict[str, Any],
                 inline_depth: int = 0, used_globals: dict[str, Any] | None = None,
                 loops: LoopMemo | None = None, callees: list[Any] | None = None) -> None:
        self.src = src
        self.builder = builder
        self.ctx = Ctx(builder)
        self.scope: dict[str, Any] = scope
        self.inline_depth = inline_depth
        self.used_globals = used_globals if used_globals is not None else {}
        # every kernel function inlined, at any depth (the on-disk cache checks their sources)
        self.callees = callees if callees is not None else []
        self.returned = False
        self.ret: Any = None
        self.loop_depth = 0
        self.loops = loops if loops is not None else LoopMemo()
        # where each name was last assigned: loop-carried type errors point there
        self.def_locs: dict[str, ast.AST] = {}
        # names annotated `x: tl.constexpr`: every assignment to them keeps a compile-time value
        self.constexpr_names: set[str] = set()

    # -- diagnostics ------------------------------------------------------------------------
    def loc(self, node: ast.AST) -> Location:
        return self.src.loc(node)

    def error(self, node: ast.AST, code: str, message: str, help: str | None = None) -> CompilationError:
        return CompilationError(code, message, self.loc(node), help)

    def visit(self, node: ast.AST) -> Any:
        prev = self.builder.loc
        if hasattr(node, "lineno"):
            self.builder.loc = self.loc(node)
        try:
            kind = UNSUPPORTED.get(type(node))
            if kind is not None:
                raise self.error(node, "TLXC-SYNTAX-001", f"{kind} are not supported in kernels"
                                 if kind.endswith("s") and not kind.endswith("ss") else
                                 f"'{kind}' is not supported in kernels")
            return super().visit(node)
        except SemanticError as e:
            raise CompilationError(e.code, e.message, self.loc(node), e.help) from None
        except (CompilationError, ControlSignal):
            raise
        except RecursionError:
            raise self.error(node, "TLXC-SYNTAX-001", "expression or call nesting too deep") from None
        except Exception as e:  # a bug in tlxc: report it at the user's line
            raise InternalCompilerError("frontend", f"{type(e).__name__}: {e}", self.loc(node)) from e
        finally:
            self.builder.loc = prev

    def generic_visit(self, node: ast.AST) -> Any:
        raise self.error(node, "TLXC-SYNTAX-001", f"{type(node).__name__} is not supported in kernels")

    # -- names --------------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Any:
        if name in self.scope:
            return self.scope[name]
        for table in (self.src.closure, self.src.globals):
            if name in table:
                value = table[name]
                if _mutable(value):
                    # A variant is compiled with the value it read and reused while the global is
                    # the same object; a list or dict changed in place would leave it stale. Triton
                    # refuses every global that is not a tl.constexpr; tlxc keys its cache on numbers,
                    # strings and tuples and refuses what can change in place.
                    raise self.error(node, "TLXC-CONSTEXPR-001", f"'{name}' is a {_mutable(value)} from outside "
                                     "the kernel, which can change in place without the kernel recompiling",
                                     "make it a tuple (NAME = (1, 2, 3)), or pass the values as tl.constexpr "
                                     "arguments")
                if isinstance(value, (bool, int, float, str, tuple)) or isinstance(value, constexpr):
                    self.used_globals[f"{self.src.fn.__module__}.{name}"] = unwrap(value)
                return unwrap(value)
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        raise self.error(node, "TLXC-NAME-001", f"undefined name '{name}'")

    def visit_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self._elements(node.elts))

    def visit_List(self, node: ast.List) -> Any:
        return tuple(self._elements(node.elts))

    def _elements(self, elts: list[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.visit(e.value)
                if not isinstance(v, tuple):
                    raise self.error(e, "TLXC-SYNTAX-001", f"cannot unpack {describe(v)} with *")
                out.extend(v)
            else:
                out.append(self.visit(e))
        return out

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                parts.append(self.visit(v))
        return "".join(parts)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        v = self.visit(node.value)
        if isinstance(v, Tensor):
            raise self.error(node, "TLXC-CONSTEXPR-001", "f-strings can only format compile-time constants")
        spec = self.visit(node.format_spec) if node.format_spec else ""
        conv = {115: str, 114: repr, 97: ascii}.get(node.conversion, lambda x: x)
        return format(conv(v), spec)

    # -- attributes and subscripts ---------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        name = node.attr
        if isinstance(base, Tensor):
            if name == "dtype":
                return base.dtype
            if name == "shape":
                return base.shape
            if name == "type":
                return base.type
            if name == "numel":
                return base.numel
            if name == "T":
                return shape.trans(self.ctx, base)
            if name in TENSOR_METHODS:
                return BoundMethod(TENSOR_METHODS[name], base)
            raise self.error(node, "TLXC-NAME-001", f"a tensor has no attribute '{name}'")
        if isinstance(base, Handle):
            return self._handle_attribute(node, base, name)
        if isinstance(base, BlockPointer) and name == "advance":  # Triton's bp.advance(offsets)
            return BoundMethod("advance", base)  # type: ignore[arg-type]
        try:
            found = unwrap(getattr(base, name))
        except AttributeError:
            if name == "type" and isinstance(base, (tuple, int, float, str, type(None))):
                return type_of(base)  # Triton's types of tuples and constants
            lacking = _not_yet(base, name)
            if lacking is not None:
                raise self.error(node, "TLXC-NAME-002", lacking) from None
            what = f"module '{base.__name__}'" if isinstance(base, types.ModuleType) else describe(base)
            raise self.error(node, "TLXC-NAME-001", f"{what} has no attribute '{name}'") from None
        if isinstance(found, NotYetDType):  # a dtype of Triton's that the host may name
            raise self.error(node, "TLXC-NAME-002", found.refusal)
        return found

    def _handle_attribute(self, node: ast.Attribute, base: Handle, name: str) -> Any:
        """Attributes of TLX values: a buffer's shape and dtype, a descriptor's block shape,
        dtype and its ``load`` / ``store`` methods."""
        t = base.type
        if name == "type":
            return t
        if isinstance(t, MemDescType) and name in ("shape", "dtype", "element_ty"):
            return t.buf_shape if name == "shape" else t.element
        if isinstance(t, AliasSpecType) and name == "set_buffer_overlap":
            return BoundMethod("tlx.set_buffer_overlap", base)  # type: ignore[arg-type]
        if isinstance(t, TensorDescType):
            if name in ("block_shape", "dtype"):
                return t.block_shape if name == "block_shape" else t.element
            if name in ("load", "store"):
                return BoundMethod(f"tlx.descriptor_{name}", base)
        raise self.error(node, "TLXC-NAME-001", f"{describe(base)} has no attribute '{name}'")

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        index = self.visit(node.slice)
        if isinstance(base, Tensor):
            return self._index_tensor(node, base, index)
        if isinstance(base, Handle):
            return self.apply_values(node, "tlx.local_view", "indexing", [base, index])
        if isinstance(index, Tensor):
            raise self.error(node.slice, "TLXC-CONSTEXPR-001",
                             f"indexing {describe(base)} needs a compile-time index, got {describe(index)}")
        try:
            return base[index]
        except (IndexError, KeyError, TypeError) as e:
            raise self.error(node, "TLXC-TYPE-001", f"cannot index {describe(base)} with {index!r}: {e}") from None

    def visit_Slice(self, node: ast.Slice) -> Any:
        parts = [self.visit(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def _index_tensor(self, node: ast.Subscript, t: Tensor, index: Any) -> Tensor:
        items = index if isinstance(index, tuple) else (index,)
        out = t
        for dim, item in enumerate(items):
            if item is None:
                out = shape.expand_dims(self.ctx, out, dim)
            elif isinstance(item, slice) and item == slice(None, None, None):
                continue
            else:
                raise self.error(node.slice, "TLXC-SYNTAX-001",
                                 f"tensors can only be indexed with None and ':' (as in x[:, None]), got {item!r}")
        return out

    # -- operators --------------------------------------------------------------------------------
    def visit_BinOp(self, node: ast.BinOp) -> Any:
        lhs = self.visit(node.left)
        rhs = self.visit(node.right)
        return self.binary_op(node, type(node.op), lhs, rhs)

    def binary_op(self, node: ast.AST, op: type, lhs: Any, rhs: Any) -> Any:
        name, fn = _BINOPS[op]
        if is_constexpr(lhs) and is_constexpr(rhs):
            if fn is None:
                raise self.error(node, "TLXC-SYNTAX-001", "the @ operator is not supported; use tl.dot")
            try:
                return fn(lhs, rhs)
            except (ArithmeticError, TypeError, ValueError) as e:
                raise self.error(node, "TLXC-TYPE-001", f"constant expression failed: {e}") from None
        if name in ("pow", "matmul"):
            raise self.error(node, "TLXC-SYNTAX-001",
                             "the ** operator works on compile-time constants only" if name == "pow" else
                             "the @ operator is not supported; use tl.dot")
        return arith.binary(self.ctx, name, lhs, rhs)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.visit(node.operand)
        if is_constexpr(v):
            try:
                return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
                        ast.Not: operator.not_}[type(node.op)](v)
            except TypeError as e:
                raise self.error(node, "TLXC-TYPE-001", f"constant expression failed: {e}") from None
        if isinstance(node.op, ast.USub):
            return arith.negate(self.ctx, v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return arith.invert(self.ctx, v)
        return arith.logical_not(self.ctx, v)

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)
        result: Any = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.visit(right_node)
            name, fn = _CMPOPS[type(op)]
            if is_constexpr(left) and is_constexpr(right):
                try:
                    r = fn(left, right)
                except TypeError as e:
                    raise self.error(node, "TLXC-TYPE-001", f"constant comparison failed: {e}") from None
            elif name in ("is", "is not") and (is_constexpr(left) or is_constexpr(right)):
                # a runtime value is never a constant (``x is None`` for a tensor argument,
                # which a None argument makes the constant None: specialize.py)
                r = name == "is not"
            elif name in ("is", "is not", "in", "not in"):
                raise self.error(node, "TLXC-SYNTAX-001", f"'{name}' works on compile-time constants only")
            else:
                r = arith.compare(self.ctx, name, left, right)
            result = r if result is None else self._logical(node, "and", result, r)
            left = right
        return result

    def _logical(self, node: ast.AST, kind: str, a: Any, b: Any) -> Any:
        if is_constexpr(a) and is_constexpr(b):
            return (a and b) if kind == "and" else (a or b)
        x, y = arith.to_bool(self.ctx, a), arith.to_bool(self.ctx, b)
        return arith.binary(self.ctx, kind, x, y)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        kind = "and" if isinstance(node.op, ast.And) else "or"
        result = self.visit(node.values[0])
        for value_node in node.values[1:]:
            if is_constexpr(result):
                # Python's short circuit on constants: the right side is not even built
                if (kind == "and" and not result) or (kind == "or" and result):
                    return result
                result = self.visit(value_node)
                continue
            result = self._logical(node, kind, result, self.visit(value_node))
        return result

    # -- comprehensions ---------------------------------------------------------------------------
    def visit_ListComp(self, node: ast.ListComp) -> tuple:
        """``[f(x) for x in xs if c]`` over compile-time iterables (a tuple, ``range`` or
        ``tl.static_range`` of constants): unrolled, giving a tuple, as Triton's. The loop
        names are the comprehension's own; the kernel's names of the same spelling are
        as before afterwards."""
        out: list[Any] = []
        names = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        saved = {n: self.scope[n] for n in names if n in self.scope}
        try:
            self._comprehend(node, node.generators, out)
        finally:
            for n in names:
                self.scope.pop(n, None)
            self.scope.update(saved)
        return tuple(out)

    visit_GeneratorExp = visit_ListComp  # tl.tuple(f(x) for x in xs): the same unrolled values

    def _comprehend(self, node: ast.ListComp | ast.GeneratorExp, gens: list[ast.comprehension],
                    out: list[Any]) -> None:
        if not gens:
            out.append(self.visit(node.elt))
            return
        gen = gens[0]
        if gen.is_async:
            raise self.error(gen.target, "TLXC-SYNTAX-001", "async comprehensions are not supported in kernels")
        for item in self._static_items(gen.iter):
            self.assign(gen.target, item)
            keep = True
            for cond in gen.ifs:
                c = self.visit(cond)
                if not is_constexpr(c):
                    raise self.error(cond, "TLXC-CONSTEXPR-001", "a comprehension's condition must be a compile-time "
                                     f"value, got {describe(c)}")
                keep = keep and bool(c)
            if keep:
                self._comprehend(node, gens[1:], out)

    # -- simple statements -----------------------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def sanitize(self, value: Any) -> Any:
        """Triton's rule for plain assignment: numbers become runtime scalars."""
        if isinstance(value, tuple):
            return remake(value, (self.sanitize(v) for v in value))
        if isinstance(value, KeptConstant):
            return int(value)
        if is_number(value):
            return to_tensor(self.ctx, value)
        return value

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
            self.def_locs[target.id] = target
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, tuple):
                raise self.error(target, "TLXC-TYPE-001", f"cannot unpack {describe(value)}")
            if len(value) != len(target.elts):
                raise self.error(target, "TLXC-TYPE-001",
                                 f"cannot unpack {len(value)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
            return
        what = "item assignment" if isinstance(target, ast.Subscript) else "attribute assignment" \
            if isinstance(target, ast.Attribute) else type(target).__name__
        raise self.error(target, "TLXC-SYNTAX-001", f"{what} is not supported in kernels",
                         "tensors are values: build a new one (e.g. with tl.where) and assign it to a name")

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, self._sanitize_for(target, value))

    def _sanitize_for(self, target: ast.expr, value: Any) -> Any:
        """``sanitize`` except for the names annotated ``tl.constexpr`` before (``y:
        tl.constexpr`` then ``x, y = 0, 0``): they keep the value, which must be a
        compile-time one, as Triton does."""
        if isinstance(target, ast.Name) and target.id in self.constexpr_names:
            if not is_constexpr(value):
                raise self.error(target, "TLXC-CONSTEXPR-001", f"'{target.id}' is annotated tl.constexpr, so it "
                                 f"needs a compile-time value, got {describe(value)}",
                                 "a name annotated tl.constexpr holds compile-time values only; give the runtime "
                                 "value another name")
            return value
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, tuple) and len(value) == len(target.elts):
            return tuple(self._sanitize_for(t, v) for t, v in zip(target.elts, value))
        return self.sanitize(value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        ann = node.annotation
        is_const = False
        try:
            ann_value = self.visit(ann)
            is_const = ann_value is constexpr
        except CompilationError:
            is_const = isinstance(ann, ast.Attribute) and ann.attr == "constexpr"
        if is_const and isinstance(node.target, ast.Name):
            self.constexpr_names.add(node.target.id)
        if node.value is None:
            return
        value = self.visit(node.value)
        if is_const:
            if not is_constexpr(value):
                raise self.error(node.value, "TLXC-CONSTEXPR-001",
                                 f"a tl.constexpr local needs a compile-time value, got {describe(value)}")
            self.assign(node.target, value)
        else:
            self.assign(node.target, self.sanitize(value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            self.assign(node.target, None)  # reports the unsupported target
        current = self.lookup(node.target.id, node.target)  # type: ignore[union-attr]
        rhs = self.visit(node.value)
        self.scope[node.target.id] = self.sanitize(self.binary_op(node, type(node.op), current, rhs))  # type: ignore
        self.def_locs[node.target.id] = node  # type: ignore[union-attr]

    def visit_Assert(self, node: ast.Assert) -> None:
        from .semantics import misc

        cond = self.visit(node.test)
        msg = self.visit(node.msg) if node.msg is not None else ""
        if is_constexpr(cond):
            misc.static_assert(self.ctx, cond, msg)
        else:
            misc.device_assert(self.ctx, cond, str(msg))


def _mutable(value: Any) -> str:
    """The kind of mutable container ``value`` is or holds (in tuples, in tl.constexpr), or ''."""
    if isinstance(value, constexpr):
        return _mutable(value.value)
    if isinstance(value, (list, dict, set, bytearray)):
        return type(value).__name__
    if isinstance(value, tuple):
        return next((f"tuple holding a {k}" for k in map(_mutable, value) if k), "")
    return ""


def _not_yet(base: Any, name: str) -> str | None:
    """The message for a name that a tlxc library module (``tl``, ``libdevice``...) lists
    in its ``NOT_YET`` (Triton has it, tlxc not yet), or None. A module's ``NOT_YET`` is a
    set of names or a dict of name -> why; the module's ``SHORT_NAME`` is how users spell
    it (``tl``), else its last dotted component."""
    if not isinstance(base, types.ModuleType) or not base.__name__.startswith("tlxc."):
        return None
    lacking = getattr(base, "NOT_YET", None)
    if lacking is None or name not in lacking:
        return None
    short = getattr(base, "SHORT_NAME", base.__name__.rsplit(".", 1)[-1])
    why = lacking.get(name) if isinstance(lacking, dict) else None
    return f"{short}.{name} is not supported by tlxc yet" + (f" ({why})" if why else "")


PY_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in ("range", "min", "max", "len", "float", "int", "bool", "isinstance", "abs", "tuple", "list",
                 "enumerate", "zip", "getattr", "hasattr", "print", "str", "type", "round", "reversed",
                 "True", "False", "None")
    if hasattr(builtins, name)
}
__all__ = ["CodeGenerator", "Builtin"]
