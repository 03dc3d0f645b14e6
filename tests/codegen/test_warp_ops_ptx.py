"""``tlx.vote_ballot_sync`` and ``tlx.warp_redux`` in PTX (``codegen/nvptx/lower_warp.py``):
``vote.sync.ballot.b32`` with the full member mask and the user's mask applied to the word,
``redux.sync`` for integers and (sm_100a) floats, butterfly shuffles for floats on sm_90a,
the operand moved into the warp-rows layout, and ptxas accepting it."""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from codegen_helpers import filecheck

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_warp_kernels as K  # noqa: E402  (tests/tlx/tlx_warp_kernels.py)

from tlxc.ir.layout.common import LANE, WARP  # noqa: E402
from tlxc.ir.passes.layouts import warp_rows_layout  # noqa: E402


@lru_cache(maxsize=None)
def _compiled(name: str, arch: str, signature: str, items: tuple[tuple[str, Any], ...], num_warps: int = 4) -> Any:
    ck = getattr(K, name).compile(signature, dict(items), arch=arch, num_warps=num_warps)
    ck.asm["ptx"]
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]  # ptxas accepts it
    return ck


def _lines(ptx: str, pattern: str) -> list[str]:
    stripped = (line.strip().rstrip(";") for line in ptx.splitlines())
    return [line for line in stripped if re.search(pattern, line)]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ballot_of_a_tile(arch: str) -> None:
    ptx = _compiled("ballot_rows", arch, "*fp32,*i32", (("MASK", 0xFFFF), ("R", 64), ("C", 4))).asm["ptx"]
    # a lane ORs its row (4 columns), votes with every lane, and keeps the user's lanes
    # CHECK: or.pred [[A:%p[0-9]+]], %p{{[0-9]+}}, %p{{[0-9]+}};
    # CHECK: or.pred [[B:%p[0-9]+]], [[A]], %p{{[0-9]+}};
    # CHECK: or.pred [[C:%p[0-9]+]], [[B]], %p{{[0-9]+}};
    # CHECK: vote.sync.ballot.b32 [[W:%r[0-9]+]], [[C]], 0xffffffff;
    # CHECK: and.b32 [[W]], [[W]], 0xffff;
    filecheck(ptx, test_ballot_of_a_tile, arch)
    # 64 rows over 4 warps: one row per thread, so one ballot
    assert len(_lines(ptx, r"^vote\.sync\.ballot")) == 1


def test_rows_past_the_warps_wrap_into_registers() -> None:
    # 256 rows, 4 warps: a thread holds two rows of two groups, so two ballots
    ptx = _compiled("ballot_rows", "sm_90a", "*fp32,*i32", (("MASK", 0xFFFFFFFF), ("R", 256), ("C", 2))).asm["ptx"]
    assert len(_lines(ptx, r"^vote\.sync\.ballot\.b32 %r\d+, %p\d+, 0xffffffff$")) == 2
    assert not _lines(ptx, r"^and\.b32 %r\d+, %r\d+, 0xffffffff$")  # a full mask needs no AND


def test_warp_rows_layout() -> None:
    ll = warp_rows_layout((256, 2), 32, 4)
    # lane l holds row l, warp w rows 32w.., the lane's row whole in its registers
    assert ll.in_dim_size(LANE) == 32 and ll.in_dim_size(WARP) == 4 and ll.in_dim_size("register") == 4
    assert ll.apply({"register": 0, LANE: 5, WARP: 2, "block": 0}) == {"dim0": 69, "dim1": 0}
    assert ll.apply({"register": 1, LANE: 5, WARP: 2, "block": 0}) == {"dim0": 69, "dim1": 1}
    assert ll.apply({"register": 2, LANE: 5, WARP: 2, "block": 0}) == {"dim0": 197, "dim1": 0}
    # fewer rows than warps x 32: the extra warps hold copies
    assert warp_rows_layout((32,), 32, 4).apply({"register": 0, LANE: 7, WARP: 3, "block": 0}) == {"dim0": 7}


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_scalar_ballot_of_thread_ids(arch: str) -> None:
    ptx = _compiled("ballot_thread_id", arch, "*i32", (), 1).asm["ptx"]
    # TLX's test: lanes below 16 vote true
    # CHECK: mov.u32 [[T:%r[0-9]+]], %tid.x;
    # CHECK: setp.lt.s32 [[P:%p[0-9]+]], [[T]], %r{{[0-9]+}};
    # CHECK: vote.sync.ballot.b32 %r{{[0-9]+}}, [[P]], 0xffffffff;
    filecheck(ptx, test_scalar_ballot_of_thread_ids, arch)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_float_redux(arch: str) -> None:
    ptx = _compiled("redux_rows", arch, "*fp32,*fp32", (("OP", "abs_max"), ("R", 64), ("C", 2))).asm["ptx"]
    # SM100A: redux.sync.max.abs.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, 0xffffffff;
    # SM100A: redux.sync.max.abs.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, 0xffffffff;
    # SM90A: abs.f32 [[A:%f[0-9]+]], %f{{[0-9]+}};
    # SM90A: shfl.sync.bfly.b32 [[S:%f[0-9]+]], [[A]], 16, 31, -1;
    # SM90A: max.f32 [[M:%f[0-9]+]], [[A]], [[S]];
    # SM90A: shfl.sync.bfly.b32 {{%f[0-9]+}}, [[M]], 8, 31, -1;
    # SM90A-NOT: redux.sync
    filecheck(ptx, test_float_redux, arch)
    if arch == "sm_90a":
        assert len(_lines(ptx, r"^shfl\.sync\.bfly\.b32")) == 10  # 5 rounds x 2 registers


@pytest.mark.parametrize("op,want", [("add", "redux.sync.add.s32"), ("min", "redux.sync.min.s32"),
                                     ("max", "redux.sync.max.s32"), ("and", "redux.sync.and.b32"),
                                     ("or", "redux.sync.or.b32"), ("xor", "redux.sync.xor.b32")])
def test_integer_redux(op: str, want: str) -> None:
    ptx = _compiled("redux_rows", "sm_90a", "*i32,*i32", (("OP", op), ("R", 32), ("C", 1))).asm["ptx"]
    assert _lines(ptx, rf"^{re.escape(want)} %r\d+, %r\d+, 0xffffffff$")


def test_unsigned_min_is_unsigned() -> None:
    ptx = _compiled("redux_rows", "sm_90a", "*u32,*u32", (("OP", "min"), ("R", 32), ("C", 1))).asm["ptx"]
    assert _lines(ptx, r"^redux\.sync\.min\.u32 ")


def test_a_tile_in_another_layout_is_converted() -> None:
    # [32, 64] would be spread over lanes along dim 1; the op needs whole rows per lane
    ck = _compiled("redux_rows", "sm_90a", "*fp32,*fp32", (("OP", "max"), ("R", 32), ("C", 64)))
    assert "convert_layout" in ck.asm["target_ir"]
