"""TMA multicast to cluster ranks known only at run time (TLX's 2-CTA GEMM multicasts
each half of B to ``[cta_id, cta_id ^ 1]``): the frontend builds the CTA mask as an i32
scalar operand of ``tma_load``, the PTX code generator narrows it to the 16-bit mask of
``.multicast::cluster``, and the interpreter, which runs the CTAs of a cluster together,
lands the block in each CTA the mask names."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import tlxc.language.extra.tlx as tlx

import tlxc
import tlxc.language as tl
from tlxc.ir import ops
from tlxc.ir.parser import parse_ir
from tlxc.ir.printer import print_ir


@tlxc.jit
def _halves_to_both(desc, out, BM: tl.constexpr, BN: tl.constexpr):
    me = tlx.cluster_cta_rank()
    buf = tlx.local_alloc((BM, BN), tl.float16, 1)
    bars = tlx.alloc_barriers(1)
    tlx.barrier_expect_bytes(bars[0], BM * BN * 2)  # both halves land here, 2 bytes an element
    tlx.cluster_barrier()
    half = tlx.local_slice(buf[0], [me * (BM // 2), 0], [BM // 2, BN])
    tlx.async_descriptor_load(desc, half, [me * (BM // 2), 0], bars[0], multicast_targets=[me, me ^ 1])
    tlx.barrier_wait(bars[0], 0)
    r = tl.arange(0, BM)[:, None]
    c = tl.arange(0, BN)[None, :]
    tl.store(out + me * BM * BN + r * BN + c, tlx.local_load(buf[0]))


SIG = "tensordesc<fp16[32,64]>,*fp16:16"
CONSTS = {"BM": 64, "BN": 64}


def _compile(**options: Any) -> Any:
    return _halves_to_both.compile(SIG, CONSTS, arch="sm_90a", num_warps=4, **options)


def test_runtime_targets_become_a_mask_operand() -> None:
    ck = _compile(ctas_per_cga=(2, 1, 1))
    (load,) = [op for op in ck.module.walk() if isinstance(op, ops.TmaLoadOp)]
    assert load.multicast == () and load.cta_mask is not None and load.multicasts()
    text = ck.asm["ir"]
    assert "cta_mask=" in text
    assert print_ir(parse_ir(text)) == text


def test_runtime_multicast_ptx() -> None:
    ck = _compile(ctas_per_cga=(2, 1, 1))
    ptx = ck.asm["ptx"]
    cvt = re.findall(r"cvt\.u16\.u32 (%h\d+), %r\d+;", ptx)
    loads = [x for x in ptx.splitlines() if "cp.async.bulk.tensor" in x]
    assert len(cvt) == 1 and loads
    assert all(".multicast::cluster" in x and x.rstrip().endswith(f", {cvt[0]};") for x in loads)
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_runtime_multicast_needs_a_cluster() -> None:
    with pytest.raises(tlxc.CompilationError) as info:
        _compile().asm["ptx"]
    assert info.value.code == "TLXC-TLX-008" and "multicast_targets" in str(info.value)
    assert "tlx.async_descriptor_load(desc, half" in str(info.value)


def test_a_non_integer_target_is_an_error() -> None:
    @tlxc.jit
    def bad(desc, out, BM: tl.constexpr, BN: tl.constexpr):
        buf = tlx.local_alloc((BM, BN), tl.float16, 1)
        bars = tlx.alloc_barriers(1)
        x = tl.load(out).to(tl.float32)
        tlx.async_descriptor_load(desc, buf[0], [0, 0], bars[0], multicast_targets=[0, x])

    with pytest.raises(tlxc.CompilationError) as info:
        bad.compile("tensordesc<fp16[64,64]>,*fp16:16", CONSTS, arch="sm_90a", ctas_per_cga=(2, 1, 1))
    assert info.value.code == "TLXC-TYPE-001" and "a multicast target must be an integer scalar" in str(info.value)


def test_runtime_multicast_in_the_interpreter() -> None:
    """Each CTA of the pair loads its half of the tile to both: both end with the whole tile."""
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64).astype(np.float16)
    out = np.zeros((2, 64, 64), np.float16)
    desc = tlxc.TensorDescriptor.from_tensor(x, [32, 64])
    _halves_to_both.interpret[(2,)](desc, out, ctas_per_cga=(2, 1, 1), **CONSTS)
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1], x)
