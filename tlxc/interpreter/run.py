"""The driver: bind a kernel's arguments, compile its body once, run every program.

Programs run one after another in the order of linear block ids (x fastest, then y,
then z). That is one of the orders the GPU may pick; a kernel whose result depends on the
order of programs is racy on the GPU too. A clustered kernel runs one cluster after
another, in the same order of clusters; the CTAs of a cluster run together
(``tlxc.interpreter.cluster``).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import CompilationError
from ..ir.ops.control import FuncOp
from ..ir.types import PointerType, TensorDescType
from . import rules  # noqa: F401  (registers every rule)
from .cluster import make_cluster, switcher
from .compiler import Compiler
from .descriptors import descriptor_array, host_descriptor
from .memory import Memory, base_address, host_view
from .numerics import scalar
from .registry import LaunchState
from .tasks import Scheduler, TaskInfo


def _grid(grid: Sequence[int] | int) -> tuple[int, int, int]:
    dims = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    if not 1 <= len(dims) <= 3 or any(int(d) < 0 for d in dims):
        raise CompilationError("TLXC-LAUNCH-003", f"the grid must be 1 to 3 non-negative sizes, got {grid!r}")
    sizes = [int(d) for d in dims] + [1] * (3 - len(dims))
    return sizes[0], sizes[1], sizes[2]


def bind_arguments(func: FuncOp, args: Sequence[Any]) -> tuple[Memory, list[np.ndarray]]:
    """Kernel argument values as the interpreter sees them: pointer arguments become base
    addresses into a ``Memory`` over the caller's arrays, host tensor descriptors
    ``DescriptorValue``s over theirs, scalars 0-d arrays of their type."""
    params = func.body.args
    name = func.sym_name
    if len(args) != len(params):
        raise CompilationError(
            "TLXC-LAUNCH-001", f"kernel '{name}' takes {len(params)} arguments, {len(args)} were given")
    arrays: list[tuple[int, str, np.ndarray]] = []
    values: list[np.ndarray] = []
    divisibility = tuple(func.arg_divisibility) or (1,) * len(params)
    for i, (param, arg, div) in enumerate(zip(params, args, divisibility)):
        label = param.name_hint or f"#{i}"
        t = param.type
        if isinstance(t, PointerType):
            array = host_view(arg)
            if array is None:
                where = getattr(getattr(arg, "device", None), "type", None)
                raise CompilationError(
                    "TLXC-LAUNCH-003",
                    f"argument '{label}' of kernel '{name}' is a pointer ({t}): pass a numpy array or a CPU "
                    f"tensor, got {type(arg).__name__}" + (f" on {where}" if where not in (None, "cpu") else ""))
            arrays.append((i, label, array))
            values.append(np.asarray(base_address(i), dtype=np.int64))
        elif isinstance(t, TensorDescType):
            # the descriptor's array becomes pointer argument i, so that faults name it
            arrays.append((i, label, descriptor_array(arg, t, label, name)))
            values.append(host_descriptor(arg, t, base_address(i), label, name))
        else:
            try:
                value = scalar(arg, t.scalar)
            except (TypeError, ValueError) as err:
                raise CompilationError(
                    "TLXC-LAUNCH-003",
                    f"argument '{label}' of kernel '{name}' must be a {t} scalar, got {arg!r}") from err
            # The code generators rely on this promise of the signature; a pointer's needs no
            # check because every argument's base address is aligned to 2**40 here.
            if div > 1 and t.scalar.is_int() and int(value) % div:
                raise CompilationError(
                    "TLXC-LAUNCH-003",
                    f"argument '{label}' of kernel '{name}' is {int(value)}, not a multiple of {div} "
                    f"as the kernel's signature promises")
            values.append(value)
    return Memory(arrays), values


def run_kernel(func: FuncOp, grid: tuple[int, int, int], args: list[Any], *, check: bool = False) -> None:
    """Run every program of ``func`` over ``grid`` on the CPU.

    ``args`` has one entry per kernel argument: a numpy array for a pointer (written in
    place), a Python or numpy number for a scalar. Faults raise ``InterpreterError``
    (``TLXC-INTERP-001`` for a bad memory access, ``-002`` for a failed assertion).
    ``check`` makes every op verify the dtype and shape of its result (slower; for tests
    of the interpreter itself).
    """
    dims = _grid(grid)
    memory, values = bind_arguments(func, args)
    shape = tuple(int(c) for c in func.attrs.get("cluster_dims") or (1, 1, 1))
    cluster = (shape + (1, 1, 1))[:3]
    if any(d % c for d, c in zip(dims, cluster)):
        raise CompilationError("TLXC-OPTION-001", f"option ctas_per_cga: the grid {dims} is not a multiple of the "
                                                  f"cluster shape {cluster}; the grid counts blocks, so it must hold "
                                                  "whole clusters")
    num_warps = int(func.attrs.get("num_warps", 4) or 4)
    state = LaunchState(memory, dims, num_threads=32 * num_warps, cluster=cluster)  # type: ignore[arg-type]
    with np.errstate(all="ignore"):  # wraparound and NaN/inf are defined results here
        compiler = Compiler(state, check=check)
        body = compiler.block(func.body)
        env: list[Any] = [None] * compiler.num_slots
        cx, cy, cz = cluster
        for z in range(0, dims[2], cz):
            for y in range(0, dims[1], cy):
                for x in range(0, dims[0], cx):
                    group = make_cluster((x, y, z), cluster, state.num_threads)  # type: ignore[arg-type]
                    if not group.clustered:
                        cta = group.ctas[0]
                        memory.program, state.pid, state.onchip, state.cta = cta.program, cta.pid, cta.onchip, cta
                        body.run(env, values)
                        continue
                    # every CTA has its own value slots: they take turns inside one body
                    tasks = [(TaskInfo(cta.name, 0, num_warps, cta.onchip.issued, cta, partition=False),
                              _program(body, compiler.num_slots, values)) for cta in group.ctas]
                    state.scheduler, state.cta = Scheduler(switcher(state), group.describe()), None
                    try:
                        state.scheduler.run(tasks, func.loc)
                    finally:
                        state.scheduler, state.task = None, None


def _program(body: Any, num_slots: int, values: list[np.ndarray]) -> Any:
    return lambda: body.run([None] * num_slots, values)
