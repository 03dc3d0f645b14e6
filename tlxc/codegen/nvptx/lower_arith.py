"""Lowering of constants and elementwise arithmetic, comparisons, selection, math and
conversions: each works register by register on tiles of one layout.

Conventions: 8- and 16-bit integers live in ``.b16`` registers, 8-bit values always
sign- or zero-extended to 16 bits (so comparisons, division and shifts see the right
value); i1 lives in predicates; f16/bf16/fp8 in ``.b16``. Transcendentals follow
Triton's NVIDIA choices: ``ex2.approx`` / ``lg2.approx`` based exp/log (``exp2`` is
``ex2.approx.ftz``, subnormal results flushed, as Triton's), ``sqrt.rn``,
``rsqrt.approx``, ``sin/cos.approx``; 16-bit floats compute them in f32. What has no
instruction (erf, round, float ``%``, the f64 transcendentals) is an instruction sequence
of ``lower_math``.
"""

from __future__ import annotations

import struct
from typing import Callable

import numpy as np

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.passes.rewrite import constant_of
from ...ir.types import DType, Kind, PointerType, float32
from .. import access
from . import const_division, lower_math
from .emitter import Emitter, lowers
from .ptx import Reg, int_suffix, reg_class

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


def f32_imm(v: float) -> str:
    return "0f" + struct.pack(">f", v).hex().upper()


def f64_imm(v: float) -> str:
    return "0d" + struct.pack(">d", v).hex().upper()


def imm(t: DType, v: float | int | bool) -> str:
    """An immediate operand of type ``t`` (for the b16 floats, its bit pattern)."""
    import numpy as np

    from ...ir.types import numpy_dtype

    if t.kind == Kind.FLOAT:
        if t.ir_name == "f32":
            return f32_imm(float(v))
        if t.ir_name == "f64":
            return f64_imm(float(v))
        bits = np.array([v], dtype=np.float32).astype(numpy_dtype(t)).view(np.uint8 if t.bits == 8 else np.uint16)
        return str(int(bits[0]))
    if t.kind == Kind.BOOL:
        return "1" if v else "0"
    return str(int(v) & ((1 << max(16, t.bits)) - 1)) if t.kind == Kind.UINT else str(int(v))


def mov(e: Emitter, t: DType | PointerType, value: str) -> Reg:
    cls = reg_class(t)
    r = e.fn.reg(cls)
    if cls == "pred":
        e.fn.emit(f"setp.ne.u32 {r}, {value}, 0")
    else:
        e.fn.emit(f"mov.{cls if cls.startswith('f') else 'b' + cls[1:]} {r}, {value}")
    return r


def normalize8(e: Emitter, t: DType, r: Reg) -> Reg:
    """Re-extend an 8-bit integer held in a 16-bit register after an op that may have
    produced carries into the upper byte."""
    if t.bits == 8 and t.kind != Kind.FLOAT:
        e.fn.emit(f"cvt.{'s' if t.kind == Kind.INT else 'u'}16.{'s' if t.kind == Kind.INT else 'u'}8 {r}, {r}")
    return r


def unsupported(e: Emitter, op: Operation, what: str) -> None:
    raise CompilationError("TLXC-CODEGEN-001", f"{what} cannot be compiled for {e.target.arch} yet", op.loc)


@lowers(ops.ConstantOp)
def constant(e: Emitter, op: Operation) -> None:
    t = op.result.type
    r = mov(e, t.scalar, imm(t.scalar, op.value))
    e.set(op.result, [r] * (t.layout.in_dim_size("register") if t.shape else 1))


def elementwise(e: Emitter, op: Operation, body: Callable[[list[Reg]], Reg]) -> None:
    """``op``'s result register by register, ``body`` emitting one. The ops lowered this
    way are pure, so registers whose operands are the same registers (a splat, a
    broadcast, a layout holding an element twice) share one result."""
    ins = [e.get(v).regs for v in op.operands]
    n = len(ins[0])
    for regs in ins:
        if len(regs) != n:
            raise AssertionError(f"{op.NAME}: operands hold {[len(r) for r in ins]} registers")
    done: dict[tuple[str, ...], Reg] = {}
    out = []
    for i in range(n):
        args = [regs[i] for regs in ins]
        key = tuple(r.name for r in args)
        if key not in done:
            done[key] = body(args)
        out.append(done[key])
    e.set(op.result, out)


def trap_if_negative(e: Emitter, regs: list[Reg], cls: str) -> None:
    """Stop the kernel (``trap``, at its exit: ``defer_trap``) if any of this thread's
    ``regs`` is negative: the run-time check of a ``%`` dividend that the axis analysis
    assumed non-negative (its assumption (4)), one OR of the values and one sign test per
    thread."""
    width = int(cls[1:])
    acc = None
    for r in dict.fromkeys(regs):
        if acc is None:
            acc = r
            continue
        d = e.fn.reg(cls)
        e.fn.emit(f"or.b{width} {d}, {acc}, {r}")
        acc = d
    p = e.fn.reg("pred")
    e.fn.emit(f"setp.lt.s{width} {p}, {acc}, 0")
    defer_trap(e, p)


#: Where the kernel leaves (its end, a warp-specialized partition's ``ret``): the deferred
#: trap goes there (``exit_checks``).
EXIT_MARK = "\t// tlxc: deferred checks"


def defer_trap(e: Emitter, p: Reg) -> None:
    """Trap at the kernel's exits if ``p`` was ever true here. A ``trap`` at the check
    itself is a branch on a per-thread predicate: ptxas then treats the rest of the
    kernel as divergent, keeps CTA-uniform values out of uniform registers and spends
    more registers (examples/matmul.py at 128x256x64: 234 registers and 133 instructions
    per loop iteration, 188 and 114 with the checks deferred). The kernel still fails --
    the launch reports the trap -- only after its stores instead of before them."""
    if e.failed_check is None:
        e.failed_check = e.fn.reg("pred")
        e.prologue.append(f"\tsetp.ne.u32 {e.failed_check}, 0, 0;")
    e.fn.emit(f"or.pred {e.failed_check}, {e.failed_check}, {p}")


def exit_checks(e: Emitter, lines: list[str]) -> list[str]:
    """``lines`` with each ``EXIT_MARK`` replaced by the deferred trap (or dropped)."""
    trap = [f"\t@{e.failed_check} trap;"] if e.failed_check is not None else []
    return [x for line in lines for x in (trap if line == EXIT_MARK else [line])]


_INT_OPS = {"add": "add", "sub": "sub", "mul": "mul.lo", "idiv": "div", "rem": "rem", "minimum": "min",
            "maximum": "max"}
_BIT_OPS = {"and": "and", "or": "or", "xor": "xor"}


@lowers(ops.AddOp, ops.SubOp, ops.MulOp, ops.IDivOp, ops.RemOp, ops.AndOp, ops.OrOp, ops.XorOp, ops.ShlOp,
        ops.ShrOp, ops.MinimumOp, ops.MaximumOp, ops.DivOp)
def binary(e: Emitter, op: Operation) -> None:
    t = op.result.type.scalar
    name = op.NAME
    cls = reg_class(t)

    if cls == "pred":
        table = {"and": "and.pred", "or": "or.pred", "xor": "xor.pred", "add": "xor.pred", "sub": "xor.pred",
                 "mul": "and.pred", "minimum": "and.pred", "maximum": "or.pred"}
        if name not in table:
            unsupported(e, op, f"'{name}' on i1")

        def pred_body(a: list[Reg]) -> Reg:
            d = e.fn.reg("pred")
            e.fn.emit(f"{table[name]} {d}, {a[0]}, {a[1]}")
            return d

        return elementwise(e, op, pred_body)

    if t.kind == Kind.FLOAT:
        return elementwise(e, op, lambda a: float_binary(e, op, t, name, a[0], a[1]))

    if name == "rem" and e.axis is not None and op in e.axis.assumed_non_negative:
        trap_if_negative(e, e.get(op.lhs).regs, cls)
    sums: dict[tuple[str, str], Reg] = {}  # x + base, once per pair (see offset_sum)
    divisor = constant_divisor(op, t) if name in ("idiv", "rem") and cls in ("b32", "b64") else None
    steps = None
    if divisor is not None:
        non_negative = e.axis is not None and op.lhs in e.axis and e.axis.info(op.lhs).non_negative
        steps = const_division.plan(divisor, t.bits, t.kind == Kind.INT,
                                    name == "rem", non_negative)

    def int_body(a: list[Reg]) -> Reg:
        if name == "add" and cls == "b32":
            d = offset_sum(e, a[0], a[1], sums)
            if d is not None:
                return d
        d = e.fn.reg(cls)
        s = int_suffix(t)
        if name in _BIT_OPS:
            e.fn.emit(f"{_BIT_OPS[name]}.b{max(16, t.bits)} {d}, {a[0]}, {a[1]}")
        elif name in ("shl", "shr"):
            amount = a[1]
            if cls != "b32":
                amount = e.fn.reg("b32")
                e.fn.emit(f"cvt.u32.u{max(16, t.bits)} {amount}, {a[1]}")
            kind = "shl.b" if name == "shl" else ("shr.s" if t.kind == Kind.INT else "shr.u")
            e.fn.emit(f"{kind}{max(16, t.bits)} {d}, {a[0]}, {amount}")
        elif steps is not None:
            return emit_division(e, steps, a[0], cls, t.bits)
        else:
            e.fn.emit(f"{_INT_OPS[name]}.{s} {d}, {a[0]}, {a[1] if divisor is None else divisor}")
        return normalize8(e, t, d)

    return elementwise(e, op, int_body)


def constant_divisor(op: Operation, t: DType) -> int | None:
    """The divisor of an integer ``//`` or ``%`` when it is a nonzero constant (a
    ``NUM_STAGES``, a ``GROUP_M``): such a division is a multiply-high and shifts
    (``const_division``), not ptxas's generic sequence (a conversion, an MUFU.RCP and a
    dozen integer ops on every loop trip, which it emits even for an immediate divisor)."""
    c = constant_of(op.rhs)
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or int(c) == 0:
        return None
    return int(c) & ((1 << t.bits) - 1) if t.kind == Kind.UINT else int(c)


def offset_sum(e: Emitter, a: Reg, b: Reg, sums: dict[tuple[str, str], Reg]) -> Reg | None:
    """``a + b`` (i32) where one side is known as ``base + c`` (``Emitter.offset_of``): computed
    as ``(other + base) + c`` so that the result is known the same way, the sum with the
    base shared by every register of the tile. None where neither side is known.

    This assumes that offsets do not wrap around i32, as Triton does: ``other + base`` is
    the sum less ``c >= 0``, so it wraps only if the sum does or lies within ``c`` of
    ``-2**31`` -- offsets that address nothing a kernel can access."""
    known, other = e.offset_of.get(a.name), b
    if known is None:
        known, other = e.offset_of.get(b.name), a
    if known is None or other.name in e.offset_of or known[1] < 0:
        return None
    base, c = known
    s = sums.get((other.name, base.name))
    if s is None:
        s = sums[other.name, base.name] = e.fn.reg("b32")
        e.fn.emit(f"add.s32 {s}, {other}, {base}")
    d = e.fn.reg("b32")
    e.fn.emit(f"add.s32 {d}, {s}, {c}")
    e.offset_of[d.name] = (s, c)
    return d


def float_binary(e: Emitter, op: Operation, t: DType, name: str, a: Reg, b: Reg,
                 propagate_nan: bool | None = None) -> Reg:
    """``a <name> b`` on floats; ``propagate_nan`` overrides the op's attribute for
    ``minimum``/``maximum`` (reductions always propagate: the IR's max/min reduce does)."""
    if t.bits == 8:
        unsupported(e, op, f"'{name}' on {t!r}")
    if name == "rem":  # C fmod, exact (lower_math); 16-bit floats through f32, which is exact too
        if t.bits == 16:
            return from_f32(e, t, lower_math.fmod(e, "f32", to_f32(e, t, a), to_f32(e, t, b)))
        return lower_math.fmod(e, t.ir_name, a, b)
    sfx = t.ir_name if t.ir_name in ("f16", "bf16", "f32", "f64") else None
    if name == "div" and t.bits == 16:
        fa, fb = to_f32(e, t, a), to_f32(e, t, b)
        q = e.fn.reg("f32")
        e.fn.emit(f"div.rn.f32 {q}, {fa}, {fb}")
        return from_f32(e, t, q)
    d = e.fn.reg(reg_class(t))
    if name in ("minimum", "maximum"):
        propagate = bool(op.attrs.get("propagate_nan")) if propagate_nan is None else propagate_nan
        ins = "min" if name == "minimum" else "max"
        if propagate and sfx == "f64":  # .NaN exists for f32/f16/bf16 only: select a NaN by hand
            m, either = e.fn.reg("f64"), e.fn.reg("pred")
            e.fn.emit(f"{ins}.f64 {m}, {a}, {b}")
            e.fn.emit(f"setp.nan.f64 {either}, {a}, {b}")
            e.fn.emit(f"add.f64 {d}, {a}, {b}")
            e.fn.emit(f"selp.f64 {d}, {d}, {m}, {either}")
        else:
            e.fn.emit(f"{ins}{'.NaN' if propagate else ''}.{sfx} {d}, {a}, {b}")
    elif name == "div":
        # Triton's choice: '/' is div.full.f32 (fast, ~2 ulp); tl.math.div_rn and f64 are IEEE
        fast = t.ir_name == "f32" and not op.attrs.get("precise", False)
        e.fn.emit(f"div.{'full' if fast else 'rn'}.{sfx} {d}, {a}, {b}")
    elif name in ("add", "sub", "mul"):
        # an explicit rounding mode keeps ptxas from contracting a*b + c into fma
        rn = ".rn" if (t.bits == 16 and t.ir_name == "bf16") or not e.fp_fusion else ""
        e.fn.emit(f"{name}{rn}.{sfx} {d}, {a}, {b}")
    else:
        unsupported(e, op, f"'{name}' on {t!r}")
    return d


def to_f32(e: Emitter, t: DType, r: Reg) -> Reg:
    if t.ir_name == "f32":
        return r
    d = e.fn.reg("f32")
    e.fn.emit(f"cvt.f32.{t.ir_name} {d}, {r}")
    return d


def from_f32(e: Emitter, t: DType, r: Reg, rounding: str = "rn") -> Reg:
    if t.ir_name == "f32":
        return r
    d = e.fn.reg(reg_class(t))
    e.fn.emit(f"cvt.{rounding}.{t.ir_name}.f32 {d}, {r}")
    return d


_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


@lowers(ops.CmpOp)
def cmp(e: Emitter, op: Operation) -> None:
    t = op.lhs.type.scalar
    pred = op.predicate

    def body(a: list[Reg]) -> Reg:
        d = e.fn.reg("pred")
        if isinstance(t, PointerType):
            e.fn.emit(f"setp.{_CMP[pred]}.u64 {d}, {a[0]}, {a[1]}")
        elif t.kind == Kind.BOOL:
            if pred not in ("eq", "ne"):
                x, y = bool_to_u32(e, a[0]), bool_to_u32(e, a[1])
                e.fn.emit(f"setp.{_CMP[pred]}.u32 {d}, {x}, {y}")
            else:
                e.fn.emit(f"xor.pred {d}, {a[0]}, {a[1]}")
                if pred == "eq":
                    e.fn.emit(f"not.pred {d}, {d}")
        elif t.kind == Kind.FLOAT:
            if t.bits == 8:
                unsupported(e, op, f"comparison of {t!r}")
            cond = "neu" if pred == "ne" else _CMP[pred]
            e.fn.emit(f"setp.{cond}.{t.ir_name} {d}, {a[0]}, {a[1]}")
        else:
            e.fn.emit(f"setp.{_CMP[pred]}.{int_suffix(t)} {d}, {a[0]}, {a[1]}")
        return d

    elementwise(e, op, body)


def bool_to_u32(e: Emitter, p: Reg) -> Reg:
    d = e.fn.reg("b32")
    e.fn.emit(f"selp.u32 {d}, 1, 0, {p}")
    return d


@lowers(ops.SelectOp)
def select(e: Emitter, op: Operation) -> None:
    t = op.result.type.scalar
    cls = reg_class(t)

    def body(a: list[Reg]) -> Reg:
        c, x, y = a
        d = e.fn.reg(cls)
        if cls == "pred":
            t1, t2 = e.fn.reg("pred"), e.fn.reg("pred")
            e.fn.emit(f"and.pred {t1}, {c}, {x}")
            e.fn.emit(f"not.pred {t2}, {c}")
            e.fn.emit(f"and.pred {t2}, {t2}, {y}")
            e.fn.emit(f"or.pred {d}, {t1}, {t2}")
        else:
            e.fn.emit(f"selp.{cls if cls.startswith('f') else 'b' + cls[1:]} {d}, {x}, {y}, {c}")
        return d

    elementwise(e, op, body)


@lowers(ops.NegOp, ops.NotOp, ops.AbsOp)
def unary(e: Emitter, op: Operation) -> None:
    t = op.result.type.scalar
    cls = reg_class(t)

    def body(a: list[Reg]) -> Reg:
        d = e.fn.reg(cls)
        if cls == "pred":
            e.fn.emit(f"{'not.pred' if op.NAME == 'not' else 'mov.pred'} {d}, {a[0]}")
        elif t.kind == Kind.FLOAT:
            if t.bits == 8:
                unsupported(e, op, f"'{op.NAME}' on {t!r}")
            e.fn.emit(f"{op.NAME}.{t.ir_name} {d}, {a[0]}")
        elif op.NAME == "not":
            e.fn.emit(f"not.b{max(16, t.bits)} {d}, {a[0]}")
        else:
            e.fn.emit(f"{op.NAME}.{int_suffix(t, True)} {d}, {a[0]}")
            normalize8(e, t, d)
        return d

    elementwise(e, op, body)


def _math_f32(e: Emitter, name: str, x: Reg) -> Reg | None:
    d = e.fn.reg("f32")
    if name == "exp":
        t = e.fn.reg("f32")
        e.fn.emit(f"mul.f32 {t}, {x}, {f32_imm(LOG2E)}")
        e.fn.emit(f"ex2.approx.f32 {d}, {t}")
    elif name == "exp2":  # as Triton's: flushes subnormal results to 0, one MUFU.EX2 (no range fix-up)
        e.fn.emit(f"ex2.approx.ftz.f32 {d}, {x}")
    elif name == "log":
        t = e.fn.reg("f32")
        e.fn.emit(f"lg2.approx.f32 {t}, {x}")
        e.fn.emit(f"mul.f32 {d}, {t}, {f32_imm(LN2)}")
    elif name == "log2":
        e.fn.emit(f"lg2.approx.f32 {d}, {x}")
    elif name == "sqrt":
        e.fn.emit(f"sqrt.rn.f32 {d}, {x}")
    elif name == "rsqrt":
        e.fn.emit(f"rsqrt.approx.f32 {d}, {x}")
    elif name in ("sin", "cos", "tanh"):
        e.fn.emit(f"{name}.approx.f32 {d}, {x}")
    elif name == "tan":
        s, c = e.fn.reg("f32"), e.fn.reg("f32")
        e.fn.emit(f"sin.approx.f32 {s}, {x}")
        e.fn.emit(f"cos.approx.f32 {c}, {x}")
        e.fn.emit(f"div.approx.f32 {d}, {s}, {c}")
    elif name in ("floor", "ceil", "trunc"):
        mode = {"floor": "rmi", "ceil": "rpi", "trunc": "rzi"}[name]
        e.fn.emit(f"cvt.{mode}.f32.f32 {d}, {x}")
    else:
        return None
    return d


@lowers(*ops.MATH_OPS.values())
def math(e: Emitter, op: Operation) -> None:
    t = op.result.type.scalar
    name = op.NAME

    def body(a: list[Reg]) -> Reg:
        if t.ir_name == "f64":
            if name == "sqrt":
                d = e.fn.reg("f64")
                e.fn.emit(f"sqrt.rn.f64 {d}, {a[0]}")
            elif name in ("floor", "ceil", "trunc"):
                d = e.fn.reg("f64")
                e.fn.emit(f"cvt.{ {'floor': 'rmi', 'ceil': 'rpi', 'trunc': 'rzi'}[name]}.f64.f64 {d}, {a[0]}")
            else:  # no PTX instruction (f64 has no .approx transcendentals): a routine
                r64 = lower_math.math(e, name, "f64", a[0])
                if r64 is None:
                    unsupported(e, op, f"tl.{name} on float64")
                return r64  # type: ignore[return-value]
            return d
        if t.bits == 8:
            unsupported(e, op, f"tl.{name} on {t!r}")
        x = to_f32(e, t, a[0])
        r = lower_math.math(e, name, "f32", x)  # erf, round: routines; the rest one instruction or two
        if r is None:
            r = _math_f32(e, name, x)
        if r is None:
            unsupported(e, op, f"tl.{name}")
        return from_f32(e, t, r)  # type: ignore[arg-type]

    elementwise(e, op, body)


@lowers(ops.FmaOp)
def fma(e: Emitter, op: Operation) -> None:
    t = op.result.type.scalar

    def body(a: list[Reg]) -> Reg:
        if t.bits == 8:
            unsupported(e, op, f"fma on {t!r}")
        d = e.fn.reg(reg_class(t))
        e.fn.emit(f"fma.rn.{t.ir_name} {d}, {a[0]}, {a[1]}, {a[2]}")
        return d

    elementwise(e, op, body)


@lowers(ops.BitcastOp)
def bitcast(e: Emitter, op: Operation) -> None:
    src, dst = op.x.type.scalar, op.result.type.scalar

    def body(a: list[Reg]) -> Reg:
        d = e.fn.reg(reg_class(dst))
        bits = 64 if isinstance(dst, PointerType) else max(16, dst.bits)
        if reg_class(src) == "pred" or reg_class(dst) == "pred":
            unsupported(e, op, "bitcast of i1")
        e.fn.emit(f"mov.b{bits} {d}, {a[0]}")
        if isinstance(dst, DType) and dst.bits == 8 and dst.kind != Kind.FLOAT:
            normalize8(e, dst, d)
        return d

    elementwise(e, op, body)


@lowers(ops.AddPtrOp)
def addptr(e: Emitter, op: Operation) -> None:
    elem = op.result.type.scalar.pointee
    size = elem.itemsize if isinstance(elem, DType) else 8
    off_t = op.offset.type.scalar
    scaled: dict[str, Reg] = {}  # a splat offset is scaled once
    based: dict[tuple[str, str], Reg] = {}  # pointer + scaled base, for offsets base + constant
    # base + immediate only for vector accesses: with one load per element, ptxas hoists
    # every load once their addresses are that cheap, and spills the loaded values
    vectors = access.pointer_vector_width(e.axis, op.result, size, e.target.max_vector_bytes) > 1
    # a 32-bit offset that differs per element, for vector accesses (a splat offset is
    # scaled once and added; with one load per element see above)
    widen = vectors and off_t.bits == 32 and not isinstance(op.offset.owner, ops.SplatOp)

    def body(a: list[Reg]) -> Reg:
        p, off = a
        d = e.fn.reg("b64")
        known = e.offset_of.get(off.name) if vectors else None
        if known is not None:  # p + base * size, then + constant bytes (an immediate to ptxas)
            base, c = known
            if base.name not in scaled:
                scaled[base.name] = _byte_offset(e, base, off_t, size)
            pb = based.get((p.name, base.name))
            if pb is None:
                pb = based[p.name, base.name] = e.fn.reg("b64")
                e.fn.emit(f"add.s64 {pb}, {p}, {scaled[base.name]}")
            e.fn.emit(f"add.s64 {d}, {pb}, {c * size}")
            return d
        if widen:  # one widening multiply-add: ptxas makes it a LEA pair, off the FMA pipe
            e.fn.emit(f"mad.wide.{'s' if off_t.kind == Kind.INT else 'u'}32 {d}, {off}, {size}, {p}")
            return d
        if off.name not in scaled:
            scaled[off.name] = _byte_offset(e, off, off_t, size)
        e.fn.emit(f"add.s64 {d}, {p}, {scaled[off.name]}")
        return d

    elementwise(e, op, body)


def _byte_offset(e: Emitter, off: Reg, off_t: DType, size: int) -> Reg:
    """``off * size`` as a 64-bit value (``off`` of any integer type, sign- or zero-extended)."""
    t = e.fn.reg("b64")
    sign = "s" if off_t.kind == Kind.INT else "u"
    if off_t.bits == 64:
        e.fn.emit(f"mul.lo.s64 {t}, {off}, {size}")
    elif off_t.bits == 32:
        e.fn.emit(f"mul.wide.{sign}32 {t}, {off}, {size}")
    else:
        w = e.fn.reg("b32")
        e.fn.emit(f"cvt.{sign}32.{int_suffix(off_t)} {w}, {off}")
        e.fn.emit(f"mul.wide.{sign}32 {t}, {w}, {size}")
    return t


@lowers(ops.PtrToIntOp, ops.IntToPtrOp)
def ptr_int(e: Emitter, op: Operation) -> None:
    dst = op.result.type.scalar

    def body(a: list[Reg]) -> Reg:
        d = e.fn.reg(reg_class(dst))
        e.fn.emit(f"mov.b64 {d}, {a[0]}")
        return d

    elementwise(e, op, body)


@lowers(ops.ConvertOp)
def convert(e: Emitter, op: Operation) -> None:
    src, dst = op.x.type.scalar, op.result.type.scalar
    rounding = "rz" if op.rounding == "rtz" else "rn"
    xs = e.get(op.x).regs
    if src == float32 and dst.ir_name in ("f16", "bf16") and len(xs) % 2 == 0:
        # two at a time (cvt.rn.f16x2.f32: one instruction for a pair, as the store wants them)
        pairs: dict[tuple[str, str], tuple[Reg, Reg]] = {}
        out: list[Reg] = []
        for i in range(0, len(xs), 2):
            key = (xs[i].name, xs[i + 1].name)
            if key not in pairs:
                w, lo, hi = e.fn.reg("b32"), e.fn.reg(reg_class(dst)), e.fn.reg(reg_class(dst))
                e.fn.emit(f"cvt.{rounding}.{dst.ir_name}x2.f32 {w}, {xs[i + 1]}, {xs[i]}")
                e.fn.emit(f"mov.b32 {{{lo}, {hi}}}, {w}")
                pairs[key] = (lo, hi)
            out += pairs[key]
        e.set(op.result, out)
        return
    elementwise(e, op, lambda a: convert_reg(e, op, src, dst, a[0], rounding))


def convert_reg(e: Emitter, op: Operation, src: DType, dst: DType, x: Reg, rounding: str = "rn") -> Reg:
    if src == dst:
        return x
    if dst.kind == Kind.BOOL:
        if src.kind == Kind.FLOAT and src.bits == 8:
            x, src = convert_fp8(e, op, src, float32, x, rounding), float32
        d = e.fn.reg("pred")
        if src.kind == Kind.FLOAT:
            z = to_f32(e, src, x) if src.ir_name != "f64" else x
            wide = src.ir_name == "f64"
            zero = "0d0000000000000000" if wide else imm(float32, 0.0)
            e.fn.emit(f"setp.neu.{'f64' if wide else 'f32'} {d}, {z}, {zero}")
        else:
            e.fn.emit(f"setp.ne.{int_suffix(src)} {d}, {x}, 0")
        return d
    if src.kind == Kind.BOOL:
        if dst.kind == Kind.FLOAT:
            f = e.fn.reg("f32")
            e.fn.emit(f"selp.f32 {f}, {f32_imm(1.0)}, {f32_imm(0.0)}, {x}")
            return convert_reg(e, op, float32, dst, f)
        d = e.fn.reg(reg_class(dst))
        e.fn.emit(f"selp.{int_suffix(dst)} {d}, 1, 0, {x}")
        return d
    if src.kind != Kind.FLOAT and dst.kind != Kind.FLOAT:
        return convert_int(e, src, dst, x)
    if src.kind != Kind.FLOAT:  # int -> float
        if dst.bits == 8 or dst.ir_name == "bf16":
            f = e.fn.reg("f32")
            e.fn.emit(f"cvt.rn.f32.{int_suffix(src)} {f}, {x}")
            return convert_reg(e, op, float32, dst, f)
        d = e.fn.reg(reg_class(dst))
        e.fn.emit(f"cvt.rn.{dst.ir_name}.{int_suffix(src)} {d}, {x}")
        return d
    if dst.kind != Kind.FLOAT:  # float -> int: truncate toward zero, saturating
        if src.bits == 8 or (src.ir_name == "bf16" and dst.bits == 8):  # no direct cvt for these pairs
            x, src = convert_reg(e, op, src, float32, x), float32
        d = e.fn.reg(reg_class(dst))
        ext = int_suffix(dst) if dst.bits >= 16 else int_suffix(dst).replace("16", "8")
        if dst.bits == 8:
            w = e.fn.reg("b16")
            e.fn.emit(f"cvt.rzi.sat.{ext}.{src.ir_name} {w}, {x}")  # saturate to the 8-bit range
            return normalize8(e, dst, w)
        e.fn.emit(f"cvt.rzi.{int_suffix(dst)}.{src.ir_name} {d}, {x}")
        return d
    # float -> float
    if dst.bits == 8 or src.bits == 8:
        return convert_fp8(e, op, src, dst, x, rounding)
    if src.ir_name == "f32" or dst.ir_name == "f32" or (src.ir_name == "f64" or dst.ir_name == "f64"):
        d = e.fn.reg(reg_class(dst))
        widening = dst.bits > src.bits
        e.fn.emit(f"cvt{'' if widening else '.' + rounding}.{dst.ir_name}.{src.ir_name} {d}, {x}")
        return d
    return from_f32(e, dst, to_f32(e, src, x), rounding)  # f16 <-> bf16


def convert_int(e: Emitter, src: DType, dst: DType, x: Reg) -> Reg:
    d = e.fn.reg(reg_class(dst))
    sb, db = max(16, src.bits), max(16, dst.bits)
    if db == sb:
        e.fn.emit(f"mov.b{db} {d}, {x}")
    elif db > sb:
        e.fn.emit(f"cvt.{int_suffix(dst)}.{int_suffix(src)} {d}, {x}")
    else:
        e.fn.emit(f"cvt.u{db}.u{sb} {d}, {x}")
    if dst.bits == 8:
        normalize8(e, dst, d)
    return d


def convert_fp8(e: Emitter, op: Operation, src: DType, dst: DType, x: Reg, rounding: str) -> Reg:
    fmt = {"f8e4m3": "e4m3", "f8e5m2": "e5m2"}
    if (src.bits == 8 and src.ir_name not in fmt) or (dst.bits == 8 and dst.ir_name not in fmt):
        unsupported(e, op, f"conversion between {src!r} and {dst!r} on NVIDIA (the fnuz fp8 formats are AMD's)")
    if dst.bits == 8:
        if rounding != "rn":
            unsupported(e, op, "round-toward-zero conversion to fp8")
        if src.bits == 8:  # fp8 -> another fp8: through f32 (exact)
            x, src = convert_fp8(e, op, src, float32, x, rounding), float32
        if src.ir_name == "f64":
            f = e.fn.reg("f32")
            e.fn.emit(f"cvt.rn.f32.f64 {f}, {x}")
        else:
            f = to_f32(e, src, x)
        zero = e.fn.reg("f32")
        e.fn.emit(f"mov.f32 {zero}, 0f00000000")
        d = e.fn.reg("b16")
        e.fn.emit(f"cvt.rn.satfinite.{fmt[dst.ir_name]}x2.f32 {d}, {zero}, {f}")
        e.fn.emit(f"and.b16 {d}, {d}, 255")
        return d
    pair = e.fn.reg("b32")
    e.fn.emit(f"cvt.rn.f16x2.{fmt[src.ir_name]}x2 {pair}, {x}")
    h = e.fn.reg("b16")
    e.fn.emit(f"cvt.u16.u32 {h}, {pair}")
    from ...ir.types import float16

    return convert_reg(e, op, float16, dst, h, rounding) if dst.ir_name != "f16" else h


_DIV_OPS = {"add": "add.s", "sub": "sub.s", "mul.lo": "mul.lo.s", "mul.hi.u": "mul.hi.u", "mul.hi.s": "mul.hi.s",
            "shr.u": "shr.u", "shr.s": "shr.s", "and": "and.b", "neg": "neg.s"}


def emit_division(e: Emitter, steps: list[const_division.Step], x: Reg, cls: str, bits: int) -> Reg:
    """The PTX of a ``const_division`` plan on ``x``; its result register."""
    env = {"x": x}
    for st in steps:
        d = e.fn.reg(cls)
        b: Reg | int | str | None = env[st.b] if isinstance(st.b, str) else st.b
        if isinstance(st.b, int) and st.op in ("mul.hi.u", "and"):
            b = hex(st.b & ((1 << bits) - 1))  # an unsigned bit pattern
        args = f"{env[st.a]}" + ("" if b is None else f", {b}")
        e.fn.emit(f"{_DIV_OPS[st.op]}{bits} {d}, {args}")
        env[st.dst] = d
    return env[steps[-1].dst]
