"""Semantic rules of the ``tl`` builtins, one module per area. ``RULES`` maps a builtin's
name to its rule; ``TENSOR_METHODS`` maps ``x.name(...)`` to the rule called with ``x``
first."""

from . import (  # noqa: F401  (registers the rules)
    arith,
    atomics,
    block_ptr,
    indexing,
    inline_asm,
    memory,
    misc,
    reduce,
    scaled_dot,
    scan,
    shape,
    tlx_alias,
    tlx_amd,
    tlx_buffers,
    tlx_cluster,
    tlx_mma,
    tlx_sync,
    tlx_tasks,
    tlx_warp,
)
from .base import RULES, Ctx  # noqa: F401

TENSOR_METHODS: dict[str, str] = {
    "to": "cast", "reshape": "reshape", "view": "view", "ravel": "ravel", "trans": "trans", "permute": "permute",
    "expand_dims": "expand_dims", "broadcast_to": "broadcast_to", "split": "split", "join": "join",
    "sum": "sum", "max": "max", "min": "min", "argmax": "argmax", "argmin": "argmin", "xor_sum": "xor_sum",
    "reduce": "reduce",
    "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt", "rsqrt": "rsqrt", "abs": "abs",
    "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil", "erf": "erf", "sigmoid": "sigmoid",
    "cdiv": "cdiv", "fma": "fma", "cast": "cast", "squeeze": "squeeze", "unsqueeze": "expand_dims",
    "cumsum": "cumsum", "cumprod": "cumprod",
    "gather": "gather", "histogram": "histogram", "item": "item", "sqrt_rn": "sqrt_rn",
    "store": "store", "advance": "advance", "associative_scan": "associative_scan", "flip": "flip",
    "reduce_or": "reduce_or", "softmax": "softmax",
    "atomic_add": "atomic_add", "atomic_and": "atomic_and", "atomic_cas": "atomic_cas", "atomic_max": "atomic_max",
    "atomic_min": "atomic_min", "atomic_or": "atomic_or", "atomic_xchg": "atomic_xchg", "atomic_xor": "atomic_xor",
}
