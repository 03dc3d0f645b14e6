"""The tile IR: types, SSA core, the op catalog, text form, verifier and passes.

This package never imports the code generators, the runtime, cuda-python or hip-python
(``tests/test_layering.py`` checks it).
"""

from . import ops  # noqa: F401  (registers every op)
from .builder import Builder  # noqa: F401
from .core import Block, Location, Operation, Region, Value, VerificationError  # noqa: F401
from .printer import print_ir  # noqa: F401
