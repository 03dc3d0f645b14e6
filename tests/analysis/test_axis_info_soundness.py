"""Axis info is sound: random kernels run on the CPU interpreter, and every value, each
time it is computed (loop bodies included), has the contiguity, divisibility, constancy,
constant and sign that the analysis claims.

The kernels are straight-line code over scalars and tiles of 4, 16, 4x16, 16x4 and 64
elements, with ``for`` and ``while`` loops and ``if``s, every integer op the analysis has a rule for,
shape ops and ``addptr``. Arguments honor their ``arg_divisibility``, as launches do, and
are often negative (the analysis never assumes an argument's sign). The one assumption
of the analysis that a random kernel could break, no wraparound, is kept by bounding
every value when the kernel is generated (``Gen.bound``) and checked at run time. The
other, a non-negative dividend where ``rem`` is listed in ``assumed_non_negative``, is
what the generated code checks on the GPU (it traps): a run whose dividend there is
negative stops being checked at that op, as the kernel would stop.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest
from axis_helpers import kernel

from tlxc.interpreter.compiler import CompiledBlock, Compiler
from tlxc.interpreter.memory import Memory
from tlxc.interpreter.registry import LaunchState
from tlxc.ir.analysis import MAX_DIVISIBILITY, AxisInfo, AxisInfoMap, analyze
from tlxc.ir.core import Block, Operation, Value
from tlxc.ir.parser import parse_ir
from tlxc.ir.types import PointerType
from tlxc.ir.verifier import verify

ARGS = "%a: i32, %b: i32, %c: i64, %p: ptr<f32>, %q: ptr<f16>"
CONSTANTS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 48, 64, 1024, -1, -4, -16, -63, 7, 15, 255, -256)
# divisors and masks that index arithmetic uses: powers of two, low masks, high masks
MASKS = (1, 2, 3, 4, 7, 8, 16, 48, 64, 15, 63, -4, -16, -64, -1)
SHAPES = ((16,), (4,), (4, 16))
LIMIT = {"i32": 1 << 30, "i64": 1 << 44, "i1": 1}
BINARY = ("add", "sub", "mul", "idiv", "rem", "and", "or", "xor", "shl", "shr", "minimum", "maximum")


@dataclass(frozen=True)
class V:
    """A value of the kernel being generated."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    bound: int = 0  # |value| <= bound (integers)
    nonzero: bool = False  # may divide
    shift: bool = False  # a constant in [0, 8): may shift
    carried: bool = False  # depends on a loop-carried value

    @property
    def type(self) -> str:
        if not self.shape:
            return self.dtype
        return "tile<" + "x".join(str(n) for n in self.shape) + "x" + self.dtype + ">"

    @property
    def is_int(self) -> bool:
        return not self.dtype.startswith("ptr")


class Gen:
    """Writes one random kernel as IR text."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.n = 0
        self.lines: list[str] = []
        self.indent = ""
        self.pool: list[V] = [
            V("a", "i32", (), 1 << 12, nonzero=True), V("b", "i32", (), 1 << 12, nonzero=True),
            V("c", "i64", (), 1 << 12, nonzero=True), V("p", "ptr<f32>", ()), V("q", "ptr<f16>", ()),
        ]

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def emit(self, text: str, v: V) -> V:
        self.lines.append(self.indent + f"%{v.name} = {text} : {v.type}")
        self.pool.append(v)
        return v

    def pick(self, pred: Any) -> V | None:
        found = [v for v in self.pool if pred(v)]
        return self.rng.choice(found) if found else None

    # -- ops --------------------------------------------------------------------------
    def constant(self) -> V | None:
        x = self.rng.choice(CONSTANTS)
        shape = self.rng.choice(((),) + SHAPES)
        dtype = self.rng.choice(("i32", "i64"))
        v = V(self.fresh(), dtype, shape, abs(x), nonzero=x != 0, shift=0 <= x < 8)
        return self.emit(f"constant {{value = {x}}}", v)

    def arange(self) -> V | None:
        start, n = self.rng.choice((0, 3, 4, 8, 16, 32)), self.rng.choice((4, 16))
        return self.emit(f"arange {{start = {start}, end = {start + n}}}", V(self.fresh(), "i32", (n,), start + n))

    def program_id(self) -> V | None:
        return self.emit("program_id {axis = 0}", V(self.fresh(), "i32", (), 8))

    def splat(self) -> V | None:
        x = self.pick(lambda v: not v.shape)
        if x is None:
            return None
        return self.emit(f"splat %{x.name}", replace(x, name=self.fresh(), shape=self.rng.choice(SHAPES)))

    def convert(self) -> V | None:
        x = self.pick(lambda v: v.dtype in ("i32", "i64", "i1"))
        if x is None:
            return None
        to = self.rng.choice([t for t in ("i32", "i64", "i1") if t != x.dtype])
        if to == "i32" and (x.bound >= LIMIT["i32"] or x.carried):
            return None
        bound = 1 if to == "i1" else x.bound
        return self.emit(f"convert %{x.name}", V(self.fresh(), to, x.shape, bound, x.nonzero and to != "i32",
                                                 x.shift, x.carried))

    def operand(self, like: V, need: str = "", constants: tuple[int, ...] = CONSTANTS) -> V | None:
        """A value of ``like``'s type: from the pool, or half the time a new constant or
        splat (what index arithmetic combines with), meeting ``need`` ("nonzero", "shift")."""
        ok = {"nonzero": lambda v: v.nonzero, "shift": lambda v: v.shift}.get(need, lambda v: True)
        if self.rng.random() < 0.5:
            found = self.pick(lambda v: v.type == like.type and ok(v))
            if found is not None:
                return found
        if like.dtype == "i1":
            return None
        scalars = [v for v in self.pool if not v.shape and v.dtype == like.dtype and ok(v)]
        if like.shape and scalars and self.rng.random() < 0.4:
            x = self.rng.choice(scalars)
            return self.emit(f"splat %{x.name}", replace(x, name=self.fresh(), shape=like.shape))
        values = [x for x in constants if (need != "nonzero" or x) and (need != "shift" or 0 <= x < 8)]
        x = self.rng.choice(values)
        return self.emit(f"constant {{value = {x}}}", V(self.fresh(), like.dtype, like.shape, abs(x), x != 0,
                                                       0 <= x < 8))

    def offsets(self) -> V | None:
        """``pid * BLOCK + arange(0, BLOCK)`` or ``arg * BLOCK + ...``: the usual offsets."""
        found = self.offsets_and_base()
        return found[0] if found else None

    def offsets_and_base(self) -> tuple[V, V] | None:
        n = self.rng.choice((4, 16))
        base = self.pick(lambda v: not v.shape and v.dtype == "i32" and v.bound <= 1 << 12)
        if base is None:
            return None
        k = self.rng.choice((1, 4, 8, 16, 64, 48))
        kc = self.emit(f"constant {{value = {k}}}", V(self.fresh(), "i32", (), k, True))
        m = self.emit(f"mul %{base.name}, %{kc.name}", V(self.fresh(), "i32", (), base.bound * k, carried=base.carried))
        s = self.emit(f"splat %{m.name}", replace(m, name=self.fresh(), shape=(n,)))
        start = self.rng.choice((0, 0, 4, 3))
        r = self.emit(f"arange {{start = {start}, end = {start + n}}}", V(self.fresh(), "i32", (n,), start + n))
        x = self.emit(f"add %{s.name}, %{r.name}", V(self.fresh(), "i32", (n,), s.bound + r.bound, carried=s.carried))
        return x, m

    def near(self, x: V, m: V) -> V:
        """A splat of ``m + C``: a bound that falls inside or next to the offsets ``x``."""
        k = self.rng.choice((0, 0, 4, 16, 3))
        c = self.emit(f"constant {{value = {k}}}", V(self.fresh(), "i32", (), 16))
        t = self.emit(f"add %{m.name}, %{c.name}", replace(m, name=self.fresh(), bound=m.bound + 16, nonzero=False))
        return self.emit(f"splat %{t.name}", replace(t, name=self.fresh(), shape=x.shape))

    def index_math(self) -> V | None:
        """Offsets, then ``% C``, ``// C``, ``& C``, ``>> s``, a compare with a bound near
        them, or a select by such a compare: the rules with the most conditions."""
        found = self.offsets_and_base()
        if found is None:
            return None
        x, m = found
        if self.rng.random() < 0.3:  # may go negative
            x = self.arith("sub", x, self.operand(x))
        name = self.rng.choice(("rem", "idiv", "and", "shr", "cmp", "cmp", "select"))
        if name in ("cmp", "select"):
            b = self.near(x, m) if self.rng.random() < 0.6 else self.operand(x)
            pred = self.rng.choice(("eq", "ne", "lt", "le", "gt", "ge"))
            lhs, rhs = (x, b) if self.rng.random() < 0.5 else (b, x)
            cond = self.emit(f'cmp %{lhs.name}, %{rhs.name} {{predicate = "{pred}"}}',
                             V(self.fresh(), "i1", x.shape, 1))
            if name == "cmp":
                return cond
            other = self.arith("add", x, self.operand(x))
            return self.emit(f"select %{cond.name}, %{x.name}, %{other.name}", replace(other, name=self.fresh()))
        need = {"rem": "nonzero", "idiv": "nonzero", "shr": "shift"}.get(name, "")
        if self.rng.random() < 0.6:
            k = self.rng.choice([k for k in MASKS if (need != "nonzero" or k) and (need != "shift" or 0 <= k < 8)])
            b = self.emit(f"constant {{value = {k}}}", V(self.fresh(), x.dtype, x.shape, abs(k), k != 0, 0 <= k < 8))
        else:
            b = self.operand(x, need, MASKS)
        assert b is not None
        return self.arith(name, x, b)

    def arith(self, name: str, a: V, b: V) -> V:
        v = V(self.fresh(), a.dtype, a.shape, self.bound(name, a, b), carried=a.carried or b.carried)
        return self.emit(f"{name} %{a.name}, %{b.name}", v)

    def binary(self) -> V | None:
        name = self.rng.choice(BINARY)
        tiles = self.rng.random() < 0.6  # mostly the interesting case: tiles with runs
        a = self.pick(lambda v: v.is_int and (v.dtype != "i1" or name in ("and", "or", "xor"))
                      and (bool(v.shape) or not tiles))
        if a is None:
            return None
        b = self.operand(a, {"idiv": "nonzero", "rem": "nonzero", "shl": "shift", "shr": "shift"}.get(name, ""))
        if b is None:
            return None
        if name in ("mul", "shl") and (a.carried or b.carried):
            return None  # loop-carried products could grow past the bounds
        if self.bound(name, a, b) > LIMIT[a.dtype]:
            return None
        return self.arith(name, a, b)

    @staticmethod
    def bound(name: str, a: V, b: V) -> int:
        match name:
            case "add" | "sub":
                return a.bound + b.bound
            case "mul":
                return a.bound * b.bound
            case "shl":
                return a.bound << 7
            case "idiv" | "shr" | "rem":
                return a.bound
            case "minimum" | "maximum":
                return max(a.bound, b.bound)
        return 2 * max(a.bound, b.bound, 1)  # and, or, xor: within the next power of two

    def cmp(self) -> V | None:
        a = self.pick(lambda v: v.is_int and v.dtype != "i1")
        b = a and self.operand(a)
        if a is None or b is None:
            return None
        if self.rng.random() < 0.5:
            a, b = b, a
        pred = self.rng.choice(("eq", "ne", "lt", "le", "gt", "ge"))
        return self.emit(f'cmp %{a.name}, %{b.name} {{predicate = "{pred}"}}',
                         V(self.fresh(), "i1", a.shape, 1, carried=a.carried or b.carried))

    def select(self) -> V | None:
        c = self.pick(lambda v: v.dtype == "i1")
        a = c and self.pick(lambda v: v.shape == c.shape and v.dtype != "i1")
        b = a and (self.operand(a) if a.is_int else self.pick(lambda v: v.type == a.type))
        if c is None or a is None or b is None:
            return None
        v = replace(a, name=self.fresh(), bound=max(a.bound, b.bound), nonzero=a.nonzero and b.nonzero,
                    shift=a.shift and b.shift, carried=a.carried or b.carried or c.carried)
        return self.emit(f"select %{c.name}, %{a.name}, %{b.name}", v)

    def addptr(self) -> V | None:
        p = self.pick(lambda v: not v.is_int)
        o = p and self.pick(lambda v: v.shape == p.shape and v.dtype in ("i32", "i64"))
        if p is None or o is None:
            return None
        return self.emit(f"addptr %{p.name}, %{o.name}", replace(p, name=self.fresh(), carried=p.carried or o.carried))

    def shape_op(self) -> V | None:
        x = self.pick(lambda v: len(v.shape) >= 1)
        if x is None:
            return None
        s = x.shape
        choices: list[tuple[str, tuple[int, ...]]] = []
        if len(s) == 1:
            choices += [("expand_dims {axis = 0}", (1,) + s), ("expand_dims {axis = 1}", s + (1,))]
        if s == (16,):
            choices += [("reshape", (4, 4)), ("reshape", (1, 16))]
        if s in ((1, 16), (16, 1), (4, 1)):
            choices.append(("reshape", (s[0] * s[1],)))
        if s == (4, 16):
            choices += [("reshape", (64,)), ("trans {order = [1, 0]}", (16, 4)),
                        ("reshape {can_reorder = true}", (64,))]
        if s == (64,):
            choices.append(("reshape", (4, 16)))
        if s in ((1, 16), (4, 1)):
            choices.append(("broadcast", (4, 16)))
        if s == (16, 1):
            choices.append(("broadcast", (16, 4)))
        if not choices:
            return None
        text, shape = self.rng.choice(choices)
        op, _, attrs = text.partition(" ")
        return self.emit(f"{op} %{x.name}{' ' + attrs if attrs else ''}", replace(x, name=self.fresh(), shape=shape))

    def join_split(self) -> V | None:
        a = self.pick(lambda v: v.shape == (16,))
        b = a and self.pick(lambda v: v.type == a.type)
        if a is None or b is None:
            return None
        j = replace(a, name=self.fresh(), shape=(16, 2), bound=max(a.bound, b.bound), nonzero=False,
                    carried=a.carried or b.carried)
        self.emit(f"join %{a.name}, %{b.name}", j)
        lo, hi = replace(j, name=self.fresh(), shape=(16,)), replace(j, name=self.fresh(), shape=(16,))
        self.lines.append(self.indent + f"%{lo.name}, %{hi.name} = split %{j.name} : {lo.type}, {hi.type}")
        self.pool += [lo, hi]
        return hi

    def reduce(self) -> V | None:
        x = self.pick(lambda v: v.is_int and v.dtype != "i1" and len(v.shape) >= 1)
        if x is None:
            return None
        axis = self.rng.randrange(len(x.shape))
        kind = self.rng.choice(("sum", "max", "min", "argmax", "argmin", "xor_sum"))
        shape = x.shape[:axis] + x.shape[axis + 1:]
        if kind in ("argmax", "argmin"):
            v = V(self.fresh(), "i32", shape, x.shape[axis], carried=x.carried)
        else:
            bound = x.bound * x.shape[axis] if kind == "sum" else 2 * x.bound
            if bound > LIMIT[x.dtype]:
                return None
            v = V(self.fresh(), x.dtype, shape, bound, carried=x.carried)
        return self.emit(f'reduce %{x.name} {{axis = {axis}, kind = "{kind}"}}', v)

    def simple(self) -> None:
        ops = (self.constant, self.arange, self.splat, self.convert, self.program_id, self.offsets,
               self.binary, self.binary, self.binary, self.binary, self.binary, self.binary,
               self.index_math, self.index_math, self.cmp, self.cmp, self.select, self.addptr, self.addptr,
               self.shape_op, self.shape_op, self.join_split, self.reduce)
        for _ in range(20):
            if self.rng.choice(ops)() is not None:
                return

    # -- regions ----------------------------------------------------------------------
    def region(self, args: list[V], yields: list[V], n_ops: int, counter: V | None = None) -> list[V]:
        """Ops of a nested block; yields values of the types of ``yields``, the first one
        ``counter + 1`` when a counter is given (a ``while`` body)."""
        saved, outer = self.indent, list(self.pool)
        self.indent += "  "
        self.lines.append(saved + "^(" + ", ".join(f"%{v.name}: {v.type}" for v in args) + "):")
        self.pool += args
        for _ in range(n_ops):
            self.simple()
        out = [self.pick(lambda v, y=y: v.type == y.type) or y for y in yields]
        if counter is not None:
            one = self.emit("constant {value = 1}", V(self.fresh(), "i64", (), 1))
            out[0] = self.emit(f"add %{counter.name}, %{one.name}", replace(counter, name=self.fresh()))
        self.lines.append(self.indent + "yield " + ", ".join(f"%{v.name}" for v in out))
        self.pool, self.indent = outer, saved
        return out

    def for_loop(self) -> None:
        inits = [v for v in (self.pick(lambda v: v.dtype in ("i64", "ptr<f32>", "ptr<f16>")) for _ in range(2)) if v]
        if not inits:
            return
        lb, step, trips = self.rng.choice((0, 2, 16, -8)), self.rng.choice((1, 3, 16, 32)), self.rng.randint(0, 3)
        names = []
        for x in (lb, lb + trips * step, step):
            v = self.emit(f"constant {{value = {x}}}", V(self.fresh(), "i32", (), abs(x)))
            names.append(f"%{v.name}")
        results = [replace(v, name=self.fresh(), bound=LIMIT["i64"], carried=True) for v in inits]
        self.lines.append(self.indent + ", ".join(f"%{r.name}" for r in results) + " = for "
                          + ", ".join(names + [f"%{v.name}" for v in inits]) + " : "
                          + ", ".join(v.type for v in inits) + " {")
        iv = V(self.fresh(), "i32", (), abs(lb) + trips * step + 1)
        # Carried values grow each round, but only through add, sub, or and xor (``binary``
        # refuses products of them) in at most 5 ops and 3 rounds: a factor 2**15 at most,
        # which i64 has room for; the results count as being at the limit.
        args = [replace(v, name=self.fresh(), carried=True, nonzero=False, shift=False) for v in inits]
        self.region([iv] + args, inits, self.rng.randint(1, 5))
        self.lines.append(self.indent + "}")
        self.pool += results

    def while_loop(self) -> None:
        """``while n < L`` with a counter ``n`` and one more carried value."""
        x = self.pick(lambda v: v.dtype in ("i64", "ptr<f32>", "ptr<f16>"))
        if x is None:
            return
        n0 = self.emit("constant {value = 0}", V(self.fresh(), "i64", (), 0))
        results = [V(self.fresh(), "i64", (), 3, carried=True),
                   replace(x, name=self.fresh(), bound=LIMIT["i64"], carried=True, nonzero=False, shift=False)]
        self.lines.append(self.indent + f"%{results[0].name}, %{results[1].name} = while %{n0.name}, %{x.name} : "
                          f"i64, {x.type} {{")
        n, y = V(self.fresh(), "i64", (), 3, carried=True), replace(results[1], name=self.fresh())
        limit, go = self.fresh(), self.fresh()
        inner = self.indent + "  "
        self.lines += [
            self.indent + f"^(%{n.name}: i64, %{y.name}: {y.type}):",
            inner + f"%{limit} = constant {{value = {self.rng.randint(0, 3)}}} : i64",
            inner + f'%{go} = cmp %{n.name}, %{limit} {{predicate = "lt"}} : i1',
            inner + f"condition %{go}, %{n.name}, %{y.name}",
            self.indent + "} {",
        ]
        n2, y2 = replace(n, name=self.fresh()), replace(y, name=self.fresh())
        self.region([n2, y2], [n2, y2], self.rng.randint(1, 4), counter=n2)
        self.lines.append(self.indent + "}")
        self.pool += results

    def if_op(self) -> None:
        cond = self.pick(lambda v: v.dtype == "i1" and not v.shape)
        outs = [v for v in (self.pick(lambda v: v.dtype != "i1") for _ in range(2)) if v]
        if cond is None or not outs:
            return
        results = [replace(v, name=self.fresh(), nonzero=False, shift=False) for v in outs]
        self.lines.append(self.indent + ", ".join(f"%{r.name}" for r in results) + f" = if %{cond.name} : "
                          + ", ".join(v.type for v in outs) + " {")
        a = self.region([], outs, self.rng.randint(0, 3))
        self.lines.append(self.indent + "} {")
        b = self.region([], outs, self.rng.randint(0, 3))
        self.lines.append(self.indent + "}")
        self.pool += [replace(r, bound=max(x.bound, y.bound), carried=x.carried or y.carried)
                      for r, x, y in zip(results, a, b)]

    def kernel(self, n_ops: int) -> str:
        for _ in range(n_ops):
            r = self.rng.random()
            if r < 0.07:
                self.for_loop()
            elif r < 0.1:
                self.while_loop()
            elif r < 0.15:
                self.if_op()
            else:
                self.simple()
        return "\n".join(self.lines)


# -- checking ---------------------------------------------------------------------------
def _tracked(v: Value) -> bool:
    e = v.type.scalar
    return isinstance(e, PointerType) or e.kind.name != "FLOAT"


def violations(x: np.ndarray, info: AxisInfo, unit: int) -> list[str]:
    """How the concrete value ``x`` breaks ``info`` (empty when it does not)."""
    a = np.asarray(x).astype(np.int64).reshape(x.shape or (1,))
    out = []
    for d in range(a.ndim):
        m = np.moveaxis(a, d, -1)
        n = m.shape[-1]
        c, k, div = info.contiguity[d], info.constancy[d], info.divisibility[d]
        runs = m.reshape(m.shape[:-1] + (n // c, c))
        if np.any(np.diff(runs, axis=-1) != unit):
            out.append(f"dim {d}: not in runs of {c}")
        chunks = m.reshape(m.shape[:-1] + (n // k, k))
        if np.any(chunks != chunks[..., :1]):
            out.append(f"dim {d}: not constant in chunks of {k}")
        if np.any(m[..., ::c] % div):
            out.append(f"dim {d}: run starts not multiples of {div}")
    if info.constant is not None and np.any(a != info.constant):
        out.append(f"not the constant {info.constant}")
    if info.non_negative and np.any(a < 0):
        out.append("negative")
    return out


class CheckingCompiler(Compiler):
    """The interpreter's compiler with a check of every result and block argument."""

    def __init__(self, state: LaunchState, infos: AxisInfoMap) -> None:
        super().__init__(state)
        self.infos = infos
        self.failures: list[str] = []
        self.largest = 0
        self.trapped = False  # a checked assumption failed: the GPU kernel stops there

    def compare(self, env: list[Any], pairs: list[tuple[int, Value]]) -> None:
        if self.trapped:
            return
        for slot, value in pairs:
            x = np.asarray(env[slot])
            unit = value.type.scalar.pointee.itemsize if isinstance(value.type.scalar, PointerType) else 1
            if unit == 1:
                self.largest = max(self.largest, int(np.max(np.abs(x.astype(np.int64)))))
            for why in violations(x, self.infos.info(value), unit):
                self.failures.append(f"{value.name_hint or value}: {why}; info {self.infos.info(value)}; "
                                     f"value {x.tolist()}")

    def block(self, block: Block) -> CompiledBlock:
        compiled = super().block(block)
        pairs = [(self.slot(a), a) for a in block.args if _tracked(a)]
        return CompiledBlock(compiled.arg_slots, (lambda env: self.compare(env, pairs),) + compiled.steps,
                             compiled.term_slots, compiled.terminator)

    def op(self, op: Operation) -> Any:
        step = super().op(op)
        pairs = [(self.slot(r), r) for r in op.results if _tracked(r)]
        dividend = self.slot(op.operands[0]) if op in self.infos.assumed_non_negative else None

        def checked(env: list[Any]) -> None:
            if dividend is not None and np.any(np.asarray(env[dividend]) < 0):
                self.trapped = True
            step(env)
            self.compare(env, pairs)

        return checked


def arguments(rng: random.Random, div: tuple[int, ...]) -> list[np.ndarray]:
    def integer(d: int, dtype: Any) -> np.ndarray:
        x = 0
        while x == 0:
            x = rng.choice((rng.randint(-64, 64), rng.randint(-4096, 4096))) * d
        return np.asarray(x, dtype)

    def pointer(d: int) -> np.ndarray:
        return np.asarray((1 << 30) + d * rng.randint(1, 1 << 12), np.int64)

    return [integer(div[0], np.int32), integer(div[1], np.int32), integer(div[2], np.int64),
            pointer(max(div[3], 4)), pointer(max(div[4], 2))]


@pytest.mark.parametrize("seed", range(60))
def test_random_kernels_never_break_their_axis_info(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(4):
        div = tuple(rng.choice((1, 16)) for _ in range(5))
        body = Gen(rng).kernel(rng.randint(8, 24))
        text = kernel(body, ARGS, div)
        module = parse_ir(text)
        verify(module)
        func = module.funcs[0]  # type: ignore[attr-defined]
        infos = analyze(func)
        for _ in range(3):
            state = LaunchState(Memory([]), (8, 1, 1))
            state.pid = (np.asarray(rng.randint(0, 7), np.int32), np.asarray(0, np.int32), np.asarray(0, np.int32))
            compiler = CheckingCompiler(state, infos)
            compiled = compiler.block(func.body)
            env: list[Any] = [None] * compiler.num_slots
            with np.errstate(all="ignore"):
                compiled.run(env, arguments(rng, div))
            assert compiler.largest < 1 << 62, "a value may have wrapped around: Gen.bound is wrong"
            assert not compiler.failures, "\n".join([text, *compiler.failures[:5]])


def test_the_checker_sees_wrong_claims() -> None:
    x = np.arange(8, dtype=np.int32) + 4
    assert violations(x, AxisInfo((8,), (4,), (1,)), 1) == []
    assert violations(x, AxisInfo((8,), (8,), (1,)), 1) == ["dim 0: run starts not multiples of 8"]
    assert violations(x, AxisInfo((1,), (1,), (2,)), 1) == ["dim 0: not constant in chunks of 2"]
    assert violations(np.zeros(4, np.int64), AxisInfo((1,), (MAX_DIVISIBILITY,), (4,), 0, True), 1) == []
    assert violations(x - 5, AxisInfo((8,), (1,), (1,), None, True), 1) == ["negative"]
