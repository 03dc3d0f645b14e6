"""Loads and stores: masks, in-place results on strided arrays, pointer bitcasts, and the
out-of-bounds / misaligned / wild-pointer errors with the kernel line."""

from __future__ import annotations

import numpy as np
import pytest
from interp_kernels import FILE, KernelBuilder, run

from tlxc.errors import CompilationError, InterpreterError
from tlxc.ir import Value
from tlxc.ir import types as T
from tlxc.ir.ops import arith as A
from tlxc.ir.ops import misc as X
from tlxc.ir.ops import shape as S

BLOCK = 64


def block_offsets(kb: KernelBuilder) -> Value:
    pid = kb.op(X.ProgramIdOp, [], T.int32, axis=0)
    start = kb.binary(A.MulOp, pid, kb.const(BLOCK, T.int32))
    return kb.binary(A.AddOp, kb.splat(start, [BLOCK]), kb.arange(BLOCK))


def add_kernel(masked: bool = True):
    """out[i] = x[i] + y[i] for i < n; the load of x is on line 12, the store on line 14."""
    f32 = T.pointer(T.float32)
    kb = KernelBuilder([("x", f32), ("y", f32), ("out", f32), ("n", T.int32)], name="add")
    offs = block_offsets(kb)
    mask = kb.cmp("lt", offs, kb.splat(kb.args[3], [BLOCK])) if masked else None
    x = kb.at(12).load(kb.ptrs(kb.args[0], offs), mask)
    y = kb.at(13).load(kb.ptrs(kb.args[1], offs), mask)
    kb.at(14).store(kb.ptrs(kb.args[2], offs), kb.binary(A.AddOp, x, y), mask)
    return kb.finish()


def test_vector_add_with_mask() -> None:
    n = 200
    x, y = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    out = np.zeros(n, np.float32)
    run(add_kernel(), (4, 1, 1), [x, y, out, n])
    np.testing.assert_array_equal(out, x + y)


def test_out_of_bounds_load_names_argument_and_line() -> None:
    n = 200
    x, y, out = np.zeros(n, np.float32), np.zeros(256, np.float32), np.zeros(256, np.float32)
    with pytest.raises(InterpreterError) as info:
        run(add_kernel(masked=False), (4, 1, 1), [x, y, out, n])
    err = info.value
    assert err.code == "TLXC-INTERP-001"
    assert err.loc is not None and err.loc.line == 12
    assert f"{FILE}:12:5" in str(err)
    assert "load of argument 'x'" in err.message and "200 elements" in err.message
    assert "element index 200 (byte offset 800" in err.message and "program (3, 0, 0)" in err.message


def test_out_of_bounds_store_names_argument_and_line() -> None:
    x, y, out = np.zeros(256, np.float32), np.zeros(256, np.float32), np.zeros(100, np.float32)
    with pytest.raises(InterpreterError) as info:
        run(add_kernel(masked=False), (4, 1, 1), [x, y, out, 256])
    err = info.value
    assert err.code == "TLXC-INTERP-001" and err.loc.line == 14
    assert "store of argument 'out'" in err.message and "element index 100 " in err.message
    assert "program (1, 0, 0)" in err.message
    np.testing.assert_array_equal(out[:64], 0.0)   # program 0 ran before the fault
    assert f"{FILE}:14:5" in str(err)


def test_masked_off_out_of_bounds_lanes_do_not_fault() -> None:
    n = 3
    x, y, out = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    run(add_kernel(), (8, 1, 1), [x, y, out, n])       # lanes 3..511 are far out of bounds
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])


def test_masked_off_wild_pointer_and_other() -> None:
    kb = KernelBuilder([("out", T.pointer(T.float32))])
    null = kb.op(A.IntToPtrOp, [kb.const(0, T.int64)], T.pointer(T.float32))
    offs = kb.arange(4)
    off_mask = kb.cmp("lt", offs, kb.const(0, offs.type))
    v = kb.load(kb.ptrs(null, offs), off_mask, kb.const(7.0, T.tile([4], T.float32)))
    kb.store(kb.ptrs(null, offs), v, off_mask)
    kb.store(kb.ptrs(kb.args[0], offs), v)
    out = np.zeros(4, np.float32)
    run(kb.finish(), (1, 1, 1), [out])
    np.testing.assert_array_equal(out, 7.0)


def test_wild_pointer_faults() -> None:
    kb = KernelBuilder([("out", T.pointer(T.float32))])
    null = kb.op(A.IntToPtrOp, [kb.const(0, T.int64)], T.pointer(T.float32))
    kb.at(5).store(kb.ptrs(kb.args[0], kb.arange(2)), kb.splat(kb.load(null), [2]))
    with pytest.raises(InterpreterError) as info:
        run(kb.finish(), (1, 1, 1), [np.zeros(2, np.float32)])
    assert info.value.code == "TLXC-INTERP-001" and "no pointer argument" in info.value.message


def test_negative_offset_is_reported_against_its_argument() -> None:
    kb = KernelBuilder([("a", T.pointer(T.int32)), ("b", T.pointer(T.int32))])
    offs = kb.binary(A.SubOp, kb.arange(4), kb.const(2, T.tile([4], T.int32)))
    kb.store(kb.ptrs(kb.args[0], kb.arange(4)), kb.load(kb.ptrs(kb.args[1], offs)))
    with pytest.raises(InterpreterError) as info:
        run(kb.finish(), (1, 1, 1), [np.zeros(4, np.int32), np.zeros(4, np.int32)])
    assert "argument 'b'" in info.value.message and "element index -2" in info.value.message


def test_misaligned_access_faults() -> None:
    kb = KernelBuilder([("x", T.pointer(T.float32))])
    raw = kb.op(A.BitcastOp, [kb.args[0]], T.pointer(T.int8))
    raw = kb.op(A.AddPtrOp, [raw, kb.const(1, T.int32)], raw.type)
    p = kb.op(A.BitcastOp, [raw], T.pointer(T.float32))
    kb.store(kb.args[0], kb.load(p))
    with pytest.raises(InterpreterError) as info:
        run(kb.finish(), (1, 1, 1), [np.zeros(4, np.float32)])
    assert "misaligned" in info.value.message and "byte offset 1" in info.value.message


def test_pointer_bitcast_reinterprets_bytes() -> None:
    kb = KernelBuilder([("x", T.pointer(T.float32)), ("out", T.pointer(T.int32))])
    as_int = kb.op(A.BitcastOp, [kb.args[0]], T.pointer(T.int32))
    offs = kb.arange(2)
    kb.store(kb.ptrs(kb.args[1], offs), kb.load(kb.ptrs(as_int, offs)))
    # and 16-bit halves of the same bytes
    halves = kb.op(A.BitcastOp, [kb.args[0]], T.pointer(T.uint16))
    h = kb.load(kb.ptrs(halves, kb.arange(4)))
    wide = kb.op(A.ConvertOp, [h], T.tile([4], T.int32))
    kb.store(kb.ptrs(kb.args[1], kb.arange(4, start=2)), wide)
    x = np.array([1.0, -2.0], np.float32)
    out = np.zeros(6, np.int32)
    run(kb.finish(), (1, 1, 1), [x, out])
    np.testing.assert_array_equal(out[:2], x.view(np.int32))
    np.testing.assert_array_equal(out[2:], x.view(np.uint16))


def copy_2d_kernel(rows: int, cols: int):
    """out[r * so0 + c * so1] = 2 * x[r * sx0 + c * sx1], strides as i32 arguments."""
    ptr = T.pointer(T.float32)
    kb = KernelBuilder([("x", ptr), ("out", ptr), ("sx0", T.int32), ("sx1", T.int32),
                        ("so0", T.int32), ("so1", T.int32)])

    def offsets(s0: Value, s1: Value) -> Value:
        r = kb.op(S.ExpandDimsOp, [kb.arange(rows)], T.tile([rows, 1], T.int32), axis=1)
        c = kb.op(S.ExpandDimsOp, [kb.arange(cols)], T.tile([1, cols], T.int32), axis=0)
        r = kb.op(S.BroadcastOp, [kb.binary(A.MulOp, r, kb.splat(s0, [rows, 1]))], T.tile([rows, cols], T.int32))
        c = kb.op(S.BroadcastOp, [kb.binary(A.MulOp, c, kb.splat(s1, [1, cols]))], T.tile([rows, cols], T.int32))
        return kb.binary(A.AddOp, r, c)

    v = kb.load(kb.ptrs(kb.args[0], offsets(kb.args[2], kb.args[3])))
    v = kb.binary(A.MulOp, v, kb.const(2.0, v.type))
    kb.store(kb.ptrs(kb.args[1], offsets(kb.args[4], kb.args[5])), v)
    return kb.finish()


def strides(a: np.ndarray) -> list[int]:
    return [s // a.itemsize for s in a.strides]


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed"])
def test_strided_arrays_are_read_and_written_in_place(view) -> None:
    base = np.arange(64, dtype=np.float32).reshape(8, 8)
    x = {"transposed": base[:4, :].T[:4], "strided": base[::2, 1::2], "reversed": base[::-2, ::-2]}[view]
    big = np.full((8, 16), -1.0, np.float32)
    out = big[:4, ::4]                          # a non-contiguous output view
    run(copy_2d_kernel(4, 4), (1, 1, 1), [x, out, *strides(x), *strides(out)])
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(big[:4, 1::4], -1.0)   # bytes between the view's elements untouched
    np.testing.assert_array_equal(big[4:], -1.0)


def test_store_to_one_address_last_lane_wins() -> None:
    kb = KernelBuilder([("out", T.pointer(T.int32))])
    zeros = kb.const(0, T.tile([8], T.int32))
    kb.store(kb.ptrs(kb.args[0], zeros), kb.arange(8))
    out = np.zeros(1, np.int32)
    run(kb.finish(), (1, 1, 1), [out])
    assert out[0] == 7


def test_scalar_load_store_and_argument_conversion() -> None:
    kb = KernelBuilder([("p", T.pointer(T.float16)), ("h", T.float16), ("i", T.int32), ("q", T.pointer(T.int32))])
    v = kb.load(kb.args[0])
    kb.store(kb.args[0], kb.binary(A.AddOp, v, kb.args[1]))
    kb.store(kb.args[3], kb.args[2])
    p, q = np.array([1.0], np.float16), np.zeros((), np.int32)
    run(kb.finish(), (1, 1, 1), [p, 0.1, 2**32 - 1, q])
    assert p[0] == np.float16(1.0) + np.float16(0.1)
    assert q == -1


def test_pointers_into_two_arguments_in_one_tile() -> None:
    kb = KernelBuilder([("a", T.pointer(T.int32)), ("b", T.pointer(T.int32)), ("out", T.pointer(T.int32))])
    offs = kb.arange(4)
    even = kb.cmp("eq", kb.binary(A.AndOp, offs, kb.const(1, offs.type)), kb.const(0, offs.type))
    p = kb.op(A.SelectOp, [even, kb.ptrs(kb.args[0], offs), kb.ptrs(kb.args[1], offs)],
              T.tile([4], T.pointer(T.int32)))
    kb.store(kb.ptrs(kb.args[2], offs), kb.load(p, even, kb.const(-1, T.tile([4], T.int32))))
    kb.store(p, kb.binary(A.MulOp, offs, kb.const(10, offs.type)))
    a, b, out = np.zeros(4, np.int32), np.zeros(4, np.int32) + 5, np.zeros(4, np.int32)
    a[:] = [100, 101, 102, 103]
    run(kb.finish(), (1, 1, 1), [a, b, out])
    np.testing.assert_array_equal(out, [100, -1, 102, -1])
    np.testing.assert_array_equal(a, [0, 101, 20, 103])
    np.testing.assert_array_equal(b, [5, 10, 5, 30])


def test_ptrtoint_and_back() -> None:
    kb = KernelBuilder([("x", T.pointer(T.int32))])
    addr = kb.op(A.PtrToIntOp, [kb.args[0]], T.int64)
    addr = kb.binary(A.AddOp, addr, kb.const(4, T.int64))
    p = kb.op(A.IntToPtrOp, [addr], T.pointer(T.int32))
    kb.store(kb.args[0], kb.load(p))
    x = np.array([1, 2], np.int32)
    run(kb.finish(), (1, 1, 1), [x])
    np.testing.assert_array_equal(x, [2, 2])


def test_bool_pointee() -> None:
    kb = KernelBuilder([("m", T.pointer(T.int1)), ("out", T.pointer(T.int1))])
    offs = kb.arange(4)
    v = kb.load(kb.ptrs(kb.args[0], offs))
    kb.store(kb.ptrs(kb.args[1], offs), kb.op(A.NotOp, [v], v.type))
    out = np.zeros(4, bool)
    run(kb.finish(), (1, 1, 1), [np.array([1, 0, 0, 1], bool), out])
    np.testing.assert_array_equal(out, [0, 1, 1, 0])


def test_read_only_array_store_faults() -> None:
    x = np.zeros(256, np.float32)
    out = np.zeros(256, np.float32)
    out.flags.writeable = False
    with pytest.raises(InterpreterError, match="read-only"):
        run(add_kernel(), (4, 1, 1), [x, x, out, 256])


def test_bad_launch_arguments() -> None:
    with pytest.raises(CompilationError) as info:
        run(add_kernel(), (1, 1, 1), [np.zeros(4, np.float32)])
    assert info.value.code == "TLXC-LAUNCH-001"
    with pytest.raises(CompilationError) as info:
        run(add_kernel(), (1, 1, 1), [[1.0], np.zeros(4, np.float32), np.zeros(4, np.float32), 4])
    assert info.value.code == "TLXC-LAUNCH-003" and "'x'" in info.value.message


def test_integer_divisibility_promise_is_checked() -> None:
    kb = KernelBuilder([("out", T.pointer(T.int32)), ("n", T.int32)])
    kb.store(kb.args[0], kb.args[1])
    kb.func.attrs["arg_divisibility"] = (16, 16)
    func = kb.finish()
    out = np.zeros(3, np.int32)[1:]             # a pointer's alignment is not checked
    run(func, (1, 1, 1), [out, 32])
    assert out[0] == 32
    with pytest.raises(CompilationError, match="not a multiple of 16"):
        run(func, (1, 1, 1), [out, 33])


# -- host addresses read from memory (a pointer table, as Triton's grouped GEMM builds) ---------

# the tables hold host addresses, which only the interpreter maps (a GPU faults on them, and
# the fault poisons the context for the tests after it under TLXC_TEST_ON_GPU=1)
HOST_TABLE = pytest.mark.interpreter_only

@HOST_TABLE
def test_pointer_tables_reach_the_callers_arrays(load_kernels) -> None:  # type: ignore[no-untyped-def]
    """The kernel reads real data addresses from an int64 table and loads and stores through
    them, reaching arrays that are not arguments, in place (as on a GPU)."""
    m = load_kernels("""
@tlxc.jit
def scale_all(table, sizes, out, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    p = tl.load(table + g).to(tl.pointer_type(tl.float32))
    n = tl.load(sizes + g)
    offs = tl.arange(0, BLOCK)
    v = tl.load(p + offs, mask=offs < n, other=0.0)
    tl.store(out + g * BLOCK + offs, v * 2.0)
    tl.store(p + offs, v + 1.0, mask=offs < n)
""")
    groups = [np.arange(5, dtype=np.float32), np.arange(16, dtype=np.float32) + 100]
    table = np.array([a.ctypes.data for a in groups], np.int64)
    sizes = np.array([5, 16], np.int32)
    out = np.zeros((2, 16), np.float32)
    m.scale_all.interpret[(2,)](table, sizes, out, BLOCK=16)
    np.testing.assert_array_equal(out[0], np.r_[np.arange(5) * 2.0, np.zeros(11)])
    np.testing.assert_array_equal(out[1], (np.arange(16) + 100) * 2.0)
    np.testing.assert_array_equal(groups[0], np.arange(5) + 1.0)  # written in place
    np.testing.assert_array_equal(groups[1], np.arange(16) + 101.0)


@HOST_TABLE
def test_a_table_address_past_its_array_is_reported(load_kernels) -> None:  # type: ignore[no-untyped-def]
    m = load_kernels("""
@tlxc.jit
def first(table, out, BLOCK: tl.constexpr):
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    tl.store(out + tl.arange(0, BLOCK), tl.load(p + tl.arange(0, BLOCK)))  # ERR
""")
    small = np.arange(4, dtype=np.float32)
    table = np.array([small.ctypes.data], np.int64)
    with pytest.raises(InterpreterError) as info:
        m.first.interpret[(1,)](table, np.zeros(8, np.float32), BLOCK=8)
    e = info.value
    assert e.code == "TLXC-INTERP-001" and "out of bounds load of argument 'host array at" not in e.message
    assert "out of bounds load of host array at" in e.message and "element index 4" in e.message


@HOST_TABLE
def test_an_address_in_no_array_is_reported(load_kernels) -> None:  # type: ignore[no-untyped-def]
    m = load_kernels("""
@tlxc.jit
def wild(table, out):
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    tl.store(out, tl.load(p))
""")
    with pytest.raises(InterpreterError) as info:
        m.wild.interpret[(1,)](np.array([0x1234560], np.int64), np.zeros(1, np.float32))
    assert "in no numpy array or CPU tensor the program can reach" in info.value.message


class _Hostile:
    """An object whose ``__class__`` runs code that fails, as lazy proxies and deprecated
    module aliases do; the search for host arrays walks past it without touching it."""

    @property  # type: ignore[misc]
    def __class__(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("__class__ was read")


_HOSTILE_GLOBAL = {"proxy": _Hostile()}


@HOST_TABLE
def test_pointer_tables_of_torch_tensors_as_the_grouped_gemm_tutorial(load_kernels) -> None:  # type: ignore[no-untyped-def]
    """Triton's grouped GEMM: a table of ``t.data_ptr()`` values of CPU torch tensors, held
    only by a list of the caller; the heap holds an object whose ``__class__`` raises."""
    torch = pytest.importorskip("torch")
    m = load_kernels("""
@tlxc.jit
def copy_groups(src_table, dst_table, sizes, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    src = tl.load(src_table + g).to(tl.pointer_type(tl.float16))
    dst = tl.load(dst_table + g).to(tl.pointer_type(tl.float16))
    n = tl.load(sizes + g)
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * 3.0, mask=offs < n)
""")
    local_hostile = _Hostile()
    srcs = [torch.arange(n, dtype=torch.float16) for n in (3, 32, 17)]
    dsts = [torch.zeros(n, dtype=torch.float16) for n in (3, 32, 17)]
    src_table = torch.tensor([t.data_ptr() for t in srcs])
    dst_table = torch.tensor([t.data_ptr() for t in dsts])
    assert src_table.dtype == torch.int64
    sizes = torch.tensor([3, 32, 17], dtype=torch.int32)
    m.copy_groups.interpret[(3,)](src_table, dst_table, sizes, BLOCK=32)
    for n, d in zip((3, 32, 17), dsts):
        assert d.tolist() == [3.0 * i for i in range(n)]
    assert local_hostile is not None and _HOSTILE_GLOBAL
