"""``@tlxc.kernel`` (alias ``tlxc.jit``): the decorated function, its compiled variants
and how it is launched -- ``kernel[grid](...)``, ``kernel.interpret[grid](...)`` on the
CPU, or ``kernel.compile(...)`` ahead of time."""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Sequence

from ..errors import CompilationError, SemanticError, TlxcError, clean
from ..language.core import constexpr
from .callsite import caller_location
from .source import FunctionSource, parse_function
from .specialize import ArgSpec, parse_signature, spec_of

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "ctas_per_cga", "maxnreg", "stream", "debug",
                  "enable_fp_fusion", "launch_cooperative_grid", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def _is_constexpr_annotation(ann: Any) -> bool:
    if ann is constexpr:
        return True
    return isinstance(ann, str) and ann.replace(" ", "").split(".")[-1] == "constexpr"


class KernelFunction:
    """A kernel (or a helper that kernels call, which is inlined)."""

    def __init__(self, fn: Callable[..., Any], do_not_specialize: Sequence[Any] = (),
                 noinline: bool = False, debug: bool | None = None) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)
        self.constexpr_params = {n for n, p in self.signature.parameters.items()
                                 if _is_constexpr_annotation(p.annotation)}
        names = set()
        for d in do_not_specialize:
            names.add(self.params[d] if isinstance(d, int) else d)
        unknown = names - set(self.params)
        if unknown:
            raise TypeError(f"do_not_specialize names unknown parameters: {sorted(unknown)}")
        self.do_not_specialize = names
        self.debug = debug
        self._source: FunctionSource | None = None
        self.cache: dict[Any, Any] = {}
        self.last_compiled: Any = None

    def __repr__(self) -> str:
        return f"<tlxc kernel {self.__qualname__}>"

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            try:
                self._source = parse_function(self.fn)
            except (OSError, TypeError) as e:
                raise CompilationError("TLXC-SYNTAX-001", f"cannot read the source of {self.__name__}: {e}",
                                       None, "kernels must be defined in a .py file") from None
        return self._source

    @property
    def runtime_params(self) -> list[str]:
        return [p for p in self.params if p not in self.constexpr_params]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a tlxc kernel: launch it with {self.__name__}[grid](...), or call it "
                           "from another kernel")

    # -- launching --------------------------------------------------------------------------------
    def __getitem__(self, grid: Any) -> "Launcher":
        return Launcher(self, grid, interpret=os.environ.get("TLXC_INTERPRET", "0") not in ("", "0"))

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
            options = CompileOptions(arch, num_warps, num_ctas, num_stages, debug)
            options.check(loc)
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


def _global_value(qualified: str) -> Any:
    import sys

    module, _, name = qualified.rpartition(".")
    mod = sys.modules.get(module)
    v = getattr(mod, name, None) if mod is not None else None
    return v.value if isinstance(v, constexpr) else v


def normalize_grid(grid: Any, meta: dict[str, Any], loc: Any) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, int):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
        raise CompilationError("TLXC-LAUNCH-003", f"the grid must be 1 to 3 integers, got {grid!r}", loc)
    dims = []
    for g in grid:
        try:
            g = int(g)
        except (TypeError, ValueError):
            raise CompilationError("TLXC-LAUNCH-003", f"grid dimension {g!r} is not an integer", loc) from None
        if g < 0:
            raise CompilationError("TLXC-LAUNCH-003", f"grid dimension {g} is negative", loc)
        dims.append(g)
    return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]


class Launcher:
    """``kernel[grid]``: calling it compiles (once per specialization) and launches."""

    def __init__(self, kernel: KernelFunction, grid: Any, interpret: bool) -> None:
        self.kernel = kernel
        self.grid = grid
        self.interpret = interpret

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from ..compiler import CompileOptions

        loc = caller_location()
        try:
            values, launch = self.kernel.bind(args, dict(kwargs), loc)
            grid = normalize_grid(self.grid, dict(values), loc)
            specs, consts = self.kernel.specialize(values, loc)
            arch = "sm_90a" if self.interpret else _gpu_arch(loc)
            options = CompileOptions(arch=arch, num_warps=int(launch.get("num_warps", 4)),
                                     num_stages=int(launch.get("num_stages", 3)),
                                     num_ctas=int(launch.get("num_ctas", 1)))
            options.check(loc)
            ck = self.kernel.get_compiled(specs, consts, options)
            runtime = [values[p] for p in self.kernel.runtime_params]
            if grid[0] * grid[1] * grid[2] == 0:
                return ck
            if not self.interpret:
                loaded = _loaded(ck)
                loaded(grid, runtime, stream=launch.get("stream"))
                return ck
            from ..interpreter import run_kernel

            run_kernel(ck.func, grid, runtime)
            return ck
        except TlxcError as e:
            raise clean(e) from None


def _gpu_arch(loc: Any) -> str:
    """The target of the GPU the runtime launches on."""
    from ..compiler import TARGETS
    from ..runtime import device

    arch = device().arch
    if arch not in TARGETS:
        raise CompilationError("TLXC-LAUNCH-003", f"this GPU is {arch}; tlxc generates code for "
                               f"{', '.join(t for t in TARGETS if t.startswith('sm_'))}", loc)
    return arch


def _loaded(ck: Any) -> Any:
    """The runtime kernel of a compiled variant, made once."""
    lk = getattr(ck, "_loaded", None)
    if lk is None:
        from ..runtime import LoadedKernel

        binary = ck.asm["cubin"] if ck.asm.get("cubin") is not None or _has(ck, "cubin") else ck.asm["ptx"]
        lk = LoadedKernel(binary, ck.metadata["name"], [str(s) for s in ck.signature.values()],
                          num_warps=ck.metadata["num_warps"], shared_bytes=ck.metadata["shared"],
                          arg_names=list(ck.signature), metadata={"arch": ck.options.arch})
        ck._loaded = lk
    return lk


def _has(ck: Any, key: str) -> bool:
    try:
        ck.asm[key]
        return True
    except KeyError:
        return False


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
