"""The ``check-target`` pass of the NVIDIA pipeline: operations the target does not have
are refused at the user's line before any other pass touches the kernel.

Expects: the canonicalized tile IR.
Guarantees: no AMD operation or layout remains; the layout-only ops NVIDIA lowers as
plain ones are rewritten (``target_ops.check_nvidia``).
Refuses: AMD operations (``TLXC-TLX-006``), tensor memory on a target without it and
tensor-memory buffers, which the code generator does not allocate yet (``TLXC-TLX-005``).
"""

from __future__ import annotations

from ...errors import CompilationError
from ...ir import ops
from ...ir.core import Operation
from ...ir.passes.options import PassOptions
from .. import target_ops


def run(module: Operation, options: PassOptions) -> Operation:
    info = options.target
    for func in module.funcs:  # type: ignore[attr-defined]
        target_ops.check_nvidia(func, info.name)
        for op in func.walk():
            if isinstance(op, ops.LocalAllocOp) and op.result.type.storage == "tmem":
                if not info.has.tensor_memory:
                    raise CompilationError("TLXC-TLX-005", f"tensor memory needs sm_100a (Blackwell); {info.name} "
                                           "has none", op.loc, "allocate the buffer in shared memory (storage=smem)")
                raise CompilationError("TLXC-TLX-005", "tensor-memory buffers (storage=tmem) are not supported by "
                                       "the code generator yet", op.loc, "run the kernel in the interpreter for now")
    return module
