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
from ..frontend.tuple_args import split_tuple
from ..ir.types import TensorDescType, as_tlxc_dtype
from ..knobs import always_compile
from ..language.core import constexpr
from .launch import (
    ENV_GET,
    ENV_KEY,
    ENV_OFF,
    LAUNCH_HOOK,
    FastTable,
    Launcher,
    gpu_arch,
    make_fast_launch,
    normalize_grid,
    subscript,
)
from .options import LAUNCH_OPTIONS, compile_options
from .variants import VariantCache, global_value


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
        self.cache = VariantCache()
        self.last_compiled: Any = None

    def __repr__(self) -> str:
        return f"<tlxc kernel {self.__qualname__}>"

    def _source_changed(self) -> None:
        self.cache = VariantCache()  # compiled from the old source (also empties the fast path)
        self._launchers.clear()

    @property
    def cache(self) -> dict[Any, Any]:
        """The compiled variants by (argument specs, constexprs, options). Replacing or
        removing entries (or the dict) also empties the fast path's table, so that
        launches see the change."""
        return self._cache

    @cache.setter
    def cache(self, value: dict[Any, Any]) -> None:
        self._cache = value if isinstance(value, VariantCache) else VariantCache(value)
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
        if LAUNCH_HOOK:  # a profiler records launches on the slow path only
            return Launcher(self, grid, interpret=False)
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
        """The runtime argument specs and constexpr values of a launch. A runtime argument
        that is None is specialized as the constant None, as Triton does: it is not passed,
        ``x is None`` folds in the kernel, and the variant differs from one with a tensor."""
        specs, consts = {}, {}
        for name, v in values.items():
            if name in self.constexpr_params:
                v = v.value if isinstance(v, constexpr) else v
                v = as_tlxc_dtype(v) or v  # a dtype of Triton's (its test helpers hand them out): ours
                consts[name] = tuple(v) if isinstance(v, list) else v
            elif v is None:
                consts[name] = None
            else:
                specialize = name not in self.do_not_specialize

                def spec(label: str, x: Any) -> ArgSpec:
                    try:
                        return spec_of(x, specialize)
                    except SemanticError as e:
                        raise CompilationError(e.code, f"argument '{label}': {e.message}", loc, e.help) from None
                if isinstance(v, tuple):  # Triton's tuple arguments: leaf by leaf (frontend/tuple_args.py)
                    consts[name] = split_tuple(name, v, spec, specs, consts)
                else:
                    specs[name] = spec(name, v)
        return specs, consts

    def get_compiled(self, specs: dict[str, ArgSpec], consts: dict[str, Any], options: Any,
                     disk: bool = False) -> Any:
        """The variant for these specializations and options: from memory (if the module
        globals it read still hold their values), else with ``disk`` from the on-disk
        cache (disk.py), else compiled (and, with ``disk``, stored there once its binary
        is made)."""
        from ..compiler import compile_kernel

        if not options.arch.startswith("gfx"):  # TMA bounds-checks itself: sizes divisible by 16 change nothing
            specs = {n: ArgSpec(s.type) if isinstance(s.type, TensorDescType) and s.divisibility > 1 else s
                     for n, s in specs.items()}
        try:
            key = (tuple(specs.items()), tuple(sorted(consts.items(), key=lambda kv: kv[0])), options)
            hash(key)
        except TypeError:
            raise CompilationError("TLXC-LAUNCH-003", "constexpr values must be hashable (numbers, strings, "
                                   "dtypes, tuples)", caller_location()) from None
        ck = self.cache.get(key)
        if ck is not None and all(global_value(k) == v for k, v in ck.used_globals.items()):
            return ck
        reason = self._recompile_reason(specs, consts, options, ck)
        disk_key = None
        if disk:
            from . import disk as on_disk

            disk_key = on_disk.variant_key(self, specs, consts, options)
            read = disk_key is not None and not always_compile()  # tlxc.knobs.compilation.always_compile
            found = on_disk.load(self, disk_key, specs, consts, options) if read else None
            if found is not None:
                found.recompile_reason = reason
                self.cache[key] = self.last_compiled = found
                return found
        ck = compile_kernel(self, specs, consts, options)
        ck.recompile_reason = reason
        if disk_key is not None:
            _store_when_built(ck, disk_key)
        self.cache[key] = ck
        self.last_compiled = ck
        return ck

    def _recompile_reason(self, specs: dict[str, ArgSpec], consts: dict[str, Any], options: Any,
                          stale: Any) -> str:
        """Why a launch compiled a new variant, in terms of the arguments that differ from
        the variant compiled last (empty for the first compile)."""
        if stale is not None:
            changed = [k for k, v in stale.used_globals.items() if global_value(k) != v]
            return "module globals changed: " + ", ".join(changed)
        prev = getattr(self, "last_compiled", None)
        if prev is None:
            return ""
        was = {**prev.signature, **prev.constants}  # a runtime argument given None is among the constants
        diffs = [f"{k}: {_spelled(was.get(k))} -> {v}" for k, v in specs.items() if prev.signature.get(k) != v]
        diffs += [f"{k}: {_spelled(was.get(k))} -> None" if k in self.runtime_params else
                  f"{k}={prev.constants.get(k)!r} -> {v!r}"
                  for k, v in consts.items() if k not in prev.constants or prev.constants[k] != v]
        if prev.options != options:
            diffs.append("launch options changed")
        return ", ".join(diffs)

    def resolve_aot(self, signature: Any, constants: dict[str, Any] | None,
                    loc: Any) -> tuple[dict[str, ArgSpec], dict[str, Any]]:
        """The runtime argument specs and constexpr values of an ahead-of-time compile."""
        runtime = self.runtime_params
        constants = {k: (v.value if isinstance(v, constexpr) else v) for k, v in (constants or {}).items()}
        consts: dict[str, Any] = {}
        for k, v in constants.items():
            if k not in self.params:
                raise CompilationError("TLXC-LAUNCH-001", f"{self.__name__} has no parameter '{k}'", loc)
            if k not in self.constexpr_params and v is not None:
                raise CompilationError("TLXC-LAUNCH-001", f"'{k}' is not a tl.constexpr parameter of "
                                       f"{self.__name__}; constants= can give a runtime parameter the value None "
                                       f"only (as a None argument at launch), not {v!r}", loc)
        none = frozenset(k for k in runtime if k in constants)
        try:
            specs, sig_consts = parse_signature(signature if signature is not None else "", runtime,
                                                [p for p in self.params if p in self.constexpr_params],
                                                self.params, none)
        except SemanticError as e:
            raise CompilationError(e.code, e.message, loc, e.help) from None
        consts.update(sig_consts)
        consts.update(constants)
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
        (``"*fp16:16,i32,fp32"``) or a dict; ``constants`` gives the constexprs; every
        launch option is taken (options.py) and honoured or refused."""
        loc = caller_location()
        try:
            given = {"num_warps": num_warps, "num_ctas": num_ctas, "num_stages": num_stages, "debug": debug,
                     **launch_options}
            given.pop("stream", None)  # where a launch runs, not what is compiled
            options = compile_options(given, _check_arch(arch, loc), loc)
            specs, consts = self.resolve_aot(signature, constants, loc)
            return self.get_compiled(specs, consts, options)
        except TlxcError as e:
            raise clean(e) from None

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> Any:
        """Compile (or find) the variant that ``kernel[grid](*args, **kwargs)`` would launch,
        without launching it, as Triton's ``warmup``: the same arguments, constexprs and
        options, the grid checked (a callable is called with the arguments). The target is
        ``arch=``/``target=`` if given, else the interpreter's under TLXC_INTERPRET, else
        this machine's GPU. Returns the compiled variant."""
        try:
            return self.variant_for(args, kwargs, grid, None)
        except TlxcError as e:
            raise clean(e) from None

    def variant_for(self, args: tuple, kwargs: dict[str, Any], grid: Any, interpret: bool | None) -> Any:
        """The variant a launch with these arguments would use, found or compiled, nothing
        run. ``interpret``: for the interpreter, for the GPU, or (None) as ``kernel[grid]``
        decides (TLXC_INTERPRET); ``arch=`` or ``target=`` among ``kwargs`` choose the target."""
        loc = caller_location()
        kwargs = dict(kwargs)
        arch = kwargs.pop("arch", None)
        target = kwargs.pop("target", None)
        if target is not None:  # Triton's GPUTarget, or a name
            arch = arch or _target_arch(target, loc)
        values, launch = self.bind(args, kwargs, loc)
        if interpret is None:
            interpret = arch is None and ENV_GET(ENV_KEY) not in ENV_OFF
        if arch is None:
            arch = "sm_90a" if interpret else gpu_arch(loc)
        options = compile_options({k: v for k, v in launch.items() if k != "stream"}, _check_arch(arch, loc), loc)
        if grid is not None:
            from .launch import check_clusters

            check_clusters(normalize_grid(grid, dict(values), loc), options, loc)
        specs, consts = self.specialize(values, loc)
        return self.get_compiled(specs, consts, options, disk=not interpret)


def _spelled(spec: Any) -> str:
    """How a runtime argument's specialization reads in a recompile reason."""
    return "None" if spec is None else str(spec)


def _check_arch(arch: Any, loc: Any) -> str:
    from ..compiler import TARGETS

    if arch not in TARGETS:
        raise CompilationError("TLXC-CLI-001", f"unknown target architecture {arch!r}; choose one of "
                               f"{', '.join(TARGETS)}", loc)
    return arch


def _target_arch(target: Any, loc: Any) -> str:
    """The tlxc target of Triton's ``GPUTarget`` (``backend``, ``arch``: 90 or "gfx942")
    or of a target name."""
    if isinstance(target, str):
        return target
    backend, arch = getattr(target, "backend", None), getattr(target, "arch", None)
    if backend == "cuda" and isinstance(arch, int):
        return f"sm_{arch}a" if arch in (90, 100) else f"sm_{arch}"
    if backend == "hip" and isinstance(arch, str):
        return arch
    raise CompilationError("TLXC-CLI-001", f"cannot read the target {target!r}: give arch='sm_90a' (or another "
                           "tlxc target)", loc)


def _store_when_built(ck: Any, key: str) -> None:
    """Store ``ck`` on disk once the launch path has made its binary: wraps the producer
    of its outputs, so that the store costs nothing until then and happens once."""
    from . import disk as on_disk

    binary = "hsaco" if ck.options.arch.startswith("gfx") else "cubin"
    produce = ck.asm.producer

    def producer(name: str) -> bool:
        made = produce(name)
        if binary in ck.asm and ck.asm.producer is producer:  # made now, with whatever output was asked for
            ck.asm.producer = produce
            on_disk.store(ck, key)
        return made

    ck.asm.producer = producer


class _InterpretIndexer:
    def __init__(self, kernel: KernelFunction) -> None:
        self.kernel = kernel

    def __getitem__(self, grid: Any) -> Launcher:
        return Launcher(self.kernel, grid, interpret=True)


def kernel(fn: Callable[..., Any] | None = None, *, do_not_specialize: Sequence[Any] = (), noinline: bool = False,
           debug: bool | None = None, **ignored: Any) -> Any:
    """Decorator: ``@tlxc.kernel`` or ``@tlxc.kernel(do_not_specialize=["n"])``."""
    # Triton's profiling hooks (``repr``, ``launch_metadata``) are kept on the kernel:
    # ``tlxc.profiler`` calls ``launch_metadata`` for the launches it records (``repr`` is
    # only Triton's own launch hooks', which tlxc does not have).
    # ``do_not_specialize_on_alignment``: those arguments are not specialized at all (no
    # alignment or divisibility assumed), which is what the option protects.
    unknown = set(ignored) - {"repr", "launch_metadata", "do_not_specialize_on_alignment"}
    if unknown:
        raise TypeError(f"tlxc.kernel got unknown options {sorted(unknown)}")
    no_align = tuple(ignored.get("do_not_specialize_on_alignment") or ())

    def wrap(f: Callable[..., Any]) -> KernelFunction:
        k = KernelFunction(f, tuple(do_not_specialize) + no_align, noinline, debug)
        k.repr, k.launch_metadata = ignored.get("repr"), ignored.get("launch_metadata")
        return k

    return wrap(fn) if fn is not None else wrap
