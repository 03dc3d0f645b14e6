"""Where the user called into tlxc from: the location that launch and compile errors
point at (the first stack frame outside the tlxc package).

Whether a frame is the compiler's is decided by the module that runs it (``tlxc`` or a
submodule, ``tlxc.runtime`` included), never by a piece of its file's path: a checkout
cloned to ``~/src/tlxc/repo`` has ``tlxc`` in the path of every user file too.
"""

from __future__ import annotations

import os
import sys
import traceback
from types import FrameType, TracebackType

from ..ir.core import Location

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Code that tlxc generates and runs with exec() (launchers, argument packers) has no module;
# it names its file "<tlxc ...>" or places it inside the package folder.
_GENERATED_PREFIX = "<tlxc "


def is_compiler_frame(frame: FrameType) -> bool:
    """Whether ``frame`` runs tlxc's own code (a module of the ``tlxc`` package, or code
    that tlxc generated)."""
    name = frame.f_globals.get("__name__")
    if isinstance(name, str):
        return name == "tlxc" or name.startswith("tlxc.")
    file = frame.f_code.co_filename
    return file.startswith(_GENERATED_PREFIX) or os.path.abspath(file).startswith(_PACKAGE_DIR + os.sep)


def compiler_frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    """The frames of traceback ``tb`` that are tlxc's own (what a user should not see
    beyond the public entry point that re-raised an error)."""
    out = []
    for frame, line in traceback.walk_tb(tb):
        if is_compiler_frame(frame):
            out.append(traceback.FrameSummary(frame.f_code.co_filename, line, frame.f_code.co_name,
                                              lookup_line=False))
    return out


def caller_location() -> Location | None:
    frame = sys._getframe(1)
    while frame is not None and is_compiler_frame(frame):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    line, col, end = frame.f_lineno, 0, None
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        try:
            pos = list(positions())[frame.f_lasti // 2]
            if pos[0] is not None:
                line = pos[0]
                col = pos[2] or 0
                end = pos[3] if pos[1] == pos[0] else None
        except (IndexError, TypeError):
            pass
    return Location(frame.f_code.co_filename, line, col, end)
