"""``tlxc.language.extra``: what Triton kernels import from ``triton.language.extra``, with
``triton`` renamed to ``tlxc``:

* ``tlx``: TLX's extensions (``tlxc.tlx``); its submodules load through ``tlxc.tlx``'s
  path, so ``tlxc.language.extra.tlx.warp_spec`` imports too;
* ``libdevice`` (also ``cuda.libdevice``): the libdevice math names (``libdevice.py``).

``libdevice`` and ``cuda`` are made on first use: they hold ``@tlxc.jit`` functions, which
need the whole tlxc package.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ... import tlx

sys.modules[__name__ + ".tlx"] = tlx
__all__ = ["tlx", "libdevice", "cuda"]


def __getattr__(name: str) -> Any:
    if name in ("libdevice", "cuda"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
