"""The on-disk cache of compiled variants, shared by processes: a second process that
launches the same kernel on the same arguments loads the binary instead of compiling.

The key (``variant_key``) hashes what decides the code before anything is compiled: the
tlxc version and the files of the compiler itself (name, size and modification time of
each of its ``.py`` files: an edited compiler, as in an editable install, misses instead
of bringing back code it no longer makes), the kernel's source text with its file and first line (the code's line
information points there), the runtime arguments' specializations, the constexpr values,
the compile options (the target among them). What a compile discovers is checked when an
entry is read (``load``): every kernel function it inlined, at any depth, and every
constexpr_function it called must still have the source it had (a changed callee is a
miss), and every module global it read the value it had. Entries live in
``runtime/cache.py``'s ``KernelCache`` (``TLXC_CACHE_DIR``, else ``~/.cache/tlxc``),
which checks each blob's SHA-256: a torn or corrupt entry is a miss, and the variant is
compiled and stored again.

A variant read from disk has no IR module until something asks for it: its printed IR is
stored with it and parsed on demand (the interpreter never reads from disk).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from ..compiler import CompiledKernel
from ..frontend.function import KernelDef
from ..language.constexpr_function import ConstexprFunction
from ..language.core import constexpr

FORMAT = "tlxc.variant/1"
# the outputs stored with a variant, per target family
_NVIDIA = ("ir", "ptx", "cubin")
_AMD = ("ir", "llir", "amdgcn", "hsaco")
_MISSING = object()


def source_hash(fn: KernelDef | ConstexprFunction) -> str | None:
    """A hash of a kernel function's (or a constexpr_function's) source text, file and
    first line; None where the source cannot be read (such a kernel is never cached on
    disk)."""
    try:
        lines, start = inspect.getsourcelines(fn.fn)
        file = inspect.getsourcefile(fn.fn) or inspect.getfile(fn.fn)
    except (OSError, TypeError):
        return None
    text = getattr(fn, "_src", None) or "".join(lines)  # the rewritten source (_unsafe_update_src) wins
    return hashlib.sha256(f"{file}\n{start}\n{text}".encode()).hexdigest()


def _stable(value: Any) -> str | None:
    """A text that stands for ``value`` in every process, or None where its ``repr`` names
    an address (an object without a meaningful repr) and so cannot be compared."""
    value = value.value if isinstance(value, constexpr) else value
    if isinstance(value, KernelDef):  # a kernel passed as a constexpr: its source decides
        h = source_hash(value)
        return None if h is None else f"kernel {value.__module__}.{value.__qualname__} {h}"
    text = repr(value)
    return None if " at 0x" in text else f"{type(value).__module__}.{type(value).__qualname__}:{text}"


def variant_key(kernel: KernelDef, specs: dict[str, Any], consts: dict[str, Any], options: Any) -> str | None:
    """The cache key of a variant (see the module docstring), or None where one of its
    inputs has no stable text (the variant is then compiled in each process)."""
    from .. import __version__
    from ..runtime.cache import KernelCache

    src = source_hash(kernel)
    texts = {k: _stable(v) for k, v in consts.items()}
    if src is None or None in texts.values():
        return None
    sig = [(k, str(v), bool(v.equals_one)) for k, v in specs.items()]
    return KernelCache.key(FORMAT, __version__, compiler_stamp(), f"{kernel.__module__}.{kernel.__qualname__}", src,
                           sig, sorted(texts.items()), repr(options))


@functools.lru_cache(maxsize=1)
def compiler_stamp() -> str:
    """A hash of the compiler's own files (relative name, size, modification time), taken
    once per process: a few hundred ``stat`` calls."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        st = f.stat()
        h.update(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _cache() -> Any:
    from ..runtime.cache import KernelCache

    return KernelCache()  # TLXC_CACHE_DIR, read at each use: a test or a user may change it


def _resolve(module: str, qualname: str) -> Any:
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None) if obj is not None else None
    return obj


def _global_value(qualified: str) -> Any:
    module, _, name = qualified.rpartition(".")
    mod = sys.modules.get(module)
    v = getattr(mod, name, _MISSING) if mod is not None else _MISSING
    return v.value if isinstance(v, constexpr) else v


class DiskVariant(CompiledKernel):
    """A variant read from the on-disk cache: its IR module is parsed from the stored text
    when first asked for."""

    @property  # type: ignore[override]
    def module(self) -> Any:
        if self._module is None:
            from ..ir.parser import parse_ir

            self._module = parse_ir(self.asm["ir"])
        return self._module

    @module.setter
    def module(self, value: Any) -> None:
        self._module = value


def load(kernel: KernelDef, key: str, specs: dict[str, Any], consts: dict[str, Any], options: Any) -> Any:
    """The variant stored under ``key``, or None: no entry, a corrupt one, or one whose
    inlined callees or module globals have changed since it was stored."""
    try:
        entry = _cache().get(key)
    except (OSError, ValueError):
        return None
    if entry is None:
        return None
    meta = entry.metadata
    try:
        if meta.get("format") != FORMAT:
            return None
        callees = []
        for c in meta["callees"]:
            fn = _resolve(c["module"], c["qualname"])
            if not isinstance(fn, (KernelDef, ConstexprFunction)) or source_hash(fn) != c["hash"]:
                return None  # the callee changed (or cannot be found): compile again
            callees.append(fn)
        used = {}
        for name, text in meta["globals"].items():
            value = _global_value(name)
            if value is _MISSING or _stable(value) != text:
                return None
            used[name] = value
        names = _NVIDIA if options.arch.startswith("sm_") else _AMD
        blobs = entry.blobs
        if any(n not in blobs for n in names):
            return None
        ck = DiskVariant(meta["name"], None, specs, consts, options, used, callees=tuple(callees),
                         metadata=dict(meta["metadata"]))
        for n in names:
            ck.asm[n] = blobs[n] if n in ("cubin", "hsaco") else blobs[n].decode()
        ck.timings["disk"] = 0.0
        ck.from_disk = True
        return ck
    except (KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None  # an entry of another layout: a miss


def store(ck: Any, key: str) -> bool:
    """Store a variant whose binary has been made; False where it cannot be (a callee or
    global without a stable text, metadata that JSON cannot write, a cache folder that
    cannot be written)."""
    callees = []
    for fn in ck.callees:
        h = source_hash(fn)
        if h is None or _resolve(fn.__module__, fn.__qualname__) is not fn:
            return False  # a callee that another process could not find by name: never trust it
        callees.append({"module": fn.__module__, "qualname": fn.__qualname__, "hash": h})
    used = {name: _stable(v) for name, v in ck.used_globals.items()}
    if None in used.values():
        return False
    names = _NVIDIA if ck.options.arch.startswith("sm_") else _AMD
    blobs = {}
    for n in names:
        v = ck.asm.get(n)
        if v is None:
            return False
        blobs[n] = v if isinstance(v, bytes) else v.encode()
    meta = {"format": FORMAT, "name": ck.name, "callees": callees, "globals": used, "metadata": ck.metadata}
    try:
        json.dumps(meta)
        _cache().put(key, meta, blobs)
    except (OSError, TypeError, ValueError):
        return False
    return True
