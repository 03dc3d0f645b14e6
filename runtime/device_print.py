"""``tl.device_print`` on AMD GPUs: the buffer of records a kernel appends to, and the host
side that prints them after the launch.

CUDA's ``vprintf`` has no AMD counterpart that works without the ROCm device libraries
(HIP's ``printf`` is a hostcall into them), so a kernel compiled for a gfx target that
prints takes a hidden last parameter: a global buffer laid out as

    bytes 0..7    u64  bytes of records asked for (each record adds its size atomically,
                       whether or not it fits)
    bytes 8..15   u64  the capacity: bytes of records the buffer holds
    bytes 16..    the records, each whole where it fits (none is cut)

A record is ``u32 site, u32 pid x, u32 pid y, u32 pid z, u32 index per dimension`` of
the printed tile, zero padding to a multiple of 8, then ``u64 value``: the element widened
(floats as an f64, integers sign- or zero-extended, a pointer's address; under
``hex=True`` the element's own bits). A print with no values writes the header only. A
*site* is one operand of one ``print`` (each prints its own lines, as on NVIDIA); the
kernel's metadata ``"device_print"`` lists them: ``prefix`` (the text after the index, the
``(operand k)`` label included), ``rank`` and ``widths`` (digits of each index), ``kind``
(``f``, ``i``, ``u``, ``p`` or ``x<digits>``). ``record_bytes`` gives a site's size;
the code generator (``tlxc/codegen/amdgpu/lower_print.py``) writes what this module reads.

The launcher (``runtime/launcher.py``) resets the header before each launch of such a
kernel, then synchronizes the stream and writes the lines to ``sys.stdout`` -- the same
lines as NVIDIA's printf and the interpreter, each element once per lane that holds it, in
the order the lanes reserved their records. ``TLXC_PRINT_BUFFER_BYTES`` sizes the buffer
(1 MiB of records by default); records that do not fit are counted and reported in one
line after the others.
"""

from __future__ import annotations

import os
import struct
import sys
from typing import Any, Sequence, TextIO

HEADER_BYTES = 16
DEFAULT_BYTES = 1 << 20


def record_bytes(rank: int, has_value: bool) -> int:
    """Bytes of one record of a site with a ``rank``-dimensional index (0: a scalar)."""
    head = 16 + 4 * rank
    return (-(-head // 8) * 8 + 8) if has_value else head


def buffer_bytes() -> int:
    """Capacity of the record area (``TLXC_PRINT_BUFFER_BYTES``, default 1 MiB)."""
    raw = os.environ.get("TLXC_PRINT_BUFFER_BYTES")
    if not raw:
        return DEFAULT_BYTES
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"TLXC_PRINT_BUFFER_BYTES={raw!r} is not a number of bytes") from None
    if n < 64:
        raise ValueError(f"TLXC_PRINT_BUFFER_BYTES={n} is too small (64 bytes at least)")
    return n


def _value(kind: str, bits: int) -> str:
    if kind == "f":
        return f"{struct.unpack('<d', struct.pack('<Q', bits))[0]:f}"
    if kind == "i":
        return str(bits - (1 << 64) if bits >> 63 else bits)
    if kind == "u":
        return str(bits)
    if kind == "p":
        return f"0x{bits:x}"
    if kind.startswith("x"):
        digits = int(kind[1:])
        return f"0x{bits & ((1 << (4 * digits)) - 1):0{digits}x}"
    raise ValueError(f"unknown device_print value kind {kind!r}")


def format_records(sites: Sequence[dict[str, Any]], data: bytes) -> tuple[list[str], int]:
    """The lines of the records in ``data`` (the whole buffer: header then records), and
    how many bytes of records did not fit."""
    asked, capacity = struct.unpack_from("<QQ", data, 0)
    end = HEADER_BYTES + min(asked, capacity, len(data) - HEADER_BYTES)
    lines: list[str] = []
    at = HEADER_BYTES
    while at < end:
        site, x, y, z = struct.unpack_from("<4I", data, at)
        if site >= len(sites):
            raise ValueError(f"device_print record at byte {at} names site {site}; the kernel has {len(sites)}")
        s = sites[site]
        rank, kind = int(s["rank"]), s.get("kind")
        size = record_bytes(rank, kind is not None)
        if at + size > end:
            break  # a record that was reserved but did not fit is not there
        head = f"pid ({x}, {y}, {z})"
        if kind is None:
            lines.append(head + s["prefix"])
        else:
            idx = struct.unpack_from(f"<{rank}I", data, at + 16)
            where = ", ".join(str(i).rjust(w) for i, w in zip(idx, s["widths"]))
            (bits,) = struct.unpack_from("<Q", data, at + size - 8)
            lines.append(f"{head} idx ({where}){s['prefix']}{_value(kind, bits)}")
        at += size
    return lines, max(0, asked - capacity)


class PrintBuffer:
    """One kernel's device buffer of records, allocated on its first launch (``api``: the
    runtime module that allocates and copies: runtime/hip.py)."""

    def __init__(self, api: Any, sites: Sequence[dict[str, Any]], name: str) -> None:
        self.api, self.sites, self.name = api, list(sites), name
        self.capacity = buffer_bytes()
        self.address = 0

    def begin(self) -> int:
        """Reset the header (stream-ordered before the launch: a synchronous copy) and
        return the buffer's address."""
        if not self.address:
            self.address = self.api.malloc(HEADER_BYTES + self.capacity)
        self.api.copy_to_device(self.address, struct.pack("<QQ", 0, self.capacity))
        return self.address

    def end(self, stream: Any, out: TextIO | None = None) -> None:
        """Wait for the launch and write its lines."""
        self.api.stream_synchronize(stream)
        (asked,) = struct.unpack("<Q", self.api.copy_from_device(self.address, 8))
        data = struct.pack("<QQ", asked, self.capacity)
        if asked:
            data += self.api.copy_from_device(self.address + HEADER_BYTES, min(asked, self.capacity))
        lines, lost = format_records(self.sites, data)
        out = out or sys.stdout
        out.write("".join(line + "\n" for line in lines))
        if lost:
            out.write(f"tlxc: kernel '{self.name}': {lost} bytes of device_print records did not fit in the "
                      f"{self.capacity}-byte buffer; set TLXC_PRINT_BUFFER_BYTES higher\n")
        out.flush()

    def free(self) -> None:
        if self.address:
            self.api.free(self.address)
            self.address = 0
