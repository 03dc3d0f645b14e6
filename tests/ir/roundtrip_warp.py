"""Round-trip and verifier texts of the warp-level ops, merged into ``ROUNDTRIP`` and
``INVALID`` by ``test_roundtrip.py`` and ``test_verifier.py``."""

from __future__ import annotations

import textwrap

ARGS = "%c: i1, %p: tile<64xi1>, %x: tile<64x2xf32>, %i: tile<32xi32>, %u: tile<32xu32>, %h: tile<48xf32>"


def warp_kernel(body: str) -> str:
    ops = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return (f'module {{source = "k.py"}} {{\n^():\n  func {{sym_name = "k"}} {{\n  ^({ARGS}):\n'
            f"{ops}\n    return loc(30:4)\n  }}\n}}\n")


WARP_ROUNDTRIP: dict[str, str] = {
    "vote_ballot_sync": warp_kernel("%b = vote_ballot_sync %c : i32 loc(5:8)\n"
                                    "%t = vote_ballot_sync %p {mask = 65535} : tile<64xi32>"),
    "warp_redux": warp_kernel('%m = warp_redux %x {kind = "abs_max"} : tile<64x2xf32> loc(6:8)\n'
                              '%s = warp_redux %i {kind = "add"} : tile<32xi32>\n'
                              '%o = warp_redux %u {kind = "xor"} : tile<32xu32>'),
}

WARP_INVALID: dict[str, tuple[str, str]] = {
    "vote_ballot_sync": (warp_kernel("%t = vote_ballot_sync %x : tile<64x2xi32>"), "needs an i1 predicate"),
    "warp_redux": (warp_kernel('%m = warp_redux %h {kind = "max"} : tile<48xf32>'),
                   "dim 0 of a warp-level operand must be a multiple of 32"),
}

# further rejections, checked by test_verifier.py's warp tests
WARP_MORE_INVALID: list[tuple[str, str]] = [
    (warp_kernel("%b = vote_ballot_sync %c {mask = 4294967296} : i32"), "mask must be a 32-bit lane mask"),
    (warp_kernel("%b = vote_ballot_sync %p : tile<64xi1>"), "the ballot is an i32 of the predicate's shape"),
    (warp_kernel('%s = warp_redux %x {kind = "add"} : tile<64x2xf32>'), "warp_redux on f32 is one of max, min"),
    (warp_kernel('%s = warp_redux %i {kind = "abs_max"} : tile<32xi32>'), "warp_redux on i32 is one of add"),
    (warp_kernel('%s = warp_redux %c {kind = "max"} : i1'), "warp_redux needs a tile"),
    (warp_kernel('%s = warp_redux %i {kind = "max"} : tile<32xu32>'), "differs from operand type"),
]
