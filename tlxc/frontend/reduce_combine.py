"""``tl.reduce(input, axis, combine_fn, keep_dims=False)`` and ``x.reduce(axis, combine_fn)``:
a reduction with the user's combine function.

``input`` is a tile or a tuple of ``n`` tiles of one shape; ``combine_fn`` is a
``@tlxc.jit`` function of ``2n`` scalars (the ``a`` values, then the ``b`` values) that
returns ``n`` values (a tuple when ``n > 1``) of the inputs' element types. It becomes the
region of one ``reduce_combine`` op: its body is inlined once on the region's block
arguments, by the visitor that ``tl.map_elementwise`` uses with an empty shape, so an
``if`` on the values becomes a select (Triton's combine functions, e.g. its
argmax-with-ties helper, branch like that) and anything that is not scalar arithmetic
-- loads, stores, reductions, shape changes -- is refused at its line.

``axis=None`` reduces every dimension: the inputs are flattened first (in order, so that
the ``i``-th elements of all inputs stay together) and reduced along axis 0. With
``keep_dims`` the reduced axes stay, of size 1. The result is a tile (or a scalar once
nothing is left), or a tuple of them when ``input`` is a tuple.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from ..errors import CompilationError
from ..ir import ops
from ..ir.core import Block, Region
from ..ir.types import DType, TileType
from .function import KernelDef
from .map_elementwise import _ALLOWED, _ELEMENTWISE_MODULE, MapGenerator
from .semantics.base import shaped
from .semantics.shape import expand_dims, reshape
from .values import Tensor, describe, flatten, unwrap
from .visitor import CodeGenerator


def _signature(input: Any, axis: Any, combine_fn: Any, keep_dims: Any = False) -> None:
    """Triton's parameters, bound to check a call before anything is built."""


def reduce_combine(gen: CodeGenerator, node: ast.Call, first: list[Any]) -> Any:
    """``tl.reduce(...)`` (``first`` empty) or ``x.reduce(...)`` (``first == [x]``) at ``node``."""
    args, kwargs = first + gen.call_args(node), gen.call_kwargs(node)
    what = "tensor.reduce" if first else "tl.reduce"
    try:
        bound = inspect.signature(_signature).bind(*args, **kwargs)
    except TypeError as e:
        raise gen.error(node, "TLXC-CALL-002", f"{what}: {e}") from None
    bound.apply_defaults()
    input, axis, fn = bound.arguments["input"], unwrap(bound.arguments["axis"]), bound.arguments["combine_fn"]
    keep = unwrap(bound.arguments["keep_dims"])
    is_tuple = isinstance(input, tuple)
    tensors = list(input) if is_tuple else [input]
    if not isinstance(fn, KernelDef):
        raise gen.error(node, "TLXC-CALL-002", f"{what}: combine_fn must be a @tlxc.jit function, got {describe(fn)}",
                        "decorate the combine function with @tlxc.jit")
    if not tensors:
        raise gen.error(node, "TLXC-CALL-002", f"{what} needs at least one tensor to reduce")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or not t.shape:
            raise gen.error(node, "TLXC-SHAPE-003", f"{what} reduces tiles; input {i} is {describe(t)}")
        if not isinstance(t.dtype, DType):
            raise gen.error(node, "TLXC-TYPE-001", f"{what} cannot reduce pointers (input {i} is {describe(t)})")
    shape = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != shape:
            raise gen.error(node, "TLXC-SHAPE-001", f"{what}: the inputs must have one shape, but input 0 is "
                            f"{list(shape)} and input {i} is {list(t.shape)}", "broadcast them to one shape first")
    if not isinstance(keep, (bool, int)):
        raise gen.error(node, "TLXC-CONSTEXPR-001", f"{what}: keep_dims must be a compile-time bool, got "
                        f"{describe(keep)}")
    rank = len(shape)
    if axis is None:
        if rank > 1:
            tensors = [reshape(gen.ctx, t, t.numel) for t in tensors]
        ax = 0
    elif isinstance(axis, int) and not isinstance(axis, bool):
        if not -rank <= axis < rank:
            raise gen.error(node, "TLXC-SHAPE-003", f"{what}: axis {axis} is out of range for a tile of rank {rank}")
        ax = axis % rank
    else:
        raise gen.error(node, "TLXC-CONSTEXPR-001", f"{what}: axis must be a compile-time int or None, got "
                        f"{describe(axis)}")
    results = _build(gen, node, fn, tensors, ax, what)
    if keep:
        if axis is None:
            results = [reshape(gen.ctx, r, *([1] * rank)) for r in results]
        else:
            results = [expand_dims(gen.ctx, r, ax) for r in results]
    return tuple(results) if is_tuple else results[0]


def _build(gen: CodeGenerator, node: ast.Call, fn: KernelDef, tensors: list[Tensor], axis: int,
           what: str) -> list[Tensor]:
    n = len(tensors)
    scalars: list[DType] = [t.dtype for t in tensors]  # type: ignore[misc]
    names = list(fn.signature.parameters)
    if len(names) != 2 * n:
        raise gen.error(node, "TLXC-CALL-002", f"{what}: {fn.__name__} must take {2 * n} values (the {n} of one "
                        f"partial result, then the {n} of another), but it takes {len(names)}")
    block = Block(scalars + scalars, names)
    scope = dict(zip(names, (Tensor(a) for a in block.args)))
    mapper = MapGenerator(fn.source, gen.builder, scope, gen.inline_depth + 1, gen.used_globals, gen.loops,
                          gen.callees, ())
    if fn not in gen.callees:
        gen.callees.append(fn)
    with gen.builder.at_end(block), gen.builder.journal_of() as built:
        value = mapper.run(fn)
        for op in built:
            _check_scalar(op, fn, what)
        if value is None:
            raise gen.error(node, "TLXC-TYPE-002", f"{what}: {fn.__name__} returns nothing; it must return "
                            f"{n} value{'s' if n > 1 else ''}")
        got = list(value) if isinstance(value, tuple) else [value]
        if len(got) != n:
            raise gen.error(node, "TLXC-TYPE-002", f"{what}: {fn.__name__} returns {len(got)} value"
                            f"{'s' if len(got) != 1 else ''} for {n} input{'s' if n > 1 else ''}; it must return "
                            "one value per input")
        handles = []
        for i, (v, t) in enumerate(zip(got, scalars)):
            hs, _ = flatten(v)
            if not isinstance(v, Tensor) or len(hs) != 1 or hs[0].type != t:
                raise gen.error(node, "TLXC-TYPE-002", f"{what}: {fn.__name__} returns {describe(v)} as value {i}, "
                                f"but input {i} holds {t!r}; the combine function must keep each input's dtype",
                                "convert the returned value with .to(dtype)")
            handles.append(hs[0])
        gen.builder.create(ops.YieldOp, handles)
    out_shape = tensors[0].shape[:axis] + tensors[0].shape[axis + 1:]
    op = gen.builder.create(ops.ReduceCombineOp, [t.handle for t in tensors], [shaped(t, out_shape) for t in scalars],
                            {"axis": axis}, [Region(block)])
    return [Tensor(r) for r in op.results]


def _check_scalar(op: Any, fn: KernelDef, what: str) -> None:
    allowed = type(op).__module__ == _ELEMENTWISE_MODULE or isinstance(op, _ALLOWED)
    if allowed and not any(isinstance(r.type, TileType) for r in op.results):
        return
    raise CompilationError("TLXC-CALL-002", f"{what}: '{op.NAME}' in {fn.__name__} is not scalar arithmetic; a "
                           "combine function computes on single elements, with arithmetic, math, comparisons, "
                           "selects and casts", op.loc,
                           "do loads, stores, reductions and shape changes outside the combine function")
