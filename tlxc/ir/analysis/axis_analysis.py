"""The axis analysis of a kernel: the rules of ``axis_info`` run over every op of a
``func``, loops to a fixed point (``analyze``), and the questions the code generators ask
of the result (``AxisInfoMap``: how wide a vector access may be, along which dim)."""

from __future__ import annotations

from typing import Callable, Sequence

from .. import ops
from ..core import Block, Operation, Value
from ..passes import evaluate as ev
from ..types import PointerType, TileType, Type
from .axis_info import (
    _LOOP_LIMIT,
    AxisInfo,
    _and,
    _cast,
    _choose,
    _cmp,
    _constant,
    _dims,
    _div_all,
    _div_every,
    _expand_dims,
    _fit,
    _fold,
    _hint,
    _idiv,
    _int_dtype,
    _is_pow2,
    _mul,
    _or_xor,
    _rem,
    _reshape,
    _scalar,
    _shift,
    _sum,
    _tracked,
    _unit,
    meet,
    pow2_divisor,
)

__all__ = ["AxisInfoMap", "analyze"]


class AxisInfoMap:
    """The result of ``analyze``: an ``AxisInfo`` for every integer and pointer value of
    the function (floats and other untracked values read as "nothing known")."""

    def __init__(self, infos: dict[Value, AxisInfo], assumed_non_negative: frozenset[Operation] = frozenset()) -> None:
        self._infos = infos
        #: the ``rem`` ops whose dividend is assumed non-negative (assumption (4) of the
        #: module docstring): the code generator must check each at run time
        self.assumed_non_negative = assumed_non_negative

    def __contains__(self, value: Value) -> bool:
        return value in self._infos

    def __len__(self) -> int:
        return len(self._infos)

    def info(self, value: Value) -> AxisInfo:
        found = self._infos.get(value)
        if found is not None:
            return found
        if _tracked(value.type):
            raise KeyError(f"no axis info for {value!r}: it is not a value of the analyzed function")
        return AxisInfo.unknown(len(_dims(value.type)))

    def vector_elements(self, ptr_value: Value, dim: int, elem_bytes: int, max_bytes: int = 16,
                        mask_value: Value | None = None) -> int:
        """How many consecutive elements along ``dim`` one thread can access with one
        vector instruction of at most ``max_bytes`` bytes (the target's limit, e.g. 16):
        the pointers' contiguity, their alignment in elements of ``elem_bytes`` bytes (the
        size accessed per element, normally the pointee's), ``max_bytes / elem_bytes`` and,
        given a mask, its constancy (a vector is masked as a whole). A power of two >= 1."""
        if not isinstance(ptr_value.type.scalar, PointerType):
            raise TypeError(f"vector_elements needs pointers, got {ptr_value.type}")
        if not _is_pow2(elem_bytes) or not _is_pow2(max_bytes):
            raise ValueError(f"elem_bytes ({elem_bytes}) and max_bytes ({max_bytes}) must be powers of two")
        info = self.info(ptr_value)
        if not 0 <= dim < info.rank:
            raise ValueError(f"dimension {dim} out of range for {ptr_value.type}")
        n = min(info.contiguity[dim], max(1, info.divisibility[dim] // elem_bytes), max(1, max_bytes // elem_bytes))
        if mask_value is not None:
            n = min(n, self.info(mask_value).constancy[dim])
        return n

    def vector_dim(self, ptr_value: Value, elem_bytes: int, max_bytes: int = 16,
                   mask_value: Value | None = None) -> tuple[int, int] | None:
        """``(dim, elements)`` when an access through the pointer tile ``ptr_value`` can be
        vectorized along a dim other than the last but not along the last one -- a
        ``[K, N]`` tile of a K-contiguous matrix (``b.T`` of a row-major ``[N, K]``
        ``b``): contiguity ``[8, 1]`` gives ``(0, 8)``. The dim with the widest vector
        wins (the lowest on a tie). None when the last dim vectorizes or none does."""
        rank = len(ptr_value.type.shape)
        if rank < 2 or self.vector_elements(ptr_value, rank - 1, elem_bytes, max_bytes, mask_value) > 1:
            return None
        best: tuple[int, int] | None = None
        for d in range(rank - 1):
            v = self.vector_elements(ptr_value, d, elem_bytes, max_bytes, mask_value)
            if v > 1 and (best is None or v > best[1]):
                best = (d, v)
        return best


def analyze(func: Operation) -> AxisInfoMap:
    """Axis info of every integer and pointer value of ``func`` (a verified ``func`` op)."""
    if func.NAME != "func":
        raise TypeError(f"analyze takes a 'func' op, got '{func.NAME}'")
    a = _Analyzer()
    assert isinstance(func, ops.FuncOp)
    divs = tuple(func.arg_divisibility) or (1,) * len(func.body.args)
    for arg, div in zip(func.body.args, divs):
        if isinstance(arg.type, TileType):  # only hand-written IR passes tiles: nothing known
            a.set(arg, AxisInfo.unknown(len(arg.type.shape)))
        elif isinstance(arg.type, PointerType):  # assumption (2): natural alignment at least
            a.set(arg, _scalar(max(pow2_divisor(max(int(div), 1)), _unit(arg.type))))
        else:
            a.set(arg, _scalar(pow2_divisor(max(int(div), 1))))
    a.block(func.body)
    return AxisInfoMap(a.infos, frozenset(a.assumed))


class _Analyzer:
    def __init__(self) -> None:
        self.infos: dict[Value, AxisInfo] = {}
        self.assumed: set[Operation] = set()  # rem ops relying on assumption (4)

    def get(self, v: Value) -> AxisInfo:
        info = self.infos.get(v)
        return info if info is not None else AxisInfo.unknown(len(_dims(v.type)))

    def set(self, v: Value, info: AxisInfo) -> None:
        if _tracked(v.type):
            self.infos[v] = _fit(info, v.type)

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        match op:
            case ops.ForOp():
                self.for_op(op)
            case ops.WhileOp():
                self.while_op(op)
            case ops.IfOp():
                self.if_op(op)
            case ops.SplitOp():
                x = self.get(op.x)
                src = op.x.type
                for r in op.results:
                    if len(src.shape) == 1:
                        self.set(r, AxisInfo((1,), (_div_every(x, _unit(src)),), (1,), x.constant, x.non_negative))
                    else:
                        self.set(r, AxisInfo(x.contiguity[:-1], x.divisibility[:-1], x.constancy[:-1], x.constant,
                                             x.non_negative))
            case _:
                for region in op.regions:  # ops this analysis does not know: nothing about their values
                    for b in region.blocks:
                        for arg in b.args:
                            self.set(arg, AxisInfo.unknown(len(_dims(arg.type))))
                        self.block(b)
                if len(op.results) == 1 and _tracked(op.result.type):
                    self.set(op.result, self.single(op))
                else:
                    for r in op.results:
                        self.set(r, AxisInfo.unknown(len(_dims(r.type))))

    def single(self, op: Operation) -> AxisInfo:
        """The rule for an op with one integer or pointer result."""
        t = op.result.type
        xs = [self.get(v) for v in op.operands]
        e = _int_dtype(t)
        match op:
            case ops.ConstantOp():
                v = ev.canonical(op.value, e) if e is not None else None
                return _constant(int(v), t) if isinstance(v, int) else AxisInfo.unknown(len(_dims(t)))
            case ops.ArangeOp():
                start, end = op.start, op.end
                return AxisInfo((end - start,), (pow2_divisor(start),), (1,), None, start >= 0)
            case ops.ProgramIdOp() | ops.NumProgramsOp():
                return _scalar(1, True)
            case ops.SplatOp():
                x = xs[0]
                dims = _dims(t)
                return AxisInfo((1,) * len(dims), (x.divisibility[0],) * len(dims), dims, x.constant,
                                x.non_negative)
            case ops.BroadcastOp():
                x, src = xs[0], _dims(op.x.type)
                return AxisInfo(
                    tuple(1 if s == 1 else c for s, c in zip(src, x.contiguity)),
                    x.divisibility,
                    tuple(n if s == 1 else k for s, n, k in zip(src, _dims(t), x.constancy)),
                    x.constant, x.non_negative)
            case ops.ExpandDimsOp():
                return _expand_dims(xs[0], op.x.type, op.axis, _unit(t))
            case ops.ReshapeOp():
                return _reshape(xs[0], op.x.type, t, bool(op.can_reorder), _unit(t))
            case ops.TransOp():
                x, order = xs[0], tuple(op.order)
                return AxisInfo(tuple(x.contiguity[i] for i in order), tuple(x.divisibility[i] for i in order),
                                tuple(x.constancy[i] for i in order), x.constant, x.non_negative)
            case ops.JoinOp():
                both = meet(xs[0], xs[1], _unit(t))
                every = min(_div_every(xs[0], _unit(t)), _div_every(xs[1], _unit(t)))
                k_last = 2 if both.constant is not None else 1
                if not op.lhs.type.shape:  # two scalars make a tile of 2
                    return AxisInfo((1,), (every,), (k_last,), both.constant, both.non_negative)
                return AxisInfo(both.contiguity + (1,), both.divisibility + (every,), both.constancy + (k_last,),
                                both.constant, both.non_negative)
            case ops.MultipleOfOp() | ops.MaxContiguousOp() | ops.MaxConstancyOp():
                return _hint(xs[0], op.NAME, op.values)
            case ops.ConvertLayoutOp():  # the same values, held by other threads
                return xs[0]
            case ops.AddPtrOp():
                p, off = xs
                if off.constant == 0:
                    return p
                return _sum(p, off, unit=_unit(t), scale=_unit(t))
            case ops.ConvertOp() | ops.BitcastOp() | ops.PtrToIntOp() | ops.IntToPtrOp():
                return _cast(xs[0], op.x.type, t)
            case ops.CmpOp():
                return _cmp(xs[0], xs[1], op.predicate, op.lhs.type, t)
            case ops.SelectOp():
                cond, a, b = xs
                if cond.constant is not None:
                    return a if cond.constant else b
                return _choose(a, b, _unit(t), cond.constancy)
            case ops.ReduceOp():
                return self.reduce(op, xs[0])
            case ops.RemOp() if e is not None and not xs[0].non_negative and _fold("rem", xs[0], xs[1], t) is None:
                return self.rem_assuming(op, xs[0], xs[1], t)
            case _ if op.NAME in ev.INT_BINARY and e is not None:
                return self.binary(op.NAME, xs[0], xs[1], t)
            case ops.NegOp() | ops.AbsOp() | ops.NotOp() if e is not None:
                x = xs[0]
                if x.constant is not None:
                    r = ev.eval_int_unary(op.NAME, x.constant, e)
                    return _constant(r, t) if r is not None else AxisInfo.unknown(x.rank)
                div = tuple(1 if op.NAME == "not" else _div_all(x, d) for d in range(x.rank))
                return AxisInfo((1,) * x.rank, div, x.constancy)
        return AxisInfo.unknown(len(_dims(t)))

    def binary(self, name: str, a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo:
        folded = _fold(name, a, b, t)
        if folded is not None:
            return folded
        match name:
            case "add" | "sub":
                return _sum(a, b, subtract=name == "sub")
            case "mul":
                return _mul(a, b, t)
            case "idiv":
                return _idiv(a, b, t)
            case "rem":
                return _rem(a, b, t)
            case "and":
                return _and(a, b, t)
            case "or" | "xor":
                return _or_xor(a, b)
            case "shl" | "shr":
                return _shift(name == "shl", a, b, t)
            case "minimum" | "maximum":
                r = _choose(a, b, 1)
                nn = (a.non_negative and b.non_negative) if name == "minimum" else (a.non_negative or b.non_negative)
                return AxisInfo(r.contiguity, r.divisibility, r.constancy, r.constant, nn)
        return AxisInfo.unknown(a.rank)

    def rem_assuming(self, op: Operation, a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo:
        """``a % b`` with a dividend not known to be non-negative: under assumption (4)
        when that gives longer runs (the op is then recorded, to be checked), else as proved."""
        proved = _rem(a, b, t)
        assumed = _rem(a, b, t, assume_non_negative=True)
        if assumed.contiguity == proved.contiguity:
            self.assumed.discard(op)
            return proved
        self.assumed.add(op)
        return assumed

    def reduce(self, op: ops.ReduceOp, x: AxisInfo) -> AxisInfo:
        """The reduced axis goes; equal slices along another axis reduce to equal values.
        Sums, extremes and xor-sums of multiples of ``D`` are multiples of ``D``; argmax and
        argmin are indices (non-negative)."""
        axis, kind = op.axis, op.kind
        arg = kind in ("argmax", "argmin")
        div = 1 if arg else _div_every(x)
        k = x.constancy[:axis] + x.constancy[axis + 1:]
        if not k:
            return _scalar(div, arg or x.non_negative)
        return AxisInfo((1,) * len(k), (div,) * len(k), k, None, arg or x.non_negative)

    # -- control flow ------------------------------------------------------------------
    def yielded(self, block: Block, start: int = 0) -> list[AxisInfo]:
        term = block.terminator
        return [self.get(v) for v in term.operands[start:]] if term is not None else []

    def loop(self, args: Sequence[Value], start: list[AxisInfo], body: Callable[[], list[AxisInfo]]) -> list[AxisInfo]:
        """Analyze a loop body until its carried values' infos stop changing; return them.

        Each round replaces the carried info by its meet with what the body yields, so
        the infos only decrease and the loop settles; at the fixed point the carried info
        covers the initial values and everything the body can yield (assumption 3)."""
        current = [_fit(i, a.type) for a, i in zip(args, start)]
        for _ in range(_LOOP_LIMIT):
            for a, i in zip(args, current):
                self.set(a, i)
            back = body()
            new = [_fit(meet(c, y, _unit(a.type)), a.type) for a, c, y in zip(args, current, back)]
            if new == current:
                return current
            current = new
        current = [AxisInfo.unknown(len(_dims(a.type))) for a in args]  # pragma: no cover - safety net
        for a, i in zip(args, current):  # pragma: no cover
            self.set(a, i)
        body()  # pragma: no cover
        return current  # pragma: no cover

    def for_op(self, op: ops.ForOp) -> None:
        """The induction variable is ``lb + i * step``: a multiple of what divides both, and
        non-negative when both are (a zero step is never built)."""
        lb, step = self.get(op.lb), self.get(op.step)
        body = op.body
        self.set(body.args[0], _scalar(min(_div_all(lb, 0), _div_all(step, 0)),
                                       lb.non_negative and step.non_negative))
        inits = [self.get(v) for v in op.inits]

        def run() -> list[AxisInfo]:
            self.block(body)
            return self.yielded(body)

        for r, info in zip(op.results, self.loop(body.args[1:], inits, run)):
            self.set(r, info)

    def while_op(self, op: ops.WhileOp) -> None:
        before, after = op.regions[0].block, op.regions[1].block

        def run() -> list[AxisInfo]:
            self.block(before)
            for a, i in zip(after.args, self.yielded(before, 1)):
                self.set(a, i)
            self.block(after)
            return self.yielded(after)

        self.loop(before.args, [self.get(v) for v in op.inits], run)
        for r, info in zip(op.results, self.yielded(before, 1)):
            self.set(r, info)

    def if_op(self, op: ops.IfOp) -> None:
        cond = self.get(op.cond)
        then, other = op.regions[0].block, op.regions[1].block
        self.block(then)
        self.block(other)
        a, b = self.yielded(then), self.yielded(other)
        for r, x, y in zip(op.results, a, b):
            if cond.constant is not None:
                self.set(r, x if cond.constant else y)
            else:
                self.set(r, meet(x, y, _unit(r.type)))
