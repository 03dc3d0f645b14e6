"""``tlxc.language.extra.cuda``: ``libdevice`` under Triton's NVIDIA spelling
(``triton.language.extra.cuda.libdevice``). It is the same module as
``tlxc.language.extra.libdevice``, whose functions tlxc compiles for every target.
``num_warps()`` and ``num_threads()`` are the kernel's warps and threads, compile-time
integers as in Triton (``n: tl.constexpr = num_threads()``); ``smid()`` and
``globaltimer()`` read the PTX special registers (NVIDIA targets only)."""

from __future__ import annotations

import sys

from ...core import Builtin
from .. import libdevice

sys.modules[__name__ + ".libdevice"] = libdevice
num_warps = Builtin("num_warps", "The number of warps the kernel runs with (a compile-time integer).", "cuda")
num_threads = Builtin("num_threads", "The number of threads the kernel runs with (a compile-time integer).", "cuda")
smid = Builtin("smid", "The index of the SM the program runs on (%smid, int32).", "cuda")
globaltimer = Builtin("globaltimer", "The GPU's nanosecond timer (%globaltimer, int64).", "cuda")
__all__ = ["globaltimer", "libdevice", "num_threads", "num_warps", "smid"]
