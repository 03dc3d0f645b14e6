"""AMD lowering of ``tl.atomic_*`` / ``tl.atomic_cas``: LLVM ``atomicrmw`` / ``cmpxchg``
with the op's ordering and sync scope, compiled by LLVM for every AMD chip."""

from __future__ import annotations

import re

import pytest
from codegen_helpers import filecheck

import tlxc
import tlxc.language as tl

ARCHS = ["gfx942", "gfx950", "gfx1250"]


@tlxc.jit
def rmw_kernel(x, v, old, n, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    vals = tl.load(v + offs, mask=m)
    if OP == "add":
        r = tl.atomic_add(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    elif OP == "max":
        r = tl.atomic_max(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    elif OP == "min":
        r = tl.atomic_min(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    elif OP == "and":
        r = tl.atomic_and(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    elif OP == "xor":
        r = tl.atomic_xor(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    else:
        r = tl.atomic_xchg(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    tl.store(old + offs, r, mask=m)


CASES = [
    ("add", "fp32", "acq_rel", "gpu", 'atomicrmw fadd ptr addrspace\\(1\\) %"[^"]+", float %"[^"]+" '
                                      'syncscope\\("agent"\\) acq_rel'),
    ("add", "fp16", "relaxed", "cta", 'atomicrmw fadd .* half .* syncscope\\("workgroup"\\) monotonic'),
    ("add", "bf16", "release", "sys", "atomicrmw fadd .* bfloat %\"[^\"]+\" release"),
    ("add", "i64", "acquire", "gpu", 'atomicrmw add .* i64 .* syncscope\\("agent"\\) acquire'),
    ("max", "i32", "acq_rel", "gpu", "atomicrmw max .* i32 "),
    ("max", "u32", "acq_rel", "gpu", "atomicrmw umax .* i32 "),
    ("min", "fp64", "acq_rel", "gpu", "atomicrmw fmin .* double "),
    ("and", "u64", "relaxed", "gpu", "atomicrmw and .* i64 "),
    ("xor", "i32", "relaxed", "gpu", "atomicrmw xor .* i32 "),
    ("xchg", "fp32", "relaxed", "gpu", "atomicrmw xchg .* float "),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("op,dt,sem,scope,pattern", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_rmw_compiles(arch: str, op: str, dt: str, sem: str, scope: str, pattern: str) -> None:
    ck = rmw_kernel.compile(f"*{dt},*{dt},*{dt},i32", {"OP": op, "SEM": sem, "SCOPE": scope, "BLOCK": 256},
                            arch=arch)
    llir = ck.asm["llir"]
    hits = [ln for ln in llir.splitlines() if "atomicrmw" in ln]
    # 256 elements: one per lane of 4 waves of 64, two per lane with 32-lane waves
    assert len(hits) == (2 if arch == "gfx1250" else 1), hits
    assert all(re.search(pattern, h) for h in hits), hits
    assert "atomic" in ck.asm["amdgcn"]


@tlxc.jit
def cas_kernel(lock, x):
    old = tl.atomic_cas(lock, 0, 1, sem="acquire", scope="gpu")
    tl.store(x, old)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dt,ty", [("i32", "i32"), ("fp32", "i32"), ("i16", "i16"), ("fp64", "i64")])
def test_scalar_cas_shares_the_old_value(arch: str, dt: str, ty: str) -> None:
    ck = cas_kernel.compile(f"*{dt},*{dt}", arch=arch)
    llir = ck.asm["llir"]
    assert re.search(rf'cmpxchg ptr addrspace\(1\) %"[^"]+", {ty} [^,]+, {ty} [^ ]+ syncscope\("agent"\) '
                     r"acquire acquire", llir), llir
    # work-item 0's old value goes to every lane through LDS, between barriers
    assert llir.count("call void @\"llvm.amdgcn.s.barrier\"()") == 2
    assert "atomic" in ck.asm["amdgcn"] or "cmpswap" in ck.asm["amdgcn"]


@tlxc.jit
def small_tile_kernel(x, old):
    offs = tl.arange(0, 16)
    r = tl.atomic_add(x + offs, 1)
    tl.store(old + offs, r)


def test_replicated_tile_old_values_cross_waves_through_lds() -> None:
    # 16 elements over 4 waves of 64: lane bits 4 and 5 and both wave bits hold copies;
    # the owner lane does the atomic and writes its old value at the element's LDS slot
    ck = small_tile_kernel.compile("*i32,*i32", arch="gfx942")
    llir = ck.asm["llir"]
    assert llir.count("atomicrmw add") == 1
    share = llir[llir.index("atomicrmw add"):]
    assert share.count('call void @"llvm.amdgcn.s.barrier"()') == 2
    assert re.search(r"atomic\.share:\n\s+store i32 %\S+, ptr addrspace\(3\)", share), share
    assert "ds.bpermute" not in llir
    filecheck(ck.asm["amdgcn"], test_replicated_tile_old_values_cross_waves_through_lds, "gfx942")
    # GFX942: global_atomic_add [[OLD:v[0-9]+]], {{.*}} sc0
    # GFX942: s_barrier
    # GFX942: ds_write_b32 [[SLOT:v[0-9]+]], [[OLD]]
    # GFX942: s_barrier
    # GFX942: ds_read_b32 {{v[0-9]+}}, [[SLOT]]
    _links(ck)


@pytest.mark.parametrize("arch,keep", [("gfx942", 15), ("gfx1250", 15)])
def test_replicated_tile_old_values_within_a_wave_by_bpermute(arch: str, keep: int) -> None:
    # 16 elements in one wave: the other lanes read lane & 15's old value
    ck = small_tile_kernel.compile("*i32,*i32", arch=arch, num_warps=1)
    llir = ck.asm["llir"]
    assert re.search(rf"and i32 %\S+, {keep}\n", llir), llir
    assert llir.count('call i32 @"llvm.amdgcn.ds.bpermute"') == 1
    assert "llvm.amdgcn.s.barrier" not in llir
    assert "ds_bpermute_b32" in ck.asm["amdgcn"]
    if arch == "gfx942":
        _links(ck)


def _links(ck: object) -> None:
    from tlxc.codegen.amdgpu import toolchain

    if toolchain.find_ld_lld() is None:
        pytest.skip("no ld.lld here (CI installs one)")
    hsaco = ck.asm["hsaco"]  # type: ignore[attr-defined]
    assert hsaco[:4] == b"\x7fELF"
