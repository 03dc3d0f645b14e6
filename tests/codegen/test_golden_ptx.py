"""What the PTX must contain, FileCheck-style, per target.

Each test compiles one kernel for sm_90a and for sm_100a and matches the PTX against the
check lines in its own body: ``# CHECK:`` lines for both targets, ``# SM90A:`` /
``# SM100A:`` lines for one (``codegen_helpers.filecheck``; FileCheck's syntax: ``-NEXT``,
``-NOT``, ``-COUNT-n``, ``-LABEL``, ``{{regex}}``, ``[[VAR]]`` from ``-D``). The whole PTX
of the examples is kept under tests/golden/; these checks say which parts matter and why.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from codegen_helpers import NVIDIA_ARCHS, compile_example, example_kernel, filecheck

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.parametrize("arch", NVIDIA_ARCHS)


@functools.lru_cache(maxsize=None)
def _ptx(kernel: Any, signature: str, constants: tuple[tuple[str, Any], ...], arch: str, num_warps: int = 4) -> str:
    return kernel.compile(signature, dict(constants), arch=arch, num_warps=num_warps).asm["ptx"]


def _line(path: str, text: str) -> tuple[int, int]:
    """(line, 1-based column) of the first occurrence of ``text`` in file ``path``."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n, line.index(text) + 1
    raise AssertionError(f"{text!r} not in {path}")


# -- memory: vectorized global access ------------------------------------------------------------


def test_vector_add_loads_16_bytes_when_n_is_divisible_by_16(arch: str) -> None:
    """BLOCK=1024 over 128 threads: 8 fp32 per thread and input, in two 16-byte loads.
    Aligned pointers alone are not enough: ``n``'s divisibility makes the mask constant
    over each group of 4."""
    ptx = _ptx(example_kernel("vector_add-0"), "*fp32:16,*fp32:16,*fp32:16,i32:16", (("BLOCK", 1024),), arch)
    filecheck(ptx, test_vector_add_loads_16_bytes_when_n_is_divisible_by_16, arch)
    # SM90A:       .version 8.4
    # SM90A-NEXT:  .target sm_90a
    # SM100A:      .version 8.6
    # SM100A-NEXT: .target sm_100a
    # CHECK-NEXT:  .address_size 64
    # CHECK-LABEL: .visible .entry add_kernel(
    # CHECK-NEXT:  .param .u64 add_kernel_param_0,
    # CHECK:       .param .s32 add_kernel_param_3
    # CHECK:       .reqntid 128, 1, 1
    # CHECK-COUNT-4: ld.global.v4.b32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, [%rd{{[0-9]+}}];
    # CHECK-NOT:   ld.global
    # CHECK-COUNT-8: add.f32
    # CHECK-NOT:   st.global.b32
    # CHECK-COUNT-2: st.global.v4.b32 [%rd{{[0-9]+}}], {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}};
    # CHECK-NOT:   st.global
    # CHECK:       ret;


def test_vector_add_loads_one_element_when_n_is_unknown(arch: str) -> None:
    """The same kernel without ``:16`` on ``n``: a masked tail may end inside a group of 4,
    so every element has its own predicate and its own 4-byte access."""
    ptx = _ptx(example_kernel("vector_add-0"), "*fp32:16,*fp32:16,*fp32:16,i32", (("BLOCK", 1024),), arch)
    filecheck(ptx, test_vector_add_loads_one_element_when_n_is_unknown, arch)
    # SM90A:       .target sm_90a
    # SM100A:      .target sm_100a
    # CHECK-LABEL: .visible .entry add_kernel(
    # CHECK-COUNT-16: @%p{{[0-9]+}} ld.global.b32 %f{{[0-9]+}}, [%rd{{[0-9]+}}];
    # CHECK-NOT:   ld.global
    # CHECK-COUNT-8: add.f32
    # CHECK-NOT:   .v4.
    # CHECK-COUNT-8: @%p{{[0-9]+}} st.global.b32 [%rd{{[0-9]+}}], %f{{[0-9]+}};
    # CHECK-NOT:   st.global
    # CHECK:       ret;


@tlxc.jit
def hinted_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, eviction_policy="evict_last")
    b = tl.load(x_ptr + BLOCK + cols, cache_modifier=".cg", eviction_policy="evict_first")
    c = tl.load(x_ptr + 2 * BLOCK + cols, volatile=True, eviction_policy="evict_first")
    d = tl.load(x_ptr + 3 * BLOCK + cols, eviction_policy="evict_normal")
    tl.store(y_ptr + cols, a + b + c + d, eviction_policy="evict_first")


def test_eviction_policies_are_l1_priorities_and_l2_cache_hints(arch: str) -> None:
    """``evict_first`` / ``evict_last`` become the L1 priority of the access and an L2
    policy (``createpolicy``) passed as its cache hint, as Triton lowers them; with a cache
    modifier only the L2 hint; a volatile load and ``evict_normal`` take none."""
    ptx = _ptx(hinted_copy, "*fp32:16,*fp32:16", (("BLOCK", 512),), arch)
    filecheck(ptx, test_eviction_policies_are_l1_priorities_and_l2_cache_hints, arch)
    # CHECK-LABEL: .visible .entry hinted_copy(
    # CHECK:       createpolicy.fractional.L2::evict_last.b64 [[LAST:%rd[0-9]+]], 1.0;
    # CHECK:       ld.global.L1::evict_last.L2::cache_hint.v4.b32 {{{.*}}}, [%rd{{[0-9]+}}], [[LAST]];
    # CHECK:       createpolicy.fractional.L2::evict_first.b64 [[FIRST:%rd[0-9]+]], 1.0;
    # CHECK:       ld.global.cg.L2::cache_hint.v4.b32 {{{.*}}}, [%rd{{[0-9]+}}], [[FIRST]];
    # CHECK-NOT:   createpolicy
    # CHECK:       ld.global.volatile.v4.b32 {{{.*}}}, [%rd{{[0-9]+}}];
    # CHECK-NOT:   createpolicy
    # CHECK:       ld.global.v4.b32 {{{.*}}}, [%rd{{[0-9]+}}];
    # CHECK:       createpolicy.fractional.L2::evict_first.b64 [[STORE:%rd[0-9]+]], 1.0;
    # CHECK:       st.global.L1::evict_first.L2::cache_hint.v4.b32 [%rd{{[0-9]+}}], {{{.*}}}, [[STORE]];


@tlxc.jit
def stage_of(y_ptr, n, u, STAGES: tl.constexpr):
    for i in range(n):
        tl.store(y_ptr + 4 * i, i % STAGES)
        tl.store(y_ptr + 4 * i + 1, i // STAGES)
        tl.store(y_ptr + 4 * i + 2, (i // -7) % 1000)
        tl.store(y_ptr + 4 * i + 3, (u // STAGES).to(tl.int32))


def test_division_by_a_constant_is_a_multiply_high(arch: str) -> None:
    """``count % NUM_STAGES`` and ``// NUM_STAGES`` divide by a constant: a multiply-high
    and shifts (``codegen/nvptx/const_division.py``), as LLVM makes them for nvcc and
    Triton. ptxas itself compiles every ``div``/``rem``, even by an immediate, into its
    generic reciprocal sequence. A dividend known non-negative (the loop counter)
    divides as unsigned; a negative divisor negates."""
    ptx = _ptx(stage_of, "*i32:16,i32,u32", (("STAGES", 3),), arch)
    filecheck(ptx, test_division_by_a_constant_is_a_multiply_high, arch)
    # CHECK-LABEL: .visible .entry stage_of(
    # CHECK-NOT:   {{(div|rem)}}.{{[su]}}32
    # CHECK:       mul.hi.u32 [[T:%r[0-9]+]], [[I:%r[0-9]+]], 0xaaaaaaab;
    # CHECK-NEXT:  shr.u32 [[Q:%r[0-9]+]], [[T]], 1;
    # CHECK-NEXT:  mul.lo.s32 [[QD:%r[0-9]+]], [[Q]], 3;
    # CHECK-NEXT:  sub.s32 {{%r[0-9]+}}, [[I]], [[QD]];
    # CHECK:       mul.hi.s32 {{%r[0-9]+}}, [[I]], -1840700269;
    # CHECK:       neg.s32
    # CHECK-NOT:   {{(div|rem)}}.{{[su]}}32
    # CHECK:       mul.hi.u32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0xaaaaaaab;
    # CHECK-NOT:   {{(div|rem)}}.{{[su]}}32


@tlxc.jit
def wrapped_rows(x_ptr, y_ptr, N, SHIFT, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    first = (pid - SHIFT) * BLOCK  # of unknown sign, as in the grouped GEMM ordering
    cols = (first + tl.arange(0, BLOCK)) % N
    tl.store(y_ptr + pid * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + cols))


def test_rem_of_a_dividend_of_unknown_sign_vectorizes_behind_a_trap(arch: str) -> None:
    """``(first + arange) % N`` is a run only if ``first >= 0``, which no rule proves here.
    As in Triton the load is vectorized anyway, but each thread tests its dividends and
    traps on a negative one (axis-info assumption (4)) -- at the kernel's exit, so that the
    branch does not make ptxas treat the kernel as divergent: a wrong guess fails the launch
    (after the kernel's stores) instead of passing silently."""
    ptx = _ptx(wrapped_rows, "*fp16:16,*fp16:16,i32:16,i32", (("BLOCK", 1024),), arch)
    filecheck(ptx, test_rem_of_a_dividend_of_unknown_sign_vectorizes_behind_a_trap, arch)
    # CHECK-LABEL: .visible .entry wrapped_rows(
    # CHECK:       .loc {{.*}}
    # CHECK-COUNT-8: add.s32
    # CHECK-COUNT-6: or.b32
    # CHECK-NEXT:  or.b32 [[ALL:%r[0-9]+]], {{%r[0-9]+}}, {{%r[0-9]+}};
    # CHECK-NEXT:  setp.lt.s32 [[NEG:%p[0-9]+]], [[ALL]], 0;
    # CHECK-NEXT:  or.pred [[FAILED:%p[0-9]+]], [[FAILED]], [[NEG]];
    # CHECK-NEXT:  rem.s32
    # CHECK-NOT:   trap
    # CHECK:       ld.global.v4.b32
    # CHECK-NOT:   ld.global.b16
    # CHECK:       st.global.v4.b32
    # CHECK-NEXT:  @[[FAILED]] trap;
    # CHECK-NEXT:  ret;


def test_vector_add_line_info(arch: str) -> None:
    """``.loc`` lines point each access at its source line and column in
    examples/vector_add.py (what cuda-gdb, compute-sanitizer and Nsight show)."""
    k = example_kernel("vector_add-0")
    path = k.fn.__code__.co_filename
    x_line, x_col = _line(path, "tl.load(x_ptr + offsets")
    y_line, y_col = _line(path, "tl.load(y_ptr + offsets")
    add_line, add_col = _line(path, "x + y, mask=mask)")
    st_line, st_col = _line(path, "tl.store(out_ptr + offsets")
    filecheck(compile_example("vector_add-0", arch).asm["ptx"], test_vector_add_line_info, arch,
              X_LINE=x_line, X_COL=x_col, Y_LINE=y_line, Y_COL=y_col, ADD_LINE=add_line, ADD_COL=add_col,
              ST_LINE=st_line, ST_COL=st_col)
    # CHECK:      .file 1 "{{.*}}/examples/vector_add.py"
    # CHECK-NOT:  .file 2
    # (a masked load's registers start at 0 first: see tests/codegen/test_register_budget.py)
    # CHECK:      .loc 1 [[X_LINE]] [[X_COL]]
    # CHECK-NOT:  .loc
    # CHECK:      ld.global.b32
    # CHECK:      .loc 1 [[Y_LINE]] [[Y_COL]]
    # CHECK-NOT:  .loc
    # CHECK:      ld.global.b32
    # CHECK:      .loc 1 [[ADD_LINE]] [[ADD_COL]]
    # CHECK-NEXT: add.f32
    # CHECK:      .loc 1 [[ST_LINE]] [[ST_COL]]
    # CHECK-NEXT: st.global.b32


# -- dot -------------------------------------------------------------------------------------------


def test_fp16_matmul_uses_wgmma_or_mma_m16n8k16(arch: str) -> None:
    """64x64x32 fp16 tiles with an fp32 accumulator, 4 warps, num_stages 3. sm_90a: the
    loop is software-pipelined (tlxc/ir/passes/software_pipeline.py): each iteration waits
    for its own copy group (``cp.async.wait_group 1``: one more group in flight) and runs
    wgmma m64n64k16 twice per K step straight from the ring slot
    (tlxc/ir/passes/dot_to_wgmma.py), leaves it in flight (``wgmma.wait_group 1``), then
    -- after a barrier, as other warps' wgmma of the previous iteration read the slot it
    refills -- issues the copies for two iterations ahead (this variant proves no 16-byte
    alignment, so they are ``ld.global`` + ``st.shared``, fenced for the async proxy where
    they are made: a real cp.async needs no fence) and commits them; the loop's last
    wgmma is waited for after the loop. sm_100a (tcgen05 is not used yet): 64*64*32 /
    (16*8*16) = 64 mma.sync per K step, 16 per warp."""
    filecheck(compile_example("matmul-0", arch).asm["ptx"], test_fp16_matmul_uses_wgmma_or_mma_m16n8k16, arch)
    # CHECK-LABEL: .visible .entry matmul_kernel(
    # SM90A:       _for_head{{[0-9]+}}:
    # SM90A:       cp.async.wait_group 1;
    # SM90A-NEXT:  bar.sync 0;
    # SM90A-NOT:   fence.proxy.async
    # SM90A:       wgmma.fence.sync.aligned;
    # SM90A-NEXT:  wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f
    # SM90A-COUNT-1: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f
    # SM90A-NEXT:  wgmma.commit_group.sync.aligned;
    # SM90A-NEXT:  wgmma.wait_group.sync.aligned 1;
    # SM90A:       bar.sync 0;
    # SM90A:       st.shared
    # SM90A:       fence.proxy.async.shared::cta;
    # SM90A:       cp.async.commit_group;
    # SM90A:       _for_exit{{[0-9]+}}:
    # SM90A:       wgmma.wait_group.sync.aligned 0;
    # SM90A-NEXT:  .loc
    # SM90A-NEXT:  cp.async.wait_group 0;
    # SM90A-NOT:   wgmma
    # SM90A-NOT:   mma.sync
    # SM100A:      mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    # SM100A-SAME: {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}},
    # SM100A-SAME: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}},
    # SM100A-SAME: {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}};
    # SM100A-COUNT-15: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f
    # SM100A-NOT:  mma.sync
    # CHECK:       ret;


# -- reductions ------------------------------------------------------------------------------------


def test_softmax_reduces_with_butterfly_shuffles(arch: str) -> None:
    """The row max and the row sum each reduce in the warp with five butterfly shuffles
    (lane masks 1..16, all lanes taking part), then across the 4 warps in shared memory.
    The max is ``max.NaN``: a NaN anywhere in the row makes it NaN, as in the interpreter."""
    filecheck(compile_example("fused_softmax-0", arch).asm["ptx"], test_softmax_reduces_with_butterfly_shuffles,
              arch)
    # CHECK-LABEL: .visible .entry softmax_kernel(
    # CHECK:       max.NaN.f32 [[M0:%f[0-9]+]]
    # CHECK-NEXT:  shfl.sync.bfly.b32 [[S0:%f[0-9]+]], [[M0]], 1, 31, -1;
    # CHECK-NEXT:  max.NaN.f32 {{%f[0-9]+}}, [[M0]], [[S0]];
    # CHECK-NEXT:  shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
    # CHECK-NEXT:  max.NaN.f32
    # CHECK-NEXT:  shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
    # CHECK-NEXT:  max.NaN.f32
    # CHECK-NEXT:  shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
    # CHECK-NEXT:  max.NaN.f32
    # CHECK-NEXT:  shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
    # CHECK-NEXT:  max.NaN.f32
    # CHECK:       bar.sync 0;
    # CHECK:       st.shared.f32
    # CHECK-NEXT:  bar.sync 0;
    # CHECK:       ex2.approx.f32
    # CHECK:       shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
    # CHECK-COUNT-4: shfl.sync.bfly.b32
    # CHECK-NOT:   shfl.sync
    # CHECK:       div.full.f32


@tlxc.jit
def block_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.sum(x, axis=0))


def test_cross_warp_reduction_synchronizes(arch: str) -> None:
    """1024 elements over 4 warps: each warp reduces its part with shuffles, then the 4
    partial sums meet in shared memory, between barriers."""
    ptx = _ptx(block_sum_kernel, "*fp32,*fp32", (("BLOCK", 1024),), arch, num_warps=4)
    filecheck(ptx, test_cross_warp_reduction_synchronizes, arch)
    # CHECK:       .extern .shared .align 16 .b8 global_smem[];
    # CHECK-LABEL: .visible .entry block_sum_kernel(
    # CHECK:       .reqntid 128, 1, 1
    # CHECK-COUNT-5: shfl.sync.bfly.b32
    # CHECK:       bar.sync 0;
    # CHECK:       st.shared.f32
    # CHECK-NEXT:  bar.sync 0;
    # CHECK:       ld.shared.f32
    # CHECK:       st.global


def test_single_warp_reduction_needs_no_barrier(arch: str) -> None:
    """The same reduction with num_warps=1: all of it happens in one warp, so shuffles
    suffice: no barrier, no shared memory."""
    ptx = _ptx(block_sum_kernel, "*fp32,*fp32", (("BLOCK", 1024),), arch, num_warps=1)
    filecheck(ptx, test_single_warp_reduction_needs_no_barrier, arch)
    # CHECK-NOT:   .shared
    # CHECK-LABEL: .visible .entry block_sum_kernel(
    # CHECK:       .reqntid 32, 1, 1
    # CHECK-NOT:   bar.sync
    # CHECK-COUNT-5: shfl.sync.bfly.b32
    # CHECK-NOT:   bar.sync
    # CHECK-NOT:   .shared
    # CHECK:       st.global


# -- floating-point division and exp2 ----------------------------------------------------------


@tlxc.jit
def div_exp2_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x / y)
    tl.store(out_ptr + BLOCK + offs, tl.math.div_rn(x, y))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.exp2(x))


def test_division_rounding_and_exp2(arch: str) -> None:
    """``/`` on fp32 is Triton's default division, ``div.full.f32`` (2 ulp, fast);
    ``tl.math.div_rn`` asks for IEEE round-to-nearest, ``div.rn.f32``; ``tl.exp2`` is the
    hardware's ``ex2.approx.ftz.f32`` as Triton's (one MUFU.EX2; without ``.ftz`` ptxas
    wraps it in a range fix-up of four more instructions, a quarter of an attention
    loop's softmax)."""
    ptx = _ptx(div_exp2_kernel, "*fp32:16,*fp32:16,*fp32:16", (("BLOCK", 128),), arch)
    filecheck(ptx, test_division_rounding_and_exp2, arch)
    # CHECK-LABEL: .visible .entry div_exp2_kernel(
    # CHECK-NOT:   div.rn
    # CHECK:       div.full.f32 [[Q:%f[0-9]+]], [[X:%f[0-9]+]], [[Y:%f[0-9]+]];
    # CHECK-NOT:   div.rn
    # CHECK:       st.global.{{.*}}[[Q]]{{[^0-9]}}
    # CHECK-NOT:   div.full
    # CHECK:       div.rn.f32 [[R:%f[0-9]+]], [[X]], [[Y]];
    # CHECK-NOT:   div.full
    # CHECK:       st.global.{{.*}}[[R]]{{[^0-9]}}
    # CHECK-NOT:   div.
    # CHECK:       ex2.approx.ftz.f32 [[E:%f[0-9]+]], [[X]];
    # CHECK-NOT:   div.
    # CHECK:       st.global.{{.*}}[[E]]{{[^0-9]}}
