"""``scan`` on NVIDIA GPUs, in the layout the layout pass gives it
(``ir/passes/layouts.py:scan_layout``): each thread holds ``r`` consecutive positions of
a row in registers, and lane ``j`` of the ``l`` lanes along the axis the positions
``[j r, (j + 1) r)``; warps never move along the axis.

1. Each thread scans its registers in order, applying the combine region to registers.
2. The lanes scan their totals with shuffle-up steps of 1, 2, 4.. lanes (Hillis-Steele):
   lane ``j`` combines the total of lane ``j - d`` (when ``j >= d``) before its own.
3. Each element takes the inclusive total of the lane before (one more shuffle) in front.

A reverse scan does the same mirrored: positions from the last, shuffles down.
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.types import Kind
from ..scan_plan import scan_geometry
from .emitter import Emitter, lowers, register_coords
from .ptx import Reg


def refuse(op: Operation, arch: str, why: str) -> CompilationError:
    return CompilationError("TLXC-CODEGEN-001", f"'scan' cannot be compiled for {arch}: {why}", op.loc)


def _combine(e: Emitter, op: Operation, earlier: list[Reg], later: list[Reg]) -> list[Reg]:
    """The region on registers: its block arguments bound to ``earlier + later``."""
    body = op.regions[0].block
    for arg, reg in zip(body.args, earlier + later):
        e.set(arg, [reg])
    e.block(body)
    return [e.get(v).regs[0] for v in body.ops[-1].operands]


def _select(e: Emitter, p: Reg, a: Reg, b: Reg) -> Reg:
    """``p ? a : b``."""
    d = e.fn.reg(a.cls)
    e.fn.emit(f"selp.{a.cls if a.cls.startswith('f') else 'b' + a.cls[1:]} {d}, {a}, {b}, {p}")
    return d


def _shuffle(e: Emitter, r: Reg, delta: int, down: bool) -> Reg:
    """``r`` of lane ``laneid - delta`` (``+ delta`` when ``down``); out-of-range lanes
    get their own value, which the callers do not use."""
    mode, clamp = ("down", 31) if down else ("up", 0)

    def word(w: Reg) -> Reg:
        d = e.fn.reg("b32")
        e.fn.emit(f"shfl.sync.{mode}.b32 {d}, {w}, {delta}, {clamp}, -1")
        return d

    if r.cls in ("b32", "f32"):
        d = e.fn.reg(r.cls)
        e.fn.emit(f"shfl.sync.{mode}.b32 {d}, {r}, {delta}, {clamp}, -1")
        return d
    if r.cls == "b16":
        w, d = e.fn.reg("b32"), e.fn.reg("b16")
        e.fn.emit(f"cvt.u32.u16 {w}, {r}")
        e.fn.emit(f"cvt.u16.u32 {d}, {word(w)}")
        return d
    lo, hi = e.fn.reg("b32"), e.fn.reg("b32")
    e.fn.emit(f"mov.b64 {{{lo}, {hi}}}, {r}")
    d = e.fn.reg(r.cls)
    e.fn.emit(f"mov.b64 {d}, {{{word(lo)}, {word(hi)}}}")
    return d


@lowers(ops.ScanOp)
def scan(e: Emitter, op: Operation) -> None:
    srcs = [e.get(v) for v in op.operands]
    layout = srcs[0].layout
    assert layout is not None
    ax, reverse = op.axis, op.reverse
    for v in op.operands:
        if v.type.scalar.kind == Kind.BOOL:
            raise refuse(op, e.target.arch, "scanning i1 values is not supported yet; convert them to int32 first")
    geometry = scan_geometry(layout, ax)
    if geometry is None:
        raise refuse(op, e.target.arch, f"the layout {layout} does not hold the axis within a warp")
    _, lanes = geometry
    # 1. rows of this thread's registers, in scan order
    rows: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    first: dict[tuple[int, ...], int] = {}  # coordinate -> the register that holds it
    for i in range(len(srcs[0].regs)):
        c = register_coords(layout, i)
        if c in first:
            continue
        first[c] = i
        rows.setdefault(c[:ax] + c[ax + 1:], []).append((c[ax], i))
    out: dict[int, list[Reg]] = {}
    totals: dict[tuple[int, ...], list[Reg]] = {}
    for key, members in rows.items():
        members.sort(reverse=reverse)
        acc: list[Reg] | None = None
        for _, i in members:
            x = [s.regs[i] for s in srcs]
            acc = x if acc is None else _combine(e, op, acc, x)
            out[i] = acc
        assert acc is not None
        totals[key] = acc
    # 2. and 3. across the lanes along the axis
    if lanes > 1:
        j = e.fn.reg("b32")  # this lane's distance from the start of the scan, in lanes
        e.fn.emit(f"and.b32 {j}, {e.special('lane')}, {lanes - 1}")
        if reverse:
            e.fn.emit(f"sub.u32 {j}, {lanes - 1}, {j}")
        d = 1
        while d < lanes:
            p = e.fn.reg("pred")
            e.fn.emit(f"setp.ge.u32 {p}, {j}, {d}")
            for key, tot in totals.items():
                prev = [_shuffle(e, t, d, reverse) for t in tot]
                both = _combine(e, op, prev, tot)
                totals[key] = [_select(e, p, b, t) for b, t in zip(both, tot)]
            d *= 2
        p = e.fn.reg("pred")
        e.fn.emit(f"setp.ge.u32 {p}, {j}, 1")
        for key, members in rows.items():
            before = [_shuffle(e, t, 1, reverse) for t in totals[key]]
            for _, i in members:
                both = _combine(e, op, before, out[i])
                out[i] = [_select(e, p, b, x) for b, x in zip(both, out[i])]
    for k, r in enumerate(op.results):
        regs = [out[first[register_coords(layout, i)]][k] for i in range(len(srcs[0].regs))]
        e.set(r, regs)
