"""The ``extern_libs`` launch and compile option: Triton's way of naming the device
bitcode libraries that its back ends link into a kernel that calls them
(``kernel[grid](..., extern_libs={"libdevice": "/path/libdevice.10.bc"})``, Triton's
tutorial 07).

tlxc links no bitcode. The functions of ``tl.extra.libdevice`` (and
``tl.extra.cuda.libdevice``) are tlxc's own implementations on every target and in the
interpreter (``language/extra/libdevice.py`` lists them and their precision). So the
option is accepted where it asks for what tlxc already provides, and means exactly
that: *the kernel's libdevice calls use tlxc's implementations; the file is neither
read nor linked*, whatever the path holds, and results are the same as without the
option (the option does not choose the variant either). A path is recognised by its
file name only:

- NVIDIA targets (and the interpreter, which stands in for sm_90a): the one library
  ``libdevice``, a file named ``libdevice*.bc`` (NVIDIA's ``libdevice.10.bc``);
- AMD targets: ``ocml`` and ``ockl`` (ROCm's device libraries, which Triton's AMD back end
  links for the same calls), files named ``ocml*.bc`` and ``ockl*.bc``.

Anything else is refused with ``TLXC-OPTION-001`` naming it: another library name
(tlxc cannot call into a library it does not implement), or a path whose file is not
that library (a user's own bitcode would change results, and tlxc would not run it).
A library of the other vendor is refused too, as a path that is not a file name
(a directory) is. A modified copy of libdevice that keeps libdevice's file name is not
detected: its changes are not reproduced, as said above.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import CompilationError

# the libraries whose calls tlxc implements itself, per target family: name -> file-name prefix
_NVIDIA = {"libdevice": "libdevice"}
_AMD = {"ocml": "ocml", "ockl": "ockl"}


def _fail(message: str, loc: Any, help: str) -> CompilationError:
    return CompilationError("TLXC-OPTION-001", f"option extern_libs: {message}", loc, help)


def _pairs(value: Any, loc: Any) -> list[tuple[Any, Any]]:
    """The (name, path) pairs of a dict, or of a sequence of pairs (Triton keeps the option
    as a tuple of items once parsed)."""
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        return [(p[0], p[1]) for p in value]
    raise _fail(f"must be a dict of library name to bitcode path, got {value!r}", loc,
                "give extern_libs={'libdevice': '/path/to/libdevice.10.bc'}, or leave it out")


def check_extern_libs(value: Any, arch: str, loc: Any) -> None:
    """Accept ``extern_libs=value`` for ``arch`` or refuse it (see the module docstring).
    None and an empty dict name no library."""
    if value is None:
        return
    amd = arch.startswith("gfx")
    known, other = (_AMD, _NVIDIA) if amd else (_NVIDIA, _AMD)
    family = "AMD" if amd else "NVIDIA"
    names = " and ".join(repr(n) for n in known)
    for name, path in _pairs(value, loc):
        if name not in known:
            why = (f"{name!r} is a library of the {'NVIDIA' if amd else 'AMD'} targets, not of {arch}"
                   if name in other else f"tlxc does not implement the functions of a library {name!r}")
            raise _fail(f"{why}; on {family} targets tlxc provides {names} itself", loc,
                        f"leave {name!r} out of extern_libs")
        if not isinstance(path, (str, os.PathLike)):
            raise _fail(f"the path of {name!r} must be a str or os.PathLike, got {path!r}", loc,
                        f"give the path of {known[name]}'s bitcode file, or leave {name!r} out")
        file = os.path.basename(os.fspath(path))
        if not (file.startswith(known[name]) and file.endswith(".bc")):
            raise _fail(f"{name!r} names {os.fspath(path)!r}, which is not {name}'s bitcode "
                        f"({known[name]}*.bc); tlxc links no bitcode and cannot run another library's functions",
                        loc, f"leave {name!r} out of extern_libs (tlxc uses its own implementation of {name})")
