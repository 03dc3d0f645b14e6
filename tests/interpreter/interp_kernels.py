"""Building small kernels for the interpreter tests, straight on ``tlxc.ir.Builder``.

``KernelBuilder`` wraps the builder with one method per op the tests use; every op gets
the location ``kernel.py:<line>:5`` where ``line`` is the builder's current line (set
with ``at``), so error tests can check the reported line. ``elementwise`` runs one op
over whole arrays through load/op/store, and also over scalar arguments, and checks both
paths agree.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tlxc.interpreter import run_kernel
from tlxc.ir import Block, Builder, Location, Operation, Region, Value
from tlxc.ir import types as T
from tlxc.ir.ops import arith as A
from tlxc.ir.ops import control as C
from tlxc.ir.ops import memory as M
from tlxc.ir.ops import shape as S
from tlxc.ir.types import DType, Type

FILE = "kernel.py"


class KernelBuilder:
    def __init__(self, params: Sequence[tuple[str, Type]], name: str = "kernel") -> None:
        block = Block([t for _, t in params], [n for n, _ in params])
        self.func = C.FuncOp([], [], {"sym_name": name}, [Region(block)])
        self.b = Builder(block, Location(FILE, 1, 4))
        self.args = block.args

    def at(self, line: int) -> "KernelBuilder":
        self.b.loc = Location(FILE, line, 4)
        return self

    # -- generic --------------------------------------------------------------------------
    def op(self, cls: type[Operation], operands: Sequence[Value], result_type: Type, **attrs: Any) -> Value:
        return self.b.value(cls, list(operands), result_type, **attrs)

    def ops(self, cls: type[Operation], operands: Sequence[Value], result_types: Sequence[Type],
            **attrs: Any) -> list[Value]:
        return list(self.b.create(cls, list(operands), list(result_types), attrs).results)

    def const(self, value: Any, t: Type) -> Value:
        return self.op(A.ConstantOp, [], t, value=value)

    def arange(self, n: int, start: int = 0) -> Value:
        return self.op(S.ArangeOp, [], T.tile([n], T.int32), start=start, end=start + n)

    def splat(self, x: Value, shape: Sequence[int]) -> Value:
        return self.op(S.SplatOp, [x], T.tile(list(shape), x.type))

    def binary(self, cls: type[Operation], a: Value, b: Value, **attrs: Any) -> Value:
        return self.op(cls, [a, b], a.type, **attrs)

    def cmp(self, pred: str, a: Value, b: Value) -> Value:
        return self.op(A.CmpOp, [a, b], T.with_shape(T.int1, a.type.shape), predicate=pred)

    # -- memory ---------------------------------------------------------------------------
    def ptrs(self, ptr: Value, offsets: Value) -> Value:
        """``ptr + offsets`` as a tile of pointers shaped like ``offsets``."""
        p = self.splat(ptr, offsets.type.shape) if offsets.type.shape else ptr
        return self.op(A.AddPtrOp, [p, offsets], p.type)

    def load(self, ptr: Value, mask: Value | None = None, other: Value | None = None) -> Value:
        t = T.with_shape(ptr.type.scalar.pointee, ptr.type.shape)
        return self.b.create(M.LoadOp, [ptr], [t], optional={"mask": mask, "other": other}).result

    def store(self, ptr: Value, value: Value, mask: Value | None = None) -> None:
        self.b.create(M.StoreOp, [ptr, value], optional={"mask": mask})

    # -- control flow ---------------------------------------------------------------------
    def for_(self, lb: Value, ub: Value, step: Value, inits: Sequence[Value],
             body: Callable[..., Sequence[Value]]) -> list[Value]:
        block = Block([lb.type] + [v.type for v in inits])
        op = self.b.create(C.ForOp, [lb, ub, step, *inits], [v.type for v in inits], {}, [Region(block)])
        with self.b.at_end(block):
            self.b.create(C.YieldOp, list(body(*block.args)))
        return list(op.results)

    def if_(self, cond: Value, then: Callable[[], Sequence[Value]], orelse: Callable[[], Sequence[Value]],
            result_types: Sequence[Type] = ()) -> list[Value]:
        blocks = [Block(), Block()]
        op = self.b.create(C.IfOp, [cond], list(result_types), {}, [Region(blocks[0]), Region(blocks[1])])
        for block, fn in zip(blocks, (then, orelse)):
            with self.b.at_end(block):
                self.b.create(C.YieldOp, list(fn()))
        return list(op.results)

    def while_(self, inits: Sequence[Value], before: Callable[..., tuple[Value, Sequence[Value]]],
               after: Callable[..., Sequence[Value]]) -> list[Value]:
        """``before(*carried) -> (cond, forwarded)``; the forwarded values have the init types."""
        types = [v.type for v in inits]
        b0, b1 = Block(types), Block(types)
        op = self.b.create(C.WhileOp, list(inits), types, {}, [Region(b0), Region(b1)])
        with self.b.at_end(b0):
            cond, forwarded = before(*b0.args)
            self.b.create(C.ConditionOp, [cond, *forwarded])
        with self.b.at_end(b1):
            self.b.create(C.YieldOp, list(after(*b1.args)))
        return list(op.results)

    def finish(self) -> C.FuncOp:
        self.b.create(C.ReturnOp, [])
        for op in self.func.walk():
            op.verify()
        return self.func


def run(func: C.FuncOp, grid: Sequence[int], args: list[Any]) -> None:
    """``run_kernel`` with the result checks on, so a rule that gives a wrong dtype fails."""
    run_kernel(func, tuple(grid), args, check=True)  # type: ignore[arg-type]


def elementwise(cls: type[Operation], dtype: DType, inputs: Sequence[Any], out_dtype: DType | None = None,
                **attrs: Any) -> np.ndarray:
    """Apply one elementwise op to 1-D inputs (as tiles) and to each element (as scalars);
    check the two agree bit for bit and return the tile result. ``out_dtype`` is the
    result's element type when it differs from the operands' (i1 for ``cmp``)."""
    arrays = [np.asarray(x, dtype=T.numpy_dtype(dtype)) for x in inputs]
    out_t = out_dtype or dtype
    n = len(arrays[0])
    size = 1 << max(n - 1, 0).bit_length()

    # tile version: out[i] = op(x0[i], x1[i], ...) under a mask
    kb = KernelBuilder([(f"x{i}", T.pointer(dtype)) for i in range(len(arrays))] + [("out", T.pointer(out_t))])
    offs = kb.arange(size)
    mask = kb.cmp("lt", offs, kb.const(n, T.tile([size], T.int32)))
    vals = [kb.load(kb.ptrs(p, offs), mask) for p in kb.args[:-1]]
    kb.store(kb.ptrs(kb.args[-1], offs), kb.op(cls, vals, T.tile([size], out_t), **attrs), mask)
    out = np.zeros(n, T.numpy_dtype(out_t))
    run(kb.finish(), (1, 1, 1), [*arrays, out])

    # scalar version: one launch per element, operands as scalar arguments
    kb = KernelBuilder([(f"s{i}", dtype) for i in range(len(arrays))] + [("out", T.pointer(out_t))])
    kb.store(kb.ptrs(kb.args[-1], kb.arange(1)), kb.splat(kb.op(cls, list(kb.args[:-1]), out_t, **attrs), [1]))
    func = kb.finish()
    for i in range(n):
        one = np.zeros(1, T.numpy_dtype(out_t))
        run(func, (1, 1, 1), [*(a[i] for a in arrays), one])
        same_bits = one.view(np.uint8).tobytes() == out[i:i + 1].view(np.uint8).tobytes()
        both_nan = out_t.is_floating() and np.isnan(one.astype(np.float32)[0]) and np.isnan(float(out[i]))
        assert same_bits or both_nan, f"element {i}: scalar path gives {one[0]}, tile path {out[i]}"
    return out
