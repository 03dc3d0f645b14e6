"""Axis info of whole kernels compiled from Python: the examples and kernels written the
way users write them, with the vector widths the code generators would get."""

from __future__ import annotations

from typing import Any

import pytest
from example_modules import load_example  # tests/example_modules.py

from tlxc.ir.analysis import AxisInfoMap, analyze
from tlxc.ir.core import Operation


def compiled(kernel: Any, signature: str, constants: dict[str, Any]) -> tuple[Operation, AxisInfoMap]:
    func = kernel.compile(signature, constants).func
    return func, analyze(func)


def ops(func: Operation, name: str) -> list[Operation]:
    return [op for op in func.walk() if op.NAME == name]


def cdk(m: AxisInfoMap, value: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    i = m.info(value)
    return i.contiguity, i.divisibility, i.constancy


def access_width(m: AxisInfoMap, op: Operation, dim: int = 0) -> int:
    """Elements per vector access of a load or store along ``dim``, with its mask."""
    ptr = op.operands[0]
    return m.vector_elements(ptr, dim, ptr.type.scalar.pointee.itemsize, 16, op.operand("mask"))


# -- vector add ---------------------------------------------------------------------------
@pytest.mark.parametrize("signature,block,width,mask_constancy,alignment", [
    ("*fp32:16,*fp32:16,*fp32:16,i32:16", 1024, 4, 16, 16),  # 16-byte vectors of 4 floats
    ("*fp32:16,*fp32:16,*fp32:16,i32", 1024, 1, 1, 16),      # n unknown: lanes masked one by one
    ("*fp32,*fp32,*fp32,i32:16", 1024, 1, 16, 4),            # pointers only 4-byte aligned
    ("*fp16:16,*fp16:16,*fp16:16,i32:16", 256, 8, 16, 16),   # 8 halves
])
def test_vector_add(signature: str, block: int, width: int, mask_constancy: int, alignment: int) -> None:
    func, m = compiled(load_example("vector_add").add_kernel, signature, {"BLOCK": block})
    store = ops(func, "store")[0]
    offsets = store.operands[0].owner.operands[1]  # out_ptr + offsets
    assert cdk(m, offsets) == ((block,), (block,), (1,))
    assert cdk(m, store.operands[0]) == ((block,), (alignment,), (1,))
    assert m.info(store.operand("mask")).constancy == (mask_constancy,)
    for op in ops(func, "load") + [store]:
        assert access_width(m, op) == width


# -- matmul ---------------------------------------------------------------------------------
MATMUL_SIG = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32:16,i32,i32:16,i32,i32:16"
MATMUL_CONST = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_SIZE_M": 8}


def test_matmul_example_proves_only_what_its_strides_allow() -> None:
    """``offs_am % M`` with M unknown breaks the runs of rows, and the strides are runtime
    values (``stride_ak`` a multiple of 16, not 1): no dimension of the A or B tiles is
    provably contiguous, so every element is its own access. Triton does not specialize a
    stride of 1 either; kernels promise it with constexpr strides or hints (next tests)."""
    func, m = compiled(load_example("matmul").matmul_kernel, MATMUL_SIG, MATMUL_CONST)
    load_a, load_b = ops(func, "load")
    # a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak, moved by a runtime step
    # (``rebase-pointers`` carries its base and rebuilds the tile in the loop)
    assert cdk(m, load_a.operands[0]) == ((1, 1), (2, 2), (1, 1))
    # b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    assert cdk(m, load_b.operands[0]) == ((1, 1), (2, 2), (1, 1))
    assert [access_width(m, load_a, d) for d in (0, 1)] == [1, 1]
    # the K mask offs_k[None, :] < K - k * BLOCK_K: constant down the rows, K unknown
    assert m.info(load_a.operand("mask")).constancy == (64, 1)
    # the C tile: rows pid_m * 64 + arange(64) are runs, but stride_cn is only a multiple of 16
    store = ops(func, "store")[0]
    assert cdk(m, store.operands[0]) == ((1, 1), (2, 2), (1, 1))
    assert access_width(m, store, 1) == 1


MATMUL_HINTED = """
@tlxc.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # unit strides along K for A and along N for B: the row-major layout the kernel expects
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :])
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
"""


@pytest.mark.parametrize("sig,a_width,b_width,c_width", [
    # everything a multiple of 16: 16-byte vectors of 8 halves for A, B and C
    ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16", 8, 8, 8),
    # K unknown: the K masks change at any column of A (B's rows do not matter along N)
    ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32,i32:16,i32:16,i32:16", 1, 8, 8),
    # N unknown: C's mask changes at any column; stride_bk unknown: B rows only 2-byte aligned
    ("*fp16:16,*fp16:16,*fp16:16,i32:16,i32,i32:16,i32:16,i32,i32:16", 8, 1, 1),
])
def test_matmul_with_unit_strides_and_hints_vectorizes(load_kernels: Any, sig: str, a_width: int, b_width: int,
                                                      c_width: int) -> None:
    mod = load_kernels(MATMUL_HINTED)
    func, m = compiled(mod.mm, sig, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32})
    load_a, load_b = ops(func, "load")
    store = ops(func, "store")[0]
    assert access_width(m, load_a, 1) == a_width
    assert access_width(m, load_b, 1) == b_width
    assert access_width(m, store, 1) == c_width
    # along the other dimension nothing is contiguous: rows are stride apart
    assert access_width(m, load_a, 0) == 1
    assert m.info(load_a.operands[0]).contiguity == (1, 32)


# -- loops ----------------------------------------------------------------------------------
LOOP_KERNEL = """
@tlxc.jit
def rows_sum(x_ptr, out_ptr, n_rows, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x_ptr + offs
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, n_rows):
        acc += tl.load(p)
        p += stride
    q = out_ptr + offs
    for j in range(0, n_rows, 4):
        tl.store(q, acc)
        q += BLOCK
"""


@pytest.mark.parametrize("stride_sig,alignment", [("i32:16", 16), ("i32", 4)])
def test_loop_carried_pointers(load_kernels: Any, stride_sig: str, alignment: int) -> None:
    mod = load_kernels(LOOP_KERNEL)
    func, m = compiled(mod.rows_sum, f"*fp32:16,*fp32:16,i32,{stride_sig}", {"BLOCK": 128})
    first, second = ops(func, "for")
    p, q = ops(func, "load")[0].operands[0], second.body.args[1]
    assert cdk(m, p) == ((128,), (alignment,), (1,))  # p += stride: stride * 4 bytes (a carried base)
    assert cdk(m, q) == ((128,), (16,), (1,))  # q += BLOCK keeps the 16 bytes
    assert m.info(second.body.args[0]).divisibility == (4,)  # j = 0, 4, 8...
    assert access_width(m, ops(func, "load")[0]) == alignment // 4
    assert access_width(m, ops(func, "store")[0]) == 4
