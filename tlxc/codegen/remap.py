"""Ops that only re-index registers (``broadcast``, ``expand_dims``, ``trans``,
``reshape``, ``join``, ``split``): which operand register each result register is, from
the two layouts alone (``reindex``, ``join_sources``, ``split_registers``). Layout
assignment gives such an op's result a layout that keeps every element in the thread that
holds it; this checks that and finds the registers, for every code generator."""

from __future__ import annotations

from typing import Callable

from ..errors import InternalCompilerError
from ..ir.core import Operation
from ..ir.layout.common import REGISTER, all_register_coords
from ..ir.layout.linear import LinearLayout
from ..ir.types import TileType

Coords = tuple[int, ...]


def remap(where: str, op: Operation, src_layout: LinearLayout, dst_layout: LinearLayout,
          project: Callable[[Coords], Coords], project_basis: Callable[[Coords], Coords] | None = None) -> list[int]:
    """For each register of ``dst_layout``, the register of ``src_layout`` that holds the
    element it maps to under ``project`` (dst coords -> src coords), checking that both
    layouts give that element to the same lane and warp (``project_basis`` maps a lane or
    warp basis; by default the same linear map). ``where``: the code generator, for errors."""
    pb = project_basis or project
    for src_dim in ("lane", "warp"):
        a = [tuple(pb(tuple(b))) for b in dst_layout.in_bases(src_dim)]
        b = [tuple(x) for x in src_layout.in_bases(src_dim)]
        if a != b:
            raise InternalCompilerError(
                where, f"'{op.NAME}' needs its operand in a matching layout ({src_dim} bases {b} vs {a}); "
                "layout assignment should have inserted a conversion", op.loc)
    index: dict[Coords, int] = {}
    for r, c in enumerate(all_register_coords(src_layout)):
        index.setdefault(c, r)
    out = []
    for c in all_register_coords(dst_layout):
        key = tuple(project(c))
        if key not in index:
            raise InternalCompilerError(where, f"'{op.NAME}': element {key} is not in the operand's registers", op.loc)
        out.append(index[key])
    return out


def reshape_projection(src_shape: tuple[int, ...], dst_shape: tuple[int, ...]) -> Callable[[Coords], Coords]:
    """Row-major coordinates of ``dst_shape`` -> those of the same element in ``src_shape``."""
    def project(c: Coords) -> Coords:
        flat = 0
        for x, n in zip(c, dst_shape):
            flat = flat * n + x
        out = []
        for n in reversed(src_shape):
            out.append(flat % n)
            flat //= n
        return tuple(reversed(out))

    return project


def last_dim_in_registers(where: str, op: Operation, layout: LinearLayout) -> None:
    """``join``/``split`` need the new (last) dim held by each thread in its registers."""
    last = layout.num_out_dims - 1
    for src in ("lane", "warp"):
        if any(b[last] for b in layout.in_bases(src)):
            raise InternalCompilerError(where, f"'{op.NAME}' needs the last dim held in registers", op.loc)


# -- per op: which operand register each result register is --------------------------------------
def reindex(where: str, op: Operation, src_layout: LinearLayout) -> list[int]:
    """For ``broadcast``, ``expand_dims``, ``trans`` and ``reshape``: the operand register
    (of a tile in ``src_layout``) that each register of the result is."""
    src_shape = op.x.type.shape
    match op.NAME:
        case "broadcast":
            project = lambda c: tuple(0 if src_shape[i] == 1 else x for i, x in enumerate(c))  # noqa: E731
        case "expand_dims":
            axis = op.axis
            project = lambda c: tuple(x for i, x in enumerate(c) if i != axis)  # noqa: E731
        case "trans":
            order = op.order
            inv = [order.index(i) for i in range(len(order))]
            project = lambda c: tuple(c[inv[i]] for i in range(len(c)))  # noqa: E731
        case "reshape":
            project = reshape_projection(src_shape, op.result.type.shape)
        case _:
            raise ValueError(f"'{op.NAME}' does not re-index registers")
    return remap(where, op, src_layout, op.result.type.layout, project)


def join_sources(where: str, op: Operation, a_layout: LinearLayout) -> list[tuple[int, int]]:
    """For ``join(a, b)``: (operand 0 or 1, its register) of each result register; both
    operands are in ``a_layout``."""
    dst = op.result.type.layout
    last_dim_in_registers(where, op, dst)
    idx = remap(where, op, a_layout, dst, lambda c: c[:-1])
    coords = all_register_coords(dst)
    return [(coords[r][-1], i) for r, i in enumerate(idx)]


def split_registers(where: str, op: Operation, src_layout: LinearLayout) -> list[list[int]]:
    """For ``split``: per result (the halves 0 and 1), the operand register of each of its
    registers."""
    last_dim_in_registers(where, op, src_layout)
    if not isinstance(op.results[0].type, TileType):  # a [2] tile into two scalars
        bases = src_layout.in_bases(REGISTER)
        bit = next(i for i, b in enumerate(bases) if b[-1])
        return [[0], [1 << bit]]
    return [remap(where, op, src_layout, res.type.layout, lambda c, h=half: c + (h,), lambda b: b + (0,))
            for half, res in enumerate(op.results)]
