"""``tlxc.language`` (import as ``tl``): the Triton language as tlxc compiles it."""

from . import math  # noqa: F401
from .constexpr_function import constexpr_function  # noqa: F401
from .core import *  # noqa: F401,F403
from .core import (  # noqa: F401,A004
    BUILTINS,
    Builtin,
    NotYetDType,
    PropagateNan,
    abs,
    constexpr,
    constexpr_type,
    dtype,
    float8e4b15,
    max,
    min,
    pointer_type,
    range,
    sum,
    tensor,
    tensor_descriptor,
    tensor_descriptor_base,
    tensor_descriptor_type,
    tuple_type,
)

SHORT_NAME = "tl"  # how kernels spell this module (in messages)

# Triton's tl names that tlxc does not have yet: using one is TLXC-NAME-002, "not supported
# yet", rather than an unknown name (the frontend's attribute lookup reads the NOT_YET of
# any tlxc library module)
NOT_YET: frozenset[str] = frozenset({"void"})


def str_to_ty(name: str, c: object = None) -> object:
    """Triton's ``tl.str_to_ty``: a signature spelling as a dtype (``"fp32"``, ``"i32"``,
    ``"u8"``, ``"*fp16"`` a pointer); its test helpers turn dtype names into types with it."""
    from ..ir.types import ALL_DTYPES

    if name.startswith("*"):
        return pointer_type(str_to_ty(name[1:].lstrip("k"), c))
    for d in ALL_DTYPES:
        if name in (d.sig_name, d.tl_name):
            return d
    raise ValueError(f"tl.str_to_ty: unknown type {name!r} (a signature name such as 'fp32', 'i32', '*fp16')")


@constexpr_function
def slice(start, stop, step):  # noqa: A001, ANN001, ANN201
    """Triton's ``tl.slice(start, stop, step)``: the slice ``start:stop:step`` as a
    compile-time value (``x[tl.slice(None, None, None)]`` is ``x[:]``; a tuple indexed by
    one gives the tuple's slice)."""
    import builtins

    return builtins.slice(start, stop, step)

# the functions of language/standard.py, loaded on first use
_STANDARD = ("flip", "sort", "bitonic_merge", "topk", "reduce_or", "softmax")
_RANDOM = ("philox_impl", "philox", "randint4x", "randint", "uint_to_uniform_float", "rand", "rand4x",
           "pair_uniform_to_normal", "randn", "randn4x")


def __getattr__(name: str):  # noqa: ANN202
    # tl.rand & co are kernel-language functions (language/random.py); they are made on
    # first use, once the tlxc package (its @jit) exists
    if name in _RANDOM:
        from . import random

        return getattr(random, name)
    if name in ("extra", "standard", "random", "target_info"):
        # submodules loaded on first use (tl.extra.cuda.libdevice & co need the whole tlxc
        # package); Triton's tl names them too
        import importlib

        return importlib.import_module(__name__ + "." + name)
    if name in _STANDARD:
        from . import standard

        return getattr(standard, name)
    if name == "tuple":  # a kernel's tuples are Python tuples: isinstance(x, tl.tuple) reads so
        import builtins

        return builtins.tuple
    if name in NOT_YET:  # on the host (a parameter annotation such as `x: tl.const`)
        raise AttributeError(f"tl.{name} is not supported by tlxc yet")
    raise AttributeError(f"module 'tlxc.language' has no attribute {name!r}")
