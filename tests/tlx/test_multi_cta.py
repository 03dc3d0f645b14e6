"""``tl.range(..., multi_cta=True)``: the loop's iterations split over the CTAs of a
cluster and its sums combined across them (``tlxc/ir/passes/multi_cta.py``), in the
interpreter with clusters of 1, 2 and 4 CTAs, in PTX that ptxas accepts, and the loops
that are refused (TLXC-LOOP-002)."""

from __future__ import annotations

import re
from typing import Any

import multi_cta_kernels as K  # tests/tlx/multi_cta_kernels.py
import numpy as np
import pytest

import tlxc
from tlxc.compiler import compile_kernel
from tlxc.kernels.options import compile_options


def _compile(kernel: Any, signature: str, constants: dict[str, Any], arch: str = "sm_90a",
             **opts: Any) -> Any:
    specs, consts = kernel.resolve_aot(signature, constants, None)
    return compile_kernel(kernel, specs, consts, compile_options(opts, arch, None))


@pytest.mark.parametrize("ctas", [1, 2, 4])
@pytest.mark.parametrize("n", [1024, 1000, 96])  # even shares, a ragged end, fewer blocks than CTAs
def test_row_sum_over_a_cluster(ctas: int, n: int) -> None:
    rng = np.random.default_rng(ctas * 7 + n)
    x = rng.standard_normal((3, n)).astype(np.float32)
    out = np.zeros(3, np.float32)
    K.row_sum.interpret[(3, ctas)](x, out, n, n, BLOCK=64, ctas_per_cga=(1, ctas, 1))
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-4)


def test_every_cta_gets_the_same_bits_as_rank_order_partials() -> None:
    # 2 CTAs, 4 blocks of 64: CTA 0 sums blocks 0-1, CTA 1 blocks 2-3; the result is
    # f32(sum of CTA 0's partial + CTA 1's partial), the same in both CTAs
    x = (np.arange(256, dtype=np.float32) * 1.37e-3 + 1e4).reshape(1, 256)
    out = np.zeros(1, np.float32)
    K.row_sum.interpret[(1, 2)](x, out, 256, 256, BLOCK=64, ctas_per_cga=(1, 2, 1))
    one = np.zeros(1, np.float32)
    K.row_sum.interpret[(1, 1)](x[:, :128].copy(), one, 128, 128, BLOCK=64)
    two = np.zeros(1, np.float32)
    K.row_sum.interpret[(1, 1)](x[:, 128:].copy(), two, 128, 128, BLOCK=64)
    assert out[0] == np.float32(one[0] + two[0])


@pytest.mark.parametrize("ctas", [1, 2, 4])
def test_rows_of_a_block_reduced_along_axis_1(ctas: int) -> None:
    rng = np.random.default_rng(ctas)
    m, n = 6, 512
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.zeros(m, np.float32)
    K.block_row_sum.interpret[(2, ctas)](x, out, n, m, n, BM=4, BN=64, ctas_per_cga=(1, ctas, 1))
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("ctas", [1, 2, 4])
def test_a_scalar_accumulator_with_a_start_is_counted_once(ctas: int) -> None:
    out = np.zeros(2, np.int32)
    K.count_from.interpret[(2, ctas)](out, 10, 100, ctas_per_cga=(1, ctas, 1))
    assert out.tolist() == [145, 145]


@pytest.mark.parametrize("ctas", [1, 2, 4])
def test_layer_norm_like_tutorial_15(ctas: int) -> None:
    rng = np.random.default_rng(5)
    m, n = 2, 2048
    x = rng.standard_normal((m, n)).astype(np.float16)
    w = rng.standard_normal(n).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    y = np.zeros_like(x)
    K.layer_norm.interpret[(m, ctas)](x, y, w, b, n, n, 1e-5, BLOCK=256, ctas_per_cga=(1, ctas, 1))
    xf = x.astype(np.float32)
    ref = (xf - xf.mean(1, keepdims=True)) / np.sqrt(xf.var(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(y.astype(np.float32), ref, atol=2e-2, rtol=1e-2)


def test_combine_inside_an_outer_loop() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2 * 3, 300)).astype(np.float32)
    out = np.zeros(6, np.float32)
    K.row_sum_in_loop.interpret[(2, 4)](x, out, 300, 300, REPS=3, BLOCK=32, ctas_per_cga=(1, 4, 1))
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-4)
    ck = _compile(K.row_sum_in_loop, "*fp32,*fp32,i32,i32", {"REPS": 3, "BLOCK": 32}, ctas_per_cga=(1, 4, 1))
    # stores, barrier, loads, barrier again before the next round's stores
    assert ck.asm["ir"].count("cluster_barrier") == 2


def test_without_a_cluster_the_loop_is_unchanged() -> None:
    plain = _compile(K.row_sum, "*fp32,*fp32,i32,i32", {"BLOCK": 64})
    text = plain.asm["ir"]
    assert "multi_cta =" not in text and "cluster_" not in text and "remote_store" not in text
    # num_ctas makes a cluster that runs one program: nothing to split either
    nc = _compile(K.row_sum, "*fp32,*fp32,i32,i32", {"BLOCK": 64}, num_ctas=2)
    assert "cluster_cta_rank" not in nc.asm["ir"]


def test_ptx_of_a_cluster_of_four() -> None:
    ck = _compile(K.layer_norm, "*fp16,*fp16,*fp16,*fp16,i32,i32,fp32", {"BLOCK": 256}, ctas_per_cga=(1, 4, 1))
    ir = ck.asm["ir"]
    assert ir.count("remote_store") == 8 and ir.count("local_alloc") == 2  # 4 peers x 2 sums
    ptx = ck.asm["ptx"]
    assert len(re.findall(r"mapa\.shared::cluster\.u32", ptx)) >= 8
    assert len(re.findall(r"st\.shared::cluster\.f32", ptx)) >= 8
    assert re.search(r"barrier\.cluster\.arrive", ptx) and re.search(r"barrier\.cluster\.wait", ptx)
    assert "%cluster_ctarank" in ptx
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_amd_without_clusters_compiles_the_plain_loop() -> None:
    ck = _compile(K.row_sum, "*fp32,*fp32,i32,i32", {"BLOCK": 64}, arch="gfx942")
    assert "cluster" not in ck.asm["ir"]
    assert ck.asm["llir"]


def test_amd_refuses_clusters() -> None:
    with pytest.raises(tlxc.CompilationError, match="clusters are not supported on gfx942"):
        _compile(K.row_sum, "*fp32,*fp32,i32,i32", {"BLOCK": 64}, arch="gfx942", ctas_per_cga=(1, 2, 1))


_BAD = {
    "max": ("""
@tlxc.jit
def k(X, Out, N):
    acc = tl.zeros([64], dtype=tl.float32)
    for off in tl.range(0, N, 64, multi_cta=True):
        acc = tl.maximum(acc, tl.load(X + off + tl.arange(0, 64)))  # ERR tl.maximum
    tl.store(Out, tl.sum(acc, axis=0))
""", "updated with 'maximum'"),
    "max_reduce": ("""
@tlxc.jit
def k(X, Out, N):
    acc = tl.zeros([64], dtype=tl.float32)
    for off in tl.range(0, N, 64, multi_cta=True):
        acc += tl.load(X + off + tl.arange(0, 64))
    tl.store(Out, tl.max(acc, axis=0))  # ERR tl.max
""", "tl.max uses a tile accumulated"),
    "store_tile": ("""
@tlxc.jit
def k(X, Out, N):
    acc = tl.zeros([64], dtype=tl.float32)
    for off in tl.range(0, N, 64, multi_cta=True):
        acc += tl.load(X + off + tl.arange(0, 64))
    tl.store(Out + tl.arange(0, 64), acc)  # ERR tl.store
""", "'store' uses a tile accumulated"),
    "running_sum": ("""
@tlxc.jit
def k(X, Out, N):
    acc = tl.zeros([64], dtype=tl.float32)
    for off in tl.range(0, N, 64, multi_cta=True):
        acc += tl.load(X + off + tl.arange(0, 64))
        tl.store(Out + off + tl.arange(0, 64), acc)  # ERR tl.store
    tl.store(Out, tl.sum(acc, axis=0))
""", "reads the running sum"),
    "nested": ("""
@tlxc.jit
def k(X, Out, N):
    for i in tl.range(0, N, 1, multi_cta=True):
        for j in tl.range(0, N, 1, multi_cta=True):  # ERR for
            tl.store(Out + i * N + j, 1.0)
""", "inside another multi_cta loop"),
}


@pytest.mark.parametrize("case", sorted(_BAD))
@pytest.mark.parametrize("cluster", [None, (2, 1, 1)], ids=["no-cluster", "cluster"])
def test_loops_that_cannot_be_split_are_refused(case: str, cluster: Any, load_kernels: Any) -> None:
    source, message = _BAD[case]
    mod = load_kernels(source)
    line = next(i for i, s in enumerate(source.splitlines()) if "# ERR " in s) + 4  # 3 header lines
    opts = {"ctas_per_cga": cluster} if cluster else {}
    with pytest.raises(tlxc.CompilationError) as info:
        mod.k.compile("*fp32,*fp32,i32", arch="sm_90a", **opts)
    assert info.value.code == "TLXC-LOOP-002" and message in str(info.value), str(info.value)
    assert info.value.loc.line == line


def test_multi_cta_must_be_a_constant_bool(load_kernels: Any) -> None:
    mod = load_kernels("""
@tlxc.jit
def k(Out, N):
    for i in tl.range(0, N, 1, multi_cta=N > 0):
        tl.store(Out + i, 1.0)
""")
    with pytest.raises(tlxc.CompilationError) as info:
        mod.k.compile("*fp32,i32", arch="sm_90a")
    assert info.value.code == "TLXC-CONSTEXPR-001" and "multi_cta" in str(info.value)
