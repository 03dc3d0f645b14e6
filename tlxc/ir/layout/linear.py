"""``LinearLayout``: one representation for every layout, a linear map over GF(2).

A layout says where each element of a tile lives: in which register of which lane of
which warp of which CTA (a *distributed* layout), or at which offset of a shared-memory
buffer (a *shared* layout). tlxc writes every such layout as a map from named **input
dims** (``register``, ``lane``, ``warp``, ``block``; ``offset`` for shared memory) to
named **output dims** (``dim0``, ``dim1``...: the tile's coordinates). All sizes are
powers of two, and the map is linear over GF(2): it is fixed by the images of the
input bits (the *bases*), and the image of any input is the XOR of the bases of its set
bits. The idea and the vocabulary come from Triton's linear layouts and the paper
"Linear Layouts: Robust Code Generation of Efficient Tensor Computation Using F2".

Worked example
--------------
A 4x4 tile held by a toy warp of 8 lanes, two registers per lane::

    L = LinearLayout({"register": [(0, 1)],
                      "lane": [(0, 2), (1, 0), (2, 0)]},
                     {"dim0": 4, "dim1": 4})

Register bit 0 moves one column; lane bit 0 moves two columns; lane bits 1 and 2 move
one and two rows. Lane 5 (0b101) register 1 therefore holds

    L(register=1, lane=5) = (0,1) ^ (0,2) ^ (2,0) = (2, 3)

and ``print(L.table())`` shows every owner (``t`` lane, ``r`` register)::

    dim0\\dim1  0      1      2      3
    0          t0:r0  t0:r1  t1:r0  t1:r1
    1          t2:r0  t2:r1  t3:r0  t3:r1
    2          t4:r0  t4:r1  t5:r0  t5:r1
    3          t6:r0  t6:r1  t7:r0  t7:r1

``L.invert()`` maps ``(dim0=2, dim1=3)`` back to ``(register=1, lane=5)``. Suppose a
consumer wants the same tile transposed across lanes, ``M`` with
``lane: [(1,0), (2,0), (0,2)]`` and the same register basis. Then
``L.invert_and_compose(M)`` maps each ``(register, lane)`` of ``L`` to the
``(register, lane)`` of ``M`` that holds the same element -- the data movement a layout
conversion must perform, computed by one general operation rather than a case per pair
of layouts. Here it sends lane bit 0 to lane bit 2, lane bit 1 to lane bit 0 and lane
bit 2 to lane bit 1: a pure lane permutation, so a warp shuffle suffices.

Conventions
-----------
* Dims are ordered; the first input dim is the least significant when inputs are
  flattened to one integer, likewise for outputs (``apply_flat``, ``reshape_ins``).
* A basis may be zero: that input bit is *broadcast* (two lanes hold the same data).
  Distinct bases may also coincide or be dependent; ``free_variable_masks`` finds them.
* Layouts are immutable and hashable; ``str()`` is a one-line form that ``parse`` reads
  back, ``table()`` renders ownership for small tiles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import product as _cartesian

from . import gf2

Bases = Mapping[str, Sequence[Sequence[int]]]
DimSizes = Mapping[str, int] | Sequence[tuple[str, int]]

# Short names used by ``table()`` for the usual input dims.
_ABBREV = {"register": "r", "lane": "t", "warp": "w", "block": "b", "offset": ""}


class LayoutError(ValueError):
    """A layout operation was asked something its operands cannot give.

    The message includes the ownership tables of the layouts involved (when small), so
    the reader sees *what* disagreed, not just that something did.
    """

    def __init__(self, message: str, *layouts: LinearLayout) -> None:
        parts = [message]
        for i, lay in enumerate(layouts):
            parts.append(f"--- layout {i}: {lay}")
            if lay.total_out_size <= 1024 and 1 <= lay.num_out_dims <= 2:
                parts.append(lay.table())
        super().__init__("\n".join(parts))


def is_pow2(n: int) -> bool:
    return n >= 1 and (n & (n - 1)) == 0


def log2(n: int) -> int:
    """log2 of a power of two (raises otherwise: layouts only have power-of-two sizes)."""
    if not is_pow2(n):
        raise LayoutError(f"size {n} is not a power of two")
    return n.bit_length() - 1


def _pairs(dims: DimSizes) -> list[tuple[str, int]]:
    return list(dims.items()) if isinstance(dims, Mapping) else [(n, s) for n, s in dims]


class LinearLayout:
    """A linear map over GF(2) from named input dims to named output dims.

    ``bases[in_dim][i]`` is the image of input bit ``i`` of ``in_dim``: one coordinate per
    output dim (in output-dim order). ``out_dims`` gives the output sizes, or just their
    names, in which case each size is the smallest power of two above every basis value.
    """

    __slots__ = ("_ins", "_bases", "_outs", "_out_names", "_flat", "_shifts", "_hash")

    def __init__(self, bases: Bases | Sequence[tuple[str, Sequence[Sequence[int]]]],
                 out_dims: DimSizes | Sequence[str]) -> None:
        items: list[tuple[str, Sequence[Sequence[int]]]] = (
            list(bases.items()) if isinstance(bases, Mapping) else list(bases))
        outs: list[tuple[str, int]]
        if isinstance(out_dims, Mapping):
            outs = list(out_dims.items())
        else:
            seq = list(out_dims)
            if all(isinstance(o, str) for o in seq):
                outs = [(str(name), 1) for name in seq]
                for _, bs in items:
                    for b in bs:
                        for j, v in enumerate(b):
                            if j < len(outs):
                                size = 1 << max(0, int(v)).bit_length()
                                outs[j] = (outs[j][0], max(outs[j][1], size))
            else:  # (name, size) pairs
                outs = [(str(n), int(s)) for n, s in seq]
        names = [n for n, _ in outs]
        if len(set(names)) != len(names):
            raise LayoutError(f"duplicate output dims {names}")
        in_names = [n for n, _ in items]
        if len(set(in_names)) != len(in_names):
            raise LayoutError(f"duplicate input dims {in_names}")
        for name, size in outs:
            if not is_pow2(size):
                raise LayoutError(f"output dim {name!r} has size {size}, not a power of two")
        norm: list[tuple[tuple[int, ...], ...]] = []
        for in_name, bs in items:
            rows = []
            for b in bs:
                b = tuple(int(v) for v in b)
                if len(b) != len(outs):
                    raise LayoutError(f"basis {b} of {in_name!r} has {len(b)} coordinates, "
                                      f"expected one per output dim {names}")
                for (out_name, size), v in zip(outs, b):
                    if not 0 <= v < size:
                        raise LayoutError(f"basis {b} of {in_name!r}: {out_name}={v} is outside [0, {size})")
                rows.append(b)
            norm.append(tuple(rows))
        self._ins: tuple[str, ...] = tuple(in_names)
        self._bases: tuple[tuple[tuple[int, ...], ...], ...] = tuple(norm)
        self._outs: tuple[tuple[str, int], ...] = tuple((n, int(s)) for n, s in outs)
        self._out_names: tuple[str, ...] = tuple(names)
        shifts, acc = [], 0
        for _, size in self._outs:
            shifts.append(acc)
            acc += log2(size)
        self._shifts: tuple[int, ...] = tuple(shifts)
        self._flat: tuple[int, ...] = tuple(self._encode_out(b) for bs in self._bases for b in bs)
        self._hash: int | None = None

    # ----------------------------------------------------------------- constructors
    @classmethod
    def empty(cls) -> LinearLayout:
        """The layout with no dims: the unit of ``*``."""
        return cls({}, {})

    @classmethod
    def identity_1d(cls, size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``in_dim`` bit i -> ``out_dim`` value 2^i (size 1 gives a dim with no bits)."""
        return cls({in_dim: [(1 << i,) for i in range(log2(size))]}, {out_dim: size})

    @classmethod
    def zeros_1d(cls, size: int, in_dim: str, out_dim: str, out_size: int = 1) -> LinearLayout:
        """Every input maps to 0: ``size`` inputs that all hold the same element."""
        return cls({in_dim: [(0,)] * log2(size)}, {out_dim: out_size})

    @classmethod
    def strided_1d(cls, size: int, stride: int, in_dim: str, out_dim: str,
                   out_size: int | None = None) -> LinearLayout:
        """``in_dim`` bit i -> ``stride * 2^i`` (``stride`` a power of two)."""
        log2(stride)
        out_size = size * stride if out_size is None else out_size
        return cls({in_dim: [(stride << i,) for i in range(log2(size))]}, {out_dim: out_size})

    # ----------------------------------------------------------------- shape queries
    @property
    def in_dims(self) -> tuple[str, ...]:
        return self._ins

    @property
    def out_dims(self) -> tuple[str, ...]:
        return self._out_names

    @property
    def num_in_dims(self) -> int:
        return len(self._ins)

    @property
    def num_out_dims(self) -> int:
        return len(self._outs)

    @property
    def bases(self) -> dict[str, tuple[tuple[int, ...], ...]]:
        return dict(zip(self._ins, self._bases))

    @property
    def in_sizes(self) -> dict[str, int]:
        return {n: 1 << len(bs) for n, bs in zip(self._ins, self._bases)}

    @property
    def out_sizes(self) -> dict[str, int]:
        return dict(self._outs)

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(s for _, s in self._outs)

    def has_in_dim(self, name: str) -> bool:
        return name in self._ins

    def has_out_dim(self, name: str) -> bool:
        return any(n == name for n, _ in self._outs)

    def in_bases(self, name: str) -> tuple[tuple[int, ...], ...]:
        return self._bases[self._in_index(name)]

    def basis(self, in_dim: str, bit: int) -> tuple[int, ...]:
        return self.in_bases(in_dim)[bit]

    def in_dim_bits(self, name: str) -> int:
        return len(self.in_bases(name))

    def in_dim_size(self, name: str) -> int:
        return 1 << self.in_dim_bits(name)

    def out_dim_size(self, name: str) -> int:
        return self._outs[self._out_index(name)][1]

    def out_dim_bits(self, name: str) -> int:
        return log2(self.out_dim_size(name))

    @property
    def total_in_bits(self) -> int:
        return sum(len(bs) for bs in self._bases)

    @property
    def total_out_bits(self) -> int:
        return sum(log2(s) for _, s in self._outs)

    @property
    def total_in_size(self) -> int:
        return 1 << self.total_in_bits

    @property
    def total_out_size(self) -> int:
        return 1 << self.total_out_bits

    def _in_index(self, name: str) -> int:
        try:
            return self._ins.index(name)
        except ValueError:
            raise LayoutError(f"no input dim {name!r} in {self}") from None

    def _out_index(self, name: str) -> int:
        for i, (n, _) in enumerate(self._outs):
            if n == name:
                return i
        raise LayoutError(f"no output dim {name!r} in {self}")

    # ----------------------------------------------------------------- flat encoding
    def _encode_out(self, coords: Sequence[int]) -> int:
        v = 0
        for c, s in zip(coords, self._shifts):
            v |= c << s
        return v

    def _decode_out(self, v: int) -> tuple[int, ...]:
        return tuple((v >> s) & (size - 1) for s, (_, size) in zip(self._shifts, self._outs))

    def flat_bases(self) -> tuple[int, ...]:
        """Every input bit's image as one integer (outputs flattened, first dim lowest)."""
        return self._flat

    def encode_in(self, coords: Mapping[str, int]) -> int:
        """Flatten named input coordinates into one integer (first input dim lowest)."""
        unknown = set(coords) - set(self._ins)
        if unknown:
            raise LayoutError(f"unknown input dims {sorted(unknown)} for {self}")
        v, shift = 0, 0
        for name, bs in zip(self._ins, self._bases):
            c = int(coords.get(name, 0))
            if not 0 <= c < (1 << len(bs)):
                raise LayoutError(f"{name}={c} is outside [0, {1 << len(bs)}) for {self}")
            v |= c << shift
            shift += len(bs)
        return v

    def decode_in(self, v: int) -> dict[str, int]:
        out, shift = {}, 0
        for name, bs in zip(self._ins, self._bases):
            out[name] = (v >> shift) & ((1 << len(bs)) - 1)
            shift += len(bs)
        return out

    def encode_out(self, coords: Mapping[str, int]) -> int:
        unknown = set(coords) - set(self.out_dims)
        if unknown:
            raise LayoutError(f"unknown output dims {sorted(unknown)} for {self}")
        vals = []
        for name, size in self._outs:
            c = int(coords.get(name, 0))
            if not 0 <= c < size:
                raise LayoutError(f"{name}={c} is outside [0, {size}) for {self}")
            vals.append(c)
        return self._encode_out(vals)

    def decode_out(self, v: int) -> dict[str, int]:
        return dict(zip(self.out_dims, self._decode_out(v)))

    # ----------------------------------------------------------------- evaluation
    def apply_flat(self, x: int) -> int:
        v, i = 0, 0
        while x:
            if x & 1:
                v ^= self._flat[i]
            x >>= 1
            i += 1
        return v

    def apply(self, coords: Mapping[str, int] | None = None, /, **kw: int) -> dict[str, int]:
        """Image of the given input coordinates (missing input dims count as 0)."""
        merged = dict(coords or {})
        merged.update(kw)
        return self.decode_out(self.apply_flat(self.encode_in(merged)))

    __call__ = apply

    # ----------------------------------------------------------------- algebra
    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        """Product: ``self`` is the minor part, ``outer`` the major part.

        Input dims in both layouts get ``outer``'s bits after ``self``'s; output dims in
        both get ``outer``'s values shifted above ``self``'s range. Dims found in only one
        layout are kept as they are. Shared dims must appear in the same relative order.
        ``identity_1d(4, "r", "d") * identity_1d(8, "r", "d") == identity_1d(32, "r", "d")``.
        """
        _check_same_relative_order(self.in_dims, outer.in_dims, "input")
        _check_same_relative_order(self.out_dims, outer.out_dims, "output")
        in_names = list(dict.fromkeys(self.in_dims + outer.in_dims))
        out_names = list(dict.fromkeys(self.out_dims + outer.out_dims))
        out_sizes = {n: self.out_sizes.get(n, 1) * outer.out_sizes.get(n, 1) for n in out_names}
        inner_shift = {n: log2(self.out_sizes.get(n, 1)) for n in out_names}
        new_bases: dict[str, list[tuple[int, ...]]] = {}
        for name in in_names:
            rows: list[tuple[int, ...]] = []
            if self.has_in_dim(name):
                for b in self.in_bases(name):
                    d = dict(zip(self.out_dims, b))
                    rows.append(tuple(d.get(n, 0) for n in out_names))
            if outer.has_in_dim(name):
                for b in outer.in_bases(name):
                    d = dict(zip(outer.out_dims, b))
                    rows.append(tuple(d.get(n, 0) << inner_shift[n] for n in out_names))
            new_bases[name] = rows
        return LinearLayout(new_bases, [(n, out_sizes[n]) for n in out_names])

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer ∘ self``: apply ``self``, then ``outer``.

        ``self``'s output dims must be ``outer``'s input dims (any order), each no larger.
        """
        if set(self.out_dims) != set(outer.in_dims):
            raise LayoutError(f"cannot compose: outputs {self.out_dims} vs inputs {outer.in_dims}", self, outer)
        for name, size in self._outs:
            if size > outer.in_dim_size(name):
                raise LayoutError(f"cannot compose: {name} has size {size} > {outer.in_dim_size(name)}", self, outer)
        new = {}
        for name, bs in zip(self._ins, self._bases):
            new[name] = [tuple(outer.apply(dict(zip(self.out_dims, b))).values()) for b in bs]
        return LinearLayout(new, outer._outs)

    def invert(self) -> LinearLayout:
        """The (pseudo-)inverse: output coordinates -> the smallest input producing them.

        Needs a surjective layout. For a bijective layout this is the inverse map; when
        several inputs hold an element (broadcast), the one with the smallest flattened
        input (first input dim least significant, so registers are preferred over lanes,
        lanes over warps) is chosen. That choice is linear: it solves using only the
        non-free input bits (see ``free_variable_masks``), and the coset member supported
        on those bits is the minimum of its coset.
        """
        if not self.is_surjective():
            raise LayoutError("invert() needs a surjective layout", self)
        identity = LinearLayout.empty()
        for name, size in self._outs:
            identity = identity * LinearLayout.identity_1d(size, name, name)
        return identity.invert_and_compose(self)

    def invert_and_compose(self, outer: LinearLayout) -> LinearLayout:
        """The map ``C`` with ``outer(C(x)) == self(x)``: ``outer⁻¹ ∘ self``.

        Both layouts must have the same output dims. For a layout conversion from ``src``
        to ``dst``, ``src.invert_and_compose(dst)`` sends each (register, lane, warp,
        block) of ``src`` to the coordinates of ``dst`` that hold the same element. Where
        ``outer`` holds an element several times, the smallest such input is chosen (see
        ``invert``); ``conversion.conversion_map`` refines that choice to keep data in
        place when the layouts share broadcast structure.
        """
        if set(self.out_dims) != set(outer.out_dims):
            raise LayoutError(f"invert_and_compose: outputs {self.out_dims} vs {outer.out_dims}", self, outer)
        ech = gf2.Echelon(outer.flat_bases())
        new = {}
        for name, bs in zip(self._ins, self._bases):
            rows = []
            for b in bs:
                target = outer.encode_out(dict(zip(self.out_dims, b)))
                combo = ech.solve(target)
                if combo is None:
                    raise LayoutError(f"invert_and_compose: {dict(zip(self.out_dims, b))} (image of {name}) "
                                      "is not held by the outer layout", self, outer)
                rows.append(tuple(outer.decode_in(combo).values()))
            new[name] = rows
        return LinearLayout(new, list(outer.in_sizes.items()))

    # ----------------------------------------------------------------- reshaping
    def reshape_ins(self, new_ins: DimSizes) -> LinearLayout:
        """Re-cut the flattened input bits into ``new_ins`` (first dim least significant)."""
        pairs = _pairs(new_ins)
        if sum(log2(s) for _, s in pairs) != self.total_in_bits:
            raise LayoutError(f"reshape_ins: {pairs} does not have {self.total_in_size} elements", self)
        flat = [b for bs in self._bases for b in bs]
        out, i = {}, 0
        for name, size in pairs:
            k = log2(size)
            out[name] = flat[i:i + k]
            i += k
        return LinearLayout(out, self._outs)

    def reshape_outs(self, new_outs: DimSizes) -> LinearLayout:
        """Re-cut the flattened output space into ``new_outs`` (first dim least significant).

        A row-major tile reshape needs the dims reversed around this (``shape_ops.reshape``).
        """
        pairs = _pairs(new_outs)
        if sum(log2(s) for _, s in pairs) != self.total_out_bits:
            raise LayoutError(f"reshape_outs: {pairs} does not have {self.total_out_size} elements", self)
        tmp = LinearLayout({}, pairs)
        new = {name: [tmp._decode_out(f) for f in self._flat_of(name)] for name in self._ins}
        return LinearLayout(new, pairs)

    def _flat_of(self, in_dim: str) -> list[int]:
        return [self._encode_out(b) for b in self.in_bases(in_dim)]

    def flatten_ins(self, name: str | None = None) -> LinearLayout:
        name = name or (self._ins[0] if self._ins else "in")
        return self.reshape_ins([(name, self.total_in_size)])

    def flatten_outs(self, name: str | None = None) -> LinearLayout:
        name = name or (self.out_dims[0] if self._outs else "out")
        return self.reshape_outs([(name, self.total_out_size)])

    def transpose_ins(self, order: Sequence[str]) -> LinearLayout:
        """Reorder the input dims (the map is unchanged, only the flattening order)."""
        if sorted(order) != sorted(self._ins):
            raise LayoutError(f"transpose_ins: {list(order)} is not a permutation of {list(self._ins)}", self)
        return LinearLayout([(n, self.in_bases(n)) for n in order], self._outs)

    def transpose_outs(self, order: Sequence[str]) -> LinearLayout:
        """Reorder the output dims (the map is unchanged, only the coordinate order)."""
        if sorted(order) != sorted(self.out_dims):
            raise LayoutError(f"transpose_outs: {list(order)} is not a permutation of {list(self.out_dims)}", self)
        idx = [self._out_index(n) for n in order]
        new = [(n, [tuple(b[i] for i in idx) for b in bs]) for n, bs in zip(self._ins, self._bases)]
        return LinearLayout(new, [self._outs[i] for i in idx])

    def rename(self, ins: Mapping[str, str] | None = None, outs: Mapping[str, str] | None = None) -> LinearLayout:
        ins, outs = dict(ins or {}), dict(outs or {})
        return LinearLayout([(ins.get(n, n), bs) for n, bs in zip(self._ins, self._bases)],
                            [(outs.get(n, n), s) for n, s in self._outs])

    def sublayout(self, ins: Iterable[str], outs: Iterable[str]) -> LinearLayout:
        """Restrict to some input dims and project onto some output dims (orders kept)."""
        ins, outs = set(ins), set(outs)
        missing = (ins - set(self._ins)) | (outs - set(self.out_dims))
        if missing:
            raise LayoutError(f"sublayout: unknown dims {sorted(missing)}", self)
        keep = [i for i, (n, _) in enumerate(self._outs) if n in outs]
        new = [(n, [tuple(b[i] for i in keep) for b in bs]) for n, bs in zip(self._ins, self._bases) if n in ins]
        return LinearLayout(new, [self._outs[i] for i in keep])

    def resize_in(self, in_dim: str, size: int) -> LinearLayout:
        """Grow ``in_dim`` to ``size`` with zero bases (new bits are broadcast copies)."""
        old = self.in_bases(in_dim) if self.has_in_dim(in_dim) else ()
        extra = log2(size) - len(old)
        if extra < 0:
            raise LayoutError(f"resize_in: {in_dim} already has size {1 << len(old)} > {size}", self)
        zero = tuple(0 for _ in self._outs)
        rows = list(old) + [zero] * extra
        items: list[tuple[str, Sequence[Sequence[int]]]] = [(n, bs) for n, bs in zip(self._ins, self._bases)]
        if self.has_in_dim(in_dim):
            items = [(n, rows if n == in_dim else bs) for n, bs in items]
        else:
            items.append((in_dim, rows))
        return LinearLayout(items, self._outs)

    def with_in_bases(self, in_dim: str, bases: Sequence[Sequence[int]]) -> LinearLayout:
        """A copy with ``in_dim``'s bases replaced (added at the end when absent)."""
        items: list[tuple[str, Sequence[Sequence[int]]]] = [(n, bs) for n, bs in zip(self._ins, self._bases)]
        if self.has_in_dim(in_dim):
            items = [(n, bases if n == in_dim else bs) for n, bs in items]
        else:
            items.append((in_dim, bases))
        return LinearLayout(items, self._outs)

    def drop_zero_bases(self, in_dim: str) -> LinearLayout:
        """Remove ``in_dim``'s bits that map to zero (e.g. duplicate registers after a slice)."""
        return self.with_in_bases(in_dim, [b for b in self.in_bases(in_dim) if any(b)])

    # ----------------------------------------------------------------- properties
    def rank(self) -> int:
        """Dimension of the image (log2 of the number of distinct elements reached)."""
        return gf2.rank(self._flat)

    def is_surjective(self) -> bool:
        return self.rank() == self.total_out_bits

    def is_injective(self) -> bool:
        return self.rank() == self.total_in_bits

    def is_bijective(self) -> bool:
        return self.total_in_bits == self.total_out_bits and self.is_surjective()

    def free_variable_masks(self) -> dict[str, int]:
        """Per input dim, a bit mask of its *free* bits: bits whose image is already
        reachable from earlier bits (earlier dims, or lower bits of the same dim).

        Zero bases are always free. Flipping a free bit, together with the right earlier
        bits, reaches the same element: it names duplicated data. The complement of the
        free bits is exactly what ``invert`` solves with.
        """
        independent = set(gf2.independent_indices(self._flat))
        out, i = {}, 0
        for name, bs in zip(self._ins, self._bases):
            mask = 0
            for j in range(len(bs)):
                if i not in independent:
                    mask |= 1 << j
                i += 1
            out[name] = mask
        return out

    def zero_masks(self) -> dict[str, int]:
        """Per input dim, the bits whose basis is zero: the plainly *broadcast* bits
        (lane bits of a slice layout, register bits of a layout larger than its tile)."""
        return {name: sum(1 << j for j, b in enumerate(bs) if not any(b))
                for name, bs in zip(self._ins, self._bases)}

    def num_consecutive(self, in_dim: str, out_dim: str) -> int:
        """How many leading bits of ``in_dim`` map to 1, 2, 4, ... of ``out_dim`` and
        nothing else, as a count of elements (``2**bits``)."""
        j = self._out_index(out_dim)
        n = 0
        for b in self.in_bases(in_dim):
            if b[j] == (1 << n) and all(v == 0 for k, v in enumerate(b) if k != j):
                n += 1
            else:
                break
        return 1 << n

    # ----------------------------------------------------------------- identity
    def _key(self) -> tuple:
        return (tuple(zip(self._ins, self._bases)), self._outs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    # ----------------------------------------------------------------- text
    def __str__(self) -> str:
        def fmt(b: tuple[int, ...]) -> str:
            return "(" + ",".join(str(v) for v in b) + ")"

        ins = ", ".join(f"{n}=[{','.join(fmt(b) for b in bs)}]" for n, bs in zip(self._ins, self._bases))
        outs = ", ".join(f"{n}={s}" for n, s in self._outs)
        return f"ll({ins}; {outs})"

    def __repr__(self) -> str:
        return f"LinearLayout.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> LinearLayout:
        """Read back ``str(layout)``: ``ll(register=[(0,1),(8,0)], lane=[...]; dim0=16, dim1=8)``."""
        m = re.fullmatch(r"\s*ll\((.*);(.*)\)\s*", text, re.S)
        if not m:
            raise LayoutError(f"not a linear layout: {text!r}")
        ins_text, outs_text = m.group(1), m.group(2)
        bases: list[tuple[str, list[tuple[int, ...]]]] = []
        for name, body in re.findall(r"([A-Za-z_][\w.]*)\s*=\s*\[([^\]]*)\]", ins_text):
            rows = [tuple(int(v) for v in t.split(",") if v.strip()) for t in re.findall(r"\(([^)]*)\)", body)]
            bases.append((name, rows))
        outs = [(n, int(s)) for n, s in re.findall(r"([A-Za-z_][\w.]*)\s*=\s*(\d+)", outs_text)]
        return cls(bases, outs)

    def describe(self) -> str:
        """A multi-line listing of every basis (for debugging dumps)."""
        lines = [f"out dims: {', '.join(f'{n} (size {s})' for n, s in self._outs) or 'none'}"]
        for name, bs in zip(self._ins, self._bases):
            if not bs:
                lines.append(f"  {name}: size 1")
            for i, b in enumerate(bs):
                lines.append(f"  {name}={1 << i} -> {dict(zip(self.out_dims, b))}")
        return "\n".join(lines)

    def table(self, *, max_elements: int = 1 << 14) -> str:
        """Which input owns each element, as a grid (rows: first out dim, columns: the
        second; leading dims of a higher-rank tile get one grid each).

        Each cell names the smallest input that produces the element, e.g. ``w1:t5:r2``
        (warp 1, lane 5, register 2; dims of size 1 are left out; shared offsets print as
        a bare number). A final note says when elements are held several times
        (broadcast), and ``.`` marks elements that no input reaches.
        """
        if self.total_out_size > max_elements:
            return f"<{self.total_out_size} elements: too large for a table>"
        ech = gf2.Echelon(self._flat)
        # Most significant dim first, as people say it: warp, lane, register.
        shown = [n for n in reversed(self._ins) if self.in_dim_bits(n) > 0]

        def cell(flat_out: int) -> str:
            combo = ech.solve(flat_out)
            if combo is None:
                return "."
            coords = self.decode_in(combo)
            if not shown:
                return "*"
            parts = []
            for n in shown:
                ab = _ABBREV.get(n, n + "=")
                parts.append(f"{ab}{coords[n]}")
            return ":".join(parts)

        names, sizes = self.out_dims, self.out_shape
        if len(names) == 0:
            return cell(0)
        grids: list[tuple[tuple[int, ...], str | None, str]]
        if len(names) == 1:
            grids = [((), None, names[0])]
        else:
            grids = [(lead, names[-2], names[-1]) for lead in _cartesian(*[range(s) for s in sizes[:-2]])]
        chunks = []
        for lead, row_name, col_name in grids:
            lead_coords: dict[str, int] = dict(zip(names[:-2], lead))
            col_size = self.out_dim_size(col_name)
            row_size = self.out_dim_size(row_name) if row_name else 1
            grid = []
            for r in range(row_size):
                row = []
                for c in range(col_size):
                    coords = dict(lead_coords)
                    coords[col_name] = c
                    if row_name:
                        coords[row_name] = r
                    row.append(cell(self.encode_out(coords)))
                grid.append(row)
            head = f"{row_name}\\{col_name}" if row_name else col_name
            header = [head] + [str(c) for c in range(col_size)]
            body = [[str(r) if row_name else ""] + grid[r] for r in range(row_size)]
            widths = [max(len(line[i]) for line in [header] + body) for i in range(len(header))]
            text = ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in [header] + body]
            if lead:
                text.insert(0, "[" + ", ".join(f"{n}={v}" for n, v in lead_coords.items()) + "]")
            chunks.append("\n".join(text))
        dup = self.total_in_bits - self.rank()
        if dup:
            chunks.append(f"(each element is held by {1 << dup} inputs; the smallest is shown)")
        return "\n".join(chunks)


def _check_same_relative_order(a: Sequence[str], b: Sequence[str], what: str) -> None:
    common_a = [n for n in a if n in b]
    common_b = [n for n in b if n in a]
    if common_a != common_b:
        raise LayoutError(f"product: shared {what} dims appear in different orders: {list(a)} vs {list(b)}")
