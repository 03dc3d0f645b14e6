"""``tlxc.language.extra``: ``tlx`` under the module path TLX kernels import it from
(``triton.language.extra.tlx`` with ``triton`` renamed to ``tlxc``). Its submodules load
through ``tlxc.tlx``'s path, so ``tlxc.language.extra.tlx.warp_spec`` imports too."""

import sys

from ... import tlx

sys.modules[__name__ + ".tlx"] = tlx
__all__ = ["tlx"]
