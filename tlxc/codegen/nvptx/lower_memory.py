"""Global loads and stores: predicated, vectorized up to 16 bytes where the layout keeps
consecutive elements in consecutive registers and the axis analysis proves the pointers
contiguous and aligned (and the mask constant over the vector).

A value that several threads (or registers) hold is stored once: lanes and warps whose
layout bases are zero, and duplicate registers, are masked off for stores.
"""

from __future__ import annotations

from ...ir import ops
from ...ir.core import Operation
from ...ir.types import DType, Kind, PointerType
from .. import access
from .emitter import Emitter, lowers
from .ptx import Reg, reg_class

_CACHE = {"": "", ".ca": ".ca", ".cg": ".cg", ".cs": ".cs", ".cv": ".cv", ".wb": ".wb", ".wt": ".wt"}


def _qualifiers(e: Emitter, op: Operation, volatile: bool = False) -> tuple[str, str]:
    """(the qualifiers after ``ld.global`` / ``st.global``, what follows the operands) for
    the op's cache modifier and eviction policy. ``evict_first`` / ``evict_last`` are L1
    priorities (where no cache modifier takes their place) and an L2 policy made by
    ``createpolicy`` and passed as the instruction's cache hint, as in Triton; a volatile
    access takes no hint."""
    cache = _CACHE[op.cache]
    evict = op.attrs.get("eviction", "")
    if volatile:
        return cache + ".volatile", ""
    if evict not in ("evict_first", "evict_last"):
        return cache, ""
    policy = e.fn.reg("b64")
    e.fn.emit(f"createpolicy.fractional.L2::{evict}.b64 {policy}, 1.0")
    return (cache or f".L1::{evict}") + ".L2::cache_hint", f", {policy}"


def _elem(op: Operation) -> DType | PointerType:
    return op.ptr.type.scalar.pointee


def _mem_type(t: DType | PointerType) -> str:
    """The ld/st type of one element."""
    if isinstance(t, PointerType):
        return "b64"
    if t.kind == Kind.BOOL:
        return "u8"
    if t.bits == 8:
        return "s8" if t.kind == Kind.INT else "u8"
    return f"b{t.bits}"


def vector_width(e: Emitter, op: Operation, elem_bytes: int) -> int:
    """How many consecutive registers one instruction may move (``codegen/access.py``)."""
    return access.vector_width(e.axis, op, elem_bytes, e.target.max_vector_bytes)


def owner_predicate(e: Emitter, layout: object) -> Reg | None:
    """True in the one thread (of those holding the same elements) that should store."""
    key = ("owner", layout)
    if key in e._coords:
        return e._coords[key]  # type: ignore[return-value]
    masks = access.replicated_bits(layout)  # type: ignore[arg-type]
    if not masks:
        e._coords[key] = None  # type: ignore[assignment]
        return None
    p = e.fn.reg("pred")
    acc = e.fn.reg("b32")
    e.prologue.append(f"\tmov.u32 {acc}, 0;")
    for src, bits in masks:
        t = e.fn.reg("b32")
        e.prologue.append(f"\tand.b32 {t}, {e.special(src)}, {bits};")
        e.prologue.append(f"\tor.b32 {acc}, {acc}, {t};")
    e.prologue.append(f"\tsetp.eq.u32 {p}, {acc}, 0;")
    e._coords[key] = p  # type: ignore[assignment]
    return p


def _and(e: Emitter, a: Reg | None, b: Reg | None) -> Reg | None:
    if a is None or b is None:
        return a or b
    d = e.fn.reg("pred")
    e.fn.emit(f"and.pred {d}, {a}, {b}")
    return d


@lowers(ops.LoadOp)
def load(e: Emitter, op: Operation) -> None:
    elem = _elem(op)
    cls = reg_class(elem)
    ptrs = e.get(op.ptr).regs
    mask = e.get(op.mask).regs if op.mask is not None else None
    other = e.get(op.other).regs if op.other is not None else None
    size = elem.itemsize if isinstance(elem, DType) and elem.kind != Kind.BOOL else (8 if cls == "b64" else 1)
    v = vector_width(e, op, size)
    cache, hint = _qualifiers(e, op, bool(op.volatile))
    out: list[Reg] = []
    packed: dict[tuple[str, str], Reg] = {}
    for start in range(0, len(ptrs), v):
        if 1 < v and size == 2:
            out += _load_halves(e, op, ptrs[start], mask[start] if mask is not None else None,
                                other[start:start + v] if other is not None else None, v, cache, hint, packed)
            continue
        regs = [e.fn.reg(cls if cls != "pred" else "b16") for _ in range(v)]
        if other is not None:
            for i, r in enumerate(regs):
                src = other[start + i]
                if cls == "pred":
                    e.fn.emit(f"selp.u16 {r}, 1, 0, {src}")
                else:
                    e.fn.emit(f"mov.{'b' + cls[1:] if not cls.startswith('f') else cls} {r}, {src}")
        elif mask is not None:
            _zero(e, regs)
        pred = mask[start] if mask is not None else None
        addr = ptrs[start]
        mt = _mem_type(elem)
        if v == 1:
            e.fn.emit(f"ld.global{cache}.{mt} {regs[0]}, [{addr}]{hint}", pred)
        else:
            e.fn.emit(f"ld.global{cache}.v{v}.{mt} {{{', '.join(map(str, regs))}}}, [{addr}]{hint}", pred)
        if cls == "pred":
            preds = []
            for r in regs:
                p = e.fn.reg("pred")
                e.fn.emit(f"setp.ne.u16 {p}, {r}, 0")
                preds.append(p)
            regs = preds
        out += regs
    e.set(op.result, out)


def _load_halves(e: Emitter, op: Operation, addr: Reg, pred: Reg | None, other: list[Reg] | None, v: int,
                 cache: str, hint: str, packed: dict[tuple[str, str], Reg]) -> list[Reg]:
    """A vector of ``v`` 16-bit elements, moved as packed 32-bit words: the words start
    as the packed ``other`` values (each distinct pair packed once per load op: a splat
    ``other`` costs one ``mov`` per word), load, and split into the elements' registers."""
    words = [e.fn.reg("b32") for _ in range(v // 2)]
    if other is not None:
        for w, i in zip(words, range(0, v, 2)):
            pair = (other[i].name, other[i + 1].name)
            if pair not in packed:
                packed[pair] = e.fn.reg("b32")
                e.fn.emit(f"mov.b32 {packed[pair]}, {{{other[i]}, {other[i + 1]}}}")
            e.fn.emit(f"mov.b32 {w}, {packed[pair]}")
    elif pred is not None:
        _zero(e, words)
    vec = f".v{v // 2}" if v > 2 else ""
    e.fn.emit(f"ld.global{cache}{vec}.b32 {{{', '.join(map(str, words))}}}, [{addr}]{hint}"
              if vec else f"ld.global{cache}.b32 {words[0]}, [{addr}]{hint}", pred)
    regs = [e.fn.reg("b16") for _ in range(v)]
    for w, i in zip(words, range(0, v, 2)):
        e.fn.emit(f"mov.b32 {{{regs[i]}, {regs[i + 1]}}}, {w}")
    return regs


def _zero(e: Emitter, regs: list[Reg]) -> None:
    """Masked-off elements of a load without ``other`` are 0, as in Triton. Without a value
    before the predicated load, the registers' earlier contents would stay live into it
    (a predicated write does not end a live range), around loops too: ptxas then keeps
    every loaded register alive for the whole kernel."""
    for r in regs:
        e.fn.emit(f"mov.b{r.cls[1:] if r.cls != 'pred' else 16} {r}, 0")


@lowers(ops.StoreOp)
def store(e: Emitter, op: Operation) -> None:
    elem = _elem(op)
    cls = reg_class(elem)
    ptr_value = op.ptr
    ptrs = e.get(ptr_value).regs
    vals = e.get(op.value).regs
    mask = e.get(op.mask).regs if op.mask is not None else None
    size = elem.itemsize if isinstance(elem, DType) and elem.kind != Kind.BOOL else (8 if cls == "b64" else 1)
    v = vector_width(e, op, size)
    cache, hint = _qualifiers(e, op)
    layout = ptr_value.type.layout if ptr_value.type.shape else None
    if layout is not None:
        owner = owner_predicate(e, layout)
    elif e.divergent_depth:
        owner = None  # under a branch on thread_id: the threads that get here store, each its own
    else:
        owner = _first_thread(e)  # one store of the value every thread holds (thread 0's)
    dup = access.duplicate_registers(layout) if layout is not None else set()
    for start in range(0, len(ptrs), v):
        if start in dup:
            continue
        regs = vals[start:start + v]
        if cls == "pred":
            conv = []
            for r in regs:
                h = e.fn.reg("b16")
                e.fn.emit(f"selp.u16 {h}, 1, 0, {r}")
                conv.append(h)
            regs = conv
        pred = _and(e, owner, mask[start] if mask is not None else None)
        mt = _mem_type(elem)
        addr = ptrs[start]
        if v == 1:
            e.fn.emit(f"st.global{cache}.{mt} [{addr}], {regs[0]}{hint}", pred)
        elif size >= 4 or size == 1:
            e.fn.emit(f"st.global{cache}.v{v}.{mt} [{addr}], {{{', '.join(map(str, regs))}}}{hint}", pred)
        else:
            words = [e.fn.reg("b32") for _ in range(v // 2)]
            for w, i in zip(words, range(0, v, 2)):
                e.fn.emit(f"mov.b32 {w}, {{{regs[i]}, {regs[i + 1]}}}")
            if v > 2:
                e.fn.emit(f"st.global{cache}.v{v // 2}.b32 [{addr}], {{{', '.join(map(str, words))}}}{hint}",
                          pred)
            else:
                e.fn.emit(f"st.global{cache}.b32 [{addr}], {words[0]}{hint}", pred)


def _first_thread(e: Emitter) -> Reg:
    key = ("first-thread", None)
    if key not in e._coords:
        p = e.fn.reg("pred")
        e.prologue.append(f"\tsetp.eq.u32 {p}, {e.special('tid')}, 0;")
        e._coords[key] = p  # type: ignore[assignment]
    return e._coords[key]  # type: ignore[return-value]
