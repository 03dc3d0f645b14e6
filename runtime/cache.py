"""The on-disk cache of compiled kernels.

An entry is keyed by a hash of what the caller says determines the result (source,
signature, constants, architecture, options, tlxc version...: ``KernelCache.key``). It
is a directory ``<root>/<key[:2]>/<key>/`` holding binary blobs (a cubin, PTX, an AMDGPU
code object ``kernel.hsaco``...) and ``meta.json``: the caller's metadata plus the size
and SHA-256 of every blob.

Several processes may compile and store the same kernel at once, so every file is
written to a temporary name in the same directory and moved into place with
``os.replace`` (atomic on POSIX and Windows), blobs first and ``meta.json`` last. A
reader checks each blob against the hashes in ``meta.json``: it sees a whole entry or
none (a miss), never a torn or mixed one, even if two writers store different bytes
under one key. Nothing is locked; the worst case is that two processes both compile.

The root is ``TLXC_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/tlxc``, else
``~/.cache/tlxc``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
META = "meta.json"
_BLOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def default_cache_dir() -> Path:
    env = os.environ.get("TLXC_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "tlxc"


@dataclass
class CacheEntry:
    key: str
    metadata: dict[str, Any]
    blobs: dict[str, bytes] = field(default_factory=dict)
    path: Path | None = None


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, whole."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class KernelCache:
    """An on-disk cache of compiled artifacts; ``directory`` defaults to ``default_cache_dir()``."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(directory).expanduser() if directory is not None else default_cache_dir()

    def __repr__(self) -> str:
        return f"KernelCache({str(self.root)!r})"

    @staticmethod
    def key(*parts: Any, **named: Any) -> str:
        """A stable hex key for the given parts (anything JSON can write; other objects by
        ``repr``): ``KernelCache.key(source=src, signature=sig, arch="sm_90a", version=v)``."""
        text = json.dumps([list(parts), named], sort_keys=True, default=repr, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def path(self, key: str) -> Path:
        if not re.fullmatch(r"[A-Za-z0-9_-]{3,128}", key):
            raise ValueError(f"bad cache key {key!r}: use KernelCache.key(...)")
        return self.root / key[:2] / key

    def get(self, key: str) -> CacheEntry | None:
        """The entry stored under ``key``, or None if there is none (or only a partial or
        inconsistent one, which counts as a miss)."""
        d = self.path(key)
        try:
            meta = json.loads((d / META).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("key") != key:
            return None
        blobs: dict[str, bytes] = {}
        for name, info in meta.get("blobs", {}).items():
            if not _BLOB_NAME.match(name):
                return None
            try:
                data = (d / name).read_bytes()
            except OSError:
                return None
            if len(data) != info.get("size") or hashlib.sha256(data).hexdigest() != info.get("sha256"):
                return None  # another writer replaced it with different bytes: a miss, not a mix
            blobs[name] = data
        return CacheEntry(key, meta.get("metadata", {}), blobs, d)

    def put(self, key: str, metadata: dict[str, Any], blobs: dict[str, bytes] | None = None) -> CacheEntry:
        """Store ``blobs`` (name -> bytes) and ``metadata`` (JSON-serializable) under ``key``."""
        blobs = dict(blobs or {})
        for name in blobs:
            if not _BLOB_NAME.match(name) or name == META:
                raise ValueError(f"bad blob name {name!r}: letters, digits, '.', '_' and '-', not {META!r}")
        d = self.path(key)
        d.mkdir(parents=True, exist_ok=True)
        info = {}
        for name, data in blobs.items():
            data = bytes(data)
            atomic_write(d / name, data)
            info[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        meta = {"format": FORMAT, "key": key, "blobs": info, "metadata": metadata}
        atomic_write(d / META, json.dumps(meta, indent=1, sort_keys=True).encode())
        return CacheEntry(key, metadata, blobs, d)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None
