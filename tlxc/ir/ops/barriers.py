"""TLX barrier ops: mbarriers in shared memory, hardware named barriers and fences.

An mbarrier has a phase (parity starts at 0), a count of arrivals still expected and a
count of transaction bytes still expected; the phase completes when both reach zero,
then the parity flips and the arrival count is re-armed (see
``tlxc.interpreter.rules.barriers`` for the executable form of these rules).
"""

from __future__ import annotations

from ..accessors import Attr, Operand, OptionalOperand
from ..core import Operation, register
from ..effects import CTA_BARRIER, Sync
from ..types import BarrierType, DType
from .base import fail, is_i1
from .buffers import i32_scalar

FENCE_SCOPES = ("async_shared", "gpu", "sys", "mbarrier_init")  # the last: mbarrier inits, to the cluster


def barrier(op: Operation, t: object, what: str = "the barrier", array: bool | None = False) -> BarrierType:
    if not isinstance(t, BarrierType):
        fail(op, f"{what} must be an mbarrier, got {t}")
    assert isinstance(t, BarrierType)
    if array is True and not t.num:
        fail(op, f"{what} must be an array of mbarriers, got {t}")
    if array is False and t.num:
        fail(op, f"{what} must be one mbarrier, got an array {t} (index it first)")
    return t


def _pred(op: BarrierExpectOp | BarrierWaitOp | BarrierArriveOp) -> None:
    p = op.pred
    if p is not None and (not is_i1(p.type) or p.type.shape):
        fail(op, f"pred must be a scalar i1, got {p.type}")


@register
class BarrierAllocOp(Operation):
    """``num`` mbarriers, each initialized to expect ``count`` arrivals per phase;
    ``smem_offset`` is where the ``smem-alloc`` pass placed them (-1 before it ran)."""

    NAME = "barrier_alloc"
    ATTRS = {"count": Operation.REQUIRED, "smem_offset": -1}
    SYNC = (CTA_BARRIER,)  # initialized by one thread, then every thread must see it
    PURE = False

    count = Attr[int]()
    smem_offset = Attr[int]()

    def verify(self) -> None:
        super().verify()
        barrier(self, self.result.type, "the result", array=True)
        if not isinstance(self.count, int) or self.count < 1:
            fail(self, f"arrive count must be a positive integer, got {self.count}")


@register
class BarrierViewOp(Operation):
    """mbarrier ``index`` of an array."""

    NAME = "barrier_view"
    OPERANDS = ("bars", "index")
    PURE = True

    bars = Operand()
    index = Operand()

    def verify(self) -> None:
        super().verify()
        t = barrier(self, self.bars.type, "the source", array=True)
        i32_scalar(self, self.index, "the index")
        if self.result.type != t.single():
            fail(self, f"result must be {t.single()}")


@register
class BarrierExpectOp(Operation):
    """Arrive once on ``bar`` and add ``bytes`` expected transaction bytes to its phase."""

    NAME = "barrier_expect"
    OPERANDS = ("bar", "?pred")
    ATTRS = {"bytes": Operation.REQUIRED}
    SYNC = (Sync("expect_bytes"), Sync("arrive"), CTA_BARRIER)  # one thread arrives, after the CTA meets
    NUM_RESULTS = 0

    bar = Operand()
    pred = OptionalOperand()
    bytes = Attr[int]()

    def verify(self) -> None:
        super().verify()
        barrier(self, self.bar.type)
        _pred(self)
        if not isinstance(self.bytes, int) or self.bytes < 0:
            fail(self, f"bytes must be a non-negative integer, got {self.bytes}")


@register
class BarrierWaitOp(Operation):
    """Block until the phase of ``bar`` with parity ``phase`` has completed."""

    NAME = "barrier_wait"
    OPERANDS = ("bar", "phase", "?pred")
    SYNC = (Sync("wait"),)
    RETIRES = ("tma_load",)  # the bytes a TMA load delivers are there once its phase completes
    NUM_RESULTS = 0

    bar = Operand()
    phase = Operand()
    pred = OptionalOperand()

    def verify(self) -> None:
        super().verify()
        barrier(self, self.bar.type)
        i32_scalar(self, self.phase, "the phase")
        _pred(self)


@register
class BarrierArriveOp(Operation):
    """Arrive ``count`` times on ``bar`` (once per CTA, or once per thread on a warp
    barrier); with ``remote_rank``, on the copy of ``bar`` in that peer CTA of the
    cluster."""

    NAME = "barrier_arrive"
    OPERANDS = ("bar", "?pred", "?remote_rank")
    ATTRS = {"count": 1}
    NUM_RESULTS = 0

    bar = Operand()
    pred = OptionalOperand()
    remote_rank = OptionalOperand()
    count = Attr[int]()

    def verify(self) -> None:
        super().verify()
        barrier(self, self.bar.type)
        _pred(self)
        if not isinstance(self.count, int) or self.count < 1:
            fail(self, f"arrive count must be a positive integer, got {self.count}")
        rank = self.remote_rank
        if rank is not None and (not isinstance(rank.type, DType) or not rank.type.is_int() or rank.type.shape):
            fail(self, f"remote_rank must be an integer scalar, got {rank.type}")

    def sync_effects(self) -> tuple[Sync, ...]:
        # one thread arrives for the CTA after the CTA meets; on a warp barrier every thread arrives alone
        t = self.bar.type
        if isinstance(t, BarrierType) and not t.warp:
            return (Sync("arrive"), CTA_BARRIER)
        return (Sync("arrive"),)


class _NamedBarrier(Operation):
    ATTRS = {"bar_id": Operation.REQUIRED, "threads": Operation.REQUIRED}
    NUM_RESULTS = 0

    bar_id = Attr[int]()
    threads = Attr[int]()

    def verify(self) -> None:
        super().verify()
        if not 0 <= self.bar_id < 16:
            fail(self, f"named barrier ids are 0..15, got {self.bar_id}")
        n = self.threads
        if n <= 0 or n % 32:
            fail(self, f"named barrier thread count must be a positive multiple of 32, got {n}")


@register
class NamedBarrierWaitOp(_NamedBarrier):
    """Wait at hardware barrier ``bar_id`` until ``threads`` threads have reached it."""

    NAME = "named_barrier_wait"

    def sync_effects(self) -> tuple[Sync, ...]:
        return (Sync("named_barrier", threads=self.threads),)


@register
class NamedBarrierArriveOp(_NamedBarrier):
    """Arrive at hardware barrier ``bar_id`` without waiting."""

    NAME = "named_barrier_arrive"

    def sync_effects(self) -> tuple[Sync, ...]:
        return (Sync("arrive", threads=self.threads),)


@register
class FenceOp(Operation):
    """A memory fence. ``async_shared`` orders ordinary shared-memory writes before later
    reads by the async proxy (TMA, wgmma)."""

    NAME = "fence"
    ATTRS = {"scope": Operation.REQUIRED}
    NUM_RESULTS = 0

    scope = Attr[str]()

    def verify(self) -> None:
        super().verify()
        if self.scope not in FENCE_SCOPES:
            fail(self, f"fence scope must be one of {FENCE_SCOPES}, got {self.scope!r}")

    def sync_effects(self) -> tuple[Sync, ...]:
        return (Sync("fence", scope=self.scope),)
