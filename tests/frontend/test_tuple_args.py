"""Tuples as kernel arguments (Triton's test_tuple cases, written anew): each member is an
argument of its own -- a pointer, number or descriptor a runtime parameter of the variant
named by its path (``values.0``), a ``tl.constexpr`` member a constant, None the constant
None -- and the kernel sees the tuple."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def add_constant(out_ptr, values):
    tl.static_assert(isinstance(values[1].type, tl.constexpr_type))
    tl.store(out_ptr, tl.load(values[0]) + values[1])


def test_a_constexpr_member_is_a_constant_and_a_pointer_member_a_parameter() -> None:
    x, out = np.array([8], np.int32), np.zeros(1, np.int32)
    add_constant.interpret[(1,)](out, (x, tl.constexpr(3)))
    assert out[0] == 11
    ck = add_constant.interpret[(1,)](out, (x, tl.constexpr(4)))  # another constant: another variant
    assert out[0] == 12
    assert list(ck.signature) == ["out_ptr", "values.0"] and ck.constants["values.1"] == 4
    assert "%values.0" not in ck.asm["ir"]  # not an identifier: printed by number


@tlxc.jit
def scale_block(X, shape, strides, m_n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    ptrs = X + offs[:, None] * strides[0] + offs[None, :] * strides[1]
    mask = (offs[:, None] < shape[0]) & (offs[None, :] < shape[1])
    data = tl.load(ptrs, mask=mask)
    for _ in tl.range(0, m_n[1]):
        data = m_n[0] * data
    tl.store(ptrs, data, mask=mask)


@pytest.mark.parametrize("rows, cols", [(8, 8), (5, 7)])
def test_shapes_and_strides_as_tuples(rows: int, cols: int) -> None:
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    want = 8 * x
    scale_block.interpret[(1,)](x, x.shape, (x.strides[0] // 4, x.strides[1] // 4), (2, 3), BLOCK=8)
    np.testing.assert_array_equal(x, want)
    assert list(scale_block.last_compiled.signature) == ["X", "shape.0", "shape.1", "strides.0", "strides.1",
                                                         "m_n.0", "m_n.1"]



@pytest.mark.gpu
def test_shapes_and_strides_as_tuples_on_the_gpu() -> None:
    # the leaves are passed in the variant's order; a launch with a tuple never takes the
    # fast path's table, also on the launches after the first (which try it first)
    torch = pytest.importorskip("torch")
    x = torch.arange(64, device="cuda", dtype=torch.float32).reshape(8, 8)
    want = 8 * x
    for _ in range(3):
        y = x.clone()
        scale_block[(1,)](y, y.shape, y.stride(), (2, 3), BLOCK=8)
        assert torch.equal(y, want)
    y = x[:5, :7].clone()
    scale_block[(1,)](y, tuple(y.shape), y.stride(), (2, tl.constexpr(1)), BLOCK=8)
    assert torch.equal(y, 2 * x[:5, :7])

@tlxc.jit
def nested(out, t):
    tl.static_assert(t[2] is None)
    tl.store(out + tl.arange(0, 4), tl.load(t[0][0] + tl.arange(0, 4)) * t[1] + t[0][1])


def test_nested_tuples_and_none_members() -> None:
    o, a = np.zeros(4, np.float32), np.ones(4, np.float32)
    nested.interpret[(1,)](o, ((a, 2.0), 5, None))
    np.testing.assert_array_equal(o, 7)
    assert list(nested.last_compiled.signature) == ["out", "t.0.0", "t.0.1", "t.1"]


def test_the_compiled_variant_launches_with_the_tuple(monkeypatch: pytest.MonkeyPatch) -> None:
    # Triton's compiled[grid](*args): every argument as the kernel takes it
    monkeypatch.setenv("TLXC_INTERPRET", "1")
    x, out = np.array([1], np.int32), np.zeros(1, np.int32)
    ck = add_constant.interpret[(1,)](out, (x, tl.constexpr(3)))
    out[0] = 0
    ck[(1,)](out, (x, tl.constexpr(3)))
    assert out[0] == 4


def test_a_member_tlxc_cannot_pass_is_named_by_its_path(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def k(out, t):
    tl.store(out, t[0])
""")
    with pytest.raises(tlxc.CompilationError, match=r"argument 't\.1': cannot pass an argument of type dict"):
        m.k.interpret[(1,)](np.zeros(1, np.float32), (1.0, {}))


class Block(NamedTuple):
    ptr: Any
    shape: tuple
    stride: tuple


class Closure(NamedTuple):
    fn: Any
    captured: tuple


@tlxc.jit
def _mul(x, a):
    return x * tl.load(a)


@tlxc.jit
def _block_view(t, BM: tl.constexpr, BN: tl.constexpr):
    rows, cols = tl.arange(0, BM), tl.arange(0, BN)
    ptrs = t.ptr + rows[:, None] * t.stride[0] + cols[None, :] * t.stride[1]
    return ptrs, (rows[:, None] < t.shape[0]) & (cols[None, :] < t.shape[1])


@tlxc.jit
def apply_closure(closure, x, y, BM: tl.constexpr, BN: tl.constexpr):
    src = Block(ptr=x.ptr, shape=x.shape, stride=x.stride)  # a NamedTuple built in the kernel
    xs, xm = _block_view(src, BM, BN)
    ys, ym = _block_view(y, BM, BN)
    tl.store(ys, closure.fn(tl.load(xs, mask=xm, other=0.0), *closure.captured), mask=ym)


def test_named_tuples_and_functions_as_members() -> None:
    # Triton's test_tuple namedtuple case: a @jit function in a tuple is a constant, a
    # named tuple keeps its fields in the kernel, and kernels build them too
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    y = np.zeros((16, 16), np.float32)
    a = np.array([2.5], np.float32)
    apply_closure.interpret[(1,)](Closure(_mul, (a,)), Block(x, x.shape, (32, 1)), Block(y, y.shape, (16, 1)),
                                  BM=64, BN=64)
    np.testing.assert_array_equal(y, x[:16, :16] * a[0])
    assert list(apply_closure.last_compiled.signature) == ["closure.1.0", "x.0", "x.1.0", "x.1.1", "x.2.0",
                                                           "x.2.1", "y.0", "y.1.0", "y.1.1", "y.2.0", "y.2.1"]


@tlxc.jit
def _inc_all(values):
    return tl.tuple([v + 1 for v in values])


@tlxc.jit
def comprehensions(out, N: tl.constexpr):
    offs = tl.arange(0, 4)
    rows = [tl.load(out + offs + 4 * i) for i in range(N)]  # unrolled: a tuple of N tiles
    rows = _inc_all(rows)
    evens: tl.constexpr = tuple(i * i for i in tl.static_range(N) if i % 2 == 0)
    tl.static_assert(evens == (0, 4))
    i: tl.constexpr = 7
    pairs: tl.constexpr = [a * 10 + b for a in range(2) for b in range(2)]
    tl.static_assert(pairs == (0, 1, 10, 11) and i == 7)  # the comprehension's i is its own
    for j in tl.static_range(N):
        tl.store(out + offs + 4 * j, rows[j])


def test_comprehensions_unroll_over_compile_time_iterables() -> None:
    o = np.arange(16, dtype=np.float32)
    comprehensions.interpret[(1,)](o, N=4)
    np.testing.assert_array_equal(o, np.arange(16) + 1)


def test_a_comprehension_over_a_runtime_range_is_refused(load_kernels: Any) -> None:
    m = load_kernels("""
@tlxc.jit
def k(out, n):
    vals = [i for i in range(n)]
""")
    with pytest.raises(tlxc.CompilationError, match="its range needs compile-time bounds") as info:
        m.k.compile("*fp32,i32")
    assert ":7:" in str(info.value)
