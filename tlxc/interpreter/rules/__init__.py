"""Interpreter rules, one module per area of the op catalog. Importing this package
registers every rule in ``tlxc.interpreter.registry``."""

from . import amd, arith, atomics, cluster, control, memory, misc, reduce, scan, shape, tasks, tlx, warp  # noqa: F401
