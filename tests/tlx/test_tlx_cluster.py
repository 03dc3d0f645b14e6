"""Clusters: the interpreter's ranks, the PTX of every cluster op (ptxas accepts it), the
compiler's own cluster syncs, and the errors. The exchanges run on the H200 in
tests/gpu/test_cluster_gpu.py; the interpreter refuses what reaches into a peer."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import tlx_cluster_kernels as K  # tests/tlx/tlx_cluster_kernels.py

import tlxc
from tlxc.compiler import compile_kernel
from tlxc.kernels.options import compile_options


def _compile(kernel: Any, signature: str, constants: dict[str, Any], cluster: Any = (2, 1, 1)) -> Any:
    specs, consts = kernel.resolve_aot(signature, constants, None)
    options = compile_options({"ctas_per_cga": cluster} if cluster else {}, "sm_90a", None)
    return compile_kernel(kernel, specs, consts, options)


def _lines(ptx: str, pattern: str) -> list[str]:
    stripped = (line.strip().rstrip(";") for line in ptx.splitlines())
    return [line for line in stripped if re.search(pattern, line)]


@pytest.mark.interpreter_only
def test_ranks_follow_the_cluster_shape_in_the_interpreter() -> None:
    out = np.zeros((8, 2), np.int32)
    K.ranks.interpret[(4, 2)](out, ctas_per_cga=(2, 1, 1))
    assert out.tolist() == [[0, 2], [1, 2]] * 4
    K.ranks.interpret[(4, 2)](out, ctas_per_cga=(2, 2, 1))
    # program (x, y): rank x % 2 + 2 (y % 2), in the order the kernel numbers programs (x fastest)
    assert out[:, 0].tolist() == [0, 1, 0, 1, 2, 3, 2, 3] and set(out[:, 1]) == {4}
    K.ranks.interpret[(4, 2)](out)
    assert out.tolist() == [[0, 1]] * 8


@pytest.mark.interpreter_only
def test_the_interpreter_refuses_to_reach_a_peer() -> None:
    x, y = np.ones(512, np.float32), np.zeros(512, np.float32)
    with pytest.raises(tlxc.InterpreterError) as info:
        K.swap_async.interpret[(2,)](x, y, N=256, ctas_per_cga=(2, 1, 1))
    assert info.value.code == "TLXC-INTERP-008" and "async_remote_store" in str(info.value)


def test_async_remote_store_ptx() -> None:
    ck = _compile(K.swap_async, "*fp32:16,*fp32:16", {"N": 256})
    ptx = ck.asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx
    assert _lines(ptx, "cluster_ctarank") == ["mov.u32 %r0, %cluster_ctarank"]
    # after the mbarrier init: the fence and a cluster sync (peers may arrive on it), not bar.sync 0
    init = ptx.index("mbarrier.init")
    assert ptx.index("fence.mbarrier_init.release.cluster", init) < ptx.index("barrier.cluster.arrive.relaxed.aligned",
                                                                                 init)
    assert len(_lines(ptx, r"mapa\.shared::cluster\.u32")) == 2  # the buffer and the barrier of the peer
    stores = _lines(ptx, r"st\.async\.shared::cluster\.mbarrier::complete_tx::bytes")
    assert stores and all(".f32 [" in s for s in stores)
    # the user's cluster barrier, and the compiler's before exit (a peer may still write here)
    assert len(_lines(ptx, r"^barrier\.cluster\.wait\.aligned")) == 3
    assert _lines(ptx, r"barrier\.cluster")[-2:] == ["barrier.cluster.arrive.aligned", "barrier.cluster.wait.aligned"]
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_remote_store_and_arrive_ptx() -> None:
    ptx = _compile(K.swap_sync, "*fp32:16,*fp32:16", {"N": 128}).asm["ptx"]
    assert _lines(ptx, r"st\.shared::cluster") and not _lines(ptx, r"st\.async")
    ptx = _compile(K.remote_arrive, "*fp32:16,*fp32:16", {"N": 128}).asm["ptx"]
    assert _lines(ptx, r"mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64 _, \[%r\d+\]")


def test_multicast_tma_ptx() -> None:
    ck = _compile(K.multicast_tile, "tensordesc<fp16[64,64]>,*fp16:16", {"BM": 64, "BN": 64, "OTHER": 1})
    loads = _lines(ck.asm["ptx"], r"cp\.async\.bulk\.tensor")
    assert loads and all(".multicast::cluster" in x and x.endswith(", %h0") for x in loads)
    assert _lines(ck.asm["ptx"], r"mov\.b16 %h0, 3")  # CTAs 0 and 1
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_an_unclustered_kernel_compiles_no_cluster_sync() -> None:
    ptx = _compile(K.ranks, "*i32:16", {}, cluster=None).asm["ptx"]
    assert "reqnctapercluster" not in ptx and "barrier.cluster" not in ptx and "%cluster_ctarank" in ptx


def test_a_peer_in_a_kernel_without_clusters_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        _compile(K.unclustered_arrive, "*fp32", {}, cluster=None).asm["ptx"]
    assert info.value.code == "TLXC-TLX-008" and "1cta mode" in str(info.value)
    assert "tlx.barrier_arrive(bars[0], 1, remote_cta_rank=0)" in str(info.value)


def test_barrier_wait_on_a_remote_view_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        _compile(K.wait_on_remote_view, "", {})
    assert info.value.code == "TLXC-TLX-002" and "barrier_wait on a remote view" in str(info.value)


def test_multicast_outside_the_cluster_is_an_error() -> None:
    with pytest.raises(tlxc.CompilationError, match="multicast target 2 is outside the cluster of 2"):
        _compile(K.multicast_tile, "tensordesc<fp16[64,64]>,*fp16:16", {"BM": 64, "BN": 64, "OTHER": 2}).asm["ptx"]


def test_clusters_are_nvidia_only() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        K.ranks.compile("*i32:16", arch="gfx950").asm["amdgcn"]
    assert info.value.code == "TLXC-TLX-006" and "cluster" in str(info.value)
