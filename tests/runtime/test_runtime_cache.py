"""The on-disk cache: round trips, misses, corruption, its directory, and four
processes writing and reading the same entries at once."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest
import rt_cache_workers
from tlxc.runtime import KernelCache, default_cache_dir


def test_round_trip(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    key = KernelCache.key(source="def k(): ...", signature=["*fp32:16"], constants={"B": 4}, arch="sm_90a")
    assert cache.get(key) is None and key not in cache
    cache.put(key, {"name": "k", "num_warps": 4}, {"kernel.cubin": b"\x7fELF...", "kernel.ptx": b".version"})
    entry = cache.get(key)
    assert entry is not None and key in cache
    assert entry.metadata == {"name": "k", "num_warps": 4}
    assert entry.blobs == {"kernel.cubin": b"\x7fELF...", "kernel.ptx": b".version"}
    assert entry.path == tmp_path / key[:2] / key
    assert sorted(p.name for p in entry.path.iterdir()) == ["kernel.cubin", "kernel.ptx", "meta.json"]


def test_keys_are_stable_and_distinct() -> None:
    a = KernelCache.key("src", arch="sm_90a", constants={"A": 1, "B": 2})
    assert a == KernelCache.key("src", constants={"B": 2, "A": 1}, arch="sm_90a")
    assert a != KernelCache.key("src", arch="sm_100a", constants={"A": 1, "B": 2})
    assert len(a) == 64


def test_corrupt_or_partial_entries_are_misses(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    key = KernelCache.key("k")
    entry = cache.put(key, {}, {"kernel.cubin": b"abc"})
    (entry.path / "kernel.cubin").write_bytes(b"abd")  # same size, other bytes
    assert cache.get(key) is None
    (entry.path / "kernel.cubin").unlink()
    assert cache.get(key) is None
    (entry.path / "meta.json").write_text("{not json")
    assert cache.get(key) is None
    cache.put(key, {"again": True}, {"kernel.cubin": b"xyz"})  # a new put repairs it
    assert cache.get(key).metadata == {"again": True}


def test_bad_names(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    with pytest.raises(ValueError, match="bad cache key"):
        cache.get("../etc")
    with pytest.raises(ValueError, match="bad blob name"):
        cache.put(KernelCache.key("k"), {}, {"../x": b""})
    with pytest.raises(ValueError, match="bad blob name"):
        cache.put(KernelCache.key("k"), {}, {"meta.json": b""})


def test_default_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TLXC_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    assert KernelCache().root == tmp_path / "c"
    monkeypatch.delenv("TLXC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "tlxc"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "tlxc"


def test_concurrent_writers_and_readers(tmp_path: Path) -> None:
    """Four processes store different bytes under one key (and each under its own) while
    reading it back: every read is a miss or a whole, consistent entry."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Manager().Event()
    with ctx.Pool(4) as pool:
        results = [pool.apply_async(rt_cache_workers.hammer, (str(tmp_path), w, 40, start)) for w in range(4)]
        start.set()
        problems = [p for r in results for p in r.get(timeout=120)]
    assert problems == []
    cache = KernelCache(tmp_path)
    entry = cache.get(KernelCache.key("shared-kernel", arch="sm_90a"))
    assert entry is not None
    assert entry.blobs["kernel.cubin"] == rt_cache_workers.payload(entry.metadata["writer"], entry.metadata["round"])
    for w in range(4):
        own = cache.get(KernelCache.key("kernel", writer=w))
        assert own is not None and own.metadata == {"writer": w, "round": 39}
    leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    assert len(os.listdir(tmp_path)) >= 1
