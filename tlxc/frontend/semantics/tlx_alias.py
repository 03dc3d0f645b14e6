"""Semantic rules of TLX storage aliasing: ``storage_alias_spec``, ``local_alloc(...,
reuse=spec)``, ``reuse_group`` and ``spec.set_buffer_overlap(group)``.

A spec is a ``Handle`` of ``AliasSpecType`` made by a ``storage_alias_spec`` op whose
``size`` attribute is the backing store's bytes. Every allocation that names the spec
carries ``alias = [offset, step]``: its buffer ``i`` starts at byte ``offset + i * step``
of the store. Those numbers are settled here, in the frontend, so the IR is explicit:
the interpreter overlays its byte arena with them and ``smem_alloc`` adds the spec's
own offset. ``set_buffer_overlap`` may come after the allocations and after views of
them were taken (as in TLX kernels): it rewrites the placements of the allocations it
names, and views are addressed from the placement when the code is generated.

Placement of a ``reuse_group`` tree (sizes per buffer index):

* a leaf (an array from ``local_alloc``) needs its buffer's bytes;
* ``shared`` needs ``group_size x`` the largest child, ``distinct`` ``group_size x`` the
  sum of its children;
* the root gets a slot of that many bytes per index; a group with ``group_size = k``
  splits each slot of its parent into ``k`` equal sub-slots (child buffer ``j`` goes to
  sub-slot ``j``, so ``p[2i]`` and ``p[2i + 1]`` overlay ``qk[i]``); ``shared`` children
  start together, ``distinct`` children one after another (index-interleaved:
  ``a0|b0|a1|b1``). When sub-slots spread a child wider than its packed size, the slot
  grows until every ``distinct`` group fits.

Tensor memory (``storage_kind.tmem``) is refused (``TLXC-TLX-005``), as is
``smemCluster``. A spec nobody allocates from is dead code and disappears.
"""

from __future__ import annotations

import enum
import weakref
from dataclasses import dataclass
from typing import Any

from ...ir import ops
from ...ir.types import AliasSpecType, MemDescType, alias_spec
from ...tlx import reuse_group_type, storage_kind
from ..values import Handle, describe, unwrap
from .base import Ctx, const_value, fail, rule

BUF = "TLXC-TLX-001"
_OVERLAP_SET: "weakref.WeakSet[ops.Operation]" = weakref.WeakSet()


@dataclass(frozen=True)
class ReuseGroup:
    """A node of an overlap tree (compile time only)."""

    elems: tuple[Any, ...]  # Handles of allocations, or ReuseGroups
    kind: str  # "shared" | "distinct"
    group_size: int

    def __repr__(self) -> str:
        return f"tlx.reuse_group({self.kind}, group_size={self.group_size})"


def is_spec(v: Any) -> bool:
    v = unwrap(v)
    return isinstance(v, Handle) and isinstance(v.type, AliasSpecType)


def _kind(v: Any) -> str:
    v = unwrap(v)
    return v.value if isinstance(v, enum.Enum) else v


@rule("tlx.storage_alias_spec")
def storage_alias_spec(ctx: Ctx, storage: Any = storage_kind.smem, buffer_size_bytes: Any = None) -> Handle:
    kind = _kind(storage)
    if kind == "smemCluster":
        fail(BUF, "storage_alias_spec does not take storage_kind.smemCluster: a spec overlays this CTA's own memory",
             "use tlx.storage_kind.smem")
    if kind == "tmem":
        fail("TLXC-TLX-005", "storage_alias_spec in tensor memory is not supported by tlxc yet")
    if kind != "smem":
        fail(BUF, f"storage must be tlx.storage_kind.smem, got {describe(storage)}")
    size = unwrap(buffer_size_bytes)
    if size is not None:
        size = const_value(size, "buffer_size_bytes")
        if size <= 0:
            fail(BUF, f"buffer_size_bytes must be positive, got {size}")
    return Handle(ctx.b.value(ops.StorageAliasSpecOp, [], alias_spec, storage="smem", size=size or 0,
                              fixed=size is not None))


def alias_alloc(ctx: Ctx, spec: Handle, t: MemDescType) -> Handle:
    """``local_alloc(..., reuse=spec)``: at the start of the store until
    ``set_buffer_overlap`` places it."""
    op = spec.handle.op  # type: ignore[attr-defined]
    if op.attrs["storage"] != t.storage:
        fail(BUF, f"local_alloc in {t.storage} cannot use a storage_alias_spec of {op.attrs['storage']}",
             "give local_alloc and storage_alias_spec the same storage kind")
    v = ctx.b.value(ops.LocalAllocOp, [], t, optional={"reuse": spec.handle}, alias=(0, t.nbytes),
                    pinned=t.layout is not None)
    _fit(op, [v.op])  # type: ignore[attr-defined]
    return Handle(v)


def _extent(alloc: ops.Operation) -> int:
    t: MemDescType = alloc.result.type  # type: ignore[assignment]
    off, step = alloc.attrs["alias"]
    return off + (t.num - 1) * step + t.nbytes


def _fit(spec: ops.Operation, allocs: list[ops.Operation]) -> None:
    """Grow the spec to hold ``allocs`` (or check the user's size holds them)."""
    need = max((_extent(a) for a in allocs), default=0)
    if spec.attrs["fixed"] and need > spec.attrs["size"]:
        fail(BUF, f"storage_alias_spec(buffer_size_bytes={spec.attrs['size']}) is too small: its buffers need "
                  f"{need} bytes", f"pass buffer_size_bytes >= {need}, or leave it out to let tlxc size the store")
    spec.attrs["size"] = max(spec.attrs["size"], need)


@rule("tlx.reuse_group")
def reuse_group(ctx: Ctx, *elems: Any, group_type: Any = reuse_group_type.shared, group_size: Any = 1) -> ReuseGroup:
    kind = _kind(group_type)
    if kind not in ("shared", "distinct"):
        fail(BUF, f"group_type must be tlx.reuse_group_type.shared or .distinct, got {describe(group_type)}")
    k = const_value(group_size, "group_size")
    if k < 1:
        fail(BUF, f"group_size must be at least 1, got {k}")
    if not elems:
        fail(BUF, "reuse_group needs at least one buffer or group")
    out = []
    for e in elems:
        e = unwrap(e)
        if isinstance(e, ReuseGroup):
            out.append(e)
            continue
        if not (isinstance(e, Handle) and isinstance(e.type, MemDescType) and e.type.num):
            fail(BUF, f"reuse_group takes buffer arrays from tlx.local_alloc and other reuse_groups, got "
                      f"{describe(e)}")
        out.append(e)
    return ReuseGroup(tuple(out), kind, k)


def _size(node: Any) -> int:
    if isinstance(node, Handle):
        return node.type.nbytes  # type: ignore[attr-defined]
    sizes = [_size(c) for c in node.elems]
    return node.group_size * (max(sizes) if node.kind == "shared" else sum(sizes))


def _place(node: Any, off: int, stride: int, out: dict[int, tuple[ops.Operation, int, int]],
           over: list[int], scale: int) -> int:
    """Place ``node`` at byte ``off`` with ``stride`` bytes per index; returns the end
    of its bytes within one slot. ``over`` collects how many more root-slot bytes a
    group would need (``scale`` = root stride / ``stride``)."""
    if isinstance(node, Handle):
        out[id(node.handle.op)] = (node.handle.op, off, stride)  # type: ignore[attr-defined]
        return off + node.type.nbytes  # type: ignore[attr-defined]
    k = node.group_size
    if stride % k:
        over.append((k - stride % k) * scale)
        return off + stride
    cs = stride // k
    if node.kind == "shared":
        end = max(_place(c, off, cs, out, over, scale * k) for c in node.elems)
    else:
        end = off
        for c in node.elems:
            end = _place(c, end, cs, out, over, scale * k)
    if end - off > cs:
        over.append((end - off - cs) * scale * k)
    return end + (k - 1) * cs


def _leaves(node: Any) -> list[Handle]:
    if isinstance(node, Handle):
        return [node]
    return [leaf for c in node.elems for leaf in _leaves(c)]


@rule("tlx.set_buffer_overlap")
def set_buffer_overlap(ctx: Ctx, spec: Any, overlap_def: Any) -> None:
    spec = unwrap(spec)
    sop = spec.handle.op
    tree = unwrap(overlap_def)
    if not isinstance(tree, ReuseGroup):
        fail(BUF, f"set_buffer_overlap takes a tlx.reuse_group, got {describe(tree)}")
    if sop in _OVERLAP_SET:
        fail(BUF, "set_buffer_overlap was already called on this storage_alias_spec",
             "describe the whole overlap in one reuse_group tree")
    seen: set[int] = set()
    for leaf in _leaves(tree):
        op = getattr(leaf.handle, "op", None)
        if not isinstance(op, ops.LocalAllocOp) or op.operand("reuse") is not spec.handle:
            fail(BUF, "every buffer in the reuse_group must come from tlx.local_alloc(..., reuse=spec) with this spec",
                 "allocate it with reuse= the spec whose set_buffer_overlap you call")
        if id(op) in seen:
            fail(BUF, "a buffer appears twice in the reuse_group tree")
        seen.add(id(op))
    stride = _size(tree)
    for _ in range(16):
        out: dict[int, tuple[ops.Operation, int, int]] = {}
        over: list[int] = []
        _place(tree, 0, stride, out, over, 1)
        if not over:
            break
        stride += max(over)
    else:  # pragma: no cover - the slot grows by what was missing; 16 rounds is plenty
        fail(BUF, "could not place the reuse_group tree: its group sizes do not divide the buffer slots")
    for op, off, step in out.values():
        op.attrs["alias"] = (off, step)
    _OVERLAP_SET.add(sop)
    members = [u for u in spec.handle.uses if isinstance(u, ops.LocalAllocOp)]
    if not sop.attrs["fixed"]:
        sop.attrs["size"] = 0
    _fit(sop, members)
