"""``scan`` on AMD GPUs, as on NVIDIA (``codegen/nvptx/lower_scan.py`` has the plan):
each lane scans its registers, the lanes along the axis scan their totals in steps of
1, 2, 4.. lanes, and each element takes the total of the lane before in front. Lanes
read another lane's value with ``ds_bpermute`` (``cross_lane.read_lane``), which spans
the whole wave (64 lanes on gfx942/gfx950, 32 on gfx1250)."""

from __future__ import annotations

import llvmlite.ir as ir

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ..scan_plan import scan_geometry
from . import cross_lane
from .emitter import Emitter, lowers, register_coords
from .llvm import I32


def _combine(e: Emitter, op: Operation, earlier: list[ir.Value], later: list[ir.Value]) -> list[ir.Value]:
    """The region on this lane's values: its block arguments bound to ``earlier + later``."""
    body = op.regions[0].block
    for arg, v in zip(body.args, earlier + later):
        e.set(arg, [v])
    e.block(body)
    return [e.get(v).vals[0] for v in body.ops[-1].operands]


@lowers(ops.ScanOp)
def scan(e: Emitter, op: Operation) -> None:
    srcs = [e.get(v) for v in op.operands]
    layout = srcs[0].layout
    assert layout is not None
    ax, reverse = op.axis, op.reverse
    geometry = scan_geometry(layout, ax)
    if geometry is None:
        raise CompilationError("TLXC-CODEGEN-001", f"'scan' cannot be compiled for {e.target.arch}: the layout "
                               f"{layout} does not hold the axis within a wave", op.loc)
    _, lanes = geometry
    # 1. rows of this lane's registers, in scan order
    rows: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    first: dict[tuple[int, ...], int] = {}
    for i in range(len(srcs[0].vals)):
        c = register_coords(layout, i)
        if c in first:
            continue
        first[c] = i
        rows.setdefault(c[:ax] + c[ax + 1:], []).append((c[ax], i))
    out: dict[int, list[ir.Value]] = {}
    totals: dict[tuple[int, ...], list[ir.Value]] = {}
    for key, members in rows.items():
        members.sort(reverse=reverse)
        acc: list[ir.Value] | None = None
        for _, i in members:
            x = [s.vals[i] for s in srcs]
            acc = x if acc is None else _combine(e, op, acc, x)
            out[i] = acc
        assert acc is not None
        totals[key] = acc
    # 2. and 3. across the lanes along the axis
    if lanes > 1:
        b = e.b
        lane = e.special("lane")
        j = b.and_(lane, ir.Constant(I32, lanes - 1))  # distance from the start of the scan, in lanes
        if reverse:
            j = b.sub(ir.Constant(I32, lanes - 1), j)

        def step(d: int) -> tuple[ir.Value, ir.Value]:
            src = b.add(lane, ir.Constant(I32, d)) if reverse else b.sub(lane, ir.Constant(I32, d))
            return b.icmp_unsigned(">=", j, ir.Constant(I32, d)), src

        d = 1
        while d < lanes:
            p, src = step(d)
            for key, tot in totals.items():
                prev = [cross_lane.read_lane(e, t, src) for t in tot]
                both = _combine(e, op, prev, tot)
                totals[key] = [b.select(p, x, t) for x, t in zip(both, tot)]
            d *= 2
        p, src = step(1)
        for key, members in rows.items():
            before = [cross_lane.read_lane(e, t, src) for t in totals[key]]
            for _, i in members:
                both = _combine(e, op, before, out[i])
                out[i] = [b.select(p, x, v) for x, v in zip(both, out[i])]
    for k, r in enumerate(op.results):
        e.set(r, [out[first[register_coords(layout, i)]][k] for i in range(len(srcs[0].vals))])
