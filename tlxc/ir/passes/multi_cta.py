"""``multi-cta``: ``tl.range(..., multi_cta=True)`` loops split over the CTAs of a
cluster, and what they accumulated summed across the cluster (Triton's
MultiCTAReduction).

Expects: ``for`` ops whose ``multi_cta`` attribute is true (the frontend records
``tl.range``'s option); the func's ``cluster_dims`` and ``num_ctas``.

Guarantees: no ``for`` keeps a ``multi_cta`` attribute. In a kernel launched with
clusters of ``n > 1`` CTAs (``ctas_per_cga``; not ``num_ctas``, where one CTA of the
cluster runs the program and the others leave at entry), each such loop runs a
contiguous share of its iterations in each CTA -- ``ceil(trips / n)`` iterations from
rank ``r * ceil(trips / n)`` on, so uneven counts lose nothing -- and every value the loop
carries is summed across the cluster where it is used:

* a tile it accumulated, at each ``tl.sum`` (``reduce`` of kind ``sum``, any axis) of
  it: the reduction's result (a scalar or a smaller tile) is combined, as Triton does;
* a scalar it accumulated, at the loop's exit.

The combine uses the cluster ops the user has: a buffer of ``n`` slots in each CTA
(``local_alloc``, placed at the kernel's entry so that its shared memory is never given
to another buffer), each CTA storing its partial into its own slot of every CTA's
buffer (``remote_store``: ``mapa`` + ``st.shared::cluster``), a ``cluster_barrier``, then
each CTA loading the ``n`` slots and adding them in rank order, so every CTA gets the
same bits. Inside a loop, a second ``cluster_barrier`` keeps a fast CTA from writing the
next round into a slot a slow one is still reading. With one CTA per cluster the loop
is left as it is. A loop that starts from a non-zero value keeps it in rank 0 only.

Refuses (``TLXC-LOOP-002``, at the offending op's line): a carried value that is not a
pure sum (``acc = acc + x``, possibly chained), the running sum read inside the loop, a
carried tile used after the loop by anything but ``tl.sum``, a multi_cta loop inside
another one or inside ``tlx.async_tasks``. These are checked with or without clusters,
so that a kernel does not start failing when it is launched on a cluster.
"""

from __future__ import annotations

from ...errors import CompilationError
from ..builder import Builder
from ..core import Operation, Value
from ..ops import (
    AddOp,
    AsyncTasksOp,
    ClusterBarrierOp,
    ClusterCtaRankOp,
    CmpOp,
    ConstantOp,
    ConvertOp,
    ForOp,
    FuncOp,
    IDivOp,
    LocalAllocOp,
    LocalLoadOp,
    LocalViewOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    ReduceOp,
    RemoteStoreOp,
    SelectOp,
    SplatOp,
    SubOp,
    YieldOp,
    in_loop,
)
from ..types import DType, MemDescType, TileType, int1, int32
from .options import PassOptions
from .rewrite import replace_uses_in, trip_count

CODE = "TLXC-LOOP-002"


def cluster_size(func: FuncOp) -> int:
    """How many CTAs share a multi_cta loop: the cluster's, unless ``num_ctas`` made the
    cluster (then only its first CTA runs the program)."""
    if func.num_ctas > 1:
        return 1
    n = 1
    for d in func.cluster_dims:
        n *= int(d)
    return n


def _refuse(op: Operation, what: str, help: str | None = None) -> CompilationError:
    return CompilationError(CODE, what, op.loc, help or "a multi_cta loop may only accumulate sums "
                            "(acc += x) whose results are reduced with tl.sum after the loop")


def _line(op: Operation) -> str:
    return f"line {op.loc.line}" if op.loc is not None and op.loc.line else "the loop"


def _live_uses(v: Value) -> list[Operation]:
    """The ops that use ``v``, less pure ops whose results nobody uses (the canonicalizer
    removes them after this pass)."""
    out: list[Operation] = []
    for user in v.uses:
        if user.PURE and all(not r.uses for r in user.results) and user.results:
            continue
        if user not in out:
            out.append(user)
    return out


def _check_accumulation(loop: ForOp) -> None:
    """Each carried value must be ``carried + x (+ y ...)`` with the running sum read
    nowhere else in the body."""
    body = loop.body
    term = body.ops[-1]
    for i, arg in enumerate(body.args[1:]):
        yielded = term.operands[i]
        v: Value = arg
        while True:
            users = _live_uses(v)
            if v is yielded:
                others = [u for u in users if u is not term]
                if others:
                    u = others[0]
                    raise _refuse(u, f"'{u.NAME}' reads the running sum of a multi_cta loop ({_line(loop)}); each "
                                     "CTA holds only its share of the sum inside the loop")
                break
            if len(users) != 1:
                if not users:
                    raise _refuse(loop, "a value carried by this multi_cta loop is not accumulated with '+' (it is "
                                        "not updated from its previous value)")
                u = users[1] if isinstance(users[0], AddOp) else users[0]
                raise _refuse(u, f"'{u.NAME}' reads the running sum of a multi_cta loop ({_line(loop)}); each CTA "
                                 "holds only its share of the sum inside the loop")
            u = users[0]
            if not isinstance(u, AddOp) or u.parent is not body:
                what = "yield" if isinstance(u, YieldOp) else u.NAME
                raise _refuse(u, f"a value carried by a multi_cta loop ({_line(loop)}) is updated with '{what}'; only "
                                 "sums (acc += x) can be split over the CTAs of a cluster")
            if u.lhs is v and u.rhs is v:
                raise _refuse(u, "a multi_cta loop's running sum is added to itself; only acc += x can be split "
                                 "over the CTAs of a cluster")
            v = u.result


def _check_exits(loop: ForOp) -> list[ReduceOp]:
    """The ``tl.sum`` reductions of the carried tiles (refusing other uses of them)."""
    sums: list[ReduceOp] = []
    for r in loop.results:
        if not isinstance(r.type, TileType):
            continue
        for u in _live_uses(r):
            if isinstance(u, ReduceOp) and u.kind == "sum":
                sums.append(u)
                continue
            what = f"tl.{u.kind}" if isinstance(u, ReduceOp) else f"'{u.NAME}'"
            raise _refuse(u, f"{what} uses a tile accumulated by a multi_cta loop ({_line(loop)}); each CTA of the "
                             "cluster holds only its share of it, and only a tl.sum of it is combined across the "
                             "cluster")
    return sums


def _check_nesting(loop: ForOp) -> None:
    block = loop.parent
    while block is not None:
        owner = block.parent_op
        if owner is None:
            return
        if isinstance(owner, ForOp) and owner.multi_cta:
            raise _refuse(loop, "a multi_cta loop inside another multi_cta loop: only one loop level can be split "
                                "over the cluster", "drop multi_cta=True from one of the loops")
        if isinstance(owner, AsyncTasksOp):
            raise _refuse(loop, "a multi_cta loop inside tlx.async_tasks: the cluster-wide combine needs every "
                                "thread of every CTA", "move the loop out of the async_tasks region")
        block = owner.parent


def _const(b: Builder, t: DType, value: object) -> Value:
    return b.value(ConstantOp, [], t, value=value)


def _split(loop: ForOp, n: int) -> None:
    """Give this CTA its share of the iterations: ``per = ceil(trips / n)`` from rank
    ``r * per`` on, the last ranks fewer (or none)."""
    b = Builder.at(loop)
    lb, ub, step = loop.lb, loop.ub, loop.step
    t = lb.type
    assert isinstance(t, DType)
    rank = b.value(ClusterCtaRankOp, [], int32)
    if t != int32:
        rank = b.value(ConvertOp, [rank], t)
    trips = trip_count(b, lb, ub, step)
    zero, one, size = _const(b, t, 0), _const(b, t, 1), _const(b, t, n)
    per = b.value(IDivOp, [b.value(SubOp, [b.value(AddOp, [trips, size], t), one], t), size], t)
    first = b.value(MulOp, [rank, per], t)
    mine = b.value(MinimumOp, [b.value(MaximumOp, [b.value(SubOp, [trips, first], t), zero], t), per], t)
    my_lb = b.value(AddOp, [lb, b.value(MulOp, [first, step], t)], t)
    my_ub = b.value(AddOp, [my_lb, b.value(MulOp, [mine, step], t)], t)
    loop.lb = my_lb
    loop.ub = my_ub
    _start_from_zero_off_rank0(loop, b)


def _start_from_zero_off_rank0(loop: ForOp, b: Builder) -> None:
    """An accumulation that does not start from zero keeps its start in rank 0 only, so
    that the cluster's sum counts it once."""
    rank = None
    for i, init in enumerate(loop.inits):
        owner = init.owner
        if isinstance(owner, ConstantOp) and owner.value == 0:
            continue
        if rank is None:
            rank = b.value(ClusterCtaRankOp, [], int32)
            is0 = b.value(CmpOp, [rank, _const(b, int32, 0)], int1, predicate="eq")
        t = init.type
        zero = _const(b, t, 0.0 if t.scalar.is_floating() else 0)  # type: ignore[arg-type]
        cond = is0
        if isinstance(t, TileType):
            cond = b.value(SplatOp, [is0], TileType(t.shape, int1))
        loop.set_operand(3 + i, b.value(SelectOp, [cond, init, zero], t))


def _exchange_type(partial: Value) -> TileType:
    """The tile a partial travels as: itself, or a one-element tile for a scalar."""
    t = partial.type
    tile = t if isinstance(t, TileType) else TileType((1,), t)  # type: ignore[arg-type]
    assert isinstance(tile.element, DType)
    return tile


def _combine(at: Operation, partial: Value, n: int, func: FuncOp, repeated: bool) -> Value:
    """The sum over the cluster of ``partial`` (a scalar or a tile), in rank order, built
    after ``at``; the ops that read ``partial`` are the only ones made here."""
    t = partial.type
    scalar = not isinstance(t, TileType)
    tile = _exchange_type(partial)
    element = tile.element
    assert isinstance(element, DType)
    entry = Builder(func.body, at.loc)
    entry.index = 0
    # allocated before the builder below takes its insertion index: the entry may be
    # the same block
    buf = entry.value(LocalAllocOp, [], MemDescType(tile.shape, element, n))
    b = Builder.at(at, after=True)
    value = b.value(SplatOp, [partial], tile) if scalar else partial
    one = MemDescType(tile.shape, element, 0)
    rank = b.value(ClusterCtaRankOp, [], int32)
    mine = b.value(LocalViewOp, [buf, rank], one)
    for r in range(n):
        b.create(RemoteStoreOp, [mine, value, _const(b, int32, r)])
    b.create(ClusterBarrierOp)
    total: Value | None = None
    for r in range(n):
        got = b.value(LocalLoadOp, [b.value(LocalViewOp, [buf, _const(b, int32, r)], one)], tile)
        total = got if total is None else b.value(AddOp, [total, got], tile)
    assert total is not None
    if repeated:
        b.create(ClusterBarrierOp)
    if scalar:
        total = b.value(ReduceOp, [total], t, axis=0, kind="sum")
    return total


def _combine_uses(at: Operation, partial: Value, n: int, func: FuncOp) -> None:
    """Every use of ``partial`` reads its sum over the cluster instead."""
    users = list(dict.fromkeys(partial.uses))
    total = _combine(at, partial, n, func, in_loop(at))
    replace_uses_in(users, partial, total)


def _rewrite(loop: ForOp, sums: list[ReduceOp], n: int, func: FuncOp) -> None:
    _split(loop, n)
    for red in sums:
        _combine_uses(red, red.result, n, func)
    for r in loop.results:
        if not isinstance(r.type, TileType) and r.uses:
            _combine_uses(loop, r, n, func)


def run(module: Operation, options: PassOptions) -> Operation:
    for func in module.funcs:
        loops = [op for op in func.walk() if isinstance(op, ForOp) and op.multi_cta]
        if not loops:
            continue
        n = cluster_size(func)
        plans = []
        for loop in loops:
            _check_nesting(loop)
            _check_accumulation(loop)
            plans.append((loop, _check_exits(loop)))
        for loop, sums in plans:
            loop.multi_cta = None
            if n > 1:
                _rewrite(loop, sums, n, func)
    return module
