"""``CompiledKernel.metadata`` reads by attribute as Triton's does (TLX's cluster tests
check ``kernel.metadata.ctas_per_cga`` after a launch), and by key as before."""

from __future__ import annotations

import pytest

import tlxc
import tlxc.language as tl


@tlxc.jit
def _fill(out, N: tl.constexpr):
    tl.store(out + tl.arange(0, N), tl.full((N,), 3, tl.int32))


def test_launch_options_read_by_attribute() -> None:
    ck = _fill.compile("*i32:16", {"N": 64}, arch="sm_90a", num_warps=2, ctas_per_cga=(2, 1, 1))
    md = ck.metadata
    assert (md.ctas_per_cga, md.cluster_dims, md.num_ctas, md.num_stages) == ((2, 1, 1), (2, 1, 1), 1, 3)
    assert md["ctas_per_cga"] == (2, 1, 1)
    plain = _fill.compile("*i32:16", {"N": 64}, arch="sm_90a").metadata
    assert plain.ctas_per_cga == (1, 1, 1) and plain.num_ctas == 1


def test_code_generation_facts_after_an_output() -> None:
    ck = _fill.compile("*i32:16", {"N": 64}, arch="sm_90a", num_warps=2)
    with pytest.raises(AttributeError, match="no 'shared'"):
        ck.metadata.shared
    ck.asm["ptx"]
    assert (ck.metadata.name, ck.metadata.num_warps, ck.metadata.shared) == ("_fill", 2, 0)
    assert ck.metadata.name == ck.metadata["name"]
