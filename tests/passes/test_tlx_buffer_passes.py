"""The shared-memory passes on IR text: buffer layout assignment (``buffer_layouts``),
allocation (``smem_alloc``: offsets, alignment, liveness reuse, ``reuse=``) and hazard
barriers / proxy fences (``membar``)."""

from __future__ import annotations

import re

import pytest
from passes_helpers import kernel, parse  # tests/passes/passes_helpers.py

from tlxc.errors import CompilationError
from tlxc.ir import print_ir
from tlxc.ir.core import Operation
from tlxc.ir.layout.nvidia import nvmma_shared
from tlxc.ir.parser import parse_ir
from tlxc.ir.passes import PassOptions, buffer_layouts, membar, smem_alloc
from tlxc.ir.verifier import verify

OPTS = PassOptions()
T16 = "%t: tile<64x64xf16>, %acc: tile<64x64xf32>, %n: i32, %p: tile<64x64xptr<f16>>"


def _layouts(body: str, args: str = T16) -> Operation:
    module = parse(kernel(body, args))
    buffer_layouts.run(module, OPTS)
    verify(module)
    return module


def _ops(module: Operation, name: str) -> list[Operation]:
    return [op for op in module.walk() if op.NAME == name]


def _barriers(module: Operation) -> str:
    """The kernel's op names in order, with B for an inserted barrier, F for a fence."""
    out = []
    for op in module.walk():
        if op.NAME == "named_barrier_wait" and op.attrs["bar_id"] == 0:
            out.append("B")
        elif op.NAME == "fence":
            out.append("F")
        elif op.NAME not in ("module", "func", "constant", "local_view", "return", "yield"):
            out.append(op.NAME)
    return " ".join(out)


def _membar(body: str, args: str = T16) -> tuple[Operation, str]:
    module = _layouts(body, args)
    smem_alloc.run(module, OPTS)
    membar.run(module, OPTS)
    verify(module)
    text = print_ir(module)
    assert print_ir(parse_ir(text)) == text  # barriers and fences print and parse back
    return module, _barriers(module)


# -- buffer layouts -------------------------------------------------------------------------------
def test_allocations_default_to_nvmma_and_views_follow() -> None:
    m = _layouts("""
        %c0 = constant {value = 0} : i32
        %c32 = constant {value = 32} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=2>
        %v = local_view %a, %n : memdesc<64x64xf16, smem>
        %t2 = local_trans %v {perm = [1, 0]} : memdesc<64x64xf16, smem>
        %s = local_slice %v, %c32, %c0 : memdesc<32x64xf16, smem>
        %r = local_alloc : memdesc<128xf32, smem, num=1>
        return
    """)
    (alloc, vec) = _ops(m, "local_alloc")
    want = nvmma_shared((64, 64), 16, 128)
    assert alloc.result.type.layout == want
    assert _ops(m, "local_view")[0].result.type.layout == want
    assert _ops(m, "local_trans")[0].result.type.layout == buffer_layouts.trans_view(want, (1, 0))
    assert _ops(m, "local_slice")[0].result.type.layout == buffer_layouts.slice_view(want, (32, 64))
    assert vec.result.type.layout == buffer_layouts.plain_layout((128,), 32)
    text = print_ir(m)
    assert print_ir(parse_ir(text)) == text


def test_a_reinterpreted_allocation_is_plain() -> None:
    m = _layouts("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %v = local_view %a, %c0 : memdesc<64x64xf16, smem>
        %r = local_reinterpret %v : memdesc<8192xi8, smem>
        %b = local_alloc : memdesc<64x64xf16, smem, num=1>
        %w = local_view %b, %c0 : memdesc<64x64xf16, smem>
        %same = local_reinterpret %w : memdesc<64x64xbf16, smem>
        return
    """)
    a, b = _ops(m, "local_alloc")
    assert a.result.type.layout == buffer_layouts.plain_layout((64, 64), 16)
    assert b.result.type.layout == nvmma_shared((64, 64), 16, 128)  # same width and shape: kept
    r, same = _ops(m, "local_reinterpret")
    assert r.result.type.layout == buffer_layouts.plain_layout((8192,), 8)
    assert same.result.type.layout == b.result.type.layout


@pytest.mark.parametrize("body,message", [
    ("%c0 = constant {value = 0} : i32\n%c8 = constant {value = 8} : i32\n"
     "%a = local_alloc : memdesc<64x64xf16, smem, num=1>\n%v = local_view %a, %c0 : memdesc<64x64xf16, smem>\n"
     "%s = local_slice %v, %c8, %c0 : memdesc<32x64xf16, smem>", "not a multiple of the slice size"),
    ("%c0 = constant {value = 0} : i32\n"
     "%a = local_alloc : memdesc<64x64xf16, smem, num=1>\n%v = local_view %a, %c0 : memdesc<64x64xf16, smem>\n"
     "%tr = local_trans %v {perm = [1, 0]} : memdesc<64x64xf16, smem>\n"
     "%s = local_slice %tr, %c0, %c0 : memdesc<32x64xf16, smem>", "does not cover a block"),
    ("%c0 = constant {value = 0} : i32\n"
     "%a = local_alloc : memdesc<64x64xf16, smem, num=1>\n%v = local_view %a, %c0 : memdesc<64x64xf16, smem>\n"
     "%t2 = local_trans %v {perm = [1, 0]} : memdesc<64x64xf16, smem>\n"
     "%r = local_reinterpret %t2 : memdesc<4096xf16, smem>", "needs a row-major source"),
    ("%a = local_alloc : memdesc<48x64xf16, smem, num=1>", "not a power of two"),
])
def test_buffer_layout_errors_name_the_op(body: str, message: str) -> None:
    module = parse(kernel(body + "\nreturn loc(9:1)", T16).replace("\n    return loc(9:1)", "\n    return loc(9:1)"))
    with pytest.raises(CompilationError, match=message) as info:
        buffer_layouts.run(module, OPTS)
    assert info.value.code in ("TLXC-TLX-001", "TLXC-TLX-005")


@pytest.mark.parametrize("shape,slice_shape,span", [((64, 64), (64, 32), 64), ((32, 64), (32, 32), 64),
                                                    ((64, 128), (64, 64), 128), ((64, 64), (64, 16), 32),
                                                    ((64, 64), (32, 64), 128), ((64, 64), (64, 8), 0)])
def test_sliced_allocations_get_the_widest_swizzle_their_slices_keep_whole(shape: tuple, slice_shape: tuple,
                                                                          span: int) -> None:
    """A column slice of a swizzled buffer is a view of one base address only if the
    swizzle does not cross its edge: the allocation takes the widest span (<= Triton's
    choice) under which each slice is whole -- half of a 128-byte row gets 64 bytes."""
    s, p = "x".join(map(str, slice_shape)), "x".join(map(str, shape))
    m = _layouts(f"""
        %c0 = constant {{value = 0}} : i32
        %a = local_alloc : memdesc<{p}xf16, smem, num=2>
        %v = local_view %a, %c0 : memdesc<{p}xf16, smem>
        %s = local_slice %v, %c0, %c0 : memdesc<{s}xf16, smem>
        return
    """)
    assert _ops(m, "local_alloc")[0].result.type.layout == nvmma_shared(shape, 16, span)
    want = buffer_layouts.slice_view(nvmma_shared(shape, 16, span), slice_shape)
    assert _ops(m, "local_slice")[0].result.type.layout == want


def test_loop_carried_buffers_take_the_layout_of_their_init() -> None:
    m = _layouts("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=2>
        %v = local_view %a, %c0 : memdesc<64x64xf16, smem>
        %r = for %c0, %n, %c0, %v : memdesc<64x64xf16, smem> {
        ^(%i: i32, %w: memdesc<64x64xf16, smem>):
          %u = local_view %a, %i : memdesc<64x64xf16, smem>
          yield %u
        }
        return
    """)
    loop = _ops(m, "for")[0]
    want = nvmma_shared((64, 64), 16, 128)
    assert loop.regions[0].block.args[1].type.layout == want and loop.result.type.layout == want


# -- allocation -----------------------------------------------------------------------------------
def _plan(body: str, args: str = T16) -> tuple[Operation, smem_alloc.SmemPlan]:
    m = _layouts(body, args)
    return m, smem_alloc.plan(m.funcs[0])


def _offsets(m: Operation, plan: smem_alloc.SmemPlan) -> list[int]:
    return [plan.offset_of(op) for op in m.walk() if op.NAME in ("local_alloc", "barrier_alloc")]


def test_live_allocations_get_disjoint_aligned_bytes() -> None:
    m, plan = _plan("""
        %c0 = constant {value = 0} : i32
        %b = barrier_alloc {count = 1} : mbarrier<3>
        %x = local_alloc : memdesc<100xi8, smem, num=1>
        %a = local_alloc : memdesc<64x64xf16, smem, num=2>
        %s = local_alloc : memdesc<16x32xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        %vs = local_view %s, %c0 : memdesc<16x32xf16, smem>
        %vx = local_view %x, %c0 : memdesc<100xi8, smem>
        %y = local_load %va : tile<64x64xf16>
        %z = local_load %vs : tile<16x32xf16>
        %w = local_load %vx : tile<100xi8>
        return
    """.replace("100", "128"))
    bar, x, a, s = (plan.allocation(op) for op in m.walk() if op.NAME in ("local_alloc", "barrier_alloc"))
    assert (a.offset, a.size, a.align) == (0, 16384, 1024)     # 128-byte swizzle: 1024-byte atoms
    assert (s.size, s.align) == (1024, 512)                     # 64-byte rows: 64-byte swizzle
    assert s.offset % 512 == 0 and x.offset % 16 == 0 and bar.offset % 8 == 0
    spans = sorted((r.offset, r.offset + r.size) for r in (bar, x, a, s))
    assert all(hi <= lo for (_, hi), (lo, _) in zip(spans, spans[1:])), spans
    assert plan.total == spans[-1][1]
    assert plan.scratch_offset >= plan.total and plan.scratch_offset % 16 == 0


def test_dead_allocations_share_bytes() -> None:
    m, plan = _plan("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        local_store %va, %t
        %x = local_load %va : tile<64x64xf16>
        %b = local_alloc : memdesc<64x64xf32, smem, num=1>
        %vb = local_view %b, %c0 : memdesc<64x64xf32, smem>
        %y = local_load %vb : tile<64x64xf32>
        return
    """)
    assert _offsets(m, plan) == [0, 0]
    assert plan.total == 16384


def test_a_use_in_a_loop_keeps_the_buffer_alive_to_the_loops_end() -> None:
    m, plan = _plan("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        for %c0, %n, %c0 {
        ^(%i: i32):
          %x = local_load %va : tile<64x64xf16>
          %b = local_alloc : memdesc<64x64xf16, smem, num=1>
          %vb = local_view %b, %c0 : memdesc<64x64xf16, smem>
          local_store %vb, %x
          yield
        }
        return
    """)
    a, b = _offsets(m, plan)
    assert abs(a - b) >= 8192


def test_async_copies_keep_their_buffer_until_retired() -> None:
    body = """
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        %k = async_load %p, %va : token
        %g = async_commit_group %k : token
        WAIT%b = local_alloc : memdesc<64x64xf16, smem, num=1>
        %vb = local_view %b, %c0 : memdesc<64x64xf16, smem>
        local_store %vb, %t
        return
    """
    m, plan = _plan(body.replace("WAIT", ""))
    assert _offsets(m, plan) == [0, 8192]  # never waited for: the copy may land any time
    m, plan = _plan(body.replace("WAIT", "%w = async_wait_group {pendings = 0} : token\n        "))
    assert _offsets(m, plan) == [0, 0]


def test_reuse_shares_the_offset() -> None:
    m, plan = _plan("""
        %c0 = constant {value = 0} : i32
        %x = local_alloc : memdesc<256xf32, smem, num=1>
        %a = local_alloc : memdesc<64x64xf16, smem, num=2>
        %r = local_alloc reuse=%a : memdesc<64x64xf32, smem, num=1>
        %vx = local_view %x, %c0 : memdesc<256xf32, smem>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        %vr = local_view %r, %c0 : memdesc<64x64xf32, smem>
        %y = local_load %va : tile<64x64xf16>
        %z = local_load %vr : tile<64x64xf32>
        %w = local_load %vx : tile<256xf32>
        return
    """)
    x, a, r = _offsets(m, plan)
    assert a == r and (x >= a + 16384 or x + 1024 <= a)
    assert "reuses" in plan.table()


def test_reuse_of_a_smaller_buffer_is_refused() -> None:
    m = _layouts("""
        %a = local_alloc : memdesc<64x64xf16, smem, num=1> loc(3:8)
        %r = local_alloc reuse=%a : memdesc<64x64xf32, smem, num=1> loc(4:8)
        return
    """)
    with pytest.raises(CompilationError, match="needs 16384 bytes but the buffer it reuses has 8192") as info:
        smem_alloc.plan(m.funcs[0])
    assert info.value.line == 4


def test_over_the_limit_lists_every_allocation() -> None:
    m, plan = _plan("""
        %a = local_alloc : memdesc<128x128xf16, smem, num=4> loc(3:8)
        %b = barrier_alloc {count = 1} : mbarrier<4> loc(5:8)
        return
    """)
    with pytest.raises(CompilationError) as info:
        plan.check_limit(100 * 1024, 4096, "the target", None)
    msg = info.value.message
    assert info.value.code == "TLXC-RESOURCE-001"
    assert re.search(r"needs \d+ bytes of shared memory; the target allows 102400", msg)
    assert re.search(r":3\s+128x128\s+f16\s+4\s+131072\s+0", msg), msg
    assert re.search(r":5\s+mbarrier\s+b64\s+4\s+32\s+131072", msg), msg
    assert "scratch" in msg


# -- hazard barriers and fences -----------------------------------------------------------------------
def test_store_then_load_gets_a_barrier_between() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        local_store %va, %t
        %x = local_load %va : tile<64x64xf16>
        %y = local_load %va : tile<64x64xf16>
        local_store %va, %x
        return
    """)
    # RAW, then nothing between the two reads, then WAR before the last store
    assert seq == "local_alloc local_store B local_load local_load B local_store"


def test_different_buffers_of_an_array_do_not_conflict() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %c1 = constant {value = 1} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=2>
        %v0 = local_view %a, %c0 : memdesc<64x64xf16, smem>
        %v1 = local_view %a, %c1 : memdesc<64x64xf16, smem>
        %vn = local_view %a, %n : memdesc<64x64xf16, smem>
        local_store %v0, %t
        %x = local_load %v1 : tile<64x64xf16>
        %y = local_load %vn : tile<64x64xf16>
        return
    """)
    assert seq == "local_alloc local_store local_load B local_load"  # a runtime index may be any buffer


def test_existing_synchronization_is_used() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %b = barrier_alloc {count = 1} : mbarrier<1>
        %b0 = barrier_view %b, %c0 : mbarrier<0>
        %w = barrier_alloc {count = 128} : mbarrier<1, warp>
        %w0 = barrier_view %w, %c0 : mbarrier<0, warp>
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        local_store %va, %t
        barrier_arrive %b0
        %x = local_load %va : tile<64x64xf16>
        local_store %va, %x
        barrier_arrive %w0
        %y = local_load %va : tile<64x64xf16>
        local_store %va, %y
        named_barrier_wait {bar_id = 0, threads = 128}
        %z = local_load %va : tile<64x64xf16>
        return
    """)
    assert seq == ("barrier_alloc barrier_view barrier_alloc barrier_view local_alloc local_store barrier_arrive "
                   "local_load B local_store barrier_arrive B local_load B local_store B local_load")


def test_loops_see_the_previous_iteration() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        for %c0, %n, %c0 {
        ^(%i: i32):
          local_store %va, %t
          %x = local_load %va : tile<64x64xf16>
          yield
        }
        %y = local_load %va : tile<64x64xf16>
        return
    """)
    # the store waits for the last iteration's reads; the read after the loop is fine
    # (a zero-trip loop leaves nothing written)
    assert seq == "local_alloc for B local_store B local_load local_load"


def test_cp_async_waits_and_wgmma_fences() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=2>
        %s = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %n : memdesc<64x64xf16, smem>
        %vs = local_view %s, %c0 : memdesc<64x64xf16, smem>
        %k = async_load %p, %va : token
        %g = async_commit_group %k : token
        %w = async_wait_group %g {pendings = 0} : token
        %d = async_dot %vs, %va, acc=%acc : tile<64x64xf32>
        local_store %vs, %t
        %e = async_dot %vs, %va, acc=%d : tile<64x64xf32>
        return
    """)
    # after the wait's bar.sync the cp.async data is ready for the async proxy with no
    # fence (a proxy fence would be a MEMBAR.ALL.CTA that also waits for the copies still
    # in flight); the register store read by the async proxy needs fence and barrier (and
    # waits for the previous dot's reads)
    assert seq == ("local_alloc local_alloc async_load async_commit_group async_wait_group async_dot B "
                   "local_store F B async_dot")


def test_tma_store_of_a_register_tile_is_fenced() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        local_store %va, %t
        tma_store %d, %va, %n, %n
        tma_store_wait {pendings = 0}
        return
    """, T16 + ", %d: tensordesc<64x64xf16>")
    assert seq == "local_alloc local_store F B tma_store tma_store_wait"


def test_branches_and_while_loops_merge_their_accesses() -> None:
    _, seq = _membar("""
        %c0 = constant {value = 0} : i32
        %c = cmp %n, %c0 {predicate = "lt"} : i1
        %a = local_alloc : memdesc<64x64xf16, smem, num=1>
        %va = local_view %a, %c0 : memdesc<64x64xf16, smem>
        if %c {
        ^():
          local_store %va, %t
          yield
        } {
        ^():
          yield
        }
        %x = local_load %va : tile<64x64xf16>
        %r = while %c0 : i32 {
        ^(%i: i32):
          %y = local_load %va : tile<64x64xf16>
          %d = cmp %i, %n {predicate = "lt"} : i1
          condition %d, %i
        } {
        ^(%k: i32):
          local_store %va, %t
          yield %k
        }
        return
    """)
    # the store on one branch reaches the load after the if; in the while loop the store
    # follows this iteration's read, and the next iteration's read follows the store
    assert seq == "cmp local_alloc if local_store B local_load while B local_load cmp condition B local_store"
