"""Passes over the tile IR, one per file, each with ``run(module, options) -> module``.

``pipeline.py`` holds the pipeline as one named list; read it first. ``evaluate.py``
(the IR's semantics on constants) and ``rewrite.py`` (IR surgery) are shared helpers,
not passes.
"""

from .options import PassOptions  # noqa: F401
from .pipeline import CANONICALIZE, PIPELINE, canonicalize, format_timings, ir_dumper, run_pipeline  # noqa: F401
