"""``tl.debug_barrier()``: every thread of the program waits (Triton's __syncthreads), on
every target -- ``bar.sync 0`` in PTX, ``s_barrier`` (``s_barrier_signal``/``_wait`` on
gfx1250) in AMD code -- and the interpreter runs straight through it."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def shifted_copy(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.debug_barrier()
    tl.store(y + offs, v + 1)


def test_interpreter_runs_through_it() -> None:
    x = np.arange(128, dtype=np.float32)
    y = np.zeros_like(x)
    shifted_copy.interpret[(1,)](x, y, BLOCK=128)
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_ptx_has_one_cta_barrier(arch: str) -> None:
    ptx = shifted_copy.compile("*fp32:16,*fp32:16", {"BLOCK": 128}, arch=arch).asm["ptx"]
    assert [ln.strip() for ln in ptx.splitlines() if "bar." in ln] == ["bar.sync 0;"]


@pytest.mark.parametrize("arch, want", [("gfx942", ["s_barrier"]), ("gfx950", ["s_barrier"]),
                                        ("gfx1250", ["s_barrier_signal -1", "s_barrier_wait -1"])])
def test_amd_has_one_work_group_barrier(arch: str, want: list[str]) -> None:
    asm = shifted_copy.compile("*fp32:16,*fp32:16", {"BLOCK": 128}, arch=arch).asm["amdgcn"]
    code = [ln.strip() for ln in asm.splitlines() if ln.strip().startswith("s_barrier")]
    assert code == want
