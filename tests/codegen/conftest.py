"""The code-generation tests record what ptxas reported for each variant they assemble
(``record_property("ptxas", codegen_helpers.ptxas_row(...))``); this prints them as one
table at the end of the run. Properties travel with the test reports, so the table is
whole under pytest-xdist too."""

from __future__ import annotations

import re
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    rows: dict[str, dict[str, tuple[int, int, int]]] = {}
    archs: list[str] = []
    for rep in terminalreporter.stats.get("passed", []):
        for key, value in getattr(rep, "user_properties", ()):
            if key != "ptxas":
                continue
            name, arch, regs, spill_st, spill_ld = value
            rows.setdefault(name, {})[arch] = (regs, spill_st, spill_ld)
            if arch not in archs:
                archs.append(arch)
    if not rows:
        return
    archs.sort(key=lambda a: (a[:3], int(re.sub(r"\D", "", a) or 0)))  # sm_90a before sm_100a

    def cell(v: tuple[int, int, int] | None) -> str:
        if v is None:
            return "-"
        regs, st, ld = v
        return f"{regs}" + (f" (spills {st}/{ld} B)" if st or ld else "")

    width = max(len(n) for n in rows) + 2
    tr = terminalreporter
    tr.write_sep("-", "ptxas: registers per thread (spill stores/loads)")
    tr.write_line(f"{'variant':<{width}}" + "".join(f"{a:<24}" for a in archs))
    for name in sorted(rows):
        tr.write_line(f"{name:<{width}}" + "".join(f"{cell(rows[name].get(a)):<24}" for a in archs))
