"""Worker processes for the cache concurrency tests (a module of its own so that
spawned processes can import it)."""

from __future__ import annotations


def payload(writer: int, i: int) -> bytes:
    # different bytes and sizes per writer and round, large enough that a torn read would show
    return (f"writer {writer} round {i};".encode() * (2000 + 997 * ((writer * 7 + i) % 13)))


def hammer(root: str, writer: int, rounds: int, start) -> list[str]:  # noqa: ANN001 - an Event
    """Store and read one shared key and one key of this writer's own; return the problems seen."""
    from tlxc.runtime.cache import KernelCache

    cache = KernelCache(root)
    shared = KernelCache.key("shared-kernel", arch="sm_90a")
    own = KernelCache.key("kernel", writer=writer)
    problems: list[str] = []
    start.wait()
    for i in range(rounds):
        cache.put(shared, {"writer": writer, "round": i}, {"kernel.cubin": payload(writer, i), "kernel.ptx": b"ptx"})
        cache.put(own, {"writer": writer, "round": i}, {"kernel.cubin": payload(writer, i)})
        for key in (shared, own):
            entry = cache.get(key)
            if key == own and entry is None:
                problems.append(f"round {i}: own entry missing")
                continue
            if entry is None:
                continue  # a miss is allowed while others write the shared key
            m = entry.metadata
            if entry.blobs.get("kernel.cubin") != payload(m["writer"], m["round"]):
                problems.append(f"round {i}: blob does not match metadata {m}")
    return problems
