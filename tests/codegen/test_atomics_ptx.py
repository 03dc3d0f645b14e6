"""PTX of ``tl.atomic_*`` / ``tl.atomic_cas``: one ``atom.global`` per element (also when
the old value is unused: ptxas makes that a ``REDG``), in Triton's spelling, with the op's
``sem`` and ``scope``, predicated by the mask; ptxas assembles each variant."""

from __future__ import annotations

import re

import pytest
from codegen_helpers import filecheck, ptxas_or_skip

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx
from tlxc import CompilationError


@tlxc.jit
def rmw_kernel(x, v, old, n, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr, USE: tl.constexpr,
               BLOCK: tl.constexpr):
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
    elif OP == "or":
        r = tl.atomic_or(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    elif OP == "xor":
        r = tl.atomic_xor(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    else:
        r = tl.atomic_xchg(x + offs, vals, mask=m, sem=SEM, scope=SCOPE)
    if USE:
        tl.store(old + offs, r, mask=m)


def _compile(sig: str, **constants: object) -> str:
    ck = rmw_kernel.compile(sig, {"BLOCK": 128, **constants}, arch="sm_90a")
    return ck.asm["ptx"], ck


CASES = [
    # (op, dtype, sem, scope, use, the instruction expected, once per element)
    ("add", "fp32", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.add.f32"),
    ("add", "fp32", "relaxed", "gpu", False, "atom.global.gpu.relaxed.add.f32"),
    ("add", "fp32", "acquire", "cta", False, "atom.global.cta.acquire.add.f32"),
    ("add", "fp16", "relaxed", "sys", True, "atom.global.sys.relaxed.add.noftz.f16"),
    ("add", "bf16", "release", "gpu", False, "atom.global.gpu.release.add.noftz.bf16"),
    ("add", "fp64", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.add.f64"),
    ("add", "i32", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.add.u32"),
    ("add", "i64", "relaxed", "gpu", False, "atom.global.gpu.relaxed.add.u64"),
    ("max", "i32", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.max.s32"),
    ("max", "u32", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.max.u32"),
    ("min", "i64", "relaxed", "cta", True, "atom.global.cta.relaxed.min.s64"),
    ("and", "u64", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.and.b64"),
    ("or", "i32", "relaxed", "gpu", False, "atom.global.gpu.relaxed.or.b32"),
    ("xor", "i32", "acq_rel", "gpu", True, "atom.global.gpu.acq_rel.xor.b32"),
    ("xchg", "fp32", "relaxed", "gpu", False, "atom.global.gpu.relaxed.exch.b32"),
]


@pytest.mark.parametrize("op,dt,sem,scope,use,instr", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[4]}" for c in CASES])
def test_rmw_instruction(op: str, dt: str, sem: str, scope: str, use: bool, instr: str) -> None:
    ptx, ck = _compile(f"*{dt},*{dt},*{dt},i32", OP=op, SEM=sem, SCOPE=scope, USE=use)
    lines = [ln.strip() for ln in ptx.splitlines() if ".global." in ln and ("atom" in ln or "red" in ln)]
    # 128 elements over 128 threads: one atomic per thread, under the mask's predicate
    assert len(lines) == 1, lines
    assert re.fullmatch(rf"@%p\d+ {re.escape(instr)} " + (r"%\w+, " if instr.startswith("atom") else "")
                        + r"\[%rd\d+\], %\w+;", lines[0]), lines[0]
    ptxas_or_skip()
    assert ck.asm["cubin"]


@pytest.mark.parametrize("op,dt", [("max", "fp32"), ("min", "fp64")])
def test_float_max_min_use_the_integer_order(op: str, dt: str) -> None:
    ptx, ck = _compile(f"*{dt},*{dt},*{dt},i32", OP=op, SEM="acq_rel", SCOPE="gpu", USE=True)
    bits = 32 if dt == "fp32" else 64
    other = "min" if op == "max" else "max"
    assert f"atom.global.gpu.acq_rel.{op}.s{bits} " in ptx
    assert f"atom.global.gpu.acq_rel.{other}.u{bits} " in ptx
    ptxas_or_skip()
    assert ck.asm["cubin"]


@tlxc.jit
def ticket_kernel(counter, lock, out):
    t = tl.atomic_add(counter, 1)
    while tl.atomic_cas(lock, 0, 1, sem="acquire") == 1:
        pass
    tl.store(out + t, t)
    tl.atomic_xchg(lock, 0, sem="release")


def test_scalar_atomics_run_once_and_share_the_old_value() -> None:
    ck = ticket_kernel.compile("*i32,*i32,*i32", arch="sm_90a", num_warps=4)
    ptx = ck.asm["ptx"]
    body = [ln.strip() for ln in ptx.splitlines()]
    add = next(ln for ln in body if "atom.global.gpu.acq_rel.add.u32" in ln)
    cas = next(ln for ln in body if "atom.global.acquire.gpu.cas.b32" in ln)
    xchg = next(ln for ln in body if "atom.global.gpu.release.exch.b32" in ln)
    first = re.search(r"setp\.eq\.u32 (%p\d+), %r\d+, 0;", ptx).group(1)  # thread 0
    for ln in (add, cas, xchg):
        assert ln.startswith(f"@{first} "), ln
    # thread 0's old value reaches the others through shared memory, between barriers
    assert ptx.count("st.shared.b32") == 2 and ptx.count("ld.shared.b32") == 2
    ptxas_or_skip()
    assert ck.asm["cubin"]


@tlxc.jit
def small_tile_kernel(x, old):
    offs = tl.arange(0, 16)
    r = tl.atomic_add(x + offs, 1)
    tl.store(old + offs, r)


def test_replicated_tile_old_values_cross_warps_through_shared_memory() -> None:
    # 16 elements over 4 warps: lane bit 4 and both warp bits hold copies; the owner
    # (those bits zero) does the atomic and writes its old value at the element's slot
    ck = small_tile_kernel.compile("*i32,*i32", arch="sm_90a", num_warps=4)
    ptx = ck.asm["ptx"]
    filecheck(ptx, test_replicated_tile_old_values_cross_warps_through_shared_memory, "sm_90a")
    # CHECK: mov.u32 [[TID:%r[0-9]+]], %tid.x;
    # CHECK: bfe.u32 [[ELEM:%r[0-9]+]], [[TID]], 0, 4;
    # CHECK: and.b32 [[LANE:%r[0-9]+]], [[TID]], 31;
    # CHECK: and.b32 [[LB:%r[0-9]+]], [[LANE]], 16;
    # CHECK: shr.u32 [[WARP:%r[0-9]+]], [[TID]], 5;
    # CHECK: and.b32 [[WB:%r[0-9]+]], [[WARP]], 3;
    # CHECK: setp.eq.u32 [[OWNER:%p[0-9]+]], {{%r[0-9]+}}, 0;
    # CHECK: mov.u32 [[SMEM:%r[0-9]+]], global_smem;
    # CHECK: mad.lo.u32 [[SLOT:%r[0-9]+]], [[ELEM]], 4, [[SMEM]];
    # CHECK: @[[OWNER]] atom.global.gpu.acq_rel.add.u32 [[OLD:%r[0-9]+]], [{{%rd[0-9]+}}], {{%r[0-9]+}};
    # CHECK-NEXT: bar.sync 0;
    # CHECK-NEXT: @[[OWNER]] st.shared.b32 [[[SLOT]]], [[OLD]];
    # CHECK-NEXT: bar.sync 0;
    # CHECK-NEXT: ld.shared.b32 [[GOT:%r[0-9]+]], [[[SLOT]]];
    # CHECK: st.global.b32 [{{%rd[0-9]+}}], [[GOT]];
    assert ptx.count("atom.") == 1
    ptxas_or_skip()
    assert ck.asm["cubin"]


def test_replicated_tile_old_values_within_a_warp_by_shuffle() -> None:
    # 16 elements in one warp: lanes 16..31 copy lanes 0..15 and read the owner's old value
    ck = small_tile_kernel.compile("*i32,*i32", arch="sm_90a", num_warps=1)
    ptx = ck.asm["ptx"]
    filecheck(ptx, test_replicated_tile_old_values_within_a_warp_by_shuffle, "sm_90a")
    # CHECK: and.b32 [[LANE:%r[0-9]+]], {{%r[0-9]+}}, 31;
    # CHECK: and.b32 {{%r[0-9]+}}, [[LANE]], 16;
    # CHECK: setp.eq.u32 [[OWNER:%p[0-9]+]], {{%r[0-9]+}}, 0;
    # CHECK: and.b32 [[SRC:%r[0-9]+]], [[LANE]], 15;
    # CHECK: @[[OWNER]] atom.global.gpu.acq_rel.add.u32 [[OLD:%r[0-9]+]], [{{%rd[0-9]+}}], {{%r[0-9]+}};
    # CHECK-NEXT: shfl.sync.idx.b32 [[GOT:%r[0-9]+]], [[OLD]], [[SRC]], 31, -1;
    # CHECK: st.global.b32 [{{%rd[0-9]+}}], [[GOT]];
    assert "bar.sync" not in ptx and "st.shared" not in ptx
    ptxas_or_skip()
    assert ck.asm["cubin"]


@pytest.mark.parametrize("dt,shuffles", [("fp64", 2), ("fp16", 1), ("i64", 2)])
def test_replicated_tile_shuffles_each_32_bit_word(dt: str, shuffles: int) -> None:
    ck = rmw_kernel.compile(f"*{dt},*{dt},*{dt},i32", {"BLOCK": 8, "OP": "add" if dt != "i64" else "max",
                                                        "SEM": "relaxed", "SCOPE": "gpu", "USE": True},
                            arch="sm_100a", num_warps=1)
    ptx = ck.asm["ptx"]
    assert len(re.findall(r"shfl\.sync\.idx\.b32 %r\d+, %r\d+, %r\d+, 31, -1;", ptx)) == shuffles
    assert re.search(r"and\.b32 %r\d+, %r\d+, 7;", ptx)  # lanes 8..31 read lane & 7
    ptxas_or_skip()
    assert ck.asm["cubin"]


@tlxc.jit
def divergent_small_tile_kernel(x, old):
    offs = tl.arange(0, 16)
    if tlx.thread_id(0) < 64:
        r = tl.atomic_add(x + offs, 1)
        tl.store(old + offs, r)


def test_replicated_tile_under_a_thread_id_branch_is_refused() -> None:
    ck = divergent_small_tile_kernel.compile("*i32,*i32", arch="sm_90a", num_warps=4)
    with pytest.raises(CompilationError) as info:
        ck.asm["ptx"]
    err = info.value
    assert err.code == "TLXC-CODEGEN-001"
    assert "tl.atomic_add on a tile of (16,) elements" in err.message and "tlx.thread_id" in err.message
    src = open(__file__).read().splitlines()
    line = next(i for i, t in enumerate(src, 1) if "r = tl.atomic_add(x + offs, 1)" in t and t.startswith("        "))
    assert err.loc is not None and err.loc.line == line


@tlxc.jit
def small_tile_red_kernel(x):
    offs = tl.arange(0, 16)
    tl.atomic_add(x + offs, 1, sem="relaxed")


def test_replicated_tile_updates_each_element_once() -> None:
    ck = small_tile_red_kernel.compile("*i32", arch="sm_90a", num_warps=4)
    ptx = ck.asm["ptx"]
    lines = [ln.strip() for ln in ptx.splitlines() if "atom.global.gpu.relaxed.add.u32" in ln]
    assert len(lines) == 1 and lines[0].startswith("@%p")  # the owner predicate
    ptxas_or_skip()
    assert ck.asm["cubin"]


@tlxc.jit
def cas16_kernel(x, out):
    old = tl.atomic_cas(x + tl.arange(0, 128), 0, 1, sem="relaxed", scope="cta")
    tl.store(out + tl.arange(0, 128), old)


@pytest.mark.parametrize("dt", ["i16", "fp16", "bf16"])
def test_16_bit_cas(dt: str) -> None:
    ck = cas16_kernel.compile(f"*{dt},*{dt}", arch="sm_90a", num_warps=4)
    ptx = ck.asm["ptx"]
    assert len(re.findall(r"atom\.global\.relaxed\.cta\.cas\.b16 %h\d+, \[%rd\d+\], %h\d+, %h\d+;", ptx)) == 1
    ptxas_or_skip()
    assert ck.asm["cubin"]


@tlxc.jit
def split_add_kernel(c, a, n, USE: tl.constexpr, SEM: tl.constexpr, BLOCK: tl.constexpr):
    # every program adds its rows of a into the same [BLOCK, BLOCK] tile of c (split-K's end)
    r, k = tl.arange(0, BLOCK), tl.program_id(0)
    offs = r[:, None] * BLOCK + r[None, :]
    x = tl.load(a + k * BLOCK * BLOCK + offs)
    old = tl.atomic_add(c + offs, x, mask=offs < n, sem=SEM)
    if USE:
        tl.store(a + offs, old)


@pytest.mark.parametrize("sig, form", [("*fp16:16,*fp16:16,i32:16", "add.noftz.v8.f16"),
                                       ("*bf16:16,*bf16:16,i32:16", "add.noftz.v8.bf16"),
                                       ("*fp32:16,*fp32:16,i32:16", "add.v4.f32")])
@pytest.mark.parametrize("use, sem, verb", [(False, "relaxed", "atom.global.gpu.relaxed"),
                                            (False, "acq_rel", "atom.global.gpu.acq_rel"),
                                            (True, "relaxed", "atom.global.gpu.relaxed")])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_float_adds_over_aligned_runs_are_vector_atomics(sig: str, form: str, use: bool, sem: str, verb: str,
                                                         arch: str) -> None:
    # 16 bytes per instruction, as a store of the tile would move (Triton on Hopper too):
    # the atomic's pointers lead its layout, so even a value in another layout is converted
    ptx = split_add_kernel.compile(sig, constants=dict(USE=use, SEM=sem, BLOCK=64), arch=arch,
                                   num_warps=4).asm["ptx"]
    lines = [ln.strip() for ln in ptx.splitlines() if re.search(r"(atom|red)\.global\.", ln)]
    assert lines and all(f"{verb}.{form} " in ln for ln in lines), lines
    elems = 8 if "16" in form else 4
    assert len(lines) == 64 * 64 // elems // 128  # per thread: the tile in 16-byte pieces
    ptxas_or_skip()
    assert split_add_kernel.compile(sig, constants=dict(USE=use, SEM=sem, BLOCK=64), arch=arch,
                                    num_warps=4).asm["cubin"]


def test_unaligned_or_ragged_float_adds_stay_scalar() -> None:
    # n not known to be a multiple of 8: the mask may change inside a run of 8
    ptx = split_add_kernel.compile("*fp16:16,*fp16:16,i32", constants=dict(USE=False, SEM="relaxed", BLOCK=64),
                                   arch="sm_90a").asm["ptx"]
    assert "atom.global.gpu.relaxed.add.noftz.f16 " in ptx and ".v8." not in ptx and ".v2." not in ptx


@tlxc.jit
def dot_split_kernel(c, a, b, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    offs = r[:, None] * BLOCK + r[None, :]
    acc = tl.dot(tl.load(a + offs), tl.load(b + offs))
    tl.atomic_add(c + offs, acc.to(tl.float16), sem="relaxed")


def test_a_wgmma_accumulator_is_added_in_16_byte_pieces() -> None:
    # tutorial 12's split-K end: the accumulator's layout holds 2 consecutive elements per
    # register pair; the atomic's layout has 8 (4 instructions a thread, not 16)
    ptx = dot_split_kernel.compile("*fp16:16,*fp16:16,*fp16:16", constants=dict(BLOCK=64), arch="sm_90a",
                                   num_warps=4).asm["ptx"]
    assert "wgmma.mma_async" in ptx
    assert len(re.findall(r"atom\.global\.gpu\.relaxed\.add\.noftz\.v8\.f16 ", ptx)) == 4
