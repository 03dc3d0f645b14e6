"""``kernel[grid](...)``: from a launch's arguments to a running variant, on two paths
with one meaning.

The slow path, ``Launcher._launch``, binds the arguments to the parameters
(``KernelFunction.bind``), runs the grid, specializes each argument (``spec_of``), builds
the compile options, finds or compiles the variant (``get_compiled``, which also checks
the module globals the variant read) and launches it through its ``LoadedKernel``. Every
launch error comes from it, pointing at the caller's line. It costs tens of
microseconds: more than the GPU takes to run a small kernel.

The fast path is a Python function generated once per kernel (``make_fast_launch``; two
in fact, for a grid of ints and for a grid callable) and returned by ``kernel[grid]``
bound to the grid (a ``functools.partial``, whose call costs no Python frame; kept per
grid of ints). Its parameters mirror the kernel's, so that Python itself binds the usual
call shapes; it then computes a key that decides the specialization and looks it up in
the kernel's table of ready variants (``KernelFunction._fast``), which only the slow path
fills. On a hit it calls ``LoadedKernel.launch`` directly. Everything else --
a miss, a keyword it does not name, a missing argument, an argument of an unusual type,
any exception while computing the key -- goes to the slow path, which compiles, loads,
launches and fills the table, or raises the error. The interpreter
(``kernel.interpret[grid]``, ``TLXC_INTERPRET=1``) always takes the slow path.

The key, and why equal keys mean the same variant. Per runtime argument three slots:

* a tensor-like (a type whose objects have ``data_ptr()``): its type, whether
  ``data_ptr()`` is 16-byte aligned (None under ``do_not_specialize``) and its ``dtype``
  object -- ``spec_of`` derives the pointer's ArgSpec from exactly these;
* an ``int`` that fits in i32: ``int``, the marker ``__ONE`` when it equals 1 (the
  kernel then sees the constant, as in Triton) else whether it is divisible by 16 (None
  under ``do_not_specialize``), None; a larger one: ``int``, its ArgSpec from ``spec_of``, None;
* a ``float``: ``float``, None, None (always fp32);
* anything else (bool, numpy scalars, int subclasses...): its type, its ArgSpec from
  ``spec_of`` itself, None.

Then the constexpr values as given, the options that choose the variant
(``options.KEY_OPTIONS``) as given, and False; a launch naming any other option but ``stream`` takes
the slow path, which checks it. After the first launch the
generated code first tries one branch-free expression that assumes each argument is of the kind it was then
(a third faster; its int slots hold whether the value fits in i32, else its type),
tagged True, and falls back to the code above where the assumption fails
(``make_fast_launch``). Keys compare like the variant cache's keys (``128 == 128.0``), so
the fast table never tells two calls apart that the cache would not. The device, hence
the target, does not change within a process, so it is not part of the key. A table
entry is (the LoadedKernel, the CompiledKernel, guards on the module globals it read):
a hit checks that each such global is still the same object (identity; any change
sends the launch to the slow path, which compares values and recompiles or refills).
Replacing or removing an entry of ``kernel.cache`` empties the table.

The hot variant. Where every argument is a PyTorch tensor, an int or a float (the
trusted kinds), a hit launches through ``LoadedKernel.launch_trusted``, a native builtin
(runtime/native_launch.py) that packs and calls ``cuLaunchKernel``. The variant of the
last such launch is also *hot* (``FastTable.hot``): its native guarded launch, made in
``remember`` from the speculative key of its launch, checks in C what that key holds --
each tensor's exact type, ``is_cuda``, dtype object and alignment, each int's type, i32
range and specialization, each float's type, the constexprs and options by ``==`` -- and
launches. It is tried before any key is computed (by the native entry below, or by the
generated function of a grid callable); where a check fails it
answers None and the key decides as above (a hit makes that variant hot). Computing the
key in Python costs about as much as the launch itself with four tensors, which is
what this saves. Entries with module-global guards are never hot; unloading the kernel
or emptying the table makes the hot variant refuse or forgets it.

The native entry. With trusted kinds, ``kernel[grid]`` is bound not to the generated
function but to a native builtin (``native_launch.make_dispatcher``) that, for the usual
call shapes (the parameters up to the last runtime one by position, the trailing
constexprs by position or keyword, no options), calls the hot variant directly: no
Python frame at all on a repeated launch. Any other shape, no hot variant, or a hot
variant that declines, and it calls the generated function, which decides as above (for
a grid of ints that function does not try the hot variant again; the one for a grid
callable, which the native entry does not front, does).
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import weakref
from typing import TYPE_CHECKING, Any, Callable

from ..errors import CompilationError, TlxcError, clean
from ..frontend.callsite import caller_location
from ..frontend.specialize import spec_of
from ..frontend.tuple_args import flat_values
from ..language.core import constexpr
from .options import KEY_OPTIONS, compile_options

if TYPE_CHECKING:  # pragma: no cover
    from .function import KernelFunction

# the options that choose the variant are part of the key; a launch that names any other
# option (but ``stream``) takes the slow path, which checks it (options.py)
_KEY_OPTIONS = KEY_OPTIONS
_MISSING = object()  # an argument not given (never a value a caller can pass)
_ONE = "equals one"  # the key slot of an int argument equal to 1
_UNSET = object()

# TLXC_INTERPRET, read at every subscription. os.environ.get costs as much as the rest of
# a fast launch (it encodes the key and decodes the value each time); its backing dict,
# kept in step by os.environ[...] = and monkeypatch.setenv, costs one lookup. Where a
# Python has no such dict, the plain way.
_env_data = getattr(os.environ, "_data", None)
if isinstance(_env_data, dict) and hasattr(os.environ, "encodekey") and hasattr(os.environ, "encodevalue"):
    ENV_GET = _env_data.get
    ENV_KEY: Any = os.environ.encodekey("TLXC_INTERPRET")  # type: ignore[attr-defined]
    ENV_OFF = frozenset({None, os.environ.encodevalue(""), os.environ.encodevalue("0")})  # type: ignore[attr-defined]
else:  # pragma: no cover
    ENV_GET, ENV_KEY, ENV_OFF = os.environ.get, "TLXC_INTERPRET", frozenset({None, "", "0"})

_MAX_SUBSCRIPTS = 256  # launchers kept per kernel, by grid (cleared when full)


# -- grids -------------------------------------------------------------------------------------------

def check_grid(grid: Any, loc: Any) -> tuple[int, int, int]:
    """A grid value (not a callable) as three non-negative ints."""
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


def normalize_grid(grid: Any, meta: dict[str, Any], loc: Any) -> tuple[int, int, int]:
    return check_grid(grid(meta) if callable(grid) else grid, loc)


def _grid3(g: Any) -> tuple[int, int, int] | None:
    """What a grid callable returned, for the fast path: three positive ints, None for
    an empty grid (nothing runs), or the slow path's error for a bad one."""
    if type(g) is tuple:
        n = len(g)
        if n == 1:
            (x,) = g
            if type(x) is int and x > 0:
                return (x, 1, 1)
        elif n == 2:
            x, y = g
            if type(x) is int and type(y) is int and x > 0 and y > 0:
                return (x, y, 1)
        elif n == 3:
            x, y, z = g
            if type(x) is int and type(y) is int and type(z) is int and x > 0 and y > 0 and z > 0:
                return g
    try:
        dims = check_grid(g, caller_location())
    except TlxcError as e:
        raise clean(e) from None
    return dims if dims[0] and dims[1] and dims[2] else None


# -- the slow path -----------------------------------------------------------------------------------

# The launch hook of an attached profiler (``tlxc.profiler`` with ``hook="triton"``), or
# empty: an object with ``enter(kernel, grid, bound_args) -> token`` and ``exit(token)``,
# called around each launch. While it is set, ``kernel[grid]`` takes the slow path, which
# is the only one that calls it; the fast path stays free of the check.
LAUNCH_HOOK: list[Any] = []


class Launcher:
    """``kernel[grid]`` on the slow path (the interpreter, a grid that is empty or wrong,
    a kernel without a fast path), and the state that the fast path is bound to: ``g3``
    is the checked grid, None where the grid is a callable run at each launch."""

    __slots__ = ("kernel", "grid", "interpret", "g3")

    def __init__(self, kernel: "KernelFunction", grid: Any, interpret: bool,
                 g3: tuple[int, int, int] | None = None) -> None:
        self.kernel = kernel
        self.grid = grid
        self.interpret = interpret
        self.g3 = g3

    def __repr__(self) -> str:
        return f"<launcher of {self.kernel.__qualname__} on grid {self.grid!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._launch(args, kwargs)
        except TlxcError as e:
            raise clean(e) from None  # the user sees this frame only

    def _launch(self, args: tuple, kwargs: dict[str, Any], key: Any = None, grid: Any = _UNSET) -> Any:
        """Bind, specialize, compile if needed, launch (the full checks and their errors).
        ``grid`` is the grid already run by the fast path (a grid callable runs once per
        launch); ``key``, the fast path's key of this launch, is remembered with the
        variant once it has launched."""
        loc = caller_location()
        try:
            kernel = self.kernel
            values, launch = kernel.bind(args, dict(kwargs), loc)
            dims = normalize_grid(self.grid if grid is _UNSET else grid, dict(values), loc)
            specs, consts = kernel.specialize(values, loc)
            lowered = interpret_lowered(loc) if self.interpret else None
            arch = (lowered or "sm_90a") if self.interpret else gpu_arch(loc)
            options = compile_options({k: v for k, v in launch.items() if k != "stream"}, arch, loc)
            check_clusters(dims, options, loc)
            ck = kernel.get_compiled(specs, consts, options, disk=not self.interpret)
            runtime = [values[p] for p in kernel.runtime_params]
            # the arguments the variant takes: those given None are constants in it, a tuple its leaves
            flat = flat_values(values)
            passed = [flat[p] for p in ck.signature]
            if dims[0] * dims[1] * dims[2] == 0:
                return ck
            hook = LAUNCH_HOOK[0] if LAUNCH_HOOK else None
            token = hook.enter(kernel, dims, values) if hook is not None else None
            if not self.interpret:
                loaded = _loaded(ck)
                loaded(dims, passed, stream=launch.get("stream"))
                if key is not None and hook is None:  # a profiled launch keeps to this path
                    remember(kernel, key, loaded, ck, runtime)
            else:
                from ..interpreter import run_kernel

                run_kernel(ck.lowered().funcs[0] if lowered else ck.func, dims, passed)
            if hook is not None:
                hook.exit(token)
            return ck
        except TlxcError as e:
            raise clean(e) from None


def check_clusters(dims: tuple[int, int, int], options: Any, loc: Any) -> None:
    """A grid of clusters must hold whole clusters (the driver refuses others); checked
    before any compile, for the interpreter too, so that both refuse the same launches."""
    c = options.cluster_dims
    if c is not None and options.num_ctas == 1 and any(g % k for g, k in zip(dims, c)):
        raise CompilationError("TLXC-OPTION-001", f"option ctas_per_cga: the grid {dims} is not a multiple of the "
                               f"cluster shape {c}; the grid counts blocks, so it must hold whole clusters", loc)


def gpu_arch(loc: Any) -> str:
    """The target of the GPU the runtime launches on: the NVIDIA GPU's where there is one,
    else the AMD GPU's (runtime/backend.py)."""
    from ..compiler import TARGETS
    from ..runtime import backend

    arch = backend.gpu_arch()
    if arch not in TARGETS:
        family = "sm_" if arch.startswith("sm_") else "gfx"
        raise CompilationError("TLXC-LAUNCH-003", f"this GPU is {arch}; tlxc generates code for "
                               f"{', '.join(t for t in TARGETS if t.startswith(family))}", loc,
                               None if family == "sm_" else "run the kernel on the CPU with "
                               "kernel.interpret[grid](...), or on a GPU that tlxc targets")
    return arch


def _loaded(ck: Any) -> Any:
    """The runtime kernel of a compiled variant, made once from its binary and its launch
    spec (cluster dims and cooperative launches included)."""
    lk = getattr(ck, "_loaded", None)
    if lk is None:
        from ..runtime import LoadedKernel

        if ck.options.arch.startswith("gfx"):
            binary = ck.asm["hsaco"]
        else:
            binary = ck.asm["cubin"] if ck.asm.get("cubin") is not None or _has(ck, "cubin") else ck.asm["ptx"]
        lk = LoadedKernel.from_spec(binary, ck.launch_spec)
        ck._loaded = lk
    return lk


def _has(ck: Any, key: str) -> bool:
    try:
        ck.asm[key]
        return True
    except KeyError:
        return False


# -- the table of ready variants ---------------------------------------------------------------------

class FastTable(dict):
    """The fast path's table of ready variants, by key, and its hot variant: ``hot[0]``,
    the native guarded launch (``LoadedKernel.guarded_launch``) of the variant that the
    last trusted launch used, or None. The generated code tries it before it computes a
    key; emptying the table forgets it."""

    def __init__(self) -> None:
        super().__init__()
        self.hot: list[Any] = [None]  # one list for the table's life: the generated code holds it
        _TABLES[id(self)] = self

    def clear(self) -> None:
        super().clear()
        self.hot[0] = None


_TABLES: "weakref.WeakValueDictionary[int, FastTable]" = weakref.WeakValueDictionary()


def forget_fast_paths() -> None:
    """Empty every kernel's fast table: a knob that decides variants without being part of
    a launch's key (``knobs.language.default_fp_fusion``) changed, so each next launch
    takes the slow path, which reads it."""
    for table in list(_TABLES.values()):
        table.clear()


def remember(kernel: "KernelFunction", key: tuple, loaded: Any, ck: Any, runtime: list[Any]) -> None:
    """Enter a launched variant in the fast table under the key of the launch, and under
    its speculative key too (see ``make_fast_launch``). The first launch fixes the kinds
    of arguments that the fast path speculates on."""
    if len(ck.signature) != len(runtime):  # None given for some: a launch passes the others only
        loaded = _Passing(loaded, tuple(i for i, p in enumerate(kernel.runtime_params) if p in ck.signature))
    if kernel._fast_kinds is None and not any(v is None for v in runtime):
        # the kinds come from a launch without None, whose argument stands for no kind
        kernel._fast_kinds = tuple(_kind(v) for v in runtime)
        kernel._fast_trusted = _trusted_kinds(runtime, kernel._fast_kinds)
        kernel._fast_fns = make_fast_launch(kernel, kernel._fast_kinds, kernel._fast_trusted)
        kernel._launchers.clear()  # bound to the functions that did not speculate
    keys = [key]
    speculative = kernel._fast_fns[2] if kernel._fast_fns else None
    if key[-1] is False and speculative is not None:
        try:
            keys.append(speculative(*runtime) + key[3 * len(runtime): -1] + (True,))
        except Exception:
            pass  # these arguments are not of the kinds it speculates on
    guards = []
    for qualified in ck.used_globals:
        modname, _, name = qualified.rpartition(".")
        mod = sys.modules.get(modname)
        raw = getattr(mod, name, _MISSING) if mod is not None else _MISSING
        guards.append((modname, mod, name, raw, raw.value if isinstance(raw, constexpr) else _MISSING))
    hot = None
    if keys[-1][-1] is True and kernel._fast_trusted and not guards:
        hot = _guarded_launch(kernel, loaded, ck, keys[-1])
        if hot is not None:
            kernel._fast.hot[0] = hot
    entry = (loaded, ck, tuple(guards), hot)
    for k in keys:
        # the pointer slots of a speculative key hold what spec_of reads only where the type
        # is one that spec_of takes through data_ptr()
        if k[-1] is True and any(kind == "ptr" and not _pointer_type(k[3 * i])
                                 for i, kind in enumerate(kernel._fast_kinds)):
            continue
        kernel._fast[tuple(v.value if isinstance(v, constexpr) else v for v in k)] = entry  # values, not wrappers


class _Passing:
    """The fast table's entry for a variant that some arguments were None for (constants
    in it): its launches pass the other arguments only. It never launches through
    ``launch_trusted``, whose key a None argument never matches."""

    __slots__ = ("loaded", "keep")

    def __init__(self, loaded: Any, keep: tuple[int, ...]) -> None:
        self.loaded = loaded
        self.keep = keep

    def launch(self, grid: Any, args: tuple, stream: Any) -> None:
        self.loaded.launch(grid, [args[i] for i in self.keep], stream)

    @staticmethod
    def launch_trusted(*args: Any) -> int:
        return 1  # not launched: the caller launches through ``launch``


def _guarded_launch(kernel: "KernelFunction", loaded: Any, ck: Any, key: tuple) -> Any:
    """The native guarded launch of a variant (``LoadedKernel.guarded_launch``), whose
    guards check what the speculative ``key`` of its launch holds: per tensor its type,
    ``is_cuda``, dtype and alignment; per int that it is an ``int`` in i32 range and its
    specialization (1, divisible by 16 or not); per float that it is a ``float``; the
    constexprs and options after them by ``==``. None where a slot is of another kind
    (numpy scalars, wide ints, a CPU tensor's key...)."""
    guards: list[tuple] = []
    for i, kind in enumerate(kernel._fast_kinds or ()):
        t, spec, extra = key[3 * i: 3 * i + 3]
        if kind == "ptr" and extra is not None and _pointer_type(t):
            guards.append(("tensor", t, extra, spec))
        elif kind == "int" and t is int and extra is True:
            guards.append(("int", "one" if spec is _ONE else spec))
        elif kind == "float" and t is float:
            guards.append(("float",))
        else:
            return None
    try:
        return loaded.guarded_launch(guards, key[3 * len(guards): -1], ck)
    except Exception:  # noqa: BLE001 - an optimization only: launches take the key's way
        return None


def _trusted_kinds(runtime: list[Any], kinds: tuple[str, ...]) -> bool:
    """Whether the speculative key can check all that ``LoadedKernel.launch`` checks, so
    that a hit launches through ``launch_trusted``: every argument an int, a float, or a
    PyTorch tensor (whose key slots then include ``is_cuda``)."""
    torch = sys.modules.get("torch")
    tensor = getattr(torch, "Tensor", None)
    return all(kind in ("int", "float") or kind == "ptr" and tensor is not None and type(v) is tensor
               for v, kind in zip(runtime, kinds))


def _globals_same(guards: tuple) -> bool:
    """Whether every module global a variant read is still the object it was (then its
    value is the one ``get_compiled`` accepted)."""
    modules = sys.modules
    for modname, mod, name, raw, value in guards:
        if modules.get(modname) is not mod:
            return False
        if mod is not None and getattr(mod, name, _MISSING) is not raw:
            return False
        if value is not _MISSING and raw.value is not value:
            return False
    return True


# Types whose objects pass as pointers through ``data_ptr()`` (torch.Tensor, DeviceArray...):
# the generated key code handles them inline once one has been seen.
_POINTER_TYPES: set[type] = set()
_NOT_POINTERS: tuple[type, ...] = (bool, int, float)


def _pointer_type(t: type) -> bool:
    """Whether ``spec_of`` takes every object of type ``t`` through ``data_ptr()``."""
    import numpy as np

    return hasattr(t, "data_ptr") and not issubclass(t, _NOT_POINTERS + (np.generic,))


def _kind(v: Any) -> str:
    """What the fast path speculates that the argument of a parameter will be, from the
    argument of its first launch."""
    t = type(v)
    ints, floats = _scalar_types()
    if t in ints:
        return "int"
    if t in floats:
        return "float"
    if _pointer_type(t):
        _POINTER_TYPES.add(t)
        return "ptr"
    return "other"


@functools.cache
def _scalar_types() -> tuple[dict[type, type], dict[type, type]]:
    """The int and float types whose key slots the speculative code computes inline (the
    type deciding the rest), looked up by identity -- a subclass goes the general way -- so
    that the inline ``&`` never meets an array (on a GPU tensor it would launch a kernel)."""
    import numpy as np

    ints = [bool, int, np.bool_] + [getattr(np, n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                                               "uint32", "uint64")]
    floats = [float] + [getattr(np, n) for n in ("float16", "float32", "float64")]
    return {t: t for t in ints}, {t: t for t in floats}


def _other_key(a: Any, specialize: bool) -> tuple[Any, Any]:
    """The key slots of an argument that the generated code has no inline case for."""
    if a is None:  # a constant of the variant (KernelFunction.specialize)
        return None, None
    t = type(a)
    if t not in _POINTER_TYPES and _pointer_type(t):
        _POINTER_TYPES.add(t)
    if t in _POINTER_TYPES:
        return (a.data_ptr() & 15 == 0) if specialize else None, a.dtype
    return spec_of(a, specialize), None


# -- the generated launch function -------------------------------------------------------------------

def subscript(kernel: "KernelFunction", grid: Any) -> Any:
    """``kernel[grid]`` when the kernel has no launcher for this grid yet: a fast launch
    function bound to the grid (kept for grids of plain ints), or the slow path."""
    fast = kernel._fast_launch
    if fast is None:
        return Launcher(kernel, grid, False)
    if callable(grid):  # not kept: a lambda made per launch may hold the caller's tensors
        return functools.partial(fast[1], grid)
    try:
        g3 = check_grid(grid, None)
    except TlxcError:
        return Launcher(kernel, grid, False)  # the launch raises, pointing at the caller's line
    if not (g3[0] and g3[1] and g3[2]):
        return Launcher(kernel, grid, False)  # empty: compiles, runs nothing
    launcher = functools.partial(fast[3] or fast[0], Launcher(kernel, grid, False, g3))
    if type(grid) is int or type(grid) is tuple and all(type(g) is int for g in grid):
        if len(kernel._launchers) >= _MAX_SUBSCRIPTS:
            kernel._launchers.clear()
        kernel._launchers[grid] = launcher
    return launcher


def make_fast_launch(kernel: "KernelFunction", kinds: tuple[str, ...] | None = None, trusted: bool = False,
                     ) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any] | None,
                                Callable[..., Any] | None] | None:
    """The fast launch functions of ``kernel`` (see the module docstring): one bound to a
    ``Launcher`` with a checked grid, one bound to a grid callable, the function that
    gives the speculative key slots of runtime arguments (None without ``kinds``), and
    with ``trusted`` the native entry (``native_launch.make_dispatcher``) that tries the
    hot variant before calling the first one (else None). None
    where the kernel's signature is one they do not mirror (``*args``, names starting with
    ``__``, which the generated code uses).

    ``kinds`` (``ptr``, ``int``, ``float``, ``other`` per runtime parameter, from the first
    launch) makes the key one expression that assumes them -- no branches, a third less
    time -- tagged True; where the assumption fails (an exception), the general code
    computes the key, tagged False. The int and float slots look the type up among the
    scalar types, so that an array is never computed with; a pointer slot holds what
    ``spec_of`` reads only if the type is one it takes through ``data_ptr()``, which
    ``remember`` checks before a speculative key enters the table."""
    import inspect

    sig = kernel.signature
    params = kernel.params
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()) or \
            any(p.startswith("__") for p in params):
        return None
    runtime = kernel.runtime_params
    last = max((params.index(p) for p in runtime), default=-1)
    positional, keyword = params[: last + 1], params[last + 1:]  # keyword: the trailing constexprs
    opts = [o for o in (*_KEY_OPTIONS, "stream") if o not in params]
    defaults = {n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    required_pos = [n for n in positional if n not in defaults]
    required_kw = [n for n in keyword if n not in defaults]

    def slow(launcher: Launcher, given: tuple, more: tuple, kw_values: tuple, opt_values: tuple,
             extra: dict[str, Any]) -> Any:
        """The slow path with the call as it was made (the arguments given by position
        are a prefix of ``given`` and then ``more``)."""
        args = []
        for v in given:
            if v is _MISSING:
                break
            args.append(v)
        kwargs = {n: v for n, v in zip(keyword, kw_values) if v is not _MISSING}
        kwargs.update((o, v) for o, v in zip(opts, opt_values) if v is not _MISSING)
        kwargs.update(extra)
        return launcher._launch((*args, *more), kwargs)

    ns: dict[str, Any] = {
        "__M": _MISSING, "__fast_get": kernel._fast.get, "__PTR": _POINTER_TYPES, "__big": spec_of,
        "__other": _other_key, "__same": _globals_same, "__grid3": _grid3, "__slow": slow,
        "__TlxcError": TlxcError, "__clean": clean, "__LF": lambda fn: Launcher(kernel, fn, False),
        # builtins under names no parameter can take (a kernel may have one called ``type``)
        "__type": type, "__len": len, "__int": int, "__float": float, "__tuple": tuple, "__Exception": Exception,
        "__ONE": _ONE, "__HOT": kernel._fast.hot,
        "__INT": _scalar_types()[0], "__FLOAT": _scalar_types()[1], "__wide": lambda v: spec_of(v, False).type,
        "__opts": lambda *v: {o: x for o, x in zip(opts, v) if x is not _MISSING},
        "__POS": frozenset(positional),
    }
    ns.update((f"__D_{n}", d) for n, d in defaults.items())

    def tup(names: list[str]) -> str:
        return "(" + "".join(f"{n}, " for n in names) + ")"

    given, kw_values, opt_values = tup(positional), tup(keyword), tup(opts)
    call = f"{given}, __more, {kw_values}, {opt_values}, __kw"
    slow_kwargs = f"{{{''.join(f'{n!r}: {n}, ' for n in keyword)}**__opts{opt_values}}}"
    meta = "{" + ", ".join(f"{n!r}: {n}" for n in params) + "}"
    head = ["__L"] + [f"{n}=__M" for n in positional] + ["/", "*__more"] + [f"{n}=__M" for n in keyword]
    head += [f"{o}=__M" for o in opts if o != "stream"] + (["stream=None"] if "stream" in opts else []) + ["**__kw"]
    # the key: see the module docstring
    key_code, slots = [], []
    for i, n in enumerate(runtime):
        spec = n not in kernel.do_not_specialize
        key_code += [f"__t{i} = __type({n})",
                     f"if __t{i} in __PTR:",
                     f"    __k{i} = {n}.data_ptr() & 15 == 0" if spec else f"    __k{i} = None",
                     f"    __d{i} = {n}.dtype",
                     f"elif __t{i} is __int:",
                     f"    __k{i} = {f'(__ONE if {n} == 1 else {n} & 15 == 0)' if spec else 'None'} "
                     f"if -2147483648 <= {n} <= 2147483647 "
                     f"else __big({n}, {spec})",
                     f"    __d{i} = None",
                     f"elif __t{i} is __float:",
                     f"    __k{i} = __d{i} = None",
                     "else:",
                     f"    __k{i}, __d{i} = __other({n}, {spec})"]
        slots += [f"__t{i}", f"__k{i}", f"__d{i}"]
    rest = [n for n in params if n in kernel.constexpr_params] + [o for o in _KEY_OPTIONS if o in opts]
    key_code.append(f"__key = {tup(slots + rest + ['False'])}")
    if kinds is not None:
        spec_slots = []
        trusted_values = []  # launch_trusted's arguments after (grid, stream)
        for i, (n, kind) in enumerate(zip(runtime, kinds)):
            flag = n not in kernel.do_not_specialize
            trusted_values.append(f"__p{i}" if kind == "ptr" else n)
            if kind == "ptr" and trusted:  # the address kept for launch_trusted; a CPU tensor misses
                ptr = f"(__p{i} := {n}.data_ptr())"
                spec_slots.append(f"__type({n}), {f'{ptr} & 15 == 0' if flag else f'None if {ptr} is __M else None'}, "
                                  f"{n}.dtype if {n}.is_cuda else None")
            elif kind == "ptr":
                spec_slots.append(f"__type({n}), {f'{n}.data_ptr() & 15 == 0' if flag else 'None'}, {n}.dtype")
            elif kind == "int":
                one = f"(__ONE if {n} == 1 and __type({n}) is __int else {n} & 15 == 0)"
                spec_slots.append(f"__INT[__type({n})], {one if flag else 'None'}, "
                                  f"-2147483648 <= {n} <= 2147483647 or __wide({n})")
            elif kind == "float":
                spec_slots.append(f"__FLOAT[__type({n})], None, None")
            else:
                spec_slots.append(f"__type({n}), *__other({n}, {flag})")
        key_code = ["try:", f"    __key = {tup(spec_slots + rest + ['True'])}"] + \
            (["    __tr = True"] if trusted else []) + ["except __Exception:"] + \
            (["    __tr = False"] if trusted else []) + ["    " + ln for ln in key_code]
        speculative = [f"def __speculative({', '.join(runtime)}):", f"    return {tup(spec_slots)}", ""]
    else:
        speculative = []
        trusted = False
    key_code.append("__e = __fast_get(__key)")
    stream_arg = "stream" if "stream" in opts else "None"
    # a hit of a speculative key over tensors and scalars: its key checked all that
    # LoadedKernel.launch checks, so launch_trusted packs and launches (0: done; anything
    # else: nothing ran, and launch explains or recovers)
    direct = [f"if __tr and not __e[0].launch_trusted(__g, {stream_arg}, {', '.join(trusted_values)}):",
              "    if __e[3] is not None:",
              "        __HOT[0] = __e[3]",  # the variant to try first next time
              "    return __e[1]"] if trusted else []
    # the hot variant's native guarded launch, tried before any key: its answer is the
    # compiled kernel where it launched, None (or a CUresult) where the key's way must decide
    hot_try = ["__h = __HOT[0]", "if __h is not None:",
               f"    __r = __h(__g, {stream_arg}, {''.join(f'{n}, ' for n in runtime + rest)})",
               "    if __r is not None and __type(__r) is not __int:", "        return __r"] if trusted else []

    def emit(suffix: str, launcher: str, grid: list[str], hot: bool) -> list[str]:
        """``__launch<suffix>`` and ``__rebind<suffix>``; ``launcher``: the expression of the
        slow path's Launcher; ``grid``: the statements that set ``__g``; ``hot``: whether
        it tries the hot variant before the key."""
        to_slow = f"return __slow({launcher}, {call})"
        # -- __launch: the call shapes Python binds (the parameters up to the last runtime one
        # by position: positional-only, so that no call fails to bind; the trailing
        # constexprs by position or keyword, options by keyword)
        body = ["if __more or __kw:"]
        if keyword:  # all trailing constexprs by position: bound here; the other shapes in rebind
            body += [f"    if __kw or __len(__more) != {len(keyword)} or "
                     + " or ".join(f"{n} is not __M" for n in keyword) + ":",
                     f"        return __rebind{suffix}(__L, {call})",
                     f"    {', '.join(keyword)}, = __more"]
        else:
            body.append(f"    return __rebind{suffix}(__L, {call})")
        missing = required_pos[-1:] + required_kw  # given by position, a prefix: its last required one is enough
        if missing:
            body += [f"if {' or '.join(f'{n} is __M' for n in missing)}:", f"    {to_slow}"]
        for n in params:
            if n in defaults:
                body += [f"if {n} is __M:", f"    {n} = __D_{n}"]
        body += grid
        body += hot_try if hot else []
        body += ["try:"] + ["    " + ln for ln in key_code]
        body += ["except __Exception:",  # an argument the slow path must look at (and maybe refuse)
                 "    __e = __key = None",
                 "if __e is None or __e[2] and not __same(__e[2]):",
                 f"    return {launcher}._launch({given}, {slow_kwargs}, __key, __g)"] + direct
        body += [f"__e[0].launch(__g, {tup(runtime)}, {stream_arg})", "return __e[1]"]
        # errors reach the user with this one frame of tlxc (the slow path's are cleaned here again)
        src = [f"def __launch{suffix}({', '.join(head)}):", "    try:"] + ["        " + ln for ln in body]
        src += ["    except __TlxcError as __e:", "        raise __clean(__e) from None", ""]

        # -- __rebind: the other shapes -- keywords for positional parameters, some trailing
        # constexprs by position -- bound as KernelFunction.bind binds them and launched by
        # __launch; a wrong call (an argument missing, given twice or unknown, too many) and
        # an option outside the key go to the slow path, which raises or checks the option
        src.append(f"def __rebind{suffix}(__L, __given, __more, __kwv, __optv, __kw):")
        to_slow = f"return __slow({launcher}, __given, __more, __kwv, __optv, __kw)"  # the call as made
        for names, packed in ((positional, "__given"), (keyword, "__kwv"), (opts, "__optv")):
            if names:
                src.append(f"    {', '.join(names)}, = {packed}")
        src += ["    if __more:", f"        if __len(__more) > {len(keyword)}:", f"            {to_slow}"]
        ind = "        "
        for i, n in enumerate(keyword):
            src += [f"{ind}if {n} is not __M:", f"{ind}    {to_slow}", f"{ind}{n} = __more[{i}]"]
            if i + 1 < len(keyword):
                src.append(f"{ind}if __len(__more) > {i + 1}:")
                ind += "    "
        src += ["    if __kw:", "        __n = __len(__kw)"]
        for n in positional:
            src += [f"        if {n!r} in __kw:", f"            if {n} is not __M:", f"                {to_slow}",
                    f"            {n} = __kw[{n!r}]", "            __n -= 1"]
        src += ["        if __n:", "            for __k in __kw:",
                "                if __k not in __POS:", f"                    {to_slow}"]
        if required_pos + required_kw:
            src += [f"    if {' or '.join(f'{n} is __M' for n in required_pos + required_kw)}:", f"        {to_slow}"]
        src += [f"    return __launch{suffix}(__L, {given[1:-1]}{''.join(f'{n}={n}, ' for n in keyword + opts)})", ""]
        return src

    text = "\n".join(
        # grids of ints: the native entry tries the hot variant first, so their function does not
        speculative + emit("", "__L", ["__g = __L.g3"], hot=False)
        + emit("_fn", "__LF(__L)", [f"__g = __L({meta})",  # (n,) with n > 0 passes as it is
                                    "if __type(__g) is not __tuple or __len(__g) != 1 or __type(__g[0]) is not "
                                    "__int or __g[0] <= 0:",
                                    "    __g = __grid3(__g)",
                                    "    if __g is None:",
                                    f"        return __LF(__L)._launch({given}, {slow_kwargs}, None, (0,))"],
               hot=True))
    # a file name inside the package, so that caller_location() skips these frames too
    filename = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            f"<tlxc launch of {kernel.__module__}.{kernel.__qualname__} at 0x{id(kernel):x}>")
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), ns)
    dispatch = None
    if trusted:  # the native entry: the hot variant first, for the usual call shape
        from ..runtime.native_launch import NO_DEFAULT as _NO_DEFAULT

        extras = [("pos", positional.index(n)) if n in positional else ("kw", keyword.index(n)) if n in keyword
                  else ("obj", _MISSING) for n in rest]
        dispatch = _dispatcher(ns["__launch"], kernel._fast.hot, len(positional),
                               [positional.index(n) for n in runtime], keyword,
                               [defaults.get(n, _NO_DEFAULT) for n in keyword], extras)
    return ns["__launch"], ns["__launch_fn"], ns.get("__speculative"), dispatch


def _dispatcher(*args: Any) -> Any:
    """``native_launch.make_dispatcher(*args)``, or None where it cannot be made."""
    from ..runtime.native_launch import make_dispatcher

    try:
        return make_dispatcher(*args)
    except Exception:  # noqa: BLE001 - an optimization only: kernel[grid] calls the generated function
        return None


def interpret_lowered(loc: Any) -> str | None:
    """``TLXC_INTERPRET_LOWERED=ARCH``: interpreted launches run the IR that ``ARCH``'s
    pipeline leaves (rings, wgmma/MFMA ops, layouts and their conversions, shared-memory
    offsets, barriers) instead of the tile IR, so that a test suite's interpreter numbers
    also check the target's passes. None when unset; an unknown target is refused."""
    arch = os.environ.get("TLXC_INTERPRET_LOWERED", "")
    if not arch:
        return None
    from ..compiler import TARGETS

    if arch not in TARGETS:
        raise CompilationError("TLXC-LAUNCH-001", f"TLXC_INTERPRET_LOWERED={arch!r} names no target "
                               f"(one of {', '.join(TARGETS)})", loc)
    return arch
