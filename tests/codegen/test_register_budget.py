"""Register use of the memory-bound examples, which sets how many CTAs an SM runs at once
and so how much memory traffic is in flight: ptxas's figure for the softmax and
layer-norm examples at their benchmark configurations (bench/core.py), and the PTX shapes
that keep it low.

* Offsets ``base + constant`` (the lanes of an ``arange``, and sums with one) address
  memory as one 64-bit base per tile plus an immediate, not one 64-bit address per vector
  (``Emitter.offset_of``).
* A masked load without ``other`` starts its registers at 0: a predicated load into a
  register with no earlier value keeps that register live around every loop it is in
  (layer norm at BLOCK=4096 took 64 registers instead of 36).
* f32 -> f16/bf16 converts two elements per instruction (``cvt.rn.f16x2.f32``)."""

from __future__ import annotations

import re

import pytest
from codegen_helpers import ptxas_or_skip
from example_modules import load_example

import tlxc

SOFTMAX = "*{t}:16,*{t}:16,i32:16,i32:16,i32:16,i32:16"
LAYER_NORM = "*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,fp32"


def _example(name: str):
    return load_example(name)


def _softmax(dtype: str, block: int, num_warps: int, with_ptxas: bool = True):
    if with_ptxas:
        ptxas_or_skip()
    return _example("fused_softmax").softmax_kernel.compile(
        signature=SOFTMAX.format(t=dtype), constants={"BLOCK": block}, arch="sm_90a", num_warps=num_warps)


def _layer_norm(block: int, num_warps: int, with_ptxas: bool = True):
    if with_ptxas:
        ptxas_or_skip()
    return _example("layer_norm").layer_norm_fwd.compile(
        signature=LAYER_NORM, constants={"BLOCK": block}, arch="sm_90a", num_warps=num_warps)


# (kernel, config) -> the most registers that still give the occupancy: 65536 registers
# per SM, allocated per warp in units of 8 per thread. Before the changes this file
# describes: softmax fp32 4096 took 42 (5 CTAs), layer norm 4096 took 64 (4 CTAs),
# layer norm 1024 took 40 (12 CTAs). Triton 3.6 takes 38, 42 and 32.
@pytest.mark.parametrize("case,limit,ctas", [
    ("softmax fp32 4096 w8", 40, 6),
    ("softmax fp16 4096 w8", 40, 6),
    ("layer_norm 4096 w8", 40, 6),
    ("layer_norm 1024 w4", 32, 16),
])
def test_registers_within_occupancy_budget(case: str, limit: int, ctas: int) -> None:
    kind, *rest = case.split()
    if kind == "softmax":
        ck = _softmax(rest[0], int(rest[1]), int(rest[2][1:]))
    else:
        ck = _layer_norm(int(rest[0]), int(rest[1][1:]))
    assert ck.asm["cubin"][:4] == b"\x7fELF"  # ptxas runs here, and fills the metadata
    regs = ck.metadata["registers"]
    threads = 32 * int(case.split()[-1][1:])
    per_warp = -(-regs // 8) * 8 * 32
    assert regs <= limit, f"{case}: {regs} registers > {limit}"
    assert 65536 // (per_warp * threads // 32) >= ctas
    assert (ck.metadata["spill_stores"], ck.metadata["spill_loads"]) == (0, 0)


def test_arange_offsets_become_immediates() -> None:
    ptx = _softmax("fp32", 4096, 8, with_ptxas=False).asm["ptx"]
    # 16 elements per thread in 4 vectors, 1024 elements apart: one base address per
    # tile, then +4096, +8192, +12288 bytes, for the load and for the store
    for off in (4096, 8192, 12288):
        assert len(re.findall(rf"add\.s64 %rd\d+, %rd\d+, {off};", ptx)) == 2, off
    assert len(re.findall(r"mul\.wide\.s32 %rd\d+, %r\d+, 4;", ptx)) <= 4


def test_masked_load_without_other_starts_at_zero() -> None:
    ptx = _layer_norm(4096, 8, with_ptxas=False).asm["ptx"]
    lines = ptx.splitlines()
    loads = [i for i, ln in enumerate(lines) if re.search(r"@%p\d+ ld\.global(\.[\w:]+)*\.v4\.b32", ln)]
    assert len(loads) == 4 * 5  # X twice, then W, B, X: 4 vectors each
    for i in loads:
        dests = re.search(r"\{([^}]*)\}", lines[i]).group(1).split(", ")  # type: ignore[union-attr]
        before = "\n".join(lines[max(0, i - 12):i])
        for d in dests:  # each destination has a value before the predicated load
            assert re.search(rf"mov\.(b32|f32) {re.escape(d)}, ", before), (d, lines[i])


@pytest.mark.parametrize("rounding,dst", [("rtne", "f16"), ("rtne", "bf16"), ("rtz", "f16")])
def test_f32_to_16bit_converts_pairs(rounding: str, dst: str) -> None:
    import tlxc.language as tl

    out_t = {"f16": tl.float16, "bf16": tl.bfloat16}[dst]

    @tlxc.jit
    def narrow(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(out_t, fp_downcast_rounding=rounding))

    ptx = narrow.compile(signature=f"*fp32:16,*{ {'f16': 'fp16', 'bf16': 'bf16'}[dst]}:16",
                         constants={"BLOCK": 1024}, arch="sm_90a").asm["ptx"]
    mode = "rn" if rounding == "rtne" else "rz"
    assert len(re.findall(rf"cvt\.{mode}\.{dst}x2\.f32 ", ptx)) == 4  # 8 elements per thread
    assert not re.search(rf"cvt\.{mode}\.{dst}\.f32 ", ptx)
