"""``autotune(..., cache_results=True)``: the config chosen per tuning key, kept on disk
(in runtime/cache.py's ``KernelCache``, beside the compiled variants) so that another
process launches it without timing the configs again, as Triton's option does.

An entry is keyed by the kernel's source (disk.py's ``source_hash``), the tuning key, the
configs that were timed (their text) and the GPU (its name and target): timings on one
GPU say nothing about another. It holds the index of the chosen config and the timings.
"""

from __future__ import annotations

from typing import Any, Sequence

FORMAT = "tlxc.autotune/1"


def results_key(kernel: Any, tuning_key: tuple, configs: Sequence[Any]) -> str | None:
    """The entry's key, or None where the kernel's source or the tuning key has no text
    that is the same in every process (the choice is then not kept)."""
    from .. import __version__
    from ..runtime import driver
    from ..runtime.cache import KernelCache
    from .disk import _stable, source_hash

    src = source_hash(kernel)
    texts = [_stable(v) for v in tuning_key]
    if src is None or None in texts:
        return None
    try:
        dev = driver.device()
        gpu = f"{dev.name} {dev.arch}"
    except Exception:  # noqa: BLE001 - an AMD GPU or none: the target names it
        from ..runtime import backend

        gpu = backend.gpu_arch()
    return KernelCache.key(FORMAT, __version__, f"{kernel.__module__}.{kernel.__qualname__}", src, texts,
                           [str(c) for c in configs], gpu)


def load(key: str, configs: Sequence[Any]) -> Any:
    """The config stored under ``key`` (one of ``configs``), or None."""
    from ..runtime.cache import KernelCache

    try:
        entry = KernelCache().get(key)
    except (OSError, ValueError):
        return None
    if entry is None or entry.metadata.get("format") != FORMAT:
        return None
    i = entry.metadata.get("best")
    if not isinstance(i, int) or not 0 <= i < len(configs) or entry.metadata.get("configs") != [str(c) for c in
                                                                                                 configs]:
        return None
    return configs[i]


def store(key: str, configs: Sequence[Any], best: Any, timings: dict[Any, Any]) -> None:
    from ..runtime.cache import KernelCache

    meta = {"format": FORMAT, "configs": [str(c) for c in configs], "best": list(configs).index(best),
            "timings": [list(timings[c]) if c in timings else None for c in configs]}
    try:
        KernelCache().put(key, meta)
    except (OSError, TypeError, ValueError):
        pass  # a cache that cannot be written only costs the next process a tuning
