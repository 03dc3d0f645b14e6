"""``print`` (``tl.device_print``) on NVIDIA: one ``vprintf`` call per element a thread holds.

CUDA's device printf is ``vprintf(const char *format, void *args)`` (PTX ISA, "System
calls": ``vprintf``): ``args`` points at the values laid out as C passes varargs -- each
at its natural alignment, integers narrower than 32 bits widened to 32, floats promoted to
double. The runtime copies the format and the values into a buffer that the host prints
when the launch is synchronized.

For ``print %x, %y {prefix = " x: "}`` over a ``tile<128xi32>``, a thread of 4 warps
holding one element prints, for ``%x``::

    pid (%u, %u, %u) idx (%3u) x: (operand 0) %i\\n      <- .global byte array

with ``{ctaid.x, ctaid.y, ctaid.z, index, value}`` in a ``.local`` buffer (u32 each; an
8-byte value at the next multiple of 8). The index is the element's coordinate in the
tile, from the layout (``thread_coords`` xor the register's constant part), padded as
Triton pads it (ceil(log10(dim)) digits). Each operand has its own format string and
its own lines, as in Triton; every thread prints what it holds, so elements that several
threads hold (and scalars) print once per holder. Under ``hex`` the element's own bits
are printed (``0x%04x`` for 16-bit types, ``0x%016llx`` for 64-bit ones); Triton passes
floats promoted to double there, which prints their double's low bits.

The interpreter (``interpreter/rules/misc.py``) writes the same lines, each element once.
"""

from __future__ import annotations

import math

from ...ir.core import Operation
from ...ir.layout.linear import LinearLayout
from ...ir.types import DType, Kind, PointerType, TileType
from .emitter import Emitter, lowers, ops, register_coords
from .ptx import Reg

VPRINTF = (".extern .func (.param .b32 vprintf_retval) vprintf (.param .b64 vprintf_format, "
           ".param .b64 vprintf_args);")
BUFFER = "__local_buf"


def _global_string(e: Emitter, text: str) -> str:
    """The name of a ``.global`` NUL-terminated copy of ``text`` (one per distinct text)."""
    fn = e.fn
    name = fn.strings.get(text)
    if name is None:
        if not fn.strings:
            fn.module_decls.append(VPRINTF)
        name = fn.strings[text] = f"printf_format_{len(fn.strings)}"
        data = text.encode("ascii") + b"\0"
        fn.module_decls.append(f".global .align 1 .b8 {name}[{len(data)}] = {{{', '.join(map(str, data))}}};")
    return name


def _generic(e: Emitter, space: str, symbol: str) -> Reg:
    r = e.fn.reg("b64")
    e.fn.emit(f"mov.u64 {r}, {symbol}")
    e.fn.emit(f"cvta.{space}.u64 {r}, {r}")
    return r


def _conversion(t: DType | PointerType, hex: bool) -> tuple[str, int]:
    """printf's conversion for an element of ``t`` and the bytes the value takes in the
    argument buffer."""
    if isinstance(t, PointerType):
        return "%p", 8
    wide = t.bits == 64
    if hex:
        return f"0x%0{max(1, t.bits // 4)}{'ll' if wide else ''}x", 8 if wide else 4
    if t.kind == Kind.FLOAT:
        return "%f", 8  # promoted to double
    signed = t.kind in (Kind.INT, Kind.BOOL)
    return ("%ll" if wide else "%") + ("i" if signed else "u"), 8 if wide else 4


def _value(e: Emitter, reg: Reg, t: DType | PointerType, hex: bool) -> tuple[Reg, str]:
    """``reg`` as printf receives it, and the type to store it with."""
    fn = e.fn
    if isinstance(t, PointerType):
        return reg, "u64"
    if t.kind == Kind.BOOL:
        r = fn.reg("b32")
        fn.emit(f"selp.u32 {r}, 1, 0, {reg}")
        return r, "u32"
    if t.kind == Kind.FLOAT and not hex:
        if t.ir_name == "f64":
            return reg, "f64"
        d = fn.reg("f64")
        if t.ir_name == "bf16":  # through f32, which holds every bf16 exactly
            f = fn.reg("f32")
            fn.emit(f"cvt.f32.bf16 {f}, {reg}")
            fn.emit(f"cvt.f64.f32 {d}, {f}")
        else:
            fn.emit(f"cvt.f64.{t.ir_name} {d}, {reg}")
        return d, "f64"
    if t.bits == 64:
        if t.kind == Kind.FLOAT:
            r = fn.reg("b64")
            fn.emit(f"mov.b64 {r}, {reg}")
            return r, "u64"
        return reg, "u64"
    if t.bits == 32:
        if t.kind == Kind.FLOAT:
            r = fn.reg("b32")
            fn.emit(f"mov.b32 {r}, {reg}")
            return r, "u32"
        return reg, "u32"
    # 8- and 16-bit integers and the bits of f16 / bf16 live in .b16 registers
    r = fn.reg("b32")
    kind = "s" if (t.kind == Kind.INT and not hex) else "u"
    fn.emit(f"cvt.{kind}32.{kind}{t.bits} {r}, {reg}")
    return r, "u32"


def _call(e: Emitter, fmt: Reg, buf: Reg) -> None:
    # plain call (not call.uni): a print may sit in code that only some threads run
    e.fn.body += ["\t{", "\t.param .b64 vprintf_param_0;", f"\tst.param.b64 [vprintf_param_0], {fmt};",
                  "\t.param .b64 vprintf_param_1;", f"\tst.param.b64 [vprintf_param_1], {buf};",
                  "\t.param .b32 vprintf_retval_0;",
                  "\tcall (vprintf_retval_0), vprintf, (vprintf_param_0, vprintf_param_1);", "\t}"]


def _index(e: Emitter, layout: LinearLayout, dim: int, r: int, cache: dict[tuple[int, int], Reg]) -> Reg:
    """Register ``r``'s coordinate along ``dim``: the thread's part xor the register's."""
    c = register_coords(layout, r)[dim]
    t = e.thread_coords(layout, dim)
    got = cache.get((dim, c))
    if got is not None:
        return got
    d = e.fn.reg("b32")
    if isinstance(t, int):
        e.fn.emit(f"mov.u32 {d}, {c ^ t}")
    elif c:
        e.fn.emit(f"xor.b32 {d}, {t}, {c}")
    else:
        e.fn.emit(f"mov.u32 {d}, {t}")
    cache[(dim, c)] = d
    return d


@lowers(ops.PrintOp)
def device_print(e: Emitter, op: Operation) -> None:
    fn = e.fn
    prefix = op.prefix.replace("%", "%%")
    unit = "cluster" if e.num_ctas > 1 else "cta"  # a program is a cluster when num_ctas > 1
    pids = [e.special(f"{unit}id.{axis}") for axis in "xyz"]
    buf = _generic(e, "local", BUFFER)
    for i, p in enumerate(pids):
        fn.emit(f"st.local.u32 [{BUFFER}+{4 * i}], {p}")
    if not op.args:
        fmt = _generic(e, "global", _global_string(e, "pid (%u, %u, %u)" + prefix + "\n"))
        fn.local_bytes = max(fn.local_bytes, 16)
        _call(e, fmt, buf)
        return
    for k, v in enumerate(op.args):
        t = v.type
        shape = t.shape if isinstance(t, TileType) else ()
        widths = [math.ceil(math.log10(d)) if d > 0 else 0 for d in shape]
        conv, size = _conversion(t.scalar, op.hex)
        operand = f"(operand {k}) " if len(op.args) > 1 else ""
        text = ("pid (%u, %u, %u) idx (" + ", ".join(f"%{w}u" for w in widths) + ")" + prefix + operand + conv
                + "\n")
        fmt = _generic(e, "global", _global_string(e, text))
        offset = 4 * (3 + len(shape))
        offset = -(-offset // size) * size
        fn.local_bytes = max(fn.local_bytes, offset + size)
        got = e.get(v)
        cache: dict[tuple[int, int], Reg] = {}
        for r, reg in enumerate(got.regs):
            for d in range(len(shape)):
                fn.emit(f"st.local.u32 [{BUFFER}+{4 * (3 + d)}], {_index(e, got.layout, d, r, cache)}")
            value, st = _value(e, reg, t.scalar, op.hex)
            fn.emit(f"st.local.{st} [{BUFFER}+{offset}], {value}")
            _call(e, fmt, buf)


__all__ = ["device_print"]
