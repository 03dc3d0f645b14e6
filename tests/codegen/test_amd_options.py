"""The AMD compile option ``waves_per_eu`` (Triton's, ``third_party/amd/backend/compiler.py``):
given to ``kernel.compile(...)``, a launch or a ``tlxc.Config``, it becomes the kernel
attribute ``"amdgpu-waves-per-eu"="N"`` (0: none, LLVM's default), caps the registers so
that N waves fit on a SIMD, chooses the variant (cache key), is refused at the user's
line when it is not an int from 0 to the chip's most waves per SIMD, and is ignored on
NVIDIA targets as Triton's CUDA back end ignores the AMD-only options."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

import tlxc
import tlxc.language as tl
from tlxc.compiler import CompileOptions
from tlxc.kernels.launch import _KEY_OPTIONS

SIG = "*fp32:16,*fp32:16,*fp32:16,i32"
ATTR = re.compile(r'"amdgpu-waves-per-eu"="([^"]*)"')


@tlxc.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def compiled(arch: str, block: int = 1024, **options: Any):
    k = add.compile(SIG, constants={"BLOCK": block}, arch=arch, num_warps=4, **options)
    if arch.startswith("gfx"):
        k.asm["amdgcn"]  # the metadata comes with the assembly
    return k


@pytest.mark.parametrize("arch", ["gfx942", "gfx950", "gfx1250"])
def test_attribute_in_llir(arch: str) -> None:
    assert ATTR.findall(compiled(arch, waves_per_eu=2).asm["llir"]) == ["2"]
    assert ATTR.findall(compiled(arch, waves_per_eu=0).asm["llir"]) == []
    assert ATTR.findall(compiled(arch).asm["llir"]) == []
    assert compiled(arch, waves_per_eu=3).metadata["waves_per_eu"] == 3


@pytest.mark.parametrize("arch, unified, block, waves", [("gfx942", 512, 16384, (4, 8)),
                                                         ("gfx950", 512, 16384, (4, 8)),
                                                         ("gfx1250", 1024, 8192, (8, 16))])
def test_register_budget(arch: str, unified: int, block: int, waves: tuple[int, ...]) -> None:
    """A vector add of ``block`` elements per program on 4 waves takes ~250 (gfx9: 64 per
    lane and array) or ~130 registers (gfx1250, wave32: 64 per lane) left alone; N waves per
    SIMD leave it unified / N (spilling past that); 2 waves leave room for all."""
    free = compiled(arch, block).metadata["vgprs"]
    assert free > unified // waves[0], free
    for n in waves:
        md = compiled(arch, block, waves_per_eu=n).metadata
        assert md["vgprs"] + md["agprs"] <= unified // n, (n, md)
    assert compiled(arch, block, waves_per_eu=2).metadata["vgprs"] == free


def test_cache_key() -> None:
    base = compiled("gfx950")
    assert compiled("gfx950", waves_per_eu=0) is base
    two = compiled("gfx950", waves_per_eu=2)
    assert two is not base and two.options.waves_per_eu == 2
    assert compiled("gfx950", waves_per_eu=2) is two
    assert "waves_per_eu" in _KEY_OPTIONS


def test_ignored_on_nvidia() -> None:
    plain = compiled("sm_90a")
    k = compiled("sm_90a", waves_per_eu=2)
    assert k is plain and k.options.waves_per_eu == 0
    assert CompileOptions("sm_100a", waves_per_eu=4).for_target().waves_per_eu == 0
    assert CompileOptions("gfx950", waves_per_eu=4).for_target().waves_per_eu == 4


@pytest.mark.parametrize("arch, bad, message", [
    ("gfx950", -1, "must be an int >= 0"), ("gfx950", 1.5, "must be an int >= 0"),
    ("gfx950", True, "must be an int >= 0"), ("gfx950", "2", "must be an int >= 0"),
    ("gfx950", 9, "holds at most 8 waves"), ("gfx942", 9, "holds at most 8 waves"),
    ("gfx1250", 17, "holds at most 16 waves"), ("sm_90a", -2, "must be an int >= 0")])
def test_bad_values_refused_at_the_users_line(arch: str, bad: Any, message: str) -> None:
    with pytest.raises(tlxc.CompilationError, match=message) as info:
        add.compile(SIG, constants={"BLOCK": 64}, arch=arch, waves_per_eu=bad)  # the line
    e = info.value
    assert e.code == "TLXC-LAUNCH-003"
    assert e.loc is not None and e.loc.file == __file__
    assert "waves_per_eu=bad)  # the line" in open(__file__).read().splitlines()[e.loc.line - 1]


SOURCE = """
@tlxc.jit
def k(x, n, BLOCK: tl.constexpr):
    pass
"""


class _Tensor:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr
        import numpy as np

        self.dtype = np.dtype(np.float32)

    def data_ptr(self) -> int:
        return self.ptr


@pytest.mark.interpreter_only  # a fake driver: not meaningful with the real GPU harness
def test_launch_option(fake_driver: Any, load_kernels: Any) -> None:
    """``kernel[grid](..., waves_per_eu=N)`` on the (fake, NVIDIA) GPU: accepted, checked,
    the same variant as without it; the fast path takes it as a key option."""
    mod = load_kernels(SOURCE)
    x = _Tensor(0x7F0000000000)
    first = mod.k[(1,)](x, 64, BLOCK=32)
    assert mod.k[(1,)](x, 64, BLOCK=32, waves_per_eu=2) is first
    assert mod.k[(1,)](x, 64, BLOCK=32, waves_per_eu=2) is first  # the fast path now
    assert len(mod.k.cache) == 1 and len(fake_driver.launches) == 3
    with pytest.raises(tlxc.CompilationError, match="waves_per_eu must be an int") as info:
        mod.k[(1,)](x, 64, BLOCK=32, waves_per_eu=-1)
    assert info.value.code == "TLXC-LAUNCH-003" and info.value.loc.file == __file__


def test_config_carries_it() -> None:
    cfg = tlxc.Config({"BLOCK": 64}, num_warps=8, waves_per_eu=2)
    assert cfg.all_kwargs()["waves_per_eu"] == 2 and "waves_per_eu: 2" in str(cfg)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
