"""``flatten-loops``: ``tl.range(..., flatten=True)`` fuses a loop and the one loop nested
in it into a single loop, as Triton does for its persistent matmul (tutorial 09).

A persistent kernel walks its tiles in an outer loop and each tile's K in an inner one::

    for t in tl.range(lb_o, ub_o, step_o, flatten=True):   # carries oc
        P                      # the tile's indices and pointers
        for k in range(lb_i, ub_i, step_i):                # carries ic, from inits(P)
            B                  # the loads and the dot
        E                      # the epilogue: convert, store
        yield oc'

Pipelined as written, every tile drains the ring: the first loads of the next tile wait
for this tile's epilogue. Fused, the loop runs ``T_o * T_i`` iterations, and the loads that
``software-pipeline`` issues ``num_stages - 1`` iterations ahead run on into the next tile,
over the epilogue::

    if T_i > 0:                # T_i, T_o: the trip counts, T_i invariant in the outer loop
      for j in range(0, T_o * T_i) iter_args(t = lb_o, kk = 0, oc, ic, pc):
        first = kk == 0
        pc, ic_p = if first { P; yield P's values, the inits made in P } else { yield pc, ic_p }
        ic_s = select(first, init, ic_s)     // the inits defined outside the nest
        k = lb_i + kk * step_i
        B                                    // ic -> ic_p, ic_s
        oc = if kk == T_i - 1 { E; yield oc' } else { yield oc }
        yield select(last, t + step_o, t), select(last, 0, kk + 1), oc, B's yield, pc
    else:
      the outer loop as written, without the inner loop (it runs no iteration)

An accumulator that starts every tile from a constant (``tl.zeros``) is reset with a
``select`` in the loop, which ``dot-to-wgmma`` turns into wgmma's ``scale-d`` operand; the
epilogue reads the dot's result inside the ``if``, where ``dot-to-wgmma`` waits for it.
The pure ops of ``P`` that depend on nothing the outer loop changes are hoisted out first
(the constants and ``tl.arange`` the tile reuses).

Expects: the tile IR (``for`` ops carry ``flatten`` from ``tl.range``).
Guarantees: every ``for`` with ``flatten`` either fuses with its inner loop as above or is
left as written (Triton's ``flatten`` is a request too); either way no ``for`` keeps the
attribute, and every iteration computes what it computed before, in the same order.
A nest fuses when the outer body holds exactly one loop, a ``for`` at its top level with
no loop inside, whose bounds and step do not change in the outer loop and whose step is
a positive constant; and when every value ``P`` hands on has a type a placeholder can be
made of (numbers and pointers: the loop carries it before the first tile sets it).
Refuses: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import ops
from ..builder import Builder
from ..clone import clone
from ..core import Block, BlockArgument, Location, Operation, Region, Value
from ..types import DType, PointerType, TileType, Type, int1, int64, tile
from .dot_loop_plan import pure_if
from .options import PassOptions
from .rewrite import constant_of, replace_uses_in, top_level, trip_count


def run(module: Operation, options: PassOptions) -> Operation:
    for func in module.funcs:
        for loop in [op for op in func.walk() if isinstance(op, ops.ForOp) and op.flatten is not None]:
            if loop.flatten:
                _fuse(loop)
            if loop.parent is not None:  # left as written
                loop.attrs["flatten"] = None
    return module


def _inside(v: Value, op: Operation) -> bool:
    """Whether ``v`` is defined inside ``op``'s regions."""
    block: Block | None = v.owner if isinstance(v, BlockArgument) else v.owner.parent  # type: ignore[union-attr,assignment]
    while block is not None:
        owner = block.parent_op
        if owner is op:
            return True
        block = owner.parent if owner is not None else None
    return False


def _inner_loop(outer: ops.ForOp) -> ops.ForOp | None:
    """The one loop of ``outer``'s body, when the nest has the shape the module doc names."""
    body = outer.body
    loops = [op for op in body.ops if isinstance(op, (ops.ForOp, ops.WhileOp))]
    if len(loops) != 1 or not isinstance(loops[0], ops.ForOp):
        return None
    inner = loops[0]
    nested = [x for op in body.ops for x in list(op.walk())[1:] if isinstance(x, (ops.ForOp, ops.WhileOp))]
    if nested:  # a loop inside the inner loop, or inside an if of the outer body
        return None
    step = constant_of(inner.step)
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        return None
    _hoist_invariants(outer, body.ops[:body.ops.index(inner)])
    if any(_inside(v, outer) for v in (inner.lb, inner.ub)):
        return None
    return inner


def _split(prologue: list[Operation], body: Block) -> tuple[list[Operation], list[Operation]]:
    """``(every, once)``: the pure tile ops of ``P`` that the fused loop runs every
    iteration, and the rest, which it runs once per tile under ``if first``.

    A tile that ``P`` hands on to one use (tutorial 09's ``offs_am``, masked with
    ``tl.where`` and read by A's pointers only) is computed once per tile with what it is
    made from, and carried: the layout pass gives the carried copy the layout of that use
    (``layouts``' ``carry_in``). A tile with several uses could want several layouts, and
    carried, it keeps one: each other use would convert it through shared memory each
    iteration (an index vector broadcast into the pointer tiles of A and of B); such a tile
    is recomputed in the loop from the scalars the ``if`` hands on, in the layout of each
    use, as in the nest. A tile op that an op of the ``if`` reads (a ``tl.sum`` giving a
    scalar) stays in the ``if``, with everything it reads."""
    every = {id(op) for op in prologue
             if op.PURE and not op.regions and op.results and all(r.type.shape for r in op.results)}
    in_p = {id(op) for op in prologue}
    for op in prologue:
        outside = [u for r in op.results for u in r.uses if id(top_level(u, body)) not in in_p]
        if id(op) in every and len(outside) == 1:
            once = _closed_slice(op, every, outside[0])
            every.difference_update(id(x) for x in once)
    changed = True
    while changed:
        changed = False
        for op in prologue:
            if id(op) in every:
                continue
            for v in (v for x in op.walk() for v in x.operands):
                if isinstance(v.owner, Operation) and id(v.owner) in every:
                    every.discard(id(v.owner))
                    changed = True
    return [op for op in prologue if id(op) in every], [op for op in prologue if id(op) not in every]


def _closed_slice(root: Operation, every: set[int], use: Operation) -> list[Operation]:
    """``root`` and the ops of ``every`` it is made from, when nothing but ``use`` and
    themselves reads what they compute (else none: moved into the ``if``, they would hand
    on more tiles)."""
    found: dict[int, Operation] = {}
    todo = [root]
    while todo:
        op = todo.pop()
        if id(op) in found:
            continue
        found[id(op)] = op
        todo += [v.owner for v in op.operands if isinstance(v.owner, Operation) and id(v.owner) in every]
    for op in found.values():
        if any(u is not use and id(u) not in found for r in op.results for u in r.uses):
            return []
    return list(found.values())


def _has_placeholder(t: Type) -> bool:
    """Whether ``_placeholder`` can make a value of type ``t`` (numbers and pointers)."""
    return isinstance(t.scalar, (DType, PointerType))


def _placeholder(b: Builder, t: Type) -> Value:
    """A value of type ``t`` (``_has_placeholder``) for a carried slot that is set before it
    is read: zero, or the null pointer."""
    scalar = t.scalar
    if isinstance(scalar, DType):
        return b.value(ops.ConstantOp, [], t, value=0.0 if scalar.is_floating() else 0)
    shape = t.shape if isinstance(t, TileType) else ()
    zero = b.value(ops.ConstantOp, [], tile(shape, int64) if shape else int64, value=0)
    return b.value(ops.IntToPtrOp, [zero], t)


def _hoist_invariants(outer: ops.ForOp, prologue: list[Operation]) -> None:
    """Move the pure ops of ``prologue`` that read nothing the outer loop defines to just
    before it."""
    for op in prologue:
        if op.PURE and not op.regions and not any(_inside(v, outer) for v in op.operands):
            op.parent.remove(op)  # type: ignore[union-attr]
            Builder.at(outer).place(op)


def _fuse(outer: ops.ForOp) -> bool:
    inner = _inner_loop(outer)
    if inner is None:
        return False
    body = outer.body
    p_all = body.ops[:body.ops.index(inner)]
    every, prologue = _split(p_all, body)
    epilogue = body.ops[body.ops.index(inner) + 1:-1]
    in_p = {id(op) for op in prologue}

    def used_after(v: Value) -> bool:  # by B, E or the outer yield (an init of the inner loop: by P's if)
        return any(u is not inner and id(top_level(u, body)) not in in_p for u in v.uses)

    handed = [r for op in prologue for r in op.results if used_after(r)]
    # inner inits made in P's if go through it; the others are selected in the loop
    via_if = [j for j, v in enumerate(inner.inits) if isinstance(v.owner, Operation) and id(v.owner) in in_p]
    peel = all(op.PURE and not op.regions or isinstance(op, ops.IfOp) and pure_if(op) for op in prologue)
    # inits of the inner loop that the fused loop computes every iteration (P's tile ops)
    in_loop = [j for j, v in enumerate(inner.inits) if j not in via_if and _inside(v, outer)]
    if not peel and not all(_has_placeholder(v.type) for v in handed + [inner.inits[j] for j in via_if + in_loop]):
        return False
    loc, iloc = outer.loc, inner.loc
    b = Builder.at(outer)
    kk_t = outer.lb.type
    t_in = trip_count(b, inner.lb, inner.ub, inner.step)
    if t_in.type != kk_t:
        t_in = b.value(ops.ConvertOp, [t_in], kk_t)
    t_out = trip_count(b, outer.lb, outer.ub, outer.step)
    zero_o = b.value(ops.ConstantOp, [], kk_t, value=0)
    runs = b.value(ops.AndOp, [b.value(ops.CmpOp, [t_in, zero_o], int1, predicate="gt"),
                               b.value(ops.CmpOp, [t_out, zero_o], int1, predicate="gt")], int1)
    version = b.create(ops.IfOp, [runs], [r.type for r in outer.results], regions=[Region(Block()), Region(Block())])
    _as_written_without_inner(outer, version.regions[1].block)

    oc_types = [v.type for v in outer.inits]
    carried = [kk_t, kk_t] + oc_types + [v.type for v in inner.inits] + [v.type for v in handed]
    fb = Block([kk_t] + carried)
    with Builder(None, loc).at_end(version.regions[0].block) as vb:
        # the first tile's P computed before the loop, so that what the loop carries has
        # its facts (contiguity, divisibility) from the start; placeholders otherwise
        if peel:
            m: dict[int, Value] = {id(body.args[0]): outer.lb}
            m.update((id(a), v) for a, v in zip(body.args[1:], outer.inits))
            for op in p_all:
                vb.place(clone(op, m))
            first_p = [m[id(v)] for v in handed] + [m[id(inner.inits[j])] for j in via_if + in_loop]
        else:
            first_p = [_placeholder(vb, v.type) for v in handed + [inner.inits[j] for j in via_if + in_loop]]
        n_h = len(handed)
        firsts = dict(zip(via_if + in_loop, first_p[n_h:]))
        ic_init = [firsts.get(j, v) for j, v in enumerate(inner.inits)]
        zero = vb.value(ops.ConstantOp, [], kk_t, value=0)
        inits = [outer.lb, zero] + list(outer.inits) + ic_init + first_p[:n_h]
        fused = vb.create(ops.ForOp, [zero, vb.value(ops.MulOp, [t_out, t_in], kk_t),
                                      vb.value(ops.ConstantOp, [], kk_t, value=1), *inits], carried,
                          {"num_stages": inner.num_stages if inner.num_stages is not None else outer.num_stages,
                           "warp_specialize": outer.warp_specialize}, regions=[Region(fb)])
        vb.create(ops.YieldOp, list(fused.results[2:2 + len(oc_types)]), [])
    _build_body(outer, inner, fb, prologue, every, epilogue, handed, via_if, t_in, loc, iloc)
    for old, new in zip(outer.results, version.results):
        old.replace_all_uses_with(new)
    outer.erase()
    return True


def _as_written_without_inner(outer: ops.ForOp, block: Block) -> None:
    """``block`` := a copy of the outer loop whose inner loop runs no iteration."""
    copy = clone(outer)
    copy.attrs["flatten"] = None
    block.append(copy)
    inner = next(op for op in copy.body.ops if isinstance(op, ops.ForOp))
    for r, v in zip(inner.results, inner.inits):
        r.replace_all_uses_with(v)
    inner.erase()
    with Builder(None, outer.loc).at_end(block) as b:
        b.create(ops.YieldOp, list(copy.results), [])


def _build_body(outer: ops.ForOp, inner: ops.ForOp, fb: Block, prologue: list[Operation],
                every: list[Operation], epilogue: list[Operation], handed: Sequence[Value], via_if: list[int],
                t_in: Value, loc: Location | None, iloc: Location | None) -> None:
    """Fill the fused loop's body ``fb`` (module doc), moving the nest's ops into it."""
    body, in_body = outer.body, inner.body
    n_oc, n_ic = len(outer.inits), len(inner.inits)
    t, kk = fb.args[1], fb.args[2]
    oc = fb.args[3:3 + n_oc]
    ic = fb.args[3 + n_oc:3 + n_oc + n_ic]
    pc = fb.args[3 + n_oc + n_ic:]
    kk_t = kk.type
    b = Builder(fb, loc)

    def c(v: int, ty: Type = kk_t) -> Value:
        return b.value(ops.ConstantOp, [], ty, value=v)

    first = b.value(ops.CmpOp, [kk, c(0)], int1, predicate="eq")
    # P, once per tile
    p_if = b.create(ops.IfOp, [first], [v.type for v in handed] + [ic[j].type for j in via_if],
                    regions=[Region(Block()), Region(Block())])
    then, other = p_if.regions[0].block, p_if.regions[1].block
    for op in prologue:
        body.remove(op)
        then.append(op)
    with Builder(None, loc).at_end(then) as tb:
        tb.create(ops.YieldOp, list(handed) + [inner.inits[j] for j in via_if], [])
    with Builder(None, loc).at_end(other) as eb:
        eb.create(ops.YieldOp, list(pc) + [ic[j] for j in via_if], [])
    for v, r in zip(handed, p_if.results):
        replace_uses_in([u for u in v.uses if top_level(u, then) is None], v, r)
    for op in every:  # P's tile arithmetic, in the layouts its uses want
        body.remove(op)
        fb.append(op)
    # the inner loop's carried values at this iteration
    b.loc = iloc
    current: list[Value] = []
    for j in range(n_ic):
        if j in via_if:
            current.append(p_if.results[len(handed) + via_if.index(j)])
            continue
        init = inner.inits[j]
        cond = first if not init.type.shape else b.value(ops.SplatOp, [first], tile(init.type.shape, int1))
        current.append(b.value(ops.SelectOp, [cond, init, ic[j]], init.type))
    k_t = inner.lb.type
    kk_k = kk if k_t == kk_t else b.value(ops.ConvertOp, [kk], k_t)
    k = b.value(ops.AddOp, [inner.lb, b.value(ops.MulOp, [kk_k, inner.step], k_t)], k_t)
    in_body.args[0].replace_all_uses_with(k)
    for a, v in zip(in_body.args[1:], current):
        a.replace_all_uses_with(v)
    in_yield = in_body.ops[-1]
    for op in list(in_body.ops[:-1]):
        in_body.remove(op)
        fb.append(op)
    stepped = list(in_yield.operands)
    for r, v in zip(inner.results, stepped):
        r.replace_all_uses_with(v)
    # E, once per tile, after its last iteration
    b.loc = loc
    last = b.value(ops.CmpOp, [kk, b.value(ops.SubOp, [t_in, c(1)], kk_t)], int1, predicate="eq")
    e_if = b.create(ops.IfOp, [last], [v.type for v in oc], regions=[Region(Block()), Region(Block())])
    for op in epilogue:
        body.remove(op)
        e_if.regions[0].block.append(op)
    out_yield = body.ops[-1]
    with Builder(None, loc).at_end(e_if.regions[0].block) as tb:
        tb.create(ops.YieldOp, list(out_yield.operands), [])
    with Builder(None, loc).at_end(e_if.regions[1].block) as eb:
        eb.create(ops.YieldOp, list(oc), [])
    body.args[0].replace_all_uses_with(t)
    for a, v in zip(body.args[1:], oc):
        a.replace_all_uses_with(v)
    t_next = b.value(ops.SelectOp, [last, b.value(ops.AddOp, [t, outer.step], t.type), t], t.type)
    kk_next = b.value(ops.SelectOp, [last, c(0), b.value(ops.AddOp, [kk, c(1)], kk_t)], kk_t)
    b.create(ops.YieldOp, [t_next, kk_next, *e_if.results, *stepped, *p_if.results[:len(handed)]], [])
