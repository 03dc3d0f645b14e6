"""Facts about a tile's global accesses that every code generator needs: how many
consecutive registers one instruction may move, which registers repeat an element, and
which lane / warp bits hold copies (so that a store is done once)."""

from __future__ import annotations

from typing import Any

from ..ir.core import Operation
from ..ir.layout.linear import LinearLayout


def vector_width(axis: Any, op: Operation, elem_bytes: int, max_vector_bytes: int) -> int:
    """How many consecutive registers one load/store instruction of ``op`` may move: the
    run of consecutive registers along the dim the pointers' layout vectorizes (the one
    its first register bit steps: the last dim of a canonical layout, dim 0 of the
    layout a K-contiguous ``[K, N]`` tile gets), what the axis analysis ``axis`` proves
    along that dim (contiguity, alignment, the mask's constancy), and the target's
    widest access; 8-bit elements at most 4 (one 32-bit word)."""
    return pointer_vector_width(axis, op.ptr, elem_bytes, max_vector_bytes, op.mask)


def vector_dim(layout: LinearLayout) -> int:
    """The dim a distributed layout's registers run along: the one its first register
    bit steps by one element, else the last."""
    bases = layout.in_bases("register") if layout.has_in_dim("register") else []
    if bases:
        first = bases[0]
        hit = [j for j, c in enumerate(first) if c]
        if len(hit) == 1 and first[hit[0]] == 1:
            return int(layout.out_dims[hit[0]][3:])
    return layout.num_out_dims - 1


def pointer_vector_width(axis: Any, ptr: Any, elem_bytes: int, max_vector_bytes: int, mask: Any = None) -> int:
    """``vector_width`` of an access through the pointer tile ``ptr`` under ``mask``."""
    layout = ptr.type.layout if ptr.type.shape else None
    if layout is None or axis is None or elem_bytes > 8:
        return 1
    dim = vector_dim(layout)
    in_regs = layout.num_consecutive("register", f"dim{dim}")
    proven = axis.vector_elements(ptr, dim, elem_bytes, max_vector_bytes, mask)
    v = min(in_regs, proven, max(1, max_vector_bytes // elem_bytes))
    if elem_bytes == 1:
        v = min(v, 4)
    return max(1, v)


def duplicate_registers(layout: LinearLayout) -> set[int]:
    """Registers that repeat an earlier register's element (a zero register basis)."""
    bases = layout.in_bases("register")
    zero_bits = [i for i, b in enumerate(bases) if not any(b)]
    if not zero_bits:
        return set()
    n = 1 << len(bases)
    return {r for r in range(n) if any(r >> b & 1 for b in zero_bits)}


def replicated_bits(layout: LinearLayout) -> list[tuple[str, int]]:
    """``(input dim, bit mask)`` of the lane and warp bits whose bases are zero: threads
    that differ only in those bits hold the same elements, and the one with those bits
    all zero is the owner that stores them."""
    out = []
    for src in ("lane", "warp"):
        bits = 0
        for bit, basis in enumerate(layout.in_bases(src)):
            if not any(basis):
                bits |= 1 << bit
        if bits:
            out.append((src, bits))
    return out
