"""``tlxc.language.extra.cuda``: ``libdevice`` under Triton's NVIDIA spelling
(``triton.language.extra.cuda.libdevice``). It is the same module as
``tlxc.language.extra.libdevice``, whose functions tlxc compiles for every target."""

from __future__ import annotations

import sys

from .. import libdevice

sys.modules[__name__ + ".libdevice"] = libdevice
__all__ = ["libdevice"]
