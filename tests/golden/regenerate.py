"""Regenerate the golden PTX and amdgcn of the examples (docs/architecture.md, "Golden files").

    python tests/golden/regenerate.py            # rewrite tests/golden/*.ptx and *.amdgcn, drop stale ones
    python tests/golden/regenerate.py --check    # exit 1 if any file would change
    python tests/golden/regenerate.py --out DIR  # write the files to DIR instead

One file per case of ``tests/ir/test_examples_roundtrip.py`` and target:

- ``<example>-<n>.<arch>.ptx`` (``matmul-0.sm_90a.ptx``) for the NVIDIA targets, holding
  ``compiled.asm["ptx"]`` with the repository's path taken out of the ``.file`` directives;
- ``<example>-<n>.<gfx>.amdgcn`` (``matmul-0.gfx942.amdgcn``) for gfx942, gfx950 and
  gfx1250, holding ``compiled.asm["amdgcn"]``; a case the chip refuses (an NVIDIA-only
  operation: TLXC-TLX-006) has none. ``amdgcn.llvm-version`` records the LLVM (llvmlite)
  that made them: the test compares the amdgcn only under that LLVM.

A refactor of the compiler leaves them unchanged (tests/codegen/test_golden_files.py
checks it); a change to the generated code is made on purpose by running this script and
committing the diff.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_TESTS / "codegen"), str(_TESTS)]  # codegen_helpers, and the example_modules it uses

from codegen_helpers import GOLDEN, LLVM_VERSION_FILE, golden_files, golden_texts  # noqa: E402


@contextmanager
def _without_ptxas() -> Iterator[None]:
    """The golden files hold PTX, not cubins, and the compiler assembles every PTX it makes when
    it finds ptxas: hiding ptxas makes this script three times faster and lets it run
    without CUDA. (Never in the test process: its cached variants need their cubins.)"""
    from tlxc.codegen.nvptx import toolchain

    find_tool = toolchain.find_tool
    toolchain.find_tool = lambda name: None if name == "ptxas" else find_tool(name)  # type: ignore[assignment]
    try:
        yield
    finally:
        toolchain.find_tool = find_tool


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file differs")
    parser.add_argument("--out", type=Path, default=GOLDEN, help="folder to write to (default: tests/golden)")
    args = parser.parse_args(argv)
    with _without_ptxas():
        texts = golden_texts()
    out: Path = args.out
    changed = [n for n, t in texts.items() if not (out / n).is_file() or (out / n).read_text() != t]
    stale = sorted(p.name for p in golden_files(out) if p.name not in texts)
    stamp = out / LLVM_VERSION_FILE
    if args.check and LLVM_VERSION_FILE in changed and stamp.is_file():
        print(f"note: the amdgcn files were made with LLVM {stamp.read_text().strip()}, this is "
              f"{texts[LLVM_VERSION_FILE].strip()}: their differences may be LLVM's")
    for name in changed:
        print(f"{'differs' if args.check else 'wrote'}: {out / name}")
    for name in stale:
        print(f"{'stale' if args.check else 'removed'}: {out / name}")
    if args.check:
        return 1 if changed or stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name in changed:
        (out / name).write_text(texts[name])
    for name in stale:
        (out / name).unlink()
    print(f"{len(texts) - 1} golden PTX and amdgcn files, {len(changed)} rewritten, {len(stale)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
