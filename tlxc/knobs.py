"""``tlxc.knobs``: the settings of Triton's ``triton.knobs`` that TLX and Triton programs
set, so that they run after renaming ``triton`` to ``tlxc``. Each knob is honoured or
refused: setting one that tlxc cannot honour to anything but its default raises an error
naming it. ``with tlxc.knobs.compilation.scope(): ...`` restores a group's knobs on exit.

Honoured: ``cache.dir`` (the on-disk cache's folder: ``TLXC_CACHE_DIR``),
``compilation.always_compile`` (launches never read compiled variants from disk; they
still store them), ``runtime.interpret`` (``TLXC_INTERPRET``), ``autotuning.print``
(``TLXC_PRINT_AUTOTUNING``), ``language.default_fp_fusion`` (a launch's
``enable_fp_fusion`` when it gives none), ``language.fp32_default`` (an fp32 ``tl.dot``'s
``input_precision`` when it gives none). Refused unless default: the ``nvidia`` group's compiler
features (automatic warp specialization, automatic TMA...), ``runtime.override_arch``
(give ``arch=`` to ``kernel.compile`` or ``kernel.warmup`` instead) and
``compilation.instrumentation_mode``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

from .errors import CompilationError

_ENV_FLAG = ("1", "true", "yes", "on")


class _Group:
    """One group of knobs. ``_env``: knobs kept in an environment variable (read where
    the setting is used); ``_refused``: knobs accepted only at their default, with why."""

    _name = ""
    _env: dict[str, str] = {}
    _flags: tuple[str, ...] = ()  # env knobs whose value is a bool
    _refused: dict[str, tuple[Any, str]] = {}
    _defaults: dict[str, Any] = {}  # knobs kept here, with their defaults

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(self._defaults))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._env:
            raw = os.environ.get(self._env[name])
            if name in self._flags:
                return raw is not None and raw.lower() in _ENV_FLAG
            return raw
        if name in self._refused:
            return self._refused[name][0]
        if name in self._values:
            return self._values[name]
        raise AttributeError(f"tlxc.knobs.{self._name} has no knob '{name}' (tlxc has {', '.join(self._known())})")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._env:
            var = self._env[name]
            if value is None or (name in self._flags and not value):
                os.environ.pop(var, None)
            else:
                os.environ[var] = "1" if name in self._flags else os.fspath(value)
            return
        if name in self._refused:
            default, why = self._refused[name]
            if value != default:
                raise CompilationError("TLXC-OPTION-001", f"knob {self._name}.{name}={value!r} is not supported by "
                                       f"tlxc: {why}", None, f"leave it at {default!r}")
            return
        if name in self._values:
            changed = self._values[name] != value
            self._values[name] = value
            if changed:
                self._changed()
            return
        raise AttributeError(f"tlxc.knobs.{self._name} has no knob '{name}' (tlxc has {', '.join(self._known())})")

    def _known(self) -> list[str]:
        return sorted({*self._env, *self._refused, *self._values})

    @contextlib.contextmanager
    def scope(self) -> Iterator["_Group"]:
        """Restore this group's knobs (and their environment variables) on exit."""
        saved_env = {var: os.environ.get(var) for var in self._env.values()}
        saved = dict(self._values)
        try:
            yield self
        finally:
            for var, v in saved_env.items():
                if v is None:
                    os.environ.pop(var, None)
                else:
                    os.environ[var] = v
            changed = self._values != saved
            self._values.clear()
            self._values.update(saved)
            if changed:
                self._changed()

    def _changed(self) -> None:
        """Called when one of the knobs kept here changed."""


_NO_AUTO = "tlxc has no automatic warp specialization or compiler-chosen TMA; write them with tlx"


class _Cache(_Group):
    _name = "cache"
    _env = {"dir": "TLXC_CACHE_DIR"}


class _Compilation(_Group):
    _name = "compilation"
    _env = {"always_compile": "TLXC_ALWAYS_COMPILE"}
    _flags = ("always_compile",)
    _refused = {"instrumentation_mode": ("", "tlxc has no instrumentation passes")}


class _Runtime(_Group):
    _name = "runtime"
    _env = {"interpret": "TLXC_INTERPRET"}
    _flags = ("interpret",)
    _refused = {"override_arch": (None, "give arch= to kernel.compile(...) or kernel.warmup(...) instead")}


class _Autotuning(_Group):
    _name = "autotuning"
    _env = {"print": "TLXC_PRINT_AUTOTUNING"}
    _flags = ("print",)


class _Language(_Group):
    _name = "language"
    # a launch's enable_fp_fusion when it gives none; an fp32 tl.dot's input_precision when
    # it gives none (None: "tf32", or "ieee" with allow_tf32=False)
    _defaults: dict[str, Any] = {"default_fp_fusion": True, "fp32_default": None}

    def _changed(self) -> None:
        # the fast paths' keys hold the launch's options, not this default
        from .kernels.launch import forget_fast_paths

        forget_fast_paths()


class _Nvidia(_Group):
    _name = "nvidia"
    _refused = {name: (default, _NO_AUTO) for name, default in (
        ("use_meta_ws", False), ("use_meta_partition", False), ("auto_tma", False), ("auto_tma_device", False),
        ("disable_wsbarrier_reorder", False), ("ws_mem_plan_topk", None), ("ws_mem_plan_topk_dump", None),
        ("ws_mem_plan_pick", None))}


cache = _Cache()
compilation = _Compilation()
runtime = _Runtime()
autotuning = _Autotuning()
language = _Language()
nvidia = _Nvidia()


def always_compile() -> bool:
    """Whether launches must compile rather than read variants from disk."""
    return compilation.always_compile
