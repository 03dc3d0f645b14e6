"""storage_alias_spec allocations and pinned shared layouts in PTX: ptxas takes the
kernels of tests/tlx/tlx_alias_kernels.py for sm_90a and sm_100a, aliases get their
spec's offset plus their placement (and runtime indices their placement's step), and a
store-then-load through a pinned swizzled layout puts every element where TLX's swizzle
formula says, emulated on the CPU from the layouts the code generator used."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from codegen_helpers import NVIDIA_ARCHS, ptxas_or_skip, ptxas_row

from tlxc.ir.layout.common import swizzled_shared
from tlxc.ir.layout.shared_access import plan_shared_access
from tlxc.ir.passes import smem_alloc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tlx"))
import tlx_alias_kernels as K  # noqa: E402  (tests/tlx/tlx_alias_kernels.py)

CASES: dict[str, tuple[Any, str, dict[str, int]]] = {
    "shared_overlap": (K.shared_overlap, "*fp16:16,*fp16:16", {"B": 64}),
    "distinct_overlap": (K.distinct_overlap, "*fp32:16,*fp32:16,*fp32:16", {"B": 32}),
    "nested_group_size": (K.nested_group_size, "*fp32:16,*fp16:16,*fp32:16", {"B": 64}),
    "runtime_index_alias": (K.runtime_index_alias, "*fp32:16,*fp32:16,i32", {"B": 128}),
    **{f"pinned_{k}": (K.pinned_store_load, "*fp16:16,*fp16:16", {"R": 64, "C": 64, "KIND": k}) for k in range(5)},
}


def _compile(case: str, arch: str) -> Any:
    kernel, sig, constants = CASES[case]
    return kernel.compile(sig, constants, arch=arch)


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_ptxas_assembles(case: str, arch: str, record_property: Any) -> None:
    ptxas_or_skip()
    ck = _compile(case, arch)
    assert ck.asm["cubin"]
    record_property("ptxas", ptxas_row(f"tlx-alias:{case}", ck))


def _generated_func(case: str, arch: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The kernel as the code generator saw it (the IR after the target's pipeline), the
    shared-memory plan read back from that IR, and the PTX."""
    ck = _compile(case, arch)
    func = ck.lowered().funcs[0]
    return func, smem_alloc.read_plan(func), ck.asm["ptx"]


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_aliases_are_addressed_from_their_placement(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    func, plan, ptx = _generated_func("nested_group_size", arch, monkeypatch)
    spec = next(op for op in func.walk() if op.NAME == "storage_alias_spec")
    qk, p, alpha = (op for op in func.walk() if op.NAME == "local_alloc")
    base = plan.offset_of(spec)
    assert base % 1024 == 0 and plan.allocation(spec).size == 32768
    assert [plan.offset_of(a) - base for a in (qk, p, alpha)] == [0, 0, 12288]
    # constant indices fold: alpha[1] is 16384 bytes after alpha[0]
    assert f"global_smem+{base + 12288}" in ptx or (base == 0 and "global_smem+12288" in ptx)
    func, plan, ptx = _generated_func("runtime_index_alias", arch, monkeypatch)
    a, b = (op for op in func.walk() if op.NAME == "local_alloc")
    assert [plan.offset_of(x) - plan.offset_of(a) for x in (a, b)] == [0, 512]
    steps = {int(m) for m in re.findall(r"mad\.lo\.u32 %r\d+, %r\d+, (\d+), %r\d+", ptx)}
    assert 1024 in steps  # a[i] and b[i]: 1024 bytes between index slots (a0|b0|a1|b1)


def _emulate(dist: Any, shared: Any, values: np.ndarray, elem_bits: int) -> np.ndarray:
    """Every thread's planned stores of ``values`` into element-addressed memory."""
    plan = plan_shared_access(dist, shared, elem_bits=elem_bits, max_vector_bytes=16)
    memory = np.full(values.size, -1, np.int64)
    nthreads = dist.in_dim_size("lane") * dist.in_dim_size("warp")
    nreg = dist.in_dim_bits("register")
    for tid in range(nthreads):
        for runtime, imm, group in plan.groups():
            addr = (runtime ^ plan.thread_at(tid)) + imm
            for i, r in enumerate(group):
                coords = dist.decode_out(dist.apply_flat(r | (tid << nreg)))
                if not (tid & plan.copies):
                    memory[addr + i] = values[tuple(coords[d] for d in dist.out_dims)]
    return memory


@pytest.mark.parametrize("arch", NVIDIA_ARCHS)
def test_a_pinned_swizzle_places_elements_by_tlxs_formula(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    func, _, _ = _generated_func("pinned_4", arch, monkeypatch)
    store = next(op for op in func.walk() if op.NAME == "local_store")
    load = next(op for op in func.walk() if op.NAME == "local_load")
    shared = store.operands[0].type.layout
    assert shared == swizzled_shared((64, 64), 4, 2, 4, (1, 0)) == load.operands[0].type.layout
    values = np.arange(64 * 64).reshape(64, 64)
    memory = _emulate(store.operands[1].type.layout, shared, values, 16)
    r, c = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    where = r * 64 + (((c // 4) ^ ((r // 2) % 4)) * 4) + c % 4  # vec 4, perPhase 2, maxPhase 4
    np.testing.assert_array_equal(memory[where], values)
    # and the load reads each element back from there
    back = _emulate(load.result.type.layout, shared, values, 16)
    np.testing.assert_array_equal(back, memory)
