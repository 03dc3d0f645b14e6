"""Calls inside kernels: ``tl`` builtins (through the semantic rules), methods of
tensors, other ``@tlxc.kernel`` functions (inlined), the few Python builtins that make
sense at compile time, and a clear error for everything else."""

from __future__ import annotations

import ast
import builtins
import inspect
import os
from typing import TYPE_CHECKING, Any

from ..errors import CompilationError, SemanticError
from ..ir.types import DType, PointerType, TensorDescType
from ..language import core as tl
from ..language.constexpr_function import ConstexprFunction
from .function import KernelDef
from .semantics import RULES, arith
from .values import Handle, Tensor, describe, is_constexpr, is_named_tuple_class, unwrap

if TYPE_CHECKING:  # pragma: no cover
    from .visitor import CodeGenerator as _Base
else:
    _Base = object

MAX_INLINE_DEPTH = 64
# tensor methods that are @jit functions of the kernel language rather than rules
LIBRARY_METHODS = frozenset({"flip", "reduce_or", "softmax"})


class BoundMethod:
    """``x.sum`` before it is called: a rule with the tensor as first argument."""

    def __init__(self, rule: str, self_value: Tensor) -> None:
        self.rule = rule
        self.self_value = self_value


class CallMixin(_Base):
    def call_args(self, node: ast.Call) -> list[Any]:
        return self._elements(node.args)

    def call_kwargs(self, node: ast.Call) -> dict[str, Any]:
        out = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw, "TLXC-SYNTAX-001", "**kwargs in calls is not supported in kernels")
            out[kw.arg] = self.visit(kw.value)
        return out

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        return self.call_value(node, fn)

    def call_value(self, node: ast.Call, fn: Any) -> Any:
        if isinstance(fn, tl.Builtin):
            if fn.name in ("range", "static_range"):
                raise self.error(node, "TLXC-SYNTAX-001", f"tl.{fn.name} can only be the iterator of a for loop")
            if fn is tl.map_elementwise:  # it inlines a function: the visitor's business, not a rule's
                from .map_elementwise import map_elementwise

                return map_elementwise(self, node)  # type: ignore[arg-type]
            if fn is tl.reduce:  # inlines its combine function into a region, like map_elementwise
                from .reduce_combine import reduce_combine

                return reduce_combine(self, node, [])  # type: ignore[arg-type]
            if fn is tl.associative_scan:  # it inlines the combine function, like map_elementwise
                from .scan import associative_scan

                return associative_scan(self, node)  # type: ignore[arg-type]
            return self.apply_rule(node, fn.rule, fn.qualname, [])
        if isinstance(fn, BoundMethod):
            if fn.rule == "reduce":
                from .reduce_combine import reduce_combine

                return reduce_combine(self, node, [fn.self_value])  # type: ignore[arg-type]
            if fn.rule == "associative_scan":
                from .scan import associative_scan

                return associative_scan(self, node, [fn.self_value])  # type: ignore[arg-type]
            if fn.rule in LIBRARY_METHODS:  # x.flip(): a kernel-language function with x first
                from .. import language

                return self.inline(node, getattr(language, fn.rule), [fn.self_value])
            return self.apply_rule(node, fn.rule, f"tensor.{fn.rule}", [fn.self_value])
        if isinstance(fn, KernelDef):
            return self.inline(node, fn)
        if isinstance(fn, ConstexprFunction):
            return self.call_constexpr_function(node, fn)
        if fn is tl.constexpr:
            args = self.call_args(node)
            if len(args) != 1 or node.keywords:
                raise self.error(node, "TLXC-CALL-002", "tl.constexpr takes one value")
            if not is_constexpr(args[0]):
                raise self.error(node, "TLXC-CONSTEXPR-001",
                                 f"tl.constexpr needs a compile-time value, got {describe(args[0])}")
            return args[0]
        if fn is tl.dtype:  # tl.dtype("fp32"): a dtype by Triton's name, at compile time
            args = self.call_args(node)
            if len(args) != 1 or node.keywords or not is_constexpr(args[0]):
                raise self.error(node, "TLXC-CALL-002", "tl.dtype takes one compile-time dtype name, e.g. 'fp32'")
            try:
                found = tl.dtype(args[0])
            except ValueError as e:
                raise self.error(node, "TLXC-CALL-002", str(e)) from None
            if isinstance(found, tl.NotYetDType):
                raise self.error(node, "TLXC-NAME-002", found.refusal)
            return found
        if fn is tl.pointer_type or (inspect.ismethod(fn) and isinstance(fn.__self__, (DType, PointerType, str,
                                                                                      tuple))):
            args, kwargs = self.call_args(node), self.call_kwargs(node)
            if not all(is_constexpr(a) for a in list(args) + list(kwargs.values())):
                raise self.error(node, "TLXC-CONSTEXPR-001", "this function needs compile-time arguments")
            return fn(*args, **kwargs)
        if isinstance(fn, type) and getattr(fn, "_tlxc_with", None):  # tlx.async_tasks / tlx.async_task
            raise self.error(node, "TLXC-WS-001", f"tlx.{fn._tlxc_with}(...) is used as `with "
                             f"tlx.{fn._tlxc_with}(...):`, not called")
        host = fn.__self__ if inspect.ismethod(fn) else fn
        if getattr(host, "_tlxc_host", False):  # TLX's layout classes: built at compile time
            args, kwargs = self.call_args(node), self.call_kwargs(node)
            if not all(is_constexpr(a) for a in list(args) + list(kwargs.values())):
                raise self.error(node, "TLXC-CONSTEXPR-001", "this function needs compile-time arguments")
            try:
                return fn(*args, **kwargs)
            except (TypeError, ValueError) as e:  # a missing argument, or a field the class refuses
                raise self.error(node, "TLXC-CALL-002", str(e)) from None
        if is_named_tuple_class(fn):  # a NamedTuple: a container
            try:
                return fn(*self.call_args(node), **self.call_kwargs(node))
            except TypeError as e:
                raise self.error(node, "TLXC-CALL-002", str(e)) from None
        if any(fn is getattr(builtins, n, None) for n in _PY_RULES):
            return _PY_RULES[fn.__name__](self, node, self.call_args(node), self.call_kwargs(node))
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or describe(fn)
        if callable(fn):
            raise self.error(node, "TLXC-CALL-001", f"'{name}' is a plain Python function; kernels can only call "
                             "tl.* builtins and @tlxc.kernel functions")
        raise self.error(node, "TLXC-CALL-001", f"{describe(fn)} is not callable")

    def apply_rule(self, node: ast.Call, rule_name: str, what: str, first: list[Any]) -> Any:
        rule = RULES.get(rule_name)
        if rule is None:
            raise self.error(node, "TLXC-CALL-001", f"{what} is not supported by tlxc yet")
        args = first + self.call_args(node)
        kwargs = self.call_kwargs(node)
        try:
            inspect.signature(rule).bind(self.ctx, *args, **kwargs)
        except TypeError as e:
            msg = str(e).replace("missing a required argument", "missing argument")
            raise self.error(node, "TLXC-CALL-002", f"{what}: {msg}") from None
        try:
            return rule(self.ctx, *args, **kwargs)
        except SemanticError:
            raise

    def apply_values(self, node: ast.AST, rule_name: str, what: str, args: list[Any]) -> Any:
        """Apply a rule to values already evaluated (for syntax such as ``buf[i]``)."""
        return RULES[rule_name](self.ctx, *args)

    def call_constexpr_function(self, node: ast.Call, fn: ConstexprFunction) -> Any:
        """A ``constexpr_function`` runs now, on compile-time values; its result is one."""
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "the function")
        args, kwargs = self.call_args(node), self.call_kwargs(node)
        for i, a in enumerate(list(args) + list(kwargs.values())):
            if not is_constexpr(a):
                arg = f"argument {i + 1}" if i < len(args) else f"argument '{list(kwargs)[i - len(args)]}'"
                hint = "tl.cdiv(x, y) divides runtime values" if name.endswith("cdiv") else \
                    "pass it a tl.constexpr parameter or another compile-time value, or compute on runtime " \
                    "values with tl.* functions (or a @tlxc.jit helper)"
                raise self.error(node, "TLXC-CONSTEXPR-001", f"{name}() is a constexpr_function: it runs while the "
                                 f"kernel compiles, on compile-time values, but its {arg} is {describe(a)}", hint)
        try:
            out = fn(*args, **kwargs)
        except Exception as e:  # the user's function failed: report it at the call, in their terms
            raise self.error(node, "TLXC-TYPE-001", f"{name}() raised {type(e).__name__}: {e}") from None
        if not is_constexpr(out):
            raise self.error(node, "TLXC-CONSTEXPR-001", f"{name}() returned {describe(out)}, which is not a "
                             "compile-time value")
        if fn not in self.callees and fn.__module__ != "tlxc":
            self.callees.append(fn)  # its source decides the variant too (the on-disk cache checks it)
        return unwrap(out)

    # -- inlining -------------------------------------------------------------------------------------
    def inline(self, node: ast.Call, fn: Any, first: list[Any] | None = None) -> Any:
        if fn.noinline:
            raise self.error(node, "TLXC-OPTION-001", f"{fn.__name__} is declared with noinline=True, which tlxc "
                             "does not support: it inlines every call to a kernel function",
                             "remove noinline=True (the call is then inlined)")
        if self.inline_depth >= MAX_INLINE_DEPTH:
            raise self.error(node, "TLXC-CALL-002", f"calls nested more than {MAX_INLINE_DEPTH} deep "
                             "(recursive kernel functions are not supported)")
        args, kwargs = (first or []) + self.call_args(node), self.call_kwargs(node)
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, "TLXC-CALL-002", f"{fn.__name__}(): {e}") from None
        bound.apply_defaults()
        scope: dict[str, Any] = {}
        # As in Triton, what an inlined function's parameter is comes from the argument, not its
        # annotation: a runtime value passed for a `tl.constexpr` parameter stays a runtime value
        # (tutorial 06 passes tiles so), and uses that need a constant report it where they are.
        for name, value in bound.arguments.items():
            scope[name] = unwrap(value)
        if fn not in self.callees:
            self.callees.append(fn)
        try:
            return self.inline_result(self.callee(fn.source, scope), fn)
        except CompilationError as e:
            if not in_tlxc(e.loc):
                raise
            # an error inside tlxc's own kernel-language library (tl.sort, tl.rand...): the
            # user's line is the call into it
            raise self.error(node, e.code, e.message, e.help) from None

    def callee(self, src: Any, scope: dict[str, Any]) -> Any:
        """The visitor of an inlined function's body."""
        from .visitor import CodeGenerator

        return CodeGenerator(src, self.builder, scope, self.inline_depth + 1, self.used_globals, self.loops,
                             self.callees)

    def inline_result(self, callee: Any, fn: Any) -> Any:
        """Visit an inlined function's body with ``callee``; what it returns."""
        callee.visit_block(fn.source.tree.body)
        return callee.ret


def in_tlxc(loc: Any) -> bool:
    """Whether ``loc`` is in a file of the tlxc package (its kernel-language library)."""
    file = getattr(loc, "file", None)
    return isinstance(file, str) and os.path.abspath(file).startswith(_TLXC_DIR + os.sep)


_TLXC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _py_min_max(gen: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any], which: str) -> Any:
    if kwargs:
        raise gen.error(node, "TLXC-CALL-002", f"{which}() keyword arguments are not supported in kernels")
    if len(args) == 1 and isinstance(args[0], tuple):
        args = list(args[0])
    if not args:
        raise gen.error(node, "TLXC-CALL-002", f"{which}() needs arguments")
    if all(is_constexpr(a) for a in args):
        return getattr(builtins, which)(args)
    rule = arith.minimum if which == "min" else arith.maximum
    out = args[0]
    for a in args[1:]:
        out = rule(gen.ctx, out, a)
    return out


_SEQUENCE_FUNCTIONS = ("enumerate", "zip", "reversed", "tuple", "list")


def _constant_call(name: str):
    def impl(gen: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
        values = list(args) + list(kwargs.values())
        if name in _SEQUENCE_FUNCTIONS and values and all(isinstance(a, tuple) for a in values):
            # structure is known at compile time even when the items are runtime values
            return tuple(getattr(builtins, name)(*args, **kwargs))
        if not all(is_constexpr(a) for a in values):
            bad = next(a for a in values if not is_constexpr(a))
            hint = {"float": "use x.to(tl.float32)", "int": "use x.to(tl.int32)",
                    "len": "use x.shape[0]"}.get(name)
            raise gen.error(node, "TLXC-CONSTEXPR-001",
                            f"{name}() works on compile-time values in kernels, got {describe(bad)}", hint)
        return getattr(builtins, name)(*args, **kwargs)

    return impl


def _py_len(gen: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) == 1 and isinstance(args[0], Tensor):
        if not args[0].shape:
            raise gen.error(node, "TLXC-TYPE-001", "len() of a scalar")
        return args[0].shape[0]
    if len(args) == 1 and isinstance(args[0], tuple) and not kwargs:
        return len(args[0])
    return _constant_call("len")(gen, node, args, kwargs)


def _kernel_class(cls: Any) -> Any:
    """The classes ``isinstance`` accepts in kernels: Python types, ``tl``'s kernel types
    and ``tl.pointer_type`` (a function in tlxc, a class in Triton); None for anything else."""
    if cls is tl.pointer_type:
        return PointerType
    return cls if isinstance(cls, type) else None


def _is_instance(v: Any, cls: type) -> bool:
    if cls is tl.constexpr:
        return is_constexpr(v)
    if cls is object:
        return True
    if isinstance(v, Tensor):
        return cls is tl.tensor
    if isinstance(v, Handle):
        return issubclass(cls, tl.tensor_descriptor_base) and isinstance(v.type, TensorDescType)
    return isinstance(v, cls)


def _py_isinstance(gen: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``isinstance(x, cls)`` folds to a constant: what ``x`` is is known at compile time,
    whether it is a runtime value (``tl.tensor``, ``tl.tensor_descriptor``) or a constant."""
    if kwargs or len(args) != 2:
        raise gen.error(node, "TLXC-CALL-002", "isinstance() takes exactly two arguments")
    value, classinfo = args
    classes = classinfo if isinstance(classinfo, tuple) else (classinfo,)
    resolved = []
    for c in classes:
        k = _kernel_class(c)
        if k is None:
            raise gen.error(node.args[1], "TLXC-TYPE-001",
                            f"isinstance() needs a type or a tuple of types as its second argument, got "
                            f"{describe(c)}", "for example isinstance(x, tl.tensor_descriptor)")
        resolved.append(k)
    return any(_is_instance(value, k) for k in resolved)


def _py_hasattr(gen: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``hasattr(x, "dtype")``: answered at compile time for a runtime tensor too, by what the
    tensor offers (Triton's test_short_circuiting guards a load with it)."""
    if len(args) == 2 and not kwargs and isinstance(args[0], Tensor) and isinstance(args[1], str):
        return hasattr(args[0], args[1])
    return _constant_call("hasattr")(gen, node, args, kwargs)


def _py_print(gen: Any, node: ast.Call, args: list[Any], kwargs: dict[str, Any]) -> Any:
    # as in Triton, print() in a kernel is tl.device_print (tl.static_print prints at compile time)
    return gen.apply_rule(node, "device_print", "print()", [])


_PY_RULES: dict[str, Any] = {
    "min": lambda g, n, a, k: _py_min_max(g, n, a, k, "min"),
    "max": lambda g, n, a, k: _py_min_max(g, n, a, k, "max"),
    "len": _py_len,
    "print": _py_print,
    "isinstance": _py_isinstance,
    "hasattr": _py_hasattr,
}
for _name in ("float", "int", "bool", "abs", "tuple", "list", "enumerate", "zip", "getattr",
              "str", "type", "round", "reversed", "range"):
    _PY_RULES[_name] = _constant_call(_name)
