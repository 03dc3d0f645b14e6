"""Where the user called into tlxc from: the location that launch and compile errors
point at (the first stack frame outside the tlxc package)."""

from __future__ import annotations

import os
import sys

from ..ir.core import Location

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def caller_location() -> Location | None:
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
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
