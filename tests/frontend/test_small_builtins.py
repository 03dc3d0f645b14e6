"""Builtins and spellings Triton users write that tlxc took late: ``tl.static_range`` with
a step, ``cache_modifier=None`` / ``eviction_policy=None``, the tensor methods ``cast``,
``squeeze`` and ``unsqueeze``, ``tl.pi32_t``, ``tl.to_tensor``; and the Triton names tlxc
does not have yet, which say so (TLXC-NAME-002)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import tlxc
import tlxc.language as tl
import tlxc.tlx as tlx


@tlxc.jit
def spellings(x, y, N: tl.constexpr):
    acc = tl.zeros((N,), tl.float32)
    for i in tl.static_range(1, 10, 3):  # 1, 4, 7
        acc += i
    v = tl.load(x + tl.arange(0, N), cache_modifier=None, eviction_policy=None)
    w = v.cast(tl.float32).unsqueeze(0).squeeze(0)
    w = tl.squeeze(tl.unsqueeze(w, 1), 1)  # the tl.* spellings (Triton's test_standard)
    one = tl.to_tensor(1.0)
    tl.store(y + tl.arange(0, N), acc + w + one, cache_modifier=None)


@tlxc.jit
def through_pi32(p, y):
    q = p.to(tl.pi32_t)
    tl.store(y, tl.load(q))


def test_spellings_in_the_interpreter() -> None:
    x = np.arange(16, dtype=np.int32)
    y = np.zeros(16, np.float32)
    spellings.interpret[(1,)](x, y, N=16)
    np.testing.assert_array_equal(y, x + 12.0 + 1.0)


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
def test_spellings_compile(arch: str) -> None:
    ck = spellings.compile("*i32,*fp32", {"N": 128}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm_") else "amdgcn"]


def test_pi32_t_is_a_pointer_to_int32() -> None:
    assert tl.pi32_t == tl.pointer_type(tl.int32)
    y = np.zeros(1, np.int32)
    through_pi32.interpret[(1,)](np.array([41], np.int32), y)
    assert y[0] == 41


SQUEEZE = """
@tlxc.jit
def k(x):
    v = tl.load(x + tl.arange(0, 16))
    w = v.unsqueeze(1).squeeze(0)
    tl.store(x + tl.arange(0, 16), w)
"""


def test_squeeze_of_a_dimension_that_is_not_1(load_kernels: Any) -> None:
    m = load_kernels(SQUEEZE)
    with pytest.raises(tlxc.CompilationError, match=r"squeeze\(0\): dimension 0 of a tile of shape \[16, 1\] has "
                                                    r"size 16, not 1"):
        m.k.compile("*fp32")


# The public names of Triton 3.6's triton.language (dir() without the private ones), as
# a user reaches them: each is in tlxc.language or says it is not supported yet.
TRITON_TL_NAMES = """
PropagateNan TRITON_MAX_TENSOR_NUMEL abs add advance arange argmax argmin associative_scan assume atomic_add
atomic_and atomic_cas atomic_max atomic_min atomic_or atomic_xchg atomic_xor bfloat16 bitonic_merge block_type
broadcast broadcast_to cast cat cdiv ceil clamp condition const constexpr constexpr_type core cos cumprod cumsum
debug_barrier device_assert device_print div_rn dot dot_scaled dtype erf exp exp2 expand_dims extra fdiv flip float16
float32 float64 float8e4b15 float8e4b8 float8e4nv float8e5 float8e5b16 floor fma full gather histogram
inline_asm_elementwise int1 int16 int32 int64 int8 interleave join load load_tensor_descriptor log log2
make_block_ptr make_tensor_descriptor map_elementwise math max max_constancy max_contiguous maximum min minimum mul
multiple_of num_programs pair_uniform_to_normal permute philox philox_impl pi32_t pointer_type program_id rand rand4x
randint randint4x randn randn4x random range ravel reduce reduce_or reshape rsqrt sigmoid sin slice softmax sort
split sqrt sqrt_rn standard static_assert static_print static_range store store_tensor_descriptor str_to_ty sub sum
swizzle2d target_info tensor tensor_descriptor tensor_descriptor_type topk trans tuple tuple_type uint16 uint32
uint64 uint8 uint_to_uniform_float umulhi view void where xor_sum zeros zeros_like
""".split()


@pytest.mark.parametrize("name", TRITON_TL_NAMES)
def test_every_triton_name_is_there_or_says_not_yet(name: str) -> None:
    if name in tl.NOT_YET:
        with pytest.raises(AttributeError, match=f"tl.{name} is not supported by tlxc yet"):
            getattr(tl, name)
    else:
        assert getattr(tl, name) is not None


def test_every_triton_name_resolves_in_a_fresh_process() -> None:
    # a submodule (tl.standard, tl.random) must not depend on another test having imported it
    code = ("import tlxc.language as tl\n"
            f"for n in {sorted(set(TRITON_TL_NAMES) - tl.NOT_YET)!r}:\n"
            "    assert getattr(tl, n) is not None, n\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", sorted(tl.NOT_YET))
def test_names_tlxc_lacks_say_not_supported_yet(load_kernels: Any, name: str) -> None:
    m = load_kernels(f"""
@tlxc.jit
def k(x):
    f = tl.{name}
""")
    with pytest.raises(tlxc.CompilationError) as info:
        m.k.compile("*fp32")
    assert info.value.code == "TLXC-NAME-002"
    assert f"tl.{name} is not supported by tlxc yet" in str(info.value)


@tlxc.jit
def functional_operators(x, y, N: tl.constexpr):
    a = tl.load(x + tl.arange(0, N))
    pair = (a, a)
    tl.static_assert(isinstance(pair, tl.tuple))
    tl.static_assert(N <= tl.TRITON_MAX_TENSOR_NUMEL)
    tl.store(y + tl.arange(0, N), tl.mul(tl.sub(tl.add(a, 1), 0.5), 2, sanitize_overflow=False))


def test_add_sub_mul_as_functions() -> None:
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    functional_operators.interpret[(1,)](x, y, N=4)
    np.testing.assert_array_equal(y, (x + 1 - 0.5) * 2)


SLICES = """
@tlxc.jit
def k(x, y, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    w = v[tl.slice(None, None, None), None]      # v[:, None]
    t = (1, 2, 3, 4)[tl.slice(1, 3, None)]        # (2, 3)
    tl.store(y + tl.arange(0, N)[:, None], w + t[0] * t[1])
"""


def test_tl_slice_is_a_compile_time_slice(load_kernels: Any) -> None:
    m = load_kernels(SLICES)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    m.k.interpret[(1,)](x, y, N=8)
    np.testing.assert_array_equal(y, x + 6)


@tlxc.jit
def interleaved(x, y, out, N: tl.constexpr):
    a = tl.load(x + tl.arange(0, N))
    b = tl.load(y + tl.arange(0, N))
    tl.store(out + tl.arange(0, 2 * N), tl.interleave(a, b))


@tlxc.jit
def interleaved_2d(x, y, out, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    c = tl.interleave(tl.load(x + offs), tl.load(y + offs))
    tl.store(out + tl.arange(0, R)[:, None] * (2 * C) + tl.arange(0, 2 * C)[None, :], c)


def test_interleave() -> None:
    x = np.arange(8, dtype=np.float32)
    y = -np.arange(8, dtype=np.float32) - 100
    out = np.zeros(16, np.float32)
    interleaved.interpret[(1,)](x, y, out, N=8)
    np.testing.assert_array_equal(out, np.stack([x, y], -1).ravel())
    x2 = np.arange(32, dtype=np.int32).reshape(4, 8)
    o2 = np.zeros((4, 16), np.int32)
    interleaved_2d.interpret[(1,)](x2, -x2, o2, R=4, C=8)
    np.testing.assert_array_equal(o2, np.stack([x2, -x2], -1).reshape(4, 16))
    for arch in ("sm_90a", "gfx942"):
        ck = interleaved_2d.compile("*i32,*i32,*i32", {"R": 32, "C": 64}, arch=arch)
        assert ck.asm["ptx" if arch.startswith("sm_") else "amdgcn"]


@tlxc.jit
def row_gather(x, y, N: tl.constexpr):
    # rows of 8 equal indices, promised to the compiler: each thread's 8 loads of one row
    # index share one address computation, as with a broadcast
    rows = tl.max_constancy(tl.arange(0, N) // 8, 8)
    tl.store(y + tl.arange(0, N), tl.load(x + rows))


def test_max_constancy_is_a_promise_that_changes_no_value() -> None:
    x = np.arange(16, dtype=np.float32) * 3
    y = np.zeros(128, np.float32)
    row_gather.interpret[(1,)](x, y, N=128)
    np.testing.assert_array_equal(y, x[np.arange(128) // 8])


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a", "gfx942", "gfx950", "gfx1250"])
def test_max_constancy_compiles(arch: str) -> None:
    ck = row_gather.compile("*fp32:16,*fp32:16", {"N": 128}, arch=arch)
    assert ck.asm["ptx" if arch.startswith("sm_") else "llir"]


@tlxc.jit
def static_range_keywords(z, N: tl.constexpr, STEP: tl.constexpr):
    a = 0
    for i in tl.static_range(0, N, step=STEP):  # Triton's test_static_range: the step by keyword
        a += i
    b = 0
    for i in tl.static_range(N, step=STEP):  # one bound and a step: from 0
        b += i
    c = 0
    for i in tl.static_range(arg1=2, arg2=5):
        c += i
    tl.store(z, a)
    tl.store(z + 1, b)
    tl.store(z + 2, c)


def test_static_range_takes_tritons_keywords() -> None:
    z = np.zeros(3, np.int32)
    static_range_keywords.interpret[(1,)](z, N=100, STEP=7)
    assert z.tolist() == [sum(range(0, 100, 7)), sum(range(0, 100, 7)), 2 + 3 + 4]


@pytest.mark.parametrize("call, message", [
    ("tl.static_range(0, 4, stride=2)", "unexpected keyword argument 'stride'"),
    ("tl.static_range(0, 4, arg2=2)", "got 'arg2' twice"),
])
def test_static_range_keyword_errors(load_kernels: Any, call: str, message: str) -> None:
    mod = load_kernels(f"""
        @tlxc.jit
        def k(z):
            for i in {call}:
                tl.store(z, i)
        """)
    with pytest.raises(tlxc.CompilationError, match=message) as info:
        mod.k.compile("*i32", {}, arch="sm_90a")
    assert info.value.loc is not None and info.value.loc.line == 7  # the loop line (after the loader's header)


@tlxc.jit
def one_element_condition(x):
    condition = tl.load(x + tl.arange(0, 1)) > 42  # a tile of one element, used as a scalar
    if condition:
        tl.store(x, 42)


@pytest.mark.parametrize("start, want", [(50, 42), (7, 7)])
def test_an_if_on_a_one_element_tile(start: int, want: int) -> None:
    x = np.full(1, start, np.int32)
    one_element_condition.interpret[(1,)](x)
    assert x[0] == want
    ptx = one_element_condition.compile("*i32", {}, arch="sm_90a").asm["ptx"]
    assert "bra" in ptx and "st.global" in ptx


@tlxc.jit
def sums_in_a_dtype(out, init, IN: tl.constexpr, OUT: tl.constexpr):
    x = tl.full((32, 32), init, dtype=IN)
    tl.store(out, tl.sum(x, dtype=OUT).to(tl.int32))


@pytest.mark.parametrize("init, IN, OUT, want", [
    (1, tl.int1, None, 1024), (1, tl.int1, tl.int1, 0), (7, tl.int8, tl.int8, (7 * 1024) % 256),
    (1, tl.int1, tl.int32, 1024)])
def test_sum_with_a_dtype(init: int, IN: Any, OUT: Any, want: int) -> None:
    """Triton's test_sum_dtype: an i1 sum is i1 addition, which wraps (the parity)."""
    out = np.zeros(1, np.int32)
    sums_in_a_dtype.interpret[(1,)](out, init, IN=IN, OUT=OUT)
    assert out[0] == want
    for arch in ("sm_90a", "gfx942"):  # i1 reductions had no code on either
        ck = sums_in_a_dtype.compile("*i32,i32", {"IN": IN, "OUT": OUT}, arch=arch)
        ck.asm["ptx" if arch.startswith("sm") else "llir"]


@tlxc.jit
def count_threads(out, GET: tl.constexpr):
    n: tl.constexpr = GET()  # Triton's test_num_threads passes the builtin itself
    tl.store(out + tl.arange(0, n), 1)
    tl.store(out + n, tl.extra.cuda.num_warps())


@pytest.mark.parametrize("warps", [1, 4, 8])
def test_num_threads_and_num_warps_are_compile_time(warps: int) -> None:
    out = np.zeros(32 * warps + 1, np.int32)
    count_threads.interpret[(1,)](out, tl.extra.cuda.num_threads, num_warps=warps)
    assert out[:-1].sum() == 32 * warps and out[-1] == warps


@tlxc.jit
def timed_smid(out, t, N: tl.constexpr):
    start = tl.extra.cuda.globaltimer()
    for i in range(N):
        tl.store(out + tl.program_id(0), tl.load(out + tl.program_id(0)) + i)
    end = tl.extra.cuda.globaltimer()
    tl.store(out + tl.program_id(0), tl.extra.cuda.smid())
    tl.store(t + 2 * tl.program_id(0), start)
    tl.store(t + 2 * tl.program_id(0) + 1, end)


def test_smid_and_globaltimer() -> None:
    """Triton's test_smid / test_globaltimer: the SM index (0 for every program on the CPU)
    and a nanosecond timer that moves forward."""
    out, t = np.full(4, -1, np.int32), np.zeros(8, np.int64)
    timed_smid.interpret[(4,)](out, t, N=50)
    # (under TLXC_TEST_ON_GPU the launches run on the GPU: real SM indices)
    on_gpu = os.environ.get("TLXC_TEST_ON_GPU") not in (None, "", "0")
    assert ((out >= 0) & (out < 1024)).all() if on_gpu else (out == 0).all()
    assert (t[1::2] > t[0::2]).all()
    ptx = timed_smid.compile("*i32,*i64", {"N": 50}, arch="sm_90a").asm["ptx"]
    assert ptx.count("%smid") == 1 and ptx.count("%globaltimer") == 2
    with pytest.raises(tlxc.CompilationError, match="smid / globaltimer") as info:
        timed_smid.compile("*i32,*i64", {"N": 50}, arch="gfx942").asm["llir"]
    assert info.value.code == "TLXC-TLX-006"


@tlxc.jit
def store_addresses(c_ptr, a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs).to(tl.pi32_t)  # integers seen as pointers (Triton's test_where)
    b = tl.load(b_ptr + offs).to(tl.pi32_t)
    tl.store(out_ptr + offs, tl.where(tl.load(c_ptr + offs), a, b))  # stored back as int64


def test_pointers_store_through_an_int64_pointer() -> None:
    c = np.array([1, 0, 1, 0], np.bool_)
    a, b = np.arange(4, dtype=np.int64) + 100, np.arange(4, dtype=np.int64) + 200
    out = np.zeros(4, np.int64)
    store_addresses.interpret[(1,)](c, a, b, out, N=4)
    assert out.tolist() == [100, 201, 102, 203]
    for arch in ("sm_90a", "gfx942"):
        ck = store_addresses.compile("*i1,*i64,*i64,*i64", {"N": 4}, arch=arch)
        assert ck.asm["ptx" if arch.startswith("sm") else "llir"]


@tlxc.jit
def store_address_wrong(x, out):
    tl.store(out, x)  # a pointer through a pointer to int32: not an address-sized integer


def test_a_pointer_does_not_store_into_int32() -> None:
    with pytest.raises(tlxc.CompilationError, match="cannot store"):
        store_address_wrong.compile("*fp32,*i32", {}, arch="sm_90a")


@tlxc.jit
def guarded_store(x):
    # every test is decided at compile time except the load's, which the `and` short-circuits
    if (x is not None) and hasattr(x, "dtype") and isinstance(x.dtype, tl.pointer_type) \
            and x.dtype.element_ty == tl.int32 and tl.load(x) > 42:
        tl.store(x, 42)
    tl.static_assert(not hasattr(x, "no_such_attribute"))


@pytest.mark.parametrize("value, dtype, want", [(37.5, np.float32, 37.5), (-7, np.int32, -7), (100000, np.int32, 42),
                                                (100000, np.int64, 100000)])
def test_hasattr_on_runtime_values(value: float, dtype: Any, want: float) -> None:
    x = np.full(1, value, dtype)
    guarded_store.interpret[(1,)](x)
    assert x[0] == want
    guarded_store.interpret[(1,)](None)  # a None and a plain int take the compile-time paths
    guarded_store.interpret[(1,)](2)


@tlxc.jit
def bool_reductions(x_ptr, out, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N)) != 0
    tl.store(out, tl.xor_sum(x, 0).to(tl.int32))  # Triton's test_reduce xor_sum over bool
    tl.store(out + 1, tl.max(x, 0).to(tl.int32))
    tl.store(out + 2, tl.min(x, 0).to(tl.int32))
    tl.store(out + 3, tl.argmax(x, 0))
    tl.store(out + 4, tl.sum(x, 0).to(tl.int32))


@pytest.mark.parametrize("bits", [[0, 1, 1, 0, 1, 0, 0, 0], [1] * 8, [0] * 8])
def test_reductions_of_booleans(bits: list[int]) -> None:
    x = np.array(bits, np.int32)
    out = np.zeros(5, np.int32)
    bool_reductions.interpret[(1,)](x, out, N=8)
    assert out.tolist() == [sum(bits) % 2, max(bits), min(bits), int(np.argmax(x)), sum(bits)]
    for arch in ("sm_90a", "gfx942"):  # no target reduces i1 itself: they run in int32
        bool_reductions.compile("*i32,*i32", {"N": 8}, arch=arch).asm["ptx" if arch.startswith("sm") else "llir"]


@tlxc.jit
def hinted_copy(dst, src, off, N, BLOCK: tl.constexpr, HINT: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + tl.load(off)
    if HINT:
        tl.max_contiguous(tl.multiple_of(offsets, 1024), 1024)  # a statement: the result is dropped
    tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < N), mask=offsets < N)
    for i in range(2):
        tl.multiple_of(offsets, 1024)  # in a loop body: the value outside keeps its definition
    tl.store(dst + offsets + N, tl.load(src + offsets, mask=offsets < N), mask=offsets < N)


@pytest.mark.parametrize("hint", [True, False])
def test_a_hint_annotates_the_value_itself(hint: bool) -> None:
    """As in Triton (test_vectorization_hints), ``tl.multiple_of(x, ...)`` as a statement
    still tells the compiler about ``x``: its loads become 16-byte vectors."""
    ptx = hinted_copy.compile("*fp32:16,*fp32:16,*i32:16,i32:16", {"BLOCK": 1024, "HINT": hint},
                              arch="sm_90a").asm["ptx"]
    assert ("ld.global.v4.b32" in ptx) == hint
    src, dst = np.arange(1024, dtype=np.float32), np.zeros(2048, np.float32)
    hinted_copy.interpret[(1,)](dst, src, np.zeros(1, np.int32), 1024, BLOCK=1024, HINT=hint)
    np.testing.assert_array_equal(dst, np.concatenate([src, src]))


def test_str_to_ty() -> None:
    """Triton's test helpers build dtypes from signature spellings with tl.str_to_ty."""
    assert tl.str_to_ty("fp32") is tl.float32 and tl.str_to_ty("u8") is tl.uint8 and tl.str_to_ty("int16") is tl.int16
    assert tl.str_to_ty("*fp16") == tl.pointer_type(tl.float16)
    with pytest.raises(ValueError, match="unknown type 'fp7'"):
        tl.str_to_ty("fp7")


CONST_POINTERS = """
@tlxc.jit
def copy(src: tl.const, dst, other: tl.const, n, TO_OTHER: tl.constexpr, ATOMIC: tl.constexpr):
    offs = tl.arange(0, 8)
    v = tl.load(src + offs, mask=offs < n)      # reading through a const pointer is fine
    out = other if TO_OTHER else dst
    if ATOMIC:
        tl.atomic_add(out + offs, v, mask=offs < n)
    else:
        tl.store(out + offs, v, mask=offs < n)
"""


@pytest.mark.parametrize("atomic", [False, True])
def test_const_pointers_are_read_only(load_kernels: Any, atomic: bool) -> None:
    """Triton's ``tl.const``: a store or an atomic through the parameter, or through pointer
    arithmetic on it, is an error at the user's line (test_core's test_const)."""
    m = load_kernels(CONST_POINTERS)
    x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    m.copy.interpret[(1,)](x, y, x, 8, TO_OTHER=False, ATOMIC=atomic)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(tlxc.CompilationError) as info:
        m.copy.compile("*fp32,*fp32,*fp32,i32", {"TO_OTHER": True, "ATOMIC": atomic}, arch="sm_90a")
    err = info.value
    want = "writes through a constant pointer" if atomic else "Cannot store to a constant pointer"
    assert want in err.error_message and err.code == "TLXC-TYPE-001"
    assert err.loc is not None and err.loc.line == (11 if atomic else 13)  # after the loader's 3-line header


CONST_MERGES = """
@tlxc.jit
def pick(a, b, c):
    if c:
        return b
    else:
        return a


@tlxc.jit
def merge(src: tl.const, dst, other: tl.const, choose, HOW: tl.constexpr):
    offs = tl.arange(0, 8)
    if HOW == "ternary":
        out = other if choose else dst
    elif HOW == "call":
        out = pick(dst, other, choose)
    elif HOW == "if":
        if choose:
            out = other
        else:
            out = dst
    else:  # two read-only pointers merge into a read-only one
        out = other if choose else src
    tl.store(out + offs, tl.load(src + offs))
"""


@pytest.mark.parametrize("how, message", [
    ("ternary", "Ternary expression with dynamic condition has inconsistent type"),
    ("call", "Return type mismatch"), ("if", "Mismatched type for out"),
    ("both_const", "Cannot store to a constant pointer")])
def test_a_const_pointer_does_not_merge_with_a_writable_one(load_kernels: Any, how: str, message: str) -> None:
    """Under a runtime condition a tl.const pointer and a writable one are different types,
    as in Triton (test_const's if, ternary and call modes)."""
    m = load_kernels(CONST_MERGES)
    with pytest.raises(tlxc.CompilationError) as info:
        m.merge.compile("*fp32,*fp32,*fp32,i1", {"HOW": how}, arch="sm_90a")
    assert message in info.value.error_message and info.value.code in ("TLXC-TYPE-001", "TLXC-TYPE-002")


@tlxc.jit
def warps_per_task(out):
    with tlx.async_tasks():
        with tlx.async_task("default"):
            tl.store(out, tl.extra.cuda.num_warps())
        with tlx.async_task(num_warps=2):
            tl.store(out + 1, tl.extra.cuda.num_threads())


def test_num_warps_inside_an_async_task_is_the_tasks() -> None:
    out = np.zeros(2, np.int32)
    warps_per_task.interpret[(1,)](out, num_warps=4)
    assert out.tolist() == [4, 64]


WHILE_CONDITION = """
@tlxc.jit
def triangle(out, n):
    i = 0
    acc = 0
    while tl.condition(i < n, disable_licm=True):
        acc += i
        i += 1
    tl.store(out, acc)

@tlxc.jit
def misused(out, n):
    if tl.condition(n > 0):
        tl.store(out, 1)
"""


def test_while_tl_condition_is_the_loops_condition(load_kernels: Any) -> None:
    m = load_kernels(WHILE_CONDITION)
    for n in (0, 1, 10):
        out = np.zeros(1, np.int32)
        m.triangle.interpret[(1,)](out, n)
        assert out[0] == n * (n - 1) // 2
    assert "while" in m.triangle.compile("*i32,i32", arch="sm_90a").asm["ir"]


def test_tl_condition_outside_a_while_is_refused_at_its_line(load_kernels: Any) -> None:
    m = load_kernels(WHILE_CONDITION)
    with pytest.raises(tlxc.CompilationError, match="is the condition of a while loop") as ei:
        m.misused.compile("*i32,i32", arch="sm_90a")
    assert "if tl.condition(n > 0):" in str(ei.value)


TARGET_INFO = """
from tlxc.language.target_info import cuda_capability_geq, is_hip

@tlxc.jit
def which(out):
    if tl.target_info.is_cuda():
        tl.store(out, 1 + 10 * cuda_capability_geq(9, 0) + 100 * cuda_capability_geq(10, 0))
    if is_hip():
        tl.store(out, 2 + 10 * tl.target_info.is_hip_cdna3() + 100 * tl.target_info.is_hip_cdna4())
"""


@pytest.mark.parametrize("arch, code", [("sm_90a", 11), ("sm_100a", 111), ("gfx942", 12), ("gfx950", 102),
                                        ("gfx1250", 2)])
def test_target_info_answers_for_the_target_compiled_for(load_kernels: Any, arch: str, code: int) -> None:
    m = load_kernels(TARGET_INFO)
    ir = m.which.compile("*i32", arch=arch).asm["ir"]
    assert re.findall(r"constant \{value = (\d+)\} : i32", ir) == [str(code)]


def test_target_info_in_the_interpreter_is_sm_90a(load_kernels: Any) -> None:
    m = load_kernels(TARGET_INFO)
    out = np.zeros(1, np.int32)
    m.which.interpret[(1,)](out)
    assert out[0] == 11
