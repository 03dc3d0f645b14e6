"""``scan`` in generated code: the layout the layout pass gives it (the axis within a
warp), PTX for sm_90a (register scan, ``shfl.sync.up``/``down`` steps, ptxas accepting
it), amdgcn for gfx942/gfx950/gfx1250 (``ds_bpermute`` steps), and the layout the
code generators refuse. The numbers on a GPU: tests/gpu/test_scan_gpu.py."""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from ld_lld import skip_without_ld_lld  # tests/ld_lld.py

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
import test_scan as K  # noqa: E402  (tests/frontend/test_scan.py)

from tlxc.codegen.scan_plan import scan_geometry  # noqa: E402
from tlxc.errors import CompilationError  # noqa: E402
from tlxc.ir.layout.common import blocked  # noqa: E402
from tlxc.ir.passes.layouts import scan_layout  # noqa: E402

CASES = {
    "cumsum_1d": ("*fp32,*fp32", (("N", 128), ("REVERSE", False))),
    "cumsum_1d_rev": ("*fp32,*fp32", (("N", 128), ("REVERSE", True))),
    "cumsum_2d": ("*i32,*i32", (("M", 8), ("N", 32), ("AXIS", 0), ("REVERSE", True))),
    "running_argmax": ("*fp32,*fp32,*i32", (("M", 4), ("N", 16))),
    "linear_recurrence": ("*fp32,*fp32,*fp32", (("N", 32), ("REVERSE", False))),
}


@lru_cache(maxsize=None)
def _compiled(name: str, arch: str) -> Any:
    sig, items = CASES[name]
    return getattr(K, name.removesuffix("_rev")).compile(sig, dict(items), arch=arch)


def _lines(text: str, pattern: str) -> list[str]:
    stripped = (line.strip().rstrip(";") for line in text.splitlines())
    return [line for line in stripped if re.search(pattern, line)]


def test_scan_layout_keeps_the_axis_in_a_warp() -> None:
    # [8, 32] along dim 1, 32 lanes, 4 warps: one position per lane, rows over warps and registers
    ll = scan_layout((8, 32), 1, 32, 4)
    assert list(ll.in_bases("lane")) == [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16)]
    assert list(ll.in_bases("warp")) == [(1, 0), (2, 0)]
    assert scan_geometry(ll, 1) == (1, 32)
    # 128 positions: 4 consecutive ones per lane, the warps hold copies
    ll = scan_layout((128,), 0, 32, 4)
    assert list(ll.in_bases("register")) == [(1,), (2,)]
    assert list(ll.in_bases("warp")) == [(0,), (0,)]
    assert scan_geometry(ll, 0) == (4, 32)
    # wave64 along dim 0 of [64, 8]
    assert scan_geometry(scan_layout((64, 8), 0, 64, 4), 0) == (1, 64)
    # a layout with warps along the axis is not one the code generators scan in
    assert scan_geometry(blocked((256,), (1,), (32,), (4,), (0,)), 0) is None


def test_ptx_cumsum_1d() -> None:
    ck = _compiled("cumsum_1d", "sm_90a")
    ptx = ck.asm["ptx"]
    assert ck.asm["cubin"]  # ptxas accepts it
    # 4 registers per thread: 3 adds in the thread, then 5 shuffle steps and one for the carry
    assert [int(x.split(", ")[2]) for x in _lines(ptx, r"^shfl\.sync\.up\.b32")] == [1, 2, 4, 8, 16, 1]
    assert not _lines(ptx, r"^shfl\.sync\.down")
    assert len(_lines(ptx, r"^add\.f32")) == 3 + 5 + 4
    assert "scan" in ck.asm["target_ir"]


def test_ptx_reverse_shuffles_down() -> None:
    ck = _compiled("cumsum_1d_rev", "sm_90a")
    ptx = ck.asm["ptx"]
    assert ck.asm["cubin"]
    assert [int(x.split(", ")[2]) for x in _lines(ptx, r"^shfl\.sync\.down\.b32")] == [1, 2, 4, 8, 16, 1]
    # the distance from the end of the scan: 31 - (lane & 31)
    assert _lines(ptx, r"^sub\.u32 %r\d+, 31, %r\d+$")


@pytest.mark.parametrize("name", ["cumsum_2d", "running_argmax", "linear_recurrence"])
def test_ptx_other_scans_assemble(name: str) -> None:
    ck = _compiled(name, "sm_90a")
    assert ck.asm["cubin"]
    ptx = ck.asm["ptx"]
    assert _lines(ptx, r"^shfl\.sync\.(up|down)\.b32")
    if name == "running_argmax":  # two values travel: a float and an index per step
        assert len(_lines(ptx, r"^shfl\.sync\.up\.b32")) == 2 * 5


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
@pytest.mark.parametrize("name", ["cumsum_1d", "running_argmax"])
def test_amdgcn(arch: str, name: str) -> None:
    ck = _compiled(name, arch)
    asm = ck.asm["amdgcn"]
    skip_without_ld_lld(ck._amd_object)
    assert ck.asm["hsaco"]
    # gfx942/gfx950 are wave64: 128 positions take 64 lanes (6 steps + the carry); gfx1250 wave32: 5 + 1
    steps = (16 if name == "running_argmax" else (64 if arch != "gfx1250" else 32)).bit_length() - 1 + 1
    per_step = 2 if name == "running_argmax" else 1
    assert len(_lines(asm, r"^ds_bpermute_b32")) == steps * per_step


def test_refused_layout_names_the_op() -> None:
    from tlxc.codegen.nvptx import lower_scan

    class _Op:
        loc = None

    err = lower_scan.refuse(_Op(), "sm_90a", "why")  # type: ignore[arg-type]
    assert isinstance(err, CompilationError) and err.code == "TLXC-CODEGEN-001"
    assert "'scan' cannot be compiled for sm_90a: why" in str(err)
