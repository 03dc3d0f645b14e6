"""``tlxc.language`` (import as ``tl``): the Triton language as tlxc compiles it."""

from . import math  # noqa: F401
from .core import *  # noqa: F401,F403
from .core import BUILTINS, Builtin, PropagateNan, constexpr, dtype, pointer_type  # noqa: F401
from .core import abs, max, min, range, sum  # noqa: F401,A004
