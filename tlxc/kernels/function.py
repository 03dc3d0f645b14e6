"""``@tlxc.kernel`` (alias ``tlxc.jit``): the decorated function, its compiled variants
and how it is launched -- ``kernel[grid](...)``, ``kernel.interpret[grid](...)`` on the
CPU, or ``kernel.compile(...)`` ahead of time."""

from __future__ import annotations

import inspect
from functools import partial
from types import FunctionType
from typing import Any, Callable, Sequence

from ..errors import CompilationError, SemanticError, TlxcError, clean
from ..frontend.callsite import caller_location
from ..frontend.function import KernelDef
from ..frontend.specialize import ArgSpec, parse_signature, spec_of
from ..language.core import constexpr
from .launch import ENV_GET, ENV_KEY, ENV_OFF, LAUNCH_OPTIONS, FastTable, Launcher, make_fast_launch, subscript


class KernelFunction(KernelDef):
    """A kernel (or a helper that kernels call, which is inlined), with its compiled
    variants and how it is launched."""

    def __init__(self, fn: Callable[..., Any], do_not_specialize: Sequence[Any] = (),
                 noinline: bool = False, debug: bool | None = None) -> None:
        super().__init__(fn, noinline)
        names = set()
        for d in do_not_specialize:
            names.add(self.params[d] if isinstance(d, int) else d)
        unknown = names - set(self.params)
        if unknown:
            raise TypeError(f"do_not_specialize names unknown parameters: {sorted(unknown)}")
        self.do_not_specialize = names
        self.debug = debug
        # launch.py: the fast path's table of ready variants, its launchers by grid of ints,
        # its generated functions and the argument kinds they speculate on (from the first launch)
        self._fast = FastTable()
        self._launchers: dict[Any, Any] = {}
        self._fast_fns: Any = ()  # () until made, None where the kernel has none
        self._fast_kinds: tuple[str, ...] | None = None  # the argument kinds it speculates on
        self._fast_trusted = False  # whether its hits launch through launch_trusted (launch._trusted_kinds)
        self.cache = _VariantCache()
        self.last_compiled: Any = None

    def __repr__(self) -> str:
        return f"<tlxc kernel {self.__qualname__}>"

    @property
    def cache(self) -> dict[Any, Any]:
        """The compiled variants by (argument specs, constexprs, options). Replacing or
        removing entries (or the dict) also empties the fast path's table, so that
        launches see the change."""
        return self._cache

    @cache.setter
    def cache(self, value: dict[Any, Any]) -> None:
        self._cache = value if isinstance(value, _VariantCache) else _VariantCache(value)
        self._cache.fast = self._fast
        self._fast.clear()

    @property
    def _fast_launch(self) -> Any:
        """The generated launch functions (launch.make_fast_launch), made at the first need."""
        if self._fast_fns == ():
            self._fast_fns = make_fast_launch(self)
        return self._fast_fns

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a tlxc kernel: launch it with {self.__name__}[grid](...), or call it "
                           "from another kernel")

    # -- launching --------------------------------------------------------------------------------
    def __getitem__(self, grid: Any) -> Any:
        """A callable that launches the kernel on ``grid`` (launch.py: the fast path,
        bound to the grid, or the interpreter under TLXC_INTERPRET)."""
        if ENV_GET(ENV_KEY) not in ENV_OFF:
            return Launcher(self, grid, interpret=True)
        try:
            launcher = self._launchers.get(grid)
        except TypeError:  # an unhashable grid (a list)
            launcher = None
        if launcher is not None:
            return launcher
        fast = self._fast_fns
        if fast and type(grid) is FunctionType:  # a grid function: bound afresh each time (launch.subscript)
            return partial(fast[1], grid)
        return subscript(self, grid)

    @property
    def interpret(self) -> "_InterpretIndexer":
        return _InterpretIndexer(self)

    def bind(self, args: tuple, kwargs: dict, loc: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Match launch arguments to parameters: (values by parameter, launch options)."""
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in LAUNCH_OPTIONS and k not in self.params}
        if len(args) > len(self.params):
            raise CompilationError("TLXC-LAUNCH-001", f"{self.__name__} takes {len(self.params)} arguments "
                                   f"({', '.join(self.params)}) but {len(args)} were given", loc)
        values = dict(zip(self.params, args))
        for k, v in kwargs.items():
            if k not in self.params:
                raise CompilationError("TLXC-LAUNCH-001", f"{self.__name__} has no parameter '{k}' "
                                       f"(parameters: {', '.join(self.params)})", loc)
            if k in values:
                raise CompilationError("TLXC-LAUNCH-001", f"argument '{k}' given twice", loc)
            values[k] = v
        for name, p in self.signature.parameters.items():
            if name in values:
                continue
            if p.default is not inspect.Parameter.empty:
                values[name] = p.default
            elif name in self.constexpr_params:
                raise CompilationError("TLXC-LAUNCH-002", f"constexpr parameter '{name}' of {self.__name__} has "
                                       f"no value; pass it as {name}=...", loc)
            else:
                raise CompilationError("TLXC-LAUNCH-001", f"{self.__name__} is missing argument '{name}' "
                                       f"(takes {', '.join(self.params)})", loc)
        return {k: values[k] for k in self.params}, options

    def specialize(self, values: dict[str, Any], loc: Any) -> tuple[dict[str, ArgSpec], dict[str, Any]]:
        specs, consts = {}, {}
        for name, v in values.items():
            if name in self.constexpr_params:
                v = v.value if isinstance(v, constexpr) else v
                consts[name] = tuple(v) if isinstance(v, list) else v
            else:
                try:
                    specs[name] = spec_of(v, name not in self.do_not_specialize)
                except SemanticError as e:
                    raise CompilationError(e.code, f"argument '{name}': {e.message}", loc, e.help) from None
        return specs, consts

    def get_compiled(self, specs: dict[str, ArgSpec], consts: dict[str, Any], options: Any) -> Any:
        from ..compiler import compile_kernel

        try:
            key = (tuple(specs.items()), tuple(sorted(consts.items(), key=lambda kv: kv[0])), options)
            hash(key)
        except TypeError:
            raise CompilationError("TLXC-LAUNCH-003", "constexpr values must be hashable (numbers, strings, "
                                   "dtypes, tuples)", caller_location()) from None
        ck = self.cache.get(key)
        if ck is not None and all(_global_value(k) == v for k, v in ck.used_globals.items()):
            return ck
        reason = self._recompile_reason(specs, consts, options, ck)
        ck = compile_kernel(self, specs, consts, options)
        ck.recompile_reason = reason
        self.cache[key] = ck
        self.last_compiled = ck
        return ck

    def _recompile_reason(self, specs: dict[str, ArgSpec], consts: dict[str, Any], options: Any,
                          stale: Any) -> str:
        """Why a launch compiled a new variant, in terms of the arguments that differ from
        the variant compiled last (empty for the first compile)."""
        if stale is not None:
            changed = [k for k, v in stale.used_globals.items() if _global_value(k) != v]
            return "module globals changed: " + ", ".join(changed)
        prev = getattr(self, "last_compiled", None)
        if prev is None:
            return ""
        diffs = [f"{k}: {prev.signature[k]} -> {v}" for k, v in specs.items() if prev.signature.get(k) != v]
        diffs += [f"{k}={prev.constants.get(k)!r} -> {v!r}" for k, v in consts.items() if prev.constants.get(k) != v]
        if prev.options != options:
            diffs.append("launch options changed")
        return ", ".join(diffs)

    def resolve_aot(self, signature: Any, constants: dict[str, Any] | None,
                    loc: Any) -> tuple[dict[str, ArgSpec], dict[str, Any]]:
        """The runtime argument specs and constexpr values of an ahead-of-time compile."""
        runtime = self.runtime_params
        try:
            specs, sig_consts = parse_signature(signature if signature is not None else "", runtime,
                                                [p for p in self.params if p in self.constexpr_params],
                                                self.params)
        except SemanticError as e:
            raise CompilationError(e.code, e.message, loc, e.help) from None
        consts = dict(sig_consts)
        for k, v in (constants or {}).items():
            if k not in self.params:
                raise CompilationError("TLXC-LAUNCH-001", f"{self.__name__} has no parameter '{k}'", loc)
            if k not in self.constexpr_params:
                raise CompilationError("TLXC-LAUNCH-001", f"'{k}' is not a tl.constexpr parameter of "
                                       f"{self.__name__}", loc)
            consts[k] = v
        for name in self.params:
            if name in self.constexpr_params and name not in consts:
                default = self.signature.parameters[name].default
                if default is inspect.Parameter.empty:
                    raise CompilationError("TLXC-LAUNCH-002", f"constexpr parameter '{name}' of "
                                           f"{self.__name__} has no value; give it in constants=", loc)
                consts[name] = default
        consts = {k: (tuple(consts[k]) if isinstance(consts[k], list) else consts[k])
                  for k in self.params if k in consts}
        return specs, consts

    def compile(self, signature: Any = None, constants: dict[str, Any] | None = None, arch: str = "sm_90a",
                num_warps: int = 4, num_ctas: int = 1, num_stages: int = 3, debug: bool = False,
                **launch_options: Any) -> Any:
        """Compile ahead of time for ``arch``. ``signature`` is Triton's string form
        (``"*fp16:16,i32,fp32"``) or a dict; ``constants`` gives the constexprs."""
        from ..compiler import CompileOptions

        loc = caller_location()
        try:
            options = CompileOptions(arch, num_warps, num_ctas, num_stages, debug,
                                     maxnreg=launch_options.get("maxnreg"),
                                     waves_per_eu=launch_options.get("waves_per_eu", 0))
            options.check(loc)
            options = options.for_target()
            for k in launch_options:
                if k not in LAUNCH_OPTIONS:
                    raise CompilationError("TLXC-CALL-002", f"unknown compile option '{k}'", loc)
            specs, consts = self.resolve_aot(signature, constants, loc)
            return self.get_compiled(specs, consts, options)
        except TlxcError as e:
            raise clean(e) from None

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> Any:
        loc = caller_location()
        values, _ = self.bind(args, dict(kwargs), loc)
        specs, consts = self.specialize(values, loc)
        from ..compiler import CompileOptions

        return self.get_compiled(specs, consts, CompileOptions(arch="sm_90a"))


class _VariantCache(dict):
    """``KernelFunction.cache``: a dict that empties the fast table (``fast``) when an
    entry is replaced or removed (a new one leaves the table as it is)."""

    fast: dict[Any, Any] | None = None

    def _changed(self) -> None:
        if self.fast is not None:
            self.fast.clear()

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self:
            self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._changed()

    def clear(self) -> None:
        super().clear()
        self._changed()

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> Any:
        self._changed()
        return super().popitem()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._changed()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._changed()
        return super().setdefault(key, default)


def _global_value(qualified: str) -> Any:
    import sys

    module, _, name = qualified.rpartition(".")
    mod = sys.modules.get(module)
    v = getattr(mod, name, None) if mod is not None else None
    return v.value if isinstance(v, constexpr) else v


class _InterpretIndexer:
    def __init__(self, kernel: KernelFunction) -> None:
        self.kernel = kernel

    def __getitem__(self, grid: Any) -> Launcher:
        return Launcher(self.kernel, grid, interpret=True)


def kernel(fn: Callable[..., Any] | None = None, *, do_not_specialize: Sequence[Any] = (), noinline: bool = False,
           debug: bool | None = None, **ignored: Any) -> Any:
    """Decorator: ``@tlxc.kernel`` or ``@tlxc.kernel(do_not_specialize=["n"])``."""
    if ignored:
        unknown = set(ignored) - {"repr", "launch_metadata", "do_not_specialize_on_alignment"}
        if unknown:
            raise TypeError(f"tlxc.kernel got unknown options {sorted(unknown)}")

    def wrap(f: Callable[..., Any]) -> KernelFunction:
        return KernelFunction(f, do_not_specialize, noinline, debug)

    return wrap(fn) if fn is not None else wrap
