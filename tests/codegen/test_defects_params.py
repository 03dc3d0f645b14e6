"""Regression: a scalar i8/u8 kernel argument is an integer (sign- or zero-extended as its
type says), not a boolean; only i1 becomes a predicate. On sm_90a the u8 parameter used
to be tested with ``setp.ne.u16`` into a 16-bit register (PTX that ptxas refuses), and on
AMDGPU both i8 and u8 were compared with 0."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

SOURCE = """
@tlxc.jit
def k(out, v):
    tl.store(out, v.to(tl.int32) * 3 + 1)
"""

HAS_PTXAS = shutil.which("ptxas") is not None


@pytest.mark.parametrize("sig,load", [("i8", "ld.param.s8"), ("u8", "ld.param.u8")])
def test_byte_params_are_integers_in_ptx(load_kernels: Any, sig: str, load: str) -> None:
    mod = load_kernels(SOURCE)
    ck = mod.k.compile(f"*i32,{sig}", arch="sm_90a")
    ptx = ck.asm["ptx"]
    assert f"\t{load} %h0, [k_param_1];" in ptx
    ext = "s16" if sig == "i8" else "u16"
    assert f"cvt.s32.{ext} %r0, %h0;" in ptx  # widened as an integer of its signedness
    assert "setp.ne.u16" not in ptx
    if HAS_PTXAS:
        assert len(ck.asm["cubin"]) > 0  # ptxas accepts it


def test_bool_param_is_still_a_predicate_in_ptx(load_kernels: Any) -> None:
    ck = load_kernels(SOURCE).k.compile("*i32,i1", arch="sm_90a")
    assert "setp.ne.u16 %p0, %h0, 0;" in ck.asm["ptx"]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
@pytest.mark.parametrize("sig,ext", [("i8", "sext"), ("u8", "zext")])
def test_byte_params_are_integers_on_amdgpu(load_kernels: Any, arch: str, sig: str, ext: str) -> None:
    ck = load_kernels(SOURCE).k.compile(f"*i32,{sig}", arch=arch)
    llir = ck.asm["llir"]
    assert f"{ext} i8 %\".2\" to i32" in llir
    assert "icmp ne i8" not in llir
    assert ck.asm["amdgcn"]


def test_bool_param_is_still_compared_on_amdgpu(load_kernels: Any) -> None:
    llir = load_kernels(SOURCE).k.compile("*i32,i1", arch="gfx950").asm["llir"]
    assert "icmp ne i8 %\".2\", 0" in llir


@pytest.mark.parametrize("value,expected", [(np.int8(-3), -8), (np.int8(127), 382), (np.uint8(200), 601),
                                            (np.uint8(255), 766), (True, 4)])
def test_byte_params_on_the_cpu(load_kernels: Any, value: Any, expected: int) -> None:
    out = np.zeros(1, np.int32)
    load_kernels(SOURCE).k.interpret[(1,)](out, value)
    assert out[0] == expected


def test_runtime_packs_byte_params() -> None:
    from tlxc.runtime.args import ArgPlan

    plan = ArgPlan("i8,u8,i1")
    assert plan.pack([-3, 200, True])[:3] == bytes([0xFD, 200, 1])
