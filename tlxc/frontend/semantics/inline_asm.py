"""``tl.inline_asm_elementwise``: inline PTX applied elementwise (``ir/ops/inline_asm.py``).

The operands (tensors or numbers) are broadcast to one shape; the result is a tensor of
that shape per dtype named (a tuple of dtypes gives a tuple of results). Only NVIDIA
targets lower it (AMD targets refuse it by name, ``codegen/target_ops``); the interpreter
cannot execute assembly and says so when a program reaches one.
"""

from __future__ import annotations

from typing import Any

from ...ir import ops
from ...ir.ops.inline_asm import CONSTRAINT_KINDS, split_constraints
from ...ir.types import DType
from ..values import Tensor, describe, unwrap
from .base import Ctx, fail, rule, shaped, to_tensor
from .shape import broadcast_all

CALL = "TLXC-CALL-002"


@rule("inline_asm_elementwise")
def inline_asm_elementwise(ctx: Ctx, asm: Any, constraints: Any, args: Any, dtype: Any, is_pure: Any,
                           pack: Any) -> Any:
    asm, constraints, is_pure, pack = unwrap(asm), unwrap(constraints), unwrap(is_pure), unwrap(pack)
    if not isinstance(asm, str) or not isinstance(constraints, str):
        fail(CALL, "tl.inline_asm_elementwise: asm and constraints must be compile-time strings")
    if not isinstance(is_pure, bool):
        fail(CALL, f"tl.inline_asm_elementwise: is_pure must be True or False, got {describe(is_pure)}")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
        fail(CALL, f"tl.inline_asm_elementwise: pack must be a positive int, got {describe(pack)}")
    if pack != 1:
        fail("TLXC-TLX-005", f"tl.inline_asm_elementwise with pack={pack} is not supported yet (tlxc passes one "
             "element per operand register)", )
    args = unwrap(args)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    dtypes = unwrap(dtype)
    single = not isinstance(dtypes, (tuple, list))
    dtypes = (dtypes,) if single else tuple(unwrap(d) for d in dtypes)
    for d in dtypes:
        if not isinstance(d, DType):
            fail(CALL, f"tl.inline_asm_elementwise: dtype must be a tl dtype or a tuple of them, got {describe(d)}")
    cons = split_constraints(constraints)
    outs = [c for c in cons if c.startswith("=")]
    ins = [c for c in cons if not c.startswith("=")]
    bad = [c for c in cons if c.lstrip("=") not in CONSTRAINT_KINDS]
    if bad:
        fail(CALL, f"tl.inline_asm_elementwise: unknown register constraint {bad[0]!r} (tlxc knows "
             f"{', '.join(CONSTRAINT_KINDS)}, outputs prefixed with '=')")
    if cons[:len(outs)] != outs or len(outs) != len(dtypes) or len(ins) != len(args):
        fail(CALL, f"tl.inline_asm_elementwise: constraints {constraints!r} must name the {len(dtypes)} output(s) "
             f"first ('=r'...), then the {len(args)} input(s)")
    tensors = broadcast_all(ctx, *[to_tensor(ctx, a) for a in args]) if args else []
    shape = tensors[0].shape if tensors else ()
    result_types = [shaped(d, shape) for d in dtypes]
    op = ctx.b.create(ops.InlineAsmOp, [t.handle for t in tensors], result_types,
                      {"asm": asm, "constraints": constraints, "pure": is_pure, "pack": pack})
    results = [Tensor(r) for r in op.results]
    return results[0] if single else tuple(results)
