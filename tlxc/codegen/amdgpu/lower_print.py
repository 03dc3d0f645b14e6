"""``print`` (``tl.device_print``) on AMD: each lane appends one record per element it holds
to the buffer the launcher passes as the kernel's last parameter.

The buffer and the records are laid out as ``runtime/device_print.py`` describes; the host
prints them after the launch. A record is reserved with one ``atomicrmw add`` on the
buffer's 64-bit counter (``global_atomic_add_x2`` with a returned value) and written with
plain stores where it fits in the capacity the header gives. Each operand of a print is one
*site* (its own lines, as on NVIDIA), described in the kernel's metadata for the host: the
prefix (with ``(operand k)`` when there are several), the index widths, and the value's
kind. Values are widened to 64 bits as printf would receive them: floats as an f64, integers
sign- or zero-extended by their signedness, booleans as 0/1, pointers as their address;
under ``hex`` the element's own bits.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from ...ir.core import Operation
from ...ir.types import DType, Kind, PointerType, TileType
from ...runtime.device_print import HEADER_BYTES, record_bytes
from .emitter import Emitter, lowers, ops, register_coords
from .llvm import I8, I32, I64

_COUNTER_ORDERING = 'syncscope("agent") monotonic'


def _kind(t: DType | PointerType, hex: bool) -> str:
    if isinstance(t, PointerType):
        return "p"
    if hex:
        return f"x{max(1, t.bits // 4)}"
    if t.kind == Kind.FLOAT:
        return "f"
    return "i" if t.kind in (Kind.INT, Kind.BOOL) else "u"


def _widened(e: Emitter, v: ir.Value, t: DType | PointerType, hex: bool) -> ir.Value:
    """``v`` (an element of type ``t``) as the record's 64 bits."""
    b = e.b
    if isinstance(t, PointerType):
        return b.ptrtoint(v, I64)
    if t.kind == Kind.FLOAT and not hex:
        d = v if t.bits == 64 else b.fpext(v, ir.DoubleType())
        return b.bitcast(d, I64)
    if not isinstance(v.type, ir.IntType):  # a float's own bits (hex)
        v = b.bitcast(v, ir.IntType(t.bits))
    if v.type.width == 64:
        return v
    signed = t.kind == Kind.INT and not hex
    return b.sext(v, I64) if signed else b.zext(v, I64)


def _record(e: Emitter, site: int, words: list[ir.Value], value: ir.Value | None, rank: int) -> None:
    """Reserve one record and write ``site``, ``words`` (pid and index) and ``value`` where
    it fits."""
    b, buf = e.b, e.print_buffer
    assert buf is not None
    size = record_bytes(rank, value is not None)
    capacity = e.in_entry("print-capacity", lambda eb: eb.load(
        eb.gep(buf, [ir.Constant(I64, 8)], source_etype=I8), typ=I64, align=8))
    at = b.atomic_rmw("add", buf, ir.Constant(I64, size), _COUNTER_ORDERING)
    fits = b.icmp_unsigned("<=", b.add(at, ir.Constant(I64, size)), capacity)
    write = e.fn.append_basic_block("print.write")
    done = e.fn.append_basic_block("print.done")
    b.cbranch(fits, write, done)
    b.position_at_end(write)
    base = b.gep(buf, [b.add(at, ir.Constant(I64, HEADER_BYTES))], source_etype=I8)
    for i, w in enumerate([ir.Constant(I32, site)] + words):
        b.store(w, b.gep(base, [ir.Constant(I64, 4 * i)], source_etype=I8), align=4)
    if value is not None:
        b.store(value, b.gep(base, [ir.Constant(I64, size - 8)], source_etype=I8), align=8)
    b.branch(done)
    b.position_at_end(done)


@lowers(ops.PrintOp)
def device_print(e: Emitter, op: Operation) -> None:
    pids = [e.special(f"pid{axis}") for axis in range(3)]
    if not op.args:
        e.print_sites.append({"prefix": op.prefix, "rank": 0, "widths": [], "kind": None})
        _record(e, len(e.print_sites) - 1, pids, None, 0)
        return
    for k, v in enumerate(op.args):
        t = v.type
        shape = t.shape if isinstance(t, TileType) else ()
        kind = _kind(t.scalar, op.hex)
        operand = f"(operand {k}) " if len(op.args) > 1 else ""
        e.print_sites.append({"prefix": op.prefix + operand, "rank": len(shape), "kind": kind,
                              "widths": [math.ceil(math.log10(d)) if d > 0 else 0 for d in shape]})
        site = len(e.print_sites) - 1
        got = e.get(v)
        for r, reg in enumerate(got.vals):
            index: list[ir.Value] = []
            for d in range(len(shape)):
                assert got.layout is not None
                c = register_coords(got.layout, r)[d]
                lane = e.thread_coords(got.layout, d)
                index.append(ir.Constant(I32, c ^ lane) if isinstance(lane, int)
                             else e.b.xor(lane, ir.Constant(I32, c)) if c else lane)
            _record(e, site, pids + index, _widened(e, reg, t.scalar, op.hex), len(shape))


__all__ = ["device_print"]
