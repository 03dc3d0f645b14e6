"""``flatten-loops`` (tlxc/ir/passes/flatten_loops.py): ``tl.range(..., flatten=True)``
fuses a persistent kernel's tile loop with its K loop, so that the pipeline runs on from
one tile to the next.

The numbers come from the interpreter, which runs the fused loop (the pass is in the tile
pipeline): every tile count, K of zero, one and several blocks, ragged edges, a value the
outer loop carries, pointer increments the inner loop carries, a prologue that reads
memory. Then the shape of the IR, what is left as written, and the sm_90a PTX: cp.async
rings, a wgmma in flight across iterations (``wait_group 1``) and the accumulator reset
through wgmma's scale-d operand.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.interpreter_only


@tlxc.jit
def _tile_of(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    return first_pid_m + (tile_id % group_size_m), (tile_id % num_pid_in_group) // group_size_m


@tlxc.jit
def persistent_mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr,
                  FLATTEN: tl.constexpr):
    """Tutorial 09's persistent matmul: the epilogue recomputes its tile from a counter the
    outer loop carries."""
    start = tl.program_id(0)
    num_pid_m, num_pid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    per_group = 4 * num_pid_n
    tile_c = start - NUM_SMS
    for tile_id in tl.range(start, num_pid_m * num_pid_n, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = _tile_of(tile_id, per_group, num_pid_m, 4)
        offs_am = tl.where(pid_m * BM + tl.arange(0, BM) < M, pid_m * BM + tl.arange(0, BM), 0)
        offs_bn = tl.where(pid_n * BN + tl.arange(0, BN) < N, pid_n * BN + tl.arange(0, BN), 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BM), BM)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BN), BN)
        acc = tl.zeros((BM, BN), tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            offs_k = ki * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :], mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tile_c += NUM_SMS
        pid_m, pid_n = _tile_of(tile_c, per_group, num_pid_m, 4)
        rm, rn = pid_m * BM + tl.arange(0, BM), pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.float16),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@tlxc.jit
def rows_sum(x_ptr, scale_ptr, out_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr, STEP: tl.constexpr):
    """Pointer increments carried by the inner loop, a prologue that loads (its scale),
    and a sum the outer loop carries past its end."""
    total = 0.0
    for rb in tl.range(tl.program_id(0) * BR, R, STEP * BR, flatten=True):
        s = tl.load(scale_ptr + rb // BR)
        rows = rb + tl.arange(0, BR)
        ptrs = x_ptr + rows[:, None] * C + tl.arange(0, BC)[None, :]
        acc = tl.zeros((BR, BC), tl.float32)
        for c0 in range(0, C, BC):
            cols = c0 + tl.arange(0, BC)
            acc += tl.load(ptrs, mask=(rows[:, None] < R) & (cols[None, :] < C), other=0.0)
            ptrs += BC
        row_sums = tl.sum(acc, axis=1) * s
        tl.store(out_ptr + rows, row_sums, mask=rows < R)
        total += tl.sum(row_sums)
    tl.atomic_add(out_ptr + R, total)


def _mm(m: int, n: int, k: int, sms: int, flatten: bool, block=(32, 32, 16)) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(m * 1009 + n * 31 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), 7, np.float16)
    bm, bn, bk = block
    persistent_mm.interpret[(sms,)](a, b, c, m, n, k, k, n, n, BM=bm, BN=bn, BK=bk, NUM_SMS=sms, FLATTEN=flatten)
    return c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)


@pytest.mark.parametrize("mnk_sms", [(64, 96, 48, 2), (70, 50, 17, 3), (32, 32, 16, 1), (96, 64, 0, 2),
                                     (40, 40, 40, 9), (128, 64, 80, 4)])
def test_the_fused_loop_computes_the_nest(mnk_sms: tuple[int, int, int, int]) -> None:
    """Tile counts below, at and above the program count, K of 0, 1 and several blocks,
    ragged edges: the same bits as the nest as written."""
    m, n, k, sms = mnk_sms
    fused, want = _mm(m, n, k, sms, True)
    nest, _ = _mm(m, n, k, sms, False)
    np.testing.assert_array_equal(fused, nest)
    np.testing.assert_allclose(fused.astype(np.float32), want.astype(np.float32), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("r_c", [(40, 24), (8, 8), (33, 0), (0, 16), (64, 100)])
def test_carried_pointers_a_loading_prologue_and_an_outer_sum(r_c: tuple[int, int]) -> None:
    r, c = r_c
    rng = np.random.default_rng(r * 7 + c)
    x = rng.standard_normal((max(r, 1), max(c, 1))).astype(np.float32)
    scale = rng.standard_normal(max(r // 8 + 1, 1)).astype(np.float32)
    out = np.zeros(r + 1, np.float32)
    rows_sum.interpret[(2,)](x, scale, out, r, c, BR=8, BC=8, STEP=2)
    want = x[:r, :c].sum(axis=1) * np.repeat(scale, 8)[:r] if r else np.zeros(0, np.float32)
    np.testing.assert_allclose(out[:r], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[r], want.sum(), rtol=1e-4, atol=1e-4)


def _ir(fn, sig: str, **constants) -> str:
    return fn.compile(sig, constants=constants, arch="sm_90a").asm["ir"]


MM_SIG = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16"


def test_one_loop_of_tiles_times_k_blocks_guarded_by_both_counts() -> None:
    text = _ir(persistent_mm, MM_SIG, BM=64, BN=64, BK=32, NUM_SMS=4, FLATTEN=True)
    assert "flatten =" not in text
    # the fused loop, and the nest without its inner loop for K = 0 (or no tile)
    loops = re.findall(r"= for [^\n]*", text)
    assert len(loops) == 2
    fused = text[text.index(loops[0]):text.index(loops[1])]
    assert fused.count(" dot ") == 1 and " for " not in fused.split("\n", 1)[1]
    # the reset of the accumulator at a tile's first iteration, the epilogue under its last
    assert re.search(r"select %\w+, %\w+, %\w+ : tile<64x64xf32>", fused)
    assert fused.count("store ") == 1


def test_a_nest_of_another_shape_is_left_as_written() -> None:
    @tlxc.jit
    def two_inner(x_ptr, out_ptr, N, B: tl.constexpr):
        for i in tl.range(0, N, flatten=True):
            s = 0.0
            for j in range(0, N):
                s += tl.load(x_ptr + i * N + j)
            for j in range(0, N):
                s += tl.load(x_ptr + j * N + i)
            tl.store(out_ptr + i, s)

    text = _ir(two_inner, "*fp32:16,*fp32:16,i32", B=4)
    assert "flatten =" not in text and len(re.findall(r"\bfor\b", text)) == 3
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    out = np.zeros(3, np.float32)
    two_inner.interpret[(1,)](x, out, 3, B=4)
    np.testing.assert_array_equal(out, x.sum(axis=1) + x.sum(axis=0))


def test_sm90a_ptx_keeps_the_wgmma_in_flight_across_tiles() -> None:
    ck = persistent_mm.compile(MM_SIG, constants=dict(BM=128, BN=128, BK=64, NUM_SMS=132, FLATTEN=True),
                               arch="sm_90a", num_warps=4, num_stages=3)
    ptx = ck.asm["ptx"]
    body = ptx[ptx.index("$_for_head"):ptx.index("bra.uni $_for_head")]
    assert "ld.global" not in body and body.count("cp.async.cg.shared.global") == 16
    # one wgmma in flight into the next iteration; the epilogue (under the last
    # iteration's branch) waits for all of them
    epilogue = re.search(r"@!%p\d+ bra.uni \$_else\d+;\n(\s*\.loc.*\n)?\s*wgmma.wait_group.sync.aligned 0;", body)
    assert epilogue
    # the copies of the iteration ahead are issued before the epilogue's branch, not behind it
    wait1 = body.index("wgmma.wait_group.sync.aligned 1;")
    copies = [m.start() for m in re.finditer("cp.async.cg.shared.global", body)]
    assert wait1 < copies[0] and copies[-1] < body.index("cp.async.commit_group") < epilogue.start()
    # scale-d of the first K-step is a register: false at a tile's first iteration
    reset = re.search(r"xor.pred (%p\d+), ", body)
    first = re.findall(r"wgmma.mma_async[^;]*, (%p\d+), 1, 1, 0, 1;", body)
    assert reset and first and first[0] == reset.group(1)


ANY_SIG = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32,i32"


@pytest.mark.parametrize("mnk_sms", [(70, 50, 17, 3), (64, 96, 48, 2), (40, 40, 40, 9), (96, 64, 0, 2)])
def test_the_lowered_sm90a_loop_carries_the_masked_offsets_and_computes_the_nest(
        mnk_sms: tuple[int, int, int, int]) -> None:
    """``offs_am`` / ``offs_bn`` (masked with ``tl.where``, each read by one operand's
    pointers) are computed once per tile and carried, in the layout of their use: the
    layout pass rebuilds them in the tile's ``if`` and the loop's init (``carry_in``), so
    the fused loop converts no index tile through shared memory. The lowered
    IR (rings, wgmma, layouts, barriers) runs in the interpreter and gives the nest's bits."""
    from tlxc.interpreter.run import run_kernel
    from tlxc.ir import print_ir

    m, n, k, sms = mnk_sms
    ck = persistent_mm.compile(ANY_SIG, constants=dict(BM=32, BN=32, BK=16, NUM_SMS=sms, FLATTEN=True),
                               arch="sm_90a", num_warps=4, num_stages=3)
    lowered = ck.lowered()
    text = print_ir(lowered)
    fused = text[text.index("= for "):]
    body = fused[:fused.index("\n      } loc")]
    # the only conversion is the epilogue's, of the result it stores
    assert re.findall(r"convert_layout %\d+ : tile<([0-9x]+x\w+),", body) == ["32x32xf16"]
    carried = re.search(r"= for [^\n]*: (.*) \{", body)
    assert carried and len(re.findall(r"tile<32xi32, ll\(", carried.group(1))) == 2
    rng = np.random.default_rng(m * 1009 + n * 31 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), 7, np.float16)
    run_kernel(lowered.funcs[0], (sms, 1, 1), [a, b, c, m, n, k, k, n, n])
    nest, _ = _mm(m, n, k, sms, False)
    np.testing.assert_array_equal(c, nest)


def test_128x256x64_with_four_stages_fits_in_shared_memory() -> None:
    """Four stages of A and B rings take 196608 bytes; the epilogue's 64 KiB conversion of
    the accumulator runs in two rounds in what is left (``convert_plan.split_rounds``), as
    Triton's tutorial 09 config that needs it (it did not compile: 262144 bytes)."""
    ck = persistent_mm.compile(MM_SIG, constants=dict(BM=128, BN=256, BK=64, NUM_SMS=132, FLATTEN=True),
                               arch="sm_90a", num_warps=8, num_stages=4)
    ptx = ck.asm["ptx"]
    assert ck.metadata["shared"] <= 232448
    epilogue = ptx[ptx.index("wgmma.wait_group.sync.aligned 0;"):]
    assert epilogue.count("bar.sync") >= 4  # a barrier pair per round


@pytest.mark.parametrize("arch", ["gfx950", "gfx1250", "sm_100a"])
def test_the_fused_loop_compiles_for_the_other_targets(arch: str) -> None:
    ck = persistent_mm.compile(MM_SIG, constants=dict(BM=128, BN=128, BK=64, NUM_SMS=132, FLATTEN=True),
                               arch=arch, num_warps=4, num_stages=2)
    if arch.startswith("gfx"):
        assert "v_mfma" in ck.asm["amdgcn"] or "v_wmma" in ck.asm["amdgcn"]
        assert ck.metadata["scratch"] == 0
    else:
        assert "wgmma" not in ck.asm["ptx"] and "mma.sync" in ck.asm["ptx"]


@tlxc.jit
def strided_rows(x_ptr, out_ptr, R, C, DOWN: tl.constexpr, BC: tl.constexpr):
    """Rows walked with a step known only at run time (the grid size), upwards or
    downwards; each row's sum over column blocks."""
    np_ = tl.num_programs(0)
    if DOWN:
        lo, hi, step = R - 1 - tl.program_id(0), -1, -np_
    else:
        lo, hi, step = tl.program_id(0), R, np_
    for r in tl.range(lo, hi, step, flatten=True):
        acc = tl.zeros((BC,), tl.float32)
        for c0 in range(0, C, BC):
            cols = c0 + tl.arange(0, BC)
            acc += tl.load(x_ptr + r * C + cols, mask=cols < C, other=0.0)
        tl.store(out_ptr + r, tl.sum(acc))


@pytest.mark.parametrize("down", [False, True])
@pytest.mark.parametrize("r_c_grid", [(10, 20, 3), (5, 8, 7), (1, 30, 1), (0, 8, 2)])
def test_a_run_time_step_of_either_sign(down: bool, r_c_grid: tuple[int, int, int]) -> None:
    r, c, grid = r_c_grid
    x = np.random.default_rng(r + c).standard_normal((max(r, 1), c)).astype(np.float32)
    out = np.full(max(r, 1), -1.0, np.float32)
    strided_rows.interpret[(grid,)](x, out, r, c, DOWN=down, BC=8)
    np.testing.assert_allclose(out[:r], x[:r].sum(axis=1), rtol=1e-5, atol=1e-5)
    # fused: the one loop that carries values is the fused one (the nest as written carries none)
    ir = _ir(strided_rows, "*fp32,*fp32,i32,i32", DOWN=down, BC=8)
    assert ir.count(" = for ") == 1 and "flatten =" not in ir
