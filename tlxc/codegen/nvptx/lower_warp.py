"""The warp-level ops: ``vote_ballot_sync`` -> ``vote.sync.ballot.b32`` and ``warp_redux``
-> ``redux.sync``.

Layout assignment gave a tile operand the warp-rows layout (``ir/ops/warp.py``: lanes
along dim 0, a lane's row in its registers), so register ``r`` of every lane of a warp
holds the same column of 32 consecutive rows: ``redux.sync`` per register is the
reduction of that column over the warp's rows. For a ballot, a lane votes with the OR of
its registers of one row group (registers that differ in dim 0 belong to other groups
when the tile has more rows than the CTA's warps cover).

Both run with the full member mask: the code around them is convergent (every lane of
the warp executes it), and the PTX ISA leaves a ``vote.sync`` with the executing thread
outside its mask undefined, so the user's ballot mask is applied to the result instead
(same bits: lanes outside the mask read as 0).

``redux.sync`` on f32 needs sm_100a; on sm_90a a float ``warp_redux`` is five butterfly
shuffles with ``max.f32``/``min.f32``, which skip a NaN operand as ``redux.sync`` does.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from . import instructions as insn
from .emitter import Emitter, lowers, register_coords
from .lower_reduce import shuffle
from .ptx import Reg

_FULL = 0xFFFFFFFF


@lowers(ops.VoteBallotOp)
def vote_ballot(e: Emitter, op: Operation) -> None:
    mask = op.mask
    src = e.get(op.pred)

    def ballot(p: Reg) -> Reg:
        d = e.fn.reg("b32")
        e.fn.emit(insn.vote_sync_ballot(d, p, _FULL))
        if mask != _FULL:
            e.fn.emit(f"and.b32 {d}, {d}, {mask:#x}")
        return d

    if not op.pred.type.shape:
        e.set(op.result, [ballot(src.regs[0])])
        return
    groups: dict[int, list[int]] = {}
    for r in range(len(src.regs)):
        groups.setdefault(register_coords(src.layout, r)[0], []).append(r)
    out: list[Reg | None] = [None] * len(src.regs)
    for regs in groups.values():
        vote = src.regs[regs[0]]
        for r in regs[1:]:
            acc = e.fn.reg("pred")
            e.fn.emit(f"or.pred {acc}, {vote}, {src.regs[r]}")
            vote = acc
        word = ballot(vote)
        for r in regs:
            out[r] = word
    e.set(op.result, out, src.layout)  # type: ignore[arg-type]


@lowers(ops.WarpReduxOp)
def warp_redux(e: Emitter, op: Operation) -> None:
    kind = op.kind
    src = e.get(op.x)
    name = op.x.type.scalar.ir_name
    out: list[Reg] = []
    for a in src.regs:
        if name == "f32":
            out.append(_float_redux(e, kind, a))
            continue
        d = e.fn.reg("b32")
        ty = "b32" if kind in ("and", "or", "xor") else ("s32" if name == "i32" else "u32")
        e.fn.emit(insn.redux_sync(kind, ty, d, a, _FULL))
        out.append(d)
    e.set(op.result, out, src.layout)


def _float_redux(e: Emitter, kind: str, a: Reg) -> Reg:
    base, absolute = kind.removeprefix("abs_"), kind.startswith("abs_")
    d = e.fn.reg("f32")
    if e.target.compute_capability >= 100:
        e.fn.emit(insn.redux_sync(base, "f32", d, a, _FULL, absolute=absolute))
        return d
    if absolute:
        e.fn.emit(f"abs.f32 {d}, {a}")
        a, d = d, e.fn.reg("f32")
    for lane_mask in (16, 8, 4, 2, 1):
        other = shuffle(e, a, lane_mask)
        e.fn.emit(f"{base}.f32 {d}, {a}, {other}")
        a, d = d, e.fn.reg("f32")
    return a
