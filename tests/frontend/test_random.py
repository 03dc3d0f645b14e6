"""``tl.randint`` / ``rand`` / ``randn`` and the Philox generator under them
(tlxc/language/random.py): the known-answer vectors of Philox4x32-10 (Random123's
kat_vectors), a numpy Philox written from the paper for many seeds and offsets, the
uniform and normal transforms, and code for every target."""

from __future__ import annotations

import numpy as np
import pytest

import tlxc
import tlxc.language as tl

M = 0xFFFFFFFF


def philox_ref(c: np.ndarray, k0: int, k1: int, rounds: int = 10) -> np.ndarray:
    """Philox4x32: ``c`` is (4, n) uint32 counters; the key words stay scalars."""
    c = c.astype(np.uint64)
    for _ in range(rounds):
        p0 = c[0] * np.uint64(0xD2511F53)
        p2 = c[2] * np.uint64(0xCD9E8D57)
        c = np.stack([(p2 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p2 & np.uint64(M),
                      (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & np.uint64(M)])
        k0, k1 = (k0 + 0x9E3779B9) & M, (k1 + 0xBB67AE85) & M
    return c.astype(np.uint32)


@tlxc.jit
def philox_words(c_ptr, out_ptr, seed, N: tl.constexpr):
    offs = tl.arange(0, N)
    c0 = tl.load(c_ptr + offs)
    c1 = tl.load(c_ptr + N + offs)
    c2 = tl.load(c_ptr + 2 * N + offs)
    c3 = tl.load(c_ptr + 3 * N + offs)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3)
    tl.store(out_ptr + offs, r0)
    tl.store(out_ptr + N + offs, r1)
    tl.store(out_ptr + 2 * N + offs, r2)
    tl.store(out_ptr + 3 * N + offs, r3)


@tlxc.jit
def draws(seed, base, ints, uniform, normal, N: tl.constexpr):
    offs = base + tl.arange(0, N)
    i0, i1, i2, i3 = tl.randint4x(seed, offs)
    tl.store(ints + tl.arange(0, N), i0)
    tl.store(ints + N + tl.arange(0, N), i3)
    tl.store(uniform + tl.arange(0, N), tl.rand(seed, offs))
    tl.store(normal + tl.arange(0, N), tl.randn(seed, offs))


KAT = [  # (counter, key) -> Philox4x32-10 output (Random123 kat_vectors)
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M, M, M, M), (M, M), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter,key,want", KAT)
def test_known_answers(counter: tuple, key: tuple, want: tuple) -> None:
    n = 16
    c = np.repeat(np.array(counter, np.uint32)[:, None], n, axis=1)
    out = np.zeros((4, n), np.uint32)
    seed = np.int64(np.uint64(key[1] << 32 | key[0]).view(np.int64))
    philox_words.interpret[(1,)](c.view(np.int32), out, seed, N=n)
    assert [hex(v) for v in out[:, 0]] == [hex(v) for v in want]
    assert (out == out[:, :1]).all()


@pytest.mark.parametrize("seed", [0, 1, 123456789, 2 ** 40 + 7, -5])
def test_words_and_transforms_match_the_reference(seed: int) -> None:
    n, base = 256, 1000
    ints = np.zeros((2, n), np.uint32)
    uni = np.zeros(n, np.float32)
    nor = np.zeros(n, np.float32)
    draws.interpret[(1,)](seed, base, ints, uni, nor, N=n)
    s = seed & 0xFFFFFFFFFFFFFFFF
    c = np.zeros((4, n), np.uint32)
    c[0] = np.arange(base, base + n)
    ref = philox_ref(c, s & M, s >> 32)
    assert np.array_equal(ints[0], ref[0]) and np.array_equal(ints[1], ref[3])
    folded = ref[0].view(np.int32).astype(np.int64)
    folded = np.where(folded < 0, -folded - 1, folded)
    want_u = folded.astype(np.float32) * np.float32(4.6566127342e-10)
    assert np.array_equal(uni, want_u)
    assert ((uni >= 0) & (uni < 1)).all()
    u2 = np.where(ref[1].view(np.int32) < 0, -ref[1].view(np.int32).astype(np.int64) - 1,
                  ref[1].view(np.int32)).astype(np.float32) * np.float32(4.6566127342e-10)
    want_n = np.sqrt(-2.0 * np.log(np.maximum(want_u, 1e-7))) * np.cos(2 * np.pi * u2)
    np.testing.assert_allclose(nor, want_n, rtol=1e-4, atol=1e-4)


def test_offsets_of_64_bits_are_refused_or_used() -> None:
    """Different offsets give different words; the same seed and offset the same."""
    n = 64
    a = np.zeros((2, n), np.uint32)
    b = np.zeros((2, n), np.uint32)
    scratch = np.zeros(n, np.float32)
    draws.interpret[(1,)](7, 0, a, scratch, scratch.copy(), N=n)
    draws.interpret[(1,)](7, 0, b, scratch, scratch.copy(), N=n)
    assert np.array_equal(a, b) and len(set(a[0].tolist())) == n


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942", "gfx950", "gfx1250"])
def test_every_target_compiles_it(arch: str) -> None:
    ck = draws.compile("i64,i32,*u32,*fp32,*fp32", {"N": 128}, arch=arch)
    if arch.startswith("sm_"):
        assert "mul.lo.u64" in ck.asm["ptx"] or "mul.hi.u32" in ck.asm["ptx"]  # umulhi
        if "cubin" in ck.asm.available():
            assert ck.asm["cubin"]
    else:
        assert "v_mul_hi_u32" in ck.asm["amdgcn"]


def test_names_are_module_attributes() -> None:
    for name in ("rand", "randn", "randint", "randint4x", "rand4x", "randn4x", "philox", "philox_impl",
                 "uint_to_uniform_float", "pair_uniform_to_normal"):
        assert getattr(tl, name) is not None
    with pytest.raises(AttributeError):
        tl.no_such_function  # noqa: B018
