"""Host tensor descriptors on targets without TMA: a ``TensorDescriptor`` kernel argument
becomes a descriptor made in the kernel from its fields.

On NVIDIA a host descriptor parameter is the 128-byte ``CUtensorMap`` the launch encodes.
AMD's chips have no TMA, so there the launch packs the descriptor's fields in the
parameter's place instead (runtime/args.py: the base address, then the sizes and the
strides as 32-bit integers), and this pass rebuilds the descriptor at the kernel's entry::

    %base, %s0, %s1, %t0, %t1 = unpack_tensor_descriptor %desc
    %d = make_tensor_descriptor multiple_of(%base, 16 bytes), %s0, %s1,
                                multiple_of(%t0, 16 bytes), 1 {padding = "zero"}

with every use of the parameter reading ``%d``. ``descriptor-pointers``, which runs next,
turns the loads and stores of ``%d`` into masked pointer accesses, as it does for
``tl.make_tensor_descriptor`` written in the kernel (so tutorial 09's TMA kernels run on
AMD chips). The launch checks what TMA
would (a 16-byte aligned base, the last stride 1, the other strides multiples of 16
bytes), so the rebuilt descriptor says so (``multiple_of``, a constant last stride). A
descriptor whose sizes are all multiples of 16 is specialized as ``tensordesc<...>:16``
(the launch checks it, as for an ``i32:16``): its sizes are ``multiple_of`` 16 too, so the
bounds masks hold for whole vectors and the accesses vectorize; without it they stay per
element.
The padding is zero: the launch refuses a descriptor made with
``padding="nan"`` for these targets.

Expects: the tile IR.
Guarantees: no use of a tensor descriptor parameter other than one
``unpack_tensor_descriptor`` at the entry.
Refuses nothing: a use that ``descriptor-pointers`` cannot rewrite (a TMA copy into
shared memory) leaves the ``make_tensor_descriptor``, which ``check-target`` names at
that use's line.
"""

from __future__ import annotations

from .. import ops
from ..builder import Builder
from ..core import Operation, Value
from ..types import PointerType, TensorDescType, int32
from .options import PassOptions
from .rewrite import replace_uses_in


def run(module: Operation, options: PassOptions | None = None) -> Operation:
    for func in module.funcs:
        entry = func.body
        divisibility = tuple(func.arg_divisibility) or (1,) * len(entry.args)
        for arg, div in zip(entry.args, divisibility):
            t = arg.type
            if not isinstance(t, TensorDescType) or not arg.uses:
                continue
            uses = list(arg.uses)
            rank = len(t.block_shape)
            with Builder(None, uses[0].loc).before(entry.ops[0]) as b:
                unpack = b.create(ops.UnpackTensorDescOp, [arg], [PointerType(t.element)] + [int32] * (2 * rank))
                fields: list[Value] = list(unpack.results)
                base, sizes, strides = fields[0], fields[1:1 + rank], fields[1 + rank:]
                if div > 1:  # tensordesc<...>:16: the launch checked that every size is a multiple
                    sizes = [b.value(ops.MultipleOfOp, [s], int32, values=(div,)) for s in sizes]
                # what the launch checks, as for TMA: a 16-byte aligned base, the last stride 1,
                # the others multiples of 16 bytes -- so the accesses vectorize
                base = b.value(ops.MultipleOfOp, [base], base.type, values=(16,))
                per16 = max(1, 16 // max(1, t.element.bits // 8))
                strides = [b.value(ops.MultipleOfOp, [s], int32, values=(per16,)) for s in strides[:-1]] + \
                    [b.value(ops.ConstantOp, [], int32, value=1)]
                made = b.value(ops.MakeTensorDescOp, [base, *sizes, *strides], t, padding="zero")
            replace_uses_in(uses, arg, made)
    return module
