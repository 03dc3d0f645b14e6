"""Warp specialization as kernels write it: ``with tlx.async_tasks():`` around
``with tlx.async_task(...):`` blocks, and ``tlx.async_task_replica_id()``.

The two context managers are plain classes so that host code can build them (TLX's own
tests check their arguments on the host: a register request that is not a multiple of 8
is a ``ValueError`` there). Inside a kernel the frontend reads the ``with`` statement
itself (``tlxc.frontend.tasks``); the objects never run there.
"""

from __future__ import annotations

from typing import Any

from ..language.core import Builtin, constexpr

REGISTER_STEP = 8


def _plain(v: Any) -> Any:
    return v.value if isinstance(v, constexpr) else v


def check_registers(value: Any) -> None:
    """``num_regs`` / ``registers`` must be a multiple of 8 (``setmaxnreg`` counts in 8s)."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value % REGISTER_STEP):
        raise ValueError(f"num_regs must be divisible by {REGISTER_STEP}, got {value!r}")


class async_task:  # noqa: N801  (TLX's spelling)
    """One partition of an ``async_tasks`` region: ``async_task("default", num_regs=None,
    replicate=1, warp_group_start_id=None)`` for the task on the kernel's own warps, or
    ``async_task(num_warps=N, num_regs=None, replicate=1, warp_group_start_id=None)`` for
    N more warps (``registers=`` is another name for ``num_regs=``)."""

    _tlxc_with = "async_task"  # the frontend handles it as a with statement only

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.is_default = bool(args) and _plain(args[0]) == "default"
        regs = kwargs.get("num_regs", kwargs.get("registers"))
        self.num_regs = _plain(regs)
        check_registers(self.num_regs)
        self.num_warps = _plain(kwargs.get("num_warps"))
        self.replicate = _plain(kwargs.get("replicate", 1))
        self.warp_group_start_id = _plain(kwargs.get("warp_group_start_id"))

    def __enter__(self) -> "async_task":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class async_tasks:  # noqa: N801  (TLX's spelling)
    """A warp-specialized region: its body holds only ``async_task`` blocks (or
    constexpr ``if``/``else`` around them), exactly one of them the default task."""

    _tlxc_with = "async_tasks"

    def __init__(self, *, exclusive: bool = False, no_ending_cluster_sync: bool = False,
                 mbarrier_try_wait_suspend_ns: int | None = None) -> None:
        self.exclusive = _plain(exclusive)
        self.no_ending_cluster_sync = _plain(no_ending_cluster_sync)
        ns = _plain(mbarrier_try_wait_suspend_ns)
        if ns is not None and (not isinstance(ns, int) or isinstance(ns, bool) or ns < 0):
            raise ValueError("mbarrier_try_wait_suspend_ns must be a non-negative integer")
        self.mbarrier_try_wait_suspend_ns = ns

    def __enter__(self) -> "async_tasks":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


async_task_replica_id = Builtin("async_task_replica_id", "The replica index (0..replicate-1) of the enclosing "
                                "async_task, a compile-time constant.", namespace="tlx")

__all__ = ["async_task", "async_tasks", "async_task_replica_id", "check_registers"]
