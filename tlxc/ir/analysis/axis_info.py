"""Axis info: what a kernel's integer and pointer values look like along each dimension --
the facts and the rule of each op; ``axis_analysis`` runs them over a kernel.

The code generators turn a ``load``/``store`` of a tile of pointers into vector memory
instructions when a thread's consecutive elements are consecutive addresses, suitably
aligned and equally masked. This analysis proves that (Triton calls it AxisInfo). It
reads a ``func`` and never rewrites it.

**What is computed.** For a value of shape ``S`` (a scalar counts as shape ``(1,)``) and a
dimension ``d``, cut the indices along ``d`` into aligned chunks ``[j*m, (j+1)*m)``; the
other indices stay fixed. Then, per dimension:

* ``contiguity`` ``c``: in every chunk of size ``c`` the values step by one -- by one
  integer, or for pointers by one pointee (``itemsize`` bytes);
* ``constancy`` ``k``: in every chunk of size ``k`` the values are equal;
* ``divisibility`` ``D``: the first element of every chunk of size ``c`` (a *run start*)
  is a multiple of ``D``; for pointers ``D`` is the address alignment in **bytes**. With
  ``c = 1`` every element is a run start.

All three are powers of two; ``c`` and ``k`` divide the dimension, ``D`` is at most
``MAX_DIVISIBILITY`` (what ``0`` gets). ``constant`` (the value, when every element is
the same known integer) and ``non_negative`` are tracked beside them because several rules
need them. "Nothing known" is ``c = D = k = 1``.

**Worked example** (``examples/vector_add.py`` with ``*fp32:16`` pointers, BLOCK=1024)::

    %2 = mul %pid, %c1024            D=1024                (1 * 1024)
    %3 = arange 0..1024              c=1024 D=2**30 k=1    (starts at 0)
    %5 = add (splat %2), %3          c=1024 D=1024         (constant run + contiguous run)
    %9 = addptr (splat %x_ptr), %5   c=1024 D=16 bytes     (min(16, 1024 * 4))
    %7 = cmp lt %5, (splat %n)       k=1 (n unknown), k=16 with n:16

so a thread may load ``min(1024, 16 / 4, 16 / 4) = 4`` floats with one instruction
(``AxisInfoMap.vector_elements``), if the mask allows it: with ``n:16`` its constancy is 16.

**Assumptions.** (1) Index arithmetic does not wrap around: contiguity and
non-negativity are kept through ``add``/``mul``/``shl``/``convert`` as if integers were
unbounded (Triton assumes the same; divisibility needs no such assumption, as wrapping
keeps the low bits). (2) A pointer argument is aligned to its pointee's size (what a
typed access needs anyway), and to more if the signature promises it. (3) Hints
(``multiple_of``, ``max_contiguous``, ``max_constancy``) are true. (4) The dividend of a signed ``%`` is
non-negative where that makes the remainder a run (``(pid_n * BLOCK + arange(BLOCK)) % N``,
whose sign no local rule can prove when ``pid_n`` comes through subtractions); Triton
assumes the same without checking. tlxc checks it: such ``rem`` ops are listed in
``AxisInfoMap.assumed_non_negative`` and the code generator makes each thread test its
dividends at run time and trap on a negative one (at the kernel's exit), so a wrong
assumption fails the launch instead of passing silently. Everything else is proved from the op
semantics in ``tlxc/ir/ops``; each rule's docstring says what it relies on, and
``tests/analysis/test_axis_info_soundness.py`` checks the rules against the interpreter.
A loop-carried value or an ``if`` result gets the meet of everything that can flow into
it, loops being iterated to a fixed point. Loads, floats, dots and ops without a rule
give "nothing known".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..passes import evaluate as ev
from ..types import DType, Kind, PointerType, Type

__all__ = ["MAX_DIVISIBILITY", "AxisInfo", "meet", "pow2_divisor"]

MAX_DIVISIBILITY = 1 << 30
# Carried infos only ever decrease, so loops settle; this bounds pathological nests.
_LOOP_LIMIT = 64


def pow2_divisor(n: int) -> int:
    """The largest power of two dividing ``n``, at most ``MAX_DIVISIBILITY`` (``0`` gets it)."""
    return MAX_DIVISIBILITY if n == 0 else min(n & -n, MAX_DIVISIBILITY)


def _cap(n: int) -> int:
    return min(max(n, 1), MAX_DIVISIBILITY)


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True)
class AxisInfo:
    """Per-dimension facts about one value (see the module docstring for their meaning)."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None
    non_negative: bool = False

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def unknown(rank: int = 1) -> "AxisInfo":
        """Nothing known: contiguity, divisibility and constancy 1 along every dimension."""
        ones = (1,) * rank
        return AxisInfo(ones, ones, ones)

    def __str__(self) -> str:
        def dims(t: tuple[int, ...]) -> str:
            return "[" + ", ".join(str(x) for x in t) + "]"

        text = (f"contiguity={dims(self.contiguity)} divisibility={dims(self.divisibility)} "
                f"constancy={dims(self.constancy)}")
        if self.constant is not None:
            text += f" constant={self.constant}"
        return text + (" non_negative" if self.non_negative else "")


# -- types ------------------------------------------------------------------------------
def _tracked(t: Type) -> bool:
    e = t.scalar
    return isinstance(e, PointerType) or (isinstance(e, DType) and e.kind != Kind.FLOAT)


def _is_int(t: Type) -> bool:
    return _int_dtype(t) is not None


def _int_dtype(t: Type) -> DType | None:
    """The element type of ``t`` when it is an integer (or i1), else None."""
    e = t.scalar
    return e if isinstance(e, DType) and e.kind != Kind.FLOAT else None


def _dims(t: Type) -> tuple[int, ...]:
    return t.shape or (1,)


def _unit(t: Type) -> int:
    """Bytes per step of a contiguous run: the pointee size for pointers, else 1."""
    e = t.scalar
    return e.pointee.itemsize if isinstance(e, PointerType) else 1


def _unsigned(t: Type) -> bool:
    e = t.scalar
    return isinstance(e, DType) and e.kind in (Kind.UINT, Kind.BOOL)


# -- the lattice ------------------------------------------------------------------------
def _div_at(x: AxisInfo, d: int, step: int, unit: int = 1) -> int:
    """Divisibility of the elements whose index along ``d`` is a multiple of ``step``.

    When ``step`` is a multiple of the contiguity those are run starts (``D``). Otherwise
    some lie ``j * step`` elements inside a run, i.e. ``j * step * unit`` past a multiple
    of ``D``, so only ``min(D, step * unit)`` divides them all. Every rule that makes runs
    shorter than an operand's goes through here (Triton's add can miss this: [0,1,2,3] +
    [0,0,4,4] has runs of 2 starting at 0 and 6, divisible by 2, not 4)."""
    if step >= x.contiguity[d]:
        return x.divisibility[d]
    return min(x.divisibility[d], step * unit)


def _div_all(x: AxisInfo, d: int, unit: int = 1) -> int:
    """Divisibility of every element (proved along dimension ``d``)."""
    return _div_at(x, d, 1, unit)


def _div_every(x: AxisInfo, unit: int = 1) -> int:
    """Divisibility of every element: each dimension's bound holds for all of them."""
    return max(_div_all(x, d, unit) for d in range(x.rank))


def meet(a: AxisInfo, b: AxisInfo, unit: int = 1) -> AxisInfo:
    """What holds for a value that is either ``a`` or ``b`` (``unit``: see ``_unit``)."""
    c = tuple(min(p, q) for p, q in zip(a.contiguity, b.contiguity))
    div = tuple(min(_div_at(a, d, c[d], unit), _div_at(b, d, c[d], unit)) for d in range(a.rank))
    k = tuple(min(p, q) for p, q in zip(a.constancy, b.constancy))
    same = a.constant if a.constant == b.constant else None
    return AxisInfo(c, div, k, same, a.non_negative and b.non_negative)


def _constant(value: int, t: Type) -> AxisInfo:
    dims = _dims(t)
    return AxisInfo((1,) * len(dims), (pow2_divisor(value),) * len(dims), dims, value, value >= 0)


def _scalar(div: int, non_negative: bool = False) -> AxisInfo:
    return AxisInfo((1,), (div,), (1,), None, non_negative)


def _fit(info: AxisInfo, t: Type) -> AxisInfo:
    """Clamp to the shape: runs and chunks never exceed (and always divide) a dimension.
    A known constant says everything: one value everywhere."""
    dims = _dims(t)
    assert info.rank == len(dims), f"axis info of rank {info.rank} for {t}"
    lim = tuple(n & -n for n in dims)
    if info.constant is not None:
        ones = (1,) * len(dims)
        return AxisInfo(ones, (pow2_divisor(info.constant),) * len(dims), lim, info.constant,
                        info.constant >= 0 or _unsigned(t))
    return AxisInfo(
        tuple(max(1, min(c, m)) for c, m in zip(info.contiguity, lim)),
        tuple(_cap(x) for x in info.divisibility),
        tuple(max(1, min(k, m)) for k, m in zip(info.constancy, lim)),
        info.constant,
        info.non_negative or _unsigned(t),
    )


# -- arithmetic rules -------------------------------------------------------------------
def _fold(name: str, a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo | None:
    e = _int_dtype(t)
    if a.constant is None or b.constant is None or e is None:
        return None
    v = ev.eval_int_binary(name, a.constant, b.constant, e)
    return None if v is None else _constant(v, t)


def _sum(a: AxisInfo, b: AxisInfo, *, subtract: bool = False, unit: int = 1, scale: int = 1) -> AxisInfo:
    """``a + b`` (``a - b``); for ``addptr`` ``a`` is the pointer and ``b`` the offset in
    elements, ``scale`` bytes each.

    A run of ``a`` plus a constant chunk of ``b`` is a run (and the other way round for
    ``+``, not for ``-``, which counts down); two runs minus each other are constant.
    Run starts are sums of elements whose divisibility ``_div_at`` gives."""
    c, div, k = [], [], []
    for d in range(a.rank):
        cd = min(a.contiguity[d], b.constancy[d])
        kd = min(a.constancy[d], b.constancy[d])
        if subtract:
            kd = max(kd, min(a.contiguity[d], b.contiguity[d]))
        else:
            cd = max(cd, min(a.constancy[d], b.contiguity[d]))
        c.append(cd)
        k.append(kd)
        div.append(min(_div_at(a, d, cd, unit), _cap(_div_at(b, d, cd) * scale)))
    nn = not subtract and a.non_negative and b.non_negative  # pointers are never marked
    return AxisInfo(tuple(c), tuple(div), tuple(k), None, nn)


def _mul(a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo:
    """Products are never runs (unless one factor is 1): the divisibilities of the
    elements multiply."""
    if a.constant == 1 or b.constant == 1:
        return b if a.constant == 1 else a
    if a.constant == 0 or b.constant == 0:
        return _constant(0, t)
    r = range(a.rank)
    return AxisInfo(
        (1,) * a.rank,
        tuple(_cap(_div_all(a, d) * _div_all(b, d)) for d in r),
        tuple(min(a.constancy[d], b.constancy[d]) for d in r),
        None,
        a.non_negative and b.non_negative,
    )


def _aligned_chunk(a: AxisInfo, b: AxisInfo, d: int) -> int:
    """Size ``g`` of the chunks along ``d`` that start at a multiple of ``g`` inside a run
    of ``a`` while ``b`` is one multiple of ``g`` over the chunk. Such a chunk
    ``t, t+1, ..., t+g-1`` does not cross a multiple of ``b`` (``b`` and ``t`` are
    multiples of ``g``), which makes ``a // b``, ``a < b``... constant and ``a % b`` a run."""
    return min(a.contiguity[d], a.divisibility[d], _div_all(b, d), b.constancy[d])


def _idiv(a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo:
    """Truncating division. Constant chunks of ``a // b`` need ``a >= 0`` (truncation
    rounds -7 // 8 and -8 // 8 differently); dividing by ``+-2**p`` is exact on a multiple
    of ``2**p``, so divisibility shrinks by ``2**p``."""
    if b.constant == 1:
        return a
    div, k = [], []
    p = abs(b.constant) if b.constant is not None else 0
    for d in range(a.rank):
        kd = min(a.constancy[d], b.constancy[d])
        if a.non_negative:
            kd = max(kd, _aligned_chunk(a, b, d))
        k.append(kd)
        div.append(max(1, _div_all(a, d) // p) if _is_pow2(p) else 1)
    return AxisInfo((1,) * a.rank, tuple(div), tuple(k), None, a.non_negative and b.non_negative)


def _rem(a: AxisInfo, b: AxisInfo, t: Type, assume_non_negative: bool = False) -> AxisInfo:
    """Remainder with the dividend's sign. ``a % b`` is a run where ``_aligned_chunk``
    allows and ``a >= 0`` (``-8 % 8, -7 % 8`` is ``0, -7``); a run start ``r = t - q*b`` is
    a multiple of what divides both ``t`` and ``b``, and ``0`` when ``b = +-2**p`` divides
    ``t``. ``assume_non_negative``: take ``a >= 0`` as given (assumption (4))."""
    if b.constant in (1, -1):
        return _constant(0, t)
    if assume_non_negative:
        a = AxisInfo(a.contiguity, a.divisibility, a.constancy, a.constant, True)
    c, div, k = [], [], []
    p = abs(b.constant) if b.constant is not None else 0
    for d in range(a.rank):
        cd = _aligned_chunk(a, b, d) if a.non_negative else 1
        da = _div_at(a, d, cd)
        c.append(cd)
        k.append(min(a.constancy[d], b.constancy[d]))
        div.append(MAX_DIVISIBILITY if _is_pow2(p) and da >= p else min(da, _div_at(b, d, cd)))
    return AxisInfo(tuple(c), tuple(div), tuple(k), None, a.non_negative)


def _and(a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo:
    """Bitwise and. With a constant low mask ``2**p - 1`` it is the floored ``a mod
    2**p`` (two's complement, so no sign condition); with a high mask ``-2**p`` it rounds
    down to a multiple of ``2**p``. Otherwise: zeros at the bottom of either operand stay."""
    if a.constant is not None and b.constant is None:
        a, b = b, a
    if b.constant is not None:
        bits = t.scalar.bits
        full = (1 << bits) - 1
        pattern = b.constant & full
        if pattern == full:
            return a
        if pattern == 0:
            return _constant(0, t)
        low = pattern + 1
        high = (~pattern & full) + 1
        if _is_pow2(low) or _is_pow2(high):
            c, div, k = [], [], []
            for d in range(a.rank):
                if _is_pow2(low):
                    cd = min(a.contiguity[d], a.divisibility[d], low)
                    da = _div_at(a, d, cd)
                    c.append(cd)
                    k.append(a.constancy[d])
                    div.append(MAX_DIVISIBILITY if da >= low else da)
                else:
                    c.append(1)
                    k.append(max(a.constancy[d], min(a.contiguity[d], a.divisibility[d], high)))
                    div.append(max(high, _div_all(a, d)))
            nn = _is_pow2(low) or a.non_negative
            return AxisInfo(tuple(c), tuple(div), tuple(k), None, nn)
    r = range(a.rank)
    return AxisInfo((1,) * a.rank, tuple(max(_div_all(a, d), _div_all(b, d)) for d in r),
                    tuple(min(a.constancy[d], b.constancy[d]) for d in r), None,
                    a.non_negative or b.non_negative)


def _or_xor(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """``|`` and ``^`` keep the zeros at the bottom of both operands, and ``x | 0``,
    ``x ^ 0`` are ``x``."""
    if a.constant == 0 or b.constant == 0:
        return b if a.constant == 0 else a
    r = range(a.rank)
    return AxisInfo((1,) * a.rank, tuple(min(_div_all(a, d), _div_all(b, d)) for d in r),
                    tuple(min(a.constancy[d], b.constancy[d]) for d in r), None,
                    a.non_negative and b.non_negative)


def _shift(left: bool, a: AxisInfo, b: AxisInfo, t: Type) -> AxisInfo:
    """``a << s`` is ``a * 2**s``. ``a >> s`` is ``floor(a / 2**s)`` (arithmetic on signed
    types, logical on unsigned non-negative ones), constant on the chunks of
    ``_aligned_chunk`` with no sign condition, and exact on multiples of ``2**s``. A shift
    by an unknown amount keeps only constancy (and the low zeros, to the left)."""
    s = b.constant if b.constant is not None and 0 <= b.constant < t.scalar.bits else None
    if s == 0:
        return a
    div, k = [], []
    for d in range(a.rank):
        kd = min(a.constancy[d], b.constancy[d])
        if left:
            div.append(_div_all(a, d) if s is None else _cap(_div_all(a, d) << s))
        else:
            if s is not None:
                kd = max(kd, min(a.contiguity[d], a.divisibility[d], 1 << s))
            div.append(1 if s is None else max(1, _div_all(a, d) >> s))
        k.append(kd)
    nn = a.non_negative and (s is not None or not left)
    return AxisInfo((1,) * a.rank, tuple(div), tuple(k), None, nn)


def _choose(a: AxisInfo, b: AxisInfo, unit: int, cond: Sequence[int] | None = None) -> AxisInfo:
    """An element of ``a`` or of ``b`` (``minimum``, ``maximum``; ``select`` with the
    condition's constancy ``cond``). Within a chunk where both operands are runs (or both
    constant) and the choice cannot change, the result is a run (constant). For
    ``select`` the condition is constant there; for min/max two runs differ by a constant
    there, so one side wins throughout."""
    r = range(a.rank)
    limit = tuple(cond) if cond is not None else (MAX_DIVISIBILITY,) * a.rank
    c = tuple(min(a.contiguity[d], b.contiguity[d], limit[d]) for d in r)
    k = tuple(min(a.constancy[d], b.constancy[d], limit[d]) for d in r)
    div = tuple(min(_div_at(a, d, c[d], unit), _div_at(b, d, c[d], unit)) for d in r)
    same = a.constant if a.constant == b.constant else None
    return AxisInfo(c, div, k, same, a.non_negative and b.non_negative)


def _cmp(a: AxisInfo, b: AxisInfo, predicate: str, t: Type, result: Type) -> AxisInfo:
    """An i1 tile: only constancy matters. Besides chunks where both sides are constant,
    ``run < constant`` and ``run >= constant`` are constant on ``_aligned_chunk``'s chunks
    (``t < B`` iff ``t + g - 1 < B`` for multiples ``t``, ``B`` of ``g``), as are
    ``constant > run`` and ``constant <= run``. ``run <= B``, ``run > B`` and ``==``,
    ``!=`` are not: the answer changes at ``t = B``, which may start a chunk."""
    e = _int_dtype(t)
    if a.constant is not None and b.constant is not None and e is not None:
        v = ev.eval_cmp(predicate, a.constant, b.constant, e)
        if v is not None:
            return _constant(v, result)
    k = []
    for d in range(a.rank):
        kd = min(a.constancy[d], b.constancy[d])
        if _is_int(t) and predicate in ("lt", "ge"):
            kd = max(kd, _aligned_chunk(a, b, d))
        elif _is_int(t) and predicate in ("gt", "le"):
            kd = max(kd, _aligned_chunk(b, a, d))
        k.append(kd)
    return AxisInfo((1,) * a.rank, (1,) * a.rank, tuple(k), None, True)


def _cast(x: AxisInfo, src: Type, dst: Type) -> AxisInfo:
    """``convert`` between integers, ``bitcast``, ``ptrtoint``, ``inttoptr``.

    Integer conversions keep the low bits, hence divisibility; constancy always survives;
    contiguity survives by the no-wrap assumption. A result counts in different units when
    pointers are involved: a run of ``ptr<f32>`` is a run of addresses only if the new
    unit is the same, else its steps are ``_div_at``'s."""
    s, t = src.scalar, dst.scalar
    if (isinstance(s, DType) and s.kind == Kind.FLOAT) or not _tracked(dst):
        return AxisInfo.unknown(x.rank)
    if isinstance(t, DType) and t.kind == Kind.BOOL:  # ``x != 0``
        const = None if x.constant is None else int(x.constant != 0)
        return AxisInfo((1,) * x.rank, (1,) * x.rank, x.constancy, const, True)
    unit_src = _unit(src) if isinstance(s, PointerType) else 1
    unit_dst = _unit(dst) if isinstance(t, PointerType) else 1
    if unit_src == unit_dst:
        c = x.contiguity
    else:
        c = (1,) * x.rank
    div = tuple(_div_at(x, d, c[d], unit_src) for d in range(x.rank))
    const, nn = None, False
    if isinstance(s, DType) and isinstance(t, DType):
        if x.constant is not None:
            folded = ev.eval_convert(x.constant, s, t)  # integer to integer (``dst`` is tracked): an int
            const = folded if isinstance(folded, int) else None
        widens = t.bits > s.bits or (t.bits == s.bits and not (_unsigned(src) and not _unsigned(dst)))
        nn = x.non_negative and widens
    return AxisInfo(c, div, x.constancy, const, nn)


# -- shape rules ------------------------------------------------------------------------
def _per_element(x: AxisInfo, dims: tuple[int, ...], unit: int) -> AxisInfo:
    """What holds for a value made of ``x``'s elements in any arrangement."""
    if x.constant is not None:
        return AxisInfo((1,) * len(dims), (pow2_divisor(x.constant),) * len(dims), dims, x.constant,
                        x.non_negative)
    ones = (1,) * len(dims)
    return AxisInfo(ones, (_div_every(x, unit),) * len(dims), ones, None, x.non_negative)


def _expand_dims(x: AxisInfo, src: Type, axis: int, unit: int) -> AxisInfo:
    """A new dimension of size 1: every element is a run start along it."""
    if not src.shape:
        return AxisInfo((1,), x.divisibility, (1,), x.constant, x.non_negative)
    every = _div_every(x, unit)
    c, div, k = list(x.contiguity), list(x.divisibility), list(x.constancy)
    c.insert(axis, 1)
    div.insert(axis, every)
    k.insert(axis, 1)
    return AxisInfo(tuple(c), tuple(div), tuple(k), x.constant, x.non_negative)


def _reshape(x: AxisInfo, src: Type, dst: Type, can_reorder: bool, unit: int) -> AxisInfo:
    """Row-major reshape. Dimensions of size 1 may come and go; otherwise only the last
    dimension keeps its runs, when one last dimension divides the other (a run never
    crosses a row since it divides the row). With ``can_reorder`` the compiler may
    permute elements, so only per-element facts are left."""
    dims = _dims(dst)
    base = _per_element(x, dims, unit)
    if can_reorder or x.constant is not None:
        return base
    s_dims = _dims(src)
    if [n for n in s_dims if n != 1] == [n for n in dims if n != 1]:
        keep = [d for d, n in enumerate(s_dims) if n != 1]
        cs: list[int] = []
        divs: list[int] = []
        ks: list[int] = []
        for n in dims:
            if n == 1:
                cs.append(1)
                divs.append(base.divisibility[0])
                ks.append(1)
            else:
                d = keep.pop(0)
                cs.append(x.contiguity[d])
                divs.append(x.divisibility[d])
                ks.append(x.constancy[d])
        return AxisInfo(tuple(cs), tuple(divs), tuple(ks), None, x.non_negative)
    last_s, last_d = s_dims[-1], dims[-1]
    if last_s % last_d and last_d % last_s:
        return base
    cd = min(x.contiguity[-1], last_d)
    c = base.contiguity[:-1] + (cd,)
    div = base.divisibility[:-1] + (_div_at(x, x.rank - 1, cd, unit),)
    k = base.constancy[:-1] + (min(x.constancy[-1], last_d),)
    return AxisInfo(c, div, k, None, x.non_negative)


def _hint(x: AxisInfo, name: str, values: Sequence[int]) -> AxisInfo:
    """``multiple_of`` / ``max_contiguous`` / ``max_constancy``: the user's promise, in the units of the
    value (bytes for a pointer's ``multiple_of``). As in Triton, ``multiple_of`` speaks of
    the first element of every run (for a run no promise could cover every element), so
    the idiom ``max_contiguous(multiple_of(x, B), B)`` promises runs of ``B`` starting at
    multiples of ``B``. A hint only adds knowledge: the promise and the proof both hold,
    so the larger is kept. Runs of ``v`` are runs of ``v``'s largest power-of-two divisor;
    the divisibility of shorter runs stays right for longer ones, whose starts are a
    subset."""
    hinted = tuple(pow2_divisor(int(v)) for v in values)
    if name == "multiple_of":
        div = tuple(max(a, h) for a, h in zip(x.divisibility, hinted))
        return AxisInfo(x.contiguity, div, x.constancy, x.constant, x.non_negative)
    if name == "max_constancy":
        k = tuple(max(a, h) for a, h in zip(x.constancy, hinted))
        return AxisInfo(x.contiguity, x.divisibility, k, x.constant, x.non_negative)
    c = tuple(max(a, h) for a, h in zip(x.contiguity, hinted))
    return AxisInfo(c, x.divisibility, x.constancy, x.constant, x.non_negative)
