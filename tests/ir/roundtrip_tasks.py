"""Round-trip and verifier texts of ``async_tasks`` (warp specialization), merged into
``ROUNDTRIP`` by ``test_roundtrip.py`` and checked further in ``test_tasks_ir.py``."""

from __future__ import annotations

from roundtrip_tlx import tlx_kernel


def record(task: int, replica: int, default: bool, warps: int, regs: int, start: int) -> str:
    return (f"{{task = {task}, replica = {replica}, default = {'true' if default else 'false'}, num_warps = {warps}, "
            f"registers = {regs}, warp_start = {start}}}")


def tasks(records: list[str], bodies: list[str], attrs: str = "") -> str:
    """An ``async_tasks`` op with one region per record; each body is one line of ops."""
    head = "async_tasks {partitions = [" + ", ".join(records) + "]" + attrs + "} {"
    lines = [head]
    for i, body in enumerate(bodies):
        if i:
            lines.append("} {")
        lines.append("^():")
        lines += ["  " + b for b in body.splitlines() if b] + ["  yield"]
    lines.append("} loc(5:4)")
    return "\n".join(lines)


BARS = "%b = barrier_alloc {count = 1} : mbarrier<2>\n%b0 = barrier_view %b, %n : mbarrier<0>"
PRODUCER_CONSUMER = tlx_kernel(BARS + "\n" + tasks(
    [record(0, 0, True, 4, 0, 0), record(1, 0, False, 1, 24, 4), record(1, 1, False, 1, 24, 5)],
    ["barrier_wait %b0, %n", "barrier_arrive %b0", "%x = add %n, %n : i32\nbarrier_arrive %b0"],
    ", exclusive = true, mbarrier_try_wait_suspend_ns = 0"))

TASKS_ROUNDTRIP: dict[str, str] = {"async_tasks": PRODUCER_CONSUMER}

_D = record(0, 0, True, 4, 0, 0)
TASKS_INVALID: dict[str, tuple[str, str]] = {
    "two defaults": (tlx_kernel(tasks([_D, record(1, 0, True, 4, 0, 4)], ["", ""])),
                     "exactly one default partition, has 2"),
    "no default": (tlx_kernel(tasks([record(1, 0, False, 4, 0, 4)], [""])), "exactly one default partition, has 0"),
    "regions and records": (tlx_kernel(tasks([_D, record(1, 0, False, 1, 0, 4)], [""])),
                            "has 1 regions for 2 partition records"),
    "registers on some workers": (tlx_kernel(tasks([_D, record(1, 0, False, 1, 24, 4),
                                                   record(2, 0, False, 1, 0, 5)], ["", "", ""])),
                                  "registers are requested by some non-default partitions only"),
    "registers not a multiple of 8": (tlx_kernel(tasks([_D, record(1, 0, False, 1, 25, 4)], ["", ""])),
                                      "requests 25 registers"),
    "registers out of range": (tlx_kernel(tasks([_D, record(1, 0, False, 1, 16, 4)], ["", ""])),
                               "requests 16 registers"),
    "overlap": (tlx_kernel(tasks([_D, record(1, 0, False, 2, 0, 3)], ["", ""])),
                "partitions 0 and 1 overlap: warps [0, 4) and [3, 5)"),
    "worker overlap": (tlx_kernel(tasks([_D, record(1, 0, False, 2, 0, 4), record(2, 0, False, 1, 0, 5)],
                                        ["", "", ""])), "partitions 1 and 2 overlap"),
    "default not at warp 0": (tlx_kernel(tasks([record(0, 0, True, 4, 0, 4)], [""])),
                              "runs on warps [0, 4), not from warp 4"),
    "tile capture": (tlx_kernel(tasks([_D, record(1, 0, False, 1, 0, 4)], ["", "%x = add %t, %t : tile<64x16xf16>"])),
                     "partition 1 uses a register tile (tile<64x16xf16>) defined outside it"),
    "missing field": (tlx_kernel("async_tasks {partitions = [{task = 0, default = true}]} {\n^():\n  yield\n}"),
                      "must have the fields"),
}
