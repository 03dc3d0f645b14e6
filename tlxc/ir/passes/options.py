"""Settings of the IR passes.

Passes read their settings from a ``PassOptions`` and never from the environment: the
CLI and the kernel decorator build one from their flags.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..target import GENERIC, TargetInfo


@dataclass(frozen=True)
class PassOptions:
    """What the passes may do, and for which target.

    max_iterations -- how many rounds a fixed-point group of passes (``CANONICALIZE``)
                      runs at most before the pipeline moves on;
    fold_floats    -- fold floating-point arithmetic (exactly, in the value's own type);
                      off leaves every float op to the target;
    dce_region_ops -- let DCE remove unused ``if``/``for`` ops with side-effect-free
                      bodies and drop their unused results and loop-carried values;
    target         -- the ``TargetInfo`` that shared passes ask (never an arch name);
    num_stages     -- the kernel's ``num_stages``: how many iterations ahead
                      ``software-pipeline`` keeps a loop's loads in flight, plus one (a
                      loop's own ``tl.range(num_stages=)`` wins; 1 or less: none).
    """

    max_iterations: int = 8
    # what the target is and chooses (layouts, capabilities, limits); the code generator
    # sets it from its pipeline, the IR-level tests build their own (``tlxc.ir.target``)
    target: TargetInfo = GENERIC
    fold_floats: bool = True
    dce_region_ops: bool = True
    num_stages: int = 1

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {self.max_iterations}")


DEFAULT_OPTIONS = PassOptions()
