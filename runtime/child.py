"""Running an external program (ptxas, nvdisasm, ld.lld) in a temporary folder so that an
interrupted compile leaves neither the program running nor the folder behind.

Ctrl-C raises KeyboardInterrupt, which unwinds; SIGTERM's default action ends Python at
once, so no ``finally`` runs: the child goes on running, reparented to init, and the
temporary folder stays. While a tool runs, SIGTERM is therefore turned into
``SystemExit(128 + SIGTERM)`` -- only in the main thread and only where nobody has
installed a handler of their own -- so the same unwinding kills the child and removes the
folder, and the process still ends with the status a shell expects of a terminated one.
"""

from __future__ import annotations

import signal
import subprocess
import tempfile
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

__all__ = ["run_tool", "tool_dir"]


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):
        previous = None
    if previous is not signal.SIG_DFL:  # the program handles SIGTERM itself: leave it so
        yield
        return
    signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def tool_dir(prefix: str) -> Iterator[str]:
    """A temporary folder for a tool's input and output, removed on any exit, SIGTERM
    included."""
    with _sigterm_unwinds(), tempfile.TemporaryDirectory(prefix=prefix) as d:
        yield d


def run_tool(cmd: Sequence[str], timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``cmd`` and capture its output as text; an exception while it runs
    (KeyboardInterrupt, the SystemExit of SIGTERM inside ``tool_dir``) kills it and waits
    for it before going on."""
    with subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)
