"""``tl.atomic_*`` and ``tl.atomic_cas`` on the interpreter, against numpy: old values
come back, masked-off lanes touch nothing, lanes naming one address apply in lane order,
and the element types, ``sem`` and ``scope`` each op refuses are errors at the user's line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tlxc
import tlxc.language as tl
from tlxc.errors import CompilationError


@tlxc.jit
def rmw_kernel(x, v, old, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    vals = tl.load(v + offs, mask=mask)
    if OP == "add":
        r = tl.atomic_add(x + offs, vals, mask=mask)
    elif OP == "max":
        r = tl.atomic_max(x + offs, vals, mask=mask, sem="relaxed", scope="cta")
    elif OP == "min":
        r = tl.atomic_min(x + offs, vals, mask=mask, sem="acquire")
    elif OP == "and":
        r = tl.atomic_and(x + offs, vals, mask=mask, sem="release", scope="sys")
    elif OP == "or":
        r = tl.atomic_or(x + offs, vals, mask=mask)
    elif OP == "xor":
        r = tl.atomic_xor(x + offs, vals, mask=mask)
    else:
        r = tl.atomic_xchg(x + offs, vals, mask=mask)
    tl.store(old + offs, r, mask=mask)


NP_OPS = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor, "xchg": lambda a, b: b}


@pytest.mark.parametrize("op,dtype", [
    ("add", np.int32), ("add", np.uint32), ("add", np.int64), ("add", np.float32), ("add", np.float64),
    ("add", np.float16), ("max", np.int32), ("max", np.uint64), ("max", np.float32), ("min", np.int64),
    ("min", np.float64), ("and", np.uint32), ("or", np.int32), ("xor", np.int64), ("xchg", np.float32),
    ("xchg", np.uint32),
])
def test_rmw_tile_returns_old_values_and_skips_masked_lanes(op: str, dtype: type) -> None:
    rng = np.random.default_rng(7)
    n = 37
    if np.issubdtype(dtype, np.floating):
        x0, v = rng.normal(size=64).astype(dtype), rng.normal(size=64).astype(dtype)
    else:
        x0, v = rng.integers(0, 1000, 64).astype(dtype), rng.integers(0, 1000, 64).astype(dtype)
    x, old = x0.copy(), np.zeros(64, dtype)
    rmw_kernel.interpret[(1,)](x, v, old, n, OP=op, BLOCK=64)
    want = x0.copy()
    want[:n] = NP_OPS[op](x0[:n], v[:n])
    np.testing.assert_array_equal(x, want)
    np.testing.assert_array_equal(old[:n], x0[:n])
    np.testing.assert_array_equal(old[n:], 0)


def test_bf16_add() -> None:
    x0 = np.array([1.0, 2.5, -3.0, 256.0], ml_dtypes.bfloat16)
    v = np.array([0.5, 0.25, 1.0, 1.0], ml_dtypes.bfloat16)
    x, old = x0.copy(), np.zeros(4, ml_dtypes.bfloat16)
    rmw_kernel.interpret[(1,)](x, v, old, 4, OP="add", BLOCK=4)
    # 256 + 1 rounds back to 256 in bf16 (8 bits of mantissa)
    np.testing.assert_array_equal(x.astype(np.float32), [1.5, 2.75, -2.0, 256.0])
    np.testing.assert_array_equal(old.astype(np.float32), x0.astype(np.float32))


@tlxc.jit
def histogram_kernel(data, bins, ticket, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    d = tl.load(data + offs)
    tl.atomic_add(bins + d, 1)
    t = tl.atomic_add(ticket, 1)  # scalar pointer: one add per program
    tl.store(ticket + 1 + tl.program_id(0), t)


def test_duplicate_addresses_accumulate_and_scalar_tickets() -> None:
    data = np.array([0, 1, 1, 3, 3, 3, 2, 0] * 4, np.int32)
    bins = np.zeros(4, np.int32)
    ticket = np.zeros(5, np.int32)
    histogram_kernel.interpret[(4,)](data, bins, ticket, BLOCK=8)
    np.testing.assert_array_equal(bins, np.bincount(data, minlength=4))
    # one add per program: four tickets in all, each program a different one. Which program
    # gets which is the order they reach the counter: the interpreter runs them in order
    # ([0, 1, 2, 3]), a GPU in any order (TLXC_TEST_ON_GPU=1)
    assert ticket[0] == 4
    np.testing.assert_array_equal(np.sort(ticket[1:]), [0, 1, 2, 3])


@tlxc.jit
def lane_order_kernel(x, old):
    offs = tl.arange(0, 4)
    r = tl.atomic_xchg(x + offs * 0, offs + 10)  # every lane names x[0]
    tl.store(old + offs, r)


def test_lanes_naming_one_address_apply_in_lane_order() -> None:
    x, old = np.array([7], np.int32), np.zeros(4, np.int32)
    lane_order_kernel.interpret[(1,)](x, old)
    assert x[0] == 13
    np.testing.assert_array_equal(old, [7, 10, 11, 12])


@tlxc.jit
def cas_kernel(x, old, cmp, val):
    offs = tl.arange(0, 8)
    r = tl.atomic_cas(x + offs, cmp, val)
    tl.store(old + offs, r)


def test_cas_swaps_where_equal() -> None:
    x0 = np.array([0, 1, 0, 2, 0, 1, 1, 0], np.int32)
    x, old = x0.copy(), np.zeros(8, np.int32)
    cas_kernel.interpret[(1,)](x, old, 1, 5)
    np.testing.assert_array_equal(x, np.where(x0 == 1, 5, x0))
    np.testing.assert_array_equal(old, x0)


def test_cas_on_floats_compares_bits() -> None:
    x0 = np.array([0.0, -0.0, 1.5, 0.0, 2.0, 0.0, -0.0, 3.0], np.float32)
    x, old = x0.copy(), np.zeros(8, np.float32)
    cas_kernel.interpret[(1,)](x, old, 0.0, 9.0)
    np.testing.assert_array_equal(x, [9.0, -0.0, 1.5, 9.0, 2.0, 9.0, -0.0, 3.0])
    assert np.signbit(x[1]) and np.signbit(x[6])


@tlxc.jit
def spin_lock_kernel(lock, counter):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    c = tl.load(counter)
    tl.store(counter, c + 1)
    tl.atomic_xchg(lock, 0)


def test_spin_lock() -> None:
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    spin_lock_kernel.interpret[(6,)](lock, counter)
    assert counter[0] == 6 and lock[0] == 0


@pytest.mark.parametrize("body,sig,text", [
    ("tl.atomic_max(x, 1.0)", "*fp16", "tl.atomic_max does not support tl.float16 elements"),
    ("tl.atomic_and(x, 1.0)", "*fp32", "tl.atomic_and does not support tl.float32 elements"),
    ("tl.atomic_add(x, 1)", "*i16", "tl.atomic_add does not support tl.int16 elements"),
    ("tl.atomic_cas(x, 0, 1)", "*i8", "tl.atomic_cas does not support tl.int8 elements"),
    ("tl.atomic_or(x, 1, scope='block')", "*i32", "unknown scope 'block'"),
    ("tl.atomic_xchg(x, 1, sem='seq_cst')", "*i32", "unknown sem 'seq_cst'"),
])
def test_refused_at_the_users_line(tmp_path, body: str, sig: str, text: str) -> None:
    src = tmp_path / "kern.py"
    src.write_text(f"import tlxc\nimport tlxc.language as tl\n\n\n@tlxc.jit\ndef k(x):\n    {body}\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("kern_atomics", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(CompilationError) as info:
        mod.k.compile(sig)
    err = info.value
    assert err.code == "TLXC-TYPE-001"
    assert text in err.message
    assert err.loc is not None and err.loc.line == 7
