"""``tl.flip``, ``tl.sort``, ``tl.topk``, ``tl.reduce_or`` and ``tl.softmax``, written in
the kernel language on top of other ``tl`` functions, so every target and the interpreter
get them from one source.

* ``flip(x, dim)``: element ``i`` along ``dim`` becomes element ``n - 1 - i``.
* ``sort(x, dim, descending)``: a bitonic sorting network along ``dim``: ``log2(n) *
  (log2(n) + 1) / 2`` compare-exchange stages, each reading the partner ``i ^ j`` with
  one ``gather`` and keeping the min or the max. The axis must be a power of two (as in
  Triton); ties keep equal values, so the result is the sorted multiset.
* ``bitonic_merge(x, dim, descending)``: the last stage of that network alone (Triton's
  rule, last dimension only): a bitonic sequence comes out sorted.
* ``topk(x, k, dim, descending=True)``: the ``k`` largest values along ``dim``, in
  descending order (``sort`` descending, then the first ``k``), or the ``k`` smallest.

``dim`` defaults to the last dimension. Each stage goes through shared memory (a gather),
so these suit modest axes (up to a few thousand elements per program).

* ``reduce_or(x, axis, keep_dims=False)``: bitwise or of integers along ``axis``, a
  ``tl.reduce`` with ``|`` (as Triton builds it beside ``xor_sum``).
* ``softmax(x, dim=None, keep_dims=False, ieee_rounding=False)``: Triton's definition,
  ``exp(x - max(x, dim)) / sum(...)`` with ``dim`` 0 by default (not the last one), and
  ``keep_dims`` passed to the max and the sum: without it the reduced tile broadcasts
  against ``x`` by the usual rules, which for ``dim`` 0 is what softmax means (and for a
  later ``dim`` usually a shape error), exactly as in Triton. ``max`` of fp16/bf16 is
  computed in float32 (``tl.max``'s rule), so the result is float32 for them too, as in
  Triton. ``ieee_rounding`` asks for a correctly rounded division; tlxc's ``tl.fdiv``
  always divides that way.
"""

from __future__ import annotations

# absolute imports: this module is loaded on first use of tl.sort & co (language/__init__.py)
import tlxc
from tlxc.language import core as tl


@tlxc.constexpr_function
def _log2(n):  # noqa: ANN001, ANN202
    n = int(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"the axis has {n} elements; sort, flip and topk need a power of two")
    return n.bit_length() - 1


@tlxc.constexpr_function
def _axis(dim, rank):  # noqa: ANN001, ANN202
    d = rank - 1 if dim is None else int(dim)
    if not -rank <= d < rank:
        raise ValueError(f"dim {dim} is out of range for a tile of rank {rank}")
    return d % rank


@tlxc.constexpr_function
def _with_dim(shape, dim, n):  # noqa: ANN001, ANN202
    return tuple(n if i == dim else s for i, s in enumerate(shape))


@tlxc.jit
def _index_along(x_shape: tl.constexpr, dim: tl.constexpr, n: tl.constexpr):
    """``i`` along ``dim`` (size ``n``), broadcast to ``x_shape`` with ``dim`` of size ``n``."""
    idx = tl.arange(0, n)
    for a in tl.static_range(len(x_shape)):
        if a != dim:
            idx = tl.expand_dims(idx, a)
    return tl.broadcast_to(idx, _with_dim(x_shape, dim, n))


@tlxc.jit
def flip(x, dim: tl.constexpr = None):
    """``x`` reversed along ``dim`` (the last by default)."""
    d: tl.constexpr = _axis(dim, len(x.shape))
    n: tl.constexpr = x.shape[d]
    i = _index_along(x.shape, d, n)
    return tl.gather(x, (n - 1) - i, d)


@tlxc.jit
def sort(x, dim: tl.constexpr = None, descending: tl.constexpr = False):
    """``x`` sorted along ``dim`` (the last by default), ascending unless ``descending``."""
    d: tl.constexpr = _axis(dim, len(x.shape))
    n: tl.constexpr = x.shape[d]
    steps: tl.constexpr = _log2(n)
    i = _index_along(x.shape, d, n)
    for s in tl.static_range(1, steps + 1):
        for t in tl.static_range(s):
            j: tl.constexpr = 1 << (s - 1 - t)
            y = tl.gather(x, i ^ j, d)
            ascending = (i & (1 << s)) == 0  # this block of 2**s sorts up (then the merge flips)
            if descending:
                ascending = (i & (1 << s)) != 0
            lower = (i & j) == 0  # i is the lower of the pair
            x = tl.where(ascending == lower, tl.minimum(x, y), tl.maximum(x, y))
    return x


@tlxc.jit
def bitonic_merge(x, dim: tl.constexpr = None, descending: tl.constexpr = False):
    """One bitonic merge along the last dimension (Triton's ``tl.bitonic_merge``): for
    ``r = log2(n) - 1`` down to 0, each element is compared with its partner ``i ^ 2**r``
    and the lower of the pair keeps the smaller (the larger when ``descending``). A bitonic
    input (an ascending half then a descending one) comes out sorted."""
    d: tl.constexpr = _axis(dim, len(x.shape))
    tl.static_assert(d == len(x.shape) - 1, "tl.bitonic_merge merges along the last dimension only")
    n: tl.constexpr = x.shape[d]
    steps: tl.constexpr = _log2(n)
    i = _index_along(x.shape, d, n)
    for t in tl.static_range(steps):
        j: tl.constexpr = 1 << (steps - 1 - t)
        y = tl.gather(x, i ^ j, d)
        upper = (i & j) != 0  # the upper of the pair (swapped roles when descending)
        if descending:
            upper = (i & j) == 0
        # Triton's rule, NaN included: take the partner when (x > y) differs from `upper`
        x = tl.where((x > y) != upper, y, x)
    return x


@tlxc.jit
def topk(x, k: tl.constexpr, dim: tl.constexpr = None, descending: tl.constexpr = True):
    """The ``k`` largest values of ``x`` along ``dim`` (the last by default), largest first;
    with ``descending=False`` the ``k`` smallest, smallest first (as Triton's)."""
    d: tl.constexpr = _axis(dim, len(x.shape))
    s = sort(x, d, descending)
    return tl.gather(s, _index_along(x.shape, d, k), d)


@tlxc.jit
def _or_combine(a, b):
    return a | b


@tlxc.jit
def reduce_or(input, axis, keep_dims: tl.constexpr = False):
    """Bitwise or of the integers of ``input`` along ``axis`` (every axis for None)."""
    tl.static_assert(input.dtype.is_int(), "tl.reduce_or needs integers")
    return tl.reduce(input, axis, _or_combine, keep_dims=keep_dims)


@tlxc.jit
def softmax(x, dim: tl.constexpr = None, keep_dims: tl.constexpr = False, ieee_rounding: tl.constexpr = False):
    """``exp(x - max) / sum`` along ``dim`` (0 by default, as in Triton)."""
    d: tl.constexpr = 0 if dim is None else dim
    z = x - tl.max(x, d, keep_dims=keep_dims)
    num = tl.exp(z)
    den = tl.sum(num, d, keep_dims=keep_dims)
    return tl.fdiv(num, den, ieee_rounding)

