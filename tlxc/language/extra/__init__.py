"""``tlxc.language.extra``: ``tlx`` under the module path TLX kernels import it from
(``triton.language.extra.tlx`` with ``triton`` renamed to ``tlxc``)."""

import sys

from ... import tlx

sys.modules[__name__ + ".tlx"] = tlx
__all__ = ["tlx"]
