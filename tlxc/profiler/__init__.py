"""``tlxc.profiler``: the part of Triton's proton profiler (``triton.profiler``) that
Triton's tutorials use, so that they run after renaming ``triton`` to ``tlxc``.

``start(name, hook="triton")`` opens a session (its id is returned) that records from
then on; ``activate``/``deactivate`` turn recording on and off for one session or for all;
``finalize`` writes ``<name>.hatchet`` and closes the session. ``with scope(name,
metrics)`` (also a decorator; ``enter_scope``/``exit_scope`` as calls) opens a node under
the current one, times the work inside it and adds the metrics to it. With
``hook="triton"`` (or ``"tlxc"``) every launch through ``kernel[grid]`` is a node under the current scope,
named by the kernel's ``launch_metadata(grid, kernel, args)`` hook (``"name"``; the other
keys, e.g. ``flops16`` and ``bytes``, are its metrics) or by the kernel. How times are
measured and the file's form are in ``session.py``; ``viewer.py`` reads the file.

Beyond proton: ``start(..., timer=...)`` takes the clock (``session.Timer``) to time with,
for tests. What proton has and this module does not (other contexts, data, backends,
modes and hooks, states, ``cpu_timed_scope``, instrumentation) raises
``TLXC-PROFILER-001`` naming it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..errors import CompilationError
from .session import Session, Timer, default_timer

DEFAULT_PROFILE_NAME = "proton"

_sessions: dict[int, Session] = {}
_next_id = 0
_stack: list[str] = []  # the names of the open scopes, outermost first
# per open scope: the sessions that recorded its entry, and their start marks
_marks: list[list[tuple[Session, Any]]] = []


def _refuse(what: str, help: str = "leave it at its default") -> CompilationError:
    return CompilationError("TLXC-PROFILER-001", f"{what} is not implemented by tlxc.profiler", None, help)


def _misuse(message: str) -> CompilationError:
    return CompilationError("TLXC-PROFILER-002", message)


# -- sessions -------------------------------------------------------------------------------------------

def start(name: str | None = None, *, context: str | None = "shadow", data: str | None = "tree",
          backend: str | None = None, mode: Any = None, hook: str | None = None,
          timer: Timer | None = None) -> int:
    """Open a session that records from now on; returns its id."""
    global _next_id
    if context != "shadow":
        raise _refuse(f"start(context={context!r})", "tlxc.profiler keeps scopes as the program opens them "
                      "(proton's \"shadow\" context)")
    if data != "tree":
        raise _refuse(f"start(data={data!r})", "tlxc.profiler records a tree (data=\"tree\")")
    if backend is not None:
        raise _refuse(f"start(backend={backend!r})", "leave backend out: tlxc.profiler times with CUDA events "
                      "or the host clock")
    if mode is not None:
        raise _refuse(f"start(mode={mode!r})", "leave mode out: tlxc.profiler has no instrumentation modes")
    if hook == "tlxc":  # a program renamed from triton to tlxc wholesale
        hook = "triton"
    if hook not in (None, "triton"):
        raise _refuse(f"start(hook={hook!r})", "hook=\"triton\" (kernel launches) is the one hook")
    sid = _next_id
    _next_id += 1
    _sessions[sid] = Session(sid, name or DEFAULT_PROFILE_NAME, hook, timer or default_timer())
    _update_hook()
    return sid


def _chosen(session: int | None, what: str) -> list[Session]:
    if session is None:
        return list(_sessions.values())
    if session not in _sessions:
        raise _misuse(f"{what}({session}): no session {session} is open (open ones: {sorted(_sessions)})")
    return [_sessions[session]]


def activate(session: int | None = None) -> None:
    """Record again in ``session`` (every open session if None)."""
    for s in _chosen(session, "activate"):
        s.active = True
    _update_hook()


def deactivate(session: int | None = None, flushing: bool = False) -> None:
    """Stop recording in ``session`` (every open session if None) until it is activated."""
    if flushing:
        raise _refuse("deactivate(flushing=True)", "leave flushing out: a session's times are read at finalize")
    for s in _chosen(session, "deactivate"):
        s.active = False
    _update_hook()


def finalize(session: int | None = None, output_format: str | None = "") -> None:
    """Write ``session``'s file (every open session's if None) and close it."""
    if output_format not in ("", None, "hatchet"):
        raise _refuse(f"finalize(output_format={output_format!r})", "tlxc.profiler writes hatchet json")
    for s in _chosen(session, "finalize"):
        s.write()
        del _sessions[s.id]
    _update_hook()


def profile(func: Callable[..., Any] | None = None, *, name: str | None = None, context: str | None = "shadow",
            data: str | None = "tree", backend: str | None = None, mode: Any = None,
            hook: str | None = None) -> Any:
    """Decorator: a session around each call of ``func``, finalized when it returns."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            sid = start(name or f.__name__, context=context, data=data, backend=backend, mode=mode, hook=hook)
            try:
                return f(*args, **kwargs)
            finally:
                finalize(sid)

        return run

    return wrap(func) if func is not None else wrap


# -- scopes ---------------------------------------------------------------------------------------------

def enter_scope(name: str, *, metrics: dict[str, Any] | None = None) -> None:
    """Open the scope ``name`` under the current one in every recording session."""
    _stack.append(name)
    recording = [s for s in _sessions.values() if s.active]
    for s in recording:
        node = s.node(_stack, "function")
        node.count += 1
        if metrics:
            node.add_metrics(metrics)
    _marks.append([(s, s.timer.mark()) for s in recording])


def exit_scope(name: str | None = None, *, metrics: dict[str, Any] | None = None) -> None:
    """Close the current scope (which must be ``name`` when given)."""
    if not _stack:
        raise _misuse(f"exit_scope({name!r}) with no scope open")
    if name is not None and _stack[-1] != name:
        raise _misuse(f"exit_scope({name!r}) while the scope open is {_stack[-1]!r}")
    for s, start_mark in _marks.pop():
        if s.id in _sessions:  # a session finalized inside the scope has no place for its time
            node = s.node(_stack, "function")
            s.pending.append((node, start_mark, s.timer.mark()))
            if metrics:
                node.add_metrics(metrics)
    _stack.pop()


class scope:
    """``with scope(name, metrics): ...`` or ``@scope(name)``: a timed node with metrics."""

    def __init__(self, name: str, metrics: dict[str, Any] | None = None) -> None:
        self.name = name
        self.metrics = metrics

    def __enter__(self) -> scope:
        enter_scope(self.name, metrics=self.metrics)
        return self

    def __exit__(self, *exc: Any) -> None:
        exit_scope(self.name)

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return run


# -- kernel launches (hook="triton") ------------------------------------------------------------------

class _LaunchMetadata:
    """What a ``launch_metadata`` hook gets as ``kernel``: Triton passes the compiled
    kernel's metadata, of which the tutorials read ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name


class _KernelHook:
    """The object ``tlxc.kernels.launch`` calls around each launch while a session with
    ``hook="triton"`` records."""

    def enter(self, kernel: Any, grid: tuple[int, int, int], args: dict[str, Any]) -> Any:
        recording = [s for s in _sessions.values() if s.active and s.hook == "triton"]
        if not recording:
            return None
        name = getattr(kernel, "__name__", str(kernel))
        metrics: dict[str, Any] = {}
        meta_fn = getattr(kernel, "launch_metadata", None)
        if meta_fn is not None:
            metrics = dict(meta_fn(grid, _LaunchMetadata(name), dict(args)) or {})
            name = str(metrics.pop("name", name))
        return name, metrics, [(s, s.timer.mark()) for s in recording]

    def exit(self, token: Any) -> None:
        if token is None:
            return
        name, metrics, marks = token
        for s, start_mark in marks:
            if s.id in _sessions:
                node = s.node([*_stack, name], "function")
                node.count += 1
                node.add_metrics(metrics)
                s.pending.append((node, start_mark, s.timer.mark()))


_HOOK = _KernelHook()


def _update_hook() -> None:
    """Attach the launch hook while a session with ``hook="triton"`` records, so that
    launches keep their fast path otherwise."""
    from ..kernels import launch

    wanted = any(s.active and s.hook == "triton" for s in _sessions.values())
    launch.LAUNCH_HOOK[:] = [_HOOK] if wanted else []


# -- what proton has and tlxc.profiler does not ---------------------------------------------------------

_NOT_IMPLEMENTED = {
    "cpu_timed_scope": "scopes time GPU work (or, in the interpreter, the host clock); use scope",
    "state": "proton's states (a name attached to the kernels launched under it) are not kept",
    "enter_state": "proton's states are not kept",
    "exit_state": "proton's states are not kept",
    "metadata_state": "proton's states are not kept",
    "context": "scopes are kept as the program opens them; there is no context module",
    "data": "a session's data is written at finalize; there is no data module to query it",
    "mode": "there are no instrumentation modes",
    "specs": "there are no device peak tables (the viewer's util metric)",
    "hooks": "hook=\"triton\" is the one hook",
    "language": "there is no in-kernel instrumentation (proton.language)",
    "metric": "there are no device-side metrics",
}


def __getattr__(name: str) -> Any:
    why = _NOT_IMPLEMENTED.get(name)
    if why is not None:
        raise _refuse(f"proton's {name!r}", why)
    raise AttributeError(f"module 'tlxc.profiler' has no attribute {name!r}")


__all__ = ["DEFAULT_PROFILE_NAME", "activate", "deactivate", "enter_scope", "exit_scope", "finalize", "profile",
           "scope", "start"]
