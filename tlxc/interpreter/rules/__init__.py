"""Interpreter rules, one module per area of the op catalog. Importing this package
registers every rule in ``tlxc.interpreter.registry``."""

from . import (  # noqa: F401
    amd,
    arith,
    atomics,
    cluster,
    control,
    indexing,
    memory,
    misc,
    reduce,
    scan,
    shape,
    tasks,
    tlx,
    warp,
)
