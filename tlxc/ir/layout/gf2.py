"""Linear algebra over GF(2) on bit-vectors held in Python ints.

A vector of GF(2)^n is an ``int`` whose bit ``i`` is coordinate ``i``; addition is XOR.
Layouts need only a handful of operations (rank, membership, solving ``x`` in
``sum x_i g_i = t``, intersections and complements of subspaces), and Python's unbounded
ints make every one of them a short loop with no matrix library. Sizes stay tiny (a
128x256 tile is 15 bits), so clarity beats cleverness here.

The central object is ``Echelon``: a basis kept in echelon form (each row has a distinct
highest set bit, its *pivot*), which remembers for every row which of the inserted
*generators* XOR together to make it. That bookkeeping is what turns "is ``t`` in the
span?" into "which inputs produce ``t``?", i.e. into a (pseudo-)inverse.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class Echelon:
    """A growing basis in echelon form over GF(2).

    Generators are numbered in insertion order (``add`` returns whether the generator was
    independent of those before it; dependent generators still get a number, so a
    generator's number can be an input bit). Every stored row is the XOR of the generators
    named by its *combination* mask, so ``solve`` can say which generators make a vector.
    """

    __slots__ = ("_rows", "_count")

    def __init__(self, generators: Iterable[int] = ()) -> None:
        self._rows: dict[int, tuple[int, int]] = {}  # pivot bit -> (row, combination mask)
        self._count = 0
        for g in generators:
            self.add(g)

    @property
    def rank(self) -> int:
        return len(self._rows)

    @property
    def num_generators(self) -> int:
        return self._count

    def reduce(self, v: int) -> tuple[int, int]:
        """Return ``(rest, combo)`` with ``v == rest ^ XOR(generators in combo)``.

        ``rest`` is zero exactly when ``v`` lies in the span. Rows are applied from the
        highest pivot down, so ``rest`` has no bit at any pivot position.
        """
        combo = 0
        for pivot in sorted(self._rows, reverse=True):
            if (v >> pivot) & 1:
                row, c = self._rows[pivot]
                v ^= row
                combo ^= c
        return v, combo

    def add(self, v: int) -> bool:
        """Insert generator ``v``; True when it enlarged the span."""
        index = self._count
        self._count += 1
        rest, combo = self.reduce(v)
        if rest == 0:
            return False
        self._rows[rest.bit_length() - 1] = (rest, combo ^ (1 << index))
        return True

    def contains(self, v: int) -> bool:
        return self.reduce(v)[0] == 0

    def solve(self, target: int) -> int | None:
        """A mask of generators whose XOR is ``target``, or None when out of the span.

        Only independent generators (those for which ``add`` returned True) ever appear in
        the answer; when generators were inserted in increasing significance, the answer
        is therefore the numerically smallest mask that works (see ``LinearLayout.invert``).
        """
        rest, combo = self.reduce(target)
        return combo if rest == 0 else None

    def basis(self) -> list[int]:
        """The stored rows, lowest pivot first."""
        return [self._rows[p][0] for p in sorted(self._rows)]

    def copy(self) -> Echelon:
        other = Echelon()
        other._rows = dict(self._rows)
        other._count = self._count
        return other


def rank(vectors: Iterable[int]) -> int:
    return Echelon(vectors).rank


def span_contains(vectors: Iterable[int], v: int) -> bool:
    return Echelon(vectors).contains(v)


def independent_indices(vectors: Sequence[int]) -> list[int]:
    """Indices of the vectors that are independent of all vectors before them.

    The complement of this set are the *free* variables of the linear map whose columns
    are ``vectors``: bits whose effect can be reproduced by earlier bits.
    """
    ech = Echelon()
    return [i for i, v in enumerate(vectors) if ech.add(v)]


def basis_of(vectors: Iterable[int]) -> list[int]:
    """A basis of the span, chosen among ``vectors`` themselves (first ones preferred)."""
    out: list[int] = []
    ech = Echelon()
    for v in vectors:
        if ech.add(v):
            out.append(v)
    return out


def intersection(u: Iterable[int], w: Iterable[int]) -> list[int]:
    """A basis of span(u) ∩ span(w) (Zassenhaus: reduce pairs ``(x, x)`` and ``(y, 0)``).

    Rows are ``(x | x << shift)`` for x in u and ``y`` for y in w, reduced on the low half;
    rows whose low half vanishes carry intersection vectors in their high half.
    """
    u, w = list(u), list(w)
    shift = max([v.bit_length() for v in u + w] + [1])
    low = (1 << shift) - 1
    rows: list[int] = [x | (x << shift) for x in u] + list(w)
    # Gaussian elimination on the low half, pivot = highest low bit.
    out_rows: list[int] = []
    pivots: dict[int, int] = {}
    for r in rows:
        for p in sorted(pivots, reverse=True):
            if (r >> p) & 1:
                r ^= pivots[p]
        if r & low:
            pivots[(r & low).bit_length() - 1] = r
        elif r:
            out_rows.append(r >> shift)
    return basis_of(out_rows)


def extend_to(basis: Sequence[int], dim: int, candidates: Iterable[int]) -> list[int]:
    """Extend ``basis`` with vectors from ``candidates`` (in order) until it spans ``dim``."""
    ech = Echelon(basis)
    out = list(basis)
    for c in candidates:
        if ech.rank >= dim:
            break
        if ech.add(c):
            out.append(c)
    return out


def unit_vectors(n: int) -> list[int]:
    return [1 << i for i in range(n)]


def common_complement(u: Sequence[int], w: Sequence[int], n: int, dim: int | None = None) -> list[int]:
    """A basis of a subspace G of GF(2)^n with G ∩ span(u) = G ∩ span(w) = 0 and
    dim G = n - dim (``dim`` defaults to max(dim u, dim w) and may not be smaller).

    Both spaces are first padded to dimension ``dim``; then, writing U = I ⊕ U1 and
    W = I ⊕ W1 with I = U ∩ W, the sums ``u_i + w_i`` of paired basis vectors of U1 and
    W1 avoid both U and W, and a complement of U + W (unit vectors, lowest first) fills
    the rest. This exists over every field, GF(2) included, which is why a conflict-free
    swizzle for a pair of accesses always exists (see ``conversion.py``).
    """
    u = basis_of(u)
    w = basis_of(w)
    d = max(len(u), len(w)) if dim is None else dim
    if d < max(len(u), len(w)) or d > n:
        raise ValueError(f"cannot find a complement of dimension {n - d}")
    u = extend_to(u, d, _pad_candidates(w, n))
    w = extend_to(w, d, _pad_candidates(u, n))
    inter = intersection(u, w)
    u1 = extend_to(inter, d, u)[len(inter):]
    w1 = extend_to(inter, d, w)[len(inter):]
    paired = [a ^ b for a, b in zip(u1, w1)]
    total = basis_of(list(u) + list(w))
    rest = extend_to(total, n, unit_vectors(n))[len(total):]
    return paired + rest


def _pad_candidates(other: Sequence[int], n: int) -> list[int]:
    # Pad preferring the other space's vectors (keeps U ∩ W large, so fewer mixed rows).
    return list(other) + unit_vectors(n)


def lift(v: int, low: Sequence[int], high: Sequence[int]) -> int:
    """Given bases ``low`` and ``high`` whose union is a basis of the space, return the
    ``high`` component of ``v`` (the unique h in span(high) with v ^ h in span(low))."""
    ech = Echelon(list(low) + list(high))
    combo = ech.solve(v)
    if combo is None:
        raise ValueError("vector outside the space spanned by low + high")
    out = 0
    for i, h in enumerate(high):
        if (combo >> (len(low) + i)) & 1:
            out ^= h
    return out
