"""``tl.associative_scan(input, axis, combine_fn, reverse=False)``: an inclusive scan with a
``@tlxc.jit`` combine function.

The function is inlined once into the ``scan`` op's region, on scalars: its parameters
are the region's block arguments (the n values of the earlier position, then the n of
the later one) and what it returns is yielded. It is visited as a mapped function
(``map_elementwise.MapGenerator`` over the shape ``()``), so an ``if`` on its values
becomes a select and everything it builds must be elementwise and without effects.
Whether it is associative cannot be checked; the targets group its steps as their
layouts suit, so a function that is not gives a result that depends on the target.
"""

from __future__ import annotations

import ast
from typing import Any

from .function import KernelDef
from .map_elementwise import MapGenerator, check_elementwise
from .semantics.arith import cast
from .semantics.base import is_number, to_tensor
from .semantics.scan import build_scan, scan_axis, scan_inputs, scan_reverse
from .values import Tensor, describe, flatten, unwrap
from .visitor import CodeGenerator

WHAT = "tl.associative_scan"


def associative_scan(gen: CodeGenerator, node: ast.Call, first: list[Any] | None = None) -> Any:
    """``tl.associative_scan(...)`` (``first`` empty) or ``x.associative_scan(...)``
    (``first == [x]``) at ``node``, built by ``gen``."""
    args, kwargs = (first or []) + gen.call_args(node), gen.call_kwargs(node)
    names = ("input", "axis", "combine_fn", "reverse")
    if len(args) > len(names):
        raise gen.error(node, "TLXC-CALL-002", f"{WHAT} takes at most {len(names)} arguments, got {len(args)}")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise gen.error(node, "TLXC-CALL-002", f"{WHAT} does not take {k!r}")
        if k in bound:
            raise gen.error(node, "TLXC-CALL-002", f"{WHAT} got {k!r} twice")
        bound[k] = v
    missing = [n for n in names[:3] if n not in bound]
    if missing:
        raise gen.error(node, "TLXC-CALL-002", f"{WHAT} is missing {', '.join(map(repr, missing))}")
    fn = unwrap(bound["combine_fn"])
    if not isinstance(fn, KernelDef):
        raise gen.error(node, "TLXC-CALL-002", f"{WHAT} combines with a @tlxc.jit function, got {describe(fn)}")
    value = unwrap(bound["input"])
    is_tuple = isinstance(value, tuple)
    tiles = scan_inputs(list(value) if is_tuple else [value], WHAT)
    if not tiles:
        raise gen.error(node, "TLXC-CALL-002", f"{WHAT} needs at least one tensor")
    axis = scan_axis(bound["axis"], len(tiles[0].shape))
    reverse = scan_reverse(bound.get("reverse", False))
    n = len(tiles)
    params = [p for p in fn.signature.parameters.values()]
    if len(params) != 2 * n or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        raise gen.error(node, "TLXC-CALL-002", f"{WHAT}: the combine function {fn.__name__} must take {2 * n} "
                        f"values (the {n} of the earlier position, then the {n} of the later one), it takes "
                        f"({', '.join(p.name for p in params)})")
    if fn not in gen.callees:
        gen.callees.append(fn)

    def combine(lhs: list[Tensor], rhs: list[Tensor]) -> list[Tensor]:
        scope = {p.name: v for p, v in zip(params, lhs + rhs)}
        mapper = MapGenerator(fn.source, gen.builder, scope, gen.inline_depth + 1, gen.used_globals, gen.loops,
                              gen.callees, ())
        with gen.builder.journal_of() as built:
            result = mapper.run(fn)
        for op in built:
            check_elementwise(op, fn, (), WHAT)
        return _results(gen, node, fn.__name__, result, tiles)

    out = build_scan(gen.ctx, tiles, axis, reverse, combine)
    return tuple(out) if is_tuple else out[0]


def _results(gen: CodeGenerator, node: ast.Call, name: str, result: Any, tiles: list[Tensor]) -> list[Tensor]:
    """What the combine function returned, one scalar per scanned tile of its element type."""
    if result is None:
        raise gen.error(node, "TLXC-TYPE-002", f"{WHAT}: {name} returns nothing; it must return "
                        f"{len(tiles)} value(s)")
    values = list(result) if isinstance(result, tuple) else [result]
    if len(values) != len(tiles):
        raise gen.error(node, "TLXC-TYPE-002", f"{WHAT}: {name} returns {len(values)} value(s) for "
                        f"{len(tiles)} scanned tensor(s)")
    out = []
    for i, (v, t) in enumerate(zip(values, tiles)):
        if is_number(v):
            v = cast(gen.ctx, to_tensor(gen.ctx, v), t.dtype)
        handles, _ = flatten(v)
        if not isinstance(v, Tensor) or len(handles) != 1 or v.shape:
            raise gen.error(node, "TLXC-TYPE-002", f"{WHAT}: {name} must return one scalar per scanned tensor; "
                            f"value {i + 1} is {describe(v)}")
        if v.dtype != t.dtype:
            raise gen.error(node, "TLXC-TYPE-002", f"{WHAT}: {name} returns {v.dtype} for a scan of {t.dtype} "
                            "values; the combined value must keep the element type",
                            "convert the result with .to(...) inside the combine function")
        out.append(v)
    return out
