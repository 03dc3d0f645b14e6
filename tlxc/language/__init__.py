"""``tlxc.language`` (import as ``tl``): the Triton language as tlxc compiles it."""

from . import math  # noqa: F401
from .constexpr_function import constexpr_function  # noqa: F401
from .core import *  # noqa: F401,F403
from .core import (  # noqa: F401,A004
    BUILTINS,
    Builtin,
    PropagateNan,
    abs,
    constexpr,
    dtype,
    max,
    min,
    pointer_type,
    range,
    sum,
    tensor,
    tensor_descriptor,
    tensor_descriptor_base,
)
