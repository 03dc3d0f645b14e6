"""Atomics on the GPU agree with the interpreter: old values, masks, float max/min through
the integer order, lanes naming one address, a scalar ticket shared by every thread, and
a compare-and-swap spin lock."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

pytestmark = pytest.mark.gpu


@tlxc.jit
def rmw_kernel(x, v, old, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    vals = tl.load(v + offs, mask=m)
    if OP == "add":
        r = tl.atomic_add(x + offs, vals, mask=m)
    elif OP == "max":
        r = tl.atomic_max(x + offs, vals, mask=m)
    elif OP == "min":
        r = tl.atomic_min(x + offs, vals, mask=m)
    elif OP == "xor":
        r = tl.atomic_xor(x + offs, vals, mask=m)
    else:
        r = tl.atomic_xchg(x + offs, vals, mask=m)
    tl.store(old + offs, r, mask=m)


@pytest.mark.parametrize("op,dtype", [("add", "float32"), ("add", "float16"), ("add", "int64"),
                                      ("max", "float32"), ("min", "float32"), ("max", "float64"),
                                      ("max", "int32"), ("min", "int64"), ("xor", "int32"), ("xchg", "float32")])
def test_tile_rmw(op: str, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x0, v = rng.normal(size=256).astype(dt), rng.normal(size=256).astype(dt)
    else:
        x0, v = rng.integers(0, 1 << 20, 256).astype(dt), rng.integers(0, 1 << 20, 256).astype(dt)
    n = 200
    want_x, want_old = x0.copy(), np.zeros(256, dt)
    rmw_kernel.interpret[(1,)](want_x, v, want_old, n, OP=op, BLOCK=256)
    x, tv = torch.from_numpy(x0.copy()).cuda(), torch.from_numpy(v).cuda()
    old = torch.zeros(256, dtype=getattr(torch, dtype), device="cuda")
    rmw_kernel[(1,)](x, tv, old, n, OP=op, BLOCK=256)
    np.testing.assert_array_equal(x.cpu().numpy(), want_x)
    np.testing.assert_array_equal(old.cpu().numpy()[:n], want_old[:n])


@tlxc.jit
def histogram_kernel(data, bins, ticket, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    d = tl.load(data + offs)
    tl.atomic_add(bins + d, 1, sem="relaxed")
    t = tl.atomic_add(ticket, 1)
    tl.store(ticket + 1 + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), t + tl.zeros([BLOCK], tl.int32))


def test_histogram_and_scalar_tickets() -> None:
    torch = pytest.importorskip("torch")
    programs, block = 64, 256
    data = np.random.default_rng(5).integers(0, 37, programs * block).astype(np.int32)
    bins = torch.zeros(37, dtype=torch.int32, device="cuda")
    ticket = torch.zeros(1 + programs * block, dtype=torch.int32, device="cuda")
    histogram_kernel[(programs,)](torch.from_numpy(data).cuda(), bins, ticket, BLOCK=block)
    np.testing.assert_array_equal(bins.cpu().numpy(), np.bincount(data, minlength=37))
    t = ticket.cpu().numpy()
    assert t[0] == programs
    per_program = t[1:].reshape(programs, block)
    assert (per_program == per_program[:, :1]).all()  # every thread saw its program's ticket
    assert sorted(per_program[:, 0]) == list(range(programs))


@tlxc.jit
def spin_lock_kernel(lock, counter):
    while tl.atomic_cas(lock, 0, 1, sem="acquire") == 1:
        pass
    c = tl.load(counter, volatile=True)
    tl.store(counter, c + 1)
    tl.atomic_xchg(lock, 0, sem="release")


def test_spin_lock_counts_every_program() -> None:
    torch = pytest.importorskip("torch")
    lock = torch.zeros(1, dtype=torch.int32, device="cuda")
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    spin_lock_kernel[(132,)](lock, counter)
    torch.cuda.synchronize()
    assert counter.item() == 132 and lock.item() == 0


@tlxc.jit
def split_add_kernel(c, a, old, n, USE: tl.constexpr, BLOCK: tl.constexpr):
    r, k = tl.arange(0, BLOCK), tl.program_id(0)
    offs = r[:, None] * BLOCK + r[None, :]
    x = tl.load(a + k * BLOCK * BLOCK + offs)
    o = tl.atomic_add(c + offs, x, mask=offs < n)
    if USE:
        tl.store(old + offs, o)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_vector_float_adds_sum_every_program(dtype: str) -> None:
    # 16-byte vector atomics (atom.global.add.noftz.v8.f16 ...): 12 programs add into one
    # tile; small integers, so every order of the adds gives the same sums
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype)
    programs, block = 12, 64
    a = torch.randint(-4, 5, (programs, block, block), device="cuda").to(dt)
    c0 = torch.randint(-4, 5, (block, block), device="cuda").to(dt)
    c = c0.clone()
    n = block * block - 16  # the last 16 elements masked off, in runs of 8
    split_add_kernel[(programs,)](c, a, c, n, USE=False, BLOCK=block)
    want = (c0.float() + a.float().sum(0)).flatten()
    want[n:] = c0.float().flatten()[n:]
    assert torch.equal(c.float().flatten(), want)
    old = torch.zeros_like(c0)
    c = c0.clone()
    split_add_kernel[(1,)](c, a, old, block * block, USE=True, BLOCK=block)
    assert torch.equal(old, c0) and torch.equal(c.float(), c0.float() + a[0].float())
