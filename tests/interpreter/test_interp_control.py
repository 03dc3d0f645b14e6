"""Control flow, program ids, assertions, hints, missing rules and the speed of a small
matmul under the interpreter."""

from __future__ import annotations

import time

import numpy as np
import pytest
from interp_kernels import KernelBuilder, run

from tlxc.errors import CompilationError, InterpreterError
from tlxc.ir import Operation, Value
from tlxc.ir import types as T
from tlxc.ir.ops import arith as A
from tlxc.ir.ops import misc as X
from tlxc.ir.ops import reduce as R
from tlxc.ir.ops import shape as S


def store_scalar(kb: KernelBuilder, ptr: Value, index: int, value: Value) -> None:
    kb.store(kb.ptrs(ptr, kb.const(index, T.int32)), value)


def loop_sum_kernel():
    """out[0] = sum of iv, out[1] = trip count, for iv in range(lb, ub, step)."""
    kb = KernelBuilder([("out", T.pointer(T.int32)), ("lb", T.int32), ("ub", T.int32), ("step", T.int32)])
    zero, one = kb.const(0, T.int32), kb.const(1, T.int32)
    total, trips = kb.for_(kb.args[1], kb.args[2], kb.args[3], [zero, zero],
                           lambda iv, s, n: [kb.binary(A.AddOp, s, iv), kb.binary(A.AddOp, n, one)])
    store_scalar(kb, kb.args[0], 0, total)
    store_scalar(kb, kb.args[0], 1, trips)
    return kb.finish()


@pytest.mark.parametrize("lb,ub,step", [(0, 10, 1), (3, 17, 4), (10, 0, -3), (5, 5, 1), (5, 0, 1), (0, 5, -1)])
def test_for_loop(lb, ub, step) -> None:
    out = np.zeros(2, np.int32)
    run(loop_sum_kernel(), (1, 1, 1), [out, lb, ub, step])
    r = range(lb, ub, step)
    np.testing.assert_array_equal(out, [sum(r), len(r)])


def test_for_loop_with_zero_step_is_reported() -> None:
    with pytest.raises(InterpreterError) as info:
        run(loop_sum_kernel(), (1, 1, 1), [np.zeros(2, np.int32), 0, 4, 0])
    assert "step 0" in info.value.message


def test_while_loop() -> None:
    """Double x until it reaches n; count the steps."""
    kb = KernelBuilder([("out", T.pointer(T.int32)), ("n", T.int32)])
    one = kb.const(1, T.int32)

    def before(x: Value, k: Value) -> tuple[Value, list[Value]]:
        return kb.cmp("lt", x, kb.args[1]), [x, k]

    x, k = kb.while_([one, kb.const(0, T.int32)], before,
                     lambda x, k: [kb.binary(A.MulOp, x, kb.const(2, T.int32)), kb.binary(A.AddOp, k, one)])
    store_scalar(kb, kb.args[0], 0, x)
    store_scalar(kb, kb.args[0], 1, k)
    func = kb.finish()
    for n, want in [(100, [128, 7]), (1, [1, 0]), (-5, [1, 0])]:
        out = np.zeros(2, np.int32)
        run(func, (1, 1, 1), [out, n])
        np.testing.assert_array_equal(out, want)


def test_if_and_nested_regions_see_outer_values() -> None:
    """Odd programs write a loop sum of a tile defined outside, even ones a constant."""
    kb = KernelBuilder([("out", T.pointer(T.int32))])
    pid = kb.op(X.ProgramIdOp, [], T.int32, axis=0)
    tile = kb.arange(4)                         # used inside the if and the for
    odd = kb.cmp("ne", kb.binary(A.AndOp, pid, kb.const(1, T.int32)), kb.const(0, T.int32))

    def then() -> list[Value]:
        acc = kb.const(0, tile.type)
        (acc,) = kb.for_(kb.const(0, T.int32), pid, kb.const(1, T.int32), [acc],
                         lambda iv, a: [kb.binary(A.AddOp, a, tile)])
        return [acc]

    (res,) = kb.if_(odd, then, lambda: [kb.const(-1, tile.type)], [tile.type])
    offs = kb.binary(A.AddOp, kb.splat(kb.binary(A.MulOp, pid, kb.const(4, T.int32)), [4]), tile)
    kb.store(kb.ptrs(kb.args[0], offs), res)
    out = np.zeros(16, np.int32)
    run(kb.finish(), (4, 1, 1), [out])
    np.testing.assert_array_equal(out.reshape(4, 4), [[-1] * 4, [0, 1, 2, 3], [-1] * 4, [0, 3, 6, 9]])


def test_if_without_results() -> None:
    kb = KernelBuilder([("out", T.pointer(T.int32)), ("flag", T.int1)])

    def write(value: int):
        def region() -> list[Value]:
            kb.store(kb.args[0], kb.const(value, T.int32))
            return []
        return region

    kb.if_(kb.args[1], write(1), write(2))
    func = kb.finish()
    for flag, want in [(True, 1), (False, 2)]:
        out = np.zeros((), np.int32)
        run(func, (1, 1, 1), [out, flag])
        assert out == want


def test_program_ids_cover_a_3d_grid() -> None:
    kb = KernelBuilder([("out", T.pointer(T.int32))])
    pid = [kb.op(X.ProgramIdOp, [], T.int32, axis=a) for a in range(3)]
    num = [kb.op(X.NumProgramsOp, [], T.int32, axis=a) for a in range(3)]
    linear = kb.binary(A.AddOp, pid[0], kb.binary(A.MulOp, num[0],
                                                   kb.binary(A.AddOp, pid[1], kb.binary(A.MulOp, num[1], pid[2]))))
    code = kb.binary(A.AddOp, pid[0], kb.binary(A.AddOp, kb.binary(A.MulOp, pid[1], kb.const(10, T.int32)),
                                                 kb.binary(A.MulOp, pid[2], kb.const(100, T.int32))))
    kb.store(kb.ptrs(kb.args[0], linear), code)
    out = np.full(24, -1, np.int32)
    run(kb.finish(), (2, 3, 4), [out])
    z, y, x = np.meshgrid(range(4), range(3), range(2), indexing="ij")
    np.testing.assert_array_equal(out, (x + 10 * y + 100 * z).reshape(-1))


def test_assert_and_assume() -> None:
    kb = KernelBuilder([("n", T.int32)])
    ok = kb.cmp("lt", kb.arange(4), kb.splat(kb.args[0], [4]))
    kb.at(9).b.create(X.AssertOp, [ok], [], {"message": "index out of range"})
    func = kb.finish()
    run(func, (1, 1, 1), [4])
    with pytest.raises(InterpreterError) as info:
        run(func, (1, 1, 1), [3])
    assert info.value.code == "TLXC-INTERP-002" and info.value.loc.line == 9
    assert info.value.message == "device assertion failed: index out of range"

    kb = KernelBuilder([("n", T.int32)])
    kb.b.create(X.AssumeOp, [kb.cmp("gt", kb.args[0], kb.const(0, T.int32))], [])
    func = kb.finish()
    run(func, (1, 1, 1), [1])
    with pytest.raises(InterpreterError, match="assume"):
        run(func, (1, 1, 1), [0])


def test_hints_are_identity() -> None:
    kb = KernelBuilder([("out", T.pointer(T.int32))])
    offs = kb.op(X.MultipleOfOp, [kb.arange(8)], T.tile([8], T.int32), values=(1,))
    offs = kb.op(X.MaxContiguousOp, [offs], offs.type, values=(8,))
    kb.store(kb.ptrs(kb.args[0], offs), offs)
    out = np.zeros(8, np.int32)
    run(kb.finish(), (1, 1, 1), [out])
    np.testing.assert_array_equal(out, np.arange(8))


class UnknownOp(Operation):
    """An op with no interpreter rule (not registered: only this test knows it)."""

    NAME = "test.unknown"
    NUM_RESULTS = 0


def test_op_without_rule_is_an_internal_error() -> None:
    kb = KernelBuilder([("n", T.int32)])
    kb.at(3).b.create(UnknownOp, [])
    with pytest.raises(CompilationError) as info:
        run(kb.finish(), (1, 1, 1), [0])
    assert info.value.code == "TLXC-INTERNAL-001" and "test.unknown" in info.value.message
    assert info.value.loc.line == 3


def matmul_kernel(bm: int, bn: int, bk: int):
    """C[M, N] = A[M, K] @ B[K, N] (row-major, f16 in, f32 acc, f16 out), K-loop in steps of bk."""
    f16 = T.pointer(T.float16)
    kb = KernelBuilder([("a", f16), ("b", f16), ("c", f16), ("M", T.int32), ("N", T.int32), ("K", T.int32)])
    a_ptr, b_ptr, c_ptr, m_, n_, k_ = kb.args
    i32 = T.int32

    def grid_2d(rows: Value, cols: Value, rs: Value, shape: tuple[int, int]) -> Value:
        """rows[:, None] * rs + cols[None, :]"""
        r = kb.op(S.ExpandDimsOp, [rows], T.tile([shape[0], 1], i32), axis=1)
        c = kb.op(S.ExpandDimsOp, [cols], T.tile([1, shape[1]], i32), axis=0)
        r = kb.op(S.BroadcastOp, [kb.binary(A.MulOp, r, kb.splat(rs, [shape[0], 1]))], T.tile(list(shape), i32))
        c = kb.op(S.BroadcastOp, [c], T.tile(list(shape), i32))
        return kb.binary(A.AddOp, r, c)

    pm = kb.op(X.ProgramIdOp, [], i32, axis=0)
    pn = kb.op(X.ProgramIdOp, [], i32, axis=1)
    rm = kb.binary(A.AddOp, kb.splat(kb.binary(A.MulOp, pm, kb.const(bm, i32)), [bm]), kb.arange(bm))
    rn = kb.binary(A.AddOp, kb.splat(kb.binary(A.MulOp, pn, kb.const(bn, i32)), [bn]), kb.arange(bn))
    acc = kb.const(0.0, T.tile([bm, bn], T.float32))

    def body(k0: Value, acc: Value) -> list[Value]:
        rk = kb.binary(A.AddOp, kb.splat(k0, [bk]), kb.arange(bk))
        a = kb.load(kb.ptrs(a_ptr, grid_2d(rm, rk, k_, (bm, bk))))
        b = kb.load(kb.ptrs(b_ptr, grid_2d(rk, rn, n_, (bk, bn))))
        return [kb.op(R.DotOp, [a, b, acc], acc.type)]

    (acc,) = kb.for_(kb.const(0, i32), k_, kb.const(bk, i32), [acc], body)
    out = kb.op(A.ConvertOp, [acc], T.tile([bm, bn], T.float16))
    kb.store(kb.ptrs(c_ptr, grid_2d(rm, rn, n_, (bm, bn))), out)
    return kb.finish()


def test_matmul_is_fast_and_right() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float16)
    func = matmul_kernel(16, 16, 16)                     # 4x4 programs, 4 K iterations each
    start = time.perf_counter()
    run(func, (4, 4, 1), [a, b, c, 64, 64, 64])
    elapsed = time.perf_counter() - start
    np.testing.assert_allclose(c.astype(np.float32), (a.astype(np.float32) @ b.astype(np.float32)),
                               rtol=2e-3, atol=2e-3)
    assert elapsed < 1.0, f"64x64x64 matmul took {elapsed:.2f}s"
