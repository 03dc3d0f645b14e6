"""Rule for ``scan``: sequential along the axis, every other position at once.

The combine region runs once per step along the axis on whole rows: its scalar ops see
numpy arrays holding one value per position of the other dims (elementwise rules do not
care whether a value is 0-d). A reverse scan walks the axis from its end. The region is
compiled without the result-shape checks of ``Compiler(check=True)``, since its values
are rows rather than the scalars its types say.
"""

from __future__ import annotations

import numpy as np

from ...ir.core import Operation
from ...ir.ops import scan as S
from ..compiler import Compiler
from ..registry import Env, Step, executes


@executes(S.ScanOp)
def _scan(op: Operation, compiler: Compiler) -> Step:
    ins = [compiler.slot(v) for v in op.operands]
    outs = [compiler.slot(r) for r in op.results]
    check, compiler.check = compiler.check, False
    try:
        body = compiler.block(op.regions[0].block)
    finally:
        compiler.check = check
    axis, reverse = op.axis, op.reverse

    def run(env: Env) -> None:
        xs = [np.moveaxis(np.asarray(env[s]), axis, 0) for s in ins]
        results = [np.empty_like(x) for x in xs]
        order = range(xs[0].shape[0] - 1, -1, -1) if reverse else range(xs[0].shape[0])
        acc: list[np.ndarray] | None = None
        for i in order:
            row = [x[i] for x in xs]
            acc = row if acc is None else [np.asarray(v) for v in body.run(env, acc + row)]
            for r, v in zip(results, acc):
                r[i] = v
        for s, r in zip(outs, results):
            env[s] = np.ascontiguousarray(np.moveaxis(r, 0, axis))

    return run
