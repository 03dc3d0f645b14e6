"""``tlxc.Config``, ``@tlxc.autotune`` and ``@tlxc.heuristics``: Triton's autotuner and
heuristics (``triton.runtime.autotuner``), with the same arguments, so that tutorials run
after renaming ``triton`` to ``tlxc``::

    @tlxc.autotune(configs=[tlxc.Config({"BLOCK": 128}, num_warps=4),
                            tlxc.Config({"BLOCK": 1024}, num_warps=8)], key=["n"])
    @tlxc.jit
    def add(x, y, out, n, BLOCK: tl.constexpr): ...

    add[lambda META: (tlxc.cdiv(n, META["BLOCK"]),)](x, y, out, n)

A launch of an autotuned kernel computes its tuning key -- the values of the ``key``
arguments, then the dtype of each argument that has one, as Triton does. On a new key it
prunes the configs (``prune_configs_by``: ``early_config_prune``, then ``perf_model`` with
``top_k``), times each one that is left with ``do_bench`` (``tlxc.testing.do_bench``:
CUDA events, the median of many runs), keeps the fastest for the key and launches with
it; the same key later launches the kept config at once. A config's ``kwargs`` reach the
kernel as constexpr keyword arguments and its ``num_warps``/``num_stages``/``num_ctas``/
``maxnreg`` as launch options; the grid callable sees them all in its ``META``. A config
that does not compile or load (a ``CompilationError``, ptxas refusing it, more shared
memory than a block may have) is timed as infinity and skipped; when none works, the
first config's error is raised.

Under the interpreter (``kernel.interpret[grid]`` or ``TLXC_INTERPRET=1``) nothing is
timed: CPU times say nothing about the GPU. Every config that survives pruning is
compiled, so that a config that cannot compile is found there too, and the launch uses
the first one that compiles (pre-hooks run as on the GPU). Tests that need another config
list it first or prune the others. ``TLXC_PRINT_AUTOTUNING=1`` prints each choice.

``use_cuda_graph=True`` times each config as a replayed CUDA graph of its launches
(``tlxc.testing.do_bench_cudagraph``, which needs PyTorch); ``cache_results=True`` keeps
the choice per tuning key on disk (tune_cache.py), so that another process launches it
without timing. A ``key`` that names no parameter is left out of the tuning key with a
warning, as Triton leaves it out.
"""

from __future__ import annotations

import builtins
import os
import sys
import time
import warnings
from typing import Any, Callable, Iterable, Sequence

from ..errors import CompilationError, TlxcError, clean
from .launch import ENV_GET, ENV_KEY, ENV_OFF
from .options import LAUNCH_OPTIONS

# launch options a Config carries besides the four named ones (TLX tutorials set ctas_per_cga)
_EXTRA_OPTIONS = tuple(o for o in LAUNCH_OPTIONS if o not in ("num_warps", "num_stages", "num_ctas", "maxnreg",
                                                              "stream"))


class Config:
    """One point of an autotuning search, as ``triton.Config``: ``kwargs`` are the
    constexpr arguments it sets, ``num_warps``/``num_stages``/``num_ctas``/``maxnreg`` its
    launch options (``maxnreg=None``: no limit), ``pre_hook(named_args)`` a function run
    before each launch with this config (tutorials set TMA block shapes there). Every other
    option that ``kernel[grid]`` takes, TLX's among them (``ctas_per_cga``,
    ``allowDependentTwoCTA``...), may be given too: a launch with the config honours it or
    refuses it with an error naming it (options.py)."""

    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable[[dict[str, Any]], Any] | None = None,
                 **options: Any) -> None:
        unknown = [k for k in options if k not in _EXTRA_OPTIONS]
        if unknown:
            raise TypeError(f"tlxc.Config got unknown options {sorted(unknown)}; launch options are "
                            f"num_warps, num_stages, num_ctas, maxnreg, {', '.join(_EXTRA_OPTIONS)}")
        for name in ("minRegAutoWS", "maxRegAutoWS"):  # register counts, as setmaxnreg takes them (TLX checks here)
            v = options.get(name)
            if v is not None and (not isinstance(v, int) or v % 8):
                raise ValueError(f"tlxc.Config: {name}={v!r} must be an int divisible by 8 (a setmaxnreg count)")
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.options = options

    def __getattr__(self, name: str) -> Any:
        """The other launch options by name, as TLX's Config has them (``config.ctas_per_cga``):
        None where not given. A launch with the config honours or refuses each one (options.py)."""
        if name in _EXTRA_OPTIONS:
            return self.__dict__.get("options", {}).get(name)
        raise AttributeError(f"'Config' object has no attribute '{name}'")

    def all_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of a launch with this config: ``kwargs`` and the launch
        options that are set."""
        opts = (("num_warps", self.num_warps), ("num_ctas", self.num_ctas), ("num_stages", self.num_stages),
                ("maxnreg", self.maxnreg), *self.options.items())
        return {**self.kwargs, **{k: v for k, v in opts if v is not None}}

    def _identity(self) -> tuple:
        return (*self.all_kwargs().items(), self.pre_hook)

    def __hash__(self) -> int:
        return hash(self._identity())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()

    def __str__(self) -> str:  # as triton.Config
        res = [f"{k}: {v}" for k, v in self.kwargs.items()]
        res += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}",
                f"maxnreg: {self.maxnreg}"]
        res += [f"{k}: {v}" for k, v in self.options.items()]
        return ", ".join(res)

    __repr__ = __str__


# -- what autotuners and heuristics wrap -------------------------------------------------------------

class _Wrapper:
    """A kernel launched through Python logic first (an ``Autotuner`` or ``Heuristics``):
    ``wrapper[grid](...)``, ``wrapper.interpret[grid](...)``. ``fn`` is what it wraps (a
    ``KernelFunction`` or another wrapper), ``base_fn`` the kernel at the bottom."""

    def __init__(self, fn: Any) -> None:
        from .function import KernelFunction

        base = fn
        while isinstance(base, _Wrapper):
            base = base.fn
        if not isinstance(base, KernelFunction):
            raise TypeError(f"{type(self).__name__} wraps a @tlxc.jit kernel, got {fn!r}; put @tlxc.jit "
                            "below it")
        self.fn = fn
        self.base_fn: KernelFunction = base
        self.arg_names: list[str] = base.params
        self.__name__ = base.__name__
        self.__qualname__ = base.__qualname__
        self.__doc__ = base.__doc__
        self.__module__ = base.__module__
        self.__wrapped__ = fn

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        interpret = ENV_GET(ENV_KEY) not in ENV_OFF
        return lambda *args, **kwargs: self.run(*args, grid=grid, interpret=interpret, **kwargs)

    @property
    def interpret(self) -> "_InterpretIndexer":
        return _InterpretIndexer(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a tlxc kernel: launch it with {self.__name__}[grid](...)")

    def run(self, *args: Any, grid: Any, interpret: bool = False, compile_only: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _launch_inner(self, grid: Any, interpret: bool, args: tuple, kwargs: dict[str, Any],
                      compile_only: bool = False) -> Any:
        """Launch what this wraps; with ``compile_only``, find or compile the variant the
        launch would use and return it, running nothing (the interpreter's autotuning)."""
        fn = self.fn
        if isinstance(fn, _Wrapper):
            return fn.run(*args, grid=grid, interpret=interpret, compile_only=compile_only, **kwargs)
        if compile_only:
            return fn.variant_for(args, kwargs, grid, interpret)
        return (fn.interpret[grid] if interpret else fn[grid])(*args, **kwargs)


class _InterpretIndexer:
    def __init__(self, wrapper: _Wrapper) -> None:
        self.wrapper = wrapper

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        w = self.wrapper
        return lambda *args, **kwargs: w.run(*args, grid=grid, interpret=True, **kwargs)


# -- the autotuner -----------------------------------------------------------------------------------

def _is_config_failure(e: BaseException) -> bool:
    """Whether ``e`` means that this config cannot run (Triton's OutOfResources,
    PTXASError, CompileTimeAssertionFailure): the config is skipped, not the launch failed."""
    if isinstance(e, CompilationError):
        return True
    errors = sys.modules.get("tlxc.runtime.errors")
    return errors is not None and isinstance(e, (errors.PtxasError, errors.LaunchError))


def _zero(x: Any) -> None:
    if hasattr(x, "zero_"):
        x.zero_()  # torch
    else:
        x[...] = 0  # numpy and the like


def _copy(x: Any) -> Any:
    return x.clone() if hasattr(x, "clone") else x.copy()


def _restore(x: Any, saved: Any) -> None:
    if hasattr(x, "copy_"):
        x.copy_(saved)
    else:
        x[...] = saved


def _as_timing(t: Any) -> tuple[float, ...]:
    """A benchmark result as a tuple compared first by its first value (the median)."""
    if isinstance(t, (list, tuple)):
        return tuple(float(v) for v in t)
    return (float(t),)


class Autotuner(_Wrapper):
    """``@tlxc.autotune(...)`` applied to a kernel (see the module docstring). After a
    launch: ``best_config`` (the config it used), ``cache`` (the best config by tuning
    key), ``configs_timings`` and ``bench_time`` of the last tuning."""

    def __init__(self, fn: Any, configs: Sequence[Config], key: Sequence[str],
                 prune_configs_by: dict[str, Any] | None = None, reset_to_zero: Iterable[str] | None = None,
                 restore_value: Iterable[str] | None = None, pre_hook: Callable[..., Any] | None = None,
                 post_hook: Callable[..., Any] | None = None, warmup: float | None = None, rep: float | None = None,
                 use_cuda_graph: bool = False, do_bench: Callable[..., Any] | None = None,
                 cache_results: bool = False) -> None:
        super().__init__(fn)
        self.configs = list(configs) if configs else [Config({})]
        for c in self.configs:
            if not isinstance(c, Config):
                raise TypeError(f"autotune configs must be tlxc.Config objects, got {c!r}")
        self.keys = list(key)
        ignored = [k for k in self.keys if k not in self.arg_names]
        if ignored:  # as Triton, which leaves such names out of the tuning key
            warnings.warn(f"autotune key of {self.__name__} names {ignored}, which are not parameters of it "
                          f"(parameters: {', '.join(self.arg_names)}); they are left out of the tuning key",
                          stacklevel=3)
        for names, what in (((), "key"), (reset_to_zero or (), "reset_to_zero"),
                            (restore_value or (), "restore_value")):
            unknown = [k for k in names if k not in self.arg_names]
            if unknown:
                raise ValueError(f"autotune {what} names unknown parameters of {self.__name__}: {unknown} "
                                 f"(parameters: {', '.join(self.arg_names)})")
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        self.user_pre_hook = pre_hook  # replaces the reset/restore hooks, as in Triton
        self.user_post_hook = post_hook
        self._restore_copies: dict[str, Any] = {}
        prune = dict(prune_configs_by or {})
        unknown = set(prune) - {"early_config_prune", "perf_model", "top_k"}
        if unknown:
            raise ValueError(f"prune_configs_by takes early_config_prune, perf_model and top_k, not {sorted(unknown)}")
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.warmup, self.rep = warmup, rep
        # use_cuda_graph: each config is timed as a replayed CUDA graph of its launches
        # (testing.do_bench_cudagraph); cache_results: the choice per tuning key is kept on
        # disk (tune_cache.py), so that another process does not time the configs again
        self.use_cuda_graph = bool(use_cuda_graph)
        self.cache_results = bool(cache_results)
        self._do_bench = do_bench
        self.cache: dict[tuple, Config] = {}
        self._interpret_cache: dict[tuple, Config] = {}
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, Any] | None = None
        self.bench_time = 0.0

    def __repr__(self) -> str:
        return f"<tlxc autotuned kernel {self.__qualname__} ({len(self.configs)} configs, key={self.keys})>"

    # -- hooks ------------------------------------------------------------------------------------
    def _pre_hook(self, nargs: dict[str, Any], reset_only: bool = False) -> None:
        if self.user_pre_hook is not None:
            self.user_pre_hook(nargs, reset_only=reset_only)
            return
        for name in self.reset_to_zero:
            _zero(nargs[name])
        if not reset_only:
            self._restore_copies = {name: _copy(nargs[name]) for name in self.restore_value}

    def _post_hook(self, nargs: dict[str, Any], exception: BaseException | None) -> None:
        if self.user_post_hook is not None:
            self.user_post_hook(nargs, exception=exception)
            return
        for name in self.restore_value:
            if name in self._restore_copies:
                _restore(nargs[name], self._restore_copies[name])
        self._restore_copies = {}

    # -- tuning -----------------------------------------------------------------------------------
    def do_bench(self, fn: Callable[[], Any], quantiles: Sequence[float]) -> Any:
        """The timing of ``fn`` in milliseconds (the ``do_bench`` given to autotune, else
        ``tlxc.testing.do_bench`` with ``warmup`` and ``rep``)."""
        if self._do_bench is not None:
            return self._do_bench(fn, quantiles=quantiles)
        if self.use_cuda_graph:
            from ..testing import do_bench_cudagraph

            return do_bench_cudagraph(fn, rep=100 if self.rep is None else self.rep, quantiles=quantiles)
        from ..testing import do_bench

        return do_bench(fn, warmup=25 if self.warmup is None else self.warmup,
                        rep=100 if self.rep is None else self.rep, quantiles=quantiles)

    def prune_configs(self, nargs: dict[str, Any], kwargs: dict[str, Any]) -> list[Config]:
        """The configs left by ``early_config_prune(configs, named_args, **kwargs)`` and
        then by ``perf_model`` (the ``top_k`` best estimates; a float <= 1 is a fraction)."""
        configs = self.configs
        if self.early_config_prune is not None:
            configs = list(self.early_config_prune(self.configs, nargs, **kwargs))
            if not configs:
                raise ValueError(f"early_config_prune left no config of {self.__name__} to launch")
        if self.perf_model is not None:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(self.configs) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("prune_configs_by['top_k'] must be an int or a float <= 1.0")
            if len(configs) > top_k:
                estimate = {c: self.perf_model(**nargs, **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(configs, key=lambda c: estimate[c])[:top_k]
        return list(configs)

    def _bench(self, grid: Any, args: tuple, kwargs: dict[str, Any], nargs: dict[str, Any],
               config: Config, verbose: bool) -> tuple[tuple[float, ...], BaseException | None]:
        """(the timing of ``config``, None), or (infinity, the error) where it cannot run."""
        if verbose:
            print(f"Autotuning kernel {self.__name__} with config {config}")
        current = {**kwargs, **config.all_kwargs()}
        full = {**nargs, **current}

        def kernel_call() -> None:
            if config.pre_hook is not None:
                config.pre_hook(full)
            self._pre_hook(full)
            try:
                self._launch_inner(grid, False, args, current)
            except BaseException as e:
                try:
                    self._post_hook(full, exception=e)
                finally:
                    raise
            self._post_hook(full, exception=None)

        try:
            return _as_timing(self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))), None
        except Exception as e:
            if not _is_config_failure(e):
                raise
            if verbose:
                print(f"Autotuning failed with {e}")
            return (float("inf"),) * 3, e

    def tuning_key(self, nargs: dict[str, Any], kwargs: dict[str, Any]) -> tuple:
        """The values of the ``key`` arguments, then the dtypes of the arguments that have one."""
        named = {k: v for k, v in {**nargs, **kwargs}.items() if k in self.arg_names}
        key = [named[k] for k in self.keys if k in named]
        key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
        return tuple(key)

    def run(self, *args: Any, grid: Any, interpret: bool = False, compile_only: bool = False, **kwargs: Any) -> Any:
        """Choose the config for these arguments (tuning on a new key), then launch with it."""
        for c in self.configs:
            conflicts = sorted(set(kwargs) & set(c.kwargs))
            if conflicts:
                raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}. Make sure that you don't "
                                 "re-define auto-tuned symbols.")
        nargs = dict(zip(self.arg_names, args))
        verbose = os.environ.get("TLXC_PRINT_AUTOTUNING") == "1"
        tuned = False
        if len(self.configs) == 1:
            config = self.configs[0]
        elif interpret:
            key = self.tuning_key(nargs, kwargs)
            config = self._interpret_cache.get(key)  # type: ignore[assignment]
            if config is None:
                config = self._interpret_cache[key] = self._choose_compiling(grid, args, kwargs, nargs, verbose)
        else:
            key = self.tuning_key(nargs, kwargs)
            config = self.cache.get(key)  # type: ignore[assignment]
            if config is None:
                config = self._tune(key, grid, args, kwargs, nargs, verbose)
                tuned = True
        self.best_config = config
        if verbose and tuned:
            print(f"tlxc autotuning for function {self.__name__} finished after {self.bench_time:.2f}s; "
                  f"best config selected: {config};")
        if compile_only:
            return self._launch_inner(grid, interpret, args, {**kwargs, **config.all_kwargs()}, compile_only=True)
        if config.pre_hook is not None:
            config.pre_hook({**nargs, **kwargs, **config.all_kwargs()})
        return self._launch_inner(grid, interpret, args, {**kwargs, **config.all_kwargs()})

    def _choose_compiling(self, grid: Any, args: tuple, kwargs: dict[str, Any], nargs: dict[str, Any],
                          verbose: bool) -> Config:
        """The interpreter's choice: CPU times say nothing about the GPU, so nothing is
        timed; every config left by pruning is compiled (so that one that cannot compile is
        found as on the GPU, and skipped), and the first that compiles is chosen. When none
        compiles, the first one's error is raised."""
        configs = self.prune_configs(nargs, kwargs)
        start = time.time()
        failures: dict[Config, BaseException] = {}
        for c in configs:
            try:
                if c.pre_hook is not None:  # it may fix what the compile sees (a descriptor's block shape)
                    c.pre_hook({**nargs, **kwargs, **c.all_kwargs()})
                self._launch_inner(grid, True, args, {**kwargs, **c.all_kwargs()}, compile_only=True)
            except Exception as e:
                if not _is_config_failure(e):
                    raise
                failures[c] = e
                if verbose:
                    print(f"Autotuning kernel {self.__name__}: config {c} does not compile: {e}")
        self.bench_time = time.time() - start
        self.configs_timings = None
        ok = [c for c in configs if c not in failures]
        if not ok:
            first = failures[configs[0]]
            if isinstance(first, TlxcError):
                raise clean(first) from None
            raise first
        if verbose:
            print(f"tlxc autotuning for function {self.__name__} in the interpreter (nothing timed): "
                  f"{len(ok)} of {len(configs)} configs compile; config selected: {ok[0]};")
        return ok[0]

    def _tune(self, key: tuple, grid: Any, args: tuple, kwargs: dict[str, Any], nargs: dict[str, Any],
              verbose: bool) -> Config:
        configs = self.prune_configs(nargs, kwargs)
        stored = None
        if self.cache_results:
            from . import tune_cache

            stored = tune_cache.results_key(self.base_fn, key, configs)
            best = tune_cache.load(stored, configs) if stored is not None else None
            if best is not None:
                self.cache[key] = best
                self.bench_time = 0.0
                if verbose:
                    print(f"tlxc autotuning for function {self.__name__}: config read from the cache: {best};")
                return best
        start = time.time()
        timings: dict[Config, tuple[float, ...]] = {}
        first_error: BaseException | None = None
        for c in configs:
            timings[c], error = self._bench(grid, args, kwargs, nargs, c, verbose)
            if first_error is None:
                first_error = error
        self.bench_time = time.time() - start
        self.configs_timings = timings
        if all(t[0] == float("inf") for t in timings.values()) and first_error is not None:
            if isinstance(first_error, TlxcError):
                raise clean(first_error) from None
            raise first_error
        best = builtins.min(timings, key=timings.__getitem__)
        self.cache[key] = best
        if stored is not None:
            tune_cache.store(stored, configs, best, timings)
        self._pre_hook({**nargs, **kwargs, **best.all_kwargs()}, reset_only=True)
        return best


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict[str, Any] | None = None,
             reset_to_zero: Iterable[str] | None = None, restore_value: Iterable[str] | None = None,
             pre_hook: Callable[..., Any] | None = None, post_hook: Callable[..., Any] | None = None,
             warmup: float | None = None, rep: float | None = None, use_cuda_graph: bool = False,
             do_bench: Callable[..., Any] | None = None, cache_results: bool = False) -> Callable[[Any], Autotuner]:
    """Decorator, as ``triton.autotune``: tune ``configs`` per value of the ``key``
    arguments (see the module docstring).

    ``prune_configs_by``: ``{"early_config_prune": f(configs, named_args, **kwargs) ->
    configs, "perf_model": f(**args, **config_kwargs) -> estimate, "top_k": n}``;
    ``reset_to_zero``/``restore_value``: arguments zeroed before each timed run / restored
    after it (a kernel that accumulates into its output would otherwise see the sum of the
    runs); ``pre_hook(args, reset_only)``/``post_hook(args, exception)`` replace those;
    ``warmup``/``rep``: milliseconds of ``tlxc.testing.do_bench``; ``do_bench(fn,
    quantiles)``: another timer."""

    def decorator(fn: Any) -> Autotuner:
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, pre_hook, post_hook,
                         warmup, rep, use_cuda_graph, do_bench, cache_results)

    return decorator


# -- heuristics --------------------------------------------------------------------------------------

class Heuristics(_Wrapper):
    """``@tlxc.heuristics(values)`` applied to a kernel: each launch sets the argument
    ``name`` to ``values[name](args)`` (``args``: all arguments by name, those computed
    before included)."""

    def __init__(self, fn: Any, values: dict[str, Callable[[dict[str, Any]], Any]]) -> None:
        super().__init__(fn)
        self.values = dict(values)

    def __repr__(self) -> str:
        return f"<tlxc kernel {self.__qualname__} with heuristics for {', '.join(self.values)}>"

    def run(self, *args: Any, grid: Any, interpret: bool = False, compile_only: bool = False, **kwargs: Any) -> Any:
        for name, heur in self.values.items():
            kwargs[name] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self._launch_inner(grid, interpret, args, kwargs, compile_only)


def heuristics(values: dict[str, Callable[[dict[str, Any]], Any]]) -> Callable[[Any], Heuristics]:
    """Decorator, as ``triton.heuristics``: ``@tlxc.heuristics(values={"EVEN": lambda args:
    args["n"] % args["BLOCK"] == 0})`` computes constexpr arguments from the others."""

    def decorator(fn: Any) -> Heuristics:
        return Heuristics(fn, values)

    return decorator
