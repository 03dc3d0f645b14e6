"""Passes over the tile IR, one per file, each with ``run(module, options) -> module``.

``pipeline.py`` holds the pass runner and the stage every target shares; each target's
whole pipeline is one list in ``tlxc/codegen/<target>/pipeline.py``: read those first. ``evaluate.py``
(the IR's semantics on constants) and ``rewrite.py`` (IR surgery) are shared helpers,
not passes.
"""

from .options import PassOptions  # noqa: F401
from .pipeline import (  # noqa: F401
    CANONICALIZE,
    TILE_PIPELINE,
    canonicalize,
    format_timings,
    ir_dumper,
    pass_names,
    run_pipeline,
)
