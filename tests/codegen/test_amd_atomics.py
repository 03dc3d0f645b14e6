"""AMD lowering of ``tl.atomic_*`` / ``tl.atomic_cas``: LLVM ``atomicrmw`` / ``cmpxchg``
with the op's ordering and sync scope, compiled by LLVM for every AMD chip."""

from __future__ import annotations

import re

import pytest

import tlxc
import tlxc.language as tl
from tlxc import CompilationError

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


def test_replicated_tile_with_used_old_values_is_refused() -> None:
    ck = small_tile_kernel.compile("*i32,*i32", arch="gfx942")
    with pytest.raises(CompilationError) as info:
        ck.asm["llir"]
    assert info.value.code == "TLXC-CODEGEN-001"
    assert "tl.atomic_add on a tile of (16,) elements" in info.value.message
