"""Block pointers (``tl.make_block_ptr`` / ``tl.advance``) as frontend values.

A block pointer names a ``block_shape`` window at ``offsets`` of a strided tensor
(``base``, ``shape``, ``strides``). tlxc keeps it in the frontend -- a pointer, and
runtime scalars for the shape (i64), strides (i64) and offsets (i32) -- and lowers
``tl.load`` / ``tl.store`` through one to the pointer tile and mask they mean:

    ptrs = base + sum_d (offsets[d] + arange(block_shape[d])) * strides[d]
    mask = AND over d in boundary_check of 0 <= offsets[d] + i_d < shape[d]

so every target (and the interpreter) runs them as ordinary masked accesses.
``padding_option`` is the value of out-of-bounds elements of a load: ``"zero"``, ``"nan"``
(floats), or unspecified (tlxc reads 0). ``order`` is Triton's layout hint: checked to be a
permutation, otherwise unused. A block pointer is a tuple of IR values for loops and
branches (``values.flatten``), so ``p = tl.advance(p, ...)`` in a loop carries it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, eq=False)
class BlockPointer:
    base: object  # Tensor: a scalar pointer
    shape: tuple  # Tensors, i64
    strides: tuple  # Tensors, i64
    offsets: tuple  # Tensors, i32
    block_shape: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.block_shape)

    @property
    def dtype(self) -> object:
        """The base's pointer type: ``bp.dtype.element_ty`` is the element type, as kernels
        write it in Triton (where it is the block's type, which casts the same way)."""
        return self.base.type.scalar  # type: ignore[attr-defined]

    def parts(self) -> tuple:
        """The runtime values, in the order ``rebuild`` takes them."""
        return (self.base, *self.shape, *self.strides, *self.offsets)

    def rebuild(self, parts: tuple) -> "BlockPointer":
        r = self.rank
        return replace(self, base=parts[0], shape=tuple(parts[1:1 + r]), strides=tuple(parts[1 + r:1 + 2 * r]),
                       offsets=tuple(parts[1 + 2 * r:1 + 3 * r]))
