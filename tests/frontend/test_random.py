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


# -- 64-bit words: Triton's tests run tl.randint/rand/randn on int64 offsets and call
# uint_to_uniform_float on int64 words; these were refused ("cannot bitcast int64 to uint32")


def philox64_ref(c: list[int], k0: int, k1: int, rounds: int = 10) -> list[int]:
    """Philox4x64 on one counter, in Python integers."""
    m64 = (1 << 64) - 1
    c = list(c)
    for _ in range(rounds):
        p0 = c[0] * 0xD2E7470EE14C6C93
        p2 = c[2] * 0xCA5A826395121157
        c = [(p2 >> 64) ^ c[1] ^ k0, p2 & m64, (p0 >> 64) ^ c[3] ^ k1, p0 & m64]
        k0, k1 = (k0 + 0x9E3779B97F4A7C15) & m64, (k1 + 0xBB67AE8584CAA73B) & m64
    return c


@tlxc.jit
def randint_at(seed, offs_ptr, out_ptr, N: tl.constexpr):
    offs = tl.load(offs_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), tl.randint(seed, offs))


def test_int64_offsets_use_their_high_word() -> None:
    """A 64-bit offset's low word is the first counter word and its high word the second:
    below 2^32 the words equal a 32-bit offset's, above they are new."""
    n, seed = 8, 1234
    offs = np.array([0, 1, 77, 2**32 - 1, 2**32, 2**32 + 77, 5 * 2**32 + 3, 2**62 + 9], np.int64)
    out = np.zeros(n, np.uint32)
    randint_at.interpret[(1,)](seed, offs, out, N=n)
    c = np.zeros((4, n), np.uint32)
    c[0] = (offs & M).astype(np.uint32)
    c[1] = (offs >> 32).astype(np.uint32)
    assert out.tolist() == philox_ref(c, seed, 0)[0].tolist()
    small = np.zeros(4, np.uint32)
    randint_at.interpret[(1,)](seed, offs[:4].astype(np.int32), small, N=4)
    assert small[:3].tolist() == out[:3].tolist()


@tlxc.jit
def philox64_words(seed, c_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    c0 = tl.load(c_ptr + offs)
    r0, r1, r2, r3 = tl.philox(seed, c0, c0 * 0, c0 * 0 + 5, c0 * 0)
    tl.store(out_ptr + offs, r0)
    tl.store(out_ptr + N + offs, r1)
    tl.store(out_ptr + 2 * N + offs, r2)
    tl.store(out_ptr + 3 * N + offs, r3)


def test_philox_on_64_bit_counters_is_philox4x64() -> None:
    n, seed = 4, 0x0000000FCAFEB0BA
    c0 = np.array([0, 1, 2**40, 2**63 + 11], np.uint64)
    out = np.zeros((4, n), np.uint64)
    philox64_words.interpret[(1,)](seed, c0, out, N=n)
    for i in range(n):
        assert out[:, i].tolist() == philox64_ref([int(c0[i]), 0, 5, 0], seed, 0)


@tlxc.jit
def to_uniform(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.random.uint_to_uniform_float(tl.load(x_ptr + offs)))


def test_uniform_of_64_bit_words_stays_below_one() -> None:
    x = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0, 2**62], np.int64)
    x = np.concatenate([x, np.zeros(3, np.int64)])
    out = np.zeros(8, np.float32)
    to_uniform.interpret[(1,)](x, out, N=8)
    assert out[0] == out[1] and 1.0 - np.finfo(np.float32).eps <= out[0] < 1.0
    assert out[2] == 0.0 and out[3] == 0.0
    assert out[4] == np.float32(np.float32(2.0**62) * np.float32(1.0842020432385337e-19))


@tlxc.jit
def mulhi(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(z_ptr + offs, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_umulhi_reads_its_operands_as_unsigned(dtype: type) -> None:
    """Triton's umulhi is mulhiui for any integer type: -1 * -1 has high word 2^N - 2,
    not the signed product's 0; 64-bit operands multiply exactly too."""
    bits = 8 * np.dtype(dtype).itemsize
    um = (1 << bits) - 1
    info = np.iinfo(dtype)
    vals = [info.max, info.min, info.max // 3, 12345, 0, 1, info.max - 7, info.min + 1]
    x = np.array(vals, dtype)
    y = np.array(vals[::-1], dtype)
    z = np.zeros_like(x)
    mulhi.interpret[(1,)](x, y, z, N=8)
    want = [((int(a) & um) * (int(b) & um)) >> bits for a, b in zip(x.tolist(), y.tolist())]
    assert [int(v) & um for v in z.tolist()] == want
    if dtype == np.int32:
        z1 = np.zeros(8, dtype)
        mulhi.interpret[(1,)](np.full(8, -1, dtype), np.full(8, -1, dtype), z1, N=8)
        assert int(z1[0]) == -2  # 0xFFFFFFFE


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942", "gfx950", "gfx1250"])
def test_64_bit_random_compiles_for_every_target(arch: str) -> None:
    ck = randint_at.compile("i64,*i64,*u32", {"N": 128}, arch=arch)
    text = ck.asm["ptx"] if arch.startswith("sm_") else ck.asm["amdgcn"]
    assert text
    if arch.startswith("sm_") and "cubin" in ck.asm.available():
        assert ck.asm["cubin"]
    ck = philox64_words.compile("i64,*u64,*u64", {"N": 128}, arch=arch)
    assert (ck.asm["ptx"] if arch.startswith("sm_") else ck.asm["amdgcn"])
