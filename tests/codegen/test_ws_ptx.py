"""Warp specialization in PTX (``codegen/nvptx/lower_tasks.py``): the kernel launches every
partition's warps, worker warps branch to their code at entry and meet the default at
barrier 1, each partition synchronizes only its own warps, registers move per warpgroup
with setmaxnreg, and ptxas accepts it. The numerics run on the H200 under
``TLXC_TEST_ON_GPU=1 pytest tests/tlx/test_tlx_warp_spec.py``."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_ws_kernels as K  # noqa: E402  (tests/tlx/tlx_ws_kernels.py)

import tlxc  # noqa: E402
import tlxc.language as tl  # noqa: E402
import tlxc.tlx as tlx  # noqa: E402

GEMM = ("tensordesc<fp16[64,64]>,tensordesc<fp16[64,128]>,tensordesc<fp16[64,128]>,i32",
        {"BM": 128, "BN": 128, "BK": 64, "NUM_STAGES": 2, "NUM_MMA_GROUPS": 2})


def _ptx(kernel: Any, signature: str, constants: dict[str, Any]) -> tuple[Any, str]:
    ck = kernel.compile(signature, constants, arch="sm_90a")
    return ck, ck.asm["ptx"]


def _lines(ptx: str, pattern: str) -> list[str]:
    stripped = (line.strip().rstrip(";") for line in ptx.splitlines())
    return [line for line in stripped if re.search(pattern, line)]


def test_a_producer_ring_dispatches_its_warps() -> None:
    ck, ptx = _ptx(K.ring_copy, "*fp32:16,*fp32:16,i32", {"BLOCK": 256, "NUM_BUFS": 2, "SCALE": 3.0, "BUG": 0})
    # 4 default warps + a 1-warp producer asking for 24 registers: padded to 8 warps (two warpgroups)
    assert ck.metadata["num_warps"] == 8 and ".reqntid 256, 1, 1" in ptx and ".maxnreg 256" in ptx
    assert _lines(ptx, r"^@%p\d+ bra \$_ws_workers")
    # the region starts and ends at barrier 1 of all 256 threads; workers arrive at the end
    assert _lines(ptx, r"^bar\.sync 1, 256$") and _lines(ptx, r"^bar\.arrive 1, 256$")
    # outside and in the default partition, the compiler's barrier is the default's 128 threads
    assert _lines(ptx, r"^bar\.sync 0, 128$") and not _lines(ptx, r"^bar\.sync 0$")
    # the 1-warp producer: bar.warp.sync before its leader arrives; its warpgroup drops to 24 registers
    assert _lines(ptx, r"^bar\.warp\.sync -1$")
    assert _lines(ptx, r"^setmaxnreg\.dec\.sync\.aligned\.u32 24$")
    # the producer's thread 0 is thread 128 of the CTA
    assert _lines(ptx, r"^sub\.u32 %r\d+, %r\d+, 128$")
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_consumer_warpgroups_take_their_registers() -> None:
    ck, ptx = _ptx(K.ws_gemm, *GEMM)
    # a 4-warp producer (default) and two 4-warp consumers asking 232: 12 warps, maxnreg 168;
    # the consumers' warpgroups grow to 232, the default keeps what is left of the pool (40)
    assert ck.metadata["num_warps"] == 12 and ".maxnreg 168" in ptx
    assert len(_lines(ptx, r"^setmaxnreg\.inc\.sync\.aligned\.u32 232$")) == 2
    assert _lines(ptx, r"^setmaxnreg\.dec\.sync\.aligned\.u32 40$")
    # each consumer synchronizes its own 128 threads on a barrier of its own
    ids = {line.split(",")[0] for line in _lines(ptx, r"^bar\.sync [2-9], 128$")}
    assert len(ids) == 2 and "bar.sync 1" not in ids
    assert len(_lines(ptx, r"wgmma\.mma_async")) >= 2
    if "cubin" in ck.asm.available():
        assert ck.asm["cubin"]


def test_user_named_barriers_keep_their_ids() -> None:
    ck, ptx = _ptx(K.pingpong, "*fp32:16,*fp32:16", {"ROUNDS": 3, "BLOCK": 256})
    assert _lines(ptx, r"^bar\.sync 9, 256$") and _lines(ptx, r"^bar\.arrive 10, 256$")
    partition_bars = {line.split(",")[0] for line in _lines(ptx, r"^bar\.sync \d+, 128$")}
    assert "bar.sync 9" not in partition_bars and "bar.sync 10" not in partition_bars


@tlxc.jit
def _captures(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK + 7  # computed by the default warps before the region
    flag = n > 3
    with tlx.async_tasks():
        with tlx.async_task("default"):
            pass
        with tlx.async_task(num_warps=4):
            offs = start + tl.arange(0, BLOCK)
            if flag:
                tl.store(y_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


def test_values_from_the_default_path_reach_the_workers_through_shared_memory() -> None:
    ck, ptx = _ptx(_captures, "*fp32:16,*fp32:16,i32", {"BLOCK": 128})
    stores = _lines(ptx, r"^@%p\d+ st\.shared\.(b32|u32) \[%r\d+\+\d+\]")
    loads = _lines(ptx, r"^ld\.shared\.(b32|u32) %r\d+, \[%r\d+\+\d+\]")
    assert len(stores) == len(loads) == 2  # start, and the flag as a word
    assert _lines(ptx, r"^selp\.u32") and _lines(ptx, r"^setp\.ne\.u32")


def test_a_region_inside_a_loop_is_refused() -> None:
    @tlxc.jit
    def k(x):
        for i in range(2):
            with tlx.async_tasks():
                with tlx.async_task("default"):
                    tl.store(x + i, 1.0)
                with tlx.async_task(num_warps=1):
                    tl.store(x + i + 2, 2.0)

    with pytest.raises(tlxc.CompilationError, match="inside a loop or a branch"):
        k.compile("*fp32", arch="sm_90a").asm["ptx"]
